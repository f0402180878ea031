// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel_mps_client: the tests' own plain MPI + CUDA program, a stand-in for a third-party code
// under funnel-run (scripts/gpu/dense-sharing.sh runs it with 16-48 ranks on one GPU). It uses
// no funnel library: each rank creates its CUDA context, allocates with cudaMalloc, copies a
// vector in, runs one kernel (y = 2x + 1), copies it back and checks every element.
//   funnel_mps_client [--elements N] [--fault-rank R] [--hold-ms MS]
//   --fault-rank R  rank R's kernel writes through an illegal address (a fatal GPU fault), after
//                   every rank has its context and before the others run their kernels
//   --hold-ms MS    keep the context this long after the check (so nvidia-smi can see it)
// One line per rank: client rank=R local_rank=L pid=P uuid=GPU-... connections=C status=ok
// (or status=failed|fault step=S error=cudaErrorName), and on rank 0 a summary:
// clients total=N ok=K failed=F fault=X. Exit status: 0 when the rank is ok, 3 when it faulted
// (as asked), 1 when a CUDA call failed.
#include <cuda_runtime.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "mps_program_support.hpp"

namespace {

__global__ void affine(const float* x, float* y, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

// Writes through an address no allocation has: the GPU raises cudaErrorIllegalAddress.
__global__ void illegal_write(float* nowhere) { nowhere[threadIdx.x] = 1.0f; }

enum status_code { ok = 0, failed = 1, fault = 2 };

struct outcome {
  status_code status = ok;
  std::string step = "-";
  std::string error = "-";
};

bool failed_at(cudaError_t rc, const char* step, outcome& out) {
  if (rc == cudaSuccess) return false;
  out.status = failed;
  out.step = step;
  out.error = cudaGetErrorName(rc);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const auto options =
      mps_program::read_options(argc, argv, "funnel_mps_client",
                                {{"--elements", 1 << 20}, {"--fault-rank", -1}, {"--hold-ms", 0}});
  const auto n = static_cast<long long>(options.at("--elements"));
  const auto fault_rank = static_cast<int>(options.at("--fault-rank"));
  const auto hold_ms = static_cast<int>(options.at("--hold-ms"));
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  outcome out;
  std::string uuid = "-";
  float* x = nullptr;
  float* y = nullptr;
  std::vector<float> host(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i)
    host[static_cast<std::size_t>(i)] = static_cast<float>(i % 1000);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  int device = 0;
  cudaDeviceProp props{};
  if (!failed_at(cudaFree(nullptr), "context", out) &&
      !failed_at(cudaGetDevice(&device), "context", out) &&
      !failed_at(cudaGetDeviceProperties(&props, device), "context", out)) {
    uuid = mps_program::format_uuid(props.uuid);
  }
  if (out.status == ok && !failed_at(cudaMalloc(&x, bytes), "malloc", out) &&
      !failed_at(cudaMalloc(&y, bytes), "malloc", out)) {
    (void)failed_at(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice), "h2d", out);
  }

  // The fault happens while every other rank holds its context, before their kernels run.
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == fault_rank && out.status == ok) {
    illegal_write<<<1, 32>>>(reinterpret_cast<float*>(0x10));
    const cudaError_t rc = cudaDeviceSynchronize();
    out.status = fault;
    out.step = "fault";
    out.error = cudaGetErrorName(rc != cudaSuccess ? rc : cudaGetLastError());
  }
  MPI_Barrier(MPI_COMM_WORLD);

  if (out.status == ok) {
    const int threads = 256;
    const long long blocks = (n + threads - 1) / threads;
    affine<<<static_cast<unsigned>(blocks), threads>>>(x, y, n);
    if (!failed_at(cudaGetLastError(), "kernel", out) &&
        !failed_at(cudaDeviceSynchronize(), "kernel", out) &&
        !failed_at(cudaMemcpy(host.data(), y, bytes, cudaMemcpyDeviceToHost), "d2h", out)) {
      for (long long i = 0; i < n; ++i) {
        const float want = 2.0f * static_cast<float>(i % 1000) + 1.0f;
        if (host[static_cast<std::size_t>(i)] != want) {
          out.status = failed;
          out.step = "verify";
          out.error = "element " + std::to_string(i);
          break;
        }
      }
    }
  }
  std::printf(
      "client rank=%d local_rank=%s pid=%d uuid=%s connections=%s status=%s step=%s "
      "error=%s\n",
      rank, mps_program::env_or("FUNNEL_LOCAL_RANK", "-"), static_cast<int>(getpid()), uuid.c_str(),
      mps_program::env_or("CUDA_DEVICE_MAX_CONNECTIONS", "-"),
      out.status == ok ? "ok" : (out.status == fault ? "fault" : "failed"), out.step.c_str(),
      out.error.c_str());
  std::fflush(stdout);

  int mine = out.status;
  std::vector<int> all(static_cast<std::size_t>(size));
  MPI_Gather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int count[3] = {0, 0, 0};
    for (const int s : all) ++count[s];
    std::printf("clients total=%d ok=%d failed=%d fault=%d\n", size, count[ok], count[failed],
                count[fault]);
    std::fflush(stdout);
  }
  if (hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  if (out.status != fault) {
    if (x != nullptr) (void)cudaFree(x);
    if (y != nullptr) (void)cudaFree(y);
  }
  MPI_Finalize();
  return out.status == ok ? 0 : (out.status == fault ? 3 : 1);
}
