# OCTET_PYTHON: decides whether the Python module (python/) is built, and says so at configure time.
#
# AUTO builds it when pybind11 (Debian's pybind11-dev) and Python 3 with its headers are found; ON requires them;
# OFF skips it. The interpreter is /usr/bin/python3 (Debian's) unless Python3_EXECUTABLE is set: a pyenv python3
# earlier on PATH would otherwise get a module its own ABI cannot load.
#
# The module is a shared object that links octet's static libraries, so when it is built every library is compiled
# position-independent (-fPIC; -fno-semantic-interposition keeps g++ inlining as without it).
set(OCTET_WITH_PYTHON OFF)
if(NOT OCTET_PYTHON STREQUAL "OFF")
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python the octet module is built for")
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(Python3_FOUND)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(OCTET_WITH_PYTHON ON)
    message(STATUS "octet: Python module ON (pybind11 ${pybind11_VERSION}, ${Python3_EXECUTABLE} "
                   "${Python3_VERSION}); import it with PYTHONPATH=${CMAKE_BINARY_DIR}/python")
  elseif(OCTET_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "OCTET_PYTHON=ON but pybind11 or Python 3 headers were not found: install pybind11-dev and "
                        "python3-dev (scripts/install_deps.sh), or configure with -DOCTET_PYTHON=OFF")
  else()
    message(STATUS "octet: Python module OFF (pybind11 or Python 3 headers not found: install pybind11-dev and "
                   "python3-dev)")
  endif()
else()
  message(STATUS "octet: Python module OFF (OCTET_PYTHON=OFF)")
endif()

if(OCTET_WITH_PYTHON)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-fno-semantic-interposition)
  endif()
endif()
