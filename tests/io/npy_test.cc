// Tests of .npy reading and writing (io/npy.h) and of the file helpers under them (io/file_util.h).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/tensor.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "tests/io/temp_dir.h"
#include "tests/test_util.h"

namespace octet {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

// A fresh folder for each test, removed at scope exit.
class NpyTempDir : public testing::TempDir {
 public:
  NpyTempDir() : testing::TempDir("octet_npy_test") {}
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteRaw(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

Result<Tensor> Parse(const std::string& bytes, std::string_view name = "mem.npy") {
  return ParseNpy(std::as_bytes(std::span<const char>(bytes)), name);
}

std::string LittleEndian(uint64_t value, size_t bytes) {
  std::string out;
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  return out;
}

// A .npy file with the given version, header dict text and data. Padded like NumPy (spaces, newline, data at a
// multiple of 64) unless `raw_header` is set, in which case `dict` is the whole header.
std::string MakeNpy(int major, std::string_view dict, std::string_view data, bool raw_header = false) {
  const size_t length_bytes = major == 1 ? 2 : 4;
  std::string header(dict);
  if (!raw_header) {
    const size_t used = 8 + length_bytes + header.size() + 1;
    header.append((64 - used % 64) % 64, ' ');
    header.push_back('\n');
  }
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  out += LittleEndian(header.size(), length_bytes);
  out += header;
  out += data;
  return out;
}

template <typename T>
std::string DataBytes(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
  }
  return out;
}

// The message of a failed result (fails the test if it succeeded).
template <typename T>
std::string ErrorOf(const Result<T>& result) {
  REQUIRE_FALSE(result.ok());
  return result.status().message();
}

bool SameTensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.SizeBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.SizeBytes()) == 0);
}

Tensor RandomTensor(DType dtype, const Shape& shape, std::mt19937_64& rng) {
  Tensor t = Tensor::Create(dtype, shape).value();
  auto* bytes = static_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.SizeBytes(); ++i) bytes[i] = static_cast<unsigned char>(rng());
  if (dtype == DType::kF32 && t.NumElements() > 0) {
    // Random bits cover NaN payloads and denormals; make sure the usual values are there too.
    float* f = t.data<float>();
    f[0] = -0.0f;
    if (t.NumElements() > 1) f[1] = std::numeric_limits<float>::infinity();
    if (t.NumElements() > 2) f[2] = 1.5f;
  }
  return t;
}

std::string DataDir() { return OCTET_TEST_DATA_DIR "/npy/"; }

// ------------------------------------------------------------------------------------------------------------------

TEST_CASE("npy round trip keeps dtype, shape and bits", "[npy]") {
  auto rng = testing::MakeRng("npy round trip");
  const std::vector<Shape> shapes = {Shape{},        Shape{0},      Shape{1},         Shape{7},
                                     Shape{2, 3},    Shape{3, 0, 2}, Shape{0, 0},     Shape{2, 3, 4, 5},
                                     Shape{1, 1, 1, 1, 1, 1, 1, 1}, Shape{257, 129}, Shape{1000003}};
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : shapes) {
      INFO("dtype " << DTypeName(dtype) << " shape " << shape.ToString());
      const Tensor t = RandomTensor(dtype, shape, rng);
      const std::string bytes = SerializeNpy(t);
      // NumPy's layout: the data starts at a multiple of 64 bytes, right after a newline.
      const size_t header_length = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
      CHECK(bytes[6] == 1);
      CHECK((10 + header_length) % 64 == 0);
      CHECK(bytes[10 + header_length - 1] == '\n');
      CHECK(bytes.size() == 10 + header_length + t.SizeBytes());
      auto back = Parse(bytes);
      REQUIRE(back.ok());
      CHECK(SameTensor(t, *back));
    }
  }
}

