// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/clock_sample.hpp"

#include <time.h>

namespace funnel::report {
namespace {

std::int64_t read_clock(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

std::int64_t clock_sample::monotonic_now() noexcept { return read_clock(CLOCK_MONOTONIC); }

std::int64_t clock_sample::realtime_now() noexcept { return read_clock(CLOCK_REALTIME); }

clock_sample clock_sample::take(const std::function<std::int64_t()>& record_clock) {
  clock_sample best;
  std::int64_t best_width = -1;
  // A few tries: a preemption between the readings would widen one, not all.
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::int64_t before = monotonic_now();
    const std::int64_t record = record_clock ? record_clock() : before;
    const std::int64_t real = realtime_now();
    const std::int64_t after = monotonic_now();
    if (best_width < 0 || after - before < best_width) {
      best_width = after - before;
      best.monotonic_ns = before + (after - before) / 2;
      best.record_ns = record_clock ? record : best.monotonic_ns;
      best.realtime_ns = real;
    }
    if (!record_clock) break;
  }
  return best;
}

}  // namespace funnel::report
