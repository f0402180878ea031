// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/concurrency_profile.hpp"

#include <algorithm>
#include <utility>

namespace funnel::report {

concurrency_profile::concurrency_profile(std::vector<busy_interval_set> ranks,
                                         std::int64_t start_ns, std::int64_t end_ns)
    : ranks_(static_cast<int>(ranks.size())) {
  if (end_ns <= start_ns) return;
  // +1 at every span's start, -1 at its end; a rank's own spans never overlap (normalized),
  // so the running sum is the number of ranks with work running.
  std::vector<std::pair<std::int64_t, int>> events;
  for (busy_interval_set& r : ranks) {
    for (const busy_interval& s : r.spans()) {
      const std::int64_t a = std::max(s.start_ns, start_ns);
      const std::int64_t b = std::min(s.end_ns, end_ns);
      if (a >= b) continue;
      events.emplace_back(a, +1);
      events.emplace_back(b, -1);
    }
  }
  std::sort(events.begin(), events.end());
  int count = 0;
  std::int64_t at = start_ns;
  auto push = [this](std::int64_t a, std::int64_t b, int c) {
    if (a >= b) return;
    if (!steps_.empty() && steps_.back().count == c && steps_.back().end_ns == a) {
      steps_.back().end_ns = b;
    } else {
      steps_.push_back({a, b, c});
    }
  };
  for (const auto& [t, delta] : events) {
    push(at, t, count);
    at = std::max(at, t);
    count += delta;
  }
  push(at, end_ns, count);
}

std::vector<std::int64_t> concurrency_profile::time_at_count() const {
  std::vector<std::int64_t> out(static_cast<std::size_t>(ranks_) + 1, 0);
  for (const step& s : steps_) out[static_cast<std::size_t>(s.count)] += s.end_ns - s.start_ns;
  return out;
}

void concurrency_profile::bin(const std::vector<std::int64_t>& edges, std::vector<double>& busy,
                              std::vector<double>& ranks) const {
  const std::size_t bins = edges.size() < 2 ? 0 : edges.size() - 1;
  busy.assign(bins, 0.0);
  ranks.assign(bins, 0.0);
  std::size_t first = 0;  // the first step that may reach into the current bin
  for (std::size_t i = 0; i < bins; ++i) {
    const std::int64_t a = edges[i];
    const std::int64_t b = edges[i + 1];
    if (b <= a) continue;
    while (first < steps_.size() && steps_[first].end_ns <= a) ++first;
    double covered = 0;
    double weighted = 0;
    for (std::size_t k = first; k < steps_.size() && steps_[k].start_ns < b; ++k) {
      const double overlap =
          static_cast<double>(std::min(steps_[k].end_ns, b) - std::max(steps_[k].start_ns, a));
      if (steps_[k].count > 0) covered += overlap;
      weighted += overlap * steps_[k].count;
    }
    busy[i] = covered / static_cast<double>(b - a);
    ranks[i] = weighted / static_cast<double>(b - a);
  }
}

}  // namespace funnel::report