TEST_CASE("npy round trip through files", "[npy]") {
  NpyTempDir dir;
  auto rng = testing::MakeRng("npy file round trip");
  for (DType dtype : kAllDTypes) {
    const Tensor t = RandomTensor(dtype, Shape{5, 17}, rng);
    const std::string path = dir.File(std::string(DTypeName(dtype)) + ".npy");
    REQUIRE(WriteNpy(path, t).ok());
    auto back = ReadNpy(path);
    REQUIRE(back.ok());
    CHECK(SameTensor(t, *back));
    CHECK(ReadAll(path) == SerializeNpy(t));
  }
  // Nothing but the four files: no temporary left behind.
  CHECK(dir.List() == std::vector<std::string>{"f32.npy", "s32.npy", "s8.npy", "u8.npy"});
}

TEST_CASE("npy header text matches NumPy's", "[npy]") {
  const Tensor t = Tensor::Create(DType::kS8, Shape{5}).value();
  const std::string bytes = SerializeNpy(t);
  const std::string dict = "{'descr': '|i1', 'fortran_order': False, 'shape': (5,), }";
  CHECK(bytes.substr(10, dict.size()) == dict);
  const Tensor scalar = Tensor::Create(DType::kF32, Shape{}).value();
  CHECK_THAT(SerializeNpy(scalar), Contains("'shape': (), }"));
  const Tensor matrix = Tensor::Create(DType::kS32, Shape{2, 3}).value();
  CHECK_THAT(SerializeNpy(matrix), Contains("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"));
}

TEST_CASE("npy writes version 2.0 when the header outgrows 16 bits", "[npy]") {
  // Only a rank far beyond NumPy's limit makes the header that long.
  const Tensor t = Tensor::Create(DType::kU8, Shape(std::vector<int64_t>(23000, 1))).value();
  const std::string bytes = SerializeNpy(t);
  REQUIRE(bytes.size() > 12);
  CHECK(bytes[6] == 2);
  CHECK(bytes[7] == 0);
  uint32_t header_length;
  std::memcpy(&header_length, bytes.data() + 8, 4);
  CHECK(header_length > 65535);
  CHECK((12 + header_length) % 64 == 0);
  CHECK(bytes.size() == 12 + header_length + 1);
  CHECK(bytes[12 + header_length - 1] == '\n');
  // octet, like NumPy, reads at most 64 dimensions.
  CHECK_THAT(ErrorOf(Parse(bytes)), Contains("at most 64 dimensions, got 23000"));
}

TEST_CASE("npy reads versions 1.0, 2.0 and 3.0", "[npy]") {
  auto rng = testing::MakeRng("npy versions");
  for (DType dtype : kAllDTypes) {
    const Tensor t = RandomTensor(dtype, Shape{3, 4}, rng);
    const std::string v1 = SerializeNpy(t);
    const size_t header_length = static_cast<unsigned char>(v1[8]) | static_cast<unsigned char>(v1[9]) << 8;
    const std::string dict = v1.substr(10, header_length);
    const std::string data = v1.substr(10 + header_length);
    for (int major : {1, 2, 3}) {
      INFO("dtype " << DTypeName(dtype) << " version " << major << ".0");
      auto back = Parse(MakeNpy(major, dict, data, /*raw_header=*/true));
      REQUIRE(back.ok());
      CHECK(SameTensor(t, *back));
    }
  }
}

