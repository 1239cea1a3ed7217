// Observer: the common interface of every calibration observer (DESIGN.md §5). An observer watches float32 tensors,
// keeps a summary that can be merged with another observer's and saved to JSON, and turns it into QParams.
//
// Contract shared by all observers:
//  * Observe(x, name): x must be f32 (any shape); an empty tensor is ignored. NaN and ±Inf are an error naming the
//    tensor and the first bad element by default; with skip_non_finite they are skipped and counted (num_skipped).
//  * CalculateQParams(): PyTorch's numbers (observers/qparams_math.h). Before any finite value was observed it gives
//    PyTorch's default, scale 1.0 and zero point 0 (has_observations() tells the two apart).
//  * Merge(other): other must be the same kind with equal options. Min/max, per-channel min/max, percentile, entropy
//    and MSE observers give exactly the result of one observer that saw all tensors, in any batching and merge
//    order. Moving averages and HistogramObserver are order-dependent by their mathematics (see their headers).
//  * SaveState() / LoadState(): {"observer", "format_version", "options", "state"}; float32 values round-trip
//    exactly. LoadState needs the same kind and options (ObserverFromState in observer_factory.h builds one).
//  * Not thread-safe: one observer per thread, then Merge. Observe itself uses the context's threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/context.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "observers/observer_options.h"
#include "observers/tensor_scan.h"

namespace octet {

// The context observers use when none is set: the detected ISAs (capped by OCTET_ISA) and one thread.
const Context& DefaultObserverContext();

class Observer {
 public:
  virtual ~Observer() = default;
  Observer& operator=(const Observer&) = delete;

  ObserverKind kind() const { return options_.kind; }
  const ResolvedObserverOptions& options() const { return options_; }
  // The effective quantization range (after reduce_range).
  int64_t quant_min() const { return options_.range.quant_min; }
  int64_t quant_max() const { return options_.range.quant_max; }

  // The context for Observe (ISAs and threads); not owned, must outlive the observer's use. nullptr: the default.
  void set_context(const Context* context) { context_ = context; }
  const Context& context() const { return context_ != nullptr ? *context_ : DefaultObserverContext(); }

  Status Observe(const Tensor& x, std::string_view name);
  virtual Result<QParams> CalculateQParams() const = 0;
  Status Merge(const Observer& other);
  void Reset();
  nlohmann::json SaveState() const;
  Status LoadState(const nlohmann::json& json);
  // An independent copy with the same options and state (and context); ObserverOf (observer_of.h) writes it.
  virtual std::unique_ptr<Observer> Clone() const = 0;

  // The running range: one value per tensor (per-tensor observers; +inf / -inf before any observation) or per
  // channel (per-channel observers; empty before any observation).
  virtual std::vector<float> min_val() const = 0;
  virtual std::vector<float> max_val() const = 0;
  // Some finite value has been observed (or loaded).
  virtual bool has_observations() const = 0;
  // Non-empty tensors observed (merges add them up).
  int64_t num_batches() const { return num_batches_; }
  // Non-finite values skipped (skip_non_finite) or filtered (the upstream HistogramObserver drops ±Inf).
  int64_t num_skipped() const { return num_skipped_; }

 protected:
  explicit Observer(ResolvedObserverOptions options) : options_(std::move(options)) {}
  // Clone's copy (ObserverOf): options, counters and context; no copying through the base otherwise.
  Observer(const Observer&) = default;

  // x is f32 and not empty.
  virtual Status ObserveImpl(const Tensor& x, std::string_view name) = 0;
  // other has this kind and these options, and is not this.
  virtual Status MergeImpl(const Observer& other) = 0;
  virtual void ResetImpl() = 0;
  virtual nlohmann::json SaveStateImpl() const = 0;
  // Validates everything it reads; on error the observer is left reset.
  virtual Status LoadStateImpl(const nlohmann::json& state) = 0;

  // Applies the non-finite policy to a scan of `x`: the error for the default policy, or counts the skipped values.
  // `allow_inf`: ±Inf are filtered (and counted) whatever the policy (the upstream HistogramObserver's rule).
  Status ApplyNonFinitePolicy(const NonFiniteStats& stats, const Tensor& x, std::string_view name,
                              bool allow_inf = false);

 private:
  ResolvedObserverOptions options_;
  const Context* context_ = nullptr;
  int64_t num_batches_ = 0;
  int64_t num_skipped_ = 0;
};

}  // namespace octet
