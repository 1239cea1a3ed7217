# Install rules: the libraries, their headers under include/octet/ (same layout as the source tree, so the headers'
# own "core/status.h" includes resolve), the octet and octet-runner programs, find_package(octet CONFIG) files with
# targets in the namespace octet::, and pkg-config files (octet.pc, octet-runtime.pc).
#
# Two export sets, which find_package(octet) loads as two components:
#   runtime  every library without ONNX (octet::core ... octet::quant, octet::runtime): needs fmt, nlohmann_json and
#            oneTBB (when OCTET_THREADING is tbb) in the consumer's find_package path;
#   onnx     octet::onnx (needs protobuf, libonnx and libonnx_proto) and octet::octet, everything in one target.
# A library joins with one line in the top-level CMakeLists.txt, in dependency order (a library after what it links):
#     octet_install_library(<target> [RUNTIME] [ONNX] HEADERS <dir>...)
# RUNTIME: it is part of the minimal .octet runtime (octet-runtime.pc); ONNX: it goes to the onnx set. Its export
# name is the target name without "octet_" (octet_numeric_suite -> octet::numeric_suite), and octet::octet links it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(OCTET_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}/octet")
set(OCTET_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/octet")
# Headers only the library's own sources include, which need packages the exported targets do not bring (xsimd,
# the generated ONNX protobuf headers). Per-ISA folders (ops/ukernels/<family>/, ...) are never installed.
# io/digits_csv.h belongs to octet_digits_data, the demo's data reader, which is not installed (the demo is).
set(OCTET_PRIVATE_HEADERS observers/kernels/xsimd_kernels.h io/onnx/onnx_tensor.h io/onnx/opset_adapters.h io/digits_csv.h
    io/onnx/dense_stem.h io/onnx/qdq_export_dense_stem.h io/onnx/qdq_import_dense_stem.h)

set_property(GLOBAL PROPERTY OCTET_INSTALLED_LIBRARIES "")
set_property(GLOBAL PROPERTY OCTET_RUNTIME_LIBRARIES "")

# Helper targets the libraries link (privately, but a static library's link interface still names them): exported
# under their own names (octet::flags, octet::dep_fmt, ...), never meant to be linked by users directly.
function(octet_export_helper target export_name)
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
    install(TARGETS ${target} EXPORT ${ARGN})
  endif()
endfunction()

function(octet_install_library target)
  cmake_parse_arguments(arg "RUNTIME;ONNX" "" "HEADERS" ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "octet_install_library: no target '${target}'")
  endif()
  string(REGEX REPLACE "^octet_" "" export_name "${target}")
  set(set_name octetTargets)
  if(arg_ONNX)
    set(set_name octetOnnxTargets)
  endif()
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  if(BUILD_SHARED_LIBS)
    # Installed shared libraries find each other beside themselves, wherever the prefix is.
    set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN")
  endif()
  target_include_directories(${target} PUBLIC "$<INSTALL_INTERFACE:${OCTET_INSTALL_INCLUDEDIR}>")
  install(TARGETS ${target} EXPORT ${set_name}
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  foreach(dir ${arg_HEADERS})
    file(GLOB headers RELATIVE "${PROJECT_SOURCE_DIR}" CONFIGURE_DEPENDS
         "${PROJECT_SOURCE_DIR}/${dir}/*.h" "${PROJECT_SOURCE_DIR}/${dir}/*.inc")
    list(REMOVE_ITEM headers ${OCTET_PRIVATE_HEADERS})
    list(TRANSFORM headers PREPEND "${PROJECT_SOURCE_DIR}/")
    install(FILES ${headers} DESTINATION "${OCTET_INSTALL_INCLUDEDIR}/${dir}")
  endforeach()
  set_property(GLOBAL APPEND PROPERTY OCTET_INSTALLED_LIBRARIES ${target})
  if(arg_RUNTIME)
    set_property(GLOBAL APPEND PROPERTY OCTET_RUNTIME_LIBRARIES ${target})
  endif()
endfunction()

# -l flags for a list of targets in dependency order: dependents first, as a static link needs them.
function(_octet_pc_libs out)
  set(flags "")
  foreach(t ${ARGN})
    get_target_property(name ${t} OUTPUT_NAME)
    if(NOT name)
      set(name ${t})
    endif()
    list(PREPEND flags "-l${name}")
  endforeach()
  list(JOIN flags " " flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# After every octet_install_library: the octet::octet target, the programs, the export and package files.
function(octet_install_finish)
  get_property(all GLOBAL PROPERTY OCTET_INSTALLED_LIBRARIES)
  get_property(runtime GLOBAL PROPERTY OCTET_RUNTIME_LIBRARIES)

  set(everything_set octetTargets)
  if(TARGET octet_onnx)
    set(everything_set octetOnnxTargets)
  endif()
  add_library(octet_everything INTERFACE)
  target_link_libraries(octet_everything INTERFACE ${all})
  set_target_properties(octet_everything PROPERTIES EXPORT_NAME octet)
  install(TARGETS octet_everything EXPORT ${everything_set})
  add_library(octet::octet ALIAS octet_everything)

  octet_export_helper(octet_flags flags octetTargets)
  foreach(dep fmt json tbb eigen)
    octet_export_helper(octet_dep_${dep} dep_${dep} octetTargets)
  endforeach()
  octet_export_helper(octet_fmt_compiled fmt_compiled octetTargets)  # cross builds only (third_party/)
  if(TARGET octet_onnx)
    octet_export_helper(octet_dep_onnx dep_onnx octetOnnxTargets)
  endif()

  if(OCTET_BUILD_TOOLS)
    set(tool_targets octet-runner)
    if(TARGET octet)
      list(APPEND tool_targets octet)
    endif()
    if(BUILD_SHARED_LIBS)
      file(RELATIVE_PATH lib_from_bin "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${CMAKE_INSTALL_LIBDIR}")
      set_target_properties(${tool_targets} PROPERTIES INSTALL_RPATH "$ORIGIN/${lib_from_bin}")
    endif()
    install(TARGETS ${tool_targets} RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
    # `octet demo` looks for its data in <prefix>/share/octet beside the installed program.
    install(FILES "${PROJECT_SOURCE_DIR}/data/digits.csv.gz" "${PROJECT_SOURCE_DIR}/data/README.md"
            DESTINATION "${CMAKE_INSTALL_DATADIR}/octet")
  endif()

  install(EXPORT octetTargets NAMESPACE octet:: DESTINATION "${OCTET_INSTALL_CMAKEDIR}")
  if(TARGET octet_onnx)
    install(EXPORT octetOnnxTargets NAMESPACE octet:: DESTINATION "${OCTET_INSTALL_CMAKEDIR}")
    set(OCTET_WITH_ONNX ON)
  else()
    set(OCTET_WITH_ONNX OFF)
  endif()
  configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/octetConfig.cmake.in"
                                "${PROJECT_BINARY_DIR}/octetConfig.cmake"
                                INSTALL_DESTINATION "${OCTET_INSTALL_CMAKEDIR}")
  write_basic_package_version_file("${PROJECT_BINARY_DIR}/octetConfigVersion.cmake"
                                   VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMajorVersion)
  install(FILES "${PROJECT_BINARY_DIR}/octetConfig.cmake" "${PROJECT_BINARY_DIR}/octetConfigVersion.cmake"
          DESTINATION "${OCTET_INSTALL_CMAKEDIR}")

  # pkg-config: static libraries need every library and dependency on the link line, so they are in Libs and
  # Requires (not .private), and `pkg-config --libs octet-runtime` is enough to link.
  set(requires "fmt")
  if(OCTET_THREADING STREQUAL "tbb")
    list(APPEND requires tbb)
  endif()
  list(JOIN requires ", " OCTET_PC_REQUIRES)
  file(RELATIVE_PATH OCTET_PC_PREFIX_FROM_PCDIR "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" OCTET_PC_PREFIX_FROM_PCDIR "${OCTET_PC_PREFIX_FROM_PCDIR}")
  _octet_pc_libs(OCTET_PC_LIBS ${runtime})
  set(OCTET_PC_NAME "octet-runtime")
  set(OCTET_PC_DESCRIPTION "octet's minimal runtime: load and run .octet int8 models (no ONNX, no protobuf)")
  configure_file("${PROJECT_SOURCE_DIR}/cmake/octet.pc.in" "${PROJECT_BINARY_DIR}/octet-runtime.pc" @ONLY)

  list(APPEND requires nlohmann_json)
  set(OCTET_PC_EXTRA_LIBS "")
  if(TARGET octet_onnx)
    list(APPEND requires protobuf)
    set(OCTET_PC_EXTRA_LIBS " -lonnx -lonnx_proto")
  endif()
  list(JOIN requires ", " OCTET_PC_REQUIRES)
  _octet_pc_libs(OCTET_PC_LIBS ${all})
  set(OCTET_PC_NAME "octet")
  set(OCTET_PC_DESCRIPTION "octet, a C++20 int8 quantization engine: every library")
  configure_file("${PROJECT_SOURCE_DIR}/cmake/octet.pc.in" "${PROJECT_BINARY_DIR}/octet.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/octet.pc" "${PROJECT_BINARY_DIR}/octet-runtime.pc"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

  # What an install needs built: CI builds just these before `cmake --install` (scripts/run_all_tests.sh install).
  set(build_targets ${all})
  if(TARGET octet-runner)
    list(APPEND build_targets octet-runner)
  endif()
  if(TARGET octet)
    list(APPEND build_targets octet)
  endif()
  if(OCTET_WITH_PYTHON)
    list(APPEND build_targets octet_python)  # python/: the extension and its package
  endif()
  list(JOIN build_targets "\n" build_targets)
  file(WRITE "${PROJECT_BINARY_DIR}/octet_install_targets.txt" "${build_targets}\n")
endfunction()