TEST_CASE("npy reads the files NumPy wrote, exactly", "[npy]") {
  SECTION("float32 with special values") {
    auto t = ReadNpy(DataDir() + "f32_3x3.npy");
    REQUIRE(t.ok());
    REQUIRE(t->dtype() == DType::kF32);
    REQUIRE(t->shape() == Shape{3, 3});
    const float tiny = std::numeric_limits<float>::min() / 4;
    const float expected[] = {0.5f, -0.0f, INFINITY, -INFINITY, NAN, tiny, std::numeric_limits<float>::max(),
                              -1.25f, 3.0e-3f};
    for (size_t i = 0; i < 9; ++i) {
      INFO("element " << i);
      // NumPy's nan is the quiet NaN 0x7fc00000, the same bits as the C++ NAN macro.
      CHECK(std::bit_cast<uint32_t>(t->values<float>()[i]) == std::bit_cast<uint32_t>(expected[i]));
    }
  }
  SECTION("uint8") {
    auto t = ReadNpy(DataDir() + "u8_5.npy");
    REQUIRE(t.ok());
    REQUIRE(t->shape() == Shape{5});
    const auto v = t->values<uint8_t>();
    CHECK(std::vector<uint8_t>(v.begin(), v.end()) == std::vector<uint8_t>{0, 1, 127, 128, 255});
  }
  SECTION("int8") {
    auto t = ReadNpy(DataDir() + "s8_2x2x2.npy");
    REQUIRE(t.ok());
    REQUIRE(t->shape() == Shape{2, 2, 2});
    const auto v = t->values<int8_t>();
    CHECK(std::vector<int8_t>(v.begin(), v.end()) == std::vector<int8_t>{-128, -1, 0, 1, 2, 63, 126, 127});
  }
  SECTION("int32 rank 0, empty and 2-D") {
    auto scalar = ReadNpy(DataDir() + "s32_scalar.npy");
    REQUIRE(scalar.ok());
    CHECK(scalar->shape() == Shape{});
    CHECK(scalar->values<int32_t>()[0] == -123456789);
    auto empty = ReadNpy(DataDir() + "s32_3x0.npy");
    REQUIRE(empty.ok());
    CHECK(empty->dtype() == DType::kS32);
    CHECK(empty->shape() == Shape{3, 0});
    auto matrix = ReadNpy(DataDir() + "s32_2x3.npy");
    REQUIRE(matrix.ok());
    const auto v = matrix->values<int32_t>();
    CHECK(std::vector<int32_t>(v.begin(), v.end()) ==
          std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -1, 0, 1, 65536,
                               std::numeric_limits<int32_t>::max()});
  }
  SECTION("int64 inside the int32 range is read as int32") {
    auto t = ReadNpy(DataDir() + "s64_4.npy");
    REQUIRE(t.ok());
    CHECK(t->dtype() == DType::kS32);
    const auto v = t->values<int32_t>();
    CHECK(std::vector<int32_t>(v.begin(), v.end()) ==
          std::vector<int32_t>{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 0, 42});
  }
  SECTION("versions 2.0 and 3.0") {
    auto v2 = ReadNpy(DataDir() + "f32_v2_2x2.npy");
    REQUIRE(v2.ok());
    CHECK(v2->shape() == Shape{2, 2});
    const auto f = v2->values<float>();
    CHECK(std::vector<float>(f.begin(), f.end()) == std::vector<float>{1.0f, -2.0f, 0.25f, 1.0e6f});
    auto v3 = ReadNpy(DataDir() + "u8_v3_2x3.npy");
    REQUIRE(v3.ok());
    CHECK(v3->shape() == Shape{2, 3});
    const auto u = v3->values<uint8_t>();
    CHECK(std::vector<uint8_t>(u.begin(), u.end()) == std::vector<uint8_t>{0, 40, 80, 120, 160, 200});
  }
}

TEST_CASE("npy writes the bytes NumPy writes", "[npy]") {
  for (const char* leaf :
       {"f32_3x3.npy", "u8_5.npy", "s8_2x2x2.npy", "s32_scalar.npy", "s32_3x0.npy", "s32_2x3.npy"}) {
    INFO(leaf);
    const std::string numpy_bytes = ReadAll(DataDir() + leaf);
    REQUIRE(!numpy_bytes.empty());
    auto t = Parse(numpy_bytes, leaf);
    REQUIRE(t.ok());
    CHECK(SerializeNpy(*t) == numpy_bytes);
  }
}

