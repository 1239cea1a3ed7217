// HistogramObserver: the upstream and legacy_1_13 forward rules, merging, and state.
#include "observers/histogram_observer.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "observers/histogram_search.h"
#include "observers/state_json.h"
#include "observers/torch_numerics.h"

namespace octet {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The exponent of the lowest set bit of v (v = odd * 2^result); a huge value for 0.
int LowBitExponent(double v) {
  if (v == 0.0) return std::numeric_limits<int>::max() / 2;
  int e = 0;
  const double f = std::frexp(std::fabs(v), &e);
  const uint64_t m = static_cast<uint64_t>(std::ldexp(f, 53));
  return e - 53 + std::countr_zero(m);
}

// acc + h + ... + h (m additions, each rounded to double as torch.cumsum's sequential double loop does), in one
// step when every partial sum is exact.
double AddRepeated(double acc, double h, int64_t m) {
  if (m <= 0 || h == 0.0) return acc;
  const int g = std::min(LowBitExponent(acc), LowBitExponent(h));
  const double bound = std::fabs(acc) + static_cast<double>(m) * std::fabs(h);
  if (g < 900 && bound < std::ldexp(1.0, 52 + g)) return acc + static_cast<double>(m) * h;
  for (int64_t k = 0; k < m; ++k) acc += h;
  return acc;
}

// PyTorch 1.13's _combine_histograms: the old histogram up-sampled by `up` (each bin repeated), placed at
// start_idx on a grid of bins * down fine cells, integrated in double, sampled at the end of every `down` cells,
// differenced against the float32-rounded previous sample, divided by `up`, and added in float32 to new_hist.
// The fine grid is never materialised: only the cells where the integral changes are visited. PyTorch raises when
// the up-sampled histogram overruns the grid; here the overrun is dropped.
std::vector<float> LegacyCombine(const std::vector<float>& new_hist, const std::vector<float>& old_hist, int64_t up,
                                 int64_t down, int64_t start_idx) {
  const int64_t bins = static_cast<int64_t>(new_hist.size());
  const int64_t fine = bins * down;
  std::vector<double> integral(static_cast<size_t>(bins), 0.0);
  double acc = 0.0;
  int64_t j = 0;  // the next sample: the integral up to cell (j + 1) * down - 1
  auto sample_cell = [&](int64_t jj) { return (jj + 1) * down - 1; };
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t seg_begin = start_idx + i * up;
    if (seg_begin >= fine) break;
    const int64_t seg_end = std::min(seg_begin + up, fine);
    while (j < bins && sample_cell(j) < seg_begin) integral[static_cast<size_t>(j++)] = acc;
    const double h = static_cast<double>(old_hist[static_cast<size_t>(i)]);
    int64_t p = seg_begin;
    while (p < seg_end) {
      const int64_t stop = j < bins ? std::min(seg_end, sample_cell(j) + 1) : seg_end;
      acc = AddRepeated(acc, h, stop - p);
      p = stop;
      if (j < bins && p == sample_cell(j) + 1) integral[static_cast<size_t>(j++)] = acc;
    }
  }
  while (j < bins) integral[static_cast<size_t>(j++)] = acc;
  std::vector<float> out(new_hist.size());
  for (int64_t k = 0; k < bins; ++k) {
    const double shifted = k == 0 ? 0.0 : static_cast<double>(static_cast<float>(integral[static_cast<size_t>(k - 1)]));
    const double interpolated = (integral[static_cast<size_t>(k)] - shifted) / static_cast<double>(up);
    out[static_cast<size_t>(k)] = new_hist[static_cast<size_t>(k)] + static_cast<float>(interpolated);
  }
  return out;
}

// torch.histc bins on the edges torch.linspace(lo, hi, bins + 1) and reads its range from the first and last edge;
// the last can differ from hi in the last bit (observers/torch_numerics.h).
float HistcRightEdge(float lo, float hi, int64_t bins) { return torch_numerics::LinspaceAt(lo, hi, bins + 1, bins); }

// The bin of one value in torch.histc(v, bins, lo, hi) (the rule of observers/kernels/histogram.h).
int64_t HistcBin(float v, float lo, float hi, int64_t bins) {
  hi = HistcRightEdge(lo, hi, bins);
  const int64_t b = static_cast<int64_t>(((v - lo) / (hi - lo)) * static_cast<float>(bins));
  return b < bins - 1 ? b : bins - 1;
}

