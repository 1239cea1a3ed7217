// The integer-dtype paths of issue 22's indexing ops, which ONNX's backend cases (float only) leave out: ArgMax and
// TopK ties, CumSum on s32, GatherElements' range check, ScatterND reductions, DepthToSpace/SpaceToDepth round
// trips, nearest Resize on u8 and Resize's argument checks; K, axis and scales fed as graph inputs (run time).
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>
#include <vector>

#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::In;

template <typename T>
Tensor Filled(DType dtype, const Shape& shape, const std::vector<T>& v) {
  Tensor t = Tensor::Create(dtype, shape).value();
  std::copy(v.begin(), v.end(), t.data<T>());
  return t;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

TEST_CASE("ArgMax/ArgMin and TopK on integers: ties keep the first index unless select_last_index", "[float_ops]") {
  std::mt19937_64 rng = testing::MakeRng("argmax");
  std::uniform_int_distribution<int32_t> small(-3, 3);  // many ties
  std::vector<int32_t> v(4 * 9);
  for (int32_t& x : v) x = small(rng);
  const Tensor x = testing::IntTensor(Shape{4, 9}, v);
  for (int64_t last : {0, 1}) {
    auto y = testing::RunFloatOp("ArgMax", {In(x)}, {{"axis", int64_t{1}}, {"select_last_index", last}});
    REQUIRE(y.ok());
    REQUIRE((*y)[0].shape() == Shape{4, 1});
    for (int r = 0; r < 4; ++r) {
      const auto row = v.begin() + r * 9;
      const int32_t m = *std::max_element(row, row + 9);
      int32_t want = -1;
      for (int i = 0; i < 9; ++i) {
        if (row[i] == m && (want < 0 || last == 1)) want = i;
      }
      CHECK((*y)[0].data<int32_t>()[r] == want);
    }
  }
  // TopK on u8 with K fed at run time: the K largest, equal values in index order.
  const std::vector<uint8_t> bytes = {5, 9, 5, 1, 9, 0, 5};
  for (int32_t k : {0, 3, 7}) {
    auto t = testing::RunFloatOp(
        "TopK", {In(Filled<uint8_t>(DType::kU8, Shape{7}, bytes)), In(testing::IntTensor(Shape{1}, {k}))}, {}, 2);
    REQUIRE(t.ok());
    std::vector<int32_t> order(7);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return bytes[static_cast<size_t>(a)] > bytes[static_cast<size_t>(b)];
    });
    order.resize(static_cast<size_t>(k));
    CHECK(Values<int32_t>((*t)[1]) == order);
    for (int32_t j = 0; j < k; ++j)
      CHECK((*t)[0].data<uint8_t>()[j] == bytes[static_cast<size_t>(order[static_cast<size_t>(j)])]);
  }
  auto too_many = testing::RunFloatOp("TopK", {In(x), In(testing::IntTensor(Shape{1}, {10}))}, {}, 2);
  REQUIRE_FALSE(too_many.ok());
  CHECK_THAT(too_many.status().message(), Catch::Contains("K = 10 must be between 0 and the axis length 9"));
}

TEST_CASE("CumSum on s32, exclusive and reverse, with the axis fed at run time", "[float_ops]") {
  const std::vector<int32_t> v = {1, -2, 30, 4, 5, 6};
  for (int64_t exclusive : {0, 1}) {
    for (int64_t reverse : {0, 1}) {
      auto y =
          testing::RunFloatOp("CumSum", {In(testing::IntTensor(Shape{2, 3}, v)), In(testing::IntTensor(Shape{}, {-1}))},
                              {{"exclusive", exclusive}, {"reverse", reverse}});
      REQUIRE(y.ok());
      for (int r = 0; r < 2; ++r) {
        for (int i = 0; i < 3; ++i) {
          int32_t want = 0;
          for (int j = 0; j < 3; ++j) {
            const bool before = reverse != 0 ? j > i : j < i;
            if (before || (j == i && exclusive == 0)) want += v[static_cast<size_t>(r * 3 + j)];
          }
          CHECK((*y)[0].data<int32_t>()[r * 3 + i] == want);
        }
      }
    }
  }
}

