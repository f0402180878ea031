// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/pipeline/pass_statistics.hpp"

#include <algorithm>
#include <cstdio>

namespace funnel {
namespace {
double ratio(double num, double den) noexcept { return den > 0.0 ? num / den : 0.0; }
}  // namespace

std::string to_string(pass_mode mode) {
  switch (mode) {
    case pass_mode::pipelined:
      return "pipelined";
    case pass_mode::serial:
      return "serial";
    case pass_mode::h2d_only:
      return "h2d_only";
    case pass_mode::d2h_only:
      return "d2h_only";
    case pass_mode::compute_only:
      return "compute_only";
    case pass_mode::copies_only:
      return "copies_only";
  }
  return "unknown";
}

double pass_statistics::bound_seconds() const noexcept {
  return std::max({h2d_seconds, d2h_seconds, kernel_seconds});
}

std::string pass_statistics::bound_name() const {
  if (kernel_seconds >= h2d_seconds && kernel_seconds >= d2h_seconds) return "kernel";
  return h2d_seconds >= d2h_seconds ? "h2d" : "d2h";
}

double pass_statistics::efficiency() const noexcept { return ratio(bound_seconds(), pass_seconds); }

double pass_statistics::h2d_gb_per_s() const noexcept {
  return ratio(static_cast<double>(h2d_bytes), h2d_seconds) * 1e-9;
}

double pass_statistics::d2h_gb_per_s() const noexcept {
  return ratio(static_cast<double>(d2h_bytes), d2h_seconds) * 1e-9;
}

double pass_statistics::cell_updates_per_s() const noexcept {
  return ratio(static_cast<double>(cell_updates), pass_seconds);
}

std::string pass_statistics::summary() const {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: %d chunks, S=%d, k=%d, pass %.3f ms, efficiency %.3f (%s bound), "
                "H2D %.1f GB/s, D2H %.1f GB/s, kernel %.3f ms%s",
                to_string(mode).c_str(), chunks, slots, steps_per_pass, pass_seconds * 1e3,
                efficiency(), bound_name().c_str(), h2d_gb_per_s(), d2h_gb_per_s(),
                kernel_seconds * 1e3,
                staged_input || staged_output ? ", staged through pinned buffers" : "");
  return line;
}

}  // namespace funnel
