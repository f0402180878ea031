// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "timing.hpp"

#include <algorithm>
#include <chrono>

namespace funnel::bench {

double samples::median() const {
  if (seconds.empty()) return 0.0;
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double samples::min() const {
  return seconds.empty() ? 0.0 : *std::min_element(seconds.begin(), seconds.end());
}

json samples::to_json() const {
  json out = json::object();
  out["median_s"] = median();
  out["min_s"] = min();
  out["samples_s"] = json(seconds);
  return out;
}

samples time_on_stream(stream_view stream, int warmup, int repeat,
                       const std::function<void()>& body) {
  return time_interleaved(stream, warmup, repeat, {body}).front();
}

std::vector<samples> time_interleaved(stream_view stream, int warmup, int repeat,
                                      const std::vector<std::function<void()>>& bodies) {
  using clock = std::chrono::steady_clock;
  std::vector<samples> out(bodies.size());
  for (int round = 0; round < warmup + std::max(repeat, 1); ++round) {
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      stream.synchronize();
      const auto start = clock::now();
      bodies[b]();
      stream.synchronize();
      const double s = std::chrono::duration<double>(clock::now() - start).count();
      if (round >= warmup) out[b].seconds.push_back(s);
    }
  }
  return out;
}

}  // namespace funnel::bench
