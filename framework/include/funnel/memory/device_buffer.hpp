// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file device_buffer.hpp
 * @brief Typed owner of one memory_pool allocation, returned to the pool on its stream.
 */
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "funnel/error.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

/**
 * @brief `count` elements of `T` in a memory_pool allocation (device memory on the cuda
 * backend), freed on the buffer's stream when the buffer dies.
 *
 * Move-only. The memory is not initialised. The pool must outlive the buffer. When other
 * streams used the memory, make the last of them the buffer's stream (set_stream) or order them
 * before it, so the free does not overtake their work.
 *
 * @tparam T a trivially copyable element type (the memory may live on a device)
 */
template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "device_buffer<T> needs a trivially copyable T");

 public:
  /// @brief An empty buffer (no pool, no memory).
  device_buffer() noexcept = default;
  /**
   * @brief Allocates `count` elements from `pool`, ordered on `stream`.
   * @param pool pool to allocate from (must outlive the buffer)
   * @param stream stream of the pool's backend; the memory is usable by work submitted to it
   * @param count number of elements (0 gives an empty buffer without an allocation)
   * @throw funnel::invalid_argument when count * sizeof(T) overflows, or as memory_pool::allocate
   * @throw funnel::out_of_memory as memory_pool::allocate
   */
  device_buffer(memory_pool& pool, stream_view stream, std::size_t count)
      : pool_(&pool), stream_(stream), size_(count) {
    FUNNEL_EXPECTS(count <= std::numeric_limits<std::size_t>::max() / sizeof(T),
                   "device_buffer of " + std::to_string(count) + " elements of " +
                       std::to_string(sizeof(T)) + " B each overflows std::size_t");
    if (count > 0) data_ = static_cast<T*>(pool.allocate(stream, count * sizeof(T)));
  }
  /// @brief Returns the memory to its pool on the buffer's stream.
  ~device_buffer() { free(); }

  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  /**
   * @brief Takes over `other`'s memory.
   * @param other the buffer to take; left empty
   */
  device_buffer(device_buffer&& other) noexcept
      : pool_(std::exchange(other.pool_, nullptr)),
        stream_(other.stream_),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  /**
   * @brief Frees this buffer's memory, then takes over `other`'s.
   * @param other the buffer to take; left empty
   * @return this buffer
   */
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      free();
      pool_ = std::exchange(other.pool_, nullptr);
      stream_ = other.stream_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  /**
   * @brief The elements, in the pool's memory (device memory on the cuda backend).
   * @return the first element; nullptr when empty
   */
  [[nodiscard]] T* data() const noexcept { return data_; }
  /**
   * @brief Number of elements.
   * @return the count given at construction; 0 when empty
   */
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /**
   * @brief Size in bytes.
   * @return size() * sizeof(T)
   */
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  /**
   * @brief Whether the buffer holds no elements.
   * @return true when size() is 0 (default-constructed, moved from, or 0 elements asked for)
   */
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /**
   * @brief The stream the memory will be freed on.
   * @return the stream given at construction or by set_stream()
   */
  [[nodiscard]] stream_view stream() const noexcept { return stream_; }
  /**
   * @brief Changes the stream the memory will be freed on (e.g. the last stream that used it).
   * @param stream a stream of the pool's backend
   */
  void set_stream(stream_view stream) noexcept { stream_ = stream; }

 private:
  void free() noexcept {
    if (data_ != nullptr) pool_->deallocate(stream_, data_, size_bytes());
    data_ = nullptr;
    size_ = 0;
  }

  memory_pool* pool_ = nullptr;
  stream_view stream_ = stream_view::host();
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace funnel
