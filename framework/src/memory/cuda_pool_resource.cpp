// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// CUDA backend pool: a cudaMemPool_t of one device (stream-ordered cudaMallocFromPoolAsync /
// cudaFreeAsync), optionally exportable through POSIX file descriptors, and the pools imported
// from other processes.
//
// Large allocations of an exportable pool are made outside the stream-ordered pool, as
// dedicated cudaMalloc blocks shared through legacy CUDA IPC (cudaIpcGetMemHandle): importing a
// pool pointer of more than about 5 GiB (cudaMemPoolImportPointer) overwrites the importer's
// stack on driver 580 and the process dies with SIGSEGV, while legacy IPC of the same sizes, up
// to 16 GiB and across GPUs a process cannot see, maps and runs (tests/ipc/ipc_import_probe.cu,
// docs/halo.md, "Large fields").
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "pool_resource.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>

#include "../runtime/scoped_current_device.hpp"
#endif

namespace funnel::detail {

#if FUNNEL_HAS_CUDA
namespace {

static_assert(sizeof(cudaMemPoolPtrExportData) == 64 && sizeof(cudaIpcMemHandle_t) == 64);
static_assert(sizeof(ipc_pointer::bytes) > 64, "room for the kind byte");

// Exportable pools make allocations of at least this size dedicated blocks (see the top).
constexpr std::size_t dedicated_bytes = std::size_t{2} << 30;

// ipc_pointer::bytes[64]: what the first 64 bytes hold.
enum class export_kind : unsigned char { pool_pointer = 0, dedicated = 1 };

export_kind kind_of(const ipc_pointer& p) { return static_cast<export_kind>(p.bytes[64]); }

std::uint64_t get_attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  std::uint64_t value = 0;
  FUNNEL_CUDA_TRY(cudaMemPoolGetAttribute(pool, attr, &value), "funnel::memory_pool statistics");
  return value;
}

void check_device(int device, const std::string& pool) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  if (count == 0) {
    throw unsupported("memory pool '" + pool +
                      "': backend cuda requested but no CUDA device is visible");
  }
  FUNNEL_EXPECTS(device >= 0 && device < count,
                 "memory pool '" + pool + "': device " + std::to_string(device) +
                     " does not exist (allowed: 0.." + std::to_string(count - 1) + ")");
}

int device_attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  FUNNEL_CUDA_TRY(cudaDeviceGetAttribute(&value, attr, device), "funnel::memory_pool");
  return value;
}

// Shared by the owning and the imported pool: the handle and its destruction.
class cuda_pool_base : public pool_resource {
 public:
  cuda_pool_base(cudaMemPool_t pool, int device) : pool_(pool), device_(device) {}
  ~cuda_pool_base() override { FUNNEL_CUDA_LOG(cudaMemPoolDestroy(pool_)); }

  [[nodiscard]] backend_kind backend() const noexcept override { return backend_kind::cuda; }

  void fill_statistics(pool_statistics& stats) const override {
    stats.reserved = get_attribute(pool_, cudaMemPoolAttrReservedMemCurrent);
    stats.reserved_high = get_attribute(pool_, cudaMemPoolAttrReservedMemHigh);
    stats.used = get_attribute(pool_, cudaMemPoolAttrUsedMemCurrent);
    stats.used_high = get_attribute(pool_, cudaMemPoolAttrUsedMemHigh);
  }

  void trim_to(std::size_t bytes_to_keep) override {
    FUNNEL_CUDA_TRY(cudaMemPoolTrimTo(pool_, bytes_to_keep), "funnel::memory_pool::trim_to");
  }

  void grant_access(int peer_device) override {
    if (peer_device == device_) return;  // a pool is always accessible from its own device
    int can_access = 0;
    FUNNEL_CUDA_TRY(cudaDeviceCanAccessPeer(&can_access, peer_device, device_),
                    "funnel::memory_pool::grant_access");
    if (can_access == 0) {
      throw unsupported("memory pool on device " + std::to_string(device_) +
                        " cannot be shared with device " + std::to_string(peer_device) +
                        ": cudaDeviceCanAccessPeer(" + std::to_string(peer_device) + ", " +
                        std::to_string(device_) + ") reports no peer access");
    }
    cudaMemAccessDesc desc{};
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = peer_device;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    FUNNEL_CUDA_TRY(cudaMemPoolSetAccess(pool_, &desc, 1), "funnel::memory_pool::grant_access");
  }

