// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file unique_fd.hpp
 * @brief Move-only owner of a POSIX file descriptor.
 */
#pragma once

namespace funnel {

/**
 * @brief Owns one POSIX file descriptor and closes it when destroyed.
 *
 * Move-only, like every funnel handle owner. A default-constructed (or moved-from) unique_fd
 * holds no descriptor (`get() == -1`).
 */
class unique_fd {
 public:
  /// @brief Holds no descriptor.
  unique_fd() noexcept = default;
  /**
   * @brief Takes ownership of `fd`.
   * @param fd an open file descriptor, or -1 for none
   */
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  /// @brief Closes the descriptor (a failing close is logged, never thrown).
  ~unique_fd();

  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  /**
   * @brief Takes the descriptor of `other`.
   * @param other the owner to take from; left empty
   */
  unique_fd(unique_fd&& other) noexcept : fd_(other.release()) {}
  /**
   * @brief Closes the held descriptor, then takes the one of `other`.
   * @param other the owner to take from; left empty
   * @return this owner
   */
  unique_fd& operator=(unique_fd&& other) noexcept;

  /**
   * @brief The descriptor, still owned by this object.
   * @return the descriptor, or -1 when none is held
   */
  [[nodiscard]] int get() const noexcept { return fd_; }
  /**
   * @brief Whether a descriptor is held.
   * @return get() >= 0
   */
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  /**
   * @brief Whether a descriptor is held.
   * @return valid()
   */
  explicit operator bool() const noexcept { return valid(); }

  /**
   * @brief Gives up ownership without closing.
   * @return the descriptor (-1 if none was held); the caller now owns it
   */
  [[nodiscard]] int release() noexcept;
  /**
   * @brief Closes the held descriptor (if any) and takes ownership of `fd`.
   * @param fd the new descriptor, or -1 for none
   */
  void reset(int fd = -1) noexcept;
  /**
   * @brief A new descriptor for the same open file (dup with close-on-exec).
   * @return the duplicate
   * @throw funnel::invalid_argument when no descriptor is held
   * @throw funnel::system_error when dup fails
   */
  [[nodiscard]] unique_fd duplicate() const;

 private:
  int fd_ = -1;
};

}  // namespace funnel
