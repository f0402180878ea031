// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// ipc_import_probe: which ways of sharing a large device allocation between two processes work on
// this machine, at which sizes, and across GPUs a process cannot see. For each case two fresh
// processes start: the exporter allocates and fills the allocation, the importer maps it, a
// kernel there reads its last word and writes its first, and the exporter checks that write.
// A case whose importer crashes (the driver's stream-ordered pool import overflowed its stack
// for allocations over about 5 GiB on driver 580, docs/halo.md) is reported, not fatal.
//
// Usage: ipc_import_probe KIND:GIB:EXPORTER_GPU:IMPORTER_GPU ...
//   KIND pool (cudaMemPool, POSIX fd), legacy (cudaMalloc + cudaIpcGetMemHandle) or vmm
//   (cuMemCreate, POSIX fd); the GPUs are CUDA_VISIBLE_DEVICES values, so each process sees
//   only its own GPU when they differ. Prints one line per case: "ok", "error: ..." or
//   "crashed (signal N)". Exit status 0 when every case ran to an answer.
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct message {
  unsigned char data[64];
  std::uint64_t bytes;
  char error[200];
};

void send_all(int sock, const void* p, std::size_t n, int fd = -1) {
  iovec io{const_cast<void*>(p), n};
  msghdr h{};
  h.msg_iov = &io;
  h.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    h.msg_control = control;
    h.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  if (sendmsg(sock, &h, 0) != static_cast<ssize_t>(n)) std::exit(3);
}

int recv_all(int sock, void* p, std::size_t n) {
  iovec io{p, n};
  msghdr h{};
  h.msg_iov = &io;
  h.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  h.msg_control = control;
  h.msg_controllen = sizeof control;
  if (recvmsg(sock, &h, MSG_WAITALL) != static_cast<ssize_t>(n)) return -2;
  int fd = -1;
  if (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr && c->cmsg_type == SCM_RIGHTS) {
    std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  }
  return fd;
}

__global__ void touch(const std::uint64_t* last, std::uint64_t* first, std::uint64_t* seen) {
  *seen = *last;
  *first = 0x7777777777777777ULL;
  __threadfence_system();
}

