// Conv (depthwise, pointwise, im2col + GEMM) and ConvTranspose (GEMM + col2im). 1-D convolutions run as 2-D ones
// with height 1.
#include <fmt/ranges.h>

#include "ops/float/conv.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/float_op_table.h"
#include "core/threading.h"
#include "ops/float/conv_nd.h"
#include "ops/float/float_fusion.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"
#include "ops/float/sgemm.h"
#include "ops/float/ukernels/dwconv.h"

namespace octet::float_ops {
namespace {

struct Geometry {
  int64_t n = 0, c = 0, h = 1, w = 0;  // input
  int64_t oc = 0, oh = 1, ow = 0;      // output
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t groups = 1;
  int64_t output_pad_h = 0, output_pad_w = 0;  // ConvTranspose
  SgemmBlockFn sgemm = nullptr;                // chosen at Prepare
  FusedActivation activation;                  // Conv: a Relu/Clip folded in by the float fusion pass
};

// Spatial attributes shared by Conv and ConvTranspose, as 2-D values (1-D gets height 1). `kernel` comes from the
// weight's trailing dims.
struct Spatial {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: [begin..., end...]
  std::string auto_pad;
};

Result<Spatial> ReadSpatial(const AttributeMap& at, std::span<const int64_t> weight_kernel) {
  const size_t nd = weight_kernel.size();
  Spatial s;
  s.kernel.assign(weight_kernel.begin(), weight_kernel.end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_attr, at.GetInts("kernel_shape", s.kernel));
  if (kernel_attr != s.kernel) {
    return InvalidArgument("kernel_shape [{}] does not match the weight's spatial dims [{}]",
                           fmt::join(kernel_attr, ", "), fmt::join(s.kernel, ", "));
  }
  OCTET_ASSIGN_OR_RETURN(s.strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(s.dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(s.pads, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(s.auto_pad, at.GetString("auto_pad", "NOTSET"));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("kernel_shape", s.kernel, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("strides", s.strides, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("dilations", s.dilations, nd));
  return s;
}

// Most output columns of one im2col tile (ChooseSgemmTiling's tile_n never exceeds it).
constexpr int64_t kConvChunk = kSgemmMaxN;

// One im2col row (c, i, j) of one image and group for output columns [q0, q0 + nq) (q = oh * ow_count + ow):
// out[q - q0] = x[c, oh * sh - pad_top + i * dh, ow * sw - pad_left + j * dw], 0 in the padding.
void Im2ColRow(const Geometry& g, const float* x, int64_t row, int64_t q0, int64_t nq, float* out) {
  const int64_t j = row % g.kw;
  const int64_t i = (row / g.kw) % g.kh;
  const int64_t c = row / (g.kw * g.kh);
  const float* xc = x + c * g.h * g.w;
  out -= q0;  // out[q] for q in [q0, q0 + nq)
  const int64_t iw0 = j * g.dw - g.pad_left;
  // ow range with iw = ow * sw + iw0 inside [0, w).
  const int64_t ow_lo = iw0 >= 0 ? 0 : std::min(g.ow, (-iw0 + g.sw - 1) / g.sw);
  const int64_t ow_hi = std::max(ow_lo, std::min(g.ow, (g.w - iw0 + g.sw - 1) / g.sw));
  for (int64_t q = q0; q < q0 + nq;) {
    const int64_t oh = q / g.ow;
    const int64_t ow_begin = q % g.ow;
    const int64_t ow_end = std::min(g.ow, ow_begin + (q0 + nq - q));
    float* o = out + oh * g.ow;
    const int64_t ih = oh * g.sh - g.pad_top + i * g.dh;
    if (ih < 0 || ih >= g.h) {
      std::fill(o + ow_begin, o + ow_end, 0.0f);
    } else {
      const float* xr = xc + ih * g.w;
      const int64_t lo = std::clamp(ow_lo, ow_begin, ow_end), hi = std::clamp(ow_hi, lo, ow_end);
      std::fill(o + ow_begin, o + lo, 0.0f);
      if (g.sw == 1) {
        std::memcpy(o + lo, xr + lo + iw0, static_cast<size_t>(hi - lo) * sizeof(float));
      } else {
        for (int64_t ow = lo; ow < hi; ++ow) o[ow] = xr[ow * g.sw + iw0];
      }
      std::fill(o + hi, o + ow_end, 0.0f);
    }
    q += ow_end - ow_begin;
  }
}

// One stretch of an im2col row that maps to one output row and one B panel: `len` columns starting at output
// (oh, ow), landing at float `dst` of row 0 in the packed layout (row r adds r * nr). oh < 0 marks the zero padding
// past column nq of the last panel. Runs depend only on the chunk, not on the im2col row, so they are found once per
// chunk and every row is then a few straight copies (no per-column index arithmetic, no staging line).
struct Im2ColRun {
  int64_t dst = 0, len = 0, oh = -1, ow = 0;
};

// Most runs a chunk can have: each run but the padding one ends at an output row's end or a panel's end, and there
// are at most nq of each.
constexpr int64_t kMaxIm2ColRuns = 2 * kConvChunk + 1;

int64_t Im2ColRuns(const Geometry& g, int64_t q0, int64_t nq, int64_t nr, int64_t rows, Im2ColRun* runs) {
  int64_t count = 0;
  const int64_t panels = (nq + nr - 1) / nr;
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t begin = p * nr, end = std::min(nq, begin + nr);
    for (int64_t c = begin; c < end;) {
      const int64_t q = q0 + c;
      const int64_t oh = q / g.ow, ow = q % g.ow;
      const int64_t len = std::min(end - c, g.ow - ow);
      runs[count++] = {p * rows * nr + (c - begin), len, oh, ow};
      c += len;
    }
    if (end - begin < nr) runs[count++] = {p * rows * nr + (end - begin), nr - (end - begin), -1, 0};
  }
  return count;
}

// Strided convolutions read im2col rows from a phase-split copy of the input: plane (c, py, px) holds
// x[c, y * sh + py, x * sw + px], each plane hp x wp = ceil(h / sh) x ceil(w / sw). Tap (i, j) then reads one plane
// with unit stride, so an im2col row is a few contiguous copies instead of a strided gather (ResNet's 7x7 stride-2
// stem spent as long gathering as multiplying). Used when every phase is read (kernel >= stride in both dims).
bool UsePhaseSplit(const Geometry& g) { return (g.sh > 1 || g.sw > 1) && g.kh >= g.sh && g.kw >= g.sw; }
int64_t PhaseH(const Geometry& g) { return (g.h + g.sh - 1) / g.sh; }
int64_t PhaseW(const Geometry& g) { return (g.w + g.sw - 1) / g.sw; }
// Rounded up to 16 floats: the im2col panels after it in the scratch are read with aligned 64-byte loads.
int64_t PhaseSplitFloats(const Geometry& g) {
  return (g.c / g.groups * g.sh * g.sw * PhaseH(g) * PhaseW(g) + 15) / 16 * 16;
}

void PhaseSplit(const Context& context, const Geometry& g, const float* x, float* out) {
  const int64_t hp = PhaseH(g), wp = PhaseW(g);
  ParallelFor(context, g.c / g.groups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const float* xc = x + c * g.h * g.w;
      for (int64_t py = 0; py < g.sh; ++py) {
        for (int64_t px = 0; px < g.sw; ++px) {
          float* o = out + ((c * g.sh + py) * g.sw + px) * hp * wp;
          for (int64_t y = 0; y * g.sh + py < g.h; ++y) {
            const float* xr = xc + (y * g.sh + py) * g.w + px;
            for (int64_t v = 0; v * g.sw + px < g.w; ++v) o[y * wp + v] = xr[v * g.sw];
          }
        }
      }
    }
  });
}

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// A piece of one im2col row: `len` floats at `dst` (as Im2ColRun::dst) copied from the channel's input at `src`
// (columns `src + k * cstep`), or zeros when src < 0.
struct Im2ColSegment {
  int64_t dst = 0, src = -1, len = 0;
};

// Appends the segments of tap (i, j)'s im2col row for `runs` (Im2ColRuns of the chunk) to `out`, their sources
// relative to the row's channel (x + c * h * w, or PhaseSplit's planes of channel c when `phased`). Neighbouring
// zero fills are merged.
void Im2ColSegments(const Geometry& g, bool phased, int64_t i, int64_t j, const Im2ColRun* runs, int64_t count,
                    std::vector<Im2ColSegment>& out) {
  // Tap (i, j) reads plane[ih * ld + iw], ih = oh * rstep + roff in [0, hv), iw = ow * cstep + coff in [0, wv).
  int64_t plane = 0;
  int64_t ld = g.w, hv = g.h, wv = g.w, rstep = g.sh, cstep = g.sw;
  int64_t roff = i * g.dh - g.pad_top, coff = j * g.dw - g.pad_left;
  if (phased) {
    const int64_t hp = PhaseH(g), wp = PhaseW(g);
    const int64_t py = roff - FloorDiv(roff, g.sh) * g.sh, px = coff - FloorDiv(coff, g.sw) * g.sw;
    plane = (py * g.sw + px) * hp * wp;
    ld = wp;
    hv = (g.h - py + g.sh - 1) / g.sh;
    wv = (g.w - px + g.sw - 1) / g.sw;
    rstep = 1, cstep = 1;
    roff = FloorDiv(roff, g.sh), coff = FloorDiv(coff, g.sw);
  }
  // ow range with iw inside [0, wv), as in Im2ColRow.
  const int64_t ow_lo = coff >= 0 ? 0 : std::min(g.ow, (-coff + cstep - 1) / cstep);
  const int64_t ow_hi = std::max(ow_lo, std::min(g.ow, (wv - coff + cstep - 1) / cstep));
  auto zeros = [&](int64_t dst, int64_t len) {
    if (len <= 0) return;
    if (!out.empty() && out.back().src < 0 && out.back().dst + out.back().len == dst) {
      out.back().len += len;
    } else {
      out.push_back({dst, -1, len});
    }
  };
  for (int64_t t = 0; t < count; ++t) {
    const Im2ColRun& run = runs[t];
    const int64_t ih = run.oh * rstep + roff;
    if (run.oh < 0 || ih < 0 || ih >= hv) {
      zeros(run.dst, run.len);
      continue;
    }
    const int64_t end = run.ow + run.len;
    const int64_t lo = std::clamp(ow_lo, run.ow, end), hi = std::clamp(ow_hi, lo, end);
    // Output column ow of the run lands at run.dst + (ow - run.ow).
    zeros(run.dst, lo - run.ow);
    if (hi > lo) out.push_back({run.dst + (lo - run.ow), plane + ih * ld + coff + lo * cstep, hi - lo});
    zeros(run.dst + (hi - run.ow), end - hi);
  }
}

// The im2col matrix of output columns [q0, q0 + nq) (nq <= kConvChunk): rows K = (C/group) kh kw. With nr == 0,
// plain row-major [K][nq]; otherwise the sgemm kernel's packed-B layout [ceil(nq / nr)][K][nr], zero-padded.
// `phased`: x is PhaseSplit's output (only with nr > 0 and UsePhaseSplit).
void Im2ColColumns(const Geometry& g, const float* x, bool phased, int64_t q0, int64_t nq, int64_t nr, float* col) {
  const int64_t rows = g.c / g.groups * g.kh * g.kw;
  if (nr == 0) {
    for (int64_t row = 0; row < rows; ++row) Im2ColRow(g, x, row, q0, nq, col + row * nq);
    return;
  }
  Im2ColRun runs[kMaxIm2ColRuns];
  const int64_t count = Im2ColRuns(g, q0, nq, nr, rows, runs);
  const int64_t hp = PhaseH(g), wp = PhaseW(g);
  const int64_t taps = g.kh * g.kw;
  // Channel c's rows read from x + c * channel_stride; a tap's plane inside it is folded into its segments.
  const int64_t channel_stride = phased ? g.sh * g.sw * hp * wp : g.h * g.w;
  const int64_t cstep = phased ? 1 : g.sw;
  // Every channel's row of one tap (i, j) has the same runs, copies and zero fills, offset by channel_stride: they
  // are worked out once per tap here (Im2ColSegments), and each of the C x taps rows then only replays its list.
  // Finding them per row took as long as the copies (ResNet-18's 3x3 layers: 7-32 float runs).
  thread_local std::vector<Im2ColSegment> segments;
  thread_local std::vector<int64_t> tap_begin;
  segments.clear();
  tap_begin.assign(static_cast<size_t>(taps + 1), 0);
  for (int64_t t = 0; t < taps; ++t) {
    tap_begin[static_cast<size_t>(t)] = static_cast<int64_t>(segments.size());
    Im2ColSegments(g, phased, t / g.kw, t % g.kw, runs, count, segments);
  }
  tap_begin[static_cast<size_t>(taps)] = static_cast<int64_t>(segments.size());
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t t = row % taps;
    const float* base = x + (row / taps) * channel_stride;
    float* out = col + row * nr;
    for (int64_t si = tap_begin[static_cast<size_t>(t)]; si < tap_begin[static_cast<size_t>(t) + 1]; ++si) {
      const Im2ColSegment& seg = segments[static_cast<size_t>(si)];
      float* d = out + seg.dst;
      if (seg.src < 0) {
        std::fill(d, d + seg.len, 0.0f);
      } else if (cstep == 1) {
        std::memcpy(d, base + seg.src, static_cast<size_t>(seg.len) * sizeof(float));
      } else {
        const float* xr = base + seg.src;
        for (int64_t k = 0; k < seg.len; ++k) d[k] = xr[k * cstep];
      }
    }
  }
}

void AddBias(const Context& context, const Geometry& g, const float* bias, float* y) {
  const int64_t ohw = g.oh * g.ow;
  ParallelFor(context, g.n * g.oc, std::max<int64_t>(1, 4096 / std::max<int64_t>(ohw, 1)), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const float v = bias[t % g.oc];
      float* p = y + t * ohw;
      for (int64_t q = 0; q < ohw; ++q) p[q] += v;
    }
  });
}

