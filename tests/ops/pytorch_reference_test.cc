// octet's quantize / dequantize / fake-quantize against PyTorch 1.13's outputs (tests/data/pytorch, written by
// tests/data/pytorch/generate.py with Debian's python3-torch; torch is not needed here).
//
// Equality cases must match bit for bit on every ISA this machine runs, with 1 and 2 threads. Known-difference
// cases (NaN, ±Inf, |x/scale| >= 2^63, and qint32 rounding artefacts of PyTorch, listed in the manifest's
// "known_differences") are checked against octet's documented behaviour (DESIGN.md §4, ops/quantize.h) instead.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/context.h"
#include "core/dtype.h"
#include "core/isa.h"
#include "core/qparams.h"
#include "core/tensor.h"
#include "io/npy.h"
#include "ops/float/linear_qparams.h"
#include "ops/quantize.h"
#include "tests/data_manifest.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using nlohmann::json;

const std::string kPytorchDataDir = std::string(OCTET_TEST_DATA_DIR) + "/pytorch";

// One manifest entry, parsed.
struct Case {
  std::string name;
  std::string op;
  DType dtype = DType::kU8;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int axis = -1;  // -1: per tensor
  int64_t quant_min = 0;
  int64_t quant_max = 0;
  std::string kind;
  std::vector<int64_t> shape;
  std::string input;
  std::string expected;
  std::string expected_mask;
  bool expect_equal = true;
  std::string reason;
};

struct OpsManifest {
  json raw;
  std::vector<Case> cases;
};

const OpsManifest& LoadManifest() {
  static const OpsManifest manifest = [] {
    OpsManifest m;
    m.raw = testing::ReadDataManifest(kPytorchDataDir, "tests/data/pytorch/generate.py");
    for (const json& j : m.raw.at("cases")) {
      Case c;
      c.name = j.at("name").get<std::string>();
      c.op = j.at("op").get<std::string>();
      const auto dtype = ParseDType(j.at("dtype").get<std::string>());
      if (!dtype.ok()) FAIL(c.name << ": " << dtype.status().ToString());
      c.dtype = *dtype;
      // JSON holds the exact double of each float32 scale, so the narrowing is exact.
      for (const json& s : j.at("scales")) c.scales.push_back(static_cast<float>(s.get<double>()));
      for (const json& z : j.at("zero_points")) c.zero_points.push_back(static_cast<int32_t>(z.get<int64_t>()));
      c.axis = j.at("axis").is_null() ? -1 : j.at("axis").get<int>();
      c.quant_min = j.at("quant_min").get<int64_t>();
      c.quant_max = j.at("quant_max").get<int64_t>();
      c.kind = j.at("kind").get<std::string>();
      c.shape = j.at("shape").get<std::vector<int64_t>>();
      c.input = j.at("input").get<std::string>();
      c.expected = j.at("expected").get<std::string>();
      if (j.contains("expected_mask")) c.expected_mask = j.at("expected_mask").get<std::string>();
      c.expect_equal = j.at("expect_equal").get<bool>();
      if (j.contains("reason")) c.reason = j.at("reason").get<std::string>();
      m.cases.push_back(std::move(c));
    }
    return m;
  }();
  return manifest;
}

std::vector<const Case*> CasesFor(std::initializer_list<std::string_view> ops, bool expect_equal) {
  std::vector<const Case*> out;
  for (const Case& c : LoadManifest().cases) {
    if (c.expect_equal != expect_equal) continue;
    for (std::string_view op : ops) {
      if (c.op == op) out.push_back(&c);
    }
  }
  return out;
}

