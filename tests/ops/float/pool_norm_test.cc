// Pooling, BatchNormalization, LayerNormalization, Softmax and the reductions against plain loops.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <tuple>

#include "core/float_op_table.h"
#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::Const;
using testing::In;

// PyTorch's pooling windows: the last window starts inside the input or the begin padding (ceil mode); average
// divides by the window clipped to input+pads (count_include_pad) or to the input.
std::vector<float> ReferencePool(const Tensor& x, bool is_max, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                                 int64_t pt, int64_t pl, int64_t pb, int64_t pr, bool ceil, bool include_pad,
                                 int64_t& oh, int64_t& ow) {
  const int64_t n = x.shape().dim(0), c = x.shape().dim(1), h = x.shape().dim(2), w = x.shape().dim(3);
  auto out = [&](int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1) {
    const int64_t num = in + p0 + p1 - k;
    int64_t o = (ceil ? (num + s - 1) / s : num / s) + 1;
    if (ceil && (o - 1) * s >= in + p0) --o;
    return o;
  };
  oh = out(h, kh, sh, pt, pb);
  ow = out(w, kw, sw, pl, pr);
  std::vector<float> y;
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t h0 = i * sh - pt, w0 = j * sw - pl;
        float m = -std::numeric_limits<float>::infinity();
        double sum = 0.0;
        int64_t count = 0;
        for (int64_t u = h0; u < h0 + kh; ++u)
          for (int64_t v = w0; v < w0 + kw; ++v) {
            if (u < 0 || u >= h || v < 0 || v >= w) continue;
            const float e = x.data<float>()[(p * h + u) * w + v];
            m = std::max(m, e);
            sum += e;
            ++count;
          }
        if (include_pad) {
          count = (std::min(h0 + kh, h + pb) - h0) * (std::min(w0 + kw, w + pr) - w0);
        }
        y.push_back(is_max ? m : static_cast<float>(sum / static_cast<double>(count)));
      }
  return y;
}

