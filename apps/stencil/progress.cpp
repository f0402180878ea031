// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "progress.hpp"

#include <algorithm>
#include <string>

namespace funnel::stencil {
namespace {

/// "1h02m", "3m05s", "12.3s": short enough for a status line.
std::string format_duration(double seconds) {
  char text[32];
  if (seconds >= 3600) {
    const auto s = static_cast<long>(seconds);
    std::snprintf(text, sizeof(text), "%ldh%02ldm", s / 3600, (s / 60) % 60);
  } else if (seconds >= 60) {
    const auto s = static_cast<long>(seconds);
    std::snprintf(text, sizeof(text), "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof(text), "%.1fs", seconds);
  }
  return text;
}

}  // namespace

progress_meter::progress_meter(std::FILE* out, std::int64_t first_step, std::int64_t last_step,
                               double cells_per_step, bool enabled, bool terminal)
    : out_(out),
      first_(first_step),
      last_(last_step),
      cells_per_step_(cells_per_step),
      enabled_(enabled && last_step > first_step),
      terminal_(terminal),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

void progress_meter::update(std::int64_t step) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double fraction = static_cast<double>(step - first_) / static_cast<double>(last_ - first_);
  if (terminal_) {
    // A few updates per second are enough to look alive without costing time.
    if (now - last_print_ < std::chrono::milliseconds(200) && step != last_) return;
  } else {
    if (fraction * 10.0 < next_decile_ && step != last_) return;
    next_decile_ = std::max(next_decile_ + 1, static_cast<int>(fraction * 10.0) + 1);
  }
  last_print_ = now;
  print(step, step == last_);
}

void progress_meter::print(std::int64_t step, bool final_line) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const auto done = static_cast<double>(step - first_);
  const double fraction = done / static_cast<double>(last_ - first_);
  const double rate = elapsed > 0 ? done * cells_per_step_ / elapsed : 0.0;
  const double eta = done > 0 ? elapsed * (1.0 - fraction) / fraction : 0.0;
  std::fprintf(out_, "%sstep %lld/%lld  %5.1f%%  %.3g cell-updates/s  ETA %s%s",
               terminal_ ? "\r" : "", static_cast<long long>(step), static_cast<long long>(last_),
               100.0 * fraction, rate, format_duration(eta).c_str(),
               terminal_ && !final_line ? "   " : "\n");
  line_open_ = terminal_ && !final_line;
  std::fflush(out_);
}

void progress_meter::finish() {
  if (enabled_ && line_open_) {
    std::fputc('\n', out_);
    std::fflush(out_);
    line_open_ = false;
  }
}

}  // namespace funnel::stencil
