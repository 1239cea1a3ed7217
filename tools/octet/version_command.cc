// `octet --version`.
#include "tools/octet/version_command.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include <fmt/format.h>

#include "core/context.h"
#include "core/cpu_features.h"
#include "core/isa.h"
#include "core/ukernel_list.h"
#include "core/version.h"
#include "ops/ukernels/dequantize.h"
#include "ops/ukernels/quantize.h"
#include "tools/octet/command.h"

namespace octet::cli {
namespace {

template <typename Fn>
void PrintSelection(const Context& context, const char* family, std::span<const UkernelEntry<Fn>> candidates) {
  fmt::print("kernels {}:\n", family);
  for (const std::string& line : ExplainUkernelSelection(context, candidates)) fmt::print("  {}\n", line);
}

}  // namespace

int PrintVersion(bool verbose) {
  fmt::print("octet {}\n", Version());
  fmt::print("git: {}\n", GitHash());
  fmt::print("compiler: {}\n", CompilerName());
  fmt::print("threading: {} ({} hardware threads)\n", ThreadingBackendName(), HardwareConcurrency());
  fmt::print("isas compiled: {}\n", CompiledIsas().ToString());
  fmt::print("isas detected: {}\n", DetectedIsas().ToString());
  fmt::print("cpu features: {}\n", GetCpuFeatures().ToString());

  const char* env = std::getenv("OCTET_ISA");
  const std::string env_note = env != nullptr && *env != '\0' ? fmt::format(" (OCTET_ISA={})", env) : "";
  Result<Context> context = Context::Create();
  if (!context.ok()) {
    std::fflush(stdout);
    return ReportFailure(context.status());
  }
  fmt::print("isas enabled: {}{}\n", context->enabled_isas().ToString(), env_note);
  if (verbose) {
    PrintSelection(*context, "quantize_f32_u8", QuantizeUkernels<uint8_t>());
    PrintSelection(*context, "quantize_f32_s8", QuantizeUkernels<int8_t>());
    PrintSelection(*context, "quantize_f32_s32", QuantizeUkernels<int32_t>());
    PrintSelection(*context, "dequantize_u8_f32", DequantizeUkernels<uint8_t>());
    PrintSelection(*context, "dequantize_s8_f32", DequantizeUkernels<int8_t>());
    PrintSelection(*context, "dequantize_s32_f32", DequantizeUkernels<int32_t>());
  }
  return kExitOk;
}

}  // namespace octet::cli