TEST_CASE("MaxPool and AveragePool match the reference, with ceil_mode and count_include_pad", "[float_ops]") {
  auto rng = testing::MakeRng("pool");
  for (int iter = 0; iter < 48; ++iter) {
    const bool is_max = iter % 2 == 0;
    const int64_t kh = testing::RandomDim(rng, 1, 3), kw = testing::RandomDim(rng, 1, 3);
    const int64_t sh = testing::RandomDim(rng, 1, 3), sw = testing::RandomDim(rng, 1, 3);
    const int64_t pt = testing::RandomDim(rng, 0, kh / 2), pl = testing::RandomDim(rng, 0, kw / 2);
    const int64_t pb = testing::RandomDim(rng, 0, kh / 2), pr = testing::RandomDim(rng, 0, kw / 2);
    const bool ceil = rng() % 2 == 0, include = rng() % 2 == 0;
    Tensor x = testing::RandomTensor(rng, Shape{2, 3, testing::RandomDim(rng, kh, 9), testing::RandomDim(rng, kw, 9)});
    int64_t oh = 0, ow = 0;
    const std::vector<float> want = ReferencePool(x, is_max, kh, kw, sh, sw, pt, pl, pb, pr, ceil, include, oh, ow);
    AttributeMap attrs{{"kernel_shape", std::vector<int64_t>{kh, kw}},
                       {"strides", std::vector<int64_t>{sh, sw}},
                       {"pads", std::vector<int64_t>{pt, pl, pb, pr}},
                       {"ceil_mode", ceil ? 1 : 0}};
    if (!is_max) attrs.Set("count_include_pad", include ? 1 : 0);
    auto y = testing::RunFloatOp(is_max ? "MaxPool" : "AveragePool", {In(x)}, attrs, 1, 1 + iter % 2);
    INFO((is_max ? "MaxPool" : "AveragePool") << " k=" << kh << "x" << kw << " s=" << sh << "," << sw << " pads="
                                              << pt << pl << pb << pr << " ceil=" << ceil << " incl=" << include
                                              << " x=" << x.shape().ToString());
    REQUIRE(y.ok());
    REQUIRE((*y)[0].shape() == Shape{2, 3, oh, ow});
    testing::ExpectClose((*y)[0], want, 1e-6f, 1e-5f);
  }
  // 2-D MaxPool with dilations, odd sizes and ResNet's 3x3 stride-2 pad-1 window, against the same reference on the
  // dilated taps (the kernel is separable: rows first, then columns).
  for (int iter = 0; iter < 24; ++iter) {
    const int64_t kh = testing::RandomDim(rng, 1, 3), kw = testing::RandomDim(rng, 1, 3);
    const int64_t dh = testing::RandomDim(rng, 1, 2), dw = testing::RandomDim(rng, 1, 2);
    const int64_t sh = testing::RandomDim(rng, 1, 2), sw = testing::RandomDim(rng, 1, 2);
    const int64_t pt = testing::RandomDim(rng, 0, kh - 1), pl = testing::RandomDim(rng, 0, kw - 1);
    Tensor x2 = testing::RandomTensor(rng, Shape{1, 2, testing::RandomDim(rng, (kh - 1) * dh + 1, 23),
                                                 testing::RandomDim(rng, (kw - 1) * dw + 1, 23)});
    const int64_t h = x2.shape().dim(2), w = x2.shape().dim(3);
    const int64_t oh = (h + 2 * pt - (kh - 1) * dh - 1) / sh + 1, ow = (w + 2 * pl - (kw - 1) * dw - 1) / sw + 1;
    std::vector<float> want;
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t u = 0; u < kh; ++u)
            for (int64_t v = 0; v < kw; ++v) {
              const int64_t r = i * sh - pt + u * dh, c = j * sw - pl + v * dw;
              if (r >= 0 && r < h && c >= 0 && c < w) m = std::max(m, x2.data<float>()[(p * h + r) * w + c]);
            }
          want.push_back(m);
        }
    auto y2 = testing::RunFloatOp("MaxPool", {In(x2)},
                                  {{"kernel_shape", std::vector<int64_t>{kh, kw}},
                                   {"strides", std::vector<int64_t>{sh, sw}},
                                   {"dilations", std::vector<int64_t>{dh, dw}},
                                   {"pads", std::vector<int64_t>{pt, pl, pt, pl}}});
    INFO("k=" << kh << "x" << kw << " d=" << dh << "," << dw << " s=" << sh << "," << sw << " x=" << h << "x" << w);
    REQUIRE(y2.ok());
    REQUIRE((*y2)[0].shape() == Shape{1, 2, oh, ow});
    testing::ExpectClose((*y2)[0], want, 0, 0);
  }
  // A NaN in a 2-D window reaches exactly the outputs whose windows hold it (3x3 stride 2 pad 1 over 5x5: the NaN at
  // (2, 3) is in output row 1 (input rows 1-3) and output columns 1-2 (input columns 1-3 and 3-5)).
  {
    std::vector<float> v(25);
    for (int i = 0; i < 25; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 7);
    v[2 * 5 + 3] = std::nanf("");
    auto y2 = testing::RunFloatOp("MaxPool", {In(testing::FloatTensor(Shape{1, 1, 5, 5}, v))},
                                  {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                   {"strides", std::vector<int64_t>{2, 2}},
                                   {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    REQUIRE(y2.ok());
    const float* o = (*y2)[0].data<float>();
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        INFO("output " << i << "," << j);
        CHECK(std::isnan(o[i * 3 + j]) == (i == 1 && j >= 1));
      }
  }
  // Dilated MaxPool, 1-D.
  Tensor x = testing::FloatTensor(Shape{1, 1, 7}, {1, 9, 2, 8, 3, 7, 4});
  auto y = testing::RunFloatOp("MaxPool", {In(x)},
                               {{"kernel_shape", std::vector<int64_t>{2}}, {"dilations", std::vector<int64_t>{2}}});
  REQUIRE(y.ok());
  testing::ExpectClose((*y)[0], {2, 9, 3, 8, 4}, 0, 0);
  // A NaN in a window gives NaN there, as in PyTorch; windows without one are unaffected.
  Tensor with_nan = testing::FloatTensor(Shape{1, 1, 5}, {1, std::nanf(""), 2, 8, 3});
  auto nan_y = testing::RunFloatOp("MaxPool", {In(with_nan)}, {{"kernel_shape", std::vector<int64_t>{2}}});
  REQUIRE(nan_y.ok());
  CHECK(std::isnan((*nan_y)[0].data<float>()[0]));
  CHECK(std::isnan((*nan_y)[0].data<float>()[1]));
  CHECK((*nan_y)[0].data<float>()[2] == 8.0f);
  CHECK((*nan_y)[0].data<float>()[3] == 8.0f);
  // Indices: each window's maximum as a flat index into X (the N-D path, ops/float/pool_nd.cc).
  auto indices = testing::RunFloatOp("MaxPool", {In(x)}, {{"kernel_shape", std::vector<int64_t>{2}}}, 2);
  REQUIRE(indices.ok());
  testing::ExpectClose((*indices)[0], {9, 9, 8, 8, 7, 7}, 0, 0);
  const int32_t* idx = (*indices)[1].data<int32_t>();
  CHECK(std::vector<int32_t>(idx, idx + 6) == std::vector<int32_t>{1, 1, 3, 3, 5, 5});
  auto missing = testing::RunFloatOp("AveragePool", {In(x)});
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("kernel_shape"));
}

