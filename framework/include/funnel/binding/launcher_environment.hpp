// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file launcher_environment.hpp
 * @brief What funnel-run decided for this rank, read back from the FUNNEL_* variables it sets.
 */
#pragma once

#include <functional>
#include <string>

namespace funnel {

/**
 * @brief The launcher's decision for this rank, as funnel-run passes it to the app.
 *
 * funnel-run exports FUNNEL_LAUNCHER=funnel-run, FUNNEL_LOCAL_RANK, FUNNEL_LOCAL_SIZE,
 * FUNNEL_GPU_UUID, FUNNEL_GPU_INDEX, FUNNEL_RANKS_ON_GPU, FUNNEL_MPS (on/off) and, under MPS,
 * FUNNEL_MPS_PIPE. CUDA_MPS_PIPE_DIRECTORY is read as well: it is where a CUDA client looks for
 * its MPS daemon, whoever started it. Fields funnel-run did not set keep their defaults.
 */
struct launcher_environment {
  /// @brief True when FUNNEL_LAUNCHER=funnel-run (the app was started through funnel-run).
  bool from_funnel_run = false;
  /// @brief FUNNEL_LOCAL_RANK, -1 when unset.
  int local_rank = -1;
  /// @brief FUNNEL_LOCAL_SIZE, -1 when unset.
  int local_size = -1;
  /// @brief FUNNEL_GPU_UUID ("GPU-..."), empty when unset.
  std::string gpu_uuid;
  /// @brief FUNNEL_GPU_INDEX (nvidia-smi's index), -1 when unset.
  int gpu_index = -1;
  /// @brief FUNNEL_RANKS_ON_GPU, 0 when unset.
  int ranks_on_gpu = 0;
  /// @brief FUNNEL_MPS=on.
  bool mps = false;
  /// @brief FUNNEL_MPS_PIPE, empty when unset.
  std::string mps_pipe;
  /// @brief CUDA_MPS_PIPE_DIRECTORY, empty when unset.
  std::string cuda_mps_pipe_directory;

  /**
   * @brief Reads the variables through `lookup` (a getenv-like function returning nullptr for
   * an unset variable), so tests can supply their own environment.
   * @param lookup returns the value of a variable or nullptr
   * @return the parsed decision
   * @throw funnel::invalid_argument naming the variable and its value when a number is not a
   * non-negative integer, a rank is not below the size, or FUNNEL_MPS is not "on" or "off"
   */
  [[nodiscard]] static launcher_environment parse(
      const std::function<const char*(const char*)>& lookup);

  /**
   * @brief parse() over this process's environment (std::getenv).
   * @return the parsed decision
   * @throw funnel::invalid_argument as parse()
   */
  [[nodiscard]] static launcher_environment from_process();
};

}  // namespace funnel
