// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file device_properties.hpp
 * @brief What funnel needs to know about a CUDA device.
 */
#pragma once

#include <cstddef>
#include <string>

namespace funnel {

/**
 * @brief Properties of a CUDA device, read once by device::properties().
 *
 * `uuid` identifies the physical GPU across processes, launchers and CUDA_VISIBLE_DEVICES
 * renumbering (ranks sharing a GPU are counted by it); it is formatted as nvidia-smi -L prints it.
 */
struct device_properties {
  /// @brief Marketing name, e.g. "NVIDIA H100 80GB HBM3".
  std::string name;
  /// @brief "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lowercase hex, as nvidia-smi -L prints.
  std::string uuid;
  /// @brief Number of streaming multiprocessors.
  int sm_count = 0;
  /// @brief Global memory in bytes.
  std::size_t total_memory = 0;
  /// @brief Level-2 cache in bytes (50 MiB on an H100 SXM).
  std::size_t l2_cache_bytes = 0;
  /// @brief Copy engines that can run concurrently with kernels (2+: H2D and D2H overlap).
  int async_engine_count = 0;
  /// @brief Whether cudaMallocAsync / cudaMemPool are supported.
  bool memory_pools_supported = false;
  /// @brief Whether kernels of different streams can run at the same time.
  bool concurrent_kernels = false;
  /// @brief PCI domain of the device.
  int pci_domain = 0;
  /// @brief PCI bus of the device.
  int pci_bus = 0;
  /// @brief PCI device (slot) of the device.
  int pci_device = 0;
  /// @brief Compute capability, major part (9 for Hopper).
  int compute_major = 0;
  /// @brief Compute capability, minor part.
  int compute_minor = 0;
};

}  // namespace funnel
