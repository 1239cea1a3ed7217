// LSTM and GRU against step-by-step references of the ONNX equations: every direction, initial states,
// sequence_lens, peepholes, both layouts and both GRU reset variants.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::Absent;
using testing::Const;
using testing::In;

double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct RnnRef {
  std::vector<float> y, y_h, y_c;
};

// Reference in layout 0. x [T, B, I]; W [D, G*H, I]; R [D, G*H, H]; Bias [D, 2*G*H]; lens [B]; h0/c0 [D, B, H];
// P [D, 3H].
RnnRef Reference(bool lstm, bool lbr, int64_t dirs, bool reverse_only, const Tensor& x, const Tensor& w,
                 const Tensor& r, const Tensor* bias, const std::vector<int32_t>* lens, const Tensor* h0,
                 const Tensor* c0, const Tensor* p, int64_t hidden) {
  const int64_t T = x.shape().dim(0), B = x.shape().dim(1), I = x.shape().dim(2), H = hidden, G = lstm ? 4 : 3;
  RnnRef out;
  out.y.assign(static_cast<size_t>(T * dirs * B * H), 0.0f);
  out.y_h.assign(static_cast<size_t>(dirs * B * H), 0.0f);
  out.y_c.assign(static_cast<size_t>(dirs * B * H), 0.0f);
  auto W = [&](int64_t d, int64_t row, int64_t col) { return double{w.data<float>()[(d * G * H + row) * I + col]}; };
  auto R = [&](int64_t d, int64_t row, int64_t col) { return double{r.data<float>()[(d * G * H + row) * H + col]}; };
  auto Wb = [&](int64_t d, int64_t row) { return bias ? double{bias->data<float>()[d * 2 * G * H + row]} : 0.0; };
  auto Rb = [&](int64_t d, int64_t row) { return bias ? double{bias->data<float>()[d * 2 * G * H + G * H + row]} : 0.0; };
  for (int64_t d = 0; d < dirs; ++d) {
    const bool rev = reverse_only || d == 1;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));
      for (int64_t k = 0; k < H; ++k) {
        h[static_cast<size_t>(k)] = h0 ? h0->data<float>()[(d * B + b) * H + k] : 0.0;
        c[static_cast<size_t>(k)] = c0 ? c0->data<float>()[(d * B + b) * H + k] : 0.0;
      }
      const int64_t len = lens ? (*lens)[static_cast<size_t>(b)] : T;
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = rev ? len - 1 - s : s;
        auto pre = [&](int64_t row, bool with_rb) {
          double v = Wb(d, row) + (with_rb ? Rb(d, row) : 0.0);
          for (int64_t q = 0; q < I; ++q) v += W(d, row, q) * x.data<float>()[(t * B + b) * I + q];
          return v;
        };
        auto rec = [&](int64_t row, const std::vector<double>& state) {
          double v = 0;
          for (int64_t q = 0; q < H; ++q) v += R(d, row, q) * state[static_cast<size_t>(q)];
          return v;
        };
        std::vector<double> hn(static_cast<size_t>(H)), cn(static_cast<size_t>(H));
        for (int64_t k = 0; k < H; ++k) {
          const size_t kk = static_cast<size_t>(k);
          if (lstm) {
            auto P = [&](int64_t which) { return p ? double{p->data<float>()[d * 3 * H + which * H + k]} : 0.0; };
            const double i = Sig(pre(k, true) + rec(k, h) + P(0) * c[kk]);
            const double f = Sig(pre(2 * H + k, true) + rec(2 * H + k, h) + P(2) * c[kk]);
            const double g = std::tanh(pre(3 * H + k, true) + rec(3 * H + k, h));
            cn[kk] = f * c[kk] + i * g;
            const double o = Sig(pre(H + k, true) + rec(H + k, h) + P(1) * cn[kk]);
            hn[kk] = o * std::tanh(cn[kk]);
          } else {
            const double z = Sig(pre(k, true) + rec(k, h));
            std::vector<double> rh(static_cast<size_t>(H));
            for (int64_t q = 0; q < H; ++q) {
              rh[static_cast<size_t>(q)] = Sig(pre(H + q, true) + rec(H + q, h)) * h[static_cast<size_t>(q)];
            }
            const double rk = Sig(pre(H + k, true) + rec(H + k, h));
            const double n = lbr ? std::tanh(pre(2 * H + k, false) + rk * (rec(2 * H + k, h) + Rb(d, 2 * H + k)))
                                 : std::tanh(pre(2 * H + k, false) + rec(2 * H + k, rh) + Rb(d, 2 * H + k));
            hn[kk] = (1 - z) * n + z * h[kk];
          }
        }
        h = hn;
        if (lstm) c = cn;
        for (int64_t k = 0; k < H; ++k) {
          out.y[static_cast<size_t>(((t * dirs + d) * B + b) * H + k)] = static_cast<float>(h[static_cast<size_t>(k)]);
        }
      }
      for (int64_t k = 0; k < H; ++k) {
        out.y_h[static_cast<size_t>((d * B + b) * H + k)] = static_cast<float>(h[static_cast<size_t>(k)]);
        out.y_c[static_cast<size_t>((d * B + b) * H + k)] = static_cast<float>(c[static_cast<size_t>(k)]);
      }
    }
  }
  return out;
}

