// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file progress.hpp
 * @brief The progress line of rank 0: \r-updated on a terminal, plain lines every ~10% otherwise.
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace funnel::stencil {

/**
 * @brief Prints step, % done, cell updates per second and the ETA while the run advances.
 *
 * On a terminal the line is rewritten in place at most a few times per second; when stdout is
 * not a terminal (batch logs, tests) one plain line is printed each time another ~10% of the
 * steps is done, so logs stay short. Disabled entirely by --quiet and on ranks other than 0.
 */
class progress_meter {
 public:
  /**
   * @param out where to print (stdout in the app)
   * @param first_step step the run starts at (after a restart: the checkpoint's step)
   * @param last_step step the run ends at
   * @param cells_per_step global cell updates per step
   * @param enabled false prints nothing (--quiet, ranks other than 0)
   * @param terminal true for \r-updated output, false for plain lines
   */
  progress_meter(std::FILE* out, std::int64_t first_step, std::int64_t last_step,
                 double cells_per_step, bool enabled, bool terminal);

  /**
   * @brief Reports that `step` steps are done (cheap when nothing is printed).
   * @param step the step just completed
   */
  void update(std::int64_t step);

  /// @brief Ends the \r-updated line (prints the newline); no-op for plain output.
  void finish();

 private:
  void print(std::int64_t step, bool final_line);

  std::FILE* out_;
  std::int64_t first_;
  std::int64_t last_;
  double cells_per_step_;
  bool enabled_;
  bool terminal_;
  int next_decile_ = 1;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
};

}  // namespace funnel::stencil
