# Warning, floating-point and sanitizer flags shared by every octet target.
#
# -ffp-contract=off: the arithmetic contract (DESIGN.md §4) forbids fusing a multiply and an add into an FMA;
# scalar references and SIMD kernels must round each operation separately to stay bit-exact.
#
# A static library's link interface names octet_flags, so it is exported with the libraries (as octet::flags): its
# compile options are for octet's own sources only (BUILD_INTERFACE); its link options (sanitizer runtimes) reach
# the programs that link a sanitized octet.
add_library(octet_flags INTERFACE)
target_compile_options(octet_flags INTERFACE "$<BUILD_INTERFACE:-Wall;-Wextra;-ffp-contract=off;-fno-math-errno>")
if(OCTET_WERROR)
  target_compile_options(octet_flags INTERFACE "$<BUILD_INTERFACE:-Werror>")
endif()
if(OCTET_SANITIZE)
  set(_octet_sanitize_flags -fsanitize=${OCTET_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  # UBSan's pointer-overflow check instruments every address computation of the fully unrolled SIMD kernels: with it
  # clang-14 took 65 s to compile qdwconv__avx2.cc under ASan + UBSan, without it 29 s (qgemm__avx512vnni.cc 37 ->
  # 30 s). So the kernel objects (OCTET_KERNEL_OBJECTS, set by OctetIsa.cmake) leave it out; their loads and stores
  # stay checked by ASan, their arithmetic by UBSan's other checks. It must follow -fsanitize= to take effect, hence
  # here and not as the kernel targets' own option (those come first on the command line).
  if(OCTET_SANITIZE MATCHES "undefined" AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    list(APPEND _octet_sanitize_flags "$<$<BOOL:$<TARGET_PROPERTY:OCTET_KERNEL_OBJECTS>>:-fno-sanitize=pointer-overflow>")
  endif()
  target_compile_options(octet_flags INTERFACE "$<BUILD_INTERFACE:${_octet_sanitize_flags}>")
  target_link_options(octet_flags INTERFACE -fsanitize=${OCTET_SANITIZE})
endif()
