// funnel-bench scaling: heat3d and jacobi2d on 1 and 2 GPUs with 1 and 4 ranks per GPU, through
// funnel-run + funnel-stencil; strong (same grid) and weak (grid doubled) efficiency.
#include <string>
#include <vector>

#include "benchmarks.hpp"
#include "funnel/error.hpp"
#include "rank_launch.hpp"

namespace funnel::bench {
namespace {

/// funnel-stencil's arguments for a problem and a grid doubled `factor` times along its slowest
/// axis (weak scaling).
std::vector<std::string> problem_args(const std::string& problem, long long n, int factor,
                                      const std::string& steps) {
  if (problem == "heat3d") {
    return {"--problem",
            "heat3d",
            "--dtype",
            "float",
            "--steps",
            steps,
            "--n",
            std::to_string(n) + "," + std::to_string(n) + "," + std::to_string(n * factor)};
  }
  // jacobi2d's -ny counts the two boundary rows: double the interior rows.
  const long long ny = (n - 2) * factor + 2;
  return {"--problem",     "jacobi2d", "--steps", steps,
          "--check-every", "100",      "--n",     std::to_string(n) + "," + std::to_string(ny)};
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
  const std::vector<long long> per_gpu = opt.integers("ranks-per-gpu");
  outcome o;
  o.name = "scaling";
  json runs = json::array();
  for (const std::string& problem : problems) {
    const bool heat = problem == "heat3d";
    const long long n = opt.integer(heat ? "heat-n" : "jacobi-n");
    const std::string steps = opt.text(heat ? "heat-steps" : "jacobi-steps");
    for (const long long rpg : per_gpu) {
      const std::string base = problem + "-" + std::to_string(rpg) + "rpg";
      const auto run = [&](const std::string& what, long long ranks, const std::string& gpu_list,
                           int factor) {
        const stencil_app_result r = run_stencil_app(
            ctx, "scaling-" + base + "-" + what, static_cast<int>(ranks), launch_mode::funnel_auto,
            {"--gpus", gpu_list}, problem_args(problem, n, factor, steps));
        json j = json::object();
        j["problem"] = problem;
        j["ranks_per_gpu"] = rpg;
        j["run"] = what;
        j["ranks"] = ranks;
        j["cell_updates_per_s"] = r.cell_updates_per_s;
        j["summary"] = r.summary;
        runs.push_back(std::move(j));
        return r.cell_updates_per_s;
      };
      const double one = run("1gpu", rpg, "0", 1);
      const double strong = run("2gpu-strong", 2 * rpg, "0,1", 1);
      const double weak = run("2gpu-weak", 2 * rpg, "0,1", 2);
      const std::string grid =
          heat ? std::to_string(n) + "^3 float" : std::to_string(n) + "^2 float";
      for (const auto& [kind, rate] : {std::pair<std::string, double>{"strong", strong},
                                       std::pair<std::string, double>{"weak", weak}}) {
        comparison row;
        row.what = problem + " " + grid + " " + std::to_string(rpg) + " rank/GPU " + kind;
        row.baseline_name = "2 x one GPU";
        row.baseline = 2.0 * one;
        row.funnel_name = "2 GPUs";
        row.funnel = rate;
        row.unit = "updates/s";
        row.ratio = rate / (2.0 * one);
        if (heat && n == 1024 && rpg == 1) row.target = at_least(0.95);
        o.rows.push_back(row);
      }
    }
  }
  o.raw["runs"] = std::move(runs);
  o.raw["efficiency"] = "rate on 2 GPUs / (2 x rate on 1 GPU); weak: grid doubled";
  return o;
}

}  // namespace

benchmark scaling_benchmark() {
  command_spec spec;
  spec.name = "scaling";
  spec.brief = "heat3d and jacobi2d on 1 and 2 GPUs: strong and weak efficiency";
  spec.summary =
      "heat3d and jacobi2d (float) on 1 and 2 GPUs with 1 and 4 ranks per GPU, through\n"
      "funnel-run + funnel-stencil (halo exchange overlapped with the interior): strong\n"
      "efficiency (same grid) and weak efficiency (grid doubled). Goal >= 0.95 for 2 GPUs at\n"
      "1024^3 float. Needs 2 GPUs (nvidia-h200-x2); says 'skipped' otherwise.";
  spec.options = {
      choices_option("problems", "LIST", "heat3d,jacobi2d", "heat3d,jacobi2d", "heat3d,jacobi2d",
                     {"heat3d", "jacobi2d"}),
      integers_option("ranks-per-gpu", "LIST", "ranks per GPU", "1,4", "1"),
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