TEST_CASE("npy rejects the NumPy files octet does not support", "[npy]") {
  struct Case {
    const char* leaf;
    const char* problem;
    StatusCode code;
  };
  const Case cases[] = {
      {"s64_out_of_range.npy", "got 2147483648 at element 3 (index [1, 1])", StatusCode::kOutOfRange},
      {"f32_fortran_2x3.npy", "Fortran-order", StatusCode::kUnimplemented},
      {"f32_big_endian_4.npy", "big-endian", StatusCode::kUnimplemented},
      {"f64_3.npy", "float64", StatusCode::kUnimplemented},
      {"bool_3.npy", "bool", StatusCode::kUnimplemented},
      {"str_2.npy", "strings", StatusCode::kUnimplemented},
      {"object_2.npy", "Python objects", StatusCode::kUnimplemented},
  };
  for (const Case& c : cases) {
    INFO(c.leaf);
    const std::string path = DataDir() + c.leaf;
    auto t = ReadNpy(path);
    const std::string message = ErrorOf(t);
    CHECK_THAT(message, Contains(c.problem));
    CHECK_THAT(message, Contains("failed to read .npy file '" + path + "'"));
    CHECK(t.status().code() == c.code);
  }
}

TEST_CASE("npy parses the header dict as Python would", "[npy]") {
  const std::string data = DataBytes<float>({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
  const char* dicts[] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",
      "{\"shape\": (2, 3), \"descr\": \"<f4\", \"fortran_order\": False}",
      "{'fortran_order':False,'shape':(2,3,),'descr':'<f4',}",
      "  {\n\t'descr' :\t'<f4' ,\n 'fortran_order' : False ,\r\n 'shape' : ( 2 , 3 ) , } \n",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (+2, 3), }",
  };
  for (const char* dict : dicts) {
    INFO(dict);
    auto t = Parse(MakeNpy(1, dict, data));
    REQUIRE(t.ok());
    CHECK(t->dtype() == DType::kF32);
    CHECK(t->shape() == Shape{2, 3});
    CHECK(t->values<float>()[5] == 6.0f);
  }
  SECTION("a header without padding or newline") {
    auto t = Parse(MakeNpy(1, "{'descr':'<f4','fortran_order':False,'shape':(2,3)}", data, /*raw_header=*/true));
    REQUIRE(t.ok());
    CHECK(t->shape() == Shape{2, 3});
  }
  SECTION("rank 0 and rank 1 shapes") {
    auto scalar = Parse(MakeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()}", data.substr(0, 4)));
    REQUIRE(scalar.ok());
    CHECK(scalar->shape() == Shape{});
    auto vector = Parse(MakeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", data));
    REQUIRE(vector.ok());
    CHECK(vector->shape() == Shape{6});
  }
}

TEST_CASE("npy handles headers up to the 1 MiB limit", "[npy]") {
  const std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }";
  SECTION("padding up to the limit is fine, one byte more is not") {
    std::string header = dict + std::string(kMaxNpyHeaderBytes - dict.size() - 1, ' ') + "\n";
    auto t = Parse(MakeNpy(2, header, "\x01\x02", /*raw_header=*/true));
    REQUIRE(t.ok());
    CHECK(t->values<uint8_t>()[1] == 2);
    header = std::string(1, ' ') + header;  // (insert(0, ...) trips a GCC 12 -Wrestrict false positive)
    CHECK_THAT(ErrorOf(Parse(MakeNpy(2, header, "\x01\x02", /*raw_header=*/true))),
               Contains("must be at most 1048576 bytes, got 1048577"));
  }
  SECTION("a header full of keys") {
    std::string many = "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), ";
    for (int i = 0; many.size() < kMaxNpyHeaderBytes - 100; ++i) many += fmt::format("'k{}': 0, ", i);
    many += "}";
    CHECK_THAT(ErrorOf(Parse(MakeNpy(2, many, "\x01\x02"))), Contains("got an extra key 'k0'"));
  }
  SECTION("a shape with hundreds of thousands of dimensions") {
    std::string huge = "{'descr': '|u1', 'fortran_order': False, 'shape': (";
    while (huge.size() < kMaxNpyHeaderBytes - 100) huge += "1,";
    huge += "), }";
    CHECK_THAT(ErrorOf(Parse(MakeNpy(2, huge, "\x01"))), Contains("at most 64 dimensions"));
  }
}

