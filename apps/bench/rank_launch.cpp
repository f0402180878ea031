// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "rank_launch.hpp"

#include <cstdlib>

#include "funnel/error.hpp"

namespace funnel::bench {

std::string to_string(launch_mode mode) {
  switch (mode) {
    case launch_mode::plain:
      return "plain mpirun";
    case launch_mode::mps_off:
      return "funnel-run --mps off";
    case launch_mode::mps_on:
      return "funnel-run --mps on";
    case launch_mode::funnel_auto:
      return "funnel-run";
  }
  return "?";
}

bool launcher_forced_on_host() noexcept {
  const char* v = std::getenv("FUNNEL_BENCH_LAUNCH_ON_HOST");
  return v != nullptr && std::string(v) == "1";
}

launch_mode effective_mode(const context& ctx, launch_mode wanted) noexcept {
  return ctx.on_gpu() || launcher_forced_on_host() ? wanted : launch_mode::plain;
}

double child_timeout_s(const context& ctx) noexcept { return ctx.quick ? 180.0 : 900.0; }

process_result run_ranks(const context& ctx, const std::string& tag, int ranks, launch_mode mode,
                         const std::vector<std::string>& launcher_extra,
                         const std::vector<std::string>& program) {
  std::vector<std::string> argv = mpirun_prefix(ranks);
  if (mode != launch_mode::plain) {
    const char* chosen = std::getenv("FUNNEL_BENCH_LAUNCHER");
    const std::string launcher = chosen != nullptr && *chosen != '\0'
                                     ? std::string(chosen)
                                     : sibling_program(ctx.bin_dir, "funnel-run");
    if (launcher.empty()) {
      throw unsupported("funnel-run is not installed beside funnel-bench (" + ctx.bin_dir + ")");
    }
    argv.push_back(launcher);
    if (mode == launch_mode::mps_off) argv.insert(argv.end(), {"--mps", "off"});
    if (mode == launch_mode::mps_on) argv.insert(argv.end(), {"--mps", "on"});
    argv.insert(argv.end(), launcher_extra.begin(), launcher_extra.end());
    argv.emplace_back("--");
  }
  argv.insert(argv.end(), program.begin(), program.end());

  // Oversubscribed CPU ranks must not each spin up a full OpenMP team.
  std::vector<std::string> env;
  if (!ctx.on_gpu() && std::getenv("OMP_NUM_THREADS") == nullptr) {
    env.emplace_back("OMP_NUM_THREADS=1");
  }
  const process_result r =
      run_process(argv, env, ctx.output_dir + "/" + tag + ".log", child_timeout_s(ctx));
  if (!r.ok()) {
    std::string cmd;
    for (const std::string& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw error("'" + cmd + "' " +
                (r.timed_out ? std::string("timed out") : "exited " + std::to_string(r.exit_code)) +
                "; log " + r.log_path + ":\n" + r.log_tail());
  }
  return r;
}

stencil_app_result run_stencil_app(const context& ctx, const std::string& tag, int ranks,
                                   launch_mode mode, const std::vector<std::string>& launcher_extra,
                                   std::vector<std::string> app_args) {
  const std::string app = sibling_program(ctx.bin_dir, "funnel-stencil");
  if (app.empty()) {
    throw unsupported("funnel-stencil is not installed beside funnel-bench (" + ctx.bin_dir + ")");
  }
  const std::string summary_path = ctx.output_dir + "/" + tag + ".summary.json";
  app_args.insert(app_args.begin(), app);
  app_args.insert(app_args.end(),
                  {"--backend", to_string(ctx.backend), "--quiet", "--summary", summary_path});
  const process_result r = run_ranks(ctx, tag, ranks, mode, launcher_extra, app_args);
  stencil_app_result out;
  out.summary = read_json_file(summary_path);
  out.cell_updates_per_s = out.summary.at("cell_updates_per_s").get<double>();
  out.seconds = out.summary.at("time_s").get<double>();
  out.wall_seconds = r.seconds;
  return out;
}

}  // namespace funnel::bench
