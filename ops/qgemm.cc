// The int8 GEMM operator: prepack (validate, the K bound, pack, column sums), plan (stage parameters per output
// channel, the bias bound), run (row sums for affine weights, kernel choice, blocking, the split over threads).
#include "ops/qgemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "core/threading.h"
#include "ops/reference/qgemm_reference.h"

namespace octet {

struct PackedWeights::Data {
  int64_t n = 0;
  int64_t k = 0;
  QGemmLayout layout;
  DType a_dtype = DType::kU8;
  std::optional<int32_t> a_zp;
  QParams qparams;
  Tensor packed;                       // the weights in `layout` (s8 or int16 elements), 64-byte aligned
  QGemmLayout alt_layout;              // a second packing for another kernel (nr 0: none; SelectQGemmLayouts)
  Tensor alt_packed;
  std::vector<int32_t> col_sums;       // PaddedN entries of the wider padding, 0 in the padding
  std::vector<int32_t> w_zero_points;  // PaddedN entries
  std::vector<float> w_scales;         // PaddedN entries (1 in the padding)
  bool affine = false;                 // some w_zp != 0
  int32_t w_min = 0;                   // the actual range of the weight values
  int32_t w_max = 0;
  int64_t max_k = 0;
  IsaSet isas;  // the prepack context's: the plans' kernel choice is made for them
};

namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kWeightMin = -128;
constexpr int32_t kWeightMax = 127;

// The largest K for activations of `a_dtype` with zero point `a_zp` (or, unset, any zero point of the dtype: the
// bound is convex in a_zp, so the worst case is at an end of the range) and weights with zero point w_zp.
int64_t MaxK(DType a_dtype, std::optional<int32_t> a_zp, int32_t w_zp) {
  const auto a_min = static_cast<int32_t>(DTypeMin(a_dtype)), a_max = static_cast<int32_t>(DTypeMax(a_dtype));
  if (a_zp) return reference::QGemmMaxK(a_min, a_max, *a_zp, kWeightMin, kWeightMax, w_zp);
  return std::min(reference::QGemmMaxK(a_min, a_max, a_min, kWeightMin, kWeightMax, w_zp),
                  reference::QGemmMaxK(a_min, a_max, a_max, kWeightMin, kWeightMax, w_zp));
}

}  // namespace