TEST_CASE("npy accepts every unambiguous spelling of the dtypes", "[npy]") {
  struct Case {
    const char* descr;
    DType dtype;
    std::string data;
  };
  const Case cases[] = {
      {"<f4", DType::kF32, DataBytes<float>({1.5f, -2.0f})},
      {"<i4", DType::kS32, DataBytes<int32_t>({-7, 1 << 30})},
      {"<i8", DType::kS32, DataBytes<int64_t>({-7, 1 << 30})},
      {"|u1", DType::kU8, "\x01\xff"},
      {"<u1", DType::kU8, "\x01\xff"},
      {">u1", DType::kU8, "\x01\xff"},
      {"=u1", DType::kU8, "\x01\xff"},
      {"u1", DType::kU8, "\x01\xff"},
      {"|i1", DType::kS8, "\x01\xff"},
      {"<i1", DType::kS8, "\x01\xff"},
      {"i1", DType::kS8, "\x01\xff"},
  };
  for (const Case& c : cases) {
    INFO(c.descr);
    auto t = Parse(MakeNpy(1, fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': (2,), }}", c.descr),
                           c.data));
    REQUIRE(t.ok());
    CHECK(t->dtype() == c.dtype);
    REQUIRE(t->shape() == Shape{2});
    switch (c.dtype) {
      case DType::kF32: CHECK(t->values<float>()[1] == -2.0f); break;
      case DType::kS32: CHECK(t->values<int32_t>()[1] == 1 << 30); break;
      case DType::kU8: CHECK(t->values<uint8_t>()[1] == 255); break;
      case DType::kS8: CHECK(t->values<int8_t>()[1] == -1); break;
    }
  }
}

TEST_CASE("npy reads int64 into int32 only when every value fits", "[npy]") {
  const auto file = [](std::initializer_list<int64_t> values, const char* shape) {
    return MakeNpy(1, fmt::format("{{'descr': '<i8', 'fortran_order': False, 'shape': {}, }}", shape),
                   DataBytes<int64_t>(values));
  };
  const int64_t lo = std::numeric_limits<int32_t>::min();
  const int64_t hi = std::numeric_limits<int32_t>::max();
  auto ok = Parse(file({lo, hi, 0, -1}, "(2, 2)"));
  REQUIRE(ok.ok());
  const auto v = ok->values<int32_t>();
  CHECK(std::vector<int32_t>(v.begin(), v.end()) ==
        std::vector<int32_t>{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 0, -1});

  auto above = Parse(file({0, 1, hi + 1, lo - 1}, "(2, 2)"), "big.npy");
  CHECK(above.status().code() == StatusCode::kOutOfRange);
  CHECK_THAT(ErrorOf(above), Contains("got 2147483648 at element 2 (index [1, 0])"));
  CHECK_THAT(ErrorOf(above), Contains("'big.npy'"));
  auto below = Parse(file({lo - 1}, "(1,)"));
  CHECK_THAT(ErrorOf(below), Contains("got -2147483649 at element 0 (index [0])"));
  auto extreme = Parse(file({std::numeric_limits<int64_t>::min()}, "()"));
  CHECK_THAT(ErrorOf(extreme), Contains("got -9223372036854775808 at element 0 (index [])"));
}

TEST_CASE("npy rejects broken preambles", "[npy]") {
  const std::string good = SerializeNpy(Tensor::Create(DType::kU8, Shape{4}).value());
  struct Case {
    std::string bytes;
    const char* problem;
  };
  std::string v4 = good;
  v4[6] = 4;
  std::string v11 = good;
  v11[7] = 1;
  std::string v0 = good;
  v0[6] = 0;
  std::string long_header = good;
  long_header[8] = '\xff';
  long_header[9] = '\x7f';
  const Case cases[] = {
      {"", "the file is empty"},
      {"PK\x03\x04 zip file", "not a .npy file"},
      {"\x93NUMPZ\x01\x00", "not a .npy file"},
      {std::string("\x89PNG\r\n\x1a\n\0\0", 10), "got '\\x89PNG\\x0d\\x0a\\x1a\\x0a'"},
      {"\x93NUM", "truncated"},
      {good.substr(0, 7), "truncated"},
      {good.substr(0, 9), "truncated: a version 1.0 preamble needs 10 bytes, got 9"},
      {MakeNpy(2, "{}", "").substr(0, 11), "truncated: a version 2.0 preamble needs 12 bytes, got 11"},
      {v4, "the format version must be 1.0, 2.0 or 3.0, got 4.0"},
      {v11, "got 1.1"},
      {v0, "got 0.0"},
      {good.substr(0, 50), "the header length is 118 bytes but only 40 bytes follow"},
      {long_header, "the header length is 32767 bytes"},
      {MakeNpy(2, "", "", true).substr(0, 8) + LittleEndian((1u << 20) + 1, 4), "must be at most 1048576 bytes"},
      {MakeNpy(2, "", "", true).substr(0, 8) + LittleEndian(0xffffffffu, 4) + std::string(100, ' '),
       "got 4294967295"},
  };
  for (const Case& c : cases) {
    INFO(c.problem);
    CHECK_THAT(ErrorOf(Parse(c.bytes, "pre.npy")), Contains(c.problem) && Contains("'pre.npy'"));
  }
}