// Upstream _upscale_histogram: every old bin split into `up` sub-bins of 1/up of its mass, each sub-bin's mid-point
// bucketed (bucketize(right=True) - 1, clamped) into the bins of [new_min, new_max], masses summed in float32 in
// sub-bin order (bincount). An old histogram with min == max moves whole into the bin of its value (its sum by
// torch.sum).
std::vector<float> UpscaleHistogram(const std::vector<float>& hist, float old_min, float old_max, float new_min,
                                    float new_max, int64_t up) {
  const int64_t bins = static_cast<int64_t>(hist.size());
  std::vector<float> out(hist.size(), 0.0f);
  if (old_min == new_min && old_max == new_max) return hist;
  if (old_min == old_max) {
    const float total = torch_numerics::Sum(hist);
    const float lo = new_min < new_max ? new_min : new_min - 1.0f;  // histc's fall-back for an empty range
    const float hi = new_min < new_max ? new_max : new_max + 1.0f;
    out[static_cast<size_t>(HistcBin(old_min, lo, hi, bins))] = 1.0f * total;
    return out;
  }
  const int64_t fine = bins * up;
  const float up_f = static_cast<float>(up);
  const float half = 0.5f * ((old_max - old_min) / static_cast<float>(fine));
  std::vector<float> edges(static_cast<size_t>(bins + 1));
  for (int64_t k = 0; k <= bins; ++k) {
    edges[static_cast<size_t>(k)] = torch_numerics::LinspaceAt(new_min, new_max, bins + 1, k);
  }
  for (int64_t k = 0; k < fine; ++k) {
    const float mass = hist[static_cast<size_t>(k / up)] / up_f;
    const float mid = torch_numerics::LinspaceAt(old_min, old_max, fine + 1, k) + half;
    int64_t b = (std::upper_bound(edges.begin(), edges.end(), mid) - edges.begin()) - 1;
    b = b < 0 ? 0 : (b >= bins ? bins - 1 : b);
    out[static_cast<size_t>(b)] = out[static_cast<size_t>(b)] + mass;
  }
  return out;
}

}  // namespace

HistogramObserver::HistogramObserver(ResolvedObserverOptions options)
    : ObserverOf(std::move(options)), histogram_(static_cast<size_t>(this->options().bins), 0.0f) {}

Result<QParams> HistogramObserver::CalculateQParams() const {
  const QParamsSpec spec = options().Spec();
  if (!has_observations()) {
    const float lo[1] = {kInf}, hi[1] = {-kInf};
    return CalculateQParamsFromRange(lo, hi, spec);
  }
  // dst_nbins = 2 ** torch.iinfo(dtype).bits: 256 for both 8-bit types, whatever the range.
  const double dst_nbins = std::ldexp(1.0, 8 * static_cast<int>(DTypeSize(options().dtype)));
  const HistogramRange r = NonLinearParamSearch(histogram_, min_, max_, dst_nbins);
  const float lo[1] = {r.min}, hi[1] = {r.max};
  return CalculateQParamsFromRange(lo, hi, spec);
}

Result<std::vector<float>> HistogramObserver::Histc(std::span<const float> x, double lo, double hi, float data_min,
                                                    float data_max, std::string_view name, const Guess* guess) const {
  double left = lo;
  double right = hi;
  if (left == right) {
    left = data_min;
    right = data_max;
  }
  if (left == right) {
    left -= 1.0;
    right += 1.0;
  }
  const int64_t bins = options().bins;
  const float lo_f = static_cast<float>(left);
  const float hi_f = std::isfinite(right) && std::isfinite(left)
                         ? HistcRightEdge(lo_f, static_cast<float>(right), bins)
                         : static_cast<float>(right);
  if (!(lo_f < hi_f) || !std::isfinite((hi_f - lo_f) * static_cast<float>(bins))) {
    return InvalidArgument(
        "failed to observe tensor '{}' with HistogramObserver: the histogram range [{}, {}] cannot be split into {} "
        "float32 bins",
        name, left, right, bins);
  }
  const bool reuse = guess != nullptr && guess->lo == lo_f && guess->hi == hi_f;
  const std::vector<uint64_t> counts = reuse ? guess->counts : LinearHistogram(context(), x, lo_f, hi_f, bins);
  std::vector<float> out(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) out[i] = static_cast<float>(counts[i]);
  return out;
}

bool HistogramObserver::GuessRange(float* lo, float* hi) const {
  if (!has_observations() || min_ == max_) return false;
  double l = min_, h = max_;
  if (options().histogram_variant == HistogramVariant::kLegacy113) {
    l = torch_numerics::TruncToInt(min_);
    h = torch_numerics::TruncToInt(max_);
  }
  *lo = static_cast<float>(l);
  *hi = static_cast<float>(h);
  if (!(*lo < *hi)) return false;
  *hi = HistcRightEdge(*lo, *hi, options().bins);
  return *lo < *hi && std::isfinite((*hi - *lo) * static_cast<float>(options().bins));
}