 protected:
  cudaMemPool_t pool_;
  int device_;
};

class cuda_pool_resource final : public cuda_pool_base {
 public:
  cuda_pool_resource(cudaMemPool_t pool, int device, bool ipc)
      : cuda_pool_base(pool, device), ipc_(ipc) {}

  [[nodiscard]] bool ipc_exportable() const noexcept override { return ipc_; }

  void* allocate(stream_view stream, std::size_t bytes, std::string& why) override {
    if (ipc_ && bytes >= dedicated_bytes) return allocate_dedicated(bytes, why);
    void* ptr = nullptr;
    const cudaError_t rc = cudaMallocFromPoolAsync(&ptr, bytes, pool_, stream.native_handle());
    if (rc == cudaErrorMemoryAllocation) {
      // Not sticky: clear it so the next unrelated check does not report it again.
      (void)cudaGetLastError();
      why = "cudaErrorMemoryAllocation from cudaMallocFromPoolAsync on device " +
            std::to_string(device_);
      return nullptr;
    }
    FUNNEL_CUDA_TRY(rc, "funnel::memory_pool::allocate of " + std::to_string(bytes) + " B");
    return ptr;
  }

  void deallocate(stream_view stream, void* ptr, std::size_t bytes) noexcept override {
    if (forget_dedicated(ptr, bytes)) {
      // Work of `stream` may still use the block; cudaFree does not wait for it by itself.
      FUNNEL_CUDA_LOG(cudaStreamSynchronize(stream.native_handle()));
      FUNNEL_CUDA_LOG(cudaFree(ptr));
      return;
    }
    FUNNEL_CUDA_LOG(cudaFreeAsync(ptr, stream.native_handle()));
  }

  void fill_statistics(pool_statistics& stats) const override {
    cuda_pool_base::fill_statistics(stats);
    const std::lock_guard lock(dedicated_mutex_);
    stats.reserved += dedicated_bytes_in_use_;
    stats.used += dedicated_bytes_in_use_;
    stats.reserved_high += dedicated_bytes_high_;
    stats.used_high += dedicated_bytes_high_;
  }

  [[nodiscard]] unique_fd export_handle() const override { return shareable_handle().duplicate(); }

  [[nodiscard]] ipc_pointer export_pointer(void* ptr) const override {
    ipc_pointer out;
    if (is_dedicated(ptr)) {
      cudaIpcMemHandle_t handle{};
      FUNNEL_CUDA_TRY(cudaIpcGetMemHandle(&handle, ptr), "funnel::memory_pool::export_pointer");
      std::memcpy(out.bytes, &handle, sizeof handle);
      out.bytes[64] = static_cast<unsigned char>(export_kind::dedicated);
      return out;
    }
    // The driver refuses (cudaErrorInvalidValue) to export a pointer from a pool whose
    // shareable handle was never exported, so make sure that happened first.
    (void)shareable_handle();
    cudaMemPoolPtrExportData data{};
    FUNNEL_CUDA_TRY(cudaMemPoolExportPointer(&data, ptr), "funnel::memory_pool::export_pointer");
    std::memcpy(out.bytes, &data, sizeof data);
    out.bytes[64] = static_cast<unsigned char>(export_kind::pool_pointer);
    return out;
  }

 private:
  // A block of its own (see the top of this file). Not stream-ordered: it is usable on every
  // stream at once, which is all a stream-ordered allocation promises and more.
  void* allocate_dedicated(std::size_t bytes, std::string& why) {
    void* ptr = nullptr;
    {
      const scoped_current_device on(device_);
      const cudaError_t rc = cudaMalloc(&ptr, bytes);
      if (rc == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        why = "cudaErrorMemoryAllocation from cudaMalloc (a block of its own, for IPC) on device " +
              std::to_string(device_);
        return nullptr;
      }
      FUNNEL_CUDA_TRY(rc, "funnel::memory_pool::allocate of " + std::to_string(bytes) + " B");
    }
    const std::lock_guard lock(dedicated_mutex_);
    dedicated_.insert(ptr);
    dedicated_bytes_in_use_ += bytes;
    dedicated_bytes_high_ = std::max(dedicated_bytes_high_, dedicated_bytes_in_use_);
    return ptr;
  }