#define CHECK(call)                                                      \
  do {                                                                   \
    if (auto rc_ = (call); rc_ != 0) {                                   \
      std::snprintf(m.error, sizeof m.error, "%s: %d", #call, int(rc_)); \
      return m;                                                          \
    }                                                                    \
  } while (0)

// Exporter: allocate, fill with 0x5a, export; after the importer's answer, check its write.
struct exported {
  void* ptr = nullptr;
  int fd = -1;
  message m{};
};

exported export_one(const std::string& kind, std::uint64_t bytes) {
  exported e;
  message& m = e.m;
  m.bytes = bytes;
  auto fail = [&](const char* what, int rc) {
    std::snprintf(m.error, sizeof m.error, "exporter %s: %d", what, rc);
    return e;
  };
  if (kind == "pool") {
    cudaMemPoolProps p{};
    p.allocType = cudaMemAllocationTypePinned;
    p.location.type = cudaMemLocationTypeDevice;
    p.location.id = 0;
    p.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    cudaMemPool_t pool = nullptr;
    if (int rc = cudaMemPoolCreate(&pool, &p)) return fail("cudaMemPoolCreate", rc);
    if (int rc = cudaMallocFromPoolAsync(&e.ptr, bytes, pool, nullptr)) return fail("alloc", rc);
    cudaStreamSynchronize(nullptr);
    if (int rc = cudaMemPoolExportToShareableHandle(&e.fd, pool,
                                                    cudaMemHandleTypePosixFileDescriptor, 0))
      return fail("export pool", rc);
    cudaMemPoolPtrExportData d{};
    if (int rc = cudaMemPoolExportPointer(&d, e.ptr)) return fail("export pointer", rc);
    std::memcpy(m.data, &d, sizeof d);
  } else if (kind == "legacy") {
    if (int rc = cudaMalloc(&e.ptr, bytes)) return fail("cudaMalloc", rc);
    cudaIpcMemHandle_t h{};
    if (int rc = cudaIpcGetMemHandle(&h, e.ptr)) return fail("cudaIpcGetMemHandle", rc);
    std::memcpy(m.data, &h, sizeof h);
  } else {
    cudaFree(nullptr);
    CUmemAllocationProp p{};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::size_t g = 0;
    cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    bytes = (bytes + g - 1) / g * g;
    m.bytes = bytes;
    CUmemGenericAllocationHandle h = 0;
    if (int rc = cuMemCreate(&h, bytes, &p, 0)) return fail("cuMemCreate", rc);
    CUdeviceptr va = 0;
    if (int rc = cuMemAddressReserve(&va, bytes, 0, 0, 0)) return fail("reserve", rc);
    if (int rc = cuMemMap(va, bytes, 0, h, 0)) return fail("map", rc);
    CUmemAccessDesc a{};
    a.location = p.location;
    a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (int rc = cuMemSetAccess(va, bytes, &a, 1)) return fail("access", rc);
    if (int rc =
            cuMemExportToShareableHandle(&e.fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
      return fail("export", rc);
    e.ptr = reinterpret_cast<void*>(va);
  }
  if (int rc = cudaMemset(e.ptr, 0x5a, bytes)) return fail("memset", rc);
  cudaDeviceSynchronize();
  return e;
}

message import_one(const std::string& kind, const message& in, int fd) {
  message m{};
  void* ptr = nullptr;
  if (kind == "pool") {
    cudaMemPool_t pool = nullptr;
    CHECK(cudaMemPoolImportFromShareableHandle(
        &pool, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
        cudaMemHandleTypePosixFileDescriptor, 0));
    cudaMemAccessDesc a{};
    a.location.type = cudaMemLocationTypeDevice;
    a.location.id = 0;
    a.flags = cudaMemAccessFlagsProtReadWrite;
    CHECK(cudaMemPoolSetAccess(pool, &a, 1));
    cudaMemPoolPtrExportData d{};
    std::memcpy(&d, in.data, sizeof d);
    CHECK(cudaMemPoolImportPointer(&ptr, pool, &d));
  } else if (kind == "legacy") {
    cudaIpcMemHandle_t h{};
    std::memcpy(&h, in.data, sizeof h);
    CHECK(cudaIpcOpenMemHandle(&ptr, h, cudaIpcMemLazyEnablePeerAccess));
  } else {
    cudaFree(nullptr);
    CUmemGenericAllocationHandle h = 0;
    CHECK(cuMemImportFromShareableHandle(&h,
                                         reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    CUdeviceptr va = 0;
    CHECK(cuMemAddressReserve(&va, in.bytes, 0, 0, 0));
    CHECK(cuMemMap(va, in.bytes, 0, h, 0));
    CUmemAccessDesc a{};
    a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.location.id = 0;
    a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK(cuMemSetAccess(va, in.bytes, &a, 1));
    ptr = reinterpret_cast<void*>(va);
  }
  std::uint64_t* seen = nullptr;
  CHECK(cudaMalloc(&seen, sizeof *seen));
  auto* words = static_cast<std::uint64_t*>(ptr);
  touch<<<1, 1>>>(words + in.bytes / 8 - 1, words, seen);
  CHECK(cudaDeviceSynchronize());
  std::uint64_t value = 0;
  CHECK(cudaMemcpy(&value, seen, sizeof value, cudaMemcpyDeviceToHost));
  if (value != 0x5a5a5a5a5a5a5a5aULL) {
    std::snprintf(m.error, sizeof m.error, "importer read %llx", (unsigned long long)value);
  }
  return m;
}

std::string run_case(const std::string& kind, double gib, const std::string& egpu,
                     const std::string& igpu) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return "error: socketpair";
  const pid_t exporter = fork();
  if (exporter == 0) {
    close(sv[1]);
    setenv("CUDA_VISIBLE_DEVICES", egpu.c_str(), 1);
    exported e = export_one(kind, static_cast<std::uint64_t>(gib * 1073741824.0) / 8 * 8);
    send_all(sv[0], &e.m, sizeof e.m, e.fd);
    message answer{};
    if (recv_all(sv[0], &answer, sizeof answer) == -2) _exit(4);  // importer died
    std::uint64_t first = 0;
    if (answer.error[0] == 0 && e.ptr != nullptr) {
      cudaMemcpy(&first, e.ptr, sizeof first, cudaMemcpyDeviceToHost);
      if (first != 0x7777777777777777ULL) {
        std::snprintf(answer.error, sizeof answer.error, "exporter saw %llx",
                      (unsigned long long)first);
      }
    }
    send_all(sv[0], &answer, sizeof answer);
    _exit(0);
  }
  const pid_t importer = fork();
  if (importer == 0) {
    close(sv[0]);
    setenv("CUDA_VISIBLE_DEVICES", igpu.c_str(), 1);
    message in{};
    const int fd = recv_all(sv[1], &in, sizeof in);
    message out{};
    if (in.error[0] != 0) {
      out = in;
    } else {
      out = import_one(kind, in, fd);
    }
    send_all(sv[1], &out, sizeof out);
    message final_answer{};
    recv_all(sv[1], &final_answer, sizeof final_answer);
    std::printf("%s\n", final_answer.error[0] ? final_answer.error : "ok");
    std::fflush(stdout);
    _exit(0);
  }
  close(sv[0]);
  close(sv[1]);
  int status = 0;
  waitpid(importer, &status, 0);
  int estatus = 0;
  waitpid(exporter, &estatus, 0);
  if (WIFSIGNALED(status)) return "crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::puts(
        "usage: ipc_import_probe KIND:GIB:EXPORTER_GPU:IMPORTER_GPU ...  (KIND pool|legacy|vmm)");
    return argc < 2 ? 2 : 0;
  }
  for (int i = 1; i < argc; ++i) {
    std::string spec = argv[i];
    std::string part[4];
    for (int k = 0; k < 4; ++k) {
      const auto colon = spec.find(':');
      part[k] = spec.substr(0, colon);
      spec = colon == std::string::npos ? "" : spec.substr(colon + 1);
    }
    std::printf("%-8s %6s GiB  GPU %s -> GPU %s: ", part[0].c_str(), part[1].c_str(),
                part[2].c_str(), part[3].c_str());
    std::fflush(stdout);
    const std::string verdict = run_case(part[0], std::atof(part[1].c_str()), part[2], part[3]);
    if (!verdict.empty()) std::printf("%s\n", verdict.c_str());
    std::fflush(stdout);
  }
  return 0;
}