Tensor Load(const Case& c, const std::string& file, DType dtype) {
  const std::string path = kPytorchDataDir + "/" + file;
  auto t = ReadNpy(path);
  if (!t.ok()) FAIL(c.name << ": " << t.status().ToString());
  INFO(c.name << ": " << file);
  REQUIRE(t->dtype() == dtype);
  REQUIRE(t->shape().rank() == static_cast<int>(c.shape.size()));
  for (size_t d = 0; d < c.shape.size(); ++d) REQUIRE(t->shape().dim(static_cast<int>(d)) == c.shape[d]);
  return std::move(t).value();
}

QParams MakeQParams(const Case& c) {
  Result<QParams> q = [&]() -> Result<QParams> {
    if (c.op == "quantize_per_tensor" || (c.op == "dequantize" && c.axis < 0)) {
      return QParams::PerTensor(c.dtype, c.scales.at(0), c.zero_points.at(0));
    }
    if (c.op == "fake_quantize_per_tensor_affine") {
      return QParams::PerTensor(c.dtype, c.scales.at(0), c.zero_points.at(0), c.quant_min, c.quant_max);
    }
    return QParams::PerChannel(c.dtype, c.scales, c.zero_points, c.axis, c.quant_min, c.quant_max);
  }();
  if (!q.ok()) FAIL(c.name << ": " << q.status().ToString());
  return std::move(q).value();
}

// The scale and zero point of flat element i.
std::pair<float, int32_t> ParamsAt(const Case& c, int64_t i) {
  if (c.axis < 0) return {c.scales[0], c.zero_points[0]};
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(c.axis) + 1; d < c.shape.size(); ++d) inner *= c.shape[d];
  const int64_t ch = (i / inner) % c.shape[static_cast<size_t>(c.axis)];
  return {c.scales[static_cast<size_t>(ch)], c.zero_points[static_cast<size_t>(ch)]};
}

std::string FloatText(float v) {
  std::ostringstream s;
  s.precision(9);
  s << v << " (0x" << std::hex << std::bit_cast<uint32_t>(v) << ")";
  return s.str();
}

int64_t IntAt(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kF32) FAIL("not an integer tensor");
  return float_ops::IntAt(ConstTensorView(t), i);
}

// The input element as text, for messages.
std::string InputText(const Tensor& in, int64_t i) {
  return in.dtype() == DType::kF32 ? FloatText(in.data<float>()[i]) : std::to_string(IntAt(in, i));
}

std::string Where(const Case& c, Isa isa, int threads) {
  return fmt::format("case '{}' ({} {}, axis {}, range [{}, {}]) on {} with {} thread(s)", c.name, c.op,
                     DTypeName(c.dtype), c.axis, c.quant_min, c.quant_max, IsaName(isa), threads);
}

// Integer tensors equal element for element; reports the first difference.
void CheckIntsEqual(const Case& c, const std::string& where, const Tensor& input, const Tensor& expected,
                    const Tensor& actual) {
  REQUIRE(actual.dtype() == expected.dtype());
  REQUIRE(actual.NumElements() == expected.NumElements());
  for (int64_t i = 0; i < expected.NumElements(); ++i) {
    if (IntAt(actual, i) != IntAt(expected, i)) {
      const auto [s, zp] = ParamsAt(c, i);
      FAIL(where << ": first mismatch at flat index " << i << ": input " << InputText(input, i) << ", scale "
                 << FloatText(s) << ", zero point " << zp << ": expected (PyTorch) " << IntAt(expected, i)
                 << ", actual (octet) " << IntAt(actual, i));
    }
  }
}

// Float tensors equal bit for bit (so -0.0 != +0.0); reports the first difference.
void CheckFloatsEqual(const Case& c, const std::string& where, const Tensor& input, const Tensor& expected,
                      const Tensor& actual) {
  REQUIRE(actual.dtype() == DType::kF32);
  REQUIRE(actual.NumElements() == expected.NumElements());
  const float* e = expected.data<float>();
  const float* a = actual.data<float>();
  if (std::memcmp(e, a, expected.SizeBytes()) == 0) return;
  for (int64_t i = 0; i < expected.NumElements(); ++i) {
    if (std::bit_cast<uint32_t>(e[i]) != std::bit_cast<uint32_t>(a[i])) {
      const auto [s, zp] = ParamsAt(c, i);
      FAIL(where << ": first mismatch at flat index " << i << ": input " << InputText(input, i) << ", scale "
                 << FloatText(s) << ", zero point " << zp << ": expected (PyTorch) " << FloatText(e[i])
                 << ", actual (octet) " << FloatText(a[i]));
    }
  }
}