TEST_CASE("npy rejects malformed header dicts", "[npy]") {
  struct Case {
    std::string dict;
    const char* problem;
  };
  const std::string tail = "'fortran_order': False, 'shape': (2,)}";
  const Case cases[] = {
      {"", "must be a dict starting with '{'"},
      {"['descr', '<f4']", "must be a dict starting with '{'"},
      {"{'descr': '<f4', " + tail.substr(0, tail.size() - 1), "expected ',' or '}' after a value"},
      {"{'descr' '<f4', " + tail, "expected ':' after a key"},
      {"{'descr': '<f4' " + tail, "expected ',' or '}' after a value"},
      {"{descr: '<f4', " + tail, "expected a string key or '}'"},
      {"{'descr': '<f4, " + tail, "expected ',' or '}' after a value at byte 17 of the header dict, got 'f'"},
      {"{'descr': '<f4\n', " + tail, "unterminated string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "expected ',' or '}' after a value"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,", "expected a value"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')' in a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3}", "expected ',' or ']' in a list"},
      {"{'descr': '<\\x66\\x34', " + tail, "escape sequences"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", "unknown name 'false'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (02,)}", "leading zeros"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2x,)}", "unexpected character after an integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "does not fit in 64 bits"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,)}", "does not fit in 64 bits"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "expected only padding after the dict"},
      {"{'descr': '<f4', 'descr': '<f4', " + tail, "duplicate key 'descr'"},
      {std::string("{'descr': ") + std::string(40, '(') + "1" + std::string(40, ')') + ", " + tail,
       "nesting deeper than 16"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-, 2)}", "expected digits"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "got an extra key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': False}", "got no 'shape'"},
      {"{'descr': '<f4', 'shape': (2,)}", "got no 'fortran_order'"},
      {"{" + tail, "got no 'descr'"},
      {"{}", "got no 'descr'"},
      {"{'descr': 4, " + tail, "'descr' must be a string, got an integer"},
      {"{'descr': None, " + tail, "'descr' must be a string, got None"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "'fortran_order' must be True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "'shape' must be a tuple of integers, got a list"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "'shape' must be a tuple of integers, got an integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 2}", "'shape' must be a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('2',)}", "dimension 0 must be an integer, got a string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, True)}", "dimension 1 must be an integer, got a bool"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", "dimension 1 must be >= 0, got -3"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776)}",
       "at most 2^48 elements, got (1099511627776, 1099511627776)"},
      {fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({})}}", std::string(195, '1')),
       "does not fit in 64 bits"},
  };
  for (const Case& c : cases) {
    INFO(c.dict);
    auto t = Parse(MakeNpy(1, c.dict, std::string(8, '\0')), "dict.npy");
    const std::string message = ErrorOf(t);
    CHECK_THAT(message, Contains(c.problem));
    CHECK_THAT(message, Contains("failed to read .npy file 'dict.npy'"));
  }
  SECTION("rank above 64") {
    std::string dims;
    for (int i = 0; i < 65; ++i) dims += "1, ";
    auto t = Parse(MakeNpy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (" + dims + ")}", "\x01"));
    CHECK_THAT(ErrorOf(t), Contains("at most 64 dimensions, got 65"));
    dims.resize(dims.size() - 3);
    auto at_limit = Parse(MakeNpy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (" + dims + ")}", "\x01"));
    REQUIRE(at_limit.ok());
    CHECK(at_limit->shape().rank() == 64);
  }
  SECTION("a version 3.0 header must be UTF-8") {
    const std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), 'k\xc3': 1}";
    CHECK_THAT(ErrorOf(Parse(MakeNpy(3, dict, "\x01"))), Contains("must be UTF-8"));
    // The same bytes in a 1.0 (latin-1) header get as far as the key check.
    CHECK_THAT(ErrorOf(Parse(MakeNpy(1, dict, "\x01"))), Contains("got an extra key 'k\\xc3'"));
    const std::string utf8 = "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), 'k\xc3\xa9': 1}";
    CHECK_THAT(ErrorOf(Parse(MakeNpy(3, utf8, "\x01"))), Contains("got an extra key"));
  }
}

