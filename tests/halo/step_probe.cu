// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// step_probe: what one step costs when N ranks split one grid on one GPU (under MPS), for each
// way of ordering the steps. Run as `mpirun -np N step_probe [CELLS] [STEPS]`: the ranks split
// CELLS floats (default 768*96*96) along one axis; faces are 96*96 floats. Each rank maps its
// neighbours' buffers and signal words (legacy CUDA IPC) once. Per step, by mode:
//   kernel      one update kernel (no exchange: the floor of the launches alone)
//   kernel3     the update as three kernels (inner + two boundary slabs, as with overlap)
//   sync        a face-copy kernel into each neighbour, a batch of signal writes, a batch of
//               waits on this rank's words, the update kernel (funnel's ordered path, no overlap)
//   deep4       sync's exchange once every 4 steps, the update kernel every step
//   graph       sync, G steps captured once as a CUDA graph and launched STEPS / G times; the
//               signals are per-slot flags that the waiter resets (fixed parameters)
//   graph-kernel  G update kernels per graph
//   spin        the face-copy kernel, one single-thread kernel that signals the neighbours and
//               spins until they signalled it (a device-side exchange count, no host values),
//               the update kernel
//   graph-spin  spin's step, G steps per graph
// Prints per mode: microseconds per step (slowest rank) and one rank's time as a fraction.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda/atomic>
#include <string>
#include <vector>

namespace {

using batch_fn = CUresult (*)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);

constexpr int face = 96 * 96;
constexpr int graph_steps = 8;
int rank_ = 0;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "rank %d: %s: %s\n", rank_, what, cudaGetErrorString(e));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

batch_fn batch() {
  static batch_fn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    check(cudaGetDriverEntryPointByVersion("cuStreamBatchMemOp", &p, 12000, cudaEnableDefault, &q),
          "entry point");
    return reinterpret_cast<batch_fn>(p);
  }();
  return fn;
}

struct op {
  bool wait;
  std::uint64_t* word;
  std::uint64_t value;
  unsigned flags;
};

void enqueue(cudaStream_t s, const std::vector<op>& ops) {
  if (ops.empty()) return;
  std::vector<CUstreamBatchMemOpParams> p(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].wait) {
      p[i].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
      p[i].waitValue.address = reinterpret_cast<CUdeviceptr>(ops[i].word);
      p[i].waitValue.value64 = ops[i].value;
      p[i].waitValue.flags = ops[i].flags;
    } else {
      p[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
      p[i].writeValue.address = reinterpret_cast<CUdeviceptr>(ops[i].word);
      p[i].writeValue.value64 = ops[i].value;
      p[i].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
    }
  }
  const CUresult r =
      batch()(static_cast<CUstream>(s), static_cast<unsigned>(p.size()), p.data(), 0);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "rank %d: cuStreamBatchMemOp: %d\n", rank_, static_cast<int>(r));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

__global__ void update(const float* in, float* out, long lo, long hi) {
  const long i = lo + blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < hi) out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}

__global__ void copy_face(const float* from, float* to) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < face) to[i] = from[i];
}

// Signal words of one rank: mono[side] grows (sync, deep4); slot[side][s] is 1 when set (graph).
struct signals {
  std::uint64_t mono[2];
  std::uint64_t slot[2][graph_steps];
  std::uint64_t spin[2];
  std::uint64_t count;  // exchanges this rank completed (spin modes)
};

using word_ref = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

__global__ void signal_and_wait(signals* mine, signals* left, signals* right) {
  const unsigned long long c = mine->count + 1;
  if (left != nullptr)
    word_ref(*reinterpret_cast<unsigned long long*>(&left->spin[1]))
        .store(c, cuda::memory_order_release);
  if (right != nullptr)
    word_ref(*reinterpret_cast<unsigned long long*>(&right->spin[0]))
        .store(c, cuda::memory_order_release);
  for (int side = 0; side < 2; ++side) {
    if ((side == 0 ? left : right) == nullptr) continue;
    word_ref w(*reinterpret_cast<unsigned long long*>(&mine->spin[side]));
    while (w.load(cuda::memory_order_acquire) < c) __nanosleep(64);
  }
  mine->count = c;
}

