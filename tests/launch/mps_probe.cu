// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The probe scripts/gpu/launch-check.sh runs through funnel-run on the GPU machine: each rank
// prints the UUID its CUDA runtime sees (to check funnel-run's binding), then, after a barrier,
// runs one under-occupying kernel (1 block of 32 threads) of fixed work and reports its wall time.
// Kernels of ranks that MPS serves overlap; time-sliced ranks' kernels take turns.
//   funnel_mps_probe [--iters N] [--ms MS] [--hold-ms MS]
//   --iters N    work per kernel (dependent FMAs per thread); default: calibrated to --ms alone
//   --ms MS      target kernel time when calibrating (default 200)
//   --hold-ms MS keep the context open this long after the kernel (so nvidia-smi can see it)
// Output, one line per rank: probe rank=R pid=P local_rank=L uuid=GPU-... visible=... mps_pipe=...
// iters=N kernel_ms=T
#include <cuda_runtime.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "mps_program_support.hpp"

namespace {

__global__ void fixed_work(long long iters, float* out) {
  float a = static_cast<float>(threadIdx.x);
  for (long long i = 0; i < iters; ++i) a = fmaf(a, 0.999999f, 0.5f);
  out[threadIdx.x] = a;
}

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "funnel_mps_probe: %s failed: %s\n", what, cudaGetErrorName(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

double run_kernel(long long iters, float* out) {
  const double start = MPI_Wtime();
  fixed_work<<<1, 32>>>(iters, out);
  check(cudaGetLastError(), "kernel launch");
  check(cudaDeviceSynchronize(), "kernel");
  return (MPI_Wtime() - start) * 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const auto options = mps_program::read_options(argc, argv, "funnel_mps_probe",
                                                 {{"--iters", 0}, {"--ms", 200}, {"--hold-ms", 0}});
  auto iters = static_cast<long long>(options.at("--iters"));
  const double target_ms = options.at("--ms");
  const auto hold_ms = static_cast<int>(options.at("--hold-ms"));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int device = 0;
  check(cudaFree(nullptr), "context creation");
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp props{};
  check(cudaGetDeviceProperties(&props, device), "cudaGetDeviceProperties");
  float* out = nullptr;
  check(cudaMalloc(&out, 32 * sizeof(float)), "cudaMalloc");
  run_kernel(1000, out);  // warm-up: module load, first launch
  if (iters <= 0) {
    const long long probe_iters = 1 << 20;
    const double ms = run_kernel(probe_iters, out);
    iters = static_cast<long long>(probe_iters * target_ms / (ms > 0 ? ms : 1));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double kernel_ms = run_kernel(iters, out);
  std::printf(
      "probe rank=%d pid=%d local_rank=%s uuid=%s visible=%s mps_pipe=%s iters=%lld "
      "kernel_ms=%.1f\n",
      rank, static_cast<int>(getpid()), mps_program::env_or("FUNNEL_LOCAL_RANK", "-"),
      mps_program::format_uuid(props.uuid).c_str(),
      mps_program::env_or("CUDA_VISIBLE_DEVICES", "-"),
      mps_program::env_or("CUDA_MPS_PIPE_DIRECTORY", "-"), iters, kernel_ms);
  std::fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  check(cudaFree(out), "cudaFree");
  MPI_Finalize();
  return 0;
}
