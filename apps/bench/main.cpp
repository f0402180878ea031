// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel-bench: measures funnel against its baselines and prints the ratios (see --help).
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "benchmarks.hpp"
#include "cli.hpp"
#include "context.hpp"
#include "funnel/error.hpp"
#include "json.hpp"
#include "machine.hpp"
#include "process.hpp"
#include "report.hpp"

#ifndef FUNNEL_BENCH_SCRIPT_DIR
#define FUNNEL_BENCH_SCRIPT_DIR ""
#endif

namespace fb = funnel::bench;

namespace {

constexpr int bad_usage = 2;

/// The `all` subcommand: every benchmark with its defaults; only the common options.
fb::command_spec all_spec() {
  fb::command_spec spec;
  spec.name = "all";
  spec.brief = "every benchmark above, one table";
  spec.summary =
      "Runs share, stencil, pipeline, pool, scaling and kernels with their defaults, one table\n"
      "at the end. Benchmarks this machine cannot run are listed as skipped with the reason.";
  return spec;
}

std::vector<fb::command_spec> every_spec() {
  std::vector<fb::command_spec> specs;
  for (const fb::benchmark& b : fb::all_benchmarks()) specs.push_back(b.spec);
  specs.push_back(all_spec());
  specs.push_back(fb::share_worker_spec());
  specs.push_back(fb::pool_worker_spec());
  return specs;
}

/// The Python that draws: $FUNNEL_BENCH_PYTHON, else the system's (where the platform's
/// matplotlib package lives), else whatever python3 is on PATH.
std::string plot_python() {
  if (const char* env = std::getenv("FUNNEL_BENCH_PYTHON"); env != nullptr && *env != '\0') {
    return env;
  }
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

/// Where plot.py lives: $FUNNEL_BENCH_SCRIPTS, the source tree, or the installed share/ folder.
std::string plot_script(const std::string& bin_dir) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("FUNNEL_BENCH_SCRIPTS")) candidates.emplace_back(env);
  candidates.emplace_back(FUNNEL_BENCH_SCRIPT_DIR);
  candidates.push_back(bin_dir + "/../share/funnel/bench");
  for (const std::string& dir : candidates) {
    if (dir.empty()) continue;
    const std::string path = dir + "/plot.py";
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    throw funnel::system_error("cannot create directory " + path + ": " + ec.message(), ec.value());
  }
}

std::string parent_dir(const std::string& file) {
  const std::string p = std::filesystem::path(file).parent_path().string();
  return p.empty() ? "." : p;
}

fb::outcome run_one(const fb::benchmark& b, fb::context ctx, const fb::option_values& own) {
  ctx.options = &own;
  std::cout << "funnel-bench: " << b.spec.name << " ..." << std::endl;
  try {
    fb::outcome o = b.run(ctx);
    o.name = b.spec.name;
    return o;
  } catch (const funnel::unsupported& e) {
    return fb::skipped(b.spec.name, e.what());
  } catch (const std::exception& e) {
    fb::outcome o;
    o.name = b.spec.name;
    o.status = "failed";
    o.reason = e.what();
    std::cerr << "funnel-bench: " << b.spec.name << " failed: " << e.what() << '\n';
    return o;
  }
}