// `packed`: PackSgemmA of each group's weights [OC/group, K], made at Prepare for constant weights, one after the
// other every `group_stride` floats (null: W is only known at Run and the kernel packs it per block).
struct PackedWeights {
  std::vector<float> data;
  int64_t group_stride = 0;
};

// How an im2col convolution is split over threads: the (OC/group) x (OH*OW) product of each image and group is
// tiled by ChooseSgemmTiling, so large layers get 2-D tiles over (output channels, pixels) and small ones fewer
// tiles. With one row tile, each task builds its column tile's im2col and multiplies it at once (the columns are
// still in cache), in a per-thread slot. With several, every column tile's im2col is built first, in parallel, into
// its own slot, and the (row tile, column tile) products then read it: no tile repeats the im2col.
struct ConvPlan {
  SgemmTiling tiling;
  bool shared_columns = false;  // the second scheme above
  int64_t slot_floats = 0;      // one column tile's im2col, in the kernel's layout
  int64_t slots = 0;
};

ConvPlan PlanConv(const Geometry& g, int threads) {
  ConvPlan p;
  const int64_t k = g.c / g.groups * g.kh * g.kw;
  p.tiling = ChooseSgemmTiling(g.sgemm, g.oc / g.groups, g.oh * g.ow, k);
  p.shared_columns = p.tiling.tiles_m > 1;
  // Panel widths are multiples of 16 floats, so every slot starts 64-byte aligned.
  p.slot_floats = k * ((p.tiling.tile_n + 15) / 16 * 16);
  // A slot per thread of the context (ParallelForSlots' slot is the running thread's index, any of them).
  p.slots = p.shared_columns ? p.tiling.tiles_n : (p.tiling.tiles_n > 1 ? std::max(1, threads) : 1);
  return p;
}

