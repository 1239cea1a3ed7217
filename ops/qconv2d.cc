// The convolution operator: prepare (validate, pick the path, one qgemm plan per group or the qdwconv plan), run
// (im2col into a scratch matrix where the path needs it, then the GEMM per group, scattered into the output's
// channel slice when there are several groups; or the indirect kernels over a pointer list, with no copy).
#include "ops/qconv2d.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "core/threading.h"
#include "ops/qdwconv.h"
#include "ops/reference/qconv2d_indirect_reference.h"
#include "ops/ukernels/copy_short.h"
#include "ops/ukernels/qigemm.h"

namespace octet {

namespace {
enum class Path : uint8_t { kDepthwise, k1x1, kIm2col };
}  // namespace

struct QConv2dPlan::State {
  Conv2dParams params;
  Shape weight_shape;
  DType x_dtype = DType::kU8;
  uint8_t pad_byte = 0;  // the input zero point as stored
  Path path = Path::kIm2col;
  QDwConvPlan depthwise;
  std::vector<QGemmPlan> groups;  // one per group (1x1 and im2col)
  DType output_dtype = DType::kS32;
  // The im2col path's alternative without the gather: the qigemm kernels that mirror a qgemm kernel this plan's
  // GEMM may pick (same layout), each with its packed weights per group (the groups' plans give the column
  // parameters), and the zero row that pad taps point at. Per call, the one mirroring the GEMM's choice runs.
  struct Indirect {
    const QIgemmUkernelEntry* kernel = nullptr;
    std::vector<std::vector<int16_t>> weights;  // per group; int16 storage: 2-byte aligned for the int16 layouts
  };
  std::vector<Indirect> indirect;
  std::vector<uint8_t> zero_row;

  // Scratch tensors (the im2col matrix, a group's output) kept between calls: a fresh multi-MiB allocation per call
  // costs its zeroing and page faults, about a third of a 3x3 layer's time. Concurrent calls each take their own.
  mutable std::mutex scratch_mutex;
  mutable std::vector<Tensor> scratch;

  // A [rows, cols] tensor of dtype (compared dim by dim: building a Shape to compare allocates).
  Result<Tensor> TakeScratch(DType dtype, int64_t rows, int64_t cols) const {
    {
      std::lock_guard<std::mutex> lock(scratch_mutex);
      for (size_t i = 0; i < scratch.size(); ++i) {
        const Shape& shape = scratch[i].shape();
        if (scratch[i].dtype() == dtype && shape.rank() == 2 && shape.dim(0) == rows && shape.dim(1) == cols) {
          Tensor t = std::move(scratch[i]);
          scratch.erase(scratch.begin() + static_cast<std::ptrdiff_t>(i));
          return t;
        }
      }
    }
    return Tensor::Create(dtype, Shape{rows, cols});
  }
  void ReturnScratch(Tensor t) const {
    std::lock_guard<std::mutex> lock(scratch_mutex);
    if (scratch.size() < 8) scratch.push_back(std::move(t));
  }

  // Indirection buffers kept between calls with the input they were built for: the buffer holds only addresses,
  // and an executor passes the same arena address every call, so a call on the same address and shape reuses it
  // (building it took a tenth of a small network's time). Concurrent calls each take their own.
  struct IndirectionBuffer {
    Tensor buffer;
    const void* x = nullptr;  // the input it was built for (null: not built)
    Shape x_shape;
    size_t mr = 0;
  };
  mutable std::vector<IndirectionBuffer> indirection_buffers;

