"""ONNX's reference checker on ONNX files that octet wrote (QDQ exports, `octet train -o X.onnx`).

    /usr/bin/python3 tests/onnx/check_onnx_models.py FILE.onnx ...

Runs onnx.checker.check_model(full_check=True) on each file: the model's structure, every node against its operator
schema, and ONNX's shape inference in strict mode (inferred types and shapes must agree with the declared ones).
Needs Debian's python3-onnx (scripts/install_deps.sh installs it) and fails, rather than skipping, without it.
Prints one line per file; exits 1 when any file fails or none is given.
"""
import sys

try:
    import onnx
    import onnx.checker
except ImportError as e:
    print(f"FAILED: python3-onnx is not installed ({e}); scripts/install_deps.sh installs it")
    sys.exit(1)


def main(paths):
    if not paths:
        print("FAILED: no ONNX files to check")
        return 1
    failed = 0
    for path in paths:
        try:
            model = onnx.load(path)
            onnx.checker.check_model(model, full_check=True)
        except Exception as e:  # the checker's ValidationError, shape inference's InferenceError, parse errors
            message = " ".join(str(e).split())
            print(f"FAILED: onnx.checker (onnx {onnx.__version__}, full_check): {path}: {message}")
            failed += 1
            continue
        outputs = ", ".join(f"{o.name} {shape(o)}" for o in model.graph.output)
        print(f"onnx.checker (onnx {onnx.__version__}, full_check): {path}: ok (outputs: {outputs})")
    return 1 if failed else 0


def shape(value_info):
    dims = value_info.type.tensor_type.shape.dim
    return "[" + ", ".join(d.dim_param if d.HasField("dim_param") else str(d.dim_value) for d in dims) + "]"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
