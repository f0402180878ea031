// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "summary.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "funnel/error.hpp"

namespace funnel::stencil {
namespace {

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", bytes, units[u]);
  return text;
}

}  // namespace

double run_summary::cell_updates_per_second() const noexcept {
  return seconds > 0 ? cells() * static_cast<double>(steps()) / seconds : 0.0;
}

double run_summary::effective_bandwidth() const noexcept {
  return cell_updates_per_second() * 2.0 * static_cast<double>(element_size);
}

double run_summary::halo_share() const noexcept {
  return seconds > 0 ? std::min(1.0, halo_seconds / seconds) : 0.0;
}

std::string format_summary(const run_summary& s) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof(line),
                "%s %s, %lldx%lldx%lld cells, %s backend (%s kernel, %s), %d rank(s) as "
                "%dx%dx%d on %d node(s)\n",
                s.problem.c_str(), s.dtype.c_str(), static_cast<long long>(s.global_cells[0]),
                static_cast<long long>(s.global_cells[1]),
                static_cast<long long>(s.global_cells[2]), s.backend.c_str(), s.kernel.c_str(),
                s.mode.c_str(), s.ranks, s.dims[0], s.dims[1], s.dims[2], s.nodes);
  out << line;
  // Pushed exchanges run inside the update kernel: there is no exchange of their own to time.
  char share[64];
  if (s.halo_pushed) {
    std::snprintf(share, sizeof(share), "halo pushed by the update (not timed)");
  } else {
    std::snprintf(share, sizeof(share), "halo share %.1f%%", 100.0 * s.halo_share());
  }
  std::snprintf(line, sizeof(line),
                "steps %lld..%lld (%lld)%s in %.3f s: %.4g cell-updates/s, effective bandwidth "
                "%.4g GB/s, %s\n",
                static_cast<long long>(s.first_step), static_cast<long long>(s.last_step),
                static_cast<long long>(s.steps()), s.interrupted ? " [interrupted]" : "", s.seconds,
                s.cell_updates_per_second(), s.effective_bandwidth() / 1e9, share);
  out << line;
  if (s.error) {
    std::snprintf(line, sizeof(line), "error vs exact solution: max %.6e, L2 %.6e\n",
                  s.error->max_abs, s.error->l2);
    out << line;
  }
  if (s.final_norm) {
    std::snprintf(line, sizeof(line), "final L2 norm: %0.6f\n", *s.final_norm);
    out << line;
  }
  if (s.pipeline) {
    std::snprintf(line, sizeof(line),
                  "pipeline: %d passes, efficiency %.2f (T_pass %.3g s, T_H2D %.3g s, T_D2H "
                  "%.3g s, T_kernel %.3g s), H2D %.3g GB/s, D2H %.3g GB/s\n",
                  s.pipeline->passes, s.pipeline->efficiency, s.pipeline->pass_seconds,
                  s.pipeline->h2d_seconds, s.pipeline->d2h_seconds, s.pipeline->kernel_seconds,
                  s.pipeline->h2d_bytes_per_s / 1e9, s.pipeline->d2h_bytes_per_s / 1e9);
    out << line << "pipeline choice: " << s.pipeline->choice << "\n";
  }
  out << "pool high-water (largest rank): reserved " << human_bytes(s.pool_reserved_high)
      << ", used " << human_bytes(s.pool_used_high);
  if (s.outputs > 0) {
    std::snprintf(line, sizeof(line), "; output at %d step(s) in %.3f s", s.outputs,
                  s.output_seconds);
    out << line;
    if (s.output_background_seconds > 0.0) {
      std::snprintf(line, sizeof(line), " (+ %.3f s of snapshot writing behind the steps)",
                    s.output_background_seconds);
      out << line;
    }
  }
  return out.str();
}

std::string to_json(const run_summary& s) {
  // Non-finite figures become null (JSON has no inf/nan); keys keep this order.
  nlohmann::ordered_json j;
  j["funnel_version"] = s.version;
  j["problem"] = s.problem;
  j["dtype"] = s.dtype;
  j["backend"] = s.backend;
  j["kernel"] = s.kernel;
  j["mode"] = s.mode;
  j["halo_overlap"] = s.halo_overlap;
  j["halo_overlap_used"] = s.halo_overlap_used;
  j["graphs"] = s.graphs;
  j["placement"] = s.placement;
  j["boxes_by_device"] = s.boxes_by_device;
  j["steps_per_graph"] = s.steps_per_graph;
  j["halo_depth"] = s.halo_depth;
  j["steps_per_launch"] = s.steps_per_launch;
  j["row_align_bytes"] = s.row_align_bytes;
  j["halo_pushed"] = s.halo_pushed;
  j["ranks"] = s.ranks;
  j["nodes"] = s.nodes;
  j["decomposition"] = s.dims;
  j["global_cells"] = s.global_cells;
  j["first_step"] = s.first_step;
  j["last_step"] = s.last_step;
  j["steps"] = s.steps();
  j["interrupted"] = s.interrupted;
  j["time_s"] = s.seconds;
  j["cell_updates_per_s"] = s.cell_updates_per_second();
  j["effective_bandwidth_bytes_per_s"] = s.effective_bandwidth();
  j["halo_time_s"] = s.halo_seconds;
  j["halo_time_share"] = s.halo_share();
  j["output_time_s"] = s.output_seconds;
  j["output_background_time_s"] = s.output_background_seconds;
  j["outputs"] = s.outputs;
  if (s.error) j["error"] = {{"max_abs", s.error->max_abs}, {"l2", s.error->l2}};
  if (s.final_norm) j["final_norm"] = *s.final_norm;
  if (s.pipeline) {
    const pipeline_report& p = *s.pipeline;
    j["pipeline"] = {{"passes", p.passes},
                     {"efficiency", p.efficiency},
                     {"pass_time_s", p.pass_seconds},
                     {"h2d_time_s", p.h2d_seconds},
                     {"d2h_time_s", p.d2h_seconds},
                     {"kernel_time_s", p.kernel_seconds},
                     {"h2d_bytes_per_s", p.h2d_bytes_per_s},
                     {"d2h_bytes_per_s", p.d2h_bytes_per_s},
                     {"choice", p.choice}};
  }
  j["pool_reserved_high_bytes"] = s.pool_reserved_high;
  j["pool_used_high_bytes"] = s.pool_used_high;
  // Replacement characters for any invalid UTF-8 in the strings (a path, a choice text).
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void write_summary_file(const std::string& path, const run_summary& summary) {
  std::ofstream out(path, std::ios::trunc);
  FUNNEL_SYSTEM_CHECK(!out, "open", "--summary " + path);
  out << to_json(summary);
  out.flush();
  FUNNEL_SYSTEM_CHECK(!out, "write", "--summary " + path);
}

}  // namespace funnel::stencil