Result<PackedWeights> PackedWeights::Prepack(const Context& context, const QTensor& weights,
                                             const QGemmPrepackOptions& options) {
  const Tensor& w = weights.values();
  const QParams& qp = weights.qparams();
  if (w.dtype() != DType::kS8 || w.shape().rank() != 2) {
    return InvalidArgument("failed to prepack qgemm weights: need an s8 tensor of shape [N, K], got {} of shape {}",
                           w.dtype(), w.shape());
  }
  if (qp.per_channel() && qp.axis() != 0) {
    return InvalidArgument("failed to prepack qgemm weights of shape {}: per-channel qparams must be on axis 0 "
                           "(output channels), got axis {}",
                           w.shape(), qp.axis());
  }
  OCTET_RETURN_IF_ERROR(qp.ValidateFor(w.shape(), "qgemm weights"));
  if (options.activation_dtype != DType::kU8 && options.activation_dtype != DType::kS8) {
    return InvalidArgument("failed to prepack qgemm weights: activations must be u8 or s8, got {}",
                           options.activation_dtype);
  }
  const int64_t a_lo = DTypeMin(options.activation_dtype), a_hi = DTypeMax(options.activation_dtype);
  const std::optional<int32_t>& a_zp = options.activation_zero_point;
  if (a_zp && (*a_zp < a_lo || *a_zp > a_hi)) {
    return InvalidArgument("failed to prepack qgemm weights: activation zero point must lie in [{}, {}] for {}, got {}",
                           a_lo, a_hi, options.activation_dtype, *a_zp);
  }
  const int64_t n = w.shape().dim(0), k = w.shape().dim(1);

  auto data = std::make_shared<Data>();
  data->n = n;
  data->k = k;
  data->a_dtype = options.activation_dtype;
  data->a_zp = options.activation_zero_point;
  data->qparams = qp;
  data->isas = context.enabled_isas();
  data->max_k = std::numeric_limits<int64_t>::max();
  for (int64_t j = 0; j < (qp.per_channel() ? n : 1); ++j) {
    const int32_t w_zp = qp.zero_points()[static_cast<size_t>(j)];
    const int64_t max_k = MaxK(options.activation_dtype, options.activation_zero_point, w_zp);
    data->max_k = std::min(data->max_k, max_k);
    if (k > max_k) {
      return OutOfRange(
          "failed to prepack qgemm weights of shape {}: K = {} could overflow the int32 accumulator; with {} "
          "activations (zero point {}) and s8 weights (zero point {} in channel {}) K must be at most {}",
          w.shape(), k, options.activation_dtype,
          options.activation_zero_point ? fmt::format("{}", *options.activation_zero_point) : "any", w_zp, j, max_k);
    }
  }

  const auto values = w.values<int8_t>();
  data->w_min = values.empty() ? 0 : *std::min_element(values.begin(), values.end());
  data->w_max = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  const std::vector<QGemmLayout> layouts =
      SelectQGemmLayouts(context, options.activation_dtype, data->w_min, data->w_max);
  data->layout = layouts[0];
  if (layouts.size() > 1) data->alt_layout = layouts[1];
  size_t np = 0;
  for (const QGemmLayout& layout : layouts) np = std::max(np, layout.PaddedN(static_cast<size_t>(n)));
  data->col_sums.assign(np, 0);
  for (size_t i = 0; i < layouts.size(); ++i) {
    const QGemmLayout& layout = layouts[i];
    OCTET_ASSIGN_OR_RETURN(Tensor packed,
                           Tensor::Create(DType::kS8, Shape{static_cast<int64_t>(layout.PackedBytes(n, k))}));
    // Both packings give the same column sums; each writes its own padding's zeros.
    std::vector<int32_t> sums(layout.PaddedN(static_cast<size_t>(n)), 0);
    QGemmPackWeights(layout, static_cast<size_t>(n), static_cast<size_t>(k), w.data<int8_t>(), static_cast<size_t>(k),
                     packed.data<int8_t>(), sums.data());
    std::copy(sums.begin(), sums.end(), data->col_sums.begin());
    (i == 0 ? data->packed : data->alt_packed) = std::move(packed);
  }
  data->w_zero_points.assign(np, 0);
  data->w_scales.assign(np, 1.0f);
  for (size_t j = 0; j < static_cast<size_t>(n); ++j) {
    const size_t c = qp.per_channel() ? j : 0;
    data->w_zero_points[j] = qp.zero_points()[c];
    data->w_scales[j] = qp.scales()[c];
    data->affine = data->affine || data->w_zero_points[j] != 0;
  }

  PackedWeights packed;
  packed.data_ = std::move(data);
  return packed;
}

int64_t PackedWeights::n() const { return data_->n; }
int64_t PackedWeights::k() const { return data_->k; }
const QGemmLayout& PackedWeights::layout() const { return data_->layout; }
const QGemmLayout& PackedWeights::alt_layout() const { return data_->alt_layout; }
DType PackedWeights::activation_dtype() const { return data_->a_dtype; }
const std::optional<int32_t>& PackedWeights::activation_zero_point() const { return data_->a_zp; }
const QParams& PackedWeights::weight_qparams() const { return data_->qparams; }
int64_t PackedWeights::max_k() const { return data_->max_k; }

QGemmOutput QGemmOutput::Int32(std::vector<int32_t> bias) {
  QGemmOutput o;
  o.stage = QGemmStage::kS32;
  o.bias_s32 = std::move(bias);
  return o;
}

QGemmOutput QGemmOutput::Float(std::vector<float> bias) {
  QGemmOutput o;
  o.stage = QGemmStage::kF32;
  o.bias_f32 = std::move(bias);
  return o;
}

QGemmOutput QGemmOutput::Requantized(QGemmStage scheme, DType output_dtype, float output_scale,
                                     int32_t output_zero_point, std::vector<int32_t> bias) {
  QGemmOutput o;
  o.stage = scheme;
  o.output_dtype = output_dtype;
  o.output_scale = output_scale;
  o.output_zero_point = output_zero_point;
  o.bias_s32 = std::move(bias);
  return o;
}

struct QGemmPlan::State {
  PackedWeights weights;
  QGemmStage stage = QGemmStage::kS32;
  DType output_dtype = DType::kS32;
  int32_t a_zp = 0;
  // Per output channel, PaddedN entries (kernels read whole vectors of columns).
  std::vector<int32_t> col_offsets;
  std::vector<float> multipliers;
  std::vector<int32_t> q31_multipliers;
  std::vector<int32_t> q31_shifts;
  // The kernel choice for the prepack ISAs, one entry per M bucket (descending min_m, the last 0): the kernel for
  // activations whose int16 pair sums fit (kPairSumsFitInt16) and the one for any activations of the dtype.
  struct KernelChoice {
    uint32_t min_m = 0;
    const QGemmUkernelEntry* fits = nullptr;
    const QGemmUkernelEntry* any = nullptr;
  };
  std::vector<KernelChoice> kernels;
  std::vector<float> bias_f32;
  QGemmStageParams stage_params;  // the pointers above (and the weights' scales) at column 0
};

