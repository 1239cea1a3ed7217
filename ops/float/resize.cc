// Resize as one interpolation pass per resized axis: each output index along an axis reads a few input indices
// ("taps") with weights fixed at Prepare, following ONNX's reference (onnx/reference/ops/op_resize.py): the output
// coordinate is mapped to the input by the coordinate_transformation_mode, nearest rounds it, linear and cubic weigh
// the 2 or 4 nearest indices (more with antialias, whose filter is stretched by 1/scale when downscaling), indices
// past the edges repeat the edge (or, with exclude_outside, get weight 0 and the rest are renormalised), and
// tf_crop_and_resize writes extrapolation_value where the coordinate falls outside the input. Interpolation is
// separable, so the N-D result is the passes in sequence.
#include "ops/float/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/threading.h"
#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct Settings {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  float extrapolation = 0.0f;
};

// One resized axis: output index j reads taps [begin[j], begin[j + 1]) of (index, weight), or is `outside`.
struct AxisPlan {
  int axis = 0;
  int64_t in_len = 0, out_len = 0;
  std::vector<int64_t> begin;
  std::vector<int64_t> index;
  std::vector<float> weight;
  std::vector<uint8_t> outside;
};

Result<Settings> ReadSettings(const OpPrepareArgs& args) {
  const AttributeMap& at = args.node.attributes;
  Settings s;
  OCTET_ASSIGN_OR_RETURN(std::string mode, at.GetString("mode", "nearest"));
  if (mode == "nearest") {
    s.mode = Mode::kNearest;
  } else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") {
    s.mode = Mode::kLinear;
  } else if (mode == "cubic" || mode == "bicubic") {
    s.mode = Mode::kCubic;
  } else {
    return InvalidArgument("attribute 'mode' must be nearest, linear or cubic, got '{}'", mode);
  }
  OCTET_ASSIGN_OR_RETURN(std::string coord, at.GetString("coordinate_transformation_mode", "half_pixel"));
  static const std::pair<const char*, Coord> kCoords[] = {{"half_pixel", Coord::kHalfPixel},
                                                          {"half_pixel_symmetric", Coord::kHalfPixelSymmetric},
                                                          {"pytorch_half_pixel", Coord::kPytorchHalfPixel},
                                                          {"align_corners", Coord::kAlignCorners},
                                                          {"asymmetric", Coord::kAsymmetric},
                                                          {"tf_half_pixel_for_nn", Coord::kTfHalfPixelForNn},
                                                          {"tf_crop_and_resize", Coord::kTfCropAndResize}};
  bool known = false;
  for (const auto& [name, c] : kCoords) {
    if (coord == name) s.coord = c, known = true;
  }
  if (!known) return InvalidArgument("attribute 'coordinate_transformation_mode' has unknown value '{}'", coord);
  OCTET_ASSIGN_OR_RETURN(std::string rounding, at.GetString("nearest_mode", "round_prefer_floor"));
  if (rounding == "round_prefer_floor") {
    s.rounding = Rounding::kRoundPreferFloor;
  } else if (rounding == "round_prefer_ceil") {
    s.rounding = Rounding::kRoundPreferCeil;
  } else if (rounding == "floor") {
    s.rounding = Rounding::kFloor;
  } else if (rounding == "ceil") {
    s.rounding = Rounding::kCeil;
  } else {
    return InvalidArgument("attribute 'nearest_mode' has unknown value '{}'", rounding);
  }
  OCTET_ASSIGN_OR_RETURN(float a, at.GetFloat("cubic_coeff_a", -0.75f));
  s.cubic_a = a;
  OCTET_ASSIGN_OR_RETURN(int64_t exclude, at.GetInt("exclude_outside", 0));
  s.exclude_outside = exclude != 0;
  OCTET_ASSIGN_OR_RETURN(int64_t antialias, at.GetInt("antialias", 0));
  s.antialias = antialias != 0;
  OCTET_ASSIGN_OR_RETURN(s.extrapolation, at.GetFloat("extrapolation_value", 0.0f));
  return s;
}

// The input coordinate of output index x along an axis (ONNX's coordinate_transformation_mode). The resized length
// in the formulas is scale * in_len, not the rounded output length: ONNX's reference uses it so.
double ToInput(const Settings& s, double x, double scale, int64_t in_len, int64_t out_len, double roi_start,
               double roi_end) {
  const double in = static_cast<double>(in_len);
  const double out = scale * in;
  switch (s.coord) {
    case Coord::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out_len) / out;
      return in / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    case Coord::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Coord::kAlignCorners:
      return out == 1 ? 0.0 : x * (in - 1) / (out - 1);
    case Coord::kAsymmetric:
      return x / scale;
    case Coord::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
    case Coord::kTfCropAndResize:
      return out > 1 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (out - 1)
                     : 0.5 * (roi_start + roi_end) * (in - 1);
  }
  return x;
}

