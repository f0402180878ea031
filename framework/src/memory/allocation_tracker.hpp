// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal to funnel::memory_pool: the map of live allocations and the byte-limit accounting,
// shared by both backends so bad deallocations are caught the same way everywhere.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace funnel::detail {

class allocation_tracker {
 public:
  explicit allocation_tracker(std::optional<std::size_t> byte_limit) : limit_(byte_limit) {}

  // Books `bytes` against the byte limit before the backend is asked, so two threads cannot
  // both squeeze under it. False when the limit would be exceeded.
  [[nodiscard]] bool reserve(std::size_t bytes);
  // Undoes reserve() when the backend could not allocate.
  void cancel(std::size_t bytes) noexcept;
  // Records a successful allocation booked by reserve().
  void commit(void* ptr, std::size_t bytes);

  enum class release_status { ok, unknown_pointer, wrong_size };
  // Removes `ptr` when it is live with exactly `bytes`; `live_bytes` reports the recorded size.
  [[nodiscard]] release_status release(void* ptr, std::size_t bytes,
                                       std::size_t& live_bytes) noexcept;

  [[nodiscard]] bool contains(void* ptr) const;
  [[nodiscard]] std::size_t used() const;
  [[nodiscard]] std::size_t used_high() const;
  [[nodiscard]] std::size_t live_count() const;
  [[nodiscard]] std::optional<std::size_t> byte_limit() const noexcept { return limit_; }
  // Empties the map and hands its entries to `fn(ptr, bytes)` (used when a pool dies).
  template <class Fn>
  void drain(Fn&& fn) {
    std::unordered_map<void*, std::size_t> live;
    {
      std::lock_guard lock(mutex_);
      live.swap(live_);
      used_ = 0;
      booked_ = 0;
    }
    for (auto& [ptr, bytes] : live) fn(ptr, bytes);
  }

 private:
  mutable std::mutex mutex_;
  std::optional<std::size_t> limit_;
  std::unordered_map<void*, std::size_t> live_;
  std::size_t used_ = 0;       // bytes of committed live allocations
  std::size_t booked_ = 0;     // used_ + allocations in flight between reserve and commit
  std::size_t used_high_ = 0;  // high-water mark of used_
};

}  // namespace funnel::detail