namespace {

bool IsFinitePositive(float v) { return std::isfinite(v) && v > 0.0f; }

Status ValidateStage(const PackedWeights::Data& w, const QGemmOutput& out) {
  const auto n = static_cast<size_t>(w.n);
  const bool int_bias_stage = out.stage == QGemmStage::kS32 || out.stage == QGemmStage::kFp32 ||
                              out.stage == QGemmStage::kQ31;
  const char* stage = reference::QGemmStageName(out.stage);
  if (int_bias_stage && !out.bias_f32.empty()) {
    return InvalidArgument("failed to plan qgemm: the {} stage takes an int32 bias (bias_s32), got a float bias",
                           stage);
  }
  if (!int_bias_stage && !out.bias_s32.empty()) {
    return InvalidArgument("failed to plan qgemm: the {} stage takes a float bias (bias_f32), got an int32 bias",
                           stage);
  }
  const size_t bias_size = int_bias_stage ? out.bias_s32.size() : out.bias_f32.size();
  if (bias_size != 0 && bias_size != n) {
    return InvalidArgument("failed to plan qgemm: bias must be empty or have N = {} values, got {}", n, bias_size);
  }
  for (size_t j = 0; j < out.bias_f32.size(); ++j) {
    if (!std::isfinite(out.bias_f32[j])) {
      return InvalidArgument("failed to plan qgemm: bias[{}] must be finite, got {}", j, out.bias_f32[j]);
    }
  }
  if (out.stage == QGemmStage::kS32 || out.stage == QGemmStage::kF32) return OkStatus();
  if (out.output_dtype != DType::kU8 && out.output_dtype != DType::kS8) {
    return InvalidArgument("failed to plan qgemm: the {} stage writes u8 or s8, got {}", stage, out.output_dtype);
  }
  if (!IsFinitePositive(out.output_scale)) {
    return InvalidArgument("failed to plan qgemm: output scale must be finite and > 0, got {}", out.output_scale);
  }
  const int64_t dmin = DTypeMin(out.output_dtype), dmax = DTypeMax(out.output_dtype);
  if (out.output_zero_point < dmin || out.output_zero_point > dmax) {
    return InvalidArgument("failed to plan qgemm: output zero point must lie in [{}, {}] for {}, got {}", dmin, dmax,
                           out.output_dtype, out.output_zero_point);
  }
  const int64_t lo = out.lo.value_or(static_cast<int32_t>(dmin)), hi = out.hi.value_or(static_cast<int32_t>(dmax));
  if (lo < dmin || hi > dmax || lo > hi) {
    return InvalidArgument("failed to plan qgemm: need {} <= lo <= hi <= {} for {}, got lo {} and hi {}", dmin, dmax,
                           out.output_dtype, lo, hi);
  }
  return OkStatus();
}

// The query of a call of m rows whose activations span [a_min, a_max].
QGemmQuery MakeQuery(const PackedWeights::Data& w, QGemmStage stage, int64_t m, int32_t a_min, int32_t a_max) {
  QGemmQuery q;
  q.a_dtype = w.a_dtype;
  q.stage = stage;
  q.layout = w.layout;
  q.alt_layout = w.alt_layout;
  q.m = static_cast<size_t>(m);
  q.w_min = w.w_min;
  q.w_max = w.w_max;
  q.a_range = [a_min, a_max] { return std::make_pair(a_min, a_max); };
  return q;
}

// SelectQGemmUkernel's answers for the prepack ISAs, once: the candidates' minimum Ms cut M into buckets within
// which the choice cannot change, and the only condition on A (kPairSumsFitInt16) holds for every A or for none
// of the two extreme ranges, so "A's maximum is the dtype's minimum" and "the dtype's maximum" give both kernels.
std::vector<QGemmPlan::State::KernelChoice> ChooseKernels(const PackedWeights::Data& w, QGemmStage stage) {
  std::vector<uint32_t> min_ms = {0};
  for (const auto& e : QGemmUkernels()) {
    if (e.a_dtype == w.a_dtype && e.stage == stage) min_ms.push_back(e.min_m);
  }
  std::sort(min_ms.begin(), min_ms.end(), std::greater<>());
  min_ms.erase(std::unique(min_ms.begin(), min_ms.end()), min_ms.end());
  const Context context = Context::ForIsas(w.isas);
  const auto lo = static_cast<int32_t>(DTypeMin(w.a_dtype)), hi = static_cast<int32_t>(DTypeMax(w.a_dtype));
  std::vector<QGemmPlan::State::KernelChoice> choices;
  for (const uint32_t min_m : min_ms) {
    const int64_t m = std::max<uint32_t>(min_m, 1);
    choices.push_back({min_m, &SelectQGemmUkernel(context, MakeQuery(w, stage, m, lo, lo)),
                       &SelectQGemmUkernel(context, MakeQuery(w, stage, m, lo, hi))});
  }
  return choices;
}

const QGemmPlan::State::KernelChoice& ChoiceForM(const QGemmPlan::State& s, int64_t m) {
  for (const auto& c : s.kernels) {
    if (static_cast<uint64_t>(m) >= c.min_m) return c;
  }
  return s.kernels.back();  // min_m 0 is last
}

}  // namespace