TEST_CASE("GatherElements checks indices at run time; ScatterND reduces duplicates in order", "[float_ops]") {
  const Tensor data = testing::IntTensor(Shape{2, 3}, {10, 11, 12, 20, 21, 22});
  auto g = testing::RunFloatOp("GatherElements", {In(data), In(testing::IntTensor(Shape{2, 2}, {2, -3, 0, 1}))},
                               {{"axis", int64_t{1}}});
  REQUIRE(g.ok());
  CHECK(Values<int32_t>((*g)[0]) == std::vector<int32_t>{12, 10, 20, 21});
  auto bad = testing::RunFloatOp("GatherElements", {In(data), In(testing::IntTensor(Shape{1, 1}, {3}))},
                                 {{"axis", int64_t{1}}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("index 3 at indices element 0 is out of range for an axis of 3"));
  // Rows 1, 0, 1 of data combined with three update rows.
  const std::vector<int32_t> upd = {5, 50, 0, 9, 9, 9, 30, 1, 40};
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    auto s = testing::RunFloatOp(
        "ScatterND",
        {In(data), In(testing::IntTensor(Shape{3, 1}, {1, 0, 1})), In(testing::IntTensor(Shape{3, 3}, upd))},
        {{"reduction", std::string(reduction)}});
    REQUIRE(s.ok());
    std::vector<int32_t> want = Values<int32_t>(data);
    const std::string red = reduction;
    const int rows[] = {1, 0, 1};
    for (int u = 0; u < 3; ++u) {
      for (int c = 0; c < 3; ++c) {
        int32_t& o = want[static_cast<size_t>(rows[u] * 3 + c)];
        const int32_t w = upd[static_cast<size_t>(u * 3 + c)];
        o = red == "none"  ? w
            : red == "add" ? o + w
            : red == "mul" ? o * w
            : red == "max" ? std::max(o, w)
                           : std::min(o, w);
      }
    }
    INFO(reduction);
    CHECK(Values<int32_t>((*s)[0]) == want);
  }
}

TEST_CASE("SpaceToDepth then DepthToSpace (DCR) gives back s8 input; CRD differs from DCR", "[float_ops]") {
  std::vector<int8_t> v(2 * 3 * 4 * 6);
  std::iota(v.begin(), v.end(), int8_t{-100});
  const Tensor x = Filled<int8_t>(DType::kS8, Shape{2, 3, 4, 6}, v);
  auto s = testing::RunFloatOp("SpaceToDepth", {In(x)}, {{"blocksize", int64_t{2}}});
  REQUIRE(s.ok());
  REQUIRE((*s)[0].shape() == Shape{2, 12, 2, 3});
  auto d = testing::RunFloatOp("DepthToSpace", {In((*s)[0])}, {{"blocksize", int64_t{2}}});
  REQUIRE(d.ok());
  CHECK(Values<int8_t>((*d)[0]) == v);
  auto crd =
      testing::RunFloatOp("DepthToSpace", {In((*s)[0])}, {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}});
  REQUIRE(crd.ok());
  CHECK(Values<int8_t>((*crd)[0]) != v);
}

TEST_CASE("Nearest Resize moves u8 elements; scales fed at run time; bad arguments are named", "[float_ops]") {
  std::vector<uint8_t> v(2 * 3);
  std::iota(v.begin(), v.end(), uint8_t{200});
  const Tensor x = Filled<uint8_t>(DType::kU8, Shape{1, 1, 2, 3}, v);
  const AttributeMap asym = {{"coordinate_transformation_mode", std::string("asymmetric")},
                             {"nearest_mode", std::string("floor")}};
  auto y = testing::RunFloatOp("Resize",
                               {In(x), testing::Absent(), In(testing::FloatTensor(Shape{4}, {1, 1, 2, 1.5f}))}, asym);
  REQUIRE(y.ok());
  REQUIRE((*y)[0].shape() == Shape{1, 1, 4, 4});
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      // asymmetric + floor: input index floor(out / scale).
      const int si = i / 2, sj = static_cast<int>(static_cast<float>(j) / 1.5f);
      CHECK((*y)[0].data<uint8_t>()[i * 4 + j] == v[static_cast<size_t>(si * 3 + sj)]);
    }
  }
  auto linear_u8 =
      testing::RunFloatOp("Resize", {In(x), testing::Absent(), In(testing::FloatTensor(Shape{4}, {1, 1, 2, 2}))},
                          {{"mode", std::string("linear")}});
  REQUIRE_FALSE(linear_u8.ok());
  CHECK_THAT(linear_u8.status().message(), Catch::Contains("linear and cubic Resize take f32 input, got u8"));
  auto both = testing::RunFloatOp("Resize", {In(x), testing::Absent(), In(testing::FloatTensor(Shape{4}, {1, 1, 2, 2})),
                                             In(testing::IntTensor(Shape{4}, {1, 1, 4, 6}))});
  REQUIRE_FALSE(both.ok());
  CHECK_THAT(both.status().message(),
             Catch::Contains("exactly one of scales (input 2) and sizes (input 3) must be given, got both"));
}

}  // namespace
}  // namespace octet