  // Whether `ptr` is a dedicated block; if so it is no longer counted as one.
  bool forget_dedicated(void* ptr, std::size_t bytes) noexcept {
    const std::lock_guard lock(dedicated_mutex_);
    if (dedicated_.erase(ptr) == 0) return false;
    dedicated_bytes_in_use_ -= bytes;
    return true;
  }

  bool is_dedicated(void* ptr) const {
    const std::lock_guard lock(dedicated_mutex_);
    return dedicated_.count(ptr) != 0;
  }

  // Exported once and kept for the pool's life; export_handle hands out duplicates.
  const unique_fd& shareable_handle() const {
    std::lock_guard lock(export_mutex_);
    if (!shareable_) {
      int fd = -1;
      FUNNEL_CUDA_TRY(
          cudaMemPoolExportToShareableHandle(&fd, pool_, cudaMemHandleTypePosixFileDescriptor, 0),
          "funnel::memory_pool::export_handle");
      shareable_.reset(fd);
    }
    return shareable_;
  }

  bool ipc_;
  mutable std::mutex export_mutex_;
  mutable unique_fd shareable_;
  mutable std::mutex dedicated_mutex_;
  std::unordered_set<void*> dedicated_;  // live dedicated blocks (freed ones leave the set)
  std::size_t dedicated_bytes_in_use_ = 0;
  std::size_t dedicated_bytes_high_ = 0;
};

class imported_cuda_pool final : public cuda_pool_base {
 public:
  using cuda_pool_base::cuda_pool_base;
  ~imported_cuda_pool() override {
    // Imported allocations must be freed before their pool is destroyed.
    for (const auto& [ptr, kind] : open_) release(ptr, kind);
  }

  [[nodiscard]] bool imported() const noexcept override { return true; }

  void* allocate(stream_view /*stream*/, std::size_t /*bytes*/, std::string& /*why*/) override {
    throw invalid_argument("an imported memory pool cannot allocate");
  }
  void deallocate(stream_view /*stream*/, void* /*ptr*/, std::size_t /*bytes*/) noexcept override {}
  [[nodiscard]] unique_fd export_handle() const override {
    throw invalid_argument("an imported memory pool cannot be exported again");
  }
  [[nodiscard]] ipc_pointer export_pointer(void* /*ptr*/) const override {
    throw invalid_argument("an imported memory pool cannot export pointers");
  }

  [[nodiscard]] void* import_pointer(const ipc_pointer& in) override {
    const export_kind kind = kind_of(in);
    void* ptr = nullptr;
    if (kind == export_kind::dedicated) {
      cudaIpcMemHandle_t handle{};
      std::memcpy(&handle, in.bytes, sizeof handle);
      FUNNEL_CUDA_TRY(cudaIpcOpenMemHandle(&ptr, handle, cudaIpcMemLazyEnablePeerAccess),
                      "funnel::memory_pool::import_pointer (a block of its own)");
    } else if (kind == export_kind::pool_pointer) {
      cudaMemPoolPtrExportData data{};
      std::memcpy(&data, in.bytes, sizeof data);
      FUNNEL_CUDA_TRY(cudaMemPoolImportPointer(&ptr, pool_, &data),
                      "funnel::memory_pool::import_pointer");
    } else {
      throw invalid_argument("funnel::memory_pool::import_pointer: export data of unknown kind " +
                             std::to_string(in.bytes[64]) + " (from another funnel version?)");
    }
    std::lock_guard lock(mutex_);
    open_.emplace(ptr, kind);
    return ptr;
  }

  void close_imported_pointer(void* ptr) noexcept override {
    export_kind kind = export_kind::pool_pointer;
    {
      std::lock_guard lock(mutex_);
      const auto it = open_.find(ptr);
      if (it == open_.end()) {
        log_error("close_imported_pointer: pointer was not imported from this pool (ignored)");
        return;
      }
      kind = it->second;
      open_.erase(it);
    }
    release(ptr, kind);
  }

 private:
  // Unmaps one imported allocation. Work of any stream may still touch it, hence the device
  // synchronisation; the free itself is stream-ordered (cudaFreeAsync) as in NVIDIA's
  // streamOrderedAllocationIPC sample, and completed before returning, because the exporter may
  // free the allocation as soon as every importer has closed it. (cudaFree is documented to
  // work too, yet compute-sanitizer memcheck reported imports released with it as leaked.)
  static void release(void* ptr, export_kind kind) noexcept {
    FUNNEL_CUDA_LOG(cudaDeviceSynchronize());
    if (kind == export_kind::dedicated) {
      FUNNEL_CUDA_LOG(cudaIpcCloseMemHandle(ptr));
      return;
    }
    FUNNEL_CUDA_LOG(cudaFreeAsync(ptr, cudaStreamLegacy));
    FUNNEL_CUDA_LOG(cudaStreamSynchronize(cudaStreamLegacy));
  }

