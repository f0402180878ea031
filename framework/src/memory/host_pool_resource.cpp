// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Host backend pool: 256-byte aligned blocks from the C++ allocator. Freed blocks are cached by
// size for reuse while the pool's reserved bytes stay within the release threshold, which is
// what a CUDA pool does at its synchronisation points (host streams are always synchronised).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "funnel/error.hpp"
#include "pool_resource.hpp"

namespace funnel::detail {
namespace {

class host_pool_resource final : public pool_resource {
 public:
  explicit host_pool_resource(std::size_t release_threshold) : threshold_(release_threshold) {}
  ~host_pool_resource() override {
    std::lock_guard lock(mutex_);
    release_cached_above(0);
  }

  [[nodiscard]] backend_kind backend() const noexcept override { return backend_kind::host; }

  void* allocate(stream_view /*stream*/, std::size_t bytes, std::string& why) override {
    std::size_t size = 0;
    if (!aligned_size(bytes, size, why)) return nullptr;
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(size); it != cache_.end()) {
      void* ptr = it->second;
      cache_.erase(it);
      cached_ -= size;
      return ptr;
    }
    void* ptr = std::aligned_alloc(pool_alignment, size);
    if (ptr == nullptr && !cache_.empty()) {  // memory may be held by cached blocks of other sizes
      release_cached_above(0);
      ptr = std::aligned_alloc(pool_alignment, size);
    }
    if (ptr == nullptr) {
      why = "host allocation of " + std::to_string(size) + " B failed";
      return nullptr;
    }
    reserved_ += size;
    reserved_high_ = std::max(reserved_high_, reserved_);
    return ptr;
  }

  void deallocate(stream_view /*stream*/, void* ptr, std::size_t bytes) noexcept override {
    const std::size_t size = round_up_to_alignment(bytes);
    std::lock_guard lock(mutex_);
    try {
      cache_.emplace(size, ptr);
      cached_ += size;
    } catch (...) {  // no memory to cache the block: give it back instead
      std::free(ptr);
      reserved_ -= size;
    }
    release_cached_above(threshold_);
  }

  void fill_statistics(pool_statistics& stats) const override {
    std::lock_guard lock(mutex_);
    stats.reserved = reserved_;
    stats.reserved_high = reserved_high_;
  }

  void trim_to(std::size_t bytes_to_keep) override {
    std::lock_guard lock(mutex_);
    release_cached_above(bytes_to_keep);
  }

  void grant_access(int /*peer_device*/) override {
    throw unsupported(
        "grant_access needs a pool of the cuda backend; host pools are "
        "accessible from every thread already");
  }
  [[nodiscard]] unique_fd export_handle() const override { throw_not_exportable(); }
  [[nodiscard]] ipc_pointer export_pointer(void* /*ptr*/) const override { throw_not_exportable(); }
  [[nodiscard]] void* import_pointer(const ipc_pointer& /*data*/) override {
    throw_not_exportable();
  }
  void close_imported_pointer(void* /*ptr*/) noexcept override {}

 private:
  [[noreturn]] static void throw_not_exportable() {
    throw invalid_argument("host memory pool was not created with ipc_exportable");
  }

  // Frees cached blocks, largest first, until at most `keep` bytes stay reserved.
  void release_cached_above(std::size_t keep) noexcept {
    while (reserved_ > keep && !cache_.empty()) {
      auto largest = std::prev(cache_.end());
      std::free(largest->second);
      reserved_ -= largest->first;
      cached_ -= largest->first;
      cache_.erase(largest);
    }
  }

  mutable std::mutex mutex_;
  std::size_t threshold_;
  std::multimap<std::size_t, void*> cache_;  // rounded size -> freed block
  std::size_t cached_ = 0;
  std::size_t reserved_ = 0;
  std::size_t reserved_high_ = 0;
};

}  // namespace

std::unique_ptr<pool_resource> make_host_resource(const memory_pool_options& options) {
  return std::make_unique<host_pool_resource>(options.release_threshold);
}

}  // namespace funnel::detail