  // The last choice of ChooseIndirect per (m, activation range): the qgemm selection builds strings, and the
  // range of one network's activations rarely changes from call to call.
  struct Choice {
    int64_t m = -1;
    int32_t lo = 0, hi = 0;
    const QIgemmUkernelEntry* kernel = nullptr;
  };
  mutable Choice last_choice;
};

namespace {

// Group `group`'s output channels as a [per_group, kh * kw * cg] qgemm weight matrix, with its qparams.
Result<QTensor> GroupWeights(const QTensor& weights, int64_t group, int64_t per_group) {
  const Tensor& w = weights.values();
  const int64_t k = w.shape().dim(1) * w.shape().dim(2) * w.shape().dim(3);
  OCTET_ASSIGN_OR_RETURN(Tensor slice, Tensor::Create(DType::kS8, Shape{per_group, k}));
  std::memcpy(slice.raw_data(), w.data<int8_t>() + group * per_group * k, static_cast<size_t>(per_group * k));
  const QParams& qp = weights.qparams();
  QParams gq = qp;
  if (qp.per_channel()) {
    const auto first = static_cast<size_t>(group * per_group), last = static_cast<size_t>((group + 1) * per_group);
    std::vector<float> scales(qp.scales().begin() + first, qp.scales().begin() + last);
    std::vector<int32_t> zero_points(qp.zero_points().begin() + first, qp.zero_points().begin() + last);
    OCTET_ASSIGN_OR_RETURN(gq, QParams::Create(qp.scheme(), qp.dtype(), qp.quant_min(), qp.quant_max(),
                                               std::move(scales), std::move(zero_points), 0));
  }
  return QTensor::Create(std::move(slice), std::move(gq));
}

template <typename T>
std::vector<T> Slice(const std::vector<T>& v, int64_t begin, int64_t count) {
  if (v.empty()) return {};
  return std::vector<T>(v.begin() + begin, v.begin() + begin + count);
}

// The indirect path's K bounds. A kernel row's weights over K = taps * cg stay near L1 up to K = 2304 (3x3 x 256);
// past it the GEMM's K chunks win and im2col costs little next to the arithmetic, except on few-pixel layers, whose
// tasks keep one panel of weights over many tiles (RunIndirect): there the indirect path wins up to K = 4608 (3x3 x
// 512, ResNet-18 layer4: ~10% less time than im2col + GEMM).
constexpr int64_t kIndirectMaxK = 2304, kIndirectFewPixelsMaxK = 4608;

// Whether an indirect call over m output pixels and og channels per group splits into narrow column blocks over many
// row tiles (RunIndirect): few pixels (<= 64 of the kernel's row tiles), at least two kernel panels of channels.
bool FewPixels(const QIgemmUkernelEntry& kernel, int64_t m, int64_t og) {
  const auto unit = static_cast<int64_t>(std::max<size_t>({size_t{kernel.nr}, size_t{kernel.layout.nr}, size_t{1}}));
  const auto mr = static_cast<int64_t>(kernel.mr);
  return kernel.layout.nr != 0 && (m + mr - 1) / mr <= 64 && og >= 2 * unit;
}

// The indirect kernels for an im2col-path convolution: those mirroring a qgemm kernel of a layout the GEMM's weights
// were packed for, with symmetric weights (no row sums) and whole groups of 4 channels per tap, packed once. The
// scalar indirect kernels never beat im2col + a SIMD GEMM, so they are left to the tests.
void PrepareIndirect(const Context& context, const QTensor& weights, int64_t groups, QGemmStage stage,
                     QConv2dPlan::State& s) {
  const QGemmPlan& plan = s.groups.front();
  if (plan.KernelParams().w_zero_points != nullptr) return;
  const Shape& ws = weights.shape();
  const int64_t per_group = ws.dim(0) / groups, cg = ws.dim(3), k = ws.dim(1) * ws.dim(2) * cg;
  for (const QIgemmUkernelEntry& e : QIgemmUkernels()) {
    if (e.isa == Isa::kScalar || e.a_dtype != s.x_dtype || e.stage != stage || !context.IsEnabled(e.isa)) continue;
    if (cg % e.c_multiple != 0) continue;
    if (!(e.layout == plan.weights().layout() || e.layout == plan.weights().alt_layout())) continue;
    QConv2dPlan::State::Indirect ind;
    ind.kernel = &e;
    for (int64_t g = 0; g < groups; ++g) {
      const auto n = static_cast<size_t>(per_group), kk = static_cast<size_t>(k);
      std::vector<int16_t> packed((e.layout.PackedBytes(n, kk) + 1) / 2);
      std::vector<int32_t> col_sums(e.layout.PaddedN(n));
      QGemmPackWeights(e.layout, n, kk, weights.values().data<int8_t>() + g * per_group * k, kk,
                       reinterpret_cast<int8_t*>(packed.data()), col_sums.data());
      ind.weights.push_back(std::move(packed));
    }
    s.indirect.push_back(std::move(ind));
  }
  if (!s.indirect.empty()) s.zero_row.assign(static_cast<size_t>(ws.dim(3) * groups), s.pad_byte);
}

}  // namespace

Result<QConv2dPlan> QConv2dPlan::Create(const Context& context, const QTensor& weights, const Conv2dParams& params,
                                        const QParams& x_qparams, const QGemmOutput& output) {
  const Shape& ws = weights.shape();
  if (weights.values().dtype() != DType::kS8) {
    return InvalidArgument("failed to create qconv2d: weights must be s8, got {}", weights.values().dtype());
  }
  OCTET_RETURN_IF_ERROR(ValidateConv2dWeights(params, ws, "qconv2d"));
  const QParams& wq = weights.qparams();
  if (wq.per_channel() && wq.axis() != 0) {
    return InvalidArgument(
        "failed to create qconv2d: per-channel weight qparams must be on axis 0 (output channels), "
        "got axis {}",
        wq.axis());
  }
  OCTET_RETURN_IF_ERROR(wq.ValidateFor(ws, "qconv2d weights"));
  if (x_qparams.per_channel()) {
    return InvalidArgument("failed to create qconv2d: activations need per-tensor qparams, got {}",
                           QSchemeName(x_qparams.scheme()));
  }
  if (x_qparams.dtype() != DType::kU8 && x_qparams.dtype() != DType::kS8) {
    return InvalidArgument("failed to create qconv2d: activations must be u8 or s8, got {}", x_qparams.dtype());
  }
  const int64_t c_out = ws.dim(0);
  const size_t bias_size = std::max(output.bias_s32.size(), output.bias_f32.size());
  if (bias_size != 0 && static_cast<int64_t>(bias_size) != c_out) {
    return InvalidArgument("failed to create qconv2d: bias must be empty or have c_out = {} values, got {}", c_out,
                           bias_size);
  }

  auto s = std::make_shared<State>();
  s->params = params;
  s->weight_shape = ws;
  s->x_dtype = x_qparams.dtype();
  s->pad_byte = static_cast<uint8_t>(x_qparams.zero_point());
  const bool depthwise = params.groups > 1 && ws.dim(3) == 1 && c_out == params.groups;
  if (depthwise && QDwConvPlan::Supports(weights, params)) {
    s->path = Path::kDepthwise;
    OCTET_ASSIGN_OR_RETURN(s->depthwise, QDwConvPlan::Create(context, weights, params, x_qparams, output));
    s->output_dtype = s->depthwise.output_dtype();
  } else {
    const bool one_by_one = params.kernel_h == 1 && params.kernel_w == 1 && params.stride_h == 1 &&
                            params.stride_w == 1 && params.pad_h == 0 && params.pad_w == 0 && params.groups == 1;
    s->path = one_by_one ? Path::k1x1 : Path::kIm2col;
    const int64_t per_group = c_out / params.groups;
    QGemmPrepackOptions options;
    options.activation_dtype = x_qparams.dtype();
    options.activation_zero_point = x_qparams.zero_point();
    for (int64_t g = 0; g < params.groups; ++g) {
      OCTET_ASSIGN_OR_RETURN(QTensor gw, GroupWeights(weights, g, per_group));
      OCTET_ASSIGN_OR_RETURN(PackedWeights packed, PackedWeights::Prepack(context, gw, options));
      QGemmOutput go = output;
      go.bias_s32 = Slice(output.bias_s32, g * per_group, per_group);
      go.bias_f32 = Slice(output.bias_f32, g * per_group, per_group);
      OCTET_ASSIGN_OR_RETURN(QGemmPlan plan, QGemmPlan::Create(packed, x_qparams, go));
      s->groups.push_back(std::move(plan));
    }
    s->output_dtype = s->groups.front().output_dtype();
    if (s->path == Path::kIm2col && ws.dim(1) * ws.dim(2) * ws.dim(3) <= kIndirectFewPixelsMaxK) {
      PrepareIndirect(context, weights, params.groups, output.stage, *s);
    }
  }
  QConv2dPlan plan;
  plan.state_ = std::move(s);
  return plan;
}

DType QConv2dPlan::output_dtype() const { return state_->output_dtype; }

const char* QConv2dPlan::path() const {
  switch (state_->path) {
    case Path::kDepthwise:
      return "depthwise";
    case Path::k1x1:
      return "1x1";
    case Path::kIm2col:
      return "im2col";
  }
  return "?";
}

Result<Shape> QConv2dPlan::OutputShape(const Shape& x) const {
  if (!state_) return InvalidArgument("failed to run qconv2d: the plan was never created");
  OCTET_ASSIGN_OR_RETURN(const reference::Conv2dGeometry g,
                         Conv2dGeometryFor(state_->params, state_->weight_shape, x, "qconv2d"));
  return Shape{g.n, g.OutH(), g.OutW(), g.c_out};
}

namespace {

// Copies n bytes with at most a few unaligned loads and stores (the overlapping-tail trick); im2col copies many
// short pieces (21 bytes per kernel row of a 3-channel 7x7 stem), where a memcpy call per piece dominates.
inline void CopyBytes(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n < 16) {
    CopyShort(dst, src, n);
    return;
  }
  size_t i = 0;
  for (; i + 16 <= n; i += 16) std::memcpy(dst + i, src + i, 16);
  if (i < n) std::memcpy(dst + n - 16, src + n - 16, 16);
}

// Kernel rows of 16 to 32 contiguous bytes (small-C_in stems: 21 for 3 channels x 7 taps) take Im2colShortPieces.
constexpr int64_t kShortPieceMin = 16, kShortPieceMax = 32;

// One output pixel's row where every kernel row lies inside x horizontally (one group, no column dilation): kernel
// row ky is `piece` contiguous bytes of x at offset `offset` + ky * dilation_h * w * c_in, or the pad byte where its
// input row iy is outside. Each piece but the last goes as one 32-byte copy that runs into the next piece's place
// (written right after; piece >= 16 keeps it inside the row), where the 32 source bytes lie inside x; the last piece
// is copied exactly, so nothing past the row is written. On the ResNet stem (K = 147) this halves the gather: from
// 18% of the layer's time to 10%.
void Im2colShortPieces(const reference::Conv2dGeometry& g, const uint8_t* x, int64_t x_size, const uint8_t* pad32,
                       int64_t iy, int64_t offset, uint8_t* row) {
  const int64_t piece = g.kw * g.c_in, step = g.dilation_h * g.w * g.c_in;
  for (int64_t ky = 0; ky < g.kh; ++ky, iy += g.dilation_h, offset += step, row += piece) {
    const bool inside = iy >= 0 && iy < g.h;
    const uint8_t* from = inside ? x + offset : pad32;
    if (ky + 1 < g.kh && (!inside || offset + kShortPieceMax <= x_size)) {
      std::memcpy(row, from, kShortPieceMax);
    } else {
      CopyBytes(row, from, static_cast<size_t>(piece));
    }
  }
}

// One output pixel's row by the general rule: per kernel row, one copy where its taps are contiguous in x
// (row_contiguous) or a fill where its input row is outside, else per tap.
void Im2colRow(const reference::Conv2dGeometry& g, const uint8_t* x, uint8_t pad, int64_t group, int64_t b, int64_t oy,
               int64_t ix0, bool row_contiguous, uint8_t* row) {
  const int64_t cg = g.c_in / g.groups;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const int64_t iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
    const bool row_inside = iy >= 0 && iy < g.h;
    if (row_contiguous || !row_inside) {
      uint8_t* dst = row + ky * g.kw * cg;
      if (row_inside) {
        CopyBytes(dst, x + ((b * g.h + iy) * g.w + ix0) * g.c_in, static_cast<size_t>(g.kw * cg));
      } else {
        std::memset(dst, pad, static_cast<size_t>(g.kw * cg));
      }
      continue;
    }
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const int64_t ix = ix0 + kx * g.dilation_w;
      uint8_t* dst = row + (ky * g.kw + kx) * cg;
      if (ix >= 0 && ix < g.w) {
        CopyBytes(dst, x + ((b * g.h + iy) * g.w + ix) * g.c_in + group * cg, static_cast<size_t>(cg));
      } else {
        std::memset(dst, pad, static_cast<size_t>(cg));
      }
    }
  }
}