struct rank_state {
  int left = -1, right = -1;
  long cells = 0;
  float* buf[2] = {nullptr, nullptr};  // cells + 2 faces each
  signals* mine = nullptr;
  signals* peer[2] = {nullptr, nullptr};  // [0] left neighbour's, [1] right's
  float* peer_buf[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};
  cudaStream_t stream = nullptr;
};

void launch_update(const rank_state& r, int parity, int parts) {
  const float* in = r.buf[parity];
  float* out = r.buf[1 - parity];
  const long lo = face, hi = face + r.cells;
  if (parts == 1) {
    update<<<static_cast<unsigned>((hi - lo + 255) / 256), 256, 0, r.stream>>>(in, out, lo, hi);
    return;
  }
  const long bounds[4] = {lo, lo + face, hi - face, hi};
  for (int p = 0; p < 3; ++p) {
    update<<<static_cast<unsigned>((bounds[p + 1] - bounds[p] + 255) / 256), 256, 0, r.stream>>>(
        in, out, bounds[p], bounds[p + 1]);
  }
}

// My boundary faces of field `parity` into the neighbours' ghosts (the left neighbour's right
// ghost is at face + cells, the same offset here: every rank holds as many cells).
void copy_faces(const rank_state& r, int parity) {
  for (int side = 0; side < 2; ++side) {
    const int n = side == 0 ? r.left : r.right;
    if (n < 0) continue;
    const float* from = r.buf[parity] + (side == 0 ? face : r.cells);
    float* to = r.peer_buf[side][parity] + (side == 0 ? face + r.cells : 0);
    copy_face<<<face / 256, 256, 0, r.stream>>>(from, to);
  }
}

// The exchange of step t (0-based) on field parity p: copy my boundary faces into the
// neighbours' ghosts, signal them, wait for mine.
void exchange_mono(const rank_state& r, int parity, std::uint64_t t) {
  std::vector<op> writes;
  std::vector<op> waits;
  copy_faces(r, parity);
  for (int side = 0; side < 2; ++side) {
    if ((side == 0 ? r.left : r.right) < 0) continue;
    writes.push_back({false, &r.peer[side]->mono[1 - side], t + 1, 0});
    waits.push_back({true, &r.mine->mono[side], t + 1, CU_STREAM_WAIT_VALUE_GEQ});
  }
  enqueue(r.stream, writes);
  enqueue(r.stream, waits);
}

void exchange_spin(const rank_state& r, int parity) {
  copy_faces(r, parity);
  signal_and_wait<<<1, 1, 0, r.stream>>>(r.mine, r.peer[0], r.peer[1]);
}

void exchange_slot(const rank_state& r, int parity, int s) {
  std::vector<op> writes;
  std::vector<op> waits;
  copy_faces(r, parity);
  for (int side = 0; side < 2; ++side) {
    if ((side == 0 ? r.left : r.right) < 0) continue;
    writes.push_back({false, &r.peer[side]->slot[1 - side][s], 1, 0});
    waits.push_back({true, &r.mine->slot[side][s], 1, CU_STREAM_WAIT_VALUE_EQ});
    waits.push_back({false, &r.mine->slot[side][s], 0, 0});  // reset: the slot is reused
  }
  enqueue(r.stream, writes);
  enqueue(r.stream, waits);
}

