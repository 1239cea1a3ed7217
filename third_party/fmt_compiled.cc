// fmt's compiled part, for cross builds only. Debian ships libfmt for the host alone, so a cross build cannot link
// it; using fmt header-only instead (FMT_HEADER_ONLY) recompiles fmt's whole implementation in every translation unit
// that includes it, which made the aarch64 build several times slower than the native one. Here the implementation
// (Debian's fmt/format-inl.h, not a copy) is compiled once, and the templates that fmt's headers declare for the
// compiled library to provide are instantiated, so the rest of the tree uses fmt as it does natively.
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;

template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl<wchar_t>(locale_ref) -> wchar_t;

template void vformat_to(buffer<char>& buf, string_view fmt, basic_format_args<FMT_BUFFER_CONTEXT(char)> args,
                         locale_ref loc);

}  // namespace detail
FMT_END_NAMESPACE