// Kernel rows of fewer than 16 bytes (kw * c_in: 3 for a 1-channel 3x3 stem, 9 for a 3-channel one) with one group
// and no column dilation take Im2colPaddedLines when the kh padded lines fit in a stack buffer.
constexpr int64_t kPaddedLinesMaxBytes = 4096;

// The bytes of one padded input line: the input pixels that output columns 0 .. ow - 1 read, pads included.
int64_t PaddedLineBytes(const reference::Conv2dGeometry& g) { return ((g.OutW() - 1) * g.stride_w + g.kw) * g.c_in; }

bool UsePaddedLines(const reference::Conv2dGeometry& g) {
  return g.groups == 1 && g.dilation_w == 1 && g.kw * g.c_in < kShortPieceMin &&
         g.kh * PaddedLineBytes(g) <= kPaddedLinesMaxBytes;
}

// Im2col for small kernel rows: per output row (b, oy), the kh input rows it reads are copied once into lines padded
// left and right with the pad byte (a whole line of it where the input row is outside); then each output pixel's
// kernel row ky is the `piece` bytes of line ky at ox * stride_w * c_in, with no bounds test per tap. Each piece goes
// as one 16-byte copy that runs into the places of the next pieces (written after it; the lines have 16 bytes of
// slack), except within 16 bytes of the end of the task's rows, copied exactly: what follows is another task's. On the
// digits CNN's 1-channel 3x3 stem over 8x8 pixels, the per-tap tests of Im2colRow took a quarter of the int8 model's
// time.
void Im2colPaddedLines(const reference::Conv2dGeometry& g, const uint8_t* x, uint8_t pad, int64_t first, int64_t begin,
                       int64_t end, uint8_t* a) {
  const int64_t oh = g.OutH(), ow = g.OutW(), k = g.kh * g.kw * g.c_in;
  const int64_t piece = g.kw * g.c_in, line = PaddedLineBytes(g), step = g.stride_w * g.c_in;
  // Line byte offsets [p0, p1) hold input columns 0 .. of an inside row.
  const int64_t p0 = std::min(line, g.pad_w * g.c_in), p1 = std::min(line, (g.w + g.pad_w) * g.c_in);
  uint8_t lines[kPaddedLinesMaxBytes + 16];
  uint8_t* const limit = a + (end - first) * k;  // the end of this task's rows
  int64_t b = begin / (oh * ow), oy = (begin / ow) % oh, ox = begin % ow;
  bool built = false;
  for (int64_t m = begin; m < end; ++m) {
    if (!built) {
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        uint8_t* l = lines + ky * line;
        const int64_t iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
        if (iy < 0 || iy >= g.h) {
          std::memset(l, pad, static_cast<size_t>(line));
          continue;
        }
        for (int64_t i = 0; i < p0; ++i) l[i] = pad;
        if (p1 > p0) {
          CopyBytes(l + p0, x + ((b * g.h + iy) * g.w + (p0 / g.c_in - g.pad_w)) * g.c_in,
                    static_cast<size_t>(p1 - p0));
        }
        for (int64_t i = std::max(p0, p1); i < line; ++i) l[i] = pad;
      }
      built = true;
    }
    uint8_t* row = a + (m - first) * k;
    const uint8_t* from = lines + ox * step;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      uint8_t* dst = row + ky * piece;
      if (dst + 16 <= limit) {
        std::memcpy(dst, from + ky * line, 16);
      } else {
        CopyBytes(dst, from + ky * line, static_cast<size_t>(piece));
      }
    }
    if (++ox == ow) {
      ox = 0;
      built = false;
      if (++oy == oh) {
        oy = 0;
        ++b;
      }
    }
  }
}

