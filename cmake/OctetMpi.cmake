# MPI for `octet calibrate --mpi` (issue 19): optional. OCTET_MPI AUTO uses MPI when CMake finds it (Debian:
# libopenmpi-dev for the library, openmpi-bin for mpirun), ON requires it, OFF builds without. Sets OCTET_WITH_MPI
# and says at configure time whether MPI was found.
set(OCTET_MPI "AUTO" CACHE STRING "MPI for octet calibrate --mpi: AUTO (when found), ON, OFF")
set_property(CACHE OCTET_MPI PROPERTY STRINGS AUTO ON OFF)
set(OCTET_WITH_MPI OFF)
if(NOT OCTET_MPI STREQUAL "OFF" AND NOT CMAKE_CROSSCOMPILING)
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(OCTET_WITH_MPI ON)
    message(STATUS "octet: MPI ${MPI_CXX_VERSION} found (${MPI_CXX_COMPILER}): octet calibrate --mpi is built")
  elseif(OCTET_MPI STREQUAL "ON")
    message(FATAL_ERROR "octet: OCTET_MPI=ON but MPI was not found (install libopenmpi-dev openmpi-bin)")
  else()
    message(STATUS "octet: MPI not found: octet calibrate --mpi is not built (install libopenmpi-dev openmpi-bin)")
  endif()
endif()
