// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/report_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace funnel::report {
namespace {

constexpr std::size_t line_width = 92;  // with the program's prefix the lines stay under 110

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Items after `head`, wrapped onto lines that start with `indent`.
void wrapped(std::vector<std::string>& lines, const std::string& head,
             const std::vector<std::string>& items, const std::string& indent) {
  std::string line = head;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() + 1 + item.size() > line_width && line != head) {
      lines.push_back(line);
      line = indent;
    }
    line += (line.empty() || line == indent ? "" : " ") + item;
  }
  lines.push_back(line);
}

std::string gpu_name(const gpu_summary& g) {
  std::string text = "GPU ";
  text += g.index >= 0 ? std::to_string(g.index) + " " + g.uuid : g.uuid;
  if (!g.name.empty()) text += " (" + g.name + ")";
  return text;
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string format_seconds(double seconds) {
  char text[48];
  const double s = std::fabs(seconds);
  if (s == 0) {
    std::snprintf(text, sizeof text, "0 s");
  } else if (s >= 100) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else if (s >= 1) {
    std::snprintf(text, sizeof text, "%.2f s", seconds);
  } else if (s >= 1e-3) {
    std::snprintf(text, sizeof text, "%.1f ms", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0f us", seconds * 1e6);
  }
  return text;
}

std::string format_percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f %%", fraction * 100);
  return text;
}

std::vector<std::string> report_lines(const node_report& report, const std::string& record_dir) {
  std::vector<std::string> lines;
  lines.push_back("node " + (report.host.empty() ? std::string("?") : report.host) + ": " +
                  plural(static_cast<std::size_t>(report.records), "record", "records") + " in " +
                  record_dir + "; job wall " + format_seconds(report.wall_s));
  if (report.ranks.empty()) {
    lines.push_back("no rank left a usable record: no GPU work to report");
  }
  for (const gpu_summary& g : report.gpus) {
    lines.push_back(gpu_name(g) + ": " + plural(g.ranks.size(), "rank", "ranks") + ", MPS " +
                    g.mps + ", wall " + format_seconds(g.wall_s));
    char at_once[200];
    std::snprintf(at_once, sizeof at_once, "; ranks at once %.1f (kernels %.1f), at most %d",
                  g.ranks_at_once, g.kernel_ranks_at_once, g.max_ranks_at_once);
    if (g.mps == "off" && g.ranks.size() > 1) {
      // Time-sliced: one rank runs at a time; the overlap of spans says how many waited.
      const std::size_t used = std::strlen(at_once);
      std::snprintf(at_once + used, sizeof at_once - used, "; in flight %.1f (kernels %.1f)",
                    g.ranks_in_flight, g.kernel_ranks_in_flight);
    }
    lines.push_back("  busy " + format_percent(g.busy_fraction) + " of the job (kernels " +
                    format_percent(g.kernel_busy_fraction) + ", copies " +
                    format_percent(g.copy_busy_fraction) + ")" + at_once);
    if (g.ranks.size() > 1) {
      char cv[32];
      std::snprintf(cv, sizeof cv, "%.2f", g.rank_spread.cv);
      lines.push_back("  GPU time per rank: min " + format_seconds(g.rank_spread.min_s) + " (" +
                      g.rank_spread.min_rank + "), max " + format_seconds(g.rank_spread.max_s) +
                      " (" + g.rank_spread.max_rank + "), mean " +
                      format_seconds(g.rank_spread.mean_s) + ", CV " + cv);
    }
    std::vector<std::string> items;
    for (const auto& r : g.ranks) {
      items.push_back(r.label + " " + format_seconds(r.gpu_s) +
                      (r.ended_early ? " (ended early)" : ""));
    }
    wrapped(lines, "  GPU time:", items, "    ");
    lines.push_back("  verdict: " + g.outcome.text);
    if (g.tracing_cost_fraction() >= tracing_cost_shown_from) {
      // The figures above include tracing's own cost: say how large it was, roughly.
      char cost[200];
      std::snprintf(cost, sizeof cost,
                    "%llu kernels and copies traced, %.0f a second; at about %.1f us of GPU time "
                    "each",
                    static_cast<unsigned long long>(g.traced_records()), g.traced_per_s(),
                    tracing_cost_per_record_s * 1e6);
      lines.push_back(std::string("  tracing: ") + cost + ", --report made this job about " +
                      format_seconds(g.tracing_cost_s()) + " (" +
                      format_percent(g.tracing_cost_fraction()) +
                      ") slower (docs/report.md, Cost)");
    }
  }
  std::vector<std::string> early;
  for (const rank_summary& r : report.ranks) {
    if (r.ended_early) early.push_back(r.label + " (last seen at " + format_seconds(r.end_s) + ")");
  }
  if (!early.empty()) {
    wrapped(lines, "ended early (no end marker; their records so far count):", early, "  ");
  }
  for (const std::string& d : report.damaged) {
    lines.push_back("damaged: " + d + " (what came before it counts)");
  }
  if (!report.missing.empty()) {
    lines.push_back("missing: " + joined(report.missing) +
                    " (no record: not a CUDA program, or it ended before CUDA started)");
  }
  for (const std::string& n : report.notes) lines.push_back("note: " + n);
  return lines;
}

}  // namespace funnel::report