TEST_CASE("GlobalAveragePool and GlobalMaxPool", "[float_ops]") {
  auto rng = testing::MakeRng("global-pool");
  Tensor x = testing::RandomTensor(rng, Shape{2, 5, 4, 3});
  auto avg = testing::RunFloatOp("GlobalAveragePool", {In(x)});
  auto mx = testing::RunFloatOp("GlobalMaxPool", {In(x)});
  REQUIRE(avg.ok());
  REQUIRE(mx.ok());
  CHECK((*avg)[0].shape() == Shape{2, 5, 1, 1});
  std::vector<float> want_avg, want_max;
  for (int64_t p = 0; p < 10; ++p) {
    double s = 0;
    float m = -INFINITY;
    for (int64_t i = 0; i < 12; ++i) {
      s += x.data<float>()[p * 12 + i];
      m = std::max(m, x.data<float>()[p * 12 + i]);
    }
    want_avg.push_back(static_cast<float>(s / 12));
    want_max.push_back(m);
  }
  testing::ExpectClose((*avg)[0], want_avg, 1e-6f, 1e-5f);
  testing::ExpectClose((*mx)[0], want_max, 0, 0);
}

TEST_CASE("BatchNormalization in inference mode, constant or runtime statistics", "[float_ops]") {
  auto rng = testing::MakeRng("batchnorm");
  for (bool constant : {true, false}) {
    Tensor x = testing::RandomTensor(rng, Shape{2, 4, 3, 5}, -3, 3);
    Tensor scale = testing::RandomTensor(rng, Shape{4});
    Tensor bias = testing::RandomTensor(rng, Shape{4});
    Tensor mean = testing::RandomTensor(rng, Shape{4});
    Tensor var = testing::RandomTensor(rng, Shape{4}, 0.1f, 2.0f);
    auto wrap = [&](Tensor t) { return constant ? Const(t) : In(t); };
    auto y = testing::RunFloatOp("BatchNormalization",
                                 {In(x), wrap(scale), wrap(bias), wrap(mean), wrap(var)}, {{"epsilon", 1e-3f}});
    REQUIRE(y.ok());
    std::vector<float> want;
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const int64_t c = (i / 15) % 4;
      want.push_back(static_cast<float>((x.data<float>()[i] - mean.data<float>()[c]) /
                                            std::sqrt(double{var.data<float>()[c]} + 1e-3) * scale.data<float>()[c] +
                                        bias.data<float>()[c]));
    }
    testing::ExpectClose((*y)[0], want, 1e-5f, 1e-5f);
  }
  // training_mode 1: the batch's own statistics, and the running ones updated by momentum.
  Tensor tx = testing::RandomTensor(rng, Shape{3, 2, 4}, -3, 3);
  Tensor ts = testing::RandomTensor(rng, Shape{2}), tb = testing::RandomTensor(rng, Shape{2});
  Tensor tm = testing::RandomTensor(rng, Shape{2}), tv = testing::RandomTensor(rng, Shape{2}, 1, 2);
  auto training = testing::RunFloatOp("BatchNormalization", {In(tx), Const(ts), Const(tb), Const(tm), Const(tv)},
                                      {{"training_mode", 1}, {"momentum", 0.75f}}, 3);
  REQUIRE(training.ok());
  std::vector<float> want_y(24), want_mean(2), want_var(2);
  for (int64_t c = 0; c < 2; ++c) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < 3; ++n) {
      for (int64_t i = 0; i < 4; ++i) sum += tx.data<float>()[(n * 2 + c) * 4 + i];
    }
    const double mean = sum / 12;
    for (int64_t n = 0; n < 3; ++n) {
      for (int64_t i = 0; i < 4; ++i) sq += std::pow(tx.data<float>()[(n * 2 + c) * 4 + i] - mean, 2);
    }
    const double var = sq / 12;
    for (int64_t n = 0; n < 3; ++n) {
      for (int64_t i = 0; i < 4; ++i) {
        const int64_t e = (n * 2 + c) * 4 + i;
        want_y[static_cast<size_t>(e)] = static_cast<float>((tx.data<float>()[e] - mean) / std::sqrt(var + 1e-5) *
                                                                ts.data<float>()[c] +
                                                            tb.data<float>()[c]);
      }
    }
    want_mean[static_cast<size_t>(c)] = static_cast<float>(tm.data<float>()[c] * 0.75 + mean * 0.25);
    want_var[static_cast<size_t>(c)] = static_cast<float>(tv.data<float>()[c] * 0.75 + var * 0.25);
  }
  testing::ExpectClose((*training)[0], want_y, 1e-5f, 1e-5f);
  testing::ExpectClose((*training)[1], want_mean, 1e-6f, 1e-6f);
  testing::ExpectClose((*training)[2], want_var, 1e-6f, 1e-6f);
}

