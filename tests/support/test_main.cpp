// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The main() of funnel's GoogleTest executables. Compiled four ways (see tests/CMakeLists.txt):
// FUNNEL_TEST_WITH_MPI initialises MPI (MPI_THREAD_FUNNELED) and fails when any rank fails;
// FUNNEL_TEST_NEEDS_GPU exits with CTest's skip code (77) when no CUDA device is visible, so such
// tests show as skipped, never passed, on machines without a GPU.
#include <gtest/gtest.h>

#include <cstdio>

#include "funnel/runtime/backend_kind.hpp"

#if FUNNEL_TEST_WITH_MPI
#include <mpi.h>
#endif

#if FUNNEL_TEST_NEEDS_GPU
namespace {
constexpr int skip_code = 77;  // CTest's SKIP_RETURN_CODE for funnel tests
}
#endif

int main(int argc, char** argv) {
#if FUNNEL_TEST_WITH_MPI
  // FUNNELED: io's snapshot writer writes blocks on a thread that makes no MPI call.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
#endif
#if FUNNEL_TEST_NEEDS_GPU
  int have_gpu = funnel::cuda_device_count() > 0 ? 1 : 0;
#if FUNNEL_TEST_WITH_MPI
  MPI_Allreduce(MPI_IN_PLACE, &have_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#endif
  if (have_gpu == 0) {
    std::printf("skipped: no CUDA device visible\n");
#if FUNNEL_TEST_WITH_MPI
    MPI_Finalize();
#endif
    return skip_code;
  }
#endif
  ::testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
#if FUNNEL_TEST_WITH_MPI
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
#endif
  return failed;
}