Result<QGemmPlan> QGemmPlan::Create(const PackedWeights& weights, const QParams& a_qparams, const QGemmOutput& out) {
  if (!weights.valid()) return InvalidArgument("failed to plan qgemm: the weights were never prepacked");
  const PackedWeights::Data& w = weights.data();
  if (a_qparams.per_channel()) {
    return InvalidArgument("failed to plan qgemm: activations need per-tensor qparams, got {}",
                           QSchemeName(a_qparams.scheme()));
  }
  if (a_qparams.dtype() != w.a_dtype) {
    return InvalidArgument("failed to plan qgemm: the weights were prepacked for {} activations, got {}", w.a_dtype,
                           a_qparams.dtype());
  }
  const int32_t a_zp = a_qparams.zero_point();
  if (w.a_zp && *w.a_zp != a_zp) {
    return InvalidArgument("failed to plan qgemm: the weights were prepacked for activation zero point {}, got {}",
                           *w.a_zp, a_zp);
  }
  OCTET_RETURN_IF_ERROR(ValidateStage(w, out));

  auto s = std::make_shared<State>();
  s->weights = weights;
  s->stage = out.stage;
  s->a_zp = a_zp;
  const size_t n = static_cast<size_t>(w.n), np = w.col_sums.size();
  const float a_scale = a_qparams.scale();
  const auto a_min = static_cast<int32_t>(DTypeMin(w.a_dtype)), a_max = static_cast<int32_t>(DTypeMax(w.a_dtype));
  QGemmStageParams& p = s->stage_params;
  p.stage = out.stage;

  // col_offsets, with the int32 bias where the stage adds one; the exact bound keeps acc + bias inside int32.
  s->col_offsets.assign(np, 0);
  for (size_t j = 0; j < n; ++j) {
    const int32_t bias = out.bias_s32.empty() ? 0 : out.bias_s32[j];
    if (bias != 0) {
      const auto range = reference::QGemmAccumulatorRange(w.k, a_min, a_max, a_zp, kWeightMin, kWeightMax,
                                                          w.w_zero_points[j]);
      if (range.min + bias < kInt32Min || range.max + bias > kInt32Max) {
        return OutOfRange("failed to plan qgemm: bias[{}] = {} could take the int32 accumulator out of range (K = {}: "
                          "accumulators span [{}, {}])",
                          j, bias, w.k, range.min, range.max);
      }
    }
    s->col_offsets[j] = QGemmColumnOffset(bias, a_zp, w.col_sums[j], w.k, w.w_zero_points[j]);
  }

  switch (out.stage) {
    case QGemmStage::kS32: s->output_dtype = DType::kS32; break;
    case QGemmStage::kF32:
      s->output_dtype = DType::kF32;
      s->bias_f32.assign(np, 0.0f);
      std::copy(out.bias_f32.begin(), out.bias_f32.end(), s->bias_f32.begin());
      p.a_scale = a_scale;
      break;
    case QGemmStage::kFp32:
    case QGemmStage::kQ31:
    case QGemmStage::kFbgemm: {
      s->output_dtype = out.output_dtype;
      const int64_t dmin = DTypeMin(out.output_dtype), dmax = DTypeMax(out.output_dtype);
      p.signed_output = out.output_dtype == DType::kS8;
      p.zero_point = out.output_zero_point;
      p.lo = out.lo.value_or(static_cast<int32_t>(dmin));
      p.hi = out.hi.value_or(static_cast<int32_t>(dmax));
      for (size_t j = 0; j < n; ++j) {
        const float w_scale = w.w_scales[j];
        if (out.stage == QGemmStage::kQ31) {
          s->q31_multipliers.resize(np, 0);
          s->q31_shifts.resize(np, 0);
          reference::QGemmQ31Multiplier(a_scale, w_scale, out.output_scale, &s->q31_multipliers[j],
                                        &s->q31_shifts[j]);
          continue;
        }
        s->multipliers.resize(np, 1.0f);
        float m = 0.0f;
        if (out.stage == QGemmStage::kFp32) {
          m = reference::QGemmFp32Multiplier(a_scale, w_scale, out.output_scale);
        } else {
          s->bias_f32.resize(np, 0.0f);
          reference::QGemmFbgemmParams(a_scale, w_scale, out.output_scale,
                                       out.bias_f32.empty() ? 0.0f : out.bias_f32[j], &m, &s->bias_f32[j]);
          if (!std::isfinite(s->bias_f32[j])) {
            return InvalidArgument("failed to plan qgemm: bias[{}] / (a_scale * w_scale) = {} is not finite", j,
                                   s->bias_f32[j]);
          }
        }
        if (!IsFinitePositive(m)) {
          return InvalidArgument("failed to plan qgemm: the requantization multiplier of channel {} (a_scale {} * "
                                 "w_scale {} / y_scale {}) must be finite and > 0 in float, got {}",
                                 j, a_scale, w_scale, out.output_scale, m);
        }
        s->multipliers[j] = m;
      }
      break;
    }
  }
  p.multipliers = s->multipliers.empty() ? nullptr : s->multipliers.data();
  p.q31_multipliers = s->q31_multipliers.empty() ? nullptr : s->q31_multipliers.data();
  p.q31_shifts = s->q31_shifts.empty() ? nullptr : s->q31_shifts.data();
  p.bias_f32 = s->bias_f32.empty() ? nullptr : s->bias_f32.data();
  p.w_scales = w.w_scales.data();

  s->kernels = ChooseKernels(w, out.stage);

  QGemmPlan plan;
  plan.state_ = std::move(s);
  return plan;
}