Status HistogramObserver::ObserveImpl(const Tensor& x, std::string_view name) {
  const bool upstream = options().histogram_variant == HistogramVariant::kUpstream;
  Guess guess;
  if (GuessRange(&guess.lo, &guess.hi)) {
    HistogramRangeScan fused = LinearHistogramAndRange(context(), x.values<float>(), guess.lo, guess.hi,
                                                       options().bins);
    if (!fused.nonfinite) {
      guess.counts = std::move(fused.counts);
      return upstream ? ObserveUpstream(x.values<float>(), fused.min, fused.max, name, &guess)
                      : ObserveLegacy(x.values<float>(), fused.min, fused.max, name, &guess);
    }
  }
  const RangeScan scan = ScanRange(context(), x.values<float>());
  OCTET_RETURN_IF_ERROR(ApplyNonFinitePolicy(scan.nonfinite, x, name, /*allow_inf=*/upstream));
  if (!(scan.min <= scan.max)) return OkStatus();  // nothing finite
  // Non-finite values never land in a bin (the histogram kernels drop them), so x needs no filtering.
  return upstream ? ObserveUpstream(x.values<float>(), scan.min, scan.max, name, nullptr)
                  : ObserveLegacy(x.values<float>(), scan.min, scan.max, name, nullptr);
}

Status HistogramObserver::ObserveLegacy(std::span<const float> x, float batch_min, float batch_max,
                                        std::string_view name, const Guess* guess) {
  const int64_t bins = options().bins;
  const int64_t up = options().upsample_rate;
  // 1.13 starts over after a constant state (same_values), dropping what it saw. Where that would also lose the
  // old value's place in the range (a constant tensor next, e.g. one-element tensors at batch 1, which would end
  // with the last sample's range; or a tensor whose range excludes the old value), octet keeps the old mass whole
  // at its value on the exact union range (the upstream rule) instead.
  const bool batch_constant = batch_min == batch_max;
  const bool restart =
      !has_observations() || (min_ == max_ && !batch_constant && batch_min <= min_ && min_ <= batch_max);
  if (restart) {
    OCTET_ASSIGN_OR_RETURN(std::vector<float> h,
                           Histc(x, torch_numerics::TruncToInt(batch_min), torch_numerics::TruncToInt(batch_max),
                                 batch_min, batch_max, name, guess));
    histogram_ = std::move(h);
    min_ = batch_min;
    max_ = batch_max;
    return OkStatus();
  }
  float cmin = batch_min < min_ ? batch_min : min_;
  float cmax = batch_max > max_ ? batch_max : max_;
  if (min_ == max_) {
    OCTET_ASSIGN_OR_RETURN(std::vector<float> update, Histc(x, cmin, cmax, batch_min, batch_max, name, nullptr));
    // The same value again: histc falls back to [v - 1, v + 1] as for the first tensor, so the bins line up.
    const std::vector<float> old = cmin == cmax ? histogram_ : UpscaleHistogram(histogram_, min_, max_, cmin, cmax, up);
    for (size_t i = 0; i < update.size(); ++i) update[i] = update[i] + old[i];
    histogram_ = std::move(update);
    min_ = cmin;
    max_ = cmax;
    return OkStatus();
  }
  // _adjust_min_max, in float32 tensor arithmetic.
  const float hist_bin_width = (max_ - min_) / static_cast<float>(bins * up);
  const float span = static_cast<float>(bins) * hist_bin_width;
  const float ratio = std::ceil((cmax - cmin) / span);
  if (!(hist_bin_width > 0.0f) || !(ratio <= 1e12f)) {
    return InvalidArgument(
        "failed to observe tensor '{}' with HistogramObserver (legacy_1_13): the range grows from [{}, {}] to [{}, "
        "{}], beyond what 1.13's histogram combination can represent",
        name, min_, max_, cmin, cmax);
  }
  const int64_t down = static_cast<int64_t>(ratio);
  const float e = static_cast<float>(down) * span - (cmax - cmin);
  cmax = cmax + e;
  const int64_t start_idx = static_cast<int64_t>(std::nearbyint((min_ - cmin) / hist_bin_width));
  std::vector<float> combined;
  if (batch_constant) {
    // A constant tensor (one element at batch 1): 1.13's histc over [int(cmin), int(cmax)] would drop it or count it
    // in a bin read on another grid (or, when both ends truncate alike, in the middle bin whatever its value). Its
    // mass goes to the bin of its value instead.
    combined.assign(histogram_.size(), 0.0f);
    const auto n = std::count(x.begin(), x.end(), batch_min);
    combined[static_cast<size_t>(HistcBin(batch_min, cmin, cmax, bins))] = static_cast<float>(n);
  } else {
    OCTET_ASSIGN_OR_RETURN(combined, Histc(x, torch_numerics::TruncToInt(cmin), torch_numerics::TruncToInt(cmax),
                                           batch_min, batch_max, name, guess));
  }
  if (cmin == min_ && cmax == max_) {
    for (size_t i = 0; i < combined.size(); ++i) combined[i] = combined[i] + histogram_[i];
  } else {
    combined = LegacyCombine(combined, histogram_, up, down, start_idx);
  }
  histogram_ = std::move(combined);
  min_ = cmin;
  max_ = cmax;
  return OkStatus();
}

