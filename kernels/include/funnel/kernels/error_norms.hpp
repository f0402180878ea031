// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file error_norms.hpp
 * @brief Error of a field against an exact solution, in a form that reduces across ranks.
 */
#pragma once

#include <cmath>
#include <cstdint>

namespace funnel::kernels {

/**
 * @brief Error of the cells one rank owns; combine ranks with MPI_MAX on `max_abs` and MPI_SUM
 * on `sum_squares` and `cells`.
 */
struct error_norms {
  double max_abs = 0.0;      ///< largest |computed - exact|
  double sum_squares = 0.0;  ///< sum of (computed - exact)^2
  std::int64_t cells = 0;    ///< cells compared

  /**
   * @brief Adds the norms of other cells (another part of the same rank's field): the larger
   * max_abs, the sums of sum_squares and cells. Parts added in a fixed order give the same
   * figures every run.
   * @param part the other cells' norms
   */
  void add(const error_norms& part) noexcept {
    max_abs = std::fmax(max_abs, part.max_abs);
    sum_squares += part.sum_squares;
    cells += part.cells;
  }

  /**
   * @brief Root mean square error, of one rank or of the reduced norms of all ranks.
   * @return sqrt(sum_squares / cells); 0 when no cell was compared
   */
  [[nodiscard]] double rms() const noexcept {
    return cells > 0 ? std::sqrt(sum_squares / static_cast<double>(cells)) : 0.0;
  }
};

}  // namespace funnel::kernels