TEST_CASE("LayerNormalization over the trailing dims, with Mean and InvStdDev outputs", "[float_ops]") {
  auto rng = testing::MakeRng("layernorm");
  for (int64_t axis : {-1, 1, 2}) {
    Tensor x = testing::RandomTensor(rng, Shape{2, 3, 8}, -2, 4);
    const int a = axis < 0 ? 2 : static_cast<int>(axis);
    const Shape block(std::vector<int64_t>(x.shape().dims().begin() + a, x.shape().dims().end()));
    Tensor scale = testing::RandomTensor(rng, block);
    Tensor bias = testing::RandomTensor(rng, block);
    auto y = testing::RunFloatOp("LayerNormalization", {In(x), Const(scale), Const(bias)},
                                 {{"axis", axis}, {"epsilon", 1e-5f}}, 3);
    REQUIRE(y.ok());
    const int64_t inner = block.NumElements(), outer = x.NumElements() / inner;
    std::vector<float> want, want_mean, want_inv;
    for (int64_t o = 0; o < outer; ++o) {
      double m = 0, v = 0;
      for (int64_t i = 0; i < inner; ++i) m += x.data<float>()[o * inner + i];
      m /= static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i) v += std::pow(x.data<float>()[o * inner + i] - m, 2);
      v /= static_cast<double>(inner);
      const double inv = 1 / std::sqrt(v + 1e-5);
      for (int64_t i = 0; i < inner; ++i) {
        want.push_back(static_cast<float>((x.data<float>()[o * inner + i] - m) * inv * scale.data<float>()[i] +
                                          bias.data<float>()[i]));
      }
      want_mean.push_back(static_cast<float>(m));
      want_inv.push_back(static_cast<float>(inv));
    }
    testing::ExpectClose((*y)[0], want, 1e-5f, 1e-5f);
    testing::ExpectClose((*y)[1], want_mean, 1e-6f, 1e-5f);
    testing::ExpectClose((*y)[2], want_inv, 1e-6f, 1e-5f);
  }
  auto bad = testing::RunFloatOp("LayerNormalization",
                                 {In(testing::RandomTensor(rng, Shape{2, 8})), Const(testing::RandomTensor(rng, Shape{7}))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("Scale"));
}