// `plan`: PlanConv at Prepare, which sized the scratch.
// A 1x1, stride-1, unpadded convolution's im2col as one output row of oh * ow columns: the same columns in one run
// per panel instead of one per output row.
Geometry FlatPointwise(Geometry g) {
  if (g.kh != 1 || g.kw != 1 || g.sh != 1 || g.sw != 1 || g.pad_top != 0 || g.pad_left != 0 || g.pad_bottom != 0 ||
      g.pad_right != 0) {
    return g;
  }
  g.w *= g.h, g.h = 1;
  g.ow *= g.oh, g.oh = 1;
  return g;
}

// `pointwise`: the input is B as it is (1x1 convolutions read directly); otherwise im2col builds B's panels.
Status RunConvIm2Col(const Geometry& g, const ConvPlan& plan, bool pointwise, const PackedWeights* packed,
                     const OpRunArgs& r) {
  const float* x = r.inputs[0].data<float>();
  const float* w = r.inputs[1].data<float>();
  const float* bias = r.inputs.size() > 2 && r.inputs[2].raw_data() ? r.inputs[2].data<float>() : nullptr;
  float* y = r.outputs[0].data<float>();
  const int64_t cg = g.c / g.groups, ocg = g.oc / g.groups;
  const int64_t k = cg * g.kh * g.kw;
  const int64_t ohw = g.oh * g.ow;
  const SgemmTiling& t = plan.tiling;
  // A context with more threads than the one the scratch was sized for runs the per-thread-slot tiles serially.
  const bool slots_fit = r.context.threads() <= plan.slots || plan.shared_columns;
  if (k == 0) {  // no input channels: every product is empty, each output is its channel's bias
    for (int64_t t = 0; t < g.n * g.oc; ++t) {
      std::fill(y + t * ohw, y + (t + 1) * ohw, bias != nullptr ? 0.0f + bias[t % g.oc] : 0.0f);
      g.activation.Apply(y + t * ohw, ohw);
    }
    return OkStatus();
  }
  float* scratch = reinterpret_cast<float*>(r.scratch.data());
  const Geometry cols_geometry = FlatPointwise(g);
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const float* xg = x + (n * g.c + gi * cg) * g.h * g.w;
      SgemmArgs s;
      s.m = ocg;
      s.k = k;
      s.a = w + gi * ocg * k;
      s.lda = k;
      if (packed != nullptr && !packed->data.empty()) s.packed_a = packed->data.data() + gi * packed->group_stride;
      s.ldc = ohw;
      // The bias goes into the kernel's store, while the tile is in registers (a separate pass re-read every
      // output tile: MobileNetV2's 1x1 layers spent 6% of the model there). The sum is the same: product, then bias.
      s.bias = bias != nullptr ? bias + gi * ocg : nullptr;
      s.activation = g.activation;  // likewise the fused Relu/Clip, after the bias
      float* yg = y + (n * g.oc + gi * ocg) * ohw;
      if (pointwise) {  // the input is already the B matrix
        s.n = ohw;
        s.b = xg;
        s.ldb = ohw;
        s.c = yg;
        // Sgemm's tiles (the same tiling, so the same sums), the bias added in each tile's store.
        ParallelFor(r.context, t.count(), 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const int64_t tn = i / t.tiles_m, tm = i % t.tiles_m;
            const SgemmRowTile rows = SgemmTileRows(t, tm);
            const int64_t q0 = tn * t.tile_n, q1 = std::min(ohw, q0 + t.tile_n);
            SgemmTile(g.sgemm, s, rows, q0, q1);
          }
        });
        continue;
      }
      // Kernels that take packed B get the tile in their panel layout, written once by im2col.
      const int64_t nr = SgemmPanelCols(g.sgemm);
      const bool phased = nr > 0 && UsePhaseSplit(g);
      const float* src = xg;
      if (phased) {
        PhaseSplit(r.context, g, xg, scratch);
        src = scratch;
      }
      float* cols = scratch + (phased ? PhaseSplitFloats(g) : 0);
      auto columns = [&](int64_t tn, float* col) {
        const int64_t q0 = tn * t.tile_n;
        Im2ColColumns(cols_geometry, src, phased, q0, std::min(t.tile_n, ohw - q0), nr, col);
      };
      // Rows tile x column tile tn of the product from its im2col `col`, with the bias (s.bias).
      auto multiply = [&](const SgemmRowTile& rows, int64_t tn, const float* col) {
        const int64_t q0 = tn * t.tile_n, nq = std::min(t.tile_n, ohw - q0);
        SgemmArgs chunk = s;
        chunk.n = nq;
        chunk.b = col;
        chunk.ldb = nq;
        if (nr > 0) chunk.packed_b = col;
        chunk.c = yg + q0;
        SgemmTile(g.sgemm, chunk, rows, 0, nq);
      };
      if (!plan.shared_columns) {
        const SgemmRowTile all_rows = SgemmTileRows(t, 0);
        auto run = [&](int64_t begin, int64_t end, int slot) {
          float* col = cols + slot * plan.slot_floats;
          for (int64_t tn = begin; tn < end; ++tn) {
            columns(tn, col);
            multiply(all_rows, tn, col);
          }
        };
        if (slots_fit) {
          ParallelForSlots(r.context, t.tiles_n, 1, run);
        } else {
          run(0, t.tiles_n, 0);
        }
        continue;
      }
      ParallelFor(r.context, t.tiles_n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t tn = begin; tn < end; ++tn) columns(tn, cols + tn * plan.slot_floats);
      });
      // Column tile outer: consecutive tiles share one column tile's im2col while it is in cache (row tile outer
      // streamed the whole im2col from memory once per row tile: ResNet-18's layer2 3x3 ran 38% slower at 1 thread).
      ParallelFor(r.context, t.count(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t tn = i / t.tiles_m, tm = i % t.tiles_m;
          multiply(SgemmTileRows(t, tm), tn, cols + tn * plan.slot_floats);
        }
      });
    }
  }
  return OkStatus();
}