DType QGemmPlan::output_dtype() const { return state_->output_dtype; }

std::string QGemmPlan::UkernelName(const Context& context, int64_t m) const {
  const PackedWeights::Data& w = state_->weights.data();
  const auto lo = static_cast<int32_t>(DTypeMin(w.a_dtype)), hi = static_cast<int32_t>(DTypeMax(w.a_dtype));
  const QGemmUkernelEntry& fits = SelectQGemmUkernel(context, MakeQuery(w, state_->stage, m, lo, lo));
  const QGemmUkernelEntry& any = SelectQGemmUkernel(context, MakeQuery(w, state_->stage, m, lo, hi));
  return &fits == &any ? std::string(any.name) : fmt::format("{} or {}", fits.name, any.name);
}

const PackedWeights& QGemmPlan::weights() const { return state_->weights; }

QGemmUkernelParams QGemmPlan::KernelParams() const {
  const PackedWeights::Data& w = state_->weights.data();
  QGemmUkernelParams params;
  params.col_offsets = state_->col_offsets.data();
  params.col_sums = w.col_sums.data();
  if (w.affine) params.w_zero_points = w.w_zero_points.data();
  params.stage = state_->stage_params;
  return params;
}

namespace {

// How an M x N output is cut into blocks, a pure function of the shape and the kernel's tile: each block's rows of A
// (mb x K) and panels of W (nb x K) stay within a share of L2, and there are enough blocks for the threads to share
// (split N first: blocks of one N range share their W panels). Never depends on the thread count.
struct Blocking {
  int64_t mb = 1;  // rows per block, a multiple of the tile's MR
  int64_t nb = 1;  // columns per block, a multiple of the tile's NR
  int64_t blocks_m = 0;
  int64_t blocks_n = 0;
};

Blocking ChooseBlocking(int64_t m, int64_t n, int64_t k, int64_t mr, int64_t nr, int64_t w_bytes) {
  constexpr int64_t kBlockBytes = 384 * 1024;          // per operand, of a 2 MiB L2
  constexpr int64_t kMacsPerBlock = int64_t{1} << 20;  // ~1-5 us of work; smaller blocks cost more than they gain
  // Enough blocks for 16 threads to balance (16 blocks on 16 threads leave every thread waiting for the slowest).
  constexpr int64_t kMaxBlocks = 64;
  const int64_t kk = std::max<int64_t>(k, 64);
  const int64_t m_tiles = (m + mr - 1) / mr, n_tiles = (n + nr - 1) / nr;
  int64_t mb_tiles = std::clamp<int64_t>(kBlockBytes / (mr * kk), 1, m_tiles);
  int64_t nb_tiles = std::clamp<int64_t>(kBlockBytes / (nr * kk * w_bytes), 1, n_tiles);
  // At least a few blocks once there is half a block of work, so a second thread has something to do.
  const int64_t macs = m * n * k;
  const int64_t at_least = macs >= kMacsPerBlock / 2 ? 4 : 1;
  const int64_t target = std::clamp<int64_t>(std::max(macs / kMacsPerBlock, at_least), 1, kMaxBlocks);
  auto count = [&] { return ((m_tiles + mb_tiles - 1) / mb_tiles) * ((n_tiles + nb_tiles - 1) / nb_tiles); };
  while (count() < target) {
    if (nb_tiles > 1 && (nb_tiles * nr >= mb_tiles * mr || mb_tiles == 1)) {
      nb_tiles = (nb_tiles + 1) / 2;
    } else if (mb_tiles > 1) {
      mb_tiles = (mb_tiles + 1) / 2;
    } else {
      break;
    }
  }
  Blocking b;
  b.mb = mb_tiles * mr;
  b.nb = nb_tiles * nr;
  b.blocks_m = (m + b.mb - 1) / b.mb;
  b.blocks_n = (n + b.nb - 1) / b.nb;
  return b;
}

size_t OutputElementSize(QGemmStage stage) {
  return stage == QGemmStage::kS32 || stage == QGemmStage::kF32 ? 4 : 1;
}

// A plain min/max loop: the compiler vectorizes it (pminub / pmaxub), where std::minmax_element's iterator
// bookkeeping ran a byte at a time and took ~20% of MobileNetV2's int8 time on the per-call range check.
template <typename T>
std::pair<int32_t, int32_t> ValueRange(const T* a, size_t count) {
  if (count == 0) return {0, 0};
  T lo = a[0], hi = a[0];
  for (size_t i = 0; i < count; ++i) {
    lo = a[i] < lo ? a[i] : lo;
    hi = a[i] > hi ? a[i] : hi;
  }
  return {int32_t{lo}, int32_t{hi}};
}

}  // namespace

