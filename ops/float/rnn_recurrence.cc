// The ONNX LSTM / GRU recurrence (see rnn_recurrence.h): per direction, one projection of the whole input
// sequence, then per step the recurrent projection and the gate equations.
#include "ops/float/rnn_recurrence.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/float_op_table.h"
#include "ops/float/op_util.h"

namespace octet::float_ops {
namespace {

float GateSigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

// Scratch layout (floats): XW [seq*batch, G*H] | gates [batch, G*H] | h [batch, H] | c [batch, H] |
// rh [batch, H] (GRU without linear_before_reset) | bias [G*H] (combined).
size_t RnnScratchFloats(const RnnParams& p) {
  const int64_t gh = p.gates * p.hidden;
  return static_cast<size_t>(p.seq * p.batch * gh + p.batch * gh + 3 * p.batch * p.hidden + gh);
}

Status RunRnn(const RnnParams& p, const OpRunArgs& r, float* scratch, const RnnProjections& projections) {
  const int64_t H = p.hidden, B = p.batch, T = p.seq, G = p.gates, GH = G * H;
  const float* x = r.inputs[0].data<float>();
  const float* bias = p.has_bias ? r.inputs[3].data<float>() : nullptr;
  const int32_t* lens = p.has_lens ? r.inputs[4].data<int32_t>() : nullptr;
  const float* h0 = p.has_h0 ? r.inputs[5].data<float>() : nullptr;
  const float* c0 = p.has_c0 ? r.inputs[6].data<float>() : nullptr;
  const float* peep = p.has_peephole ? r.inputs[7].data<float>() : nullptr;
  float* y = r.outputs.size() > 0 ? r.outputs[0].data<float>() : nullptr;
  float* y_h = r.outputs.size() > 1 ? r.outputs[1].data<float>() : nullptr;
  float* y_c = p.lstm && r.outputs.size() > 2 ? r.outputs[2].data<float>() : nullptr;
  if (lens) {
    for (int64_t b = 0; b < B; ++b) {
      if (lens[b] < 0 || lens[b] > T) {
        return OutOfRange("sequence_lens[{}] = {} is outside [0, {}]", b, lens[b], T);
      }
    }
  }

  float* xw = scratch;
  float* gates = xw + T * B * GH;
  float* h = gates + B * GH;
  float* c = h + B * H;
  float* rh = c + B * H;
  float* bsum = rh + B * H;
  const bool l0 = p.layout == 0;
  auto x_row = [&](int64_t t, int64_t b) { return l0 ? t * B + b : b * T + t; };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) { return l0 ? ((t * p.dirs + d) * B + b) * H : ((b * T + t) * p.dirs + d) * H; };
  auto state_at = [&](int64_t d, int64_t b) { return l0 ? (d * B + b) * H : (b * p.dirs + d) * H; };
  if (y) std::fill(y, y + T * p.dirs * B * H, 0.0f);
  auto clip = [&](float v) { return p.clip > 0.0f ? std::min(std::max(v, -p.clip), p.clip) : v; };

  for (int64_t d = 0; d < p.dirs; ++d) {
    const bool reverse = p.reverse_only || d == 1;
    // Input projection of every step: XW = X W_d' (+ Wb + Rb where it is added outside the reset gate).
    OCTET_RETURN_IF_ERROR(projections.Project(d, false, 0, GH, x, T * B, xw, GH));
    for (int64_t j = 0; j < GH; ++j) {
      float v = 0.0f;
      if (bias) {
        v = bias[d * 2 * GH + j];
        // GRU's recurrent h-gate bias Rbh belongs inside the reset product; keep it out of XW.
        if (p.lstm || j < 2 * H) v += bias[d * 2 * GH + GH + j];
      }
      bsum[j] = v;
    }
    for (int64_t i = 0; i < T * B; ++i) {
      float* row = xw + i * GH;
      for (int64_t j = 0; j < GH; ++j) row[j] += bsum[j];
    }
    const float* rbh = bias && !p.lstm ? bias + d * 2 * GH + GH + 2 * H : nullptr;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t k = 0; k < H; ++k) {
        h[b * H + k] = h0 ? h0[state_at(d, b) + k] : 0.0f;
        c[b * H + k] = c0 ? c0[state_at(d, b) + k] : 0.0f;
      }
    }
    std::fill(rh, rh + B * H, 0.0f);
    const float* pi = peep ? peep + d * 3 * H : nullptr;
    const float* po = pi ? pi + H : nullptr;
    const float* pf = pi ? pi + 2 * H : nullptr;