TEST_CASE("npy rejects unsupported dtypes and layouts", "[npy]") {
  struct Case {
    const char* descr;
    const char* problem;
  };
  const Case cases[] = {
      {">f4", "big-endian data is not supported, got dtype '>f4'"},
      {">i4", "big-endian"},
      {">i8", "big-endian"},
      {"|f4", "must state its byte order as '<', got dtype '|f4'"},
      {"=i4", "must state its byte order as '<'"},
      {"f4", "must state its byte order as '<'"},
      {"<f8", "float64"},
      {"<f2", "float16"},
      {"<e", "float16"},
      {"<u2", "integer or float width"},
      {"<i2", "integer or float width"},
      {"<u4", "integer or float width"},
      {"<u8", "integer or float width"},
      {"|b1", "bool"},
      {"|O", "Python objects"},
      {"<U3", "strings"},
      {"|S3", "strings"},
      {"|V8", "records"},
      {"<M8[ns]", "dates"},
      {"<c8", "complex"},
      {"", "'descr' must name a dtype"},
      {"<", "no type code"},
  };
  for (const Case& c : cases) {
    INFO(c.descr);
    const std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': (2,), }}", c.descr);
    CHECK_THAT(ErrorOf(Parse(MakeNpy(1, dict, std::string(8, '\0')))), Contains(c.problem));
  }
  CHECK_THAT(ErrorOf(Parse(MakeNpy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", ""))),
             Contains("structured dtypes are not supported"));
  auto fortran = Parse(MakeNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", std::string(16, 0)));
  CHECK_THAT(ErrorOf(fortran), Contains("got fortran_order True"));
  CHECK(fortran.status().code() == StatusCode::kUnimplemented);
}

TEST_CASE("npy rejects data shorter or longer than the shape", "[npy]") {
  const std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string data = DataBytes<int32_t>({1, 2, 3, 4, 5, 6});
  REQUIRE(Parse(MakeNpy(1, dict, data)).ok());
  auto shorter = Parse(MakeNpy(1, dict, data.substr(0, 23)), "short.npy");
  CHECK(shorter.status().code() == StatusCode::kDataLoss);
  CHECK_THAT(ErrorOf(shorter),
             Contains("'short.npy'") && Contains("truncated: shape [2, 3] of 4-byte elements needs 24 bytes, got 23"));
  CHECK_THAT(ErrorOf(Parse(MakeNpy(1, dict, ""))), Contains("needs 24 bytes, got 0"));
  CHECK_THAT(ErrorOf(Parse(MakeNpy(1, dict, data + "x"))),
             Contains("longer than the shape says: shape [2, 3] of 4-byte elements needs 24 bytes, got 25"));
  // A huge shape with little data is rejected before anything is allocated.
  CHECK_THAT(ErrorOf(Parse(MakeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536, 65536)}",
                                   data))),
             Contains("needs 1125899906842624 bytes, got 24"));
  // Empty shapes take no data, and refuse any.
  const std::string empty = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 0), }";
  REQUIRE(Parse(MakeNpy(1, empty, "")).ok());
  CHECK_THAT(ErrorOf(Parse(MakeNpy(1, empty, std::string(1, '\0')))), Contains("needs 0 bytes, got 1"));
}

