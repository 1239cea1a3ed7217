#!/usr/bin/python3
"""Writes the .octet seed corpus in corpus/octet/ (run with /usr/bin/python3; needs only the standard library).

An encoder of its own, written from the layout documented in io/octet_file.h and io/octet_writer.cc, with zlib's
crc32: tests/io/octet_file_test.cc checks that octet reads these files, so the format and its documentation agree.
  minimal.octet        y = Add(x f32 [?, 2], w f32 [2]): runs (tests/cli uses it).
  every_field.octet    qparams per tensor and per channel on u8/s8/s32 values, every attribute type, an omitted
                       input and output, a node value with a shape; op types that do not run.
  mlp.octet            logits = Gemm(Relu(Gemm(x f32 [?, 4], w1, b1)), w2, b2, transB=1): runs.
  newer_version.octet  minimal.octet claiming format version 2 (refused).
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "octet")
MAGIC = b"\x89OCT\r\n\x1a\n"
SECTIONS = ["metadata", "graph", "values", "nodes", "data"]
F32, U8, S8, S32 = 0, 1, 2, 3
INPUT, CONSTANT, NODE = 0, 1, 2
FORMATS = {F32: "<f", U8: "<B", S8: "<b", S32: "<i"}


def u8(v): return struct.pack("<B", v)
def u32(v): return struct.pack("<I", v)
def i32(v): return struct.pack("<i", v)
def u64(v): return struct.pack("<Q", v)
def i64(v): return struct.pack("<q", v)
def f32(v): return struct.pack("<f", v)
def s(text): b = text.encode() if isinstance(text, str) else text; return u32(len(b)) + b


class Model:
    def __init__(self, name):
        self.name, self.values, self.nodes, self.data, self.ids = name, [], [], b"", {}
        self.inputs, self.outputs, self.metadata = [], [], {"producer": "make_octet_seeds.py"}

    def blob(self, dtype, items):
        self.data += b"\0" * (-len(self.data) % 64)
        raw = b"".join(struct.pack(FORMATS[dtype], v) for v in items)
        ref = u64(len(self.data)) + u64(len(raw))
        self.data += raw
        return ref

    def value(self, name, kind, dtype, shape=None, qparams=None, items=None):
        rec = s(name) + u8(kind) + u8(dtype) + u8((1 if shape is not None else 0) | (2 if qparams else 0))
        if shape is not None:
            rec += u32(len(shape)) + b"".join(i64(d) for d in shape)
        if qparams:
            scheme, qdtype, qmin, qmax, axis, scales, zps = qparams
            rec += u8(scheme) + u8(qdtype) + i32(qmin) + i32(qmax) + i32(axis) + u32(len(scales))
            rec += b"".join(f32(x) for x in scales) + b"".join(i32(z) for z in zps)
        if kind == CONSTANT:
            rec += self.blob(dtype, items)
        self.ids[name] = len(self.values)
        self.values.append(rec)
        if kind == INPUT:
            self.inputs.append(self.ids[name])
        return name

    def node(self, name, op, inputs, outputs, attrs=(), domain=""):
        rec = s(name) + s(op) + s(domain) + u32(len(attrs))
        for attr_name, code, payload in attrs:
            rec += s(attr_name) + u8(code) + payload
        ids = lambda names: u32(len(names)) + b"".join(i32(self.ids[n] if n else -1) for n in names)
        self.nodes.append(rec + ids(inputs) + ids(outputs))

    def tensor_attr(self, dtype, shape, items):
        return u8(dtype) + u32(len(shape)) + b"".join(i64(d) for d in shape) + self.blob(dtype, items)

    def encode(self, version=1):
        meta = u32(len(self.metadata)) + b"".join(s(k) + s(v) for k, v in sorted(self.metadata.items()))
        graph = s(self.name) + u32(len(self.inputs)) + b"".join(i32(i) for i in self.inputs)
        graph += u32(len(self.outputs)) + b"".join(i32(self.ids[o]) for o in self.outputs)
        bodies = [meta, graph, u32(len(self.values)) + b"".join(self.values),
                  u32(len(self.nodes)) + b"".join(self.nodes), self.data]
        offsets, end = [], 32 + 32 * len(bodies)
        for name, body in zip(SECTIONS, bodies):
            if name == "data":
                end += -end % 64
            offsets.append(end)
            end += len(body)
        table = b"".join(name.encode().ljust(12, b"\0") + u32(zlib.crc32(body)) + u64(off) + u64(len(body))
                         for name, body, off in zip(SECTIONS, bodies, offsets))
        head = MAGIC + u32(version) + u32(len(bodies)) + u64(end) + u32(0)
        out = head + u32(zlib.crc32(head + table)) + table
        for off, body in zip(offsets, bodies):
            out += b"\0" * (off - len(out)) + body
        assert len(out) == end
        return out


def minimal():
    m = Model("minimal")
    m.value("x", INPUT, F32, [-1, 2])
    m.value("w", CONSTANT, F32, [2], items=[1.5, -2.0])
    m.value("y", NODE, F32)
    m.node("add", "Add", ["x", "w"], ["y"])
    m.outputs = ["y"]
    return m


def every_field():
    m = Model("every field")
    m.metadata.update({"mode": "static", "profile": "reference", "octet_version": "0.1.0"})
    m.value("x", INPUT, U8, [-1, 3], qparams=(0, U8, 0, 255, 0, [0.5], [128]))
    m.value("w", CONSTANT, S8, [2, 3], qparams=(3, S8, -127, 127, 0, [0.25, 0.125], [0, 0]),
            items=[-127, 0, 1, 2, 3, 127])
    m.value("b", CONSTANT, S32, [2], qparams=(3, S32, -2**31 + 1, 2**31 - 1, 0, [0.125, 0.0625], [0, 0]),
            items=[-5, 7])
    m.value("y", NODE, U8, [-1, 2], qparams=(0, U8, 0, 15, 0, [0.25], [3]))
    attrs = [("f", 1, f32(0.5)), ("floats", 5, u32(2) + f32(1.0) + f32(-0.0)), ("i", 0, i64(-3)),
             ("ints", 4, u32(3) + i64(1) + i64(2) + i64(-1)), ("s", 2, s("NOTSET")),
             ("strings", 6, u32(2) + s("a") + s("")), ("t", 3, m.tensor_attr(F32, [2], [0.5, 1.5]))]
    m.node("layer.0/q", "QGemm", ["x", "w", "b", None], ["y", None], attrs, domain="octet")
    m.outputs = ["y"]
    return m


def mlp():
    m = Model("mlp")
    m.value("x", INPUT, F32, [-1, 4])
    m.value("fc1.weight", CONSTANT, F32, [3, 4], items=[(k % 5 - 2) * 0.25 for k in range(12)])
    m.value("fc1.bias", CONSTANT, F32, [3], items=[0.1, -0.2, 0.3])
    m.value("fc2.weight", CONSTANT, F32, [2, 3], items=[0.5, -1.0, 0.25, 1.0, 0.75, -0.5])
    m.value("fc2.bias", CONSTANT, F32, [2], items=[0.0, 0.125])
    for name in ["h", "r", "logits"]:
        m.value(name, NODE, F32)
    m.node("fc1", "Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], [("transB", 0, i64(1))])
    m.node("relu", "Relu", ["h"], ["r"])
    m.node("fc2", "Gemm", ["r", "fc2.weight", "fc2.bias"], ["logits"], [("transB", 0, i64(1))])
    m.outputs = ["logits"]
    return m


def main():
    os.makedirs(OUT, exist_ok=True)
    files = {"minimal.octet": minimal().encode(), "every_field.octet": every_field().encode(),
             "mlp.octet": mlp().encode(), "newer_version.octet": minimal().encode(version=2)}
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