// ONNX's cubic convolution kernel with coefficient a.
double Cubic(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

int64_t RoundNearest(Rounding r, double x) {
  const double f = std::floor(x);
  switch (r) {
    case Rounding::kRoundPreferFloor:
      return static_cast<int64_t>(x == f + 0.5 ? f : std::round(x));
    case Rounding::kRoundPreferCeil:
      return static_cast<int64_t>(x == f + 0.5 ? f + 1 : std::round(x));
    case Rounding::kFloor:
      return static_cast<int64_t>(f);
    case Rounding::kCeil:
      return static_cast<int64_t>(std::ceil(x));
  }
  return static_cast<int64_t>(f);
}

constexpr int64_t kMaxTaps = int64_t{1} << 26;

Result<AxisPlan> PlanAxis(const Settings& s, int axis, int64_t in_len, int64_t out_len, double scale, double roi_start,
                          double roi_end) {
  AxisPlan p;
  p.axis = axis;
  p.in_len = in_len;
  p.out_len = out_len;
  p.begin.push_back(0);
  p.outside.assign(static_cast<size_t>(out_len), 0);
  std::vector<double> w;
  for (int64_t j = 0; j < out_len; ++j) {
    const double x = ToInput(s, static_cast<double>(j), scale, in_len, out_len, roi_start, roi_end);
    if (s.coord == Coord::kTfCropAndResize && (x < 0 || x > static_cast<double>(in_len - 1))) {
      p.outside[static_cast<size_t>(j)] = 1;
    } else if (s.mode == Mode::kNearest) {
      p.index.push_back(std::clamp<int64_t>(RoundNearest(s.rounding, x), 0, in_len - 1));
      p.weight.push_back(1.0f);
    } else {
      // The reference treats an integer coordinate as ratio 1 from the index below it (same taps, weight 1 there).
      int64_t base = static_cast<int64_t>(std::floor(x));
      double ratio = x - static_cast<double>(base);
      if (ratio == 0) ratio = 1, base -= 1;
      const double support_scale = s.antialias ? std::min(scale, 1.0) : 1.0;
      const double reach = s.mode == Mode::kLinear ? 1.0 : 2.0;
      const int64_t start = static_cast<int64_t>(std::floor(-reach / support_scale)) + 1;
      const int64_t taps = 2 - 2 * start;
      if (taps > kMaxTaps / std::max<int64_t>(out_len, 1)) {
        return InvalidArgument("antialiased downscaling by {} along axis {} needs too many taps", scale, axis);
      }
      w.assign(static_cast<size_t>(taps), 0.0);
      double sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        const double arg = (static_cast<double>(start + t) - ratio) * support_scale;
        double v = s.mode == Mode::kLinear ? std::clamp(1 - std::fabs(arg), 0.0, 1.0) : Cubic(arg, s.cubic_a);
        const int64_t idx = base + start + t;
        if (s.exclude_outside && (idx < 0 || idx >= in_len)) v = 0;
        w[static_cast<size_t>(t)] = v;
        sum += v;
      }
      const bool normalise = s.antialias || s.exclude_outside;
      for (int64_t t = 0; t < taps; ++t) {
        const double v = normalise && sum != 0 ? w[static_cast<size_t>(t)] / sum : w[static_cast<size_t>(t)];
        if (v == 0) continue;
        p.index.push_back(std::clamp<int64_t>(base + start + t, 0, in_len - 1));
        p.weight.push_back(static_cast<float>(v));
      }
    }
    p.begin.push_back(static_cast<int64_t>(p.index.size()));
  }
  return p;
}

// Whether the plan copies its input unchanged (same length, each output reading its own index with weight 1).
bool IsIdentity(const AxisPlan& p) {
  if (p.in_len != p.out_len) return false;
  for (int64_t j = 0; j < p.out_len; ++j) {
    const auto b = static_cast<size_t>(p.begin[static_cast<size_t>(j)]);
    if (p.outside[static_cast<size_t>(j)] ||
        p.begin[static_cast<size_t>(j) + 1] - p.begin[static_cast<size_t>(j)] != 1 || p.index[b] != j ||
        p.weight[b] != 1.0f) {
      return false;
    }
  }
  return true;
}