QGemmUkernelParams QGemmParamsAt(const QGemmUkernelParams& params, int64_t i0, int64_t j0) {
  QGemmUkernelParams bp = params;
  if (bp.col_offsets != nullptr) bp.col_offsets += j0;
  if (bp.col_sums != nullptr) bp.col_sums += j0;
  if (bp.w_zero_points != nullptr) bp.w_zero_points += j0;
  if (bp.row_sums != nullptr) bp.row_sums += i0;
  QGemmStageParams& sp = bp.stage;
  if (sp.multipliers != nullptr) sp.multipliers += j0;
  if (sp.q31_multipliers != nullptr) sp.q31_multipliers += j0;
  if (sp.q31_shifts != nullptr) sp.q31_shifts += j0;
  if (sp.bias_f32 != nullptr) sp.bias_f32 += j0;
  if (sp.w_scales != nullptr) sp.w_scales += j0;
  return bp;
}

Status QGemmPlan::RunInto(const Context& context, const Tensor& a, Tensor& y) const {
  if (!state_) return InvalidArgument("failed to run qgemm: the plan was never created");
  const State& s = *state_;
  const PackedWeights::Data& w = s.weights.data();
  if (a.dtype() != w.a_dtype || a.shape().rank() < 1 || a.shape().dim(a.shape().rank() - 1) != w.k) {
    return InvalidArgument("failed to run qgemm: activations must be {} of shape [..., {}], got {} of shape {}",
                           w.a_dtype, w.k, a.dtype(), a.shape());
  }
  std::vector<int64_t> dims = a.shape().dims();
  dims.back() = w.n;
  if (y.dtype() != s.output_dtype || y.shape() != Shape(dims)) {
    return InvalidArgument("failed to run qgemm: the output must be {} of shape {}, got {} of shape {}",
                           s.output_dtype, Shape(dims), y.dtype(), y.shape());
  }
  const int64_t m = w.k == 0 ? a.shape().Product(0, a.shape().rank() - 1) : a.NumElements() / w.k;
  return RunRows(context, a.raw_data(), static_cast<size_t>(w.k), m, y.raw_data(), static_cast<size_t>(w.n));
}

