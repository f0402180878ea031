// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// report_inject_target run|kill|graph: a plain CUDA program (no funnel code) for
// report_inject_gpu, which starts it under CUDA_INJECTION64_PATH=libfunnel-report-inject.so.
//   run   three 200 ms kernels, a 64 MiB copy each way and a memset, then a clean exit
//   kill  three 200 ms kernels, then waits 1.5 s (several flush periods) and kills itself
//         with SIGKILL: its record must keep the kernels and lack the end marker
//   graph a CUDA graph of three 100 ms kernels, captured from a stream, launched twice
// Prints "kernel_ms=<event-timed total of the kernels>" (of the graph launches for graph) and,
// for run, "cc_major=<the GPU's compute capability major>".
#include <cuda_runtime.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}

int fail(const char* what, cudaError_t rc) {
  std::fprintf(stderr, "report_inject_target: %s: %s\n", what, cudaGetErrorName(rc));
  return 1;
}

// Two launches of a captured graph of three kernels; prints their event-timed total.
int run_graph(cudaEvent_t begin, cudaEvent_t end) {
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaError_t rc = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (rc == cudaSuccess) rc = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (rc != cudaSuccess) return fail("capture", rc);
  for (int i = 0; i < 3; ++i) spin<<<1, 1, 0, stream>>>(100ull * 1000 * 1000);
  rc = cudaStreamEndCapture(stream, &graph);
  if (rc == cudaSuccess) rc = cudaGraphInstantiate(&exec, graph, 0);
  if (rc != cudaSuccess) return fail("graph", rc);
  float total_ms = 0;
  for (int i = 0; i < 2; ++i) {
    cudaEventRecord(begin, stream);
    cudaGraphLaunch(exec, stream);
    cudaEventRecord(end, stream);
    rc = cudaEventSynchronize(end);
    if (rc != cudaSuccess) return fail("graph launch", rc);
    float ms = 0;
    cudaEventElapsedTime(&ms, begin, end);
    total_ms += ms;
  }
  std::printf("kernel_ms=%.3f\n", total_ms);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool kill = argc > 1 && std::strcmp(argv[1], "kill") == 0;
  cudaEvent_t begin = nullptr;
  cudaEvent_t end = nullptr;
  cudaError_t rc = cudaEventCreate(&begin);
  if (rc == cudaSuccess) rc = cudaEventCreate(&end);
  if (rc != cudaSuccess) return fail("cudaEventCreate", rc);
  if (argc > 1 && std::strcmp(argv[1], "graph") == 0) return run_graph(begin, end);
  float total_ms = 0;
  for (int i = 0; i < 3; ++i) {
    cudaEventRecord(begin);
    spin<<<1, 1>>>(200ull * 1000 * 1000);
    cudaEventRecord(end);
    rc = cudaEventSynchronize(end);
    if (rc != cudaSuccess) return fail("spin", rc);
    float ms = 0;
    cudaEventElapsedTime(&ms, begin, end);
    total_ms += ms;
  }
  std::printf("kernel_ms=%.3f\n", total_ms);
  int cc_major = 0;
  if (cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess) {
    std::printf("cc_major=%d\n", cc_major);
  }
  std::fflush(stdout);
  if (kill) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::raise(SIGKILL);
  }
  const std::size_t bytes = 64u << 20;
  std::vector<char> host(bytes, 1);
  void* device = nullptr;
  rc = cudaMalloc(&device, bytes);
  if (rc == cudaSuccess) rc = cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice);
  if (rc == cudaSuccess) rc = cudaMemset(device, 0, bytes);
  if (rc == cudaSuccess) rc = cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost);
  if (rc != cudaSuccess) return fail("copies", rc);
  cudaFree(device);
  return 0;
}
