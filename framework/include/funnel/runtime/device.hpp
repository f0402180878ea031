// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file device.hpp
 * @brief A CUDA device: selection, properties and peer access.
 */
#pragma once

#include "funnel/runtime/device_properties.hpp"

namespace funnel {

/**
 * @brief Names one CUDA device visible to this process (CUDA backend only).
 *
 * A value type holding the device ordinal: copying it copies the name, not the GPU. It holds no
 * global state; make_current() is the only call that changes the calling thread's device, and
 * the peer-access calls restore the device they found.
 */
class device {
 public:
  /**
   * @brief Names device `id`.
   * @param id ordinal in [0, count())
   * @throw funnel::unsupported when CUDA is not compiled in or no device is visible
   * @throw funnel::invalid_argument when `id` is out of range (the message gives the range)
   */
  explicit device(int id);

  /**
   * @brief The calling thread's current device (cudaGetDevice).
   * @return that device
   * @throw funnel::unsupported when CUDA is not compiled in or no device is visible
   */
  [[nodiscard]] static device current();

  /**
   * @brief Number of CUDA devices visible to this process (funnel::cuda_device_count()).
   * @return the count; 0 without CUDA compiled in or without a GPU
   */
  [[nodiscard]] static int count() noexcept;

  /**
   * @brief The device ordinal.
   * @return the CUDA ordinal, in [0, count()), as CUDA_VISIBLE_DEVICES renumbers them
   */
  [[nodiscard]] int id() const noexcept { return id_; }

  /**
   * @brief Reads the device's properties.
   * @return name, UUID, SMs, memory, copy engines, pool support, PCI location, compute capability
   * @throw funnel::cuda_error when the CUDA runtime fails
   */
  [[nodiscard]] device_properties properties() const;

  /**
   * @brief Makes this the calling thread's current device (cudaSetDevice).
   * @throw funnel::cuda_error when the CUDA runtime fails
   */
  void make_current() const;

  /**
   * @brief Whether this device can read and write `peer`'s memory directly.
   * @param peer the other device (a device can always access itself)
   * @return cudaDeviceCanAccessPeer's answer
   * @throw funnel::cuda_error when the CUDA runtime fails
   */
  [[nodiscard]] bool can_access_peer(const device& peer) const;

  /**
   * @brief Lets kernels and copies on this device access `peer`'s memory. Idempotent: enabling
   * twice, or enabling a device for itself, is not an error.
   * @param peer the other device
   * @throw funnel::unsupported naming both devices when they cannot reach each other
   * @throw funnel::cuda_error when the CUDA runtime fails
   */
  void enable_peer_access(const device& peer) const;

  /// @brief Same ordinal.
  friend bool operator==(const device& a, const device& b) noexcept { return a.id_ == b.id_; }
  /// @brief Negation of ==.
  friend bool operator!=(const device& a, const device& b) noexcept { return !(a == b); }

 private:
  int id_;
};

}  // namespace funnel