Status QGemmPlan::RunRows(const Context& context, const void* a, size_t a_stride, int64_t m, void* y,
                          size_t y_stride) const {
  return RunRowsPacked(context, nullptr, nullptr, a, a_stride, m, y, y_stride);
}

Status QGemmPlan::RunRowsPacked(const Context& context, const int8_t* packed_w, const int32_t* packed_col_sums,
                                const void* a, size_t a_stride, int64_t m, void* y, size_t y_stride) const {
  if (!state_) return InvalidArgument("failed to run qgemm: the plan was never created");
  const State& s = *state_;
  const PackedWeights::Data& w = s.weights.data();
  if (packed_w != nullptr && w.alt_layout.nr != 0) {
    return InvalidArgument("failed to run qgemm on caller-packed weights: the plan's weights have two packings");
  }
  const int64_t n = w.n, k = w.k;
  if (a_stride < static_cast<size_t>(k) || y_stride < static_cast<size_t>(n) || m < 0) {
    return InvalidArgument("failed to run qgemm: need a_stride >= K = {} and y_stride >= N = {}, got {} and {}", k, n,
                           a_stride, y_stride);
  }
  if (m == 0 || n == 0) return OkStatus();
  const auto* a_bytes = static_cast<const uint8_t*>(a);
  // A's range, only where the choice depends on it.
  auto a_range = [&] {
    std::pair<int32_t, int32_t> range{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()};
    auto scan = [&](const uint8_t* bytes, size_t count) {
      return w.a_dtype == DType::kU8 ? ValueRange(bytes, count)
                                     : ValueRange(reinterpret_cast<const int8_t*>(bytes), count);
    };
    if (k == 0) return std::make_pair(0, 0);
    if (a_stride == static_cast<size_t>(k)) {
      // Dense rows (a 1x1 convolution's activations): one scan over all of A, in 256 KiB pieces over threads (min
      // and max do not depend on the order).
      const size_t bytes = static_cast<size_t>(m * k), piece = size_t{256} << 10;
      const int64_t pieces = static_cast<int64_t>((bytes + piece - 1) / piece);
      std::vector<std::pair<int32_t, int32_t>> parts(static_cast<size_t>(pieces));
      ParallelFor(context, pieces, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const size_t b0 = static_cast<size_t>(t) * piece;
          parts[static_cast<size_t>(t)] = scan(a_bytes + b0, std::min(piece, bytes - b0));
        }
      });
      for (const auto& r : parts) range = {std::min(range.first, r.first), std::max(range.second, r.second)};
      return range;
    }
    for (int64_t i = 0; i < m; ++i) {
      const auto r = scan(a_bytes + static_cast<size_t>(i) * a_stride, static_cast<size_t>(k));
      range = {std::min(range.first, r.first), std::max(range.second, r.second)};
    }
    return range;
  };
  const QGemmUkernelEntry* chosen = nullptr;
  if (context.enabled_isas() == w.isas) {
    const State::KernelChoice& c = ChoiceForM(s, m);
    chosen = c.any;
    if (c.fits != c.any) {
      const auto [a_min, a_max] = a_range();
      if (QGemmUkernelSupports(context, *c.fits, MakeQuery(w, s.stage, m, a_min, a_max))) chosen = c.fits;
    }
  } else {
    // Another context than the prepack one (tests forcing ISAs): the same rule, per call.
    QGemmQuery query = MakeQuery(w, s.stage, m, 0, 0);
    query.a_range = a_range;
    chosen = &SelectQGemmUkernel(context, query);
  }
  const QGemmUkernelEntry& kernel = *chosen;
  static const KernelFamily kFamily("qgemm");
  context.RecordKernel(kFamily, kernel.name);

  // Affine weights need the row sums of A.
  std::vector<int32_t> row_sums;
  QGemmUkernelParams params;
  params.col_offsets = s.col_offsets.data();
  params.col_sums = w.col_sums.data();
  // Caller-packed weights: the plan's column offsets moved by the change of column sums (mod 2^32, as they are).
  std::vector<int32_t> col_offsets;
  if (packed_w != nullptr) {
    col_offsets.resize(w.col_sums.size());
    for (size_t j = 0; j < col_offsets.size(); ++j) {
      const uint32_t delta = static_cast<uint32_t>(packed_col_sums[j]) - static_cast<uint32_t>(w.col_sums[j]);
      col_offsets[j] =
          static_cast<int32_t>(static_cast<uint32_t>(s.col_offsets[j]) - static_cast<uint32_t>(s.a_zp) * delta);
    }
    params.col_offsets = col_offsets.data();
    params.col_sums = packed_col_sums;
  }
  params.stage = s.stage_params;
  if (w.affine) {
    row_sums.resize(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
      uint32_t sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const uint8_t byte = a_bytes[static_cast<size_t>(i) * a_stride + static_cast<size_t>(kk)];
        sum += w.a_dtype == DType::kU8 ? uint32_t{byte} : static_cast<uint32_t>(int32_t{static_cast<int8_t>(byte)});
      }
      row_sums[static_cast<size_t>(i)] = static_cast<int32_t>(sum);
    }
    params.w_zero_points = w.w_zero_points.data();
    params.row_sums = row_sums.data();
  }

  // The packing the kernel reads (the first for the scalar kernels, which read any).
  const bool alt = w.alt_layout.nr != 0 && kernel.layout == w.alt_layout;
  const QGemmLayout& layout = alt ? w.alt_layout : w.layout;
  // Blocks start on panel boundaries: a SIMD kernel's NR is a multiple of the layout's panel width.
  OCTET_DCHECK(kernel.nr % layout.nr == 0 || kernel.nr == 1);
  const Blocking b = ChooseBlocking(m, n, k, kernel.mr, std::max<int64_t>(kernel.nr, layout.nr), layout.w_bytes);
  const size_t out_size = OutputElementSize(s.stage);
  auto* y_bytes = static_cast<uint8_t*>(y);
  const auto* packed = packed_w != nullptr ? packed_w : (alt ? w.alt_packed : w.packed).data<int8_t>();
  const size_t panel_stride = layout.PanelStride(static_cast<size_t>(k));
  const size_t nr = layout.nr;
  ParallelFor(context, b.blocks_m * b.blocks_n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t i0 = (block / b.blocks_n) * b.mb, j0 = (block % b.blocks_n) * b.nb;
      const QGemmUkernelParams bp = QGemmParamsAt(params, i0, j0);
      QGemmUkernelArgs args;
      args.m = static_cast<size_t>(std::min(b.mb, m - i0));
      args.n = static_cast<size_t>(std::min(b.nb, n - j0));
      args.k = static_cast<size_t>(k);
      args.a = a_bytes + static_cast<size_t>(i0) * a_stride;
      args.a_stride = a_stride;
      args.w = packed + static_cast<size_t>(j0) / nr * panel_stride;
      args.w_panel_stride = panel_stride;
      args.layout = layout;
      args.y = y_bytes + (static_cast<size_t>(i0) * y_stride + static_cast<size_t>(j0)) * out_size;
      args.y_stride = y_stride;
      args.params = &bp;
      kernel.fn(args);
    }
  });
  return OkStatus();
}

