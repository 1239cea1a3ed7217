#!/usr/bin/python3
"""Runs cases of ONNX's backend node tests (Debian's libonnx-testdata) through `octet run` and compares the outputs
with the reference .pb outputs. Each case is a folder with model.onnx and test_data_set_*/{input,output}_N.pb.

Usage: backend_node_test.py OCTET [CASE...]  (default: the cases listed below). Exits 77 (skipped) when the test
data or python3-onnx is missing. Models importing an older default opset than octet reads are raised to 13 when
their operators are unchanged between the two versions (listed per case), so that the check is about the op.
"""
import os
import subprocess
import sys
import tempfile

DATA = "/usr/share/libonnx-testdata/data/node"
# ConvTranspose is unchanged from opset 11 to 13. output_shape cases: a larger output_shape pads with zeros (the
# bias); kernel_shape and with_kernel combine it with output_padding. test_constant has no graph inputs.
CASES = [
    "test_constant",
    "test_convtranspose", "test_convtranspose_1d", "test_convtranspose_autopad_same", "test_convtranspose_dilations",
    "test_convtranspose_kernel_shape", "test_convtranspose_output_shape", "test_convtranspose_pad",
    "test_convtranspose_pads", "test_convtranspose_with_kernel",
]
OPSET = 13


def main():
    octet = sys.argv[1]
    cases = sys.argv[2:] or CASES
    try:
        import numpy as np
        import onnx
        from onnx import numpy_helper
    except ImportError as e:
        print("SKIPPED: %s (install python3-onnx)" % e)
        return 77
    if not os.path.isdir(DATA):
        print("SKIPPED: %s is missing (install libonnx-testdata)" % DATA)
        return 77

    def load_pb(path):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            folder = os.path.join(DATA, case)
            m = onnx.load(os.path.join(folder, "model.onnx"))
            for os_ in m.opset_import:
                if os_.domain in ("", "ai.onnx") and os_.version < OPSET:
                    os_.version = OPSET
            m.ir_version = max(m.ir_version, 7)
            model = os.path.join(tmp, case + ".onnx")
            onnx.save(m, model)
            sets = sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_"))
            for s in sets:
                args = [octet, "run", model, "--output-dir", os.path.join(tmp, case, s)]
                for k, vi in enumerate(m.graph.input):
                    npy = os.path.join(tmp, "%s_%s_%d.npy" % (case, s, k))
                    np.save(npy, load_pb(os.path.join(folder, s, "input_%d.pb" % k)))
                    args += ["--input", "%s=%s" % (vi.name, npy)]
                r = subprocess.run(args, capture_output=True, text=True)
                if r.returncode != 0:
                    print("FAILED: %s/%s: octet run exited %d: %s" % (case, s, r.returncode, r.stderr.strip()))
                    failures += 1
                    continue
                for k, vo in enumerate(m.graph.output):
                    want = load_pb(os.path.join(folder, s, "output_%d.pb" % k))
                    got = np.load(os.path.join(tmp, case, s, vo.name + ".npy"))
                    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                        print("FAILED: %s/%s output %s: got %s %s, want %s %s" %
                              (case, s, vo.name, got.shape, got.ravel()[:8], want.shape, want.ravel()[:8]))
                        failures += 1
                    else:
                        print("ok: %s/%s %s %s" % (case, s, vo.name, list(got.shape)))
    if failures:
        print("FAILED: %d case(s)" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