// The (ISA, threads) pairs to run: every compiled ISA this CPU runs, with 1 and 2 threads.
std::vector<std::pair<Isa, int>> Variants() {
  std::vector<std::pair<Isa, int>> out;
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, fmt::format("pytorch reference tests on {}", IsaName(isa)))) continue;
    for (int threads : {1, 2}) out.emplace_back(isa, threads);
  }
  return out;
}

// The kernel family an op records in the context (ops/quantize.cc).
std::string Family(const Case& c) {
  if (c.op == "quantize_per_tensor" || c.op == "quantize_per_channel") {
    return fmt::format("quantize_f32_{}", DTypeName(c.dtype));
  }
  if (c.op == "dequantize") return fmt::format("dequantize_{}_f32", DTypeName(c.dtype));
  return "fake_quantize_f32";
}

// Runs the case's op and compares with PyTorch's files on one variant; returns the kernel that ran.
std::string RunEqualityCase(const Case& c, Isa isa, int threads) {
  const Context context = testing::ContextFor(isa, threads);
  const QParams qparams = MakeQParams(c);
  const auto where = [&] { return Where(c, isa, threads) + ", kernel " + context.LastKernel(Family(c)); };
  if (c.op == "quantize_per_tensor" || c.op == "quantize_per_channel") {
    const Tensor x = Load(c, c.input, DType::kF32);
    const Tensor expected = Load(c, c.expected, c.dtype);
    auto q = Quantize(context, x, qparams);
    if (!q.ok()) FAIL(where() << ": " << q.status().ToString());
    CheckIntsEqual(c, where(), x, expected, q->values());
  } else if (c.op == "dequantize") {
    const Tensor qv = Load(c, c.input, c.dtype);
    const Tensor expected = Load(c, c.expected, DType::kF32);
    auto qt = QTensor::Create(qv, qparams);
    if (!qt.ok()) FAIL(where() << ": " << qt.status().ToString());
    auto y = Dequantize(context, *qt);
    if (!y.ok()) FAIL(where() << ": " << y.status().ToString());
    CheckFloatsEqual(c, where(), qv, expected, *y);
  } else if (c.op == "fake_quantize_per_tensor_affine" || c.op == "fake_quantize_per_channel_affine") {
    const Tensor x = Load(c, c.input, DType::kF32);
    const Tensor expected = Load(c, c.expected, DType::kF32);
    const Tensor expected_mask = Load(c, c.expected_mask, DType::kU8);
    auto fq = FakeQuantize(context, x, qparams);
    if (!fq.ok()) FAIL(where() << ": " << fq.status().ToString());
    CheckFloatsEqual(c, where() + " (output)", x, expected, fq->output);
    CheckIntsEqual(c, where() + " (mask)", x, expected_mask, fq->mask);
  } else {
    FAIL("unknown op '" << c.op << "' in case " << c.name);
  }
  const std::string kernel = context.LastKernel(Family(c));
  INFO(Where(c, isa, threads));
  CHECK(!kernel.empty());
  return kernel;
}