// One plane per (image, channel), each through the depthwise kernel chosen at Prepare.
Status RunConvDepthwise(const Geometry& g, DwconvPlaneFn plane, const OpRunArgs& r) {
  const float* x = r.inputs[0].data<float>();
  const float* wt = r.inputs[1].data<float>();
  const float* bias = r.inputs.size() > 2 && r.inputs[2].raw_data() ? r.inputs[2].data<float>() : nullptr;
  float* y = r.outputs[0].data<float>();
  ParallelFor(r.context, g.n * g.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t c = t % g.c;
      DwconvPlaneArgs a;
      a.x = x + t * g.h * g.w;
      a.h = g.h, a.w = g.w;
      a.weights = wt + c * g.kh * g.kw;
      a.kh = g.kh, a.kw = g.kw, a.sh = g.sh, a.sw = g.sw, a.dh = g.dh, a.dw = g.dw;
      a.pad_top = g.pad_top, a.pad_left = g.pad_left;
      a.bias = bias ? bias[c] : 0.0f;
      a.y = y + t * g.oh * g.ow;
      a.oh = g.oh, a.ow = g.ow;
      a.activation = g.activation;
      plane(a);
    }
  });
  return OkStatus();
}

// Shared validation of X [N, C, (H,) W] and W for both ops. For Conv, W is [OC, C/group, k...]; for ConvTranspose,
// [C, OC/group, k...].
Status CheckConvInputs(const OpPrepareArgs& args, bool transpose) {
  if (args.inputs.size() < 2 || !args.inputs[1].present) {
    return InvalidArgument("input W (the weight) is missing: {} takes X, W and an optional B",
                           FloatOpName(transpose ? FloatOp::kConvTranspose : FloatOp::kConv));
  }
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 3));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 1, DType::kF32));
  const Shape& x = args.inputs[0].shape;
  const Shape& w = args.inputs[1].shape;
  if (x.rank() == 5 || w.rank() == 5) {
    return Unimplemented("3-D {} is not supported", FloatOpName(transpose ? FloatOp::kConvTranspose : FloatOp::kConv));
  }
  if (x.rank() != 3 && x.rank() != 4) return InvalidArgument("X must be [N, C, W] or [N, C, H, W], got {}", x);
  if (w.rank() != x.rank()) return InvalidArgument("W {} must have the rank of X {}", w, x);
  if (Present(args, 2)) {
    OCTET_RETURN_IF_ERROR(CheckInput(args, 2, DType::kF32));
    const Shape& b = args.inputs[2].shape;
    const int64_t oc = transpose ? -1 : w.dim(0);
    if (b.rank() != 1 || (oc >= 0 && b.dim(0) != oc)) {
      return InvalidArgument("B must be [{}], got {}", oc >= 0 ? std::to_string(oc) : "M", b);
    }
  }
  return OkStatus();
}

