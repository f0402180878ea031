// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file memory_pool.hpp
 * @brief Stream-ordered memory pool of either backend (cudaMemPool_t or host memory).
 */
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "funnel/ipc/unique_fd.hpp"
#include "funnel/memory/ipc_pointer.hpp"
#include "funnel/memory/memory_pool_options.hpp"
#include "funnel/memory/pool_statistics.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

class device;

namespace detail {
class pool_resource;
class allocation_tracker;
}  // namespace detail

/**
 * @brief A stream-ordered memory pool: `allocate(stream, bytes)` / `deallocate(stream, ...)`.
 *
 * cuda backend: a `cudaMemPool_t` on `options.device` (cudaMallocFromPoolAsync /
 * cudaFreeAsync), statistics read from the pool's attributes. host backend: 256-byte aligned
 * host memory; freed blocks are cached for reuse while the pool's reserved bytes stay within
 * `release_threshold` (like a CUDA pool at a synchronisation point), so `reserved = used +
 * cached`. With `ipc_exportable`, host allocations are carved (first fit) out of a memfd arena
 * of `host_ipc_capacity` bytes mapped MAP_SHARED, so the same fd + export-data path works
 * between CPU-only processes.
 *
 * Both backends keep a map of live allocations: deallocating a pointer the pool did not hand
 * out, twice, or with the wrong size is logged ("funnel: ...") and ignored. The optional byte
 * limit counts requested bytes of live allocations.
 *
 * A pool made by import_handle() maps another process's pool: it cannot allocate, only
 * import_pointer() / close_imported_pointer().
 *
 * Move-only; a moved-from pool may only be destroyed or assigned to. Methods may be called from
 * several threads.
 */
class memory_pool {
 public:
  /**
   * @brief Creates a pool.
   * @param backend backend_kind::cuda (a cudaMemPool_t on options.device) or backend_kind::host
   * @param options name, device, release threshold, byte limit, IPC
   * @throw funnel::unsupported when the CUDA backend is not compiled in, the device does not
   * support memory pools or (with ipc_exportable) POSIX file descriptor handles
   * @throw funnel::invalid_argument for a bad device id or a zero host_ipc_capacity
   * @throw funnel::cuda_error / funnel::system_error when creating the pool fails
   */
  explicit memory_pool(backend_kind backend, memory_pool_options options = {});
  /// @brief Destroys the pool; live allocations are reported on stderr and released.
  ~memory_pool();
  memory_pool(const memory_pool&) = delete;
  memory_pool& operator=(const memory_pool&) = delete;
  /**
   * @brief Takes over `other`'s pool.
   * @param other the pool to take; left empty
   */
  memory_pool(memory_pool&& other) noexcept;
  /**
   * @brief Destroys this pool, then takes over `other`'s.
   * @param other the pool to take; left empty
   * @return this pool
   */
  memory_pool& operator=(memory_pool&& other) noexcept;

  /**
   * @brief Allocates `bytes`, usable by work submitted to `stream` after this call.
   * @param stream stream of this pool's backend that orders the allocation
   * @param bytes size, > 0
   * @return the allocation (256-byte aligned or better)
   * @throw funnel::invalid_argument for 0 bytes, a stream of another backend, an imported pool
   * @throw funnel::out_of_memory when the byte limit or the device (or the host arena) cannot
   * satisfy the request; the stream stays usable
   */
  [[nodiscard]] void* allocate(stream_view stream, std::size_t bytes);
  /**
   * @brief Returns an allocation to the pool once the work submitted to `stream` so far is done.
   *
   * Bad arguments (a foreign pointer, a double free, a size other than the allocated one, a
   * stream of another backend) are logged and ignored; the statistics are then unchanged.
   * @param stream stream that orders the release
   * @param ptr pointer returned by allocate()
   * @param bytes the size given to allocate()
   */
  void deallocate(stream_view stream, void* ptr, std::size_t bytes) noexcept;

