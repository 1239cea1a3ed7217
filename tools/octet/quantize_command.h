// `octet quantize`: a float ONNX model to an int8 `.octet` model (and optionally ONNX QDQ), by static PTQ, dynamic
// or weight-only quantization (DESIGN.md §6, §8).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/graph.h"
#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet quantize MODEL.onnx --mode static|dynamic|weight-only [--calib NAME=FILE.npy ...] [--calib-batch N]
//     [--backend x86|fbgemm|qnnpack|onednn|symmetric] [--profile reference|tflite|pytorch-fbgemm|pytorch-qnnpack]
//     [--activation-observer NAME] [--weight-observer NAME] [--per-channel|--per-tensor] [--skip NODE ...]
//     -o OUT.octet [--onnx OUT.onnx] [--isa TIER] [--threads T]
// Static mode needs a calibration file for every graph input (samples along axis 0, split into batches of
// --calib-batch, default 32); the others need none. --skip keeps the named nodes (or every node under a name
// prefix, as QConfigMapping's module names) float. Prints a summary of what was quantized; writes nothing on failure.
void AddQuantizeCommand(CLI::App& app, CommandRegistry& registry);

// For `--onnx OUT.onnx` (quantize, qat): one warning line on stderr when ONNX Runtime's fused int8 kernels on x86 CPUs
// without VNNI may compute the export wrongly (full-range 8-bit activations into Conv / Gemm / MatMul with s8
// weights, io/onnx/qdq_export.h NodesSaturatingWithoutVnni), naming --backend x86, whose activations are 7-bit.
void WarnIfOnnxRuntimeSaturates(const Graph& quantized, const std::string& onnx_path);

}  // namespace octet::cli
