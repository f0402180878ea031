// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file busy_interval_set.hpp
 * @brief The union of many busy spans: what a record stores and what the merger measures.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "funnel/report/busy_interval.hpp"

namespace funnel::report {

/**
 * @brief A set of points in time, kept as sorted, disjoint, non-touching spans.
 *
 * Spans are added in any order and may overlap; the set keeps their union. Kernels of several
 * streams finish out of order and CUPTI hands their records over in batches, so the union is
 * taken once per batch (normalize()) rather than per span.
 */
class busy_interval_set {
 public:
  busy_interval_set() = default;
  /**
   * @brief The union of `spans`.
   * @param spans spans in any order; empty and reversed ones are dropped
   */
  explicit busy_interval_set(std::vector<busy_interval> spans);

  /**
   * @brief Adds one span (the union is taken at the next normalize() or read).
   * @param span an empty or reversed span is ignored
   */
  void add(const busy_interval& span);
  /**
   * @brief Adds every span of another set.
   * @param other any set
   */
  void add(const busy_interval_set& other);

  /// @brief Sorts the spans and merges those that overlap or touch.
  void normalize();

  /**
   * @brief The union as sorted, disjoint spans (normalizes first).
   * @return spans with spans[i].end_ns < spans[i + 1].start_ns
   */
  [[nodiscard]] const std::vector<busy_interval>& spans();
  /**
   * @brief The spans as they are; sorted and disjoint only after normalize().
   * @return the stored spans
   */
  [[nodiscard]] const std::vector<busy_interval>& raw_spans() const noexcept { return spans_; }

  /**
   * @brief Moves the union out and leaves the set empty.
   * @return the sorted, disjoint spans
   */
  [[nodiscard]] std::vector<busy_interval> take();

  /// @brief True when no span was added (or all were taken).
  [[nodiscard]] bool empty() const noexcept { return spans_.empty(); }

  /**
   * @brief The time the set covers (normalizes first).
   * @return the summed length of the union, in ns
   */
  [[nodiscard]] std::int64_t total_ns();

  /**
   * @brief The time the set covers inside [start_ns, end_ns) (normalizes first).
   * @param start_ns first nanosecond of the window
   * @param end_ns first nanosecond after it
   * @return covered ns inside the window; 0 for an empty window
   */
  [[nodiscard]] std::int64_t covered_ns(std::int64_t start_ns, std::int64_t end_ns);

  /**
   * @brief The part of the set inside [start_ns, end_ns) (normalizes first).
   * @param start_ns first nanosecond of the window
   * @param end_ns first nanosecond after it
   * @return a new, normalized set
   */
  [[nodiscard]] busy_interval_set clipped(std::int64_t start_ns, std::int64_t end_ns);

  /**
   * @brief Shifts every span by `offset_ns` (a change of clock).
   * @param offset_ns added to both ends of every span
   */
  void shift(std::int64_t offset_ns) noexcept;

 private:
  std::vector<busy_interval> spans_;
  bool normalized_ = true;
};

}  // namespace funnel::report
