// Shape and data-movement operators: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Concat, Split, Gather,
// Identity, Dropout, Constant, ConstantOfShape, Shape.
#include <catch2/catch.hpp>

#include <numeric>

#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::Const;
using testing::In;
using testing::IntTensor;

Tensor Iota(const Shape& shape) {
  Tensor t = Tensor::Create(DType::kF32, shape).value();
  std::iota(t.data<float>(), t.data<float>() + t.NumElements(), 0.0f);
  return t;
}

TEST_CASE("Reshape copies dims with 0, infers -1 and checks counts", "[float_ops]") {
  Tensor x = Iota(Shape{2, 3, 4});
  auto y = testing::RunFloatOp("Reshape", {In(x), Const(IntTensor(Shape{3}, {0, -1, 2}))});
  REQUIRE(y.ok());
  CHECK((*y)[0].shape() == Shape{2, 6, 2});
  testing::ExpectClose((*y)[0], testing::Values(x), 0, 0);
  auto bad = testing::RunFloatOp("Reshape", {In(x), Const(IntTensor(Shape{2}, {5, -1}))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("do not divide"));
  REQUIRE_FALSE(testing::RunFloatOp("Reshape", {In(x), Const(IntTensor(Shape{2}, {-1, -1}))}).ok());
  REQUIRE_FALSE(testing::RunFloatOp("Reshape", {In(x), Const(IntTensor(Shape{2}, {-2, 12}))}).ok());
  // A shape fed at run time: the executor compiles the graph for the run's data.
  auto runtime_shape = testing::RunFloatOp("Reshape", {In(x), In(IntTensor(Shape{1}, {24}))});
  REQUIRE(runtime_shape.ok());
  CHECK((*runtime_shape)[0].shape() == Shape{24});
  testing::ExpectClose((*runtime_shape)[0], testing::Values(x), 0, 0);
  auto zero = testing::RunFloatOp("Reshape", {In(Iota(Shape{0, 3})), Const(IntTensor(Shape{2}, {3, 0}))},
                                  {{"allowzero", 1}});
  REQUIRE(zero.ok());
  CHECK((*zero)[0].shape() == Shape{3, 0});
}

TEST_CASE("Flatten, Squeeze and Unsqueeze", "[float_ops]") {
  Tensor x = Iota(Shape{2, 1, 3, 1});
  auto f = testing::RunFloatOp("Flatten", {In(x)}, {{"axis", 2}});
  REQUIRE(f.ok());
  CHECK((*f)[0].shape() == Shape{2, 3});
  auto f0 = testing::RunFloatOp("Flatten", {In(x)}, {{"axis", 0}});
  REQUIRE(f0.ok());
  CHECK((*f0)[0].shape() == Shape{1, 6});
  auto s = testing::RunFloatOp("Squeeze", {In(x)});
  REQUIRE(s.ok());
  CHECK((*s)[0].shape() == Shape{2, 3});
  auto s1 = testing::RunFloatOp("Squeeze", {In(x), Const(IntTensor(Shape{1}, {-1}))});
  REQUIRE(s1.ok());
  CHECK((*s1)[0].shape() == Shape{2, 1, 3});
  auto bad = testing::RunFloatOp("Squeeze", {In(x), Const(IntTensor(Shape{1}, {0}))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("not 1"));
  auto u = testing::RunFloatOp("Unsqueeze", {In(Iota(Shape{2, 3})), Const(IntTensor(Shape{2}, {0, -1}))});
  REQUIRE(u.ok());
  CHECK((*u)[0].shape() == Shape{1, 2, 3, 1});
  REQUIRE_FALSE(testing::RunFloatOp("Unsqueeze", {In(Iota(Shape{2})), Const(IntTensor(Shape{1}, {5}))}).ok());
}

TEST_CASE("Transpose permutes like a reference index map", "[float_ops]") {
  auto rng = testing::MakeRng("transpose");
  for (int iter = 0; iter < 20; ++iter) {
    const int rank = static_cast<int>(testing::RandomDim(rng, 1, 5));
    std::vector<int64_t> dims, perm(static_cast<size_t>(rank));
    for (int i = 0; i < rank; ++i) dims.push_back(testing::RandomDim(rng, 1, 5));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Tensor x = Iota(Shape(dims));
    auto y = testing::RunFloatOp("Transpose", {In(x)}, {{"perm", perm}}, 1, 1 + iter % 2);
    REQUIRE(y.ok());
    const Shape& out = (*y)[0].shape();
    std::vector<float> want;
    std::vector<int64_t> idx(static_cast<size_t>(rank));
    for (int64_t i = 0; i < out.NumElements(); ++i) {
      int64_t rem = i;
      for (int d = rank - 1; d >= 0; --d) {
        idx[static_cast<size_t>(d)] = rem % out.dim(d);
        rem /= out.dim(d);
      }
      std::vector<int64_t> src(static_cast<size_t>(rank));
      for (int d = 0; d < rank; ++d) src[static_cast<size_t>(perm[static_cast<size_t>(d)])] = idx[static_cast<size_t>(d)];
      int64_t off = 0;
      for (int d = 0; d < rank; ++d) off = off * dims[static_cast<size_t>(d)] + src[static_cast<size_t>(d)];
      want.push_back(static_cast<float>(off));
    }
    testing::ExpectClose((*y)[0], want, 0, 0);
  }
  auto def = testing::RunFloatOp("Transpose", {In(Iota(Shape{2, 3}))});
  REQUIRE(def.ok());
  CHECK((*def)[0].shape() == Shape{3, 2});
  auto ints = testing::RunFloatOp("Transpose", {In(IntTensor(Shape{2, 2}, {1, 2, 3, 4}))});
  REQUIRE(ints.ok());
  CHECK((*ints)[0].data<int32_t>()[1] == 3);
  REQUIRE_FALSE(testing::RunFloatOp("Transpose", {In(Iota(Shape{2, 3}))}, {{"perm", std::vector<int64_t>{0, 0}}}).ok());
}

TEST_CASE("Slice with negative indices, steps, clamping and axes", "[float_ops]") {
  Tensor x = Iota(Shape{4, 6});
  auto a = testing::RunFloatOp("Slice", {In(x), Const(IntTensor(Shape{2}, {1, -5})), Const(IntTensor(Shape{2}, {3, 100})),
                                         Const(IntTensor(Shape{2}, {0, 1})), Const(IntTensor(Shape{2}, {1, 2}))});
  REQUIRE(a.ok());
  CHECK((*a)[0].shape() == Shape{2, 3});
  testing::ExpectClose((*a)[0], {7, 9, 11, 13, 15, 17}, 0, 0);
  // Reverse a row: starts -1, ends INT32_MIN (imported INT64_MIN), step -1.
  auto r = testing::RunFloatOp("Slice", {In(x), Const(IntTensor(Shape{1}, {-1})), Const(IntTensor(Shape{1}, {INT32_MIN})),
                                         Const(IntTensor(Shape{1}, {1})), Const(IntTensor(Shape{1}, {-2}))});
  REQUIRE(r.ok());
  CHECK((*r)[0].shape() == Shape{4, 3});
  testing::ExpectClose(Tensor((*r)[0]), {5, 3, 1, 11, 9, 7, 17, 15, 13, 23, 21, 19}, 0, 0);
  auto empty = testing::RunFloatOp("Slice", {In(x), Const(IntTensor(Shape{1}, {3})), Const(IntTensor(Shape{1}, {1}))});
  REQUIRE(empty.ok());
  CHECK((*empty)[0].shape() == Shape{0, 6});
  auto step0 = testing::RunFloatOp("Slice", {In(x), Const(IntTensor(Shape{1}, {0})), Const(IntTensor(Shape{1}, {2})),
                                             Const(IntTensor(Shape{1}, {0})), Const(IntTensor(Shape{1}, {0}))});
  REQUIRE_FALSE(step0.ok());
  auto bad_axis = testing::RunFloatOp("Slice", {In(x), Const(IntTensor(Shape{1}, {0})), Const(IntTensor(Shape{1}, {2})),
                                                Const(IntTensor(Shape{1}, {2}))});
  REQUIRE_FALSE(bad_axis.ok());
  CHECK_THAT(bad_axis.status().message(), Catch::Contains("axes must be in [-2, 2)"));
}

TEST_CASE("Concat and Split are inverse along any axis", "[float_ops]") {
  Tensor a = Iota(Shape{2, 2, 3});
  Tensor b = testing::FloatTensor(Shape{2, 1, 3}, {100, 101, 102, 103, 104, 105});
  auto c = testing::RunFloatOp("Concat", {In(a), In(b)}, {{"axis", -2}});
  REQUIRE(c.ok());
  CHECK((*c)[0].shape() == Shape{2, 3, 3});
  testing::ExpectClose((*c)[0], {0, 1, 2, 3, 4, 5, 100, 101, 102, 6, 7, 8, 9, 10, 11, 103, 104, 105}, 0, 0);
  auto s = testing::RunFloatOp("Split", {In((*c)[0]), Const(IntTensor(Shape{2}, {2, 1}))}, {{"axis", 1}}, 2);
  REQUIRE(s.ok());
  testing::ExpectClose((*s)[0], testing::Values(a), 0, 0);
  testing::ExpectClose((*s)[1], testing::Values(b), 0, 0);
  auto even = testing::RunFloatOp("Split", {In(Iota(Shape{6}))}, {}, 3);
  REQUIRE(even.ok());
  testing::ExpectClose((*even)[2], {4, 5}, 0, 0);
  REQUIRE_FALSE(testing::RunFloatOp("Split", {In(Iota(Shape{5}))}, {}, 2).ok());
  auto mismatch = testing::RunFloatOp("Concat", {In(a), In(Iota(Shape{2, 2, 4}))}, {{"axis", 1}});
  REQUIRE_FALSE(mismatch.ok());
  CHECK_THAT(mismatch.status().message(), Catch::Contains("differ outside axis 1"));
  REQUIRE_FALSE(testing::RunFloatOp("Concat", {In(a)}).ok());  // axis is required
}

TEST_CASE("Gather takes rows (embeddings) and checks indices at run time", "[float_ops]") {
  Tensor table = Iota(Shape{5, 3});
  auto y = testing::RunFloatOp("Gather", {Const(table), In(IntTensor(Shape{2, 2}, {4, 0, -1, 2}))});
  REQUIRE(y.ok());
  CHECK((*y)[0].shape() == Shape{2, 2, 3});
  testing::ExpectClose((*y)[0], {12, 13, 14, 0, 1, 2, 12, 13, 14, 6, 7, 8}, 0, 0);
  auto cols = testing::RunFloatOp("Gather", {In(table), Const(IntTensor(Shape{}, {1}))}, {{"axis", 1}});
  REQUIRE(cols.ok());
  CHECK((*cols)[0].shape() == Shape{5});
  testing::ExpectClose((*cols)[0], {1, 4, 7, 10, 13}, 0, 0);
  auto bad = testing::RunFloatOp("Gather", {Const(table), In(IntTensor(Shape{1}, {5}))});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("failed to run node 'op' (Gather)") &&
                                         Catch::Contains("index 5"));
}

TEST_CASE("Pad in constant, reflect and edge modes, with cropping", "[float_ops]") {
  Tensor x = Iota(Shape{2, 3});  // [[0 1 2] [3 4 5]]
  auto constant = testing::RunFloatOp("Pad", {In(x), Const(IntTensor(Shape{4}, {0, 1, 1, -1})),
                                              Const(testing::FloatTensor(Shape{}, {9.0f}))});
  REQUIRE(constant.ok());
  CHECK((*constant)[0].shape() == Shape{3, 3});
  testing::ExpectClose((*constant)[0], {9, 0, 1, 9, 3, 4, 9, 9, 9}, 0, 0);
  auto reflect = testing::RunFloatOp("Pad", {In(x), Const(IntTensor(Shape{4}, {1, 2, 0, 1}))}, {{"mode", "reflect"}});
  REQUIRE(reflect.ok());
  CHECK((*reflect)[0].shape() == Shape{3, 6});
  testing::ExpectClose((*reflect)[0], {5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}, 0, 0);
  auto edge = testing::RunFloatOp("Pad", {In(x), Const(IntTensor(Shape{4}, {0, 2, 1, 0}))}, {{"mode", "edge"}});
  REQUIRE(edge.ok());
  testing::ExpectClose((*edge)[0], {0, 0, 0, 1, 2, 3, 3, 3, 4, 5, 3, 3, 3, 4, 5}, 0, 0);
  REQUIRE_FALSE(testing::RunFloatOp("Pad", {In(x), Const(IntTensor(Shape{2}, {1, 1}))}).ok());
  REQUIRE_FALSE(testing::RunFloatOp("Pad", {In(x), Const(IntTensor(Shape{4}, {0, 3, 0, 0}))}, {{"mode", "reflect"}}).ok());
  REQUIRE_FALSE(testing::RunFloatOp("Pad", {In(x), Const(IntTensor(Shape{4}, {-3, 0, 0, 0}))}).ok());
}

// Training-mode Dropout: each element is kept (times 1 / (1 - ratio)) or zeroed, the mask says which, the same seed
// draws the same mask, another seed another one, and about 1 - ratio of many elements are kept.
TEST_CASE("Dropout in training mode drops by its seed and scales the rest", "[float_ops]") {
  auto rng = testing::MakeRng("dropout-training");
  Tensor x = testing::RandomTensor(rng, Shape{40, 50});
  auto run = [&](int64_t seed, float ratio) {
    return testing::RunFloatOp(
        "Dropout", {In(x), Const(testing::FloatTensor(Shape{}, {ratio})), Const(IntTensor(Shape{}, {1}))},
        {{"seed", seed}}, 2);
  };
  auto a = run(7, 0.75f);
  REQUIRE(a.ok());
  REQUIRE((*a)[1].dtype() == DType::kU8);
  const float* y = (*a)[0].data<float>();
  const uint8_t* m = (*a)[1].data<uint8_t>();
  int64_t kept = 0;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    REQUIRE(m[i] <= 1);
    kept += m[i];
    CHECK(y[i] == (m[i] != 0 ? x.data<float>()[i] * 4.0f : 0.0f));
  }
  // 2000 draws kept with probability 1/4: 500 expected, standard deviation about 19.
  CHECK(kept > 400);
  CHECK(kept < 600);
  auto again = run(7, 0.75f);
  auto other = run(8, 0.75f);
  REQUIRE(again.ok());
  REQUIRE(other.ok());
  int64_t same = 0, differ = 0;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    same += (*again)[1].data<uint8_t>()[i] == m[i];
    differ += (*other)[1].data<uint8_t>()[i] != m[i];
  }
  CHECK(same == x.NumElements());
  CHECK(differ > 0);
  // The output alone (no mask output) drops the same elements.
  auto plain = testing::RunFloatOp(
      "Dropout", {In(x), Const(testing::FloatTensor(Shape{}, {0.75f})), Const(IntTensor(Shape{}, {1}))},
      {{"seed", int64_t{7}}});
  REQUIRE(plain.ok());
  testing::ExpectClose((*plain)[0], testing::Values((*a)[0]), 0, 0);
}