// Gathers group `group`'s receptive field of output pixels [begin, end) into rows of K = kh * kw * cg bytes at
// a + (m - first) * K, tap-major (ky, kx, channel) like the OHWI weights; pad taps get the zero point's byte.
void Im2col(const reference::Conv2dGeometry& g, const uint8_t* x, uint8_t pad, int64_t group, int64_t first,
            int64_t begin, int64_t end, uint8_t* a) {
  if (UsePaddedLines(g)) return Im2colPaddedLines(g, x, pad, first, begin, end, a);
  const int64_t oh = g.OutH(), ow = g.OutW(), cg = g.c_in / g.groups;
  const int64_t k = g.kh * g.kw * cg;
  const bool short_pieces =
      g.groups == 1 && g.dilation_w == 1 && g.kw * cg >= kShortPieceMin && g.kw * cg <= kShortPieceMax;
  const int64_t x_size = g.n * g.h * g.w * g.c_in;
  uint8_t pad32[kShortPieceMax];
  std::memset(pad32, pad, sizeof(pad32));
  int64_t b = begin / (oh * ow), oy = (begin / ow) % oh, ox = begin % ow;
  for (int64_t m = begin; m < end; ++m) {
    uint8_t* row = a + (m - first) * k;
    // With one group and no column dilation, a kernel row's taps are adjacent pixels: kw * c_in contiguous bytes of
    // x, copied at once.
    const int64_t ix0 = ox * g.stride_w - g.pad_w;
    const bool row_contiguous = g.groups == 1 && g.dilation_w == 1 && ix0 >= 0 && ix0 + g.kw <= g.w;
    if (row_contiguous && short_pieces) {
      const int64_t iy0 = oy * g.stride_h - g.pad_h;
      Im2colShortPieces(g, x, x_size, pad32, iy0, ((b * g.h + iy0) * g.w + ix0) * g.c_in, row);
    } else {
      Im2colRow(g, x, pad, group, b, oy, ix0, row_contiguous, row);
    }
    if (++ox == ow) {
      ox = 0;
      if (++oy == oh) {
        oy = 0;
        ++b;
      }
    }
  }
}

