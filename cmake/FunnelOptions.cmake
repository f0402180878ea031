# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Build options. Each FUNNEL_ENABLE_* is AUTO (use it when found), ON (required: a clear error
# when missing) or OFF. The results are FUNNEL_HAS_* (0/1), also written to funnel/config.hpp.

set(_funnel_tristate AUTO ON OFF)

function(funnel_tristate_option name doc)
  set(${name} AUTO CACHE STRING "${doc} (AUTO, ON, OFF)")
  set_property(CACHE ${name} PROPERTY STRINGS ${_funnel_tristate})
  string(TOUPPER "${${name}}" value)
  if(value STREQUAL "TRUE" OR value STREQUAL "YES" OR value STREQUAL "1")
    set(value ON)
  elseif(value STREQUAL "FALSE" OR value STREQUAL "NO" OR value STREQUAL "0")
    set(value OFF)
  endif()
  if(NOT value IN_LIST _funnel_tristate)
    message(FATAL_ERROR "${name}='${${name}}' is not valid: use AUTO, ON or OFF")
  endif()
  set(${name} ${value} PARENT_SCOPE)
endfunction()

funnel_tristate_option(FUNNEL_ENABLE_CUDA "Build the CUDA backend and kernels")
funnel_tristate_option(FUNNEL_ENABLE_KOKKOS "Build the Kokkos kernels and interop")
funnel_tristate_option(FUNNEL_ENABLE_HDF5 "Build HDF5 snapshots and checkpoints")
option(FUNNEL_BUILD_TESTS "Build the tests" ${PROJECT_IS_TOP_LEVEL})
option(FUNNEL_BUILD_BENCHMARKS "Build funnel-bench" ON)
option(FUNNEL_BUILD_APPS "Build funnel-stencil" ON)
option(FUNNEL_BUILD_REPORT "Build funnel-report and its CUPTI injection library (report/)" ON)

# --- MPI (required) ---------------------------------------------------------------------------
find_package(MPI REQUIRED COMPONENTS C CXX)
find_package(Threads REQUIRED)

# --- CUDA -------------------------------------------------------------------------------------
set(FUNNEL_HAS_CUDA 0)
if(NOT FUNNEL_ENABLE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "nvcc")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Machine code for Volta, Ampere and Hopper and Hopper's PTX, which the driver compiles for
      # newer GPUs. CUDA 13 no longer builds for Volta: Turing takes its place there. A build
      # for one GPU only is faster: -DCMAKE_CUDA_ARCHITECTURES=native (or 90).
      execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --version OUTPUT_VARIABLE _funnel_nvcc
                      ERROR_QUIET)
      set(_funnel_oldest 70)
      if(_funnel_nvcc MATCHES "release ([0-9]+)\\." AND CMAKE_MATCH_1 GREATER_EQUAL 13)
        set(_funnel_oldest 75)
      endif()
      set(CMAKE_CUDA_ARCHITECTURES "${_funnel_oldest}-real;80-real;90-real;90-virtual"
          CACHE STRING "CUDA architectures to build for")
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(FUNNEL_HAS_CUDA 1)
  elseif(FUNNEL_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "FUNNEL_ENABLE_CUDA=ON but no CUDA compiler (nvcc) was found; "
                        "set CMAKE_CUDA_COMPILER or use FUNNEL_ENABLE_CUDA=OFF")
  endif()
endif()

# --- Kokkos -----------------------------------------------------------------------------------
set(FUNNEL_HAS_KOKKOS 0)
if(NOT FUNNEL_ENABLE_KOKKOS STREQUAL "OFF")
  if(FUNNEL_ENABLE_KOKKOS STREQUAL "ON")
    find_package(Kokkos REQUIRED)
  else()
    find_package(Kokkos QUIET)
  endif()
  if(Kokkos_FOUND)
    set(FUNNEL_HAS_KOKKOS 1)
    include(FunnelKokkosRepair)
    funnel_repair_kokkos_target()
  endif()
endif()

# --- HDF5 -------------------------------------------------------------------------------------
set(FUNNEL_HAS_HDF5 0)
set(FUNNEL_HAS_PARALLEL_HDF5 0)
if(NOT FUNNEL_ENABLE_HDF5 STREQUAL "OFF")
  # Debian installs serial and parallel HDF5 side by side; HDF5_PREFER_PARALLEL picks one.
  if(NOT DEFINED HDF5_PREFER_PARALLEL)
    set(HDF5_PREFER_PARALLEL ON)
  endif()
  if(FUNNEL_ENABLE_HDF5 STREQUAL "ON")
    find_package(HDF5 REQUIRED COMPONENTS C)
  else()
    find_package(HDF5 QUIET COMPONENTS C)
  endif()
  if(HDF5_FOUND)
    set(FUNNEL_HAS_HDF5 1)
    if(HDF5_IS_PARALLEL)
      set(FUNNEL_HAS_PARALLEL_HDF5 1)
    endif()
  endif()
endif()

# --- OpenMP (host kernels) -------------------------------------------------------------------
set(FUNNEL_HAS_OPENMP 0)
find_package(OpenMP COMPONENTS CXX)
if(OpenMP_CXX_FOUND)
  set(FUNNEL_HAS_OPENMP 1)
endif()

# --- CLI11 and nlohmann-json (header-only) ----------------------------------------------------
# nlohmann-json writes funnel's trace files and the apps' JSON; CLI11 parses the apps' command
# lines. Both are build-only dependencies: no installed funnel header includes them, so code
# that links funnel needs neither (see FunnelConfig.cmake.in). On a machine without the
# packages, point CMAKE_PREFIX_PATH at an unpacked .deb (scripts/gpu/fetch-debs.sh).
find_package(nlohmann_json 3.9 REQUIRED CONFIG)
if(FUNNEL_BUILD_APPS OR FUNNEL_BUILD_BENCHMARKS)
  find_package(CLI11 2.1 REQUIRED CONFIG)
endif()

# --- tests / benchmarks -----------------------------------------------------------------------
if(FUNNEL_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
