// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/report_json.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/report/clock_sample.hpp"

namespace funnel::report {
namespace {

using nlohmann::json;

json rank_json(const rank_summary& r) {
  return json{{"label", r.label},
              {"global_rank", r.global_rank},
              {"local_rank", r.local_rank},
              {"pids", r.pids},
              {"records", r.records},
              {"gpus", r.gpus},
              {"command", r.command},
              {"start_s", r.start_s},
              {"end_s", r.end_s},
              {"wall_s", r.wall_s},
              {"gpu_s", r.gpu_s},
              {"kernel_s", r.kernel_s},
              {"copy_s", r.copy_s},
              {"ended_early", r.ended_early},
              {"damage", r.damage},
              {"notes", r.notes},
              {"dropped_records", r.dropped_records},
              {"spans", r.spans},
              {"record_bytes", r.record_bytes}};
}

json gpu_json(const gpu_summary& g) {
  json ranks = json::array();
  for (const auto& r : g.ranks) {
    ranks.push_back({{"label", r.label},
                     {"gpu_s", r.gpu_s},
                     {"kernel_s", r.kernel_s},
                     {"copy_s", r.copy_s},
                     {"share_of_busy", g.busy_s > 0 ? r.gpu_s / g.busy_s : 0.0},
                     {"ended_early", r.ended_early},
                     {"traced_records", r.traced_records}});
  }
  return json{{"uuid", g.uuid},
              {"name", g.name},
              {"index", g.index},
              {"mps", g.mps},
              {"ranks", ranks},
              {"wall_s", g.wall_s},
              {"busy_s", g.busy_s},
              {"busy_fraction", g.busy_fraction},
              {"kernel_busy_fraction", g.kernel_busy_fraction},
              {"copy_busy_fraction", g.copy_busy_fraction},
              {"tracing",
               {{"records", g.traced_records()},
                {"records_per_s", g.traced_per_s()},
                {"cost_per_record_s", tracing_cost_per_record_s},
                {"estimated_cost_s", g.tracing_cost_s()},
                {"estimated_cost_fraction", g.tracing_cost_fraction()}}},
              {"ranks_at_once", g.ranks_at_once},
              {"kernel_ranks_at_once", g.kernel_ranks_at_once},
              {"max_ranks_at_once", g.max_ranks_at_once},
              {"ranks_in_flight", g.ranks_in_flight},
              {"kernel_ranks_in_flight", g.kernel_ranks_in_flight},
              {"max_ranks_in_flight", g.max_ranks_in_flight},
              {"time_at_count_s", g.time_at_count_s},
              {"spread",
               {{"min_s", g.rank_spread.min_s},
                {"max_s", g.rank_spread.max_s},
                {"mean_s", g.rank_spread.mean_s},
                {"cv", g.rank_spread.cv},
                {"min_rank", g.rank_spread.min_rank},
                {"max_rank", g.rank_spread.max_rank}}},
              {"verdict", {{"rule", to_string(g.outcome.rule)}, {"text", g.outcome.text}}},
              {"timeline",
               {{"bin_s", g.timeline_bin_s},
                {"busy", g.timeline_busy},
                {"ranks_at_once", g.timeline_ranks_at_once}}}};
}

}  // namespace

json to_json(const node_report& report, const report_context& context) {
  utsname names{};
  const bool have_uname = uname(&names) == 0;
  json gpus = json::array();
  json machine_gpus = json::array();
  for (const gpu_summary& g : report.gpus) {
    gpus.push_back(gpu_json(g));
    machine_gpus.push_back({{"uuid", g.uuid}, {"name", g.name}, {"index", g.index}});
  }
  json ranks = json::array();
  for (const rank_summary& r : report.ranks) ranks.push_back(rank_json(r));
  return json{{"format", "funnel-report 1"},
              {"funnel_version", FUNNEL_VERSION},
              {"created_realtime_s", static_cast<double>(clock_sample::realtime_now()) * 1e-9},
              {"machine",
               {{"host", report.host},
                {"kernel", have_uname ? names.release : ""},
                {"cpus", sysconf(_SC_NPROCESSORS_ONLN)},
                {"cuda_driver_version", report.cuda_driver_version},
                {"gpus", machine_gpus}}},
              {"options",
               {{"record_dir", context.record_dir},
                {"report_dir", context.report_dir},
                {"mps", context.options.mps.empty() ? "from the records" : context.options.mps},
                {"expected_ranks", context.options.expected_ranks},
                {"job_start_realtime_ns", context.options.job_start_realtime_ns},
                {"job_end_realtime_ns", context.options.job_end_realtime_ns},
                {"timeline_bins", context.options.timeline_bins},
                {"launcher", context.launcher_options}}},
              {"job",
               {{"clock", report.clock},
                {"start_realtime_s", static_cast<double>(report.job_start_realtime_ns) * 1e-9},
                {"wall_s", report.wall_s},
                {"records", report.records},
                {"ranks", report.ranks.size()}}},
              {"gpus", gpus},
              {"ranks", ranks},
              {"missing", report.missing},
              {"damaged", report.damaged},
              {"notes", report.notes}};
}

void write_json_file(const std::string& path, const json& document) {
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    FUNNEL_SYSTEM_CHECK(!out, "open", "'" + temporary + "'");
    out << document.dump(1) << '\n';
    out.flush();
    if (!out) {
      const int errnum = errno;
      std::remove(temporary.c_str());
      errno = errnum;
      FUNNEL_SYSTEM_CHECK(true, "write", "'" + temporary + "'");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int errnum = errno;
    std::remove(temporary.c_str());
    errno = errnum;
    FUNNEL_SYSTEM_CHECK(true, "rename", "'" + path + "'");
  }
}

}  // namespace funnel::report
