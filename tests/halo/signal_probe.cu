// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// signal_probe: which memory can two processes on one GPU signal each other through with stream
// memory operations (cuStreamBatchMemOp write/wait of 64-bit words), and how long a round trip
// takes when only the GPU orders it. Run with 2 ranks (mpirun -np 2 signal_probe), with and
// without MPS. For each kind of memory, each rank owns one word; the peer maps it and writes it:
//   pool    an IPC-exportable cudaMemPool, imported by the peer (cudaMemPoolImportPointer)
//   legacy  cudaMalloc, shared with cudaIpcGetMemHandle / cudaIpcOpenMemHandle
//   host    a memfd mapped by both and registered with cudaHostRegister (mapped, portable)
// Prints one line per kind: write ok?, wait ok?, round trip in microseconds.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "funnel/ipc/fd_exchange.hpp"
#include "funnel/ipc/job_directory.hpp"
#include "funnel/ipc/unique_fd.hpp"

namespace {

using batch_fn = CUresult (*)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);

batch_fn batch() {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  cudaGetDriverEntryPointByVersion("cuStreamBatchMemOp", &p, 12000, cudaEnableDefault, &q);
  return reinterpret_cast<batch_fn>(p);
}

CUresult op(cudaStream_t s, bool wait, std::uint64_t* word, std::uint64_t value) {
  CUstreamBatchMemOpParams p{};
  if (wait) {
    p.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
    p.waitValue.address = reinterpret_cast<CUdeviceptr>(word);
    p.waitValue.value64 = value;
    p.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  } else {
    p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    p.writeValue.address = reinterpret_cast<CUdeviceptr>(word);
    p.writeValue.value64 = value;
    p.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
  }
  return batch()(static_cast<CUstream>(s), 1, &p, 0);
}

struct words {
  std::uint64_t* mine = nullptr;  // device address of my word (the peer writes it)
  std::uint64_t* peer = nullptr;  // device address of the peer's word, mapped here
};

int rank_ = 0;

words pool_words(MPI_Comm comm, cudaMemPool_t& pool) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPoolCreate(&pool, &props);
  words w;
  cudaMallocFromPoolAsync(reinterpret_cast<void**>(&w.mine), 256, pool, nullptr);
  cudaMemsetAsync(w.mine, 0, 8, nullptr);
  cudaDeviceSynchronize();
  int fd = -1;
  cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0);
  cudaMemPoolPtrExportData data{};
  cudaMemPoolExportPointer(&data, w.mine);
  const funnel::job_directory dir = funnel::job_directory::create(comm);
  const auto fds = funnel::allgather_fds(comm, fd, dir.path());
  cudaMemPoolPtrExportData theirs{};
  MPI_Sendrecv(&data, sizeof data, MPI_BYTE, 1 - rank_, 0, &theirs, sizeof theirs, MPI_BYTE,
               1 - rank_, 0, comm, MPI_STATUS_IGNORE);
  cudaMemPool_t imported{};
  cudaMemPoolImportFromShareableHandle(&imported,
                                       reinterpret_cast<void*>(static_cast<std::intptr_t>(
                                           fds[static_cast<std::size_t>(1 - rank_)].get())),
                                       cudaMemHandleTypePosixFileDescriptor, 0);
  cudaMemPoolImportPointer(reinterpret_cast<void**>(&w.peer), imported, &theirs);
  close(fd);
  return w;
}

words legacy_words(MPI_Comm comm) {
  words w;
  cudaMalloc(reinterpret_cast<void**>(&w.mine), 256);
  cudaMemset(w.mine, 0, 8);
  cudaIpcMemHandle_t h{};
  cudaIpcGetMemHandle(&h, w.mine);
  cudaIpcMemHandle_t theirs{};
  MPI_Sendrecv(&h, sizeof h, MPI_BYTE, 1 - rank_, 1, &theirs, sizeof theirs, MPI_BYTE, 1 - rank_, 1,
               comm, MPI_STATUS_IGNORE);
  cudaIpcOpenMemHandle(reinterpret_cast<void**>(&w.peer), theirs, cudaIpcMemLazyEnablePeerAccess);
  return w;
}

words host_words(MPI_Comm comm) {
  const int fd = static_cast<int>(memfd_create("funnel-signal-probe", MFD_CLOEXEC));
  ftruncate(fd, 4096);
  const funnel::job_directory dir = funnel::job_directory::create(comm);
  const auto fds = funnel::allgather_fds(comm, fd, dir.path());
  words w;
  for (int r = 0; r < 2; ++r) {
    void* host = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                      r == rank_ ? fd : fds[static_cast<std::size_t>(r)].get(), 0);
    std::memset(host, 0, 8);
    cudaHostRegister(host, 4096, cudaHostRegisterMapped | cudaHostRegisterPortable);
    void* dev = nullptr;
    cudaHostGetDevicePointer(&dev, host, 0);
    (r == rank_ ? w.mine : w.peer) = static_cast<std::uint64_t*>(dev);
  }
  MPI_Barrier(comm);
  return w;
}

void probe(const char* kind, const words& w, MPI_Comm comm) {
  cudaStream_t s{};
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  MPI_Barrier(comm);
  // One write to the peer, one wait for the peer's write.
  const CUresult write_rc = op(s, false, w.peer, 1);
  const CUresult wait_rc = op(s, true, w.mine, 1);
  cudaError_t sync = cudaStreamSynchronize(s);
  double us = -1.0;
  if (write_rc == CUDA_SUCCESS && wait_rc == CUDA_SUCCESS && sync == cudaSuccess) {
    constexpr int trips = 2000;
    MPI_Barrier(comm);
    cudaEvent_t a{};
    cudaEvent_t b{};
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, s);
    // A blocking wait first, so the whole ping-pong is enqueued before it runs.
    for (int i = 2; i < trips + 2; ++i) {
      if (rank_ == 0) {
        op(s, false, w.peer, static_cast<std::uint64_t>(i));
        op(s, true, w.mine, static_cast<std::uint64_t>(i));
      } else {
        op(s, true, w.mine, static_cast<std::uint64_t>(i));
        op(s, false, w.peer, static_cast<std::uint64_t>(i));
      }
    }
    cudaEventRecord(b, s);
    sync = cudaStreamSynchronize(s);
    float ms = 0.0F;
    cudaEventElapsedTime(&ms, a, b);
    us = 1000.0 * ms / trips;
  }
  if (rank_ == 0) {
    std::printf("%-7s write %-4s wait %-4s sync %-24s round trip %.2f us\n", kind,
                write_rc == CUDA_SUCCESS ? "ok" : std::to_string(write_rc).c_str(),
                wait_rc == CUDA_SUCCESS ? "ok" : std::to_string(wait_rc).c_str(),
                cudaGetErrorName(sync), us);
    std::fflush(stdout);
  }
  cudaGetLastError();
  cudaStreamDestroy(s);
  MPI_Barrier(comm);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  cudaSetDevice(0);
  cudaFree(nullptr);
  if (batch() == nullptr) {
    if (rank_ == 0) std::printf("no cuStreamBatchMemOp\n");
    MPI_Finalize();
    return 1;
  }
  cudaMemPool_t pool{};
  probe("pool", pool_words(MPI_COMM_WORLD, pool), MPI_COMM_WORLD);
  probe("legacy", legacy_words(MPI_COMM_WORLD), MPI_COMM_WORLD);
  probe("host", host_words(MPI_COMM_WORLD), MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
