// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file report.hpp
 * @brief What a benchmark hands back: comparison rows (baseline, funnel, ratio, goal, met?),
 * raw timings, and the stdout table / JSON document built from them.
 */
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "json.hpp"

namespace funnel::bench {

/// @brief A goal from the issue: the ratio must be at least (or at most) `value`.
struct goal {
  enum class direction { at_least, at_most };
  direction dir = direction::at_least;  ///< which side of `value` meets it
  double value = 0.0;                   ///< the threshold

  /// @brief "≥ 0.90" or "≤ 1.03".
  [[nodiscard]] std::string text() const;
  /// @brief Whether `ratio` meets the goal.
  [[nodiscard]] bool met_by(double ratio) const noexcept;
};

/// @brief ratio ≥ value.
[[nodiscard]] goal at_least(double value) noexcept;
/// @brief ratio ≤ value.
[[nodiscard]] goal at_most(double value) noexcept;

/// @brief One line of the table: a baseline figure, funnel's figure and their ratio.
struct comparison {
  std::string what;            ///< the case, e.g. "N=8 synthetic (b)/(a)"
  std::string baseline_name;   ///< e.g. "time-sliced"
  double baseline = 0.0;       ///< baseline figure
  std::string funnel_name;     ///< e.g. "MPS via funnel-run"
  double funnel = 0.0;         ///< funnel's figure
  std::string unit;            ///< unit of both figures, e.g. "launches/s"
  double ratio = 0.0;          ///< the ratio the goal is about (defined per row)
  std::optional<goal> target;  ///< the issue's goal, when this row has one
  /// Goals are stated for an H100; on the host backend the row says "n/a (host)" instead of
  /// met / not met, so a plumbing run cannot pass for a measurement.
  bool goal_applies = true;
  std::string note;  ///< short remark shown after the table (e.g. "GPU saturated")
};

/// @brief What one benchmark produced.
struct outcome {
  std::string name;                ///< benchmark name
  std::string status = "ok";       ///< "ok", "skipped" or "failed"
  std::string reason;              ///< why skipped / failed
  std::vector<comparison> rows;    ///< the table rows
  json raw = json::object();       ///< every raw timing and parameter
  std::vector<std::string> notes;  ///< lines printed after the table
};

/// @brief An outcome saying why the benchmark did not run.
[[nodiscard]] outcome skipped(const std::string& name, const std::string& reason);

/**
 * @brief The stdout table of several outcomes: benchmark, case, baseline, funnel, ratio, goal,
 * met?; skipped benchmarks as one "skipped: reason" line each.
 * @param outcomes what ran
 */
[[nodiscard]] std::string format_table(const std::vector<outcome>& outcomes);

/**
 * @brief The JSON of one outcome: status, reason, rows (with met), raw, notes.
 * @param o the outcome
 */
[[nodiscard]] json to_json(const outcome& o);

/**
 * @brief Formats a figure with 4 significant digits and an SI prefix where it helps
 * (e.g. "1.234 G").
 * @param value the figure
 */
[[nodiscard]] std::string si(double value);

}  // namespace funnel::bench
