// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "allocation_tracker.hpp"

#include <algorithm>

namespace funnel::detail {

bool allocation_tracker::reserve(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (limit_ && (bytes > *limit_ || booked_ > *limit_ - bytes)) return false;
  booked_ += bytes;
  return true;
}

void allocation_tracker::cancel(std::size_t bytes) noexcept {
  std::lock_guard lock(mutex_);
  booked_ -= bytes;
}

void allocation_tracker::commit(void* ptr, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  live_.emplace(ptr, bytes);
  used_ += bytes;
  used_high_ = std::max(used_high_, used_);
}

allocation_tracker::release_status allocation_tracker::release(void* ptr, std::size_t bytes,
                                                               std::size_t& live_bytes) noexcept {
  std::lock_guard lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return release_status::unknown_pointer;
  live_bytes = it->second;
  if (it->second != bytes) return release_status::wrong_size;
  live_.erase(it);
  used_ -= bytes;
  booked_ -= bytes;
  return release_status::ok;
}

bool allocation_tracker::contains(void* ptr) const {
  std::lock_guard lock(mutex_);
  return live_.count(ptr) != 0;
}

std::size_t allocation_tracker::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

std::size_t allocation_tracker::used_high() const {
  std::lock_guard lock(mutex_);
  return used_high_;
}

std::size_t allocation_tracker::live_count() const {
  std::lock_guard lock(mutex_);
  return live_.size();
}

}  // namespace funnel::detail