double run(const std::string& mode, const rank_state& r, int steps) {
  cudaGraphExec_t exec = nullptr;
  if (mode == "graph" || mode == "graph-kernel" || mode == "graph-spin") {
    cudaGraph_t graph = nullptr;
    check(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeThreadLocal), "capture");
    for (int s = 0; s < graph_steps; ++s) {
      if (mode == "graph") exchange_slot(r, s % 2, s);
      if (mode == "graph-spin") exchange_spin(r, s % 2);
      launch_update(r, s % 2, 1);
    }
    check(cudaStreamEndCapture(r.stream, &graph), "end capture");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    check(cudaGraphDestroy(graph), "graph destroy");
    check(cudaGraphUpload(exec, r.stream), "upload");
  }
  static std::uint64_t base = 0;  // mono words keep growing across modes
  auto one_pass = [&](int n) {
    if (exec != nullptr) {
      for (int i = 0; i < n / graph_steps; ++i) check(cudaGraphLaunch(exec, r.stream), "launch");
      return;
    }
    for (int t = 0; t < n; ++t) {
      const int parity = t % 2;
      if (mode == "sync" || (mode == "deep4" && t % 4 == 0)) exchange_mono(r, parity, base);
      if (mode == "sync" || (mode == "deep4" && t % 4 == 0)) ++base;
      if (mode == "spin") exchange_spin(r, parity);
      launch_update(r, parity, mode == "kernel3" ? 3 : 1);
    }
  };
  one_pass(64);  // warm up
  check(cudaStreamSynchronize(r.stream), "warm-up");
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  one_pass(steps);
  check(cudaStreamSynchronize(r.stream), "run");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (exec != nullptr) check(cudaGraphExecDestroy(exec), "exec destroy");
  return seconds / steps;
}

template <class T>
T* open_peer(const cudaIpcMemHandle_t& h) {
  void* p = nullptr;
  check(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess), "open IPC handle");
  return static_cast<T*>(p);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long total = argc > 1 ? std::atol(argv[1]) : 768L * 96 * 96;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 800;
  const char* only = argc > 3 ? argv[3] : nullptr;
  rank_state r;
  r.cells = total / size;
  r.left = rank_ > 0 ? rank_ - 1 : -1;
  r.right = rank_ + 1 < size ? rank_ + 1 : -1;
  check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "stream");
  for (auto& b : r.buf) {
    check(cudaMalloc(&b, (r.cells + 2 * face) * sizeof(float)), "buffer");
    check(cudaMemset(b, 0, (r.cells + 2 * face) * sizeof(float)), "memset");
  }
  check(cudaMalloc(&r.mine, sizeof(signals)), "signals");
  check(cudaMemset(r.mine, 0, sizeof(signals)), "memset");
  check(cudaDeviceSynchronize(), "setup");
  cudaIpcMemHandle_t mine[3];
  check(cudaIpcGetMemHandle(&mine[0], r.mine), "handle");
  check(cudaIpcGetMemHandle(&mine[1], r.buf[0]), "handle");
  check(cudaIpcGetMemHandle(&mine[2], r.buf[1]), "handle");
  for (int side = 0; side < 2; ++side) {
    const int n = side == 0 ? r.left : r.right;
    const int other = side == 0 ? r.right : r.left;
    cudaIpcMemHandle_t theirs[3];
    MPI_Sendrecv(mine, sizeof(mine), MPI_BYTE, other < 0 ? MPI_PROC_NULL : other, side, theirs,
                 sizeof(theirs), MPI_BYTE, n < 0 ? MPI_PROC_NULL : n, side, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (n < 0) continue;
    r.peer[side] = open_peer<signals>(theirs[0]);
    r.peer_buf[side][0] = open_peer<float>(theirs[1]);
    r.peer_buf[side][1] = open_peer<float>(theirs[2]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const char* modes[] = {"kernel", "kernel3", "graph-kernel", "sync",
                         "deep4",  "graph",   "spin",         "graph-spin"};
  for (const char* m : modes) {
    if (only != nullptr && std::string(only).find(m) == std::string::npos) continue;
    const double s = run(m, r, steps);
    if (rank_ == 0) std::printf("ranks %3d  %-13s %8.2f us/step\n", size, m, s * 1e6);
    std::fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int side = 0; side < 2; ++side) {
    if (r.peer[side] == nullptr) continue;
    cudaIpcCloseMemHandle(r.peer[side]);
    cudaIpcCloseMemHandle(r.peer_buf[side][0]);
    cudaIpcCloseMemHandle(r.peer_buf[side][1]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
