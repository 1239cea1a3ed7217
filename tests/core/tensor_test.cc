// Status, Result, DType, Shape and Tensor basics.
#include <catch2/catch.hpp>

#include <cstdint>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("failed to halve '{}': must be even, got {}", "x", x);
  return x / 2;
}

Result<int> Quarter(int x) {
  OCTET_ASSIGN_OR_RETURN(int h, Half(x));
  OCTET_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST_CASE("Status and Result carry values and errors", "[core]") {
  CHECK(Quarter(8).value() == 2);
  auto r = Quarter(6);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(r.status().ToString() == "invalid argument: failed to halve 'x': must be even, got 3");
  CHECK(r.status().WithContext("reading a.npy").message() == "reading a.npy: failed to halve 'x': must be even, got 3");
  CHECK(OkStatus().ok());
}

TEST_CASE("DType names, sizes and limits", "[core]") {
  CHECK(DTypeSize(DType::kF32) == 4);
  CHECK(DTypeSize(DType::kS8) == 1);
  CHECK(ParseDType("quint8").value() == DType::kU8);
  CHECK(ParseDType("qint8").value() == DType::kS8);
  CHECK(ParseDType("qint32").value() == DType::kS32);
  CHECK_FALSE(ParseDType("float64").ok());
  CHECK(DTypeMin(DType::kS8) == -128);
  CHECK(DTypeMax(DType::kU8) == 255);
  CHECK(DTypeMin(DType::kS32) == INT32_MIN);
}

TEST_CASE("Shape checks dimensions and element counts", "[core]") {
  CHECK(Shape{}.NumElements() == 1);
  CHECK(Shape{2, 0, 3}.NumElements() == 0);
  CHECK(Shape{2, 3, 4}.Product(1, 3) == 12);
  CHECK(Shape{2, 3}.ToString() == "[2, 3]");
  CHECK_FALSE(Shape::Create({2, -1}).ok());
  auto huge = Shape::Create({int64_t{1} << 30, int64_t{1} << 30});
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.status().message(), Catch::Contains("2^48"));
  CHECK_FALSE(Shape::Create({INT64_MAX, 3}).ok());
}

TEST_CASE("Tensor storage is aligned, zeroed, shared by copies and cloned on request", "[core]") {
  Tensor t = Tensor::Create(DType::kF32, Shape{3, 5}).value();
  CHECK(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment == 0);
  for (float v : t.values<float>()) CHECK(v == 0.0f);
  Tensor shared = t;
  shared.data<float>()[4] = 2.5f;
  CHECK(t.data<float>()[4] == 2.5f);
  Tensor clone = t.Clone().value();
  clone.data<float>()[4] = 1.0f;
  CHECK(t.data<float>()[4] == 2.5f);
  Tensor r = t.Reshaped(Shape{15}).value();
  CHECK(r.data<float>()[4] == 2.5f);
  CHECK_FALSE(t.Reshaped(Shape{4, 4}).ok());
  const int8_t vals[] = {1, -2, 3};
  Tensor s8 = Tensor::FromValues<int8_t>(Shape{3}, vals).value();
  CHECK(s8.data<int8_t>()[1] == -2);
  CHECK_FALSE(Tensor::FromValues<int8_t>(Shape{4}, vals).ok());
  Tensor empty = Tensor::Create(DType::kU8, Shape{0, 7}).value();
  CHECK(empty.empty());
}

}  // namespace
}  // namespace octet
