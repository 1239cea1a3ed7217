// `octet quantize`: a float ONNX model to an int8 `.octet` model (and optionally ONNX QDQ), by static PTQ, dynamic
// or weight-only quantization (DESIGN.md §6, §8).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/graph.h"
#include "quant/qconfig_mapping.h"
#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet quantize MODEL.onnx --mode static|dynamic|weight-only [--calib NAME=FILE.npy ...] [--calib-batch N]
//     [--backend x86|fbgemm|qnnpack|onednn|symmetric] [--profile reference|tflite|pytorch-fbgemm|pytorch-qnnpack]
//     [--activation-observer NAME] [--activation-bits B] [--weight-observer NAME] [--per-channel|--per-tensor]
//     [--skip NODE ...] [--min-sqnr DB] [--strict | --no-guard] -o OUT.octet [--onnx OUT.onnx] [--isa TIER]
//     [--threads T] [--equalize [--equalize-relu6 refuse|relu] [--no-high-bias-absorption]]
//     [--bias-correction [--bias-correction-mode empirical|analytic]] [--target NAME|FILE.json]
// Static mode needs a calibration file for every graph input (samples along axis 0, split into batches of
// --calib-batch, default 32); the others need none, and use --calib only for the guard. Static calibration streams
// its files a batch at a time (NAME=PATH[,PATH...], folders too; tools/octet/streamed_calibration.h), holding only
// the guard's batches, unless --equalize / --bias-correction need them all. --skip keeps the named nodes
// (or every node under a name prefix, as QConfigMapping's module names) float. --activation-bits narrows the
// activation range to the low end of its dtype (quint8: [0, 2^B - 1]).
// The guard (numeric_suite/quantization_guard.h) then runs the int8 model against the float one: static mode holds
// back the last fifth of the calibration batches for it (SplitGuardBatches; fewer than 5 batches: the calibration
// set itself), other modes run it on their --calib samples (and skip it, saying so, without). It prints each
// output's SQNR; below --min-sqnr (default 15 dB) it warns on stderr, naming the worst layers and the SQNR of the
// fixes it measured; --strict makes that a failure (exit 1, nothing written). Its figures go into the .octet
// metadata under "guard" (GuardReportJson). --no-guard skips it and calibrates on every sample.
// --equalize and --bias-correction (static only) fold BatchNorms and rewrite a copy of the float graph before
// Prepare (tools/octet/accuracy_options.h) and print what they changed; the guard still compares with the model as
// given.
// --target (static only; quant/target_spec.h) takes the QConfig from a target spec instead of --backend and the
// observer flags (which it excludes) and, for power-of-two targets, rounds every scale up to 2^n after calibration.
// Prints a summary of what was quantized; writes nothing on failure.
// --state STATE.json (static mode) converts from a calibration state (`octet calibrate`, `octet merge`) instead of
// calibrating; --calib then only feeds the guard.
void AddQuantizeCommand(CLI::App& app, CommandRegistry& registry);

// The static-quantization flags that choose observers, shared with `octet calibrate` so that a state and the
// quantize run that uses it build the same observers.
struct StaticMappingFlags {
  std::string backend = "x86";
  std::string activation_observer;
  std::string weight_observer;
  bool per_channel = false;
  bool per_tensor = false;
  int activation_bits = 8;
  int weight_bits = 8;
};
// The QConfigMapping `octet quantize --mode static` builds from these flags (errors name the flag).
Result<QConfigMapping> StaticMappingFromFlags(const StaticMappingFlags& flags);

// For `--onnx OUT.onnx` (quantize, qat): one warning line on stderr when ONNX Runtime's fused int8 kernels on x86 CPUs
// without VNNI may compute the export wrongly (full-range 8-bit activations into Conv / Gemm / MatMul with s8
// weights, io/onnx/qdq_export.h NodesSaturatingWithoutVnni), naming --backend x86, whose activations are 7-bit.
void WarnIfOnnxRuntimeSaturates(const Graph& quantized, const std::string& onnx_path);

}  // namespace octet::cli