void SetSpatial(Geometry& g, const Shape& x, const Spatial& s, std::span<const int64_t> pads) {
  const bool one_d = x.rank() == 3;
  g.n = x.dim(0);
  g.c = x.dim(1);
  if (one_d) {
    g.h = 1;
    g.w = x.dim(2);
    g.kh = 1, g.kw = s.kernel[0], g.sh = 1, g.sw = s.strides[0], g.dh = 1, g.dw = s.dilations[0];
    g.pad_top = 0, g.pad_bottom = 0, g.pad_left = pads[0], g.pad_right = pads[1];
  } else {
    g.h = x.dim(2);
    g.w = x.dim(3);
    g.kh = s.kernel[0], g.kw = s.kernel[1], g.sh = s.strides[0], g.sw = s.strides[1];
    g.dh = s.dilations[0], g.dw = s.dilations[1];
    g.pad_top = pads[0], g.pad_left = pads[1], g.pad_bottom = pads[2], g.pad_right = pads[3];
  }
}

Result<PreparedOp> PrepareConv(const OpPrepareArgs& args) {
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(const FusedActivation activation, ReadFusedActivation(at));
  // 3-D convolution takes the direct N-D path (the fusion pass leaves its activations alone).
  if (!args.inputs.empty() && args.inputs[0].shape.rank() == 5) {
    if (activation.active()) return Unimplemented("a fused activation on a 3-D Conv is not supported");
    return PrepareConvNd(args);
  }
  OCTET_RETURN_IF_ERROR(CheckConvInputs(args, false));
  const Shape& x = args.inputs[0].shape;
  const Shape& w = args.inputs[1].shape;
  OCTET_ASSIGN_OR_RETURN(int64_t group, at.GetInt("group", 1));
  if (group <= 0 || x.dim(1) % group != 0 || w.dim(0) % group != 0) {
    return InvalidArgument("group {} must be positive and divide the input channels {} and output channels {}", group,
                           x.dim(1), w.dim(0));
  }
  if (w.dim(1) * group != x.dim(1)) {
    return InvalidArgument("W {} expects {} input channels (group {}), X {} has {}", w, w.dim(1) * group, group, x,
                           x.dim(1));
  }
  const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  OCTET_ASSIGN_OR_RETURN(Spatial s, ReadSpatial(at, kernel));
  const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ResolvePads(s.auto_pad, s.pads, in, s.kernel, s.strides, s.dilations));
  Geometry g;
  SetSpatial(g, x, s, pads);
  g.groups = group;
  g.oc = w.dim(0);
  g.activation = activation;
  OCTET_ASSIGN_OR_RETURN(g.oh, WindowOutputSize(g.h, g.kh, g.sh, g.pad_top, g.pad_bottom, g.dh, false));
  OCTET_ASSIGN_OR_RETURN(g.ow, WindowOutputSize(g.w, g.kw, g.sw, g.pad_left, g.pad_right, g.dw, false));
  std::vector<int64_t> out_dims = {g.n, g.oc};
  if (x.rank() == 4) out_dims.push_back(g.oh);
  out_dims.push_back(g.ow);
  OCTET_ASSIGN_OR_RETURN(int64_t out_count, CheckedProduct(out_dims));
  (void)out_count;

  const bool depthwise = group == g.c && g.oc == g.c;
  const bool pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pad_top == 0 && g.pad_left == 0 &&
                         g.pad_bottom == 0 && g.pad_right == 0;
  if (depthwise) {
    const auto& dw = SelectUkernel(args.context, DwconvUkernels());
    const DwconvPlaneFn plane = dw.fn;
    return MakePrepared({{DType::kF32, Shape(out_dims)}},
                        MakeKernel([g, plane](const OpRunArgs& r) { return RunConvDepthwise(g, plane, r); }),
                        fmt::format("conv_f32_depthwise+{}{}", dw.name, ActivationSuffix(activation)));
  }
  const int64_t k = g.c / group * g.kh * g.kw;
  const auto& sgemm = SelectSgemm(args.context);
  g.sgemm = sgemm.fn;
  const ConvPlan plan = PlanConv(g, args.context.threads());
  OCTET_ASSIGN_OR_RETURN(int64_t col_elems, CheckedProduct(std::vector<int64_t>{plan.slot_floats, plan.slots}));
  if (SgemmPanelCols(g.sgemm) > 0 && UsePhaseSplit(g)) {
    col_elems += PhaseSplitFloats(g);  // at most stride^2 * (input + stride) floats: X's size is already checked
  }
  // A 1x1 convolution whose product has several row tiles runs through the im2col path, which writes the input
  // into the kernel's B panels once per column tile for all row tiles: read directly, each row tile's kernel call
  // packed the same B again (MobileNetV2's expand and project layers: B packing was 6% of the model).
  const bool direct = pointwise && !(plan.shared_columns && SgemmPanelCols(g.sgemm) > 0);
  const size_t scratch = direct ? 0 : static_cast<size_t>(col_elems) * sizeof(float);
  // Constant weights are packed once, here, in the kernel's panel layout (weight prepacking).
  std::shared_ptr<PackedWeights> packed;
  if (args.inputs[1].constant != nullptr) {
    packed = std::make_shared<PackedWeights>();
    const float* wdata = args.inputs[1].constant->data<float>();
    const int64_t ocg = g.oc / group;
    for (int64_t gi = 0; gi < group; ++gi) {
      std::vector<float> p = PackSgemmA(g.sgemm, ocg, k, false, wdata + gi * ocg * k, k);
      packed->group_stride = static_cast<int64_t>(p.size());
      packed->data.insert(packed->data.end(), p.begin(), p.end());
    }
  }
  auto run = MakeKernel(
      [g, plan, direct, packed](const OpRunArgs& r) { return RunConvIm2Col(g, plan, direct, packed.get(), r); });
  const char* path = direct ? "pointwise" : (pointwise ? "pointwise_packed" : "im2col");
  return MakePrepared({{DType::kF32, Shape(out_dims)}}, std::move(run),
                      fmt::format("conv_f32_{}+{}{}", path, sgemm.name, ActivationSuffix(activation)), scratch);
}

