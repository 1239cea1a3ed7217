// The depthwise convolution operator: prepare (validate, pack int16 weights, the qgemm plan of the [C, taps] weight
// matrix for the per-channel stage and zero-point offsets), run (indirection buffer per output row, the kernel over
// each row, rows split over threads).
#include "ops/qdwconv.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/threading.h"
#include "ops/ukernels/qdwconv.h"

namespace octet {

struct QDwConvPlan::State {
  Conv2dParams params;
  Shape weight_shape;
  DType x_dtype = DType::kU8;
  int64_t channels = 0;
  QGemmPlan gemm;                   // owns the per-channel stage arrays and col_offsets
  QGemmUkernelParams kernel_params;  // pointers into gemm's state
  std::vector<int16_t> packed;       // taps x QDwConvPaddedChannels(C)
  std::vector<uint8_t> zero_row;     // QDwConvPaddedChannels(C) bytes of the input zero point: the pad taps' row
  std::vector<int8_t> quads;         // u8 activations: the vpmaddubsw layout (QDwConvPackWeightsQuads), empty if unused
  bool quads_for_any_x = false;      // every weight in [-64, 64]: the quads are exact for any u8 x, unchecked
};

namespace {

// Whether every u8 byte of x is <= 127 (the kernels' 7-bit path is then exact); a plain loop the compiler
// vectorizes.
// In 256 KiB pieces over threads (the largest input of MobileNetV2 is 1.2 MB).
bool SevenBit(const Context& context, const uint8_t* x, size_t size) {
  const size_t piece = size_t{256} << 10;
  const int64_t pieces = static_cast<int64_t>((size + piece - 1) / piece);
  std::vector<uint8_t> highs(static_cast<size_t>(pieces), 0);
  ParallelFor(context, pieces, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const uint8_t* p = x + static_cast<size_t>(t) * piece;
      const size_t count = std::min(piece, size - static_cast<size_t>(t) * piece);
      uint8_t hi = 0;
      for (size_t i = 0; i < count; ++i) hi = p[i] > hi ? p[i] : hi;
      highs[static_cast<size_t>(t)] = hi;
    }
  });
  return std::all_of(highs.begin(), highs.end(), [](uint8_t hi) { return hi <= 127; });
}

}  // namespace

bool QDwConvPlan::Supports(const QTensor& weights, const Conv2dParams& params) {
  const Shape& s = weights.shape();
  if (weights.values().dtype() != DType::kS8 || s.rank() != 4 || s.dim(3) != 1 || s.dim(0) != params.groups) {
    return false;
  }
  if (params.kernel_h * params.kernel_w > static_cast<int64_t>(kQDwConvMaxTaps)) return false;
  const auto& zps = weights.qparams().zero_points();
  return std::all_of(zps.begin(), zps.end(), [](int32_t z) { return z == 0; });
}

