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

  /**
   * @brief (c): the pass time with perfect overlap, each part timed alone.
   * @return max(T_H2D, T_D2H, T_kernel), in seconds
   */
  [[nodiscard]] double bound_seconds() const noexcept;
  /**
   * @brief What the pipeline gains over copying and computing one chunk at a time.
   * @return serial / pipelined pass time, (a)/(b); 0 when nothing was timed
   */
  [[nodiscard]] double speedup() const noexcept;
  /**
   * @brief How close (b) comes to (c).
   * @return bound_seconds() / pipelined pass time; 0 when nothing was timed
   */
  [[nodiscard]] double efficiency_vs_bound() const noexcept;
  /**
   * @brief The bound with both copy directions timed together.
   *
   * While H2D and D2H overlap each gets less than it does alone, so (c) is not attainable when
   * copies dominate; T_both (both directions at once, no kernels) is (H2D + D2H bytes) / the
   * bidirectional rate.
   * @return max(T_both, T_kernel), in seconds
   */
  [[nodiscard]] double bidirectional_bound_seconds() const noexcept;
  /**
   * @brief How close (b) comes to what both directions copying at once allow.
   * @return bidirectional_bound_seconds() / pipelined pass time; 0 when nothing was timed
   */
  [[nodiscard]] double efficiency_vs_bidirectional_bound() const noexcept;
  /**
   * @brief The link's rate with both directions copying at once.
   * @return bytes of both directions / T_both, in GB/s (10^9 B/s); 0 when nothing was timed
   */
  [[nodiscard]] double bidirectional_gb_per_s() const noexcept;
  /**
   * @brief The results as text, for funnel-bench.
   * @return a few lines, each ending in a newline: each mode's time and the ratios
   */
  [[nodiscard]] std::string report() const;
};

}  // namespace funnel