TEST_CASE("Identity, Dropout, Constant, ConstantOfShape and Shape", "[float_ops]") {
  Tensor x = Iota(Shape{2, 3});
  auto id = testing::RunFloatOp("Identity", {In(x)});
  REQUIRE(id.ok());
  testing::ExpectClose((*id)[0], testing::Values(x), 0, 0);
  auto drop = testing::RunFloatOp("Dropout", {In(x), Const(testing::FloatTensor(Shape{}, {0.5f}))});
  REQUIRE(drop.ok());
  testing::ExpectClose((*drop)[0], testing::Values(x), 0, 0);
  // Inference keeps everything: the mask (bool as u8) is all ones. Training mode drops unless ratio is 0.
  auto mask = testing::RunFloatOp("Dropout", {In(x)}, {}, 2);
  REQUIRE(mask.ok());
  testing::ExpectClose((*mask)[0], testing::Values(x), 0, 0);
  REQUIRE((*mask)[1].dtype() == DType::kU8);
  for (int64_t i = 0; i < x.NumElements(); ++i) CHECK((*mask)[1].data<uint8_t>()[i] == 1);
  auto bad_ratio = testing::RunFloatOp(
      "Dropout", {In(x), Const(testing::FloatTensor(Shape{}, {1.0f})), Const(IntTensor(Shape{}, {1}))});
  REQUIRE_FALSE(bad_ratio.ok());
  CHECK_THAT(bad_ratio.status().message(), Catch::Contains("ratio must be in [0, 1) in training mode, got 1"));
  auto keep_all = testing::RunFloatOp(
      "Dropout", {In(x), Const(testing::FloatTensor(Shape{}, {0.0f})), Const(IntTensor(Shape{}, {1}))});
  REQUIRE(keep_all.ok());
  testing::ExpectClose((*keep_all)[0], testing::Values(x), 0, 0);
  auto c = testing::RunFloatOp("Constant", {}, {{"value_ints", std::vector<int64_t>{3, -1}}});
  REQUIRE(c.ok());
  CHECK((*c)[0].data<int32_t>()[1] == -1);
  auto cf = testing::RunFloatOp("Constant", {}, {{"value", testing::FloatTensor(Shape{2}, {1.5f, 2.5f})}});
  REQUIRE(cf.ok());
  testing::ExpectClose((*cf)[0], {1.5f, 2.5f}, 0, 0);
  REQUIRE_FALSE(testing::RunFloatOp("Constant", {}, {}).ok());
  auto cos = testing::RunFloatOp("ConstantOfShape", {Const(IntTensor(Shape{2}, {2, 2}))},
                                 {{"value", testing::FloatTensor(Shape{1}, {7.0f})}});
  REQUIRE(cos.ok());
  testing::ExpectClose((*cos)[0], {7, 7, 7, 7}, 0, 0);
  auto shape = testing::RunFloatOp("Shape", {In(Iota(Shape{2, 3, 4}))}, {{"start", 1}});
  REQUIRE(shape.ok());
  CHECK((*shape)[0].shape() == Shape{2});
  CHECK((*shape)[0].data<int32_t>()[0] == 3);
  CHECK((*shape)[0].data<int32_t>()[1] == 4);
}

}  // namespace
}  // namespace octet
