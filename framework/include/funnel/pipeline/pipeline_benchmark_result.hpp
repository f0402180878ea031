// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pipeline_benchmark_result.hpp
 * @brief The pipeline benchmark's figures: serial vs pipelined vs the bound.
 */
#pragma once

#include <string>

#include "funnel/pipeline/pass_statistics.hpp"

namespace funnel {

/**
 * @brief Best-of-N passes of each mode over the same chunks (see run_pipeline_benchmark).
 */
struct pipeline_benchmark_result {
  pass_statistics serial;     ///< (a) copy → compute → copy, one chunk at a time, one stream
  pass_statistics pipelined;  ///< (b) funnel's pipeline
  pass_statistics h2d_alone;  ///< host → device copies alone
  pass_statistics d2h_alone;  ///< device → host copies alone
  pass_statistics compute_alone;  ///< kernels alone
  pass_statistics copies_both;    ///< both copy directions at once, no kernels

  /// @brief (c) max(T_H2D, T_D2H, T_kernel) with each part timed alone.
  [[nodiscard]] double bound_seconds() const noexcept;
  /// @brief serial / pipelined pass time, (a)/(b).
  [[nodiscard]] double speedup() const noexcept;
  /// @brief bound / pipelined pass time: how close (b) comes to (c).
  [[nodiscard]] double efficiency_vs_bound() const noexcept;
  /**
   * @brief max(T_both, T_kernel): the bound with both copy directions timed together.
   *
   * While H2D and D2H overlap each gets less than it does alone, so (c) is not attainable when
   * copies dominate; T_both (both directions at once, no kernels) is (H2D + D2H bytes) / the
   * bidirectional rate.
   */
  [[nodiscard]] double bidirectional_bound_seconds() const noexcept;
  /// @brief bidirectional bound / pipelined pass time: how close (b) comes to what both
  /// directions copying at once allow.
  [[nodiscard]] double efficiency_vs_bidirectional_bound() const noexcept;
  /// @brief Bytes of both directions / time, with both directions copying at once, in GB/s.
  [[nodiscard]] double bidirectional_gb_per_s() const noexcept;
  /// @brief A few lines for funnel-bench: each mode's time and the ratios.
  [[nodiscard]] std::string report() const;
};

}  // namespace funnel