TEST_CASE("Softmax and LogSoftmax along any axis", "[float_ops]") {
  auto rng = testing::MakeRng("softmax");
  Tensor x = testing::RandomTensor(rng, Shape{3, 4, 5}, -20, 20);
  for (int64_t axis : {-1, 0, 1}) {
    for (bool log : {false, true}) {
      auto y = testing::RunFloatOp(log ? "LogSoftmax" : "Softmax", {In(x)}, {{"axis", axis}});
      REQUIRE(y.ok());
      const int a = axis < 0 ? 2 : static_cast<int>(axis);
      const int64_t len = x.shape().dim(a), inner = x.shape().Product(a + 1, 3);
      std::vector<float> want(static_cast<size_t>(x.NumElements()));
      for (int64_t i = 0; i < x.NumElements(); ++i) {
        const int64_t o = i / (len * inner), r = i % inner;
        double sum = 0, m = -1e30;
        for (int64_t k = 0; k < len; ++k) m = std::max<double>(m, x.data<float>()[(o * len + k) * inner + r]);
        for (int64_t k = 0; k < len; ++k) sum += std::exp(x.data<float>()[(o * len + k) * inner + r] - m);
        const double v = x.data<float>()[i] - m;
        want[static_cast<size_t>(i)] = static_cast<float>(log ? v - std::log(sum) : std::exp(v) / sum);
      }
      testing::ExpectClose((*y)[0], want, 1e-6f, 1e-5f);
    }
  }
  REQUIRE_FALSE(testing::RunFloatOp("Softmax", {In(x)}, {{"axis", 3}}).ok());
}

TEST_CASE("ReduceMean, ReduceSum, ReduceMax with keepdims", "[float_ops]") {
  auto rng = testing::MakeRng("reduce");
  Tensor x = testing::RandomTensor(rng, Shape{2, 3, 4});
  auto value = [&](int64_t i, int64_t j, int64_t k) { return double{x.data<float>()[(i * 3 + j) * 4 + k]}; };
  // Mean over axes {0, 2}, keepdims.
  auto mean = testing::RunFloatOp("ReduceMean", {In(x)}, {{"axes", std::vector<int64_t>{0, -1}}});
  REQUIRE(mean.ok());
  CHECK((*mean)[0].shape() == Shape{1, 3, 1});
  std::vector<float> want;
  for (int64_t j = 0; j < 3; ++j) {
    double s = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k) s += value(i, j, k);
    want.push_back(static_cast<float>(s / 8));
  }
  testing::ExpectClose((*mean)[0], want, 1e-6f, 1e-6f);
  // Sum over axis 1 from a constant axes input, no keepdims.
  auto sum = testing::RunFloatOp("ReduceSum", {In(x), Const(testing::IntTensor(Shape{1}, {1}))}, {{"keepdims", 0}});
  REQUIRE(sum.ok());
  CHECK((*sum)[0].shape() == Shape{2, 4});
  want.clear();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 4; ++k) want.push_back(static_cast<float>(value(i, 0, k) + value(i, 1, k) + value(i, 2, k)));
  testing::ExpectClose((*sum)[0], want, 1e-6f, 1e-6f);
  // Max over everything.
  auto mx = testing::RunFloatOp("ReduceMax", {In(x)}, {{"keepdims", 0}});
  REQUIRE(mx.ok());
  CHECK((*mx)[0].shape() == Shape{});
  CHECK((*mx)[0].data<float>()[0] == *std::max_element(x.data<float>(), x.data<float>() + 24));
  REQUIRE_FALSE(testing::RunFloatOp("ReduceMean", {In(x)}, {{"axes", std::vector<int64_t>{1, 1}}}).ok());
}