// The smallest and largest of n >= 1 bytes, each xor `flip` (0x80 orders s8 values as u8). A function of its own
// that is never inlined: inlined into ChooseIndirect's lambda, GCC 12 once compiled the loop to scalar cmov steps,
// a tenth of a 3x3 layer's time.
__attribute__((noinline)) std::pair<uint8_t, uint8_t> ByteRange(const uint8_t* p, size_t n, uint8_t flip) {
  uint8_t mn = 255, mx = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto v = static_cast<uint8_t>(p[i] ^ flip);
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  return {mn, mx};
}

// The indirect kernel for this call, or null: the one mirroring the qgemm kernel the GEMM would pick for the call's
// actual activation range (the pad byte included: 7-bit activations let AVX2 run vpmaddubsw), if prepared and
// enabled.
const QIgemmUkernelEntry* ChooseIndirect(const Context& context, const QConv2dPlan::State& s, const Tensor& x,
                                         int64_t m) {
  const auto* bytes = static_cast<const uint8_t*>(x.raw_data());
  const size_t size = x.SizeBytes();
  // The range in 256 KiB pieces over threads (min and max do not depend on the order), the pad byte included.
  const size_t piece = size_t{256} << 10;
  const int64_t pieces = static_cast<int64_t>((size + piece - 1) / piece);
  const bool u8 = s.x_dtype == DType::kU8;
  auto value = [&](uint8_t byte) { return u8 ? int32_t{byte} : int32_t{static_cast<int8_t>(byte)}; };
  // One piece (inputs up to 256 KiB) in place of the per-call vector.
  std::pair<int32_t, int32_t> one;
  std::vector<std::pair<int32_t, int32_t>> many(pieces > 1 ? static_cast<size_t>(pieces) : 0);
  std::span<std::pair<int32_t, int32_t>> parts =
      pieces > 1 ? std::span(many) : std::span(&one, static_cast<size_t>(pieces));
  ParallelFor(context, pieces, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const uint8_t* p = bytes + static_cast<size_t>(t) * piece;
      const size_t count = std::min(piece, size - static_cast<size_t>(t) * piece);
      const auto [mn, mx] = ByteRange(p, count, u8 ? 0 : 0x80);
      parts[static_cast<size_t>(t)] = {u8 ? int32_t{mn} : int32_t{mn} - 128, u8 ? int32_t{mx} : int32_t{mx} - 128};
    }
  });
  int32_t lo = value(s.pad_byte), hi = lo;
  for (const auto& [mn, mx] : parts) {
    lo = std::min(lo, mn);
    hi = std::max(hi, mx);
  }
  {
    std::lock_guard<std::mutex> lock(s.scratch_mutex);
    const QConv2dPlan::State::Choice& c = s.last_choice;
    if (c.m == m && c.lo == lo && c.hi == hi) return c.kernel;
  }
  const QIgemmUkernelEntry* chosen = nullptr;
  const QGemmPlan& plan = s.groups.front();
  const std::string gemm = QGemmKernelName(context, plan.weights(), plan.KernelParams().stage.stage, m, lo, hi);
  if (gemm.rfind("qgemm", 0) == 0) {
    const std::string mirror = "qigemm" + gemm.substr(5);
    for (const QConv2dPlan::State::Indirect& ind : s.indirect) {
      if (ind.kernel->name == mirror && context.IsEnabled(ind.kernel->isa)) chosen = ind.kernel;
    }
  }
  std::lock_guard<std::mutex> lock(s.scratch_mutex);
  s.last_choice = {m, lo, hi, chosen};
  return chosen;
}