Status HistogramObserver::ObserveUpstream(std::span<const float> x, float batch_min, float batch_max,
                                          std::string_view name, const Guess* guess) {
  if (!has_observations()) {
    OCTET_ASSIGN_OR_RETURN(std::vector<float> h, Histc(x, batch_min, batch_max, batch_min, batch_max, name, guess));
    histogram_ = std::move(h);
    min_ = batch_min;
    max_ = batch_max;
    return OkStatus();
  }
  const float new_min = min_ < batch_min ? min_ : batch_min;
  const float new_max = max_ > batch_max ? max_ : batch_max;
  OCTET_ASSIGN_OR_RETURN(std::vector<float> update,
                         Histc(x, new_min, new_max, batch_min, batch_max, name, guess));
  const std::vector<float> old =
      (new_min == min_ && new_max == max_)
          ? histogram_
          : UpscaleHistogram(histogram_, min_, max_, new_min, new_max, options().upsample_rate);
  for (size_t i = 0; i < update.size(); ++i) update[i] = update[i] + old[i];
  histogram_ = std::move(update);
  min_ = new_min;
  max_ = new_max;
  return OkStatus();
}

Status HistogramObserver::MergeImpl(const Observer& other) {
  const auto& o = static_cast<const HistogramObserver&>(other);
  if (!o.has_observations()) return OkStatus();
  if (!has_observations()) {
    histogram_ = o.histogram_;
    min_ = o.min_;
    max_ = o.max_;
    return OkStatus();
  }
  const float new_min = min_ < o.min_ ? min_ : o.min_;
  const float new_max = max_ > o.max_ ? max_ : o.max_;
  const int64_t up = options().upsample_rate;
  const std::vector<float> a = UpscaleHistogram(histogram_, min_, max_, new_min, new_max, up);
  const std::vector<float> b = UpscaleHistogram(o.histogram_, o.min_, o.max_, new_min, new_max, up);
  for (size_t i = 0; i < histogram_.size(); ++i) histogram_[i] = a[i] + b[i];
  min_ = new_min;
  max_ = new_max;
  return OkStatus();
}

void HistogramObserver::ResetImpl() {
  histogram_.assign(static_cast<size_t>(options().bins), 0.0f);
  min_ = kInf;
  max_ = -kInf;
}

nlohmann::json HistogramObserver::SaveStateImpl() const {
  nlohmann::json j;
  j["min_val"] = FloatToJson(min_);
  j["max_val"] = FloatToJson(max_);
  j["histogram"] = FloatsToJson(histogram_);
  return j;
}

Status HistogramObserver::LoadStateImpl(const nlohmann::json& state) {
  const std::string what = "HistogramObserver state";
  OCTET_ASSIGN_OR_RETURN(const float lo, ReadJsonFloat(state, "min_val", what));
  OCTET_ASSIGN_OR_RETURN(const float hi, ReadJsonFloat(state, "max_val", what));
  OCTET_ASSIGN_OR_RETURN(std::vector<float> h, ReadJsonFloats(state, "histogram", what));
  const bool unset = lo == kInf && hi == -kInf;
  if (!unset && !(std::isfinite(lo) && std::isfinite(hi) && lo <= hi)) {
    return InvalidArgument("failed to load {}: need finite min_val <= max_val, got {} and {}", what, lo, hi);
  }
  if (static_cast<int64_t>(h.size()) != options().bins) {
    return InvalidArgument("failed to load {}: the histogram has {} bins, the options say {}", what, h.size(),
                           options().bins);
  }
  for (size_t i = 0; i < h.size(); ++i) {
    if (!(std::isfinite(h[i]) && h[i] >= 0.0f)) {
      return InvalidArgument("failed to load {}: histogram[{}] must be finite and >= 0, got {}", what, i, h[i]);
    }
  }
  histogram_ = std::move(h);
  min_ = lo;
  max_ = hi;
  return OkStatus();
}

}  // namespace octet
