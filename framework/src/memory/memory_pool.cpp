// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/memory/memory_pool.hpp"

#include <sstream>
#include <utility>

#include "allocation_tracker.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/device.hpp"
#include "pool_resource.hpp"

namespace funnel {
namespace {

std::string describe(const void* ptr) {
  std::ostringstream os;
  os << ptr;
  return os.str();
}

std::unique_ptr<detail::pool_resource> make_resource(backend_kind backend,
                                                     const memory_pool_options& options) {
  if (backend == backend_kind::cuda) return detail::make_cuda_resource(options);
  if (options.ipc_exportable) return detail::make_host_arena_resource(options);
  return detail::make_host_resource(options);
}

}  // namespace

memory_pool::memory_pool(backend_kind backend, memory_pool_options options)
    : memory_pool(make_resource(backend, options), std::move(options)) {}

memory_pool::memory_pool(std::unique_ptr<detail::pool_resource> resource,
                         memory_pool_options options)
    : resource_(std::move(resource)),
      tracker_(std::make_unique<detail::allocation_tracker>(options.byte_limit)),
      options_(std::move(options)) {}

memory_pool::~memory_pool() {
  if (!resource_) return;
  const std::size_t live = tracker_->live_count();
  if (live == 0) return;
  detail::log_error("memory pool '" + options_.name + "' destroyed with " + std::to_string(live) +
                    " live allocation(s) (" + std::to_string(tracker_->used()) +
                    " B); they are released now and must not be used any more");
  // Host memory is released at once; a CUDA pool releases it once outstanding frees are done.
  const stream_view stream = resource_->backend() == backend_kind::cuda
                                 ? stream_view::from_native_handle(nullptr)
                                 : stream_view::host();
  tracker_->drain([&](void* ptr, std::size_t bytes) { resource_->deallocate(stream, ptr, bytes); });
}

memory_pool::memory_pool(memory_pool&& other) noexcept = default;

memory_pool& memory_pool::operator=(memory_pool&& other) noexcept {
  if (this != &other) {
    memory_pool dying(std::move(*this));
    resource_ = std::move(other.resource_);
    tracker_ = std::move(other.tracker_);
    options_ = std::move(other.options_);
  }
  return *this;
}

detail::pool_resource& memory_pool::resource() const {
  if (!resource_) throw invalid_argument("funnel::memory_pool used after it was moved from");
  return *resource_;
}

void* memory_pool::allocate(stream_view stream, std::size_t bytes) {
  detail::pool_resource& res = resource();
  FUNNEL_EXPECTS(bytes > 0, "memory pool '" + options_.name +
                                "': allocate(0 bytes) is not allowed; ask for at least 1 byte");
  FUNNEL_EXPECTS(!res.imported(), "memory pool '" + options_.name +
                                      "' was imported from another process and cannot allocate");
  FUNNEL_EXPECTS(stream.backend() == res.backend(),
                 "memory pool '" + options_.name + "' (backend " + to_string(res.backend()) +
                     ") cannot allocate on a stream of backend " + to_string(stream.backend()));
  if (!tracker_->reserve(bytes)) {
    const pool_statistics stats = statistics();
    throw out_of_memory(bytes, options_.name, stats.used, stats.reserved,
                        "byte limit " + std::to_string(*tracker_->byte_limit()) + " reached");
  }
  std::string why;
  void* ptr = nullptr;
  try {
    ptr = res.allocate(stream, bytes, why);
  } catch (...) {
    tracker_->cancel(bytes);
    throw;
  }
  if (ptr == nullptr) {
    tracker_->cancel(bytes);
    const pool_statistics stats = statistics();
    throw out_of_memory(bytes, options_.name, stats.used, stats.reserved, why);
  }
  tracker_->commit(ptr, bytes);
  return ptr;
}

void memory_pool::deallocate(stream_view stream, void* ptr, std::size_t bytes) noexcept {
  try {
    if (!resource_) {
      detail::log_error("deallocate(" + describe(ptr) + ") on a moved-from memory pool ignored");
      return;
    }
    const std::string where = "deallocate(" + describe(ptr) + ", " + std::to_string(bytes) +
                              " B) on memory pool '" + options_.name + "' ignored: ";
    if (ptr == nullptr) {
      detail::log_error(where + "null pointer");
      return;
    }
    if (stream.backend() != resource_->backend()) {
      detail::log_error(where + "the stream is of backend " + to_string(stream.backend()) +
                        ", the pool of backend " + to_string(resource_->backend()));
      return;
    }
    std::size_t live_bytes = 0;
    switch (tracker_->release(ptr, bytes, live_bytes)) {
      case detail::allocation_tracker::release_status::ok:
        resource_->deallocate(stream, ptr, bytes);
        return;
      case detail::allocation_tracker::release_status::unknown_pointer:
        detail::log_error(where +
                          "not a live allocation of this pool (foreign pointer or double free)");
        return;
      case detail::allocation_tracker::release_status::wrong_size:
        detail::log_error(where + "wrong size, the allocation has " + std::to_string(live_bytes) +
                          " B");
        return;
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): deallocate is noexcept; logging failed too
  }
}

pool_statistics memory_pool::statistics() const {
  const detail::pool_resource& res = resource();
  pool_statistics stats;
  stats.used = tracker_->used();
  stats.used_high = tracker_->used_high();
  res.fill_statistics(stats);
  return stats;
}

void memory_pool::trim_to(std::size_t bytes_to_keep) { resource().trim_to(bytes_to_keep); }

void memory_pool::grant_access(const device& peer) { resource().grant_access(peer.id()); }

backend_kind memory_pool::backend() const noexcept {
  return resource_ ? resource_->backend() : backend_kind::host;
}

const std::string& memory_pool::name() const noexcept { return options_.name; }

bool memory_pool::is_imported() const noexcept { return resource_ && resource_->imported(); }

unique_fd memory_pool::export_handle() const {
  const detail::pool_resource& res = resource();
  FUNNEL_EXPECTS(res.ipc_exportable(), "memory pool '" + options_.name +
                                           "' cannot be exported: create it with "
                                           "memory_pool_options::ipc_exportable = true");
  return res.export_handle();
}

memory_pool memory_pool::import_handle(backend_kind backend, int fd, memory_pool_options options) {
  FUNNEL_EXPECTS(fd >= 0, "memory_pool::import_handle: invalid file descriptor " +
                              std::to_string(fd) + " (expected one from export_handle)");
  auto resource = backend == backend_kind::cuda ? detail::import_cuda_resource(fd, options)
                                                : detail::import_host_arena_resource(fd, options);
  options.byte_limit.reset();
  return memory_pool(std::move(resource), std::move(options));
}

ipc_pointer memory_pool::export_pointer(void* ptr) const {
  const detail::pool_resource& res = resource();
  FUNNEL_EXPECTS(res.ipc_exportable(), "memory pool '" + options_.name +
                                           "' cannot export pointers: create it with "
                                           "memory_pool_options::ipc_exportable = true");
  FUNNEL_EXPECTS(tracker_->contains(ptr), "memory pool '" + options_.name + "': pointer " +
                                              describe(ptr) +
                                              " is not a live allocation of this pool");
  return res.export_pointer(ptr);
}

void* memory_pool::import_pointer(const ipc_pointer& data) {
  detail::pool_resource& res = resource();
  FUNNEL_EXPECTS(res.imported(), "memory pool '" + options_.name +
                                     "' is not imported: import_pointer needs a pool made by "
                                     "memory_pool::import_handle");
  return res.import_pointer(data);
}

void memory_pool::close_imported_pointer(void* ptr) noexcept {
  if (!resource_) {
    detail::log_error("close_imported_pointer(" + describe(ptr) +
                      ") on a moved-from memory pool ignored");
    return;
  }
  if (!resource_->imported()) {
    detail::log_error("close_imported_pointer(" + describe(ptr) + ") on memory pool '" +
                      options_.name + "' ignored: the pool is not imported");
    return;
  }
  resource_->close_imported_pointer(ptr);
}

}  // namespace funnel