Result<QDwConvPlan> QDwConvPlan::Create(const Context& context, const QTensor& weights, const Conv2dParams& params,
                                        const QParams& x_qparams, const QGemmOutput& output) {
  const Shape& ws = weights.shape();
  if (weights.values().dtype() != DType::kS8) {
    return InvalidArgument("failed to create qdwconv: weights must be s8, got {}", weights.values().dtype());
  }
  OCTET_RETURN_IF_ERROR(ValidateConv2dWeights(params, ws, "qdwconv"));
  if (ws.dim(3) != 1 || params.groups != ws.dim(0)) {
    return InvalidArgument("failed to create qdwconv: depthwise weights must have shape [C, kh, kw, 1] with groups = "
                           "C, got shape {} and groups {}",
                           ws, params.groups);
  }
  const int64_t taps = params.kernel_h * params.kernel_w;
  if (taps > static_cast<int64_t>(kQDwConvMaxTaps)) {
    return InvalidArgument("failed to create qdwconv: kernel_h * kernel_w must be at most {}, got {}",
                           kQDwConvMaxTaps, taps);
  }
  const auto& zps = weights.qparams().zero_points();
  for (size_t c = 0; c < zps.size(); ++c) {
    if (zps[c] != 0) {
      return InvalidArgument("failed to create qdwconv: weights must be symmetric, got zero point {} in channel {}",
                             zps[c], c);
    }
  }
  if (x_qparams.per_channel()) {
    return InvalidArgument("failed to create qdwconv: activations need per-tensor qparams, got {}",
                           QSchemeName(x_qparams.scheme()));
  }
  const int64_t channels = ws.dim(0);
  auto s = std::make_shared<State>();
  s->params = params;
  s->weight_shape = ws;
  s->x_dtype = x_qparams.dtype();
  s->channels = channels;
  // The weights as a [C, taps] matrix: qgemm's plan gives the stage per channel and col_offsets = bias - x_zp *
  // sum_t w[c][t], exactly the kernels' offset (K = taps).
  OCTET_ASSIGN_OR_RETURN(Tensor matrix, weights.values().Reshaped(Shape{channels, taps}));
  OCTET_ASSIGN_OR_RETURN(QTensor qmatrix, QTensor::Create(std::move(matrix), weights.qparams()));
  QGemmPrepackOptions options;
  options.activation_dtype = x_qparams.dtype();
  options.activation_zero_point = x_qparams.zero_point();
  OCTET_ASSIGN_OR_RETURN(PackedWeights packed, PackedWeights::Prepack(context, qmatrix, options));
  OCTET_ASSIGN_OR_RETURN(s->gemm, QGemmPlan::Create(packed, x_qparams, output));
  s->kernel_params = s->gemm.KernelParams();
  const size_t cp = QDwConvPaddedChannels(static_cast<size_t>(channels));
  s->packed.resize(static_cast<size_t>(taps) * cp);
  QDwConvPackWeights(static_cast<size_t>(channels), static_cast<size_t>(taps), weights.values().data<int8_t>(),
                     s->packed.data());
  s->zero_row.assign(cp, static_cast<uint8_t>(x_qparams.zero_point()));
  // vpmaddubsw's pair sums fit int16 when x <= 127 (checked per call; the pad row is x's zero point) or when every
  // weight is within [-64, 64] (2 * 255 * 64 = 32640: any x; the x86 preset's [-64, 63] weights).
  const int8_t* wv = weights.values().data<int8_t>();
  s->quads_for_any_x = std::all_of(wv, wv + channels * taps, [](int8_t v) { return v >= -64 && v <= 64; });
  if (s->x_dtype == DType::kU8 && (x_qparams.zero_point() <= 127 || s->quads_for_any_x) &&
      QDwConvQuadBlocks(static_cast<size_t>(channels)) > 0) {
    s->quads.resize(QDwConvQuadPackedBytes(static_cast<size_t>(channels), static_cast<size_t>(taps)));
    QDwConvPackWeightsQuads(static_cast<size_t>(channels), static_cast<size_t>(taps), weights.values().data<int8_t>(),
                            s->quads.data());
  }
  QDwConvPlan plan;
  plan.state_ = std::move(s);
  return plan;
}

DType QDwConvPlan::output_dtype() const { return state_->gemm.output_dtype(); }

Result<Shape> QDwConvPlan::OutputShape(const Shape& x) const {
  if (!state_) return InvalidArgument("failed to run qdwconv: the plan was never created");
  OCTET_ASSIGN_OR_RETURN(const reference::Conv2dGeometry g,
                         Conv2dGeometryFor(state_->params, state_->weight_shape, x, "qdwconv"));
  return Shape{g.n, g.OutH(), g.OutW(), g.c_out};
}

const char* QDwConvPlan::UkernelName(const Context& context) const {
  return SelectQDwConvUkernel(context, state_->x_dtype, state_->kernel_params.stage.stage).name;
}

