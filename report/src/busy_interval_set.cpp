// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/busy_interval_set.hpp"

#include <algorithm>
#include <utility>

namespace funnel::report {

busy_interval_set::busy_interval_set(std::vector<busy_interval> spans) {
  spans_.reserve(spans.size());
  for (const busy_interval& s : spans) add(s);
  normalize();
}

void busy_interval_set::add(const busy_interval& span) {
  if (span.end_ns <= span.start_ns) return;
  if (normalized_ && !spans_.empty() && span.start_ns <= spans_.back().end_ns) normalized_ = false;
  spans_.push_back(span);
}

void busy_interval_set::add(const busy_interval_set& other) {
  for (const busy_interval& s : other.spans_) add(s);
}

void busy_interval_set::normalize() {
  if (normalized_) return;
  std::sort(spans_.begin(), spans_.end(), [](const busy_interval& a, const busy_interval& b) {
    return a.start_ns < b.start_ns || (a.start_ns == b.start_ns && a.end_ns < b.end_ns);
  });
  std::size_t out = 0;
  for (std::size_t i = 1; i < spans_.size(); ++i) {
    if (spans_[i].start_ns <= spans_[out].end_ns) {
      spans_[out].end_ns = std::max(spans_[out].end_ns, spans_[i].end_ns);
    } else {
      spans_[++out] = spans_[i];
    }
  }
  if (!spans_.empty()) spans_.resize(out + 1);
  normalized_ = true;
}

const std::vector<busy_interval>& busy_interval_set::spans() {
  normalize();
  return spans_;
}

std::vector<busy_interval> busy_interval_set::take() {
  normalize();
  std::vector<busy_interval> out = std::move(spans_);
  spans_.clear();
  return out;
}

std::int64_t busy_interval_set::total_ns() {
  normalize();
  std::int64_t sum = 0;
  for (const busy_interval& s : spans_) sum += s.length_ns();
  return sum;
}

std::int64_t busy_interval_set::covered_ns(std::int64_t start_ns, std::int64_t end_ns) {
  normalize();
  std::int64_t sum = 0;
  // The first span that ends after the window starts; spans are sorted by both ends.
  auto it = std::lower_bound(spans_.begin(), spans_.end(), start_ns,
                             [](const busy_interval& s, std::int64_t t) { return s.end_ns <= t; });
  for (; it != spans_.end() && it->start_ns < end_ns; ++it) {
    sum += std::min(it->end_ns, end_ns) - std::max(it->start_ns, start_ns);
  }
  return sum;
}

busy_interval_set busy_interval_set::clipped(std::int64_t start_ns, std::int64_t end_ns) {
  normalize();
  busy_interval_set out;
  for (const busy_interval& s : spans_) {
    out.add({std::max(s.start_ns, start_ns), std::min(s.end_ns, end_ns)});
  }
  return out;
}

void busy_interval_set::shift(std::int64_t offset_ns) noexcept {
  for (busy_interval& s : spans_) {
    s.start_ns += offset_ns;
    s.end_ns += offset_ns;
  }
}

}  // namespace funnel::report
