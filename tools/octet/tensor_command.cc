// `octet tensor quantize|dequantize|fake-quantize`.
//
// Each run checks the command line first (exit 2), then reads, computes and writes (exit 1 on failure). Outputs
// are written only once everything has been computed, each through a temporary file and a rename, so a failure
// leaves no partial output (fake-quantize's second output, the mask, failing removes a new first one).
#include "tools/octet/tensor_command.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "core/context.h"
#include "core/dtype.h"
#include "core/qparams.h"
#include "core/tensor.h"
#include "ops/quantize.h"
#include "tools/octet/context_options.h"
#include "tools/octet/qparams_options.h"

namespace octet::cli {
namespace {

struct TensorCommand {
  explicit TensorCommand(QParamsCommand k) : kind(k), qparams(k) {}

  QParamsCommand kind;
  std::string input;
  std::string output;
  std::string mask;  // fake-quantize only
  std::string nan = "error";
  QParamsFlags qparams;
  ContextFlags context;
  CLI::Option* mask_opt = nullptr;
};

const char* Verb(QParamsCommand kind) {
  switch (kind) {
    case QParamsCommand::kQuantize: return "quantize";
    case QParamsCommand::kDequantize: return "dequantize";
    case QParamsCommand::kFakeQuantize: return "fake-quantize";
  }
  return "?";
}

QuantizeOptions MakeQuantizeOptions(const TensorCommand& c) {
  QuantizeOptions options;
  options.nan_policy = c.nan == "zero-point" ? NanPolicy::kZeroPoint : NanPolicy::kError;
  options.name = c.input;
  return options;
}

// Command-line checks shared by the three subcommands (exit 2 on failure).
Status CheckUsage(const TensorCommand& c, std::optional<DType>* dtype) {
  OCTET_ASSIGN_OR_RETURN(*dtype, c.qparams.FlagDType());
  OCTET_RETURN_IF_ERROR(c.qparams.CheckUsage(*dtype));
  OCTET_RETURN_IF_ERROR(c.context.CheckUsage());
  if (c.mask_opt != nullptr && c.mask_opt->count() > 0 && c.mask == c.output) {
    return InvalidArgument("--mask and -o name the same file '{}'", c.output);
  }
  return OkStatus();
}

Status RequireFloatInput(const TensorCommand& c, const Tensor& x) {
  if (x.dtype() == DType::kF32) return OkStatus();
  return InvalidArgument("failed to {} '{}': expected a float32 tensor, got {}", Verb(c.kind), c.input, x.dtype());
}

// What every subcommand starts from: the dtype --dtype names (if any), the context and the input tensor.
struct LoadedInput {
  std::optional<DType> dtype;
  Context context;
  Tensor x;
};

// The command-line checks (exit 2), then the context and the input file (exit 1): the exit code of a failure, or
// kExitOk with *in set.
int LoadInput(const TensorCommand& c, std::optional<LoadedInput>* in) {
  std::optional<DType> dtype;
  if (Status s = CheckUsage(c, &dtype); !s.ok()) return ReportUsage(s.message());

  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Result<Tensor> x = ReadTensorFile(c.input);
  if (!x.ok()) return ReportFailure(x.status());
  in->emplace(LoadedInput{dtype, std::move(*context), std::move(*x)});
  return kExitOk;
}

// LoadInput for quantize and fake-quantize, whose input must be float32, and the qparams of the command line.
int LoadFloatInput(const TensorCommand& c, std::optional<LoadedInput>* in, std::optional<QParams>* qparams) {
  if (int rc = LoadInput(c, in); rc != kExitOk) return rc;
  const LoadedInput& loaded = **in;
  if (Status s = RequireFloatInput(c, loaded.x); !s.ok()) return ReportFailure(s);
  Result<QParams> built = c.qparams.Build(*loaded.dtype, loaded.x, c.input);
  if (!built.ok()) return ReportFailure(built.status());
  qparams->emplace(std::move(*built));
  return kExitOk;
}

int RunQuantize(const TensorCommand& c) {
  std::optional<LoadedInput> in;
  std::optional<QParams> qparams;
  if (int rc = LoadFloatInput(c, &in, &qparams); rc != kExitOk) return rc;
  Result<QTensor> q = Quantize(in->context, in->x, *qparams, MakeQuantizeOptions(c));
  if (!q.ok()) return ReportFailure(NameFile(q.status(), "quantize", c.input));
  if (Status s = WriteTensorFile(c.output, q->values()); !s.ok()) return ReportFailure(s);
  return kExitOk;
}

int RunDequantize(const TensorCommand& c) {
  std::optional<LoadedInput> in;
  if (int rc = LoadInput(c, &in); rc != kExitOk) return rc;
  std::optional<DType>& dtype = in->dtype;
  const Tensor& x = in->x;
  if (!IsIntegerDType(x.dtype())) {
    return ReportFailure(fmt::format("failed to dequantize '{}': expected a uint8, int8 or int32 tensor, got {}",
                                     c.input, x.dtype()));
  }
  if (dtype && *dtype != x.dtype()) {
    return ReportFailure(fmt::format("failed to dequantize '{}': --dtype is {} but the file holds {}", c.input,
                                     DTypeName(*dtype), x.dtype()));
  }
  if (!dtype) {
    // The dtype comes from the file; the checks that need it are still about the command line.
    dtype = x.dtype();
    if (Status s = c.qparams.CheckUsage(dtype); !s.ok()) return ReportUsage(s.message());
  }
  Result<QParams> qparams = c.qparams.Build(*dtype, x, c.input);
  if (!qparams.ok()) return ReportFailure(qparams.status());
  Result<QTensor> q = QTensor::Create(x, *qparams);
  if (!q.ok()) return ReportFailure(NameFile(q.status(), "dequantize", c.input));
  Result<Tensor> y = Dequantize(in->context, *q);
  if (!y.ok()) return ReportFailure(NameFile(y.status(), "dequantize", c.input));
  if (Status s = WriteTensorFile(c.output, *y); !s.ok()) return ReportFailure(s);
  return kExitOk;
}

int RunFakeQuantize(const TensorCommand& c) {
  std::optional<LoadedInput> in;
  std::optional<QParams> qparams;
  if (int rc = LoadFloatInput(c, &in, &qparams); rc != kExitOk) return rc;
  Result<FakeQuantizeOutput> fq = FakeQuantize(in->context, in->x, *qparams, MakeQuantizeOptions(c));
  if (!fq.ok()) return ReportFailure(NameFile(fq.status(), "fake-quantize", c.input));
  // Two outputs: when the second cannot be written, remove the first unless it replaced an existing file.
  std::error_code ec;
  const bool output_existed = std::filesystem::exists(c.output, ec);
  if (Status s = WriteTensorFile(c.output, fq->output); !s.ok()) return ReportFailure(s);
  if (c.mask_opt->count() > 0) {
    if (Status s = WriteTensorFile(c.mask, fq->mask); !s.ok()) {
      if (!output_existed) std::filesystem::remove(c.output, ec);
      return ReportFailure(s);
    }
  }
  return kExitOk;
}

void AddTensorCommand(CLI::App* tensor, CommandRegistry& registry, QParamsCommand kind, const char* description,
                      int (*run)(const TensorCommand&)) {
  auto c = std::make_shared<TensorCommand>(kind);
  CLI::App* app = tensor->add_subcommand(Verb(kind), description);
  app->add_option("input", c->input, "Input .npy file")->required()->type_name("IN.npy");
  app->add_option("-o,--output", c->output, "Output .npy file (written atomically)")->required()->type_name(
      "OUT.npy");
  c->qparams.AddTo(app);
  if (kind != QParamsCommand::kDequantize) {
    app->add_option("--nan", c->nan,
                    kind == QParamsCommand::kQuantize
                        ? "NaN inputs: error (default), or zero-point (quantize them to the zero point)"
                        : "NaN inputs: error (default), or zero-point (output 0 and mask 0 for them)")
        ->check(CLI::IsMember({"error", "zero-point"}))
        ->type_name("POLICY")
        ->capture_default_str();
  }
  if (kind == QParamsCommand::kFakeQuantize) {
    c->mask_opt = app->add_option("--mask", c->mask,
                                  "Also write the straight-through gradient mask (uint8 0/1) to this .npy file")
                      ->type_name("MASK.npy");
  }
  c->context.AddTo(app, /*default_threads=*/0);
  registry.Add(app, [c, run] { return run(*c); });
}

}  // namespace

void AddTensorCommands(CLI::App& app, CommandRegistry& registry) {
  CLI::App* tensor = app.add_subcommand("tensor", "Quantize, dequantize or fake-quantize .npy tensors");
  tensor->require_subcommand(1);
  AddTensorCommand(tensor, registry, QParamsCommand::kQuantize,
                   "f32 -> quint8/qint8/qint32: q = clamp(zp + rne(x * (1/scale)), quant_min, quant_max)",
                   RunQuantize);
  AddTensorCommand(tensor, registry, QParamsCommand::kDequantize, "quint8/qint8/qint32 -> f32: x = (q - zp) * scale",
                   RunDequantize);
  AddTensorCommand(tensor, registry, QParamsCommand::kFakeQuantize,
                   "f32 -> f32: quantize then dequantize (PyTorch's fake_quantize_per_*_affine), optional mask",
                   RunFakeQuantize);
}

}  // namespace octet::cli