TEST_CASE("npy reading reports files that cannot be read", "[npy]") {
  NpyTempDir dir;
  const std::string missing = dir.File("missing.npy");
  auto t = ReadNpy(missing);
  CHECK(t.status().code() == StatusCode::kNotFound);
  CHECK_THAT(ErrorOf(t), Contains("failed to read file '" + missing + "'") && Contains("No such file"));
  const std::string folder_path = dir.path().string();
  auto folder = ReadNpy(folder_path);
  CHECK_THAT(ErrorOf(folder), Contains("'" + folder_path + "': it is a directory"));
  const std::string empty = dir.File("empty.npy");
  WriteRaw(empty, "");
  CHECK_THAT(ErrorOf(ReadNpy(empty)), Contains("failed to read .npy file '" + empty + "': the file is empty"));
}

TEST_CASE("npy writing is atomic", "[npy]") {
  NpyTempDir dir;
  auto rng = testing::MakeRng("npy atomic write");
  SECTION("a missing folder fails and creates nothing") {
    const std::string path = dir.File("no/such/folder/t.npy");
    const Status s = WriteNpy(path, RandomTensor(DType::kF32, Shape{4}, rng));
    REQUIRE_FALSE(s.ok());
    CHECK(s.code() == StatusCode::kIoError);
    CHECK_THAT(s.message(), Contains("failed to write file '" + path + "'") && Contains("No such file"));
    CHECK(dir.List().empty());
  }
  SECTION("an existing file is replaced whole") {
    const std::string path = dir.File("t.npy");
    const Tensor big = RandomTensor(DType::kF32, Shape{100, 100}, rng);
    const Tensor small = RandomTensor(DType::kS8, Shape{3}, rng);
    REQUIRE(WriteNpy(path, big).ok());
    REQUIRE(WriteNpy(path, small).ok());
    CHECK(ReadAll(path) == SerializeNpy(small));
    auto back = ReadNpy(path);
    REQUIRE(back.ok());
    CHECK(SameTensor(small, *back));
    CHECK(dir.List() == std::vector<std::string>{"t.npy"});
  }
  SECTION("a failed rename leaves the target and no temporary") {
    // A non-empty folder at the target path cannot be replaced by a file.
    const std::string path = dir.File("taken.npy");
    fs::create_directories(fs::path(path) / "inside");
    const Status s = WriteNpy(path, RandomTensor(DType::kU8, Shape{8}, rng));
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Contains("'" + path + "'") && Contains("rename"));
    CHECK(fs::is_directory(fs::path(path) / "inside"));
    CHECK(dir.List() == std::vector<std::string>{"taken.npy"});
  }
  SECTION("a path naming a folder is refused") {
    const Status s = WriteNpy(dir.path().string() + "/", RandomTensor(DType::kU8, Shape{8}, rng));
    CHECK_THAT(s.message(), Contains("must name a file"));
    CHECK(dir.List().empty());
  }
}

TEST_CASE("npy file helpers read and write whole files", "[npy]") {
  NpyTempDir dir;
  const std::string path = dir.File("blob.bin");
  std::string payload(3 * (1 << 20) + 17, '\0');  // more than ReadFile's first chunk
  auto rng = testing::MakeRng("file helpers");
  for (char& c : payload) c = static_cast<char>(rng());
  REQUIRE(WriteFileAtomically(path, payload).ok());
  auto back = ReadFile(path);
  REQUIRE(back.ok());
  CHECK(*back == payload);
  REQUIRE(WriteFileAtomically(path, "").ok());
  CHECK(ReadFile(path).value().empty());
  // Streams have no size up front: read to the end.
  const std::string fifo = dir.File("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // No Catch2 assertions on the writer thread: they are not thread-safe.
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
  });
  auto streamed = ReadFile(fifo);
  writer.join();
  REQUIRE(streamed.ok());
  CHECK(*streamed == payload);
}

}  // namespace
}  // namespace octet
