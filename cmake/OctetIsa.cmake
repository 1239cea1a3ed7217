# The closed ISA vocabulary (core/isa.h) as compiler flags: one object library per ISA carries its flags, so no
# file outside it is built for that ISA and no global -march is needed. Every ISA of the target architecture is
# compiled in every build; which ones run is decided at run time by the Context.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(OCTET_ARCH "x86_64")
  set(OCTET_ISAS avx2 avxvnni avx512vnni amx)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(OCTET_ARCH "aarch64")
  set(OCTET_ISAS neon neondot i8mm)
else()
  set(OCTET_ARCH "generic")
  set(OCTET_ISAS)
endif()
message(STATUS "octet: architecture ${OCTET_ARCH}, SIMD ISAs compiled in: ${OCTET_ISAS}")

set(_octet_x86_avx2 -mavx2 -mfma -mf16c -mbmi -mbmi2 -mlzcnt -mpopcnt)
set(_octet_x86_avx512 ${_octet_x86_avx2} -mavx512f -mavx512cd -mavx512bw -mavx512dq -mavx512vl)
set(OCTET_ISA_FLAGS_avx2 ${_octet_x86_avx2})
set(OCTET_ISA_FLAGS_avxvnni ${_octet_x86_avx2} -mavxvnni)
set(OCTET_ISA_FLAGS_avx512vnni ${_octet_x86_avx512} -mavx512vnni)
set(OCTET_ISA_FLAGS_amx ${_octet_x86_avx512} -mavx512vnni -mamx-tile -mamx-int8)
set(OCTET_ISA_FLAGS_neon -march=armv8-a)
set(OCTET_ISA_FLAGS_neondot -march=armv8.2-a+dotprod)
set(OCTET_ISA_FLAGS_i8mm -march=armv8.2-a+dotprod+i8mm)

# octet_add_isa_objects(<prefix> <dir>): one object library <prefix>_<isa> per ISA of this architecture, built
# from the files <dir>/**/*__<isa>.cc with that ISA's flags, plus <prefix>_scalar from *__scalar.cc.
# Sets <prefix>_OBJECT_LIBRARIES in the caller's scope.
function(octet_add_isa_objects prefix dir)
  set(libs)
  foreach(isa scalar ${OCTET_ISAS})
    file(GLOB_RECURSE srcs CONFIGURE_DEPENDS "${dir}/*__${isa}.cc")
    if(NOT srcs)
      continue()
    endif()
    set(lib ${prefix}_${isa})
    add_library(${lib} OBJECT ${srcs})
    target_link_libraries(${lib} PRIVATE octet_flags octet_core)
    set_target_properties(${lib} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    if(NOT isa STREQUAL "scalar")
      target_compile_options(${lib} PRIVATE ${OCTET_ISA_FLAGS_${isa}})
      # GCC 12 reports its own _mm512_undefined_* helpers inside intrinsic headers as maybe-uninitialized.
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${lib} PRIVATE -Wno-maybe-uninitialized)
      endif()
    endif()
    # Marks the kernel objects for octet_flags' sanitizer options (OctetCompilerFlags.cmake).
    set_target_properties(${lib} PROPERTIES OCTET_KERNEL_OBJECTS ON)
    list(APPEND libs ${lib})
    # Kernel objects keep the build type's optimization when OCTET_GLUE_CXX_FLAGS lowers the rest (OctetGlueOpt.cmake).
    set_property(GLOBAL APPEND PROPERTY OCTET_KERNEL_TARGETS ${lib})
  endforeach()
  set(${prefix}_OBJECT_LIBRARIES ${libs} PARENT_SCOPE)
endfunction()