    for (int64_t s = 0; s < T; ++s) {
      // gates = h R_d' (for GRU without linear_before_reset only the z and r rows here).
      OCTET_RETURN_IF_ERROR(
          projections.Project(d, true, 0, (!p.lstm && !p.linear_before_reset) ? 2 * H : GH, h, B, gates, GH));
      if (!p.lstm && !p.linear_before_reset) {
        // n gate input needs r first: compute r, then (r . h) Rh'.
        for (int64_t b = 0; b < B; ++b) {
          const int64_t len = lens ? lens[b] : T;
          if (s >= len) continue;
          const int64_t t = reverse ? len - 1 - s : s;
          const float* xr = xw + x_row(t, b) * GH;
          for (int64_t k = 0; k < H; ++k) {
            const float rv = GateSigmoid(clip(xr[H + k] + gates[b * GH + H + k]));
            rh[b * H + k] = rv * h[b * H + k];
          }
        }
        OCTET_RETURN_IF_ERROR(projections.Project(d, true, 2 * H, H, rh, B, gates + 2 * H, GH));
      }
      for (int64_t b = 0; b < B; ++b) {
        const int64_t len = lens ? lens[b] : T;
        if (s >= len) continue;
        const int64_t t = reverse ? len - 1 - s : s;
        const float* xr = xw + x_row(t, b) * GH;
        float* gb = gates + b * GH;
        float* hb = h + b * H;
        float* cb = c + b * H;
        if (p.lstm && p.lstm_gates != nullptr && pi == nullptr && p.clip == 0.0f) {
          p.lstm_gates(xr, gb, cb, hb, H);
        } else if (p.lstm) {
          for (int64_t k = 0; k < H; ++k) {
            const float cp = cb[k];
            const float iv = GateSigmoid(clip(xr[k] + gb[k] + (pi ? pi[k] * cp : 0.0f)));
            const float fv = GateSigmoid(clip(xr[2 * H + k] + gb[2 * H + k] + (pf ? pf[k] * cp : 0.0f)));
            const float gv = std::tanh(clip(xr[3 * H + k] + gb[3 * H + k]));
            const float cn = fv * cp + iv * gv;
            const float ov = GateSigmoid(clip(xr[H + k] + gb[H + k] + (po ? po[k] * cn : 0.0f)));
            cb[k] = cn;
            hb[k] = ov * std::tanh(cn);
          }
        } else {
          for (int64_t k = 0; k < H; ++k) {
            const float zv = GateSigmoid(clip(xr[k] + gb[k]));
            const float rv = GateSigmoid(clip(xr[H + k] + gb[H + k]));
            float nin;
            if (p.linear_before_reset) {
              nin = xr[2 * H + k] + rv * (gb[2 * H + k] + (rbh ? rbh[k] : 0.0f));
            } else {
              nin = xr[2 * H + k] + gb[2 * H + k] + (rbh ? rbh[k] : 0.0f);
            }
            const float nv = std::tanh(clip(nin));
            hb[k] = (1.0f - zv) * nv + zv * hb[k];
          }
        }
        if (y) std::memcpy(y + y_at(t, d, b), hb, static_cast<size_t>(H) * sizeof(float));
      }
    }
    for (int64_t b = 0; b < B; ++b) {
      if (y_h) std::memcpy(y_h + state_at(d, b), h + b * H, static_cast<size_t>(H) * sizeof(float));
      if (y_c) std::memcpy(y_c + state_at(d, b), c + b * H, static_cast<size_t>(H) * sizeof(float));
    }
  }
  return OkStatus();
}

namespace {

Status CheckShape(const OpPrepareArgs& args, size_t slot, const Shape& expected, const char* what) {
  if (!Present(args, slot)) return OkStatus();
  if (args.inputs[slot].shape != expected) {
    return InvalidArgument("{} (input {}) must be {}, got {}", what, slot, expected, args.inputs[slot].shape);
  }
  return OkStatus();
}

}  // namespace

