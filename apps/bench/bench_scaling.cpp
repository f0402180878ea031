// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel-bench scaling: heat3d (float and double) and jacobi2d on 1, 2, 4, 8 ... GPUs (every
// power of two up to the GPUs visible, and all of them) with 1, 4 and 16 ranks per GPU, through
// funnel-run + funnel-stencil: strong (same grid) and weak (grid grown with the GPUs) efficiency
// against one GPU with the same ranks per GPU, for each halo path (and, if asked, each
// placement of the boxes) side by side in one run.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks.hpp"
#include "funnel/error.hpp"
#include "rank_launch.hpp"

namespace funnel::bench {
namespace {

/// funnel-stencil's arguments for a problem and a grid grown `factor` times along its slowest
/// axis (weak scaling).
std::vector<std::string> problem_args(const std::string& problem, const std::string& dtype,
                                      long long n, int factor, const std::string& steps) {
  if (problem == "heat3d") {
    return {"--problem",
            "heat3d",
            "--dtype",
            dtype,
            "--steps",
            steps,
            "--n",
            std::to_string(n) + "," + std::to_string(n) + "," + std::to_string(n * factor)};
  }
  // jacobi2d's -ny counts the two boundary rows: grow the interior rows. The norm every
  // iteration, as multi-gpu-programming-models' Jacobi computes it.
  const long long ny = (n - 2) * factor + 2;
  return {"--problem",     "jacobi2d", "--steps", steps,
          "--check-every", "1",        "--n",     std::to_string(n) + "," + std::to_string(ny)};
}

/// 2, 4, 8 ... up to `gpus`, and `gpus` itself.
std::vector<int> gpu_counts(int gpus) {
  std::vector<int> counts;
  for (int g = 2; g <= gpus; g *= 2) counts.push_back(g);
  if (counts.empty() || counts.back() != gpus) counts.push_back(gpus);
  return counts;
}

/// "0,1,...,g-1"
std::string first_gpus(int g) {
  std::string list = "0";
  for (int i = 1; i < g; ++i) list += "," + std::to_string(i);
  return list;
}

/// The halo option behind each path's name: auto (the default), peer (IPC between GPUs, asked
/// for), staged (MPI through pinned host buffers, as between nodes).
std::string halo_of(const std::string& path) {
  return path == "peer" ? "ipc" : path == "staged" ? "mpi" : "auto";
}

/// The goal for a row of the defaults, if it has one.
std::optional<goal> goal_of(const std::string& problem, long long n, const std::string& path,
                            const std::string& kind, int g, long long rpg) {
  const bool heat = problem == "heat3d";
  if (path == "auto" && heat && n == 1024) {
    return at_least(kind == "weak" ? 0.97 : g == 2 ? 0.97 : 0.95);
  }
  if (path == "auto" && !heat && n == 16384 && kind == "strong") {
    return at_least(rpg == 1 ? 0.85 : 0.75);
  }
  if (path == "staged" && heat && n == 1024 && kind == "strong" && g == 2) return at_least(0.90);
  return std::nullopt;
}

outcome run_scaling(const context& ctx) {
  const int gpus = cuda_device_count();
  if (!ctx.on_gpu() || gpus < 2) {
    throw unsupported(ctx.on_gpu() || gpus < 2
                          ? "needs 2 GPUs (" + std::to_string(gpus) + " visible)"
                          : std::string("needs 2 GPUs on the cuda backend (--backend host given)"));
  }
  const option_values& opt = *ctx.options;
  const std::vector<std::string> problems = opt.choices("problems");
  const std::vector<std::string> dtypes = opt.choices("dtypes");
  const std::vector<std::string> kinds = opt.choices("kinds");
  // Each halo path with each placement: the rows of one grid on G GPUs, side by side.
  std::vector<std::pair<std::string, std::string>> variants;
  for (const std::string& path : opt.choices("paths")) {
    for (const std::string& placement : opt.choices("placements")) {
      variants.emplace_back(path, placement);
    }
  }
  const std::vector<long long> per_gpu = opt.integers("ranks-per-gpu");
  const std::vector<int> counts = gpu_counts(gpus);
  outcome o;
  o.name = "scaling";
  json runs = json::array();
  for (const std::string& problem : problems) {
    const bool heat = problem == "heat3d";
    const long long n = opt.integer(heat ? "heat-n" : "jacobi-n");
    const std::string steps = opt.text(heat ? "heat-steps" : "jacobi-steps");
    for (const std::string& dtype : heat ? dtypes : std::vector<std::string>{"float"}) {
      const std::string grid = heat ? std::to_string(n) + "^3 " + dtype
                                    : std::to_string(n) + "^2 float, norm every iteration";
      for (const long long rpg : per_gpu) {
        const std::string base = problem + "-" + dtype + "-" + std::to_string(rpg) + "rpg";
        const auto run = [&](const std::string& what, int g, const std::string& path, int factor,
                             const std::string& placement) {
          const long long ranks = rpg * g;
          std::vector<std::string> args = problem_args(problem, dtype, n, factor, steps);
          args.insert(args.end(), {"--halo", halo_of(path), "--placement", placement});
          const stencil_app_result r =
              run_stencil_app(ctx, "scaling-" + base + "-" + what, static_cast<int>(ranks),
                              launch_mode::funnel_auto, {"--gpus", first_gpus(g)}, args);
          json j = json::object();
          j["problem"] = problem;
          j["dtype"] = dtype;
          j["ranks_per_gpu"] = rpg;
          j["gpus"] = g;
          j["path"] = path;
          j["placement"] = placement;
          j["run"] = what;
          j["ranks"] = ranks;
          j["cell_updates_per_s"] = r.cell_updates_per_s;
          j["summary"] = r.summary;
          runs.push_back(std::move(j));
          return r.cell_updates_per_s;
        };
        const double one = run("1gpu", 1, "auto", 1, "rank");
        for (const int g : counts) {
          for (const std::string& kind : kinds) {
            for (const auto& [path, placement] : variants) {
              // Rows of rank order keep their names (and goals); boxes placed by GPU say so.
              const bool by_device = placement == "device";
              const double rate =
                  run(std::to_string(g) + "gpu-" + kind + "-" + path + (by_device ? "-device" : ""),
                      g, path, kind == "weak" ? g : 1, placement);
              comparison row;
              row.what = problem + " " + grid + ", " + std::to_string(rpg) + " rank/GPU, " +
                         std::to_string(g) + " GPUs " + kind + ", " + path +
                         (by_device ? ", boxes by GPU" : "");
              row.baseline_name = std::to_string(g) + " x one GPU";
              row.baseline = g * one;
              row.funnel_name = std::to_string(g) + " GPUs";
              row.funnel = rate;
              row.unit = "updates/s";
              row.ratio = rate / (g * one);
              // The goals hold for the defaults: boxes placed by GPU are shown without one.
              if (!by_device) row.target = goal_of(problem, n, path, kind, g, rpg);
              o.rows.push_back(row);
            }
          }
        }
      }
    }
  }
  o.raw["runs"] = std::move(runs);
  o.raw["efficiency"] =
      "rate on G GPUs / (G x rate on 1 GPU, same ranks per GPU); weak: grid grown G times";
  return o;
}

}  // namespace

benchmark scaling_benchmark() {
  command_spec spec;
  spec.name = "scaling";
  spec.brief = "heat3d and jacobi2d on 1 to all GPUs of the node: strong and weak efficiency";
  spec.summary =
      "heat3d (float, double) and jacobi2d (norm every iteration) on 1, 2, 4, 8 ... GPUs (up\n"
      "to every visible GPU) with 1, 4 and 16 ranks per GPU, through funnel-run +\n"
      "funnel-stencil: strong efficiency (same grid) and weak efficiency (the grid grown with\n"
      "the GPUs) against one GPU with the same ranks per GPU, for each halo path side by side:\n"
      "auto (the default), peer (--halo ipc) and staged (--halo mpi); with --placements\n"
      "rank,device also with funnel-stencil's --placement device. Goals with auto: heat3d\n"
      "1024^3 strong >= 0.95 (0.97 on 2 GPUs), weak >= 0.97; jacobi2d 16384^2 >= 0.85 at 1\n"
      "rank per GPU, 0.75 at more; staged on 2 GPUs >= 0.90. Needs 2 GPUs; says 'skipped'\n"
      "otherwise.";
  spec.options = {
      choices_option("problems", "LIST", "heat3d,jacobi2d", "heat3d,jacobi2d", "heat3d,jacobi2d",
                     {"heat3d", "jacobi2d"}),
      choices_option("dtypes", "LIST", "heat3d element types", "float,double", "float,double",
                     {"float", "double"}),
      choices_option("paths", "LIST", "halo paths: auto, peer (--halo ipc), staged (--halo mpi)",
                     "auto,peer,staged", "auto,peer,staged", {"auto", "peer", "staged"}),
      choices_option("kinds", "LIST", "strong (same grid), weak (grid grown with the GPUs)",
                     "strong,weak", "strong,weak", {"strong", "weak"}),
      choices_option("placements", "LIST",
                     "which box each rank takes on several GPUs: rank (rank order), device "
                     "(funnel-stencil --placement device: a GPU's ranks together)",
                     "rank", "rank", {"rank", "device"}),
      integers_option("ranks-per-gpu", "LIST", "ranks per GPU", "1,4,16", "1"),
      integer_option("heat-n", "N", "heat3d grid edge", "1024", "32", 4),
      integer_option("heat-steps", "S", "heat3d steps", "100", "3"),
      integer_option("jacobi-n", "N", "jacobi2d grid edge (boundary included)", "16384", "130", 4),
      integer_option("jacobi-steps", "S", "jacobi2d iterations", "1000", "3"),
  };
  return benchmark{spec, run_scaling};
}

const std::vector<benchmark>& all_benchmarks() {
  static const std::vector<benchmark> list = {share_benchmark(),    stencil_benchmark(),
                                              pipeline_benchmark(), pool_benchmark(),
                                              scaling_benchmark(),  kernels_benchmark()};
  return list;
}

}  // namespace funnel::bench
