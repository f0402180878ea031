// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/pipeline/pipeline_benchmark_result.hpp"

#include <algorithm>
#include <cstdio>

namespace funnel {
namespace {
double ratio(double num, double den) noexcept { return den > 0.0 ? num / den : 0.0; }
}  // namespace

double pipeline_benchmark_result::bound_seconds() const noexcept {
  return std::max({h2d_alone.h2d_seconds, d2h_alone.d2h_seconds, compute_alone.kernel_seconds});
}

double pipeline_benchmark_result::speedup() const noexcept {
  return ratio(serial.pass_seconds, pipelined.pass_seconds);
}

double pipeline_benchmark_result::efficiency_vs_bound() const noexcept {
  return ratio(bound_seconds(), pipelined.pass_seconds);
}

double pipeline_benchmark_result::bidirectional_bound_seconds() const noexcept {
  return std::max(copies_both.pass_seconds, compute_alone.kernel_seconds);
}

double pipeline_benchmark_result::efficiency_vs_bidirectional_bound() const noexcept {
  return ratio(bidirectional_bound_seconds(), pipelined.pass_seconds);
}

double pipeline_benchmark_result::bidirectional_gb_per_s() const noexcept {
  return ratio(static_cast<double>(copies_both.h2d_bytes + copies_both.d2h_bytes),
               copies_both.pass_seconds) *
         1e-9;
}

std::string pipeline_benchmark_result::report() const {
  char text[1024];
  std::snprintf(
      text, sizeof text,
      "pipeline benchmark: %d chunks, S=%d, k=%d\n"
      "  (a) serial     %10.3f ms\n"
      "  (b) pipelined  %10.3f ms  (efficiency %.3f by its own spans, %s bound)\n"
      "  (c) bound      %10.3f ms  = max(H2D %.3f ms at %.1f GB/s, D2H %.3f ms at %.1f GB/s, "
      "kernel %.3f ms) timed alone\n"
      "  (c') bound     %10.3f ms  = max(H2D + D2H at once %.3f ms at %.1f GB/s, kernel %.3f "
      "ms)\n"
      "  (a)/(b) = %.2f   (c)/(b) = %.3f   (c')/(b) = %.3f   cell updates/s (b) = %.3e\n",
      pipelined.chunks, pipelined.slots, pipelined.steps_per_pass, serial.pass_seconds * 1e3,
      pipelined.pass_seconds * 1e3, pipelined.efficiency(), pipelined.bound_name().c_str(),
      bound_seconds() * 1e3, h2d_alone.h2d_seconds * 1e3, h2d_alone.h2d_gb_per_s(),
      d2h_alone.d2h_seconds * 1e3, d2h_alone.d2h_gb_per_s(), compute_alone.kernel_seconds * 1e3,
      bidirectional_bound_seconds() * 1e3, copies_both.pass_seconds * 1e3, bidirectional_gb_per_s(),
      compute_alone.kernel_seconds * 1e3, speedup(), efficiency_vs_bound(),
      efficiency_vs_bidirectional_bound(), pipelined.cell_updates_per_s());
  return text;
}

}  // namespace funnel
