# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# funnel_add_test(NAME <name> SOURCES <src>... [RANKS n] [GPUS n] [LABELS l...]
#                 [LIBRARIES lib...] [ARGS arg...] [TIMEOUT s] [NO_MAIN])
#
# One helper for every C++ test:
# - RANKS n (default 1): n > 1, or RANKS given explicitly, runs the test under
#   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} n and links the MPI-aware main, which
#   initialises MPI and fails the test when any rank fails.
# - GPUS n (default 0): n > 0 links the GPU main, which exits with the skip code (77) when no
#   CUDA device is present; without the CUDA backend compiled in, the test is registered as a
#   command that skips. Label "gpu" is added.
# - NO_MAIN: the sources bring their own main().
set(FUNNEL_TEST_SKIP_CODE 77)

# Let OpenMPI run as root and with more ranks than cores (CI machines have 2 cores).
set(FUNNEL_MPI_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
    OMPI_MCA_btl_vader_single_copy_mechanism=none)

function(funnel_add_test)
  cmake_parse_arguments(T "NO_MAIN" "NAME;RANKS;GPUS;TIMEOUT" "SOURCES;LABELS;LIBRARIES;ARGS" ${ARGN})
  if(NOT T_NAME OR NOT T_SOURCES)
    message(FATAL_ERROR "funnel_add_test: NAME and SOURCES are required")
  endif()
  set(use_mpi OFF)
  if(DEFINED T_RANKS)
    set(use_mpi ON)
  else()
    set(T_RANKS 1)
  endif()
  if(NOT DEFINED T_GPUS)
    set(T_GPUS 0)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set(labels ${T_LABELS})
  if(T_GPUS GREATER 0)
    list(APPEND labels gpu)
    if(NOT FUNNEL_HAS_CUDA)
      add_test(NAME ${T_NAME} COMMAND ${CMAKE_COMMAND} -E echo
               "skipped: ${T_NAME} needs a GPU and this build has no CUDA backend")
      set_tests_properties(${T_NAME} PROPERTIES LABELS "${labels}" SKIP_REGULAR_EXPRESSION
                           "skipped:")
      return()
    endif()
  endif()
  list(REMOVE_DUPLICATES labels)

  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE funnel::framework GTest::gtest ${T_LIBRARIES})
  funnel_target_warnings(${T_NAME})
  if(NOT T_NO_MAIN)
    if(T_GPUS GREATER 0 AND use_mpi)
      target_link_libraries(${T_NAME} PRIVATE funnel_test_main_mpi_gpu)
    elseif(T_GPUS GREATER 0)
      target_link_libraries(${T_NAME} PRIVATE funnel_test_main_gpu)
    elseif(use_mpi)
      target_link_libraries(${T_NAME} PRIVATE funnel_test_main_mpi)
    else()
      target_link_libraries(${T_NAME} PRIVATE funnel_test_main)
    endif()
  endif()

  if(use_mpi)
    add_test(NAME ${T_NAME}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${T_NAME}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${FUNNEL_MPI_TEST_ENV}")
  else()
    add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${labels}" PROCESSORS ${T_RANKS}
                       TIMEOUT ${T_TIMEOUT} SKIP_RETURN_CODE ${FUNNEL_TEST_SKIP_CODE})
endfunction()

# funnel_private_mpi_dirs(): deferred to the end of each test folder's CMakeLists.txt
# (`cmake_language(DEFER CALL funnel_private_mpi_dirs)` at its top, so that an early return()
# still reaches it). Open MPI keeps the directories of all of a user's jobs in one top directory
# ($TMPDIR/ompi.<host>.<uid>), which a job that ends removes once it looks empty; a job starting
# at that moment fails to make its own inside ("orte_init failed", open-mpi/ompi#3818). ctest
# runs tests side by side, so each test's jobs get a top directory of their own under the build
# tree (orte_tmpdir_base; Open MPI makes it). funnel's own files still go to TMPDIR. Drivers that
# start jobs side by side themselves give each its own (tests/support/mpi_dirs.py).
# tests/CMakeLists.txt checks that every folder with tests asked for this.
function(funnel_private_mpi_dirs)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT
                 "OMPI_MCA_orte_tmpdir_base=${PROJECT_BINARY_DIR}/mpi-dirs/${test}")
  endforeach()
  set_property(GLOBAL APPEND PROPERTY FUNNEL_PRIVATE_MPI_DIR_FOLDERS "${CMAKE_CURRENT_SOURCE_DIR}")
endfunction()
