#!/usr/bin/python3
"""If and Loop through `octet run` on models built here with onnx.helper, against numpy: a data-dependent If whose
branches read outer-scope values (a graph input, an initializer, a node output) and hold weights in Constant nodes,
and a Loop whose body reads a graph input, stops on its own condition and holds a nested If; both saved as .octet
(`octet quantize`, which keeps subgraphs float) and run from there.

Usage: control_flow_test.py OCTET   exits 1 on any failure, 77 (skipped) without python3-onnx.
"""
import os
import subprocess
import sys
import tempfile


def if_model(onnx, helper, np):
    T = onnx.TensorProto
    w = helper.make_tensor("w", T.FLOAT, [3], [2.0, -1.0, 0.5])
    then_g = helper.make_graph(
        [helper.make_node("Constant", [], ["w_then"], value=w),
         helper.make_node("Mul", ["x", "w_then"], ["xw"]),
         helper.make_node("Add", ["xw", "b"], ["y_then"])],  # x: graph input, b: outer initializer
        "then", [], [helper.make_tensor_value_info("y_then", T.FLOAT, [2, 3])])
    else_g = helper.make_graph(
        [helper.make_node("Sub", ["x", "r"], ["y_else"])],  # r: an outer node's output
        "else", [], [helper.make_tensor_value_info("y_else", T.FLOAT, [2, 3])])
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", T.FLOAT, [], [0.0])),
             helper.make_node("Greater", ["s", "zero"], ["cond"]),
             helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)]
    g = helper.make_graph(nodes, "if_outer", [helper.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [2, 3])],
                          [helper.make_tensor("b", T.FLOAT, [3], [0.25, 0.5, -1.0])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

    def expect(x):
        if x.sum() > 0:
            return x * np.array([2.0, -1.0, 0.5], np.float32) + np.array([0.25, 0.5, -1.0], np.float32)
        return x - np.maximum(x, 0)
    return model, expect


def loop_model(onnx, helper, np):
    T = onnx.TensorProto
    # Body: acc' = acc + (i even ? x : -x) * i; stops after iteration 3 (cond' = i < 3); scans acc'.
    pos = helper.make_graph([helper.make_node("Identity", ["x"], ["sx"])], "pos", [],
                            [helper.make_tensor_value_info("sx", T.FLOAT, [3])])
    neg = helper.make_graph([helper.make_node("Neg", ["x"], ["nx"])], "neg", [],
                            [helper.make_tensor_value_info("nx", T.FLOAT, [3])])
    body = helper.make_graph(
        [helper.make_node("Constant", [], ["two"], value=helper.make_tensor("t", T.INT64, [], [2])),
         helper.make_node("Constant", [], ["three"], value=helper.make_tensor("t3", T.INT64, [], [3])),
         helper.make_node("Mod", ["i", "two"], ["odd"]),
         helper.make_node("Cast", ["odd"], ["is_odd"], to=T.BOOL),
         helper.make_node("Not", ["is_odd"], ["even"]),
         helper.make_node("If", ["even"], ["signed_x"], then_branch=pos, else_branch=neg),
         helper.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
         helper.make_node("Mul", ["signed_x", "fi"], ["step"]),
         helper.make_node("Add", ["acc", "step"], ["acc_out"]),
         helper.make_node("Less", ["i", "three"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("c", T.BOOL, []),
         helper.make_tensor_value_info("acc", T.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("acc_out", T.FLOAT, [3]),
         helper.make_tensor_value_info("scan", T.FLOAT, [3])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["m", "c0", "acc0"], ["acc_final", "accs"], body=body)], "loop_outer",
        [helper.make_tensor_value_info("x", T.FLOAT, [3]), helper.make_tensor_value_info("m", T.INT64, []),
         helper.make_tensor_value_info("c0", T.BOOL, []), helper.make_tensor_value_info("acc0", T.FLOAT, [3])],
        [helper.make_tensor_value_info("acc_final", T.FLOAT, [3]), helper.make_tensor_value_info("accs", T.FLOAT, ["iterations", 3])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

    def expect(x, m, c0, acc0):
        acc, accs, i, cond = acc0.copy(), [], 0, bool(c0)
        while i < m and cond:
            acc = acc + (x if i % 2 == 0 else -x) * np.float32(i)
            accs.append(acc)
            cond = i < 3
            i += 1
        return acc, np.stack(accs) if accs else np.zeros((0, 3), np.float32)
    return model, expect


def run(octet, model_path, feeds, outputs, tmp, np):
    out_dir = tempfile.mkdtemp(dir=tmp)
    args = [octet, "run", model_path, "--output-dir", out_dir]
    for name, value in feeds.items():
        path = os.path.join(out_dir, name + "_in.npy")
        np.save(path, value.astype(np.uint8) if value.dtype == np.bool_ else value)
        args += ["--input", "%s=%s" % (name, path)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return [np.load(os.path.join(out_dir, o + ".npy")) for o in outputs], ""


def main():
    octet = sys.argv[1]
    try:
        import numpy as np
        import onnx
        from onnx import helper
    except ImportError as e:
        print("SKIPPED: %s (install python3-onnx)" % e)
        return 77
    failures = 0

    def check(what, got, want):
        nonlocal failures
        ok = got is not None and got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-6)
        print("%s: %s" % ("ok" if ok else "FAILED", what) + ("" if ok else " got %s, want %s" % (got, want)))
        failures += not ok

    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        model, expect = if_model(onnx, helper, np)
        onnx.checker.check_model(model, full_check=True)
        path = os.path.join(tmp, "if.onnx")
        onnx.save(model, path)
        for k, x in enumerate([np.abs(rng.standard_normal((2, 3))), -np.abs(rng.standard_normal((2, 3)))]):
            x = x.astype(np.float32)
            got, err = run(octet, path, {"x": x}, ["y"], tmp, np)
            check("If, %s branch %s" % ("then" if k == 0 else "else", err), got and got[0], expect(x))
        # Quantized and saved as .octet, the If keeps its branches (float: quantization does not enter subgraphs),
        # and the saved model computes what the .onnx one does (dynamic: nothing outside the branches is quantized).
        saved = os.path.join(tmp, "if.octet")
        r = subprocess.run([octet, "quantize", path, "--mode", "dynamic", "-o", saved], capture_output=True, text=True,
                           timeout=60)
        check("quantize the If model to .octet (exit %d: %s)" % (r.returncode, r.stderr.strip()[-300:]),
              np.array(r.returncode), np.array(0))
        note = "(If) keeps its subgraphs (else_branch, then_branch) float: quantization does not enter them"
        check("quantize states that the branches stay float", np.array(note in r.stderr), np.array(True))
        for k, x in enumerate([np.abs(rng.standard_normal((2, 3))), -np.abs(rng.standard_normal((2, 3)))]):
            x = x.astype(np.float32)
            got, err = run(octet, saved, {"x": x}, ["y"], tmp, np)
            check("If from .octet, %s branch %s" % ("then" if k == 0 else "else", err), got and got[0], expect(x))

        model, expect = loop_model(onnx, helper, np)
        onnx.checker.check_model(model, full_check=True)
        path = os.path.join(tmp, "loop.onnx")
        onnx.save(model, path)
        x = rng.standard_normal(3).astype(np.float32)
        acc0 = rng.standard_normal(3).astype(np.float32)
        for m, c0 in [(10, True), (2, True), (0, True), (10, False)]:
            feeds = {"x": x, "m": np.array(m, np.int64), "c0": np.array(c0), "acc0": acc0}
            got, err = run(octet, path, feeds, ["acc_final", "accs"], tmp, np)
            want = expect(x, m, c0, acc0)
            check("Loop M=%d cond=%s: final %s" % (m, c0, err), got and got[0], want[0])
            if m > 0 and c0:  # with no iteration the scan output's element shape is unknown
                check("Loop M=%d cond=%s: scan %s" % (m, c0, err), got and got[1], want[1])
        saved = os.path.join(tmp, "loop.octet")
        r = subprocess.run([octet, "quantize", path, "--mode", "dynamic", "-o", saved], capture_output=True, text=True,
                           timeout=60)
        check("quantize the Loop model to .octet (exit %d: %s)" % (r.returncode, r.stderr.strip()[-300:]),
              np.array(r.returncode), np.array(0))
        feeds = {"x": x, "m": np.array(3, np.int64), "c0": np.array(True), "acc0": acc0}
        got, err = run(octet, saved, feeds, ["acc_final", "accs"], tmp, np)
        want = expect(x, 3, True, acc0)
        check("Loop from .octet: final %s" % err, got and got[0], want[0])
        check("Loop from .octet: scan %s" % err, got and got[1], want[1])
    if failures:
        print("FAILED: %d check(s)" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
