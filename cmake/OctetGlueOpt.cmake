# OCTET_GLUE_CXX_FLAGS: compile options added to every octet target except the per-ISA kernel objects
# (octet_add_isa_objects in OctetIsa.cmake), so a build can optimize the glue around the kernels less than the kernels.
#
# The aarch64 CI build sets it to -O1 (CMakePresets.json): that build exists to run the NEON kernels under qemu, and
# it spends most of its time compiling the same graph, quantization and I/O code that the x86 release build already
# compiles at -O3 with the same warnings. The kernels keep the build type's flags (-O3), so what qemu runs is what
# ships. Empty (the default) changes nothing.
#
# The sanitizer CI build sets -O0 on OCTET_GLUE_DIRS = the numeric suite, test vectors and tools: code its tests spend
# little time in. Not on quant/: with it the ASan `onnx` entry (which quantizes many models) took 215 s against
# 157 s before, although it no longer ran the large-model case, more than quant's 30 s of compile it saved. Nor on
# io/ (the fuzzers run it), kernels, float operators or the executor. The sanitizers check -O0 code as fully as -O1.
set(OCTET_GLUE_CXX_FLAGS "" CACHE STRING "Compile options for octet's non-kernel targets (e.g. -O1); empty: none")
set(OCTET_GLUE_DIRS "core;ops;observers;quant;numeric_suite;io;bench/harness"
    CACHE STRING "Folders whose non-kernel targets get OCTET_GLUE_CXX_FLAGS (tools/ is added when built)")

# octet_apply_glue_flags(<dir>...): adds OCTET_GLUE_CXX_FLAGS to the compiled targets defined under those folders
# (recursively), skipping the kernel objects. Called once, after every target exists.
function(octet_apply_glue_flags)
  if(NOT OCTET_GLUE_CXX_FLAGS)
    return()
  endif()
  get_property(kernels GLOBAL PROPERTY OCTET_KERNEL_TARGETS)
  set(dirs ${ARGN})
  set(applied "")
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      get_target_property(type ${t} TYPE)
      if(t IN_LIST kernels OR NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
        continue()
      endif()
      target_compile_options(${t} PRIVATE ${OCTET_GLUE_CXX_FLAGS})
      list(APPEND applied ${t})
    endforeach()
  endwhile()
  list(LENGTH applied n)
  message(STATUS "octet: ${OCTET_GLUE_CXX_FLAGS} on ${n} non-kernel targets; the kernel objects keep ${CMAKE_BUILD_TYPE}'s flags")
endfunction()