Result<Tensor> QGemmPlan::Run(const Context& context, const Tensor& a) const {
  if (!state_) return InvalidArgument("failed to run qgemm: the plan was never created");
  std::vector<int64_t> dims = a.shape().dims();
  if (dims.empty()) {
    return InvalidArgument("failed to run qgemm: activations must have shape [..., K], got a scalar");
  }
  dims.back() = state_->weights.n();
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(state_->output_dtype, Shape(dims)));
  OCTET_RETURN_IF_ERROR(RunInto(context, a, y));
  return y;
}

Result<Tensor> QGemm(const Context& context, const QTensor& a, const PackedWeights& weights,
                     const QGemmOutput& output) {
  OCTET_ASSIGN_OR_RETURN(QGemmPlan plan, QGemmPlan::Create(weights, a.qparams(), output));
  return plan.Run(context, a.values());
}

std::string QGemmKernelName(const Context& context, const PackedWeights& weights, QGemmStage stage, int64_t m,
                            int32_t a_min, int32_t a_max) {
  return SelectQGemmUkernel(context, MakeQuery(weights.data(), stage, m, a_min, a_max)).name;
}

std::vector<std::string> ExplainQGemm(const Context& context, const PackedWeights& weights, QGemmStage stage,
                                      int64_t m, int32_t a_min, int32_t a_max) {
  return ExplainQGemmSelection(context, MakeQuery(weights.data(), stage, m, a_min, a_max));
}

}  // namespace octet