  std::mutex mutex_;
  std::unordered_map<void*, export_kind> open_;
};

}  // namespace

namespace {

// The options with `device` resolved: current_device becomes the calling thread's device.
memory_pool_options resolved(const memory_pool_options& requested) {
  memory_pool_options options = requested;
  if (options.device == memory_pool_options::current_device) {
    check_device(0, options.name);  // a clear error when no device is visible at all
    FUNNEL_CUDA_TRY(cudaGetDevice(&options.device), "memory pool '" + options.name + "'");
  }
  return options;
}

}  // namespace

std::unique_ptr<pool_resource> make_cuda_resource(const memory_pool_options& requested) {
  const memory_pool_options options = resolved(requested);
  check_device(options.device, options.name);
  if (device_attribute(cudaDevAttrMemoryPoolsSupported, options.device) == 0) {
    throw unsupported("memory pool '" + options.name + "': device " +
                      std::to_string(options.device) + " does not support memory pools");
  }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = options.device;
  props.handleTypes = cudaMemHandleTypeNone;
  if (options.ipc_exportable) {
    const int supported =
        device_attribute(cudaDevAttrMemoryPoolSupportedHandleTypes, options.device);
    if ((supported & cudaMemHandleTypePosixFileDescriptor) == 0) {
      throw unsupported("memory pool '" + options.name + "': device " +
                        std::to_string(options.device) +
                        " cannot export pools as POSIX file descriptors (ipc_exportable)");
    }
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  }
  cudaMemPool_t pool = nullptr;
  FUNNEL_CUDA_TRY(cudaMemPoolCreate(&pool, &props), "creating memory pool '" + options.name + "'");
  auto resource =
      std::make_unique<cuda_pool_resource>(pool, options.device, options.ipc_exportable);
  std::uint64_t threshold = options.release_threshold;
  FUNNEL_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                  "release threshold of memory pool '" + options.name + "'");
  return resource;
}

std::unique_ptr<pool_resource> import_cuda_resource(int fd, const memory_pool_options& requested) {
  const memory_pool_options options = resolved(requested);
  check_device(options.device, options.name);
  cudaMemPool_t pool = nullptr;
  // The POSIX fd handle is passed by value in the pointer argument, as the CUDA API expects.
  FUNNEL_CUDA_TRY(cudaMemPoolImportFromShareableHandle(
                      &pool, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                      cudaMemHandleTypePosixFileDescriptor, 0),
                  "importing memory pool '" + options.name + "' from fd " + std::to_string(fd));
  auto resource = std::make_unique<imported_cuda_pool>(pool, options.device);
  // An imported pool does not inherit the exporter's access settings: when the pool lives on a
  // device other than ours (or one this process cannot see), our device needs access granted.
  cudaMemLocation here{};
  here.type = cudaMemLocationTypeDevice;
  here.id = options.device;
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  FUNNEL_CUDA_TRY(cudaMemPoolGetAccess(&flags, pool, &here),
                  "access of imported memory pool '" + options.name + "'");
  if (flags != cudaMemAccessFlagsProtReadWrite) {
    cudaMemAccessDesc desc{};
    desc.location = here;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    FUNNEL_CUDA_TRY(cudaMemPoolSetAccess(pool, &desc, 1),
                    "granting device " + std::to_string(options.device) +
                        " access to imported memory pool '" + options.name + "'");
  }
  return resource;
}

#else  // !FUNNEL_HAS_CUDA

namespace {
[[noreturn]] void no_cuda(const std::string& pool) {
  throw unsupported("memory pool '" + pool +
                    "': backend cuda requested but this funnel build has no CUDA backend "
                    "(rebuild with FUNNEL_ENABLE_CUDA=ON, or use the host backend)");
}
}  // namespace

std::unique_ptr<pool_resource> make_cuda_resource(const memory_pool_options& options) {
  no_cuda(options.name);
}
std::unique_ptr<pool_resource> import_cuda_resource(int /*fd*/,
                                                    const memory_pool_options& options) {
  no_cuda(options.name);
}

#endif

}  // namespace funnel::detail