int run_benchmarks(const std::vector<const fb::benchmark*>& chosen, const fb::option_values& opt) {
  // Each benchmark gets the options given with its own defaults (`all`, which takes only the
  // common options, runs every benchmark with its defaults).
  std::vector<fb::option_values> own;
  own.reserve(chosen.size());
  for (const fb::benchmark* b : chosen) own.emplace_back(b->spec, opt.given());
  fb::context ctx;
  ctx.backend = funnel::select_backend(opt.text("backend"));
  ctx.quick = opt.quick();
  ctx.repeat = static_cast<int>(opt.integer("repeat"));
  ctx.warmup = static_cast<int>(opt.integer("warmup"));
  ctx.self = fb::self_executable();
  ctx.bin_dir = parent_dir(ctx.self);

  std::string json_path = opt.text("json");
  const std::string plot_dir = opt.text("plot");
  if (!plot_dir.empty()) make_dirs(plot_dir);
  if (json_path.empty() && !plot_dir.empty()) json_path = plot_dir + "/bench.json";
  // Side files (run logs, summaries, the pipeline trace) go beside the JSON, else to a scratch
  // folder whose name is printed.
  ctx.output_dir =
      json_path.empty() ? fb::make_scratch_dir("runs") : parent_dir(json_path) + "/bench-runs";
  make_dirs(ctx.output_dir);

  fb::json doc = fb::json::object();
  doc["tool"] = "funnel-bench";
  doc["date"] = fb::utc_timestamp();
  doc["quick"] = ctx.quick;
  doc["backend"] = funnel::to_string(ctx.backend);
  doc["command"] = opt.command();
  fb::json options = fb::json::object();
  for (const auto& [k, v] : opt.all()) options[k] = v;
  doc["options"] = std::move(options);
  doc["machine"] = fb::describe_machine(ctx.backend);
  doc["side_files"] = ctx.output_dir;

  std::vector<fb::outcome> outcomes;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    outcomes.push_back(run_one(*chosen[i], ctx, own[i]));
  }

  fb::json benchmarks = fb::json::object();
  bool failed = false;
  for (const fb::outcome& o : outcomes) {
    benchmarks[o.name] = fb::to_json(o);
    failed = failed || o.status == "failed";
  }
  doc["benchmarks"] = std::move(benchmarks);

  std::cout << '\n' << fb::format_table(outcomes);
  if (!ctx.on_gpu()) {
    std::cout << "  note: host backend: the goals are stated for an H100, so 'met?' reads n/a; "
                 "these figures check the plumbing, not funnel's speed\n";
  }
  // Nothing ran that wrote a side file (e.g. every benchmark refused its options): no empty
  // folder is left behind.
  std::error_code ec;
  if (std::filesystem::is_empty(ctx.output_dir, ec) && !ec &&
      std::filesystem::remove(ctx.output_dir, ec)) {
    std::cout << "  side files: none\n";
    doc["side_files"] = nullptr;
  } else {
    std::cout << "  side files: " << ctx.output_dir << '\n';
  }
  if (!json_path.empty()) {
    fb::write_json_file(json_path, doc);
    std::cout << "  JSON: " << json_path << '\n';
  }
  if (!plot_dir.empty()) {
    const std::string script = plot_script(ctx.bin_dir);
    if (script.empty()) {
      std::cout << "  plots: skipped (scripts/bench/plot.py not found; set FUNNEL_BENCH_SCRIPTS)\n";
    } else {
      const fb::process_result r = fb::run_process({plot_python(), script, json_path, plot_dir}, {},
                                                   ctx.output_dir + "/plot.log", 300);
      std::cout << "  plots: " << (r.ok() ? plot_dir : "failed, see " + r.log_path) << '\n';
    }
  }
  return failed ? 1 : 0;
}

int dispatch(const std::vector<std::string>& args) {
  const std::vector<fb::command_spec> specs = every_spec();
  if (args.empty()) {
    std::cerr << fb::overview_usage(specs);
    return bad_usage;
  }
  const fb::command_line line = fb::parse_command_line(specs, args);
  if (line.command == nullptr) {
    std::cout << fb::overview_usage(specs);
    return 0;
  }
  if (line.help) {
    std::cout << fb::command_usage(*line.command);
    return 0;
  }
  const std::string& name = line.command->name;
  const fb::option_values opt(*line.command, line.given);
  if (name == "share-worker") return fb::share_worker_main(opt);
  if (name == "pool-worker") return fb::pool_worker_main(opt);
  std::vector<const fb::benchmark*> chosen;
  for (const fb::benchmark& b : fb::all_benchmarks()) {
    if (name == "all" || b.spec.name == name) chosen.push_back(&b);
  }
  return run_benchmarks(chosen, opt);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const funnel::invalid_argument& e) {
    std::cerr << e.what() << '\n';
    return bad_usage;
  } catch (const funnel::unsupported& e) {
    std::cerr << "funnel-bench: " << e.what() << '\n';
    return bad_usage;
  } catch (const std::exception& e) {
    std::cerr << "funnel-bench: " << e.what() << '\n';
    return 1;
  }
}