TEST_CASE("LSTM and GRU match the ONNX equations", "[float_ops]") {
  auto rng = testing::MakeRng("rnn");
  for (int iter = 0; iter < 24; ++iter) {
    const bool lstm = iter % 2 == 0;
    const bool lbr = (iter / 2) % 2 == 0;
    const int dir_kind = (iter / 4) % 3;  // forward, reverse, bidirectional
    const int64_t dirs = dir_kind == 2 ? 2 : 1;
    const int64_t T = testing::RandomDim(rng, 1, 5), B = testing::RandomDim(rng, 1, 3);
    const int64_t I = testing::RandomDim(rng, 1, 6), H = testing::RandomDim(rng, 1, 5), G = lstm ? 4 : 3;
    const bool with_bias = iter % 3 != 0, with_state = iter % 5 != 0, with_lens = iter % 4 == 1;
    const bool with_peep = lstm && iter % 6 == 0;
    Tensor x = testing::RandomTensor(rng, Shape{T, B, I});
    Tensor w = testing::RandomTensor(rng, Shape{dirs, G * H, I});
    Tensor r = testing::RandomTensor(rng, Shape{dirs, G * H, H});
    Tensor bias = testing::RandomTensor(rng, Shape{dirs, 2 * G * H});
    Tensor h0 = testing::RandomTensor(rng, Shape{dirs, B, H});
    Tensor c0 = testing::RandomTensor(rng, Shape{dirs, B, H});
    Tensor p = testing::RandomTensor(rng, Shape{dirs, 3 * H});
    std::vector<int32_t> lens;
    for (int64_t b = 0; b < B; ++b) lens.push_back(static_cast<int32_t>(testing::RandomDim(rng, 0, T)));
    std::vector<testing::OpInput> ins = {In(x), Const(w), Const(r), with_bias ? Const(bias) : Absent(),
                                         with_lens ? In(testing::IntTensor(Shape{B}, lens)) : Absent(),
                                         with_state ? In(h0) : Absent()};
    if (lstm) {
      ins.push_back(with_state ? In(c0) : Absent());
      ins.push_back(with_peep ? Const(p) : Absent());
    }
    AttributeMap attrs{{"hidden_size", H},
                       {"direction", dir_kind == 0 ? "forward" : dir_kind == 1 ? "reverse" : "bidirectional"}};
    if (!lstm) attrs.Set("linear_before_reset", lbr ? 1 : 0);
    INFO((lstm ? "LSTM" : "GRU") << " T=" << T << " B=" << B << " I=" << I << " H=" << H << " dir=" << dir_kind
                                 << " lbr=" << lbr << " bias=" << with_bias << " state=" << with_state
                                 << " lens=" << with_lens << " peep=" << with_peep);
    auto y = testing::RunFloatOp(lstm ? "LSTM" : "GRU", ins, attrs, lstm ? 3 : 2);
    REQUIRE(y.ok());
    const RnnRef want = Reference(lstm, lbr, dirs, dir_kind == 1, x, w, r, with_bias ? &bias : nullptr,
                                  with_lens ? &lens : nullptr, with_state ? &h0 : nullptr,
                                  with_state && lstm ? &c0 : nullptr, with_peep ? &p : nullptr, H);
    REQUIRE((*y)[0].shape() == Shape{T, dirs, B, H});
    testing::ExpectClose((*y)[0], want.y, 1e-5f, 1e-4f);
    testing::ExpectClose((*y)[1], want.y_h, 1e-5f, 1e-4f);
    if (lstm) testing::ExpectClose((*y)[2], want.y_c, 1e-5f, 1e-4f);
  }
}

TEST_CASE("LSTM layout 1 equals layout 0 transposed; bad inputs are refused", "[float_ops]") {
  auto rng = testing::MakeRng("rnn-layout");
  const int64_t T = 4, B = 3, I = 5, H = 2;
  Tensor x = testing::RandomTensor(rng, Shape{T, B, I});
  Tensor w = testing::RandomTensor(rng, Shape{1, 4 * H, I});
  Tensor r = testing::RandomTensor(rng, Shape{1, 4 * H, H});
  Tensor xt = Tensor::Create(DType::kF32, Shape{B, T, I}).value();
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < I; ++i) xt.data<float>()[(b * T + t) * I + i] = x.data<float>()[(t * B + b) * I + i];
  auto y0 = testing::RunFloatOp("LSTM", {In(x), Const(w), Const(r)}, {{"hidden_size", H}}, 2);
  auto y1 = testing::RunFloatOp("LSTM", {In(xt), Const(w), Const(r)}, {{"hidden_size", H}, {"layout", 1}}, 2);
  REQUIRE(y0.ok());
  REQUIRE(y1.ok());
  REQUIRE((*y1)[0].shape() == Shape{B, T, 1, H});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < H; ++k) {
        CHECK((*y1)[0].data<float>()[(b * T + t) * H + k] == (*y0)[0].data<float>()[(t * B + b) * H + k]);
      }
  auto bad_w = testing::RunFloatOp("LSTM", {In(x), Const(testing::RandomTensor(rng, Shape{1, 3 * H, I})), Const(r)},
                                   {{"hidden_size", H}});
  REQUIRE_FALSE(bad_w.ok());
  CHECK_THAT(bad_w.status().message(), Catch::Contains("W (input 1) must be [1, 8, 5]"));
  auto acts = testing::RunFloatOp("LSTM", {In(x), Const(w), Const(r)},
                                  {{"hidden_size", H},
                                   {"activations", std::vector<std::string>{"Relu", "Tanh", "Tanh"}}});
  REQUIRE_FALSE(acts.ok());
  auto lens = testing::RunFloatOp("LSTM", {In(x), Const(w), Const(r), Absent(), In(testing::IntTensor(Shape{B}, {1, 9, 2}))},
                                  {{"hidden_size", H}});
  REQUIRE_FALSE(lens.ok());
  CHECK_THAT(lens.status().message(), Catch::Contains("sequence_lens[1] = 9"));
}

}  // namespace
}  // namespace octet
