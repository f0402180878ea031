// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file timing.hpp
 * @brief Warm-up, repeat, median: how every funnel-bench figure is taken.
 */
#pragma once

#include <functional>
#include <vector>

#include "funnel/runtime/stream_view.hpp"
#include "json.hpp"

namespace funnel::bench {

/// @brief Repeated timings of one thing, in seconds.
struct samples {
  std::vector<double> seconds;  ///< one per timed repetition, in order

  /// @brief The median (0 when empty).
  [[nodiscard]] double median() const;
  /// @brief The fastest (0 when empty).
  [[nodiscard]] double min() const;
  /// @brief {"median_s", "min_s", "samples_s": [...]}.
  [[nodiscard]] json to_json() const;
};

/**
 * @brief Times `body` on the host clock, with the stream synchronised before the clock starts
 * and before it stops, so the time covers the device work `body` queued.
 * @param stream stream the body's work goes to
 * @param warmup untimed runs first
 * @param repeat timed runs (≥ 1)
 * @param body the work
 * @return one time per timed run
 */
[[nodiscard]] samples time_on_stream(stream_view stream, int warmup, int repeat,
                                     const std::function<void()>& body);

/**
 * @brief Times several variants interleaved (A B C A B C ...), so slow drift of a shared
 * machine spreads over all of them instead of favouring the one measured first.
 * @param stream stream the bodies' work goes to
 * @param warmup untimed rounds first
 * @param repeat timed rounds (≥ 1)
 * @param bodies the variants
 * @return the samples of each variant, in the order of `bodies`
 */
[[nodiscard]] std::vector<samples> time_interleaved(
    stream_view stream, int warmup, int repeat, const std::vector<std::function<void()>>& bodies);

}  // namespace funnel::bench