// y[o, j, :] = sum over taps of w * x[o, index, :] (or the fill value outside), for one axis seen as [outer, len,
// inner].
template <typename T>
void ResizeAxis(const Context& context, const AxisPlan& p, int64_t outer, int64_t inner, T fill, const T* x, T* y) {
  const int64_t rows = outer * p.out_len;
  const int64_t tile = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(inner, 1));
  ParallelFor(context, rows, tile, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t o = row / p.out_len;
      const auto j = static_cast<size_t>(row % p.out_len);
      T* dst = y + row * inner;
      if (p.outside[j]) {
        std::fill(dst, dst + inner, fill);
        continue;
      }
      const int64_t b = p.begin[j], e = p.begin[j + 1];
      const T* base = x + o * p.in_len * inner;
      if (e - b == 1 && p.weight[static_cast<size_t>(b)] == 1.0f) {
        std::memcpy(dst, base + p.index[static_cast<size_t>(b)] * inner, static_cast<size_t>(inner) * sizeof(T));
        continue;
      }
      if constexpr (std::is_same_v<T, float>) {
        std::fill(dst, dst + inner, 0.0f);
        for (int64_t t = b; t < e; ++t) {
          const float w = p.weight[static_cast<size_t>(t)];
          const float* src = base + p.index[static_cast<size_t>(t)] * inner;
          for (int64_t k = 0; k < inner; ++k) dst[k] += w * src[k];
        }
      }
    }
  });
}

// The resize factor and output length of every axis, from scales or sizes (with keep_aspect_ratio_policy).
Status OutputSizes(const OpPrepareArgs& args, const std::vector<int>& axes, std::vector<double>& scale,
                   std::vector<int64_t>& out) {
  const Shape& in = args.inputs[0].shape;
  const bool has_scales = Present(args, 2) && args.inputs[2].shape.NumElements() > 0;
  const bool has_sizes = Present(args, 3) && args.inputs[3].shape.NumElements() > 0;
  if (has_scales == has_sizes) {
    return InvalidArgument("exactly one of scales (input 2) and sizes (input 3) must be given, got {}",
                           has_scales ? "both" : "neither");
  }
  const size_t n = axes.size();
  if (has_scales) {
    const ValueInfo& info = args.inputs[2];
    if (info.dtype != DType::kF32 || info.shape.rank() != 1 || static_cast<size_t>(info.shape.dim(0)) != n) {
      return InvalidArgument("scales must be 1-D f32 with {} values (one per resized axis), got {} {}", n, info.dtype,
                             info.shape);
    }
    OCTET_ASSIGN_OR_RETURN(const Tensor* data, InputData(info));
    for (size_t i = 0; i < n; ++i) {
      const float s = data->data<float>()[i];
      if (!(s > 0) || !std::isfinite(s)) return InvalidArgument("scales[{}] must be positive and finite, got {}", i, s);
      const int a = axes[i];
      scale[static_cast<size_t>(a)] = s;
      const double len = std::floor(static_cast<double>(in.dim(a)) * static_cast<double>(s));
      if (len > static_cast<double>(Shape::kMaxElements)) return OutOfRange("scales[{}] = {} is too large", i, s);
      out[static_cast<size_t>(a)] = static_cast<int64_t>(len);
    }
    return OkStatus();
  }
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ConstantInts(args, 3, "sizes"));
  if (sizes.size() != n)
    return InvalidArgument("sizes must have {} values (one per resized axis), got {}", n, sizes.size());
  for (size_t i = 0; i < n; ++i) {
    if (sizes[i] < 0) return InvalidArgument("sizes[{}] must not be negative, got {}", i, sizes[i]);
    if (in.dim(axes[i]) == 0) return InvalidArgument("axis {} is empty and cannot be resized", axes[i]);
  }
  OCTET_ASSIGN_OR_RETURN(std::string policy, args.node.attributes.GetString("keep_aspect_ratio_policy", "stretch"));
  if (policy == "stretch") {
    for (size_t i = 0; i < n; ++i) {
      const auto a = static_cast<size_t>(axes[i]);
      out[a] = sizes[i];
      scale[a] = static_cast<double>(sizes[i]) / static_cast<double>(in.dim(axes[i]));
    }
    return OkStatus();
  }
  if (policy != "not_larger" && policy != "not_smaller") {
    return InvalidArgument("attribute 'keep_aspect_ratio_policy' must be stretch, not_larger or not_smaller, got '{}'",
                           policy);
  }
  double s = policy == "not_larger" ? INFINITY : 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double r = static_cast<double>(sizes[i]) / static_cast<double>(in.dim(axes[i]));
    s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
  }
  for (size_t i = 0; i < n; ++i) {
    const auto a = static_cast<size_t>(axes[i]);
    scale[a] = s;
    out[a] = static_cast<int64_t>(std::floor(s * static_cast<double>(in.dim(axes[i])) + 0.5));
  }
  return OkStatus();
}

