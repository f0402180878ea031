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

std::string format_uuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof(text),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

double run_kernel(long long iters, float* out) {
  const double start = MPI_Wtime();
  fixed_work<<<1, 32>>>(iters, out);
  check(cudaGetLastError(), "kernel launch");
  check(cudaDeviceSynchronize(), "kernel");
  return (MPI_Wtime() - start) * 1e3;
}

const char* env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long long iters = 0;
  double target_ms = 200;
  int hold_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string opt = argv[i];
    if (opt == "--iters") {
      iters = std::atoll(argv[i + 1]);
    } else if (opt == "--ms") {
      target_ms = std::atof(argv[i + 1]);
    } else if (opt == "--hold-ms") {
      hold_ms = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "funnel_mps_probe: unknown option %s\n", opt.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
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
      rank, static_cast<int>(getpid()), env_or("FUNNEL_LOCAL_RANK", "-"),
      format_uuid(props.uuid).c_str(), env_or("CUDA_VISIBLE_DEVICES", "-"),
      env_or("CUDA_MPS_PIPE_DIRECTORY", "-"), iters, kernel_ms);
  std::fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  check(cudaFree(out), "cudaFree");
  MPI_Finalize();
  return 0;
}
