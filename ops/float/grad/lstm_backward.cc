// LSTM backpropagation through time.
#include "ops/float/grad/lstm_backward.h"

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

namespace octet::float_ops {
namespace {

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

bool GradInputPresent(const BackwardArgs& args, size_t slot) {
  return slot < args.inputs.size() && args.inputs[slot].NumElements() > 0;
}

// dL/d output `slot` as a pointer into a tensor kept alive by `keep`, or nullptr when the output is absent.
Result<const float*> GradOf(const BackwardArgs& args, size_t slot, std::vector<Tensor>& keep) {
  if (slot >= args.outputs.size() || args.outputs[slot].NumElements() == 0) return nullptr;
  OCTET_ASSIGN_OR_RETURN(Tensor g, OutputGrad(args, slot));
  keep.push_back(g);
  return static_cast<const float*>(g.data<float>());
}

Status CheckSupported(const BackwardArgs& args) {
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(int64_t layout, at.GetInt("layout", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t input_forget, at.GetInt("input_forget", 0));
  OCTET_ASSIGN_OR_RETURN(std::vector<std::string> acts, at.GetStrings("activations", {}));
  if (layout != 0) return Unimplemented("LSTM backward supports layout 0 only, got {}", layout);
  if (input_forget != 0) return Unimplemented("LSTM backward does not support input_forget");
  if (at.Has("clip")) return Unimplemented("LSTM backward does not support clip");
  for (size_t i = 0; i < acts.size(); ++i) {
    const std::string_view expected = FloatOpName(i % 3 == 0 ? FloatOp::kSigmoid : FloatOp::kTanh);
    if (acts[i] != expected) return Unimplemented("LSTM backward supports the default activations only");
  }
  if (GradInputPresent(args, 4)) return Unimplemented("LSTM backward does not support sequence_lens");
  if (GradInputPresent(args, 7)) return Unimplemented("LSTM backward does not support peepholes");
  return OkStatus();
}

Result<std::vector<Tensor>> LstmBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  if (args.inputs.size() < 3) return InvalidArgument("LSTM needs X, W and R");
  OCTET_RETURN_IF_ERROR(CheckSupported(args));
  const Shape& xs = args.inputs[0].shape();
  const Shape& ws = args.inputs[1].shape();
  if (xs.rank() != 3 || ws.rank() != 3) return InvalidArgument("LSTM backward needs X [T, B, I] and W [D, 4H, I]");
  const int64_t T = xs.dim(0), B = xs.dim(1), I = xs.dim(2), D = ws.dim(0), H = ws.dim(1) / 4, G = 4 * H;
  OCTET_ASSIGN_OR_RETURN(std::string direction, args.node.attributes.GetString("direction", "forward"));
  const float* x = args.inputs[0].data<float>();
  const float* w = args.inputs[1].data<float>();
  const float* r = args.inputs[2].data<float>();
  const float* bias = GradInputPresent(args, 3) ? args.inputs[3].data<float>() : nullptr;
  const float* h0 = GradInputPresent(args, 5) ? args.inputs[5].data<float>() : nullptr;
  const float* c0 = GradInputPresent(args, 6) ? args.inputs[6].data<float>() : nullptr;
  std::vector<Tensor> keep;
  OCTET_ASSIGN_OR_RETURN(const float* dy, GradOf(args, 0, keep));
  OCTET_ASSIGN_OR_RETURN(const float* dy_h, GradOf(args, 1, keep));
  OCTET_ASSIGN_OR_RETURN(const float* dy_c, GradOf(args, 2, keep));

  std::vector<double> dx(static_cast<size_t>(T * B * I), 0.0), dw(static_cast<size_t>(D * G * I), 0.0);
  std::vector<double> dr(static_cast<size_t>(D * G * H), 0.0), db(static_cast<size_t>(D * 2 * G), 0.0);
  std::vector<double> dh0(static_cast<size_t>(D * B * H), 0.0), dc0(static_cast<size_t>(D * B * H), 0.0);
  // Per step s (in processing order): h and c before the step, the four gate activations, c after.
  std::vector<double> hp(static_cast<size_t>(T * B * H)), cp(static_cast<size_t>(T * B * H));
  std::vector<double> act(static_cast<size_t>(T * B * G)), cn(static_cast<size_t>(T * B * H));
  std::vector<double> a(static_cast<size_t>(B * G));
  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const float* wd = w + d * G * I;
    const float* rd = r + d * G * H;
    std::vector<double> h(static_cast<size_t>(B * H)), c(static_cast<size_t>(B * H));
    for (int64_t i = 0; i < B * H; ++i) {
      h[static_cast<size_t>(i)] = h0 ? h0[d * B * H + i] : 0.0;
      c[static_cast<size_t>(i)] = c0 ? c0[d * B * H + i] : 0.0;
    }
    for (int64_t s = 0; s < T; ++s) {
      const int64_t t = reverse ? T - 1 - s : s;
      for (int64_t b = 0; b < B; ++b) {
        const float* xt = x + (t * B + b) * I;
        double* av = act.data() + (s * B + b) * G;
        for (int64_t j = 0; j < G; ++j) {
          double v = bias ? static_cast<double>(bias[d * 2 * G + j]) + bias[d * 2 * G + G + j] : 0.0;
          for (int64_t k = 0; k < I; ++k) v += static_cast<double>(wd[j * I + k]) * xt[k];
          for (int64_t k = 0; k < H; ++k) v += static_cast<double>(rd[j * H + k]) * h[static_cast<size_t>(b * H + k)];
          av[j] = j < 3 * H ? Sigmoid(v) : std::tanh(v);
        }
        for (int64_t k = 0; k < H; ++k) {
          const size_t e = static_cast<size_t>(b * H + k), se = static_cast<size_t>((s * B + b) * H + k);
          hp[se] = h[e];
          cp[se] = c[e];
          const double cnew = av[2 * H + k] * c[e] + av[k] * av[3 * H + k];
          cn[se] = cnew;
          c[e] = cnew;
          h[e] = av[H + k] * std::tanh(cnew);
        }
      }
    }
    // Backward through the steps.
    std::vector<double> dh(static_cast<size_t>(B * H), 0.0), dc(static_cast<size_t>(B * H), 0.0);
    for (int64_t i = 0; i < B * H; ++i) {
      if (dy_h) dh[static_cast<size_t>(i)] = dy_h[d * B * H + i];
      if (dy_c) dc[static_cast<size_t>(i)] = dy_c[d * B * H + i];
    }
    for (int64_t s = T - 1; s >= 0; --s) {
      const int64_t t = reverse ? T - 1 - s : s;
      for (int64_t b = 0; b < B; ++b) {
        const double* av = act.data() + (s * B + b) * G;
        double* ab = a.data() + b * G;
        for (int64_t k = 0; k < H; ++k) {
          const size_t e = static_cast<size_t>(b * H + k), se = static_cast<size_t>((s * B + b) * H + k);
          if (dy) dh[e] += dy[((t * D + d) * B + b) * H + k];
          const double iv = av[k], ov = av[H + k], fv = av[2 * H + k], gv = av[3 * H + k];
          const double tc = std::tanh(cn[se]);
          const double dcv = dc[e] + dh[e] * ov * (1.0 - tc * tc);
          ab[k] = dcv * gv * iv * (1.0 - iv);
          ab[H + k] = dh[e] * tc * ov * (1.0 - ov);
          ab[2 * H + k] = dcv * cp[se] * fv * (1.0 - fv);
          ab[3 * H + k] = dcv * iv * (1.0 - gv * gv);
          dc[e] = dcv * fv;
        }
      }
      for (int64_t b = 0; b < B; ++b) {
        const double* ab = a.data() + b * G;
        const float* xt = x + (t * B + b) * I;
        for (int64_t j = 0; j < G; ++j) {
          const double aj = ab[j];
          for (int64_t k = 0; k < I; ++k) {
            dw[static_cast<size_t>((d * G + j) * I + k)] += aj * xt[k];
            dx[static_cast<size_t>((t * B + b) * I + k)] += aj * wd[j * I + k];
          }
          for (int64_t k = 0; k < H; ++k) {
            dr[static_cast<size_t>((d * G + j) * H + k)] += aj * hp[static_cast<size_t>((s * B + b) * H + k)];
          }
          db[static_cast<size_t>(d * 2 * G + j)] += aj;
          db[static_cast<size_t>(d * 2 * G + G + j)] += aj;
        }
        for (int64_t k = 0; k < H; ++k) {
          double v = 0.0;
          for (int64_t j = 0; j < G; ++j) v += ab[j] * rd[j * H + k];
          dh[static_cast<size_t>(b * H + k)] = v;
        }
      }
    }
    for (int64_t i = 0; i < B * H; ++i) {
      dh0[static_cast<size_t>(d * B * H + i)] = dh[static_cast<size_t>(i)];
      dc0[static_cast<size_t>(d * B * H + i)] = dc[static_cast<size_t>(i)];
    }
  }
  auto emit = [&](size_t slot, const std::vector<double>& values) -> Status {
    if (!NeedsGrad(args, slot) || !GradInputPresent(args, slot)) return OkStatus();
    OCTET_ASSIGN_OR_RETURN(Tensor g, Tensor::Create(DType::kF32, args.inputs[slot].shape()));
    if (g.NumElements() != static_cast<int64_t>(values.size())) {
      return InvalidArgument("LSTM input {} has shape {}, expected {} values", slot, g.shape(), values.size());
    }
    for (size_t i = 0; i < values.size(); ++i) g.data<float>()[i] = static_cast<float>(values[i]);
    grads[slot] = std::move(g);
    return OkStatus();
  };
  OCTET_RETURN_IF_ERROR(emit(0, dx));
  OCTET_RETURN_IF_ERROR(emit(1, dw));
  OCTET_RETURN_IF_ERROR(emit(2, dr));
  OCTET_RETURN_IF_ERROR(emit(3, db));
  OCTET_RETURN_IF_ERROR(emit(5, dh0));
  OCTET_RETURN_IF_ERROR(emit(6, dc0));
  return grads;
}

}  // namespace

Status RegisterLstmBackward(BackwardRegistry& registry) { return registry.Register(FloatOp::kLSTM, LstmBackward); }

}  // namespace octet::float_ops