// ConvTranspose: col = W_g^T X_g per image and group, then col2im scatter-adds col into Y.
Status RunConvTranspose(const Geometry& g, const OpRunArgs& r) {
  const float* x = r.inputs[0].data<float>();
  const float* wt = r.inputs[1].data<float>();
  const float* bias = r.inputs.size() > 2 && r.inputs[2].raw_data() ? r.inputs[2].data<float>() : nullptr;
  float* y = r.outputs[0].data<float>();
  const int64_t cg = g.c / g.groups, ocg = g.oc / g.groups;
  const int64_t kk = g.kh * g.kw;
  const int64_t hw = g.h * g.w;
  const int64_t ohw = g.oh * g.ow;
  float* col = reinterpret_cast<float*>(r.scratch.data());
  std::fill(y, y + g.n * g.oc * ohw, 0.0f);
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      SgemmArgs s;
      s.m = ocg * kk;
      s.n = hw;
      s.k = cg;
      s.trans_a = true;
      s.a = wt + gi * cg * ocg * kk;
      s.lda = ocg * kk;
      s.b = x + (n * g.c + gi * cg) * hw;
      s.ldb = hw;
      s.c = col;
      s.ldc = hw;
      Sgemm(r.context, g.sgemm, s);
      float* yg = y + (n * g.oc + gi * ocg) * ohw;
      ParallelFor(r.context, ocg, 1, [&](int64_t begin, int64_t end) {
        for (int64_t oc = begin; oc < end; ++oc) {
          float* yc = yg + oc * ohw;
          for (int64_t i = 0; i < g.kh; ++i) {
            for (int64_t j = 0; j < g.kw; ++j) {
              const float* cr = col + ((oc * g.kh + i) * g.kw + j) * hw;
              for (int64_t ih = 0; ih < g.h; ++ih) {
                const int64_t oh = ih * g.sh - g.pad_top + i * g.dh;
                if (oh < 0 || oh >= g.oh) continue;
                for (int64_t iw = 0; iw < g.w; ++iw) {
                  const int64_t ow = iw * g.sw - g.pad_left + j * g.dw;
                  if (ow >= 0 && ow < g.ow) yc[oh * g.ow + ow] += cr[ih * g.w + iw];
                }
              }
            }
          }
        }
      });
    }
  }
  if (bias) AddBias(r.context, g, bias, y);
  return OkStatus();
}

