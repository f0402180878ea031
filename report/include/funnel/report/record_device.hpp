// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file record_device.hpp
 * @brief A GPU a recorded process used.
 */
#pragma once

#include <cstdint>
#include <string>

namespace funnel::report {

/// @brief One GPU of a record: the slot its spans name, and what the GPU is.
struct record_device {
  std::uint32_t slot = 0;  ///< the device's ordinal in the process (CUPTI's deviceId)
  std::string uuid;        ///< "GPU-xxxxxxxx-...", as nvidia-smi -L prints it
  std::string name;        ///< e.g. "NVIDIA H200"
};

}  // namespace funnel::report
