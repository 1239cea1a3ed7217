"""Whether ONNX Runtime fused every int8 Conv / MatMul / Gemm of an octet QDQ export into an integer kernel.

    /usr/bin/python3 tests/onnx/ort_qdq/ort_fusion_check.py EXPORT.onnx OPTIMIZED.onnx

OPTIMIZED.onnx is the graph ONNX Runtime runs (optimize_model.js writes it with onnxruntime-node's
optimizedModelFilePath). An int8 group of the export is a Conv, MatMul or Gemm whose first input is a
DequantizeLinear's output. After ONNX Runtime's optimizations each should be an integer kernel (QLinearConv,
QLinearMatMul, QGemm, MatMulIntegerToFloat, ...); a float Conv / MatMul / Gemm (or ORT's float fusions of them:
FusedConv, FusedGemm, FusedMatMul, the NCHWc Conv) left over means a group stayed float. The float ones the export
wrote on purpose (no DequantizeLinear input: nodes kept float with --skip, dynamic operators) are allowed.
Prints one line; exits 1 when a group stayed float. Needs Debian's python3-onnx.
"""
import collections
import os
import sys

try:
    import onnx
except ImportError as e:
    print(f"FAILED: python3-onnx is not installed ({e}); scripts/install_deps.sh installs it")
    sys.exit(1)

MATMUL_LIKE = {"Conv", "MatMul", "Gemm"}
# ORT's float kernels for these operators (ai.onnx, com.microsoft and com.microsoft.nchwc domains).
FLOAT_KERNELS = {"Conv", "MatMul", "Gemm", "FusedConv", "FusedGemm", "FusedMatMul", "TransposeMatMul"}
INT_KERNELS = {"QLinearConv", "QLinearMatMul", "QGemm", "MatMulIntegerToFloat", "ConvInteger", "MatMulInteger",
               "DynamicQuantizeMatMul", "QAttention", "NhwcQLinearConv"}


def main(argv):
    if len(argv) != 2:
        print("FAILED: usage: ort_fusion_check.py EXPORT.onnx OPTIMIZED.onnx")
        return 1
    export, optimized = (onnx.load(p) for p in argv)
    dq_outputs = {o for n in export.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
    groups = [n for n in export.graph.node if n.op_type in MATMUL_LIKE and n.input and n.input[0] in dq_outputs]
    float_on_purpose = [n for n in export.graph.node if n.op_type in MATMUL_LIKE and n not in groups]
    kinds = collections.Counter()
    left_float = []
    for n in optimized.graph.node:
        if n.op_type in INT_KERNELS:
            kinds[n.op_type] += 1
        elif n.op_type in FLOAT_KERNELS:
            left_float.append(f"{n.op_type} '{n.name}'")
    fused = ", ".join(f"{c} {k}" for k, c in sorted(kinds.items())) or "no integer kernel"
    name = os.path.basename(argv[0])
    if len(left_float) > len(float_on_purpose):
        print(f"FAILED: {name}: ONNX Runtime left {len(left_float) - len(float_on_purpose)} of {len(groups)} int8 "
              f"Conv/MatMul/Gemm group(s) float: {', '.join(left_float[:8])}"
              f"{' ...' if len(left_float) > 8 else ''} ({fused}; {len(float_on_purpose)} float in the export)")
        return 1
    print(f"{name}: all {len(groups)} int8 Conv/MatMul/Gemm group(s) fused by ONNX Runtime ({fused}; "
          f"{len(float_on_purpose)} float in the export by design)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
