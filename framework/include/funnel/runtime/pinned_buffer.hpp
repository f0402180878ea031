// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pinned_buffer.hpp
 * @brief Owning, move-only page-locked host buffer (allocated or registered).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "funnel/error.hpp"
#include "funnel/runtime/backend_kind.hpp"

namespace funnel {

/**
 * @brief Page-locked host memory, so that copies to and from the GPU run at copy-engine speed
 * and overlap with compute.
 *
 * CUDA backend: allocated with cudaMallocHost, or existing memory page-locked with
 * cudaHostRegister (unregistered, not freed, on destruction). Host backend: page-aligned memory
 * from std::aligned_alloc, or existing memory wrapped without owning it. Move-only; a moved-from
 * buffer is empty (data() == nullptr, size() == 0).
 */
class pinned_buffer {
 public:
  /**
   * @brief Allocates `bytes` bytes of pinned host memory.
   * @param backend cuda (cudaMallocHost) or host (page-aligned std::aligned_alloc)
   * @param bytes size, > 0
   * @throw funnel::invalid_argument for a zero/negative size
   * @throw funnel::out_of_memory when the memory cannot be allocated
   * @throw funnel::unsupported for the CUDA backend without CUDA compiled in or a visible device
   */
  pinned_buffer(backend_kind backend, std::size_t bytes);

  /**
   * @brief Page-locks existing host memory for the lifetime of the returned buffer.
   * @param backend cuda (cudaHostRegister) or host (wrapped as is)
   * @param ptr the memory, not null; must stay valid while the buffer lives
   * @param bytes its size, > 0
   * @return a buffer that does not own `ptr`
   * @throw funnel::invalid_argument for a null pointer or a zero/negative size
   * @throw funnel::unsupported for the CUDA backend without CUDA compiled in or a visible device
   * @throw funnel::cuda_error when cudaHostRegister fails (e.g. the range is registered already)
   */
  [[nodiscard]] static pinned_buffer register_memory(backend_kind backend, void* ptr,
                                                     std::size_t bytes);

  /// @brief Frees or unregisters the memory; logs, never throws.
  ~pinned_buffer();
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  /**
   * @brief Takes over `other`'s memory.
   * @param other the buffer to take; left empty
   */
  pinned_buffer(pinned_buffer&& other) noexcept;
  /**
   * @brief Frees (or unregisters) the memory held, then takes over `other`'s.
   * @param other the buffer to take; left empty
   * @return this buffer
   */
  pinned_buffer& operator=(pinned_buffer&& other) noexcept;

  /**
   * @brief Start of the memory.
   * @return the host address; nullptr when empty
   */
  [[nodiscard]] void* data() const noexcept { return data_; }
  /**
   * @brief Size of the memory.
   * @return bytes; 0 when empty
   */
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /**
   * @brief Whether the memory was registered rather than allocated by this buffer.
   * @return true for register_memory(): destruction then never frees the memory (the CUDA
   * backend unregisters it)
   */
  [[nodiscard]] bool is_registered() const noexcept { return registered_; }
  /**
   * @brief The backend that pinned the memory.
   * @return the backend given at construction
   */
  [[nodiscard]] backend_kind backend() const noexcept { return backend_; }

  /**
   * @brief The memory as an array of T (size() / sizeof(T) elements).
   * @tparam T the element type
   * @return data() cast to T*
   * @throw funnel::invalid_argument when data() is not aligned for T
   */
  template <class T>
  [[nodiscard]] T* as() const {
    FUNNEL_EXPECTS(reinterpret_cast<std::uintptr_t>(data_) % alignof(T) == 0,
                   "funnel::pinned_buffer::as: data " +
                       std::to_string(reinterpret_cast<std::uintptr_t>(data_)) +
                       " is not aligned to " + std::to_string(alignof(T)) +
                       " bytes as the element type requires");
    return static_cast<T*>(data_);
  }

 private:
  pinned_buffer(backend_kind backend, void* data, std::size_t bytes, bool registered) noexcept
      : backend_(backend), data_(data), size_(bytes), registered_(registered) {}
  void destroy() noexcept;

  backend_kind backend_;
  void* data_;
  std::size_t size_;
  bool registered_;
};

}  // namespace funnel