Result<PreparedOp> PrepareConvTranspose(const OpPrepareArgs& args) {
  // 3-D takes the direct N-D path.
  if (!args.inputs.empty() && args.inputs[0].shape.rank() == 5) return PrepareConvTransposeNd(args);
  OCTET_RETURN_IF_ERROR(CheckConvInputs(args, true));
  const Shape& x = args.inputs[0].shape;
  const Shape& w = args.inputs[1].shape;
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(int64_t group, at.GetInt("group", 1));
  if (group <= 0 || x.dim(1) % group != 0 || w.dim(0) != x.dim(1)) {
    return InvalidArgument("W {} must be [C, M/group, k...] for X {} with group {}", w, x, group);
  }
  const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  OCTET_ASSIGN_OR_RETURN(Spatial s, ReadSpatial(at, kernel));
  const size_t nd = kernel.size();
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding,
                         at.GetInts("output_padding", std::vector<int64_t>(nd, 0)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape, at.GetInts("output_shape", {}));
  if (output_padding.size() != nd) return InvalidArgument("output_padding must have {} values", nd);
  for (size_t i = 0; i < nd; ++i) {
    if (output_padding[i] < 0 || output_padding[i] >= std::max(s.strides[i], s.dilations[i])) {
      return InvalidArgument("output_padding must be in [0, max(stride, dilation)), got {}", output_padding[i]);
    }
  }
  const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConvTransposePads(s.auto_pad, s.pads, output_shape, in, s.kernel,
                                                                      s.strides, s.dilations, output_padding));
  Geometry g;
  SetSpatial(g, x, s, pads);
  g.groups = group;
  g.oc = w.dim(1) * group;
  if (Present(args, 2) && args.inputs[2].shape.dim(0) != g.oc) {
    return InvalidArgument("B must be [{}], got {}", g.oc, args.inputs[2].shape);
  }
  const int64_t op_h = x.rank() == 4 ? output_padding[0] : 0;
  const int64_t op_w = output_padding[nd - 1];
  // Every factor below 2^20 keeps each product and sum far inside int64.
  constexpr int64_t kLimit = int64_t{1} << 20;
  for (int64_t v : {g.h, g.w, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pad_top, g.pad_bottom, g.pad_left, g.pad_right}) {
    if (v > kLimit || v < -kLimit) {
      return OutOfRange("ConvTranspose sizes, strides, dilations and pads beyond 2^20 are not supported");
    }
  }
  g.oh = g.sh * (g.h - 1) + op_h + (g.kh - 1) * g.dh + 1 - g.pad_top - g.pad_bottom;
  g.ow = g.sw * (g.w - 1) + op_w + (g.kw - 1) * g.dw + 1 - g.pad_left - g.pad_right;
  if (g.oh < 1 || g.ow < 1) return InvalidArgument("the output would be empty (pads too large)");
  std::vector<int64_t> out_dims = {g.n, g.oc};
  if (x.rank() == 4) out_dims.push_back(g.oh);
  out_dims.push_back(g.ow);
  OCTET_ASSIGN_OR_RETURN(int64_t out_count, CheckedProduct(out_dims));
  (void)out_count;
  OCTET_ASSIGN_OR_RETURN(int64_t col_elems,
                         CheckedProduct(std::vector<int64_t>{w.dim(1), g.kh, g.kw, g.h, g.w}));
  const auto& sgemm = SelectSgemm(args.context);
  g.sgemm = sgemm.fn;
  return MakePrepared({{DType::kF32, Shape(out_dims)}},
                      MakeKernel([g](const OpRunArgs& r) { return RunConvTranspose(g, r); }),
                      fmt::format("conv_transpose_f32_col2im+{}", sgemm.name),
                      static_cast<size_t>(col_elems) * sizeof(float));
}

}  // namespace

Status RegisterConvOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kConv, PrepareConv));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kConvTranspose, PrepareConvTranspose));
  return OkStatus();
}

}  // namespace octet::float_ops
