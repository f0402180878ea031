// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal to funnel::memory_pool: the backend-specific half of a pool. memory_pool itself keeps
// what both backends share (live-allocation map, byte limit, argument checks, error messages).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "funnel/error.hpp"
#include "funnel/ipc/unique_fd.hpp"
#include "funnel/memory/ipc_pointer.hpp"
#include "funnel/memory/memory_pool_options.hpp"
#include "funnel/memory/pool_statistics.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::detail {

/// Every pool allocation is at least this aligned (and sized in multiples of it on the host).
inline constexpr std::size_t pool_alignment = 256;

[[nodiscard]] constexpr std::size_t round_up_to_alignment(std::size_t bytes) noexcept {
  return (bytes + pool_alignment - 1) / pool_alignment * pool_alignment;
}

// `bytes` rounded up to pool_alignment into `size`; false, with `why` set, when that overflows.
[[nodiscard]] inline bool aligned_size(std::size_t bytes, std::size_t& size, std::string& why) {
  size = round_up_to_alignment(bytes);
  if (size >= bytes) return true;
  why = "size overflows when rounded to the 256-byte alignment";
  return false;
}

class pool_resource {
 public:
  pool_resource() = default;
  pool_resource(const pool_resource&) = delete;
  pool_resource& operator=(const pool_resource&) = delete;
  virtual ~pool_resource() = default;

  [[nodiscard]] virtual backend_kind backend() const noexcept = 0;
  [[nodiscard]] virtual bool imported() const noexcept { return false; }
  [[nodiscard]] virtual bool ipc_exportable() const noexcept { return false; }

  // Returns nullptr when the memory is exhausted and says why in `why`; the caller turns that
  // into funnel::out_of_memory with the pool's numbers. Other failures throw.
  [[nodiscard]] virtual void* allocate(stream_view stream, std::size_t bytes, std::string& why) = 0;
  // `ptr`/`bytes` have already been checked against the live-allocation map.
  virtual void deallocate(stream_view stream, void* ptr, std::size_t bytes) noexcept = 0;

  // `stats` arrives with used/used_high as counted by memory_pool (requested bytes); a
  // resource fills in reserved and may replace used with what its allocator reports.
  virtual void fill_statistics(pool_statistics& stats) const = 0;
  virtual void trim_to(std::size_t bytes_to_keep) = 0;
  virtual void grant_access(int peer_device) = 0;

  [[nodiscard]] virtual unique_fd export_handle() const = 0;
  [[nodiscard]] virtual ipc_pointer export_pointer(void* ptr) const = 0;
  // Only pools made by memory_pool::import_handle map other processes' pointers; the others
  // keep these defaults.
  [[nodiscard]] virtual void* import_pointer(const ipc_pointer& /*data*/) {
    throw invalid_argument("import_pointer needs a pool made by memory_pool::import_handle");
  }
  virtual void close_imported_pointer(void* /*ptr*/) noexcept {}
};

// Factories, one per kind of pool (host_pool_resource.cpp, host_arena_resource.cpp,
// cuda_pool_resource.cpp).
[[nodiscard]] std::unique_ptr<pool_resource> make_host_resource(const memory_pool_options& options);
[[nodiscard]] std::unique_ptr<pool_resource> make_host_arena_resource(
    const memory_pool_options& options);
[[nodiscard]] std::unique_ptr<pool_resource> import_host_arena_resource(
    int fd, const memory_pool_options& options);
[[nodiscard]] std::unique_ptr<pool_resource> make_cuda_resource(const memory_pool_options& options);
[[nodiscard]] std::unique_ptr<pool_resource> import_cuda_resource(
    int fd, const memory_pool_options& options);

}  // namespace funnel::detail
