// Top-1 classification (quant/training/top1.h): first-maximum argmax, counts and the accuracy fraction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "quant/training/top1.h"

namespace octet::training {
namespace {

Tensor Logits(int64_t n, int64_t c, const std::vector<float>& values) {
  Tensor t = Tensor::Create(DType::kF32, Shape{n, c}).value();
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

TEST_CASE("ArgMax picks the first largest value, as std::max_element", "[train]") {
  const std::vector<float> rows[] = {{0.1f, 0.7f, 0.2f},
                                     {3.f, 3.f, 1.f},
                                     {-1.f, -2.f, -1.f},
                                     {NAN, 5.f, 1.f},
                                     {1.f, NAN, 2.f},
                                     {-INFINITY, -INFINITY},
                                     {4.f}};
  for (const std::vector<float>& row : rows) {
    const int64_t want = std::max_element(row.begin(), row.end()) - row.begin();
    CHECK(ArgMax(row) == want);
  }
  CHECK(ArgMax(rows[1]) == 0);
  CHECK(ArgMax(rows[4]) == 2);
}

TEST_CASE("CountTop1 and Top1Accuracy count rows whose argmax is the label", "[train]") {
  const Tensor logits = Logits(4, 3,
                               {0.f, 2.f, 1.f,  //
                                5.f, 5.f, 0.f,  //
                                1.f, 0.f, 9.f,  //
                                0.f, 1.f, 0.f});
  const std::vector<int64_t> labels = {1, 1, 2, 7};  // the tie goes to class 0; 7 is never right
  CHECK(CountTop1(logits, labels).value() == 2);
  CHECK(Top1Accuracy(logits, labels).value() == 0.5);
  CHECK_FALSE(CountTop1(logits, std::vector<int64_t>{1, 1, 2}).ok());
  CHECK_FALSE(CountTop1(Tensor::Create(DType::kS32, Shape{4, 3}).value(), labels).ok());
  CHECK_FALSE(CountTop1(Tensor::Create(DType::kF32, Shape{12}).value(), labels).ok());
  CHECK_FALSE(Top1Accuracy(Logits(0, 3, {}), {}).ok());
}

}  // namespace
}  // namespace octet::training
