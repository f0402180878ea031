#include "summary.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "funnel/detail/json_escape.hpp"
#include "funnel/error.hpp"

namespace funnel::stencil {
namespace {

/// JSON number: finite doubles with full precision, null otherwise (JSON has no inf/nan).
std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[40];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

template <class Array>
std::string json_array(const Array& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(values[i]);
  }
  return out + "]";
}

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
  return seconds > 0 ? halo_seconds / seconds : 0.0;
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
  std::snprintf(line, sizeof(line),
                "steps %lld..%lld (%lld)%s in %.3f s: %.4g cell-updates/s, effective bandwidth "
                "%.4g GB/s, halo share %.1f%%\n",
                static_cast<long long>(s.first_step), static_cast<long long>(s.last_step),
                static_cast<long long>(s.steps()), s.interrupted ? " [interrupted]" : "", s.seconds,
                s.cell_updates_per_second(), s.effective_bandwidth() / 1e9, 100.0 * s.halo_share());
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
  std::ostringstream out;
  out << "{\n";
  out << "  \"funnel_version\": " << detail::json_quote(s.version) << ",\n";
  out << "  \"problem\": " << detail::json_quote(s.problem) << ",\n";
  out << "  \"dtype\": " << detail::json_quote(s.dtype) << ",\n";
  out << "  \"backend\": " << detail::json_quote(s.backend) << ",\n";
  out << "  \"kernel\": " << detail::json_quote(s.kernel) << ",\n";
  out << "  \"mode\": " << detail::json_quote(s.mode) << ",\n";
  out << "  \"ranks\": " << s.ranks << ",\n";
  out << "  \"nodes\": " << s.nodes << ",\n";
  out << "  \"decomposition\": " << json_array(s.dims) << ",\n";
  out << "  \"global_cells\": " << json_array(s.global_cells) << ",\n";
  out << "  \"first_step\": " << s.first_step << ",\n";
  out << "  \"last_step\": " << s.last_step << ",\n";
  out << "  \"steps\": " << s.steps() << ",\n";
  out << "  \"interrupted\": " << (s.interrupted ? "true" : "false") << ",\n";
  out << "  \"time_s\": " << number(s.seconds) << ",\n";
  out << "  \"cell_updates_per_s\": " << number(s.cell_updates_per_second()) << ",\n";
  out << "  \"effective_bandwidth_bytes_per_s\": " << number(s.effective_bandwidth()) << ",\n";
  out << "  \"halo_time_s\": " << number(s.halo_seconds) << ",\n";
  out << "  \"halo_time_share\": " << number(s.halo_share()) << ",\n";
  out << "  \"output_time_s\": " << number(s.output_seconds) << ",\n";
  out << "  \"output_background_time_s\": " << number(s.output_background_seconds) << ",\n";
  out << "  \"outputs\": " << s.outputs << ",\n";
  if (s.error) {
    out << "  \"error\": {\"max_abs\": " << number(s.error->max_abs)
        << ", \"l2\": " << number(s.error->l2) << "},\n";
  }
  if (s.final_norm) out << "  \"final_norm\": " << number(*s.final_norm) << ",\n";
  if (s.pipeline) {
    out << "  \"pipeline\": {\"passes\": " << s.pipeline->passes
        << ", \"efficiency\": " << number(s.pipeline->efficiency)
        << ", \"pass_time_s\": " << number(s.pipeline->pass_seconds)
        << ", \"h2d_time_s\": " << number(s.pipeline->h2d_seconds)
        << ", \"d2h_time_s\": " << number(s.pipeline->d2h_seconds)
        << ", \"kernel_time_s\": " << number(s.pipeline->kernel_seconds)
        << ", \"h2d_bytes_per_s\": " << number(s.pipeline->h2d_bytes_per_s)
        << ", \"d2h_bytes_per_s\": " << number(s.pipeline->d2h_bytes_per_s)
        << ", \"choice\": " << detail::json_quote(s.pipeline->choice) << "},\n";
  }
  out << "  \"pool_reserved_high_bytes\": " << s.pool_reserved_high << ",\n";
  out << "  \"pool_used_high_bytes\": " << s.pool_used_high << "\n";
  out << "}\n";
  return out.str();
}

void write_summary_file(const std::string& path, const run_summary& summary) {
  std::ofstream out(path, std::ios::trunc);
  FUNNEL_SYSTEM_CHECK(!out, "open", "--summary " + path);
  out << to_json(summary);
  out.flush();
  FUNNEL_SYSTEM_CHECK(!out, "write", "--summary " + path);
}

}  // namespace funnel::stencil