  /**
   * @brief Current and high-water reserved/used bytes.
   * @return the statistics
   * @throw funnel::cuda_error when reading the CUDA pool's attributes fails
   */
  [[nodiscard]] pool_statistics statistics() const;
  /**
   * @brief Returns unused reserved memory to the system until at most `bytes_to_keep` stay
   * reserved (or nothing more can be released). Memory freed on a stream counts only once that
   * stream has reached the free.
   * @param bytes_to_keep reserved bytes that may stay
   * @throw funnel::cuda_error when cudaMemPoolTrimTo fails
   */
  void trim_to(std::size_t bytes_to_keep);
  /**
   * @brief Lets kernels on `peer` read and write this pool's allocations.
   * @param peer the other device (granting a pool's own device is a no-op)
   * @throw funnel::unsupported on the host backend, or when cudaDeviceCanAccessPeer says `peer`
   * cannot access this pool's device
   * @throw funnel::cuda_error when cudaMemPoolSetAccess fails
   */
  void grant_access(const device& peer);

  /**
   * @brief The backend this pool takes memory from.
   * @return the backend given at creation (host for a moved-from pool)
   */
  [[nodiscard]] backend_kind backend() const noexcept;
  /**
   * @brief The pool's name, which its error messages and leak reports carry.
   * @return the name given in the options ("" for a moved-from pool)
   */
  [[nodiscard]] const std::string& name() const noexcept;
  /**
   * @brief Whether this pool maps another process's pool.
   * @return true for a pool made by import_handle(), which cannot allocate
   */
  [[nodiscard]] bool is_imported() const noexcept;

  /**
   * @brief A POSIX file descriptor through which another process can import this pool.
   * @return a new descriptor (the caller owns it; send it with allgather_fds)
   * @throw funnel::invalid_argument unless the pool was created with ipc_exportable
   * @throw funnel::cuda_error / funnel::system_error when exporting fails
   */
  [[nodiscard]] unique_fd export_handle() const;
  /**
   * @brief Maps another process's pool from a descriptor made by export_handle().
   * @param backend backend of the exporting pool
   * @param fd the descriptor (not consumed; the caller keeps it)
   * @param options name and device of the imported pool (the rest is ignored)
   * @return the imported pool, which cannot allocate
   * @throw funnel::invalid_argument for a bad descriptor
   * @throw funnel::cuda_error / funnel::system_error when importing fails
   */
  [[nodiscard]] static memory_pool import_handle(backend_kind backend, int fd,
                                                 memory_pool_options options = {});
  /**
   * @brief Describes a live allocation of this IPC-exportable pool for import elsewhere.
   * @param ptr pointer returned by allocate() and not yet deallocated
   * @return the export data
   * @throw funnel::invalid_argument when the pool is not ipc_exportable or `ptr` is not live
   */
  [[nodiscard]] ipc_pointer export_pointer(void* ptr) const;
  /**
   * @brief Maps an allocation exported by the pool this one was imported from.
   * @param data made by export_pointer() in the exporting process
   * @return the pointer in this process; release it with close_imported_pointer()
   * @throw funnel::invalid_argument when this pool is not imported or `data` is not valid
   * @throw funnel::cuda_error when cudaMemPoolImportPointer fails
   */
  [[nodiscard]] void* import_pointer(const ipc_pointer& data);
  /**
   * @brief Releases a pointer returned by import_pointer() (unknown pointers are logged).
   * @param ptr the imported pointer
   */
  void close_imported_pointer(void* ptr) noexcept;

 private:
  memory_pool(std::unique_ptr<detail::pool_resource> resource, memory_pool_options options);
  detail::pool_resource& resource() const;

  std::unique_ptr<detail::pool_resource> resource_;
  std::unique_ptr<detail::allocation_tracker> tracker_;
  memory_pool_options options_;
};

}  // namespace funnel