// A mean or sum over trailing axes (LayerNorm's row means) runs over contiguous rows with partial sums: against the
// sequential double sum it is within one float ulp, and equal on rows of like-magnitude values; rows of 1 to 1001
// values, a reduction over the last two axes, values spanning 2^40, and 1 and 3 threads.
TEST_CASE("ReduceMean and ReduceSum over trailing axes equal the sequential double sum to one ulp", "[float_ops]") {
  auto rng = testing::MakeRng("reduce-rows");
  for (const FloatOp op : {FloatOp::kReduceMean, FloatOp::kReduceSum}) {
    for (const auto& [rows, len, wide] : std::vector<std::tuple<int64_t, int64_t, bool>>{{5, 1, false},
                                                                                         {7, 3, false},
                                                                                         {4, 4, false},
                                                                                         {9, 7, false},
                                                                                         {128, 256, false},
                                                                                         {3, 1001, false},
                                                                                         {16, 256, true}}) {
      Tensor x = testing::RandomTensor(rng, Shape{rows, 1, len});
      if (wide) {  // magnitudes 2^-20 to 2^20 in one row: partial sums may round in double
        for (int64_t i = 0; i < x.NumElements(); ++i)
          x.data<float>()[i] *= std::ldexp(1.0f, static_cast<int>(i % 41) - 20);
      }
      for (int threads : {1, 3}) {
        // Over the last axis, and over the last two (shape [rows, 1, len]: the same rows).
        for (const std::vector<int64_t>& axes : {std::vector<int64_t>{-1}, std::vector<int64_t>{1, 2}}) {
          // ReduceSum takes its axes as an input (opset 13), ReduceMean as an attribute.
          const bool sum = op == FloatOp::kReduceSum;
          std::vector<testing::OpInput> inputs = {In(x)};
          const std::vector<int32_t> axes32(axes.begin(), axes.end());
          if (sum) inputs.push_back(Const(testing::IntTensor(Shape{static_cast<int64_t>(axes.size())}, axes32)));
          AttributeMap attributes;
          if (!sum) attributes.Set("axes", axes);
          auto y = testing::RunFloatOp(std::string(FloatOpName(op)), inputs, attributes, 1, threads);
          REQUIRE(y.ok());
          REQUIRE((*y)[0].NumElements() == rows);
          int64_t equal = 0;
          for (int64_t r = 0; r < rows; ++r) {
            double s = 0;
            for (int64_t k = 0; k < len; ++k) s += x.data<float>()[r * len + k];
            if (op == FloatOp::kReduceMean) s /= static_cast<double>(len);
            const float want = static_cast<float>(s), got = (*y)[0].data<float>()[r];
            INFO(FloatOpName(op) << " rows=" << rows << " len=" << len << " row " << r << " threads=" << threads);
            const float inf = std::numeric_limits<float>::infinity();
            const float ulp = std::max(std::nextafter(want, inf) - want, want - std::nextafter(want, -inf));
            CHECK(std::fabs(got - want) <= ulp);
            equal += got == want ? 1 : 0;
          }
          if (!wide) CHECK(equal == rows);
        }
      }
    }
  }
}

}  // namespace
}  // namespace octet