Result<RnnParams> PrepareRnnParams(const OpPrepareArgs& args, bool lstm, DType weight_dtype,
                                   std::vector<OutputInfo>* outputs) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 3, lstm ? 8 : 6, 0, lstm ? 3 : 2));
  const AttributeMap& at = args.node.attributes;
  RnnParams p;
  p.lstm = lstm;
  p.gates = lstm ? 4 : 3;
  OCTET_ASSIGN_OR_RETURN(p.hidden, at.GetInt("hidden_size"));
  if (p.hidden <= 0) return InvalidArgument("hidden_size must be positive, got {}", p.hidden);
  // R is [dirs, gates * hidden, hidden]: its last dim bounds hidden_size before any product is formed.
  if (args.inputs[2].shape.rank() != 3 || args.inputs[2].shape.dim(2) != p.hidden) {
    return InvalidArgument("R (input 2) must be [num_directions, {} * hidden_size, hidden_size = {}], got {}",
                           lstm ? 4 : 3, p.hidden, args.inputs[2].shape);
  }
  OCTET_ASSIGN_OR_RETURN(std::string direction, at.GetString("direction", "forward"));
  if (direction == "bidirectional") {
    p.dirs = 2;
  } else if (direction == "reverse") {
    p.reverse_only = true;
  } else if (direction != "forward") {
    return InvalidArgument("direction must be forward, reverse or bidirectional, got '{}'", direction);
  }
  OCTET_ASSIGN_OR_RETURN(int64_t layout, at.GetInt("layout", 0));
  if (layout != 0 && layout != 1) return InvalidArgument("layout must be 0 or 1, got {}", layout);
  p.layout = static_cast<int>(layout);
  OCTET_ASSIGN_OR_RETURN(float clip, at.GetFloat("clip", 0.0f));
  if (clip < 0.0f || std::isnan(clip)) return InvalidArgument("clip must be positive, got {}", clip);
  p.clip = clip;
  if (lstm) {
    OCTET_ASSIGN_OR_RETURN(int64_t input_forget, at.GetInt("input_forget", 0));
    if (input_forget != 0) return Unimplemented("input_forget = 1 is not supported");
  } else {
    OCTET_ASSIGN_OR_RETURN(int64_t lbr, at.GetInt("linear_before_reset", 0));
    p.linear_before_reset = lbr != 0;
  }
  if (at.Has("activations")) {
    OCTET_ASSIGN_OR_RETURN(std::vector<std::string> acts, at.GetStrings("activations"));
    std::vector<std::string> defaults;
    for (int64_t d = 0; d < p.dirs; ++d) {
      defaults.emplace_back(FloatOpName(FloatOp::kSigmoid));
      defaults.emplace_back(FloatOpName(FloatOp::kTanh));
      if (lstm) defaults.emplace_back(FloatOpName(FloatOp::kTanh));
    }
    if (acts != defaults) return Unimplemented("only the default activations are supported");
  }
  if (at.Has("activation_alpha") || at.Has("activation_beta")) {
    return Unimplemented("activation_alpha / activation_beta are not supported");
  }
  for (size_t s = 0; s < args.inputs.size(); ++s) {
    const DType dtype = s == 4 ? DType::kS32 : (s == 1 || s == 2) ? weight_dtype : DType::kF32;
    if (Present(args, s)) OCTET_RETURN_IF_ERROR(CheckInput(args, s, dtype));
  }
  const Shape& x = args.inputs[0].shape;
  if (x.rank() != 3) return InvalidArgument("X must have rank 3, got {}", x);
  p.seq = layout == 0 ? x.dim(0) : x.dim(1);
  p.batch = layout == 0 ? x.dim(1) : x.dim(0);
  p.input = x.dim(2);
  const int64_t gh = p.gates * p.hidden;
  OCTET_RETURN_IF_ERROR(CheckShape(args, 1, Shape{p.dirs, gh, p.input}, "W"));
  OCTET_RETURN_IF_ERROR(CheckShape(args, 2, Shape{p.dirs, gh, p.hidden}, "R"));
  OCTET_RETURN_IF_ERROR(CheckShape(args, 3, Shape{p.dirs, 2 * gh}, "B"));
  OCTET_RETURN_IF_ERROR(CheckShape(args, 4, Shape{p.batch}, "sequence_lens"));
  const Shape state = layout == 0 ? Shape{p.dirs, p.batch, p.hidden} : Shape{p.batch, p.dirs, p.hidden};
  OCTET_RETURN_IF_ERROR(CheckShape(args, 5, state, "initial_h"));
  if (lstm) {
    OCTET_RETURN_IF_ERROR(CheckShape(args, 6, state, "initial_c"));
    OCTET_RETURN_IF_ERROR(CheckShape(args, 7, Shape{p.dirs, 3 * p.hidden}, "P"));
  }
  p.has_bias = Present(args, 3);
  p.has_lens = Present(args, 4);
  p.has_h0 = Present(args, 5);
  p.has_c0 = lstm && Present(args, 6);
  p.has_peephole = lstm && Present(args, 7);
  OCTET_RETURN_IF_ERROR(CheckedProduct(std::vector<int64_t>{static_cast<int64_t>(RnnScratchFloats(p))}).status());
  OCTET_RETURN_IF_ERROR(CheckedProduct(std::vector<int64_t>{p.seq, p.batch, gh}).status());
  const Shape y = layout == 0 ? Shape{p.seq, p.dirs, p.batch, p.hidden} : Shape{p.batch, p.seq, p.dirs, p.hidden};
  outputs->clear();
  for (size_t k = 0; k < args.node.outputs.size(); ++k) outputs->push_back({DType::kF32, k == 0 ? y : state});
  return p;
}

}  // namespace octet::float_ops
