#!/usr/bin/env python3
"""Rewrites the one-input-channel Conv groups of an octet QDQ export into the same int8 computation as one Gemm
(issue 23's digits-CNN stem study; the export now writes this form itself: io/onnx/qdq_export_dense_stem.cc).

ONNX Runtime 1.30 runs a QLinearConv with one input channel (the digits CNN's 3x3 stem on 8x8 images) several times
slower than its float NCHWc Conv; the Gemm form runs as its QGemm instead. For a Conv of weight w [O, 1, KH, KW]
on [N, 1, H, W] codes, the Gemm's weight T [OH*OW*O, H*W] holds at row (oy*OW + ox)*O + o, column iy*W + ix the tap
w[o, 0, ky, kx] that reads input pixel (iy, ix) for output pixel (oy, ox) (zero elsewhere: padding contributes
(zp - zp) * w = 0 in QLinearConv too), so every output's int32 accumulator is the Conv's. Per-channel weight scales,
zero points and the int32 bias repeat per pixel. The group becomes:

  codes [N,1,H,W] -> Reshape [N, H*W] -> DequantizeLinear -> Gemm(T, bias, transB=1) -> QuantizeLinear (-> Clip)
  -> Reshape [N, OH, OW, O] -> Transpose(0, 3, 1, 2) -> the Conv group's output codes, NCHW as before

(NHWC rows, so ONNX Runtime's layout pass turns the following MaxPool into NhwcMaxPool and cancels the Transpose.)

  conv_as_gemm.py EXPORT.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main(src, dst):
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def arr(name):
        return numpy_helper.to_array(inits[name])

    def set_arr(name, a):
        inits[name].CopyFrom(numpy_helper.from_array(a, name))

    # The input's spatial shape: from the graph input through shape-only nodes (the digits CNN's Reshape).
    inferred = onnx.shape_inference.infer_shapes(m)
    shapes = {vi.name: [d.dim_value if d.HasField('dim_value') else None for d in vi.type.tensor_type.shape.dim]
              for vi in list(inferred.graph.value_info) + list(inferred.graph.input)}
    rewritten = 0
    new_nodes = []
    extra = {}  # node -> nodes to append after it
    drop = set()
    for conv in g.node:
        if conv.op_type != 'Conv':
            continue
        dq_x, dq_w = producer.get(conv.input[0]), producer.get(conv.input[1])
        if dq_x is None or dq_x.op_type != 'DequantizeLinear' or dq_w.input[0] not in inits:
            continue
        a = {x.name: helper.get_attribute_value(x) for x in conv.attribute}
        w = arr(dq_w.input[0])
        xs = shapes.get(dq_x.input[0])
        if w.ndim != 4 or w.shape[1] != 1 or a.get('group', 1) != 1 or not xs or None in xs[1:]:
            continue
        if any(d != 1 for d in a.get('dilations', [1, 1])):
            continue
        o_n, _, kh, kw = w.shape
        _, _, h, wd = xs
        sh, sw = a.get('strides', [1, 1])
        pt, pl, pb, pr = a.get('pads', [0, 0, 0, 0])
        oh, ow = (h + pt + pb - kh) // sh + 1, (wd + pl + pr - kw) // sw + 1
        t = np.zeros((oh * ow * o_n, h * wd), w.dtype)
        for oy in range(oh):
            for ox in range(ow):
                for ky in range(kh):
                    for kx in range(kw):
                        iy, ix = oy * sh - pt + ky, ox * sw - pl + kx
                        if 0 <= iy < h and 0 <= ix < wd:
                            t[(oy * ow + ox) * o_n:(oy * ow + ox + 1) * o_n, iy * wd + ix] = w[:, 0, ky, kx]
        set_arr(dq_w.input[0], t)
        for name in dq_w.input[1:] + ([] if len(conv.input) < 3 else list(producer[conv.input[2]].input)):
            if name in inits and arr(name).ndim == 1 and arr(name).shape[0] == o_n:
                set_arr(name, np.tile(arr(name), oh * ow))
        # The output chain: QuantizeLinear, then an optional Clip on its codes; its last output keeps its name.
        q = consumers[conv.output[0]][0]
        last = q
        if len(consumers.get(q.output[0], [])) == 1 and consumers[q.output[0]][0].op_type == 'Clip':
            last = consumers[q.output[0]][0]
        final = last.output[0]
        codes2d = final + '.gemm_rows'
        last.output[0] = codes2d
        flat, nhwc, rows_in = final + '.flat_shape', final + '.nhwc_shape', dq_x.input[0] + '.rows'
        g.initializer.extend([numpy_helper.from_array(np.array([-1, h * wd], np.int64), flat),
                              numpy_helper.from_array(np.array([-1, oh, ow, o_n], np.int64), nhwc)])
        # A DequantizeLinear of its own on the input's rows (the original may have other readers).
        dq_rows = helper.make_node('DequantizeLinear', [rows_in] + list(dq_x.input[1:]), [rows_in + '.dequantized'])
        extra.setdefault(id(dq_x), []).extend(
            [helper.make_node('Reshape', [dq_x.input[0], flat], [rows_in]), dq_rows])
        gemm = helper.make_node('Gemm', [rows_in + '.dequantized'] + list(conv.input[1:]), list(conv.output),
                                name=conv.name, transB=1)
        extra.setdefault(id(conv), []).append(gemm)
        drop.add(id(conv))
        extra.setdefault(id(last), []).extend([
            helper.make_node('Reshape', [codes2d, nhwc], [final + '.nhwc']),
            helper.make_node('Transpose', [final + '.nhwc'], [final], perm=[0, 3, 1, 2])])
        rewritten += 1
    for n in g.node:
        if id(n) not in drop:
            new_nodes.append(n)
        new_nodes.extend(extra.get(id(n), []))
    del g.node[:]
    g.node.extend(new_nodes)
    # Drop a DequantizeLinear nothing reads any more.
    used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    keep = [n for n in g.node if n.op_type != 'DequantizeLinear' or n.output[0] in used]
    del g.node[:]
    g.node.extend(keep)
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    print(f'{dst}: {rewritten} one-input-channel Conv group(s) written as Gemm')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
