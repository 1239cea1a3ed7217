// The dense stem's name mark (see dense_stem.h).
#include "io/onnx/dense_stem.h"

#include <fmt/format.h>

#include <cstdio>

namespace octet {
namespace {

constexpr std::string_view kDenseStemMark = ".octet_dense_stem_";

std::string DenseStemSuffix(const DenseStem& s) {
  return fmt::format("1x{}x{}_k{}x{}_s{}x{}_p{}x{}x{}x{}", s.height, s.width, s.kernel_h, s.kernel_w, s.stride_h,
                     s.stride_w, s.pad_top, s.pad_left, s.pad_bottom, s.pad_right);
}

}  // namespace

bool DenseStem::Valid() const {
  constexpr int64_t kMaxDim = 1 << 16;  // any real image; keeps the products below in range
  for (int64_t v : {height, width, kernel_h, kernel_w, stride_h, stride_w}) {
    if (v < 1 || v > kMaxDim) return false;
  }
  for (int64_t p : {pad_top, pad_left, pad_bottom, pad_right}) {
    if (p < 0 || p > kMaxDim) return false;
  }
  return height + pad_top + pad_bottom >= kernel_h && width + pad_left + pad_right >= kernel_w;
}

std::string DenseStemName(const std::string& conv_name, const DenseStem& stem) {
  return conv_name + std::string(kDenseStemMark) + DenseStemSuffix(stem);
}

std::optional<DenseStem> ParseDenseStemName(std::string_view name, std::string* conv_name) {
  const size_t at = name.rfind(kDenseStemMark);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string suffix(name.substr(at + kDenseStemMark.size()));
  DenseStem s;
  long long v[10];
  if (std::sscanf(suffix.c_str(), "1x%lldx%lld_k%lldx%lld_s%lldx%lld_p%lldx%lldx%lldx%lld", &v[0], &v[1], &v[2], &v[3],
                  &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) != 10) {
    return std::nullopt;
  }
  s.height = v[0], s.width = v[1], s.kernel_h = v[2], s.kernel_w = v[3], s.stride_h = v[4], s.stride_w = v[5];
  s.pad_top = v[6], s.pad_left = v[7], s.pad_bottom = v[8], s.pad_right = v[9];
  // Exactly the form DenseStemName writes (no trailing text, no leading zeros or signs).
  if (!s.Valid() || DenseStemSuffix(s) != suffix) return std::nullopt;
  if (conv_name != nullptr) *conv_name = std::string(name.substr(0, at));
  return s;
}

}  // namespace octet