// A kept indirection buffer for x: one built for x's address and shape (x set), else any other (x null, to be
// rebuilt), else an empty one.
QConv2dPlan::State::IndirectionBuffer TakeIndirection(const QConv2dPlan::State& s, const Tensor& x, size_t mr) {
  std::lock_guard<std::mutex> lock(s.scratch_mutex);
  std::vector<QConv2dPlan::State::IndirectionBuffer>& kept = s.indirection_buffers;
  if (kept.empty()) return {};
  size_t pick = kept.size() - 1;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i].x == x.raw_data() && kept[i].mr == mr && kept[i].x_shape == x.shape()) pick = i;
  }
  QConv2dPlan::State::IndirectionBuffer ib = std::move(kept[pick]);
  kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(pick));
  if (ib.x != x.raw_data() || ib.mr != mr || ib.x_shape != x.shape()) ib.x = nullptr;
  return ib;
}

// The indirect path: one pointer per (output pixel, tap) into x (or the zero row), built for x's address and shape
// (a few hundred KiB at most, no activation bytes; reused while they stay the same), then the kernel over tiles of
// output pixels per group. Each output element is computed whole by one kernel call, so the split over threads changes
// nothing.
Status RunIndirect(const Context& context, const QConv2dPlan::State& s, const QIgemmUkernelEntry& kernel,
                   const reference::Conv2dGeometry& g, const Tensor& x, Tensor& y) {
  const std::vector<std::vector<int16_t>>* weights = nullptr;
  for (const QConv2dPlan::State::Indirect& ind : s.indirect) {
    if (ind.kernel == &kernel) weights = &ind.weights;
  }
  const size_t mr = kernel.mr, taps = static_cast<size_t>(g.kh * g.kw);
  const size_t cg = static_cast<size_t>(g.c_in / g.groups), og = static_cast<size_t>(g.c_out / g.groups);
  const size_t k = taps * cg, m = static_cast<size_t>(g.n * g.OutH() * g.OutW());
  const size_t entries = reference::ConvIndirectionSize(g, mr);
  QConv2dPlan::State::IndirectionBuffer ib = TakeIndirection(s, x, mr);
  if (ib.x == nullptr) {
    if (ib.buffer.SizeBytes() < entries * sizeof(void*)) {
      OCTET_ASSIGN_OR_RETURN(ib.buffer,
                             Tensor::Create(DType::kU8, Shape{static_cast<int64_t>(entries * sizeof(void*))}));
    }
    reference::BuildConvIndirection(g, mr, x.raw_data(), s.zero_row.data(),
                                    reinterpret_cast<const void**>(ib.buffer.raw_data()));
    ib.x = x.raw_data();
    ib.x_shape = x.shape();
    ib.mr = mr;
  }
  auto** indirection = reinterpret_cast<const void**>(ib.buffer.raw_data());
  const size_t out_size = y.SizeBytes() / static_cast<size_t>(y.NumElements());
  auto* y_bytes = static_cast<uint8_t*>(y.raw_data());
  const int64_t tiles = static_cast<int64_t>((m + mr - 1) / mr);
  const size_t unit = std::max<size_t>({size_t{kernel.nr}, size_t{kernel.layout.nr}, size_t{1}});
  // Tasks over (pixel tiles, column blocks), from the shape alone; each output element is still computed whole by one
  // call, so the split changes nothing in the results.
  int64_t per_task = 0;
  size_t cols = og;
  if (FewPixels(kernel, static_cast<int64_t>(m), static_cast<int64_t>(og))) {
    // Few pixels (14x14 outputs and below), many channels: narrow column blocks (one or a few kernel panels, 32 blocks
    // where there are that many) over many tiles each, split into at least 32 tasks. The kernel walks a call's panels
    // outside its tiles, so one panel's weights (16 x K bytes) stay in L1 for all of the task's tiles; one tile per
    // call over all columns streamed every weight from L2 once per tile (ResNet-18 layer3/layer4 3x3: 7-20% slower).
    const size_t panels = (og + unit - 1) / unit, blocks = std::min<size_t>(panels, 32);
    cols = (panels + blocks - 1) / blocks * unit;
    const int64_t col_blocks = static_cast<int64_t>((og + cols - 1) / cols);
    const int64_t splits = (32 + col_blocks - 1) / col_blocks;
    per_task = (tiles + splits - 1) / splits;
  } else {
    // Tiles per task: about 2^20 multiply-adds each.
    per_task = std::max<int64_t>(1, static_cast<int64_t>((size_t{1} << 20) / std::max<size_t>(mr * k * og, 1)));
    const int64_t pixel_tasks = (tiles + per_task - 1) / per_task;
    // Layers with many channels also split the output channels, in whole kernel panels, until there are enough
    // tasks for 16 threads or a task would fall below 2^19 multiply-adds.
    while (kernel.layout.nr != 0 && pixel_tasks * static_cast<int64_t>((og + cols - 1) / cols) < 32) {
      const size_t half = ((cols + 1) / 2 + unit - 1) / unit * unit;
      if (half >= cols || static_cast<size_t>(per_task) * mr * k * half < (size_t{1} << 19)) break;
      cols = half;
    }
  }
  const int64_t pixel_tasks = (tiles + per_task - 1) / per_task;
  const int64_t col_blocks = static_cast<int64_t>((og + cols - 1) / cols);
  const size_t w_panel_stride = kernel.layout.PanelStride(k);
  for (int64_t group = 0; group < g.groups; ++group) {
    const QGemmUkernelParams params = s.groups[static_cast<size_t>(group)].KernelParams();
    const int8_t* w = reinterpret_cast<const int8_t*>((*weights)[static_cast<size_t>(group)].data());
    ParallelFor(context, pixel_tasks * col_blocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t tile0 = t / col_blocks * per_task, tile1 = std::min(tiles, tile0 + per_task);
        const size_t j0 = static_cast<size_t>(t % col_blocks) * cols;
        const QGemmUkernelParams block_params = QGemmParamsAt(params, 0, static_cast<int64_t>(j0));
        QIgemmUkernelArgs args;
        args.m = std::min(static_cast<size_t>(tile1) * mr, m) - static_cast<size_t>(tile0) * mr;
        args.n = std::min(cols, og - j0);
        args.taps = taps;
        args.c = cg;
        args.indirection = indirection + static_cast<size_t>(tile0) * taps * mr;
        args.mr = mr;
        args.a_offset = static_cast<size_t>(group) * cg;
        args.w = w + (kernel.layout.nr != 0 ? j0 / kernel.layout.nr * w_panel_stride : 0);
        args.w_panel_stride = w_panel_stride;
        args.layout = kernel.layout;
        args.y = y_bytes + (static_cast<size_t>(tile0) * mr * static_cast<size_t>(g.c_out) +
                            static_cast<size_t>(group) * og + j0) *
                               out_size;
        args.y_stride = static_cast<size_t>(g.c_out);
        args.params = &block_params;
        kernel.fn(args);
      }
    });
  }
  {
    std::lock_guard<std::mutex> lock(s.scratch_mutex);
    if (s.indirection_buffers.size() < 8) s.indirection_buffers.push_back(std::move(ib));
  }
  static const KernelFamily kConvFamily("qconv2d"), kIgemmFamily("qigemm");
  context.RecordKernel(kConvFamily, "indirect");
  context.RecordKernel(kIgemmFamily, kernel.name);
  return OkStatus();
}

}  // namespace

