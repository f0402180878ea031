// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pass_statistics.hpp
 * @brief Timings and byte counts of one pipeline pass.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "funnel/pipeline/pass_mode.hpp"

namespace funnel {

/**
 * @brief What one pass did and how long each part took.
 *
 * Times are sums over chunks of the spans measured on each kind of stream (CUDA events on the
 * cuda backend, the steady clock on host), so `h2d_seconds` is the time the host → device link
 * was busy for this pass. With perfect overlap `pass_seconds` equals the largest of them.
 */
struct pass_statistics {
  pass_mode mode = pass_mode::pipelined;  ///< what ran
  int chunks = 0;                         ///< chunks in the plan
  int slots = 0;                          ///< S, chunks in flight
  int steps_per_pass = 0;                 ///< k
  bool staged_input = false;              ///< input went through pinned staging buffers
  bool staged_output = false;             ///< output went through pinned staging buffers
  double pass_seconds = 0.0;              ///< first operation start to last operation end
  double h2d_seconds = 0.0;               ///< T_H2D: host → device copies
  double kernel_seconds = 0.0;            ///< T_kernel: per-chunk device work (kernels + setup)
  double d2h_seconds = 0.0;               ///< T_D2H: device → host copies
  double stage_in_seconds = 0.0;          ///< host copies into pinned staging (0 if none)
  double stage_out_seconds = 0.0;         ///< host copies out of pinned staging (0 if none)
  std::size_t h2d_bytes = 0;              ///< bytes copied host → device
  std::size_t d2h_bytes = 0;              ///< bytes copied device → host
  std::int64_t cell_updates = 0;          ///< interior cells × k (0 when no kernels ran)

  /**
   * @brief The pass time with perfect overlap.
   * @return max(T_H2D, T_D2H, T_kernel), in seconds
   */
  [[nodiscard]] double bound_seconds() const noexcept;
  /**
   * @brief Which term sets bound_seconds().
   * @return "kernel", "h2d" or "d2h" (ties go to the first of these)
   */
  [[nodiscard]] std::string bound_name() const;
  /**
   * @brief How close the pass came to perfect overlap.
   * @return bound_seconds() / pass_seconds, 1 at best; 0 when nothing was timed
   */
  [[nodiscard]] double efficiency() const noexcept;
  /**
   * @brief Host → device link speed while copying.
   * @return h2d_bytes / h2d_seconds in GB/s (10^9 B/s); 0 when nothing was timed
   */
  [[nodiscard]] double h2d_gb_per_s() const noexcept;
  /**
   * @brief Device → host link speed while copying.
   * @return d2h_bytes / d2h_seconds in GB/s (10^9 B/s); 0 when nothing was timed
   */
  [[nodiscard]] double d2h_gb_per_s() const noexcept;
  /**
   * @brief Throughput of the pass.
   * @return cell_updates / pass_seconds; 0 when nothing was timed
   */
  [[nodiscard]] double cell_updates_per_s() const noexcept;
  /**
   * @brief The statistics in one line, for logs.
   * @return mode, chunks, S, k, pass time, efficiency and its bound, both link speeds, kernel
   * time, and whether pinned staging was used
   */
  [[nodiscard]] std::string summary() const;
};

}  // namespace funnel