Result<PreparedOp> PrepareResize(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 4));
  const ValueInfo& x = args.inputs[0];
  const int rank = x.shape.rank();
  OCTET_ASSIGN_OR_RETURN(Settings s, ReadSettings(args));
  if (s.mode != Mode::kNearest && x.dtype != DType::kF32) {
    return Unimplemented("linear and cubic Resize take f32 input, got {} (nearest takes every dtype)", x.dtype);
  }
  OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, 0));
  std::vector<int> axes;
  if (args.node.attributes.Has("axes")) {
    OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> given, args.node.attributes.GetInts("axes"));
    OCTET_ASSIGN_OR_RETURN(axes, NormalizeAxes(given, rank));
  } else {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<double> scale(static_cast<size_t>(rank), 1.0);
  std::vector<int64_t> out_dims = x.shape.dims();
  OCTET_RETURN_IF_ERROR(OutputSizes(args, axes, scale, out_dims));
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out_dims));

  std::vector<double> roi_start(static_cast<size_t>(rank), 0.0), roi_end(static_cast<size_t>(rank), 1.0);
  if (s.coord == Coord::kTfCropAndResize) {
    if (!Present(args, 1)) return InvalidArgument("tf_crop_and_resize needs roi (input 1)");
    const ValueInfo& roi = args.inputs[1];
    if (roi.dtype != DType::kF32 || roi.shape.NumElements() != static_cast<int64_t>(2 * axes.size())) {
      return InvalidArgument("roi must be f32 with {} values (starts then ends of the resized axes), got {} {}",
                             2 * axes.size(), roi.dtype, roi.shape);
    }
    OCTET_ASSIGN_OR_RETURN(const Tensor* data, InputData(roi));
    for (size_t i = 0; i < axes.size(); ++i) {
      roi_start[static_cast<size_t>(axes[i])] = data->data<float>()[i];
      roi_end[static_cast<size_t>(axes[i])] = data->data<float>()[i + axes.size()];
    }
  }

  std::vector<AxisPlan> plans;
  for (int d = 0; d < rank; ++d) {
    const auto du = static_cast<size_t>(d);
    if (out_dims[du] == 0 || x.shape.dim(d) == 0) continue;  // an empty output: nothing to compute
    OCTET_ASSIGN_OR_RETURN(AxisPlan p,
                           PlanAxis(s, d, x.shape.dim(d), out_dims[du], scale[du], roi_start[du], roi_end[du]));
    if (!IsIdentity(p)) plans.push_back(std::move(p));
  }
  // The shape after each pass, and the largest intermediate (two of them alternate in the scratch).
  std::vector<int64_t> dims = x.shape.dims();
  int64_t largest = 0;
  for (size_t k = 0; k < plans.size(); ++k) {
    dims[static_cast<size_t>(plans[k].axis)] = plans[k].out_len;
    OCTET_ASSIGN_OR_RETURN(int64_t n, CheckedProduct(dims));
    if (k + 1 < plans.size()) largest = std::max(largest, n);
  }
  const size_t elem = DTypeSize(x.dtype);
  const size_t half = (static_cast<size_t>(largest) * elem + 63) / 64 * 64;
  const Shape in_shape = x.shape;
  const DType dtype = x.dtype;
  const float fill = s.extrapolation;
  auto kernel = MakeKernel([plans = std::move(plans), in_shape, dtype, fill, half](const OpRunArgs& r) -> Status {
    if (r.outputs[0].NumElements() == 0) return OkStatus();
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* src = r.inputs[0].data<T>();
      T* dst = r.outputs[0].data<T>();
      if (plans.empty()) {
        std::memcpy(dst, src, r.outputs[0].SizeBytes());
        return;
      }
      T* buffers[2] = {reinterpret_cast<T*>(r.scratch.data()), reinterpret_cast<T*>(r.scratch.data() + half)};
      std::vector<int64_t> cur = in_shape.dims();
      for (size_t k = 0; k < plans.size(); ++k) {
        const AxisPlan& p = plans[k];
        const Shape shape(cur);
        const int64_t outer = shape.Product(0, p.axis);
        const int64_t inner = shape.Product(p.axis + 1, shape.rank());
        T* out = k + 1 == plans.size() ? dst : buffers[k % 2];
        ResizeAxis<T>(r.context, p, outer, inner, static_cast<T>(fill), src, out);
        cur[static_cast<size_t>(p.axis)] = p.out_len;
        src = out;
      }
    });
    return OkStatus();
  });
  const char* mode_name = s.mode == Mode::kNearest ? "nearest" : s.mode == Mode::kLinear ? "linear" : "cubic";
  return MakePrepared({{dtype, Shape(out_dims)}}, std::move(kernel),
                      fmt::format("resize_{}_{}", mode_name, DTypeName(dtype)), 2 * half);
}

}  // namespace

Status RegisterResizeOps(OpRegistry& registry) { return RegisterFloatOp(registry, FloatOp::kResize, PrepareResize); }

}  // namespace octet::float_ops