std::string QConv2dPlan::UkernelName(const Context& context, int64_t m) const {
  if (state_->path == Path::kDepthwise) return state_->depthwise.UkernelName(context);
  return state_->groups.front().UkernelName(context, m);
}

Status QConv2dPlan::RunInto(const Context& context, const Tensor& x, Tensor& y) const {
  if (!state_) return InvalidArgument("failed to run qconv2d: the plan was never created");
  const State& s = *state_;
  static const KernelFamily kFamily("qconv2d");
  context.RecordKernel(kFamily, path());
  if (s.path == Path::kDepthwise) return s.depthwise.RunInto(context, x, y);
  if (x.dtype() != s.x_dtype) {
    return InvalidArgument("failed to run qconv2d: the input must be {}, got {}", s.x_dtype, x.dtype());
  }
  OCTET_ASSIGN_OR_RETURN(const reference::Conv2dGeometry g,
                         Conv2dGeometryFor(s.params, s.weight_shape, x.shape(), "qconv2d"));
  // Checked dim by dim and run on raw rows: the Shapes and reshaped Tensors of a per-call check allocate, a tenth
  // of a small network's time at batch 1.
  const Shape& ys = y.shape();
  if (y.dtype() != s.output_dtype || ys.rank() != 4 || ys.dim(0) != g.n || ys.dim(1) != g.OutH() ||
      ys.dim(2) != g.OutW() || ys.dim(3) != g.c_out) {
    return InvalidArgument("failed to run qconv2d: the output must be {} of shape {}, got {} of shape {}",
                           s.output_dtype, Shape{g.n, g.OutH(), g.OutW(), g.c_out}, y.dtype(), y.shape());
  }
  const int64_t m = g.n * g.OutH() * g.OutW();
  if (m == 0) return OkStatus();
  if (s.path == Path::k1x1) {
    return s.groups.front().RunRows(context, x.raw_data(), static_cast<size_t>(g.c_in), m, y.raw_data(),
                                    static_cast<size_t>(g.c_out));
  }
  const int64_t cg = g.c_in / g.groups, og = g.c_out / g.groups;
  const int64_t k = g.kh * g.kw * cg;
  if (!s.indirect.empty()) {
    const QIgemmUkernelEntry* kernel = ChooseIndirect(context, s, x, m);
    if (kernel != nullptr && (k <= kIndirectMaxK || FewPixels(*kernel, m, og))) {
      return RunIndirect(context, s, *kernel, g, x, y);
    }
  }
  // The output pixels go in chunks whose im2col rows (<= 512 KiB) stay in L2 until the GEMM reads them: gathering
  // the whole image first writes megabytes out to L3 and reads them back. Chunks are balanced and rounded up to the
  // 32-row AMX tile, so no chunk is a sliver that falls below a kernel's minimum M. A pure function of the shape, and
  // each output element's arithmetic is the same in any chunk, so results do not depend on it.
  const int64_t max_chunk = std::max<int64_t>(32, (int64_t{512} << 10) / std::max<int64_t>(k, 1) / 32 * 32);
  const int64_t chunks = (m + max_chunk - 1) / max_chunk;
  const int64_t chunk = std::min(m, std::min(max_chunk, ((m + chunks - 1) / chunks + 31) / 32 * 32));
  OCTET_ASSIGN_OR_RETURN(Tensor a, s.TakeScratch(s.x_dtype, chunk, k));
  const auto* x_bytes = static_cast<const uint8_t*>(x.raw_data());
  auto* a_bytes = static_cast<uint8_t*>(a.raw_data());
  auto* y_bytes = static_cast<uint8_t*>(y.raw_data());
  // Rows per im2col task from the shape alone (~16 KiB each); the gather is pure data movement.
  const int64_t rows_per_task = std::max<int64_t>(1, (int64_t{16} << 10) / std::max<int64_t>(k, 1));
  const size_t out_size = y.SizeBytes() / static_cast<size_t>(y.NumElements());
  Status status;
  for (int64_t group = 0; group < g.groups && status.ok(); ++group) {
    for (int64_t m0 = 0; m0 < m && status.ok(); m0 += chunk) {
      const int64_t rows = std::min(chunk, m - m0);
      ParallelFor(context, rows, rows_per_task, [&](int64_t begin, int64_t end) {
        Im2col(g, x_bytes, s.pad_byte, group, m0, m0 + begin, m0 + end, a_bytes);
      });
      // One group's GEMM writes its channel slice of the output rows in place.
      status = s.groups[static_cast<size_t>(group)].RunRows(
          context, a_bytes, static_cast<size_t>(k), rows,
          y_bytes + static_cast<size_t>(m0 * g.c_out + group * og) * out_size, static_cast<size_t>(g.c_out));
    }
  }
  s.ReturnScratch(std::move(a));
  return status;
}

Result<Tensor> QConv2dPlan::Run(const Context& context, const Tensor& x) const {
  OCTET_ASSIGN_OR_RETURN(const Shape shape, OutputShape(x.shape()));
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(output_dtype(), shape));
  OCTET_RETURN_IF_ERROR(RunInto(context, x, y));
  return y;
}

Result<Tensor> QConv2d(const Context& context, const QTensor& x, const QTensor& weights, const Conv2dParams& params,
                       const QGemmOutput& output) {
  OCTET_ASSIGN_OR_RETURN(QConv2dPlan plan, QConv2dPlan::Create(context, weights, params, x.qparams(), output));
  return plan.Run(context, x.values());
}

}  // namespace octet