// Runs every case on every variant. When more than one ISA runs, more than one kernel must have run per family
// (otherwise the ISA loop would be testing the same code over and over).
void RunAllVariants(const std::vector<const Case*>& cases) {
  std::set<Isa> isas;
  std::map<std::string, std::set<std::string>> kernels;  // family -> kernels that ran
  for (const auto& [isa, threads] : Variants()) {
    isas.insert(isa);
    for (const Case* c : cases) kernels[Family(*c)].insert(RunEqualityCase(*c, isa, threads));
  }
  REQUIRE(!isas.empty());
  for (const auto& [family, ran] : kernels) {
    std::string list;
    for (const auto& k : ran) list += " " + k;
    INFO("family " << family << ", kernels run:" << list);
    CHECK((isas.size() == 1 || ran.size() >= 2));
  }
}

// Expected outputs hold at least two distinct values (guards against a degenerate data set; single-element and
// saturation-only cases are allowed, but most cases must vary).
bool Varies(const Tensor& t) {
  const auto* p = static_cast<const std::byte*>(t.raw_data());
  const size_t w = DTypeSize(t.dtype());
  for (int64_t i = 1; i < t.NumElements(); ++i) {
    if (std::memcmp(p, p + static_cast<size_t>(i) * w, w) != 0) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------

TEST_CASE("pytorch reference manifest is complete and not vacuous", "[pytorch]") {
  const OpsManifest& m = LoadManifest();
  INFO("generated by torch " << m.raw.at("torch_version").get<std::string>());
  CHECK(m.raw.at("torch_version").get<std::string>().rfind("1.13", 0) == 0);
  REQUIRE(m.raw.at("num_cases").get<size_t>() == m.cases.size());
  REQUIRE(!m.cases.empty());
  size_t equal = 0;
  std::map<std::string, size_t> per_op;
  std::set<std::string> names;
  std::set<std::string> kinds;
  size_t varying = 0;
  for (const Case& c : m.cases) {
    INFO(c.name);
    CHECK(names.insert(c.name).second);
    equal += c.expect_equal ? 1 : 0;
    ++per_op[c.op];
    kinds.insert(c.kind);
    if (!c.expect_equal) {
      CHECK(m.raw.at("known_differences").contains(c.reason));
    }
    const DType out_dtype =
        (c.op == "quantize_per_tensor" || c.op == "quantize_per_channel") ? c.dtype : DType::kF32;
    const Tensor e = Load(c, c.expected, out_dtype);
    if (Varies(e)) ++varying;
  }
  CHECK(equal == m.raw.at("num_equal_cases").get<size_t>());
  CHECK(m.cases.size() - equal == m.raw.at("num_known_difference_cases").get<size_t>());
  for (const auto& [op, n] : m.raw.at("cases_per_op").items()) CHECK(per_op[op] == n.get<size_t>());
  for (const char* op : {"quantize_per_tensor", "quantize_per_channel", "dequantize", "fake_quantize_per_tensor_affine",
                         "fake_quantize_per_channel_affine"}) {
    INFO(op);
    CHECK(per_op[op] >= 5);
  }
  for (const char* kind : {"ties", "edges", "random", "known_difference"}) CHECK(kinds.count(kind) == 1);
  // Nearly every case has varying outputs (the exceptions are 1-element and saturation-only cases).
  CHECK(varying * 10 >= m.cases.size() * 9);
}

TEST_CASE("quantize equals pytorch on every ISA", "[pytorch][quantize]") {
  const auto cases = CasesFor({"quantize_per_tensor", "quantize_per_channel"}, true);
  REQUIRE(cases.size() > 50);
  RunAllVariants(cases);
}

TEST_CASE("dequantize equals pytorch on every ISA", "[pytorch][dequantize]") {
  const auto cases = CasesFor({"dequantize"}, true);
  REQUIRE(cases.size() > 30);
  RunAllVariants(cases);
}

TEST_CASE("fake-quantize equals pytorch on every ISA", "[pytorch][fake_quantize]") {
  const auto cases = CasesFor({"fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"}, true);
  REQUIRE(cases.size() > 50);
  RunAllVariants(cases);
}

TEST_CASE("every per-tensor and per-channel tie case equals pytorch", "[pytorch]") {
  // The ties are the point of the exercise: make sure they are present for every op and dtype.
  std::set<std::string> seen;
  for (const Case& c : LoadManifest().cases) {
    if (c.kind == "ties" && c.expect_equal) seen.insert(c.op + "/" + DTypeName(c.dtype));
  }
  for (const char* want : {"quantize_per_tensor/u8", "quantize_per_tensor/s8", "quantize_per_tensor/s32",
                           "fake_quantize_per_tensor_affine/u8", "fake_quantize_per_tensor_affine/s8"}) {
    INFO(want);
    CHECK(seen.count(want) == 1);
  }
  // numerics.md §2.1 item 3, spelled out: [2.5, 3.5, -2.5] at scale 1, zp 3, quint8 -> [5, 7, 1].
  const Case* doc = nullptr;
  for (const Case& c : LoadManifest().cases) {
    if (c.name == "doc_2_1_3_zp_after_rounding") doc = &c;
  }
  REQUIRE(doc != nullptr);
  const Tensor expected = Load(*doc, doc->expected, DType::kU8);
  REQUIRE(expected.NumElements() == 3);
  CHECK(expected.data<uint8_t>()[0] == 5);
  CHECK(expected.data<uint8_t>()[1] == 7);
  CHECK(expected.data<uint8_t>()[2] == 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Known differences: PyTorch's output is recorded, octet's documented behaviour is checked.

// octet's quantize of one value (DESIGN.md §4): exact zp + rne(f32(x * f32(1/scale))), clamped; ±Inf and huge
// values saturate; NaN gives the zero point (NanPolicy::kZeroPoint).
int64_t OctetQuantize(float x, float scale, int32_t zp, int64_t lo, int64_t hi) {
  const float v = x * (1.0f / scale);
  if (std::isnan(v)) return zp;
  const double r = std::nearbyint(static_cast<double>(v)) + zp;
  return static_cast<int64_t>(std::clamp(r, static_cast<double>(lo), static_cast<double>(hi)));
}

TEST_CASE("known differences: octet's documented behaviour where pytorch differs", "[pytorch]") {
  const auto cases = CasesFor({"quantize_per_tensor", "quantize_per_channel", "dequantize",
                               "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"},
                              false);
  REQUIRE(cases.size() == LoadManifest().raw.at("num_known_difference_cases").get<size_t>());
  REQUIRE(!cases.empty());
  for (const auto& [isa, threads] : Variants()) {
    const Context context = testing::ContextFor(isa, threads);
    for (const Case* cp : cases) {
      const Case& c = *cp;
      const std::string where = Where(c, isa, threads) + " [known difference: " + c.reason + "]";
      INFO(where);
      const QParams qparams = MakeQParams(c);
      bool differs_from_pytorch = false;
      if (c.op == "quantize_per_tensor" || c.op == "quantize_per_channel") {
        const Tensor x = Load(c, c.input, DType::kF32);
        const Tensor torch_q = Load(c, c.expected, c.dtype);
        const bool has_nan = std::any_of(x.values<float>().begin(), x.values<float>().end(),
                                         [](float v) { return std::isnan(v); });
        if (has_nan) {
          // Strict mode (the default) rejects NaN with an error.
          auto strict = Quantize(context, x, qparams);
          CHECK_FALSE(strict.ok());
        }
        QuantizeOptions options;
        options.nan_policy = NanPolicy::kZeroPoint;
        auto q = Quantize(context, x, qparams, options);
        if (!q.ok()) FAIL(where << ": " << q.status().ToString());
        for (int64_t i = 0; i < x.NumElements(); ++i) {
          const auto [s, zp] = ParamsAt(c, i);
          const int64_t want = OctetQuantize(x.data<float>()[i], s, zp, c.quant_min, c.quant_max);
          const int64_t got = IntAt(q->values(), i);
          if (got != want) {
            FAIL(where << ": index " << i << ": input " << FloatText(x.data<float>()[i]) << ": octet's rule gives "
                       << want << ", octet returned " << got << " (PyTorch: " << IntAt(torch_q, i) << ")");
          }
          differs_from_pytorch |= got != IntAt(torch_q, i);
        }
      } else if (c.op == "dequantize") {
        const Tensor qv = Load(c, c.input, c.dtype);
        const Tensor torch_y = Load(c, c.expected, DType::kF32);
        auto qt = QTensor::Create(qv, qparams);
        if (!qt.ok()) FAIL(where << ": " << qt.status().ToString());
        auto y = Dequantize(context, *qt);
        if (!y.ok()) FAIL(where << ": " << y.status().ToString());
        for (int64_t i = 0; i < qv.NumElements(); ++i) {
          const auto [s, zp] = ParamsAt(c, i);
          // Exact int64 difference, one rounding to float, one float multiply.
          const float want = static_cast<float>(IntAt(qv, i) - int64_t{zp}) * s;
          const float got = y->data<float>()[i];
          if (std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(want)) {
            FAIL(where << ": index " << i << ": q " << IntAt(qv, i) << ": octet's rule gives " << FloatText(want)
                       << ", octet returned " << FloatText(got) << " (PyTorch: " << FloatText(torch_y.data<float>()[i])
                       << ")");
          }
          differs_from_pytorch |= std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(torch_y.data<float>()[i]);
        }
      } else {
        const Tensor x = Load(c, c.input, DType::kF32);
        const Tensor torch_y = Load(c, c.expected, DType::kF32);
        const Tensor torch_m = Load(c, c.expected_mask, DType::kU8);
        const bool has_nan = std::any_of(x.values<float>().begin(), x.values<float>().end(),
                                         [](float v) { return std::isnan(v); });
        if (has_nan) {
          auto strict = FakeQuantize(context, x, qparams);
          CHECK_FALSE(strict.ok());
        }
        QuantizeOptions options;
        options.nan_policy = NanPolicy::kZeroPoint;
        auto fq = FakeQuantize(context, x, qparams, options);
        if (!fq.ok()) FAIL(where << ": " << fq.status().ToString());
        for (int64_t i = 0; i < x.NumElements(); ++i) {
          const auto [s, zp] = ParamsAt(c, i);
          const float xi = x.data<float>()[i];
          float want;
          uint8_t want_mask;
          if (std::isnan(xi)) {
            want = 0.0f;
            want_mask = 0;
          } else {
            const int64_t q = OctetQuantize(xi, s, zp, c.quant_min, c.quant_max);
            want = static_cast<float>(q - zp) * s;
            const double r = std::nearbyint(static_cast<double>(xi * (1.0f / s))) + zp;
            want_mask = (r >= static_cast<double>(c.quant_min) && r <= static_cast<double>(c.quant_max)) ? 1 : 0;
          }
          const float got = fq->output.data<float>()[i];
          const uint8_t got_mask = fq->mask.data<uint8_t>()[i];
          if (std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(want) || got_mask != want_mask) {
            FAIL(where << ": index " << i << ": input " << FloatText(xi) << ": octet's rule gives "
                       << FloatText(want) << " mask " << int{want_mask} << ", octet returned " << FloatText(got)
                       << " mask " << int{got_mask} << " (PyTorch: " << FloatText(torch_y.data<float>()[i])
                       << " mask " << int{torch_m.data<uint8_t>()[i]} << ")");
          }
          differs_from_pytorch |= std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(torch_y.data<float>()[i]);
          differs_from_pytorch |= got_mask != torch_m.data<uint8_t>()[i];
        }
      }
      // The manifest's claim: octet differs from PyTorch here (or, for expect_equal cases filed as known
      // differences, it does not).
      CHECK(differs_from_pytorch == !c.expect_equal);
    }
  }
}

}  // namespace
}  // namespace octet