Status QDwConvPlan::RunInto(const Context& context, const Tensor& x, Tensor& y) const {
  if (!state_) return InvalidArgument("failed to run qdwconv: the plan was never created");
  const State& s = *state_;
  if (x.dtype() != s.x_dtype) {
    return InvalidArgument("failed to run qdwconv: the input must be {}, got {}", s.x_dtype, x.dtype());
  }
  OCTET_ASSIGN_OR_RETURN(const reference::Conv2dGeometry g,
                         Conv2dGeometryFor(s.params, s.weight_shape, x.shape(), "qdwconv"));
  const Shape out_shape{g.n, g.OutH(), g.OutW(), g.c_out};
  if (y.dtype() != output_dtype() || y.shape() != out_shape) {
    return InvalidArgument("failed to run qdwconv: the output must be {} of shape {}, got {} of shape {}",
                           output_dtype(), out_shape, y.dtype(), y.shape());
  }
  if (y.empty()) return OkStatus();
  const QDwConvUkernelEntry& kernel = SelectQDwConvUkernel(context, s.x_dtype, s.kernel_params.stage.stage);
  static const KernelFamily kFamily("qdwconv");
  context.RecordKernel(kFamily, kernel.name);

  const int64_t oh = g.OutH(), ow = g.OutW(), c = g.c_out, taps = g.kh * g.kw;
  const size_t out_size = y.SizeBytes() / static_cast<size_t>(y.NumElements());
  const auto* x_bytes = static_cast<const uint8_t*>(x.raw_data());
  auto* y_bytes = static_cast<uint8_t*>(y.raw_data());
  // Rows per task from the shape alone (~64k multiply-adds), so the split never depends on the thread count.
  const int64_t row_macs = std::max<int64_t>(1, ow * c * taps);
  const int64_t rows_per_task = std::max<int64_t>(1, (int64_t{1} << 16) / row_macs);
  // The vpmaddubsw path when the weights allow any x, or this call's activations are 7-bit (the pad row, x's zero
  // point, was checked at Create).
  const int8_t* w_quads =
      !s.quads.empty() && (s.quads_for_any_x || SevenBit(context, x_bytes, x.SizeBytes())) ? s.quads.data() : nullptr;
  const bool three_by_three = g.kh == 3 && g.kw == 3 && g.dilation_w == 1;
  ParallelFor(context, g.n * oh, rows_per_task, [&](int64_t begin, int64_t end) {
    std::vector<const void*> indirection(static_cast<size_t>(ow * taps));
    std::vector<const uint8_t*> row_bases(static_cast<size_t>(g.kh));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / oh, oy = row % oh;
      // The input row of each kernel row (null above or below the image), then each tap's pixel in it.
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
        row_bases[static_cast<size_t>(ky)] = iy >= 0 && iy < g.h ? x_bytes + (b * g.h + iy) * g.w * c : nullptr;
      }
      const void** ind = indirection.data();
      // 3x3 without column dilation, all three input rows inside (nearly every row of MobileNetV2's depthwise
      // layers): the interior pixels' 9 pointers straight from the three row bases; the general per-tap loop below
      // took a fifth of those layers' time on 32-channel rows.
      const bool rows3_inside =
          three_by_three && row_bases[0] != nullptr && row_bases[1] != nullptr && row_bases[2] != nullptr;
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t ix0 = ox * g.stride_w - g.pad_w;
        const bool columns_inside = ix0 >= 0 && ix0 + (g.kw - 1) * g.dilation_w < g.w;
        if (rows3_inside && columns_inside) {
          for (int64_t ky = 0; ky < 3; ++ky) {
            const uint8_t* p = row_bases[static_cast<size_t>(ky)] + ix0 * c;
            ind[0] = p;
            ind[1] = p + c;
            ind[2] = p + 2 * c;
            ind += 3;
          }
          continue;
        }
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const uint8_t* base = row_bases[static_cast<size_t>(ky)];
          if (base != nullptr && columns_inside) {
            // Interior pixel (most of them): no per-tap bounds checks.
            const uint8_t* p = base + ix0 * c;
            for (int64_t kx = 0; kx < g.kw; ++kx, p += g.dilation_w * c) *ind++ = p;
            continue;
          }
          for (int64_t kx = 0, ix = ix0; kx < g.kw; ++kx, ix += g.dilation_w) {
            *ind++ = base != nullptr && ix >= 0 && ix < g.w ? static_cast<const void*>(base + ix * c)
                                                           : static_cast<const void*>(s.zero_row.data());
          }
        }
      }
      QDwConvUkernelArgs args;
      args.channels = static_cast<size_t>(c);
      args.taps = static_cast<size_t>(taps);
      args.pixels = static_cast<size_t>(ow);
      args.input = indirection.data();
      args.w = s.packed.data();
      args.y = y_bytes + static_cast<size_t>(row * ow * c) * out_size;
      args.y_pixel_stride = static_cast<size_t>(c);
      args.params = &s.kernel_params;
      args.w_quads = w_quads;
      kernel.fn(args);
    }
  });
  return OkStatus();
}

Result<Tensor> QDwConvPlan::Run(const Context& context, const Tensor& x) const {
  OCTET_ASSIGN_OR_RETURN(const Shape shape, OutputShape(x.shape()));
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(output_dtype(), shape));
  OCTET_RETURN_IF_ERROR(RunInto(context, x, y));
  return y;
}

}  // namespace octet
