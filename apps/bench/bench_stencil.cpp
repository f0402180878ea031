// funnel-bench stencil: heat3d resident on one device against a device-to-device copy of the
// same field (the bandwidth the stencil could reach), and N ranks splitting one grid on one GPU
// through funnel-run + funnel-stencil against one rank owning the whole grid.
#include <string>
#include <utility>
#include <vector>

#include "benchmarks.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "rank_launch.hpp"
#include "timing.hpp"

namespace funnel::bench {
namespace {

/// Figures of one resident case: the stencil loop and the copy loop over the same field.
struct resident_case {
  samples stencil;
  samples copy;
  double stencil_bytes_per_s = 0.0;  // effective: one read + one write per cell update
  double copy_bytes_per_s = 0.0;     // read + write of the allocated field
  double cell_updates_per_s = 0.0;
};

template <class T>
resident_case measure_resident(const context& ctx, std::int64_t n, long long steps) {
  const field_layout layout{{n, n, n}, 1};
  const auto bytes = static_cast<std::size_t>(layout.allocated_cells()) * sizeof(T);
  stream s(ctx.backend);
  memory_pool_options options;
  options.name = "bench-stencil";
  memory_pool pool(ctx.backend, options);
  T* a = static_cast<T*>(pool.allocate(s, bytes));
  T* b = static_cast<T*>(pool.allocate(s, bytes));
  kernels::heat3d_initialize(s.view(), layout, layout.interior, {0, 0, 0}, a);
  kernels::heat3d_initialize(s.view(), layout, layout.interior, {0, 0, 0}, b);
  const kernels::implementation impl = kernels::default_implementation(s);
  const box interior = layout.interior_box();
  const std::vector<samples> t =
      time_interleaved(s, ctx.warmup, ctx.repeat,
                       {[&] {
                          for (long long i = 0; i < steps; ++i) {
                            kernels::heat3d_step(s.view(), impl, layout, a, b, interior,
                                                 kernels::heat3d_params<T>{T(0.1)});
                            std::swap(a, b);
                          }
                        },
                        [&] {
                          for (long long i = 0; i < steps; ++i) copy_async(s, b, a, bytes);
                        }});
  pool.deallocate(s, a, bytes);
  pool.deallocate(s, b, bytes);
  s.synchronize();

  resident_case out;
  out.stencil = t[0];
  out.copy = t[1];
  const double updates = double(layout.interior_box().cells()) * double(steps);
  out.cell_updates_per_s = updates / t[0].median();
  out.stencil_bytes_per_s = 2.0 * sizeof(T) * updates / t[0].median();
  out.copy_bytes_per_s = 2.0 * double(bytes) * double(steps) / t[1].median();
  return out;
}

void resident_part(const context& ctx, outcome& o) {
  const option_values& opt = *ctx.options;
  const std::vector<long long> sizes = opt.integers("sizes");
  const std::vector<std::string> dtypes = opt.choices("dtypes");
  const long long steps = opt.integer("steps");
  json cases = json::array();
  for (const std::string& dtype : dtypes) {
    for (const long long n : sizes) {
      json c = json::object();
      c["dtype"] = dtype;
      c["n"] = n;
      resident_case r;
      try {
        r = dtype == "float" ? measure_resident<float>(ctx, n, steps)
                             : measure_resident<double>(ctx, n, steps);
      } catch (const out_of_memory& e) {
        c["skipped"] = std::string("does not fit: ") + e.what();
        o.notes.push_back(dtype + " " + std::to_string(n) + "^3: does not fit the device");
        cases.push_back(std::move(c));
        continue;
      }
      comparison row;
      row.what = "heat3d " + std::to_string(n) + "^3 " + dtype + " vs copy";
      row.baseline_name = "device-to-device copy";
      row.baseline = r.copy_bytes_per_s / 1e9;
      row.funnel_name = "heat3d effective bandwidth";
      row.funnel = r.stencil_bytes_per_s / 1e9;
      row.unit = "GB/s";
      row.ratio = r.stencil_bytes_per_s / r.copy_bytes_per_s;
      row.target = at_least(0.90);
      row.goal_applies = ctx.on_gpu();
      o.rows.push_back(row);
      c["steps"] = steps;
      c["stencil"] = r.stencil.to_json();
      c["copy"] = r.copy.to_json();
      c["cell_updates_per_s"] = r.cell_updates_per_s;
      c["stencil_bytes_per_s"] = r.stencil_bytes_per_s;
      c["copy_bytes_per_s"] = r.copy_bytes_per_s;
      cases.push_back(std::move(c));
    }
  }
  o.raw["resident"] = std::move(cases);
}

/// One "ranks split one grid" case: the grid, how it is split, and the goals per rank count.
struct split_case {
  std::string key;                                  ///< raw JSON key and child run tag
  std::string label;                                ///< the grid as the rows name it
  std::vector<std::string> args;                    ///< funnel-stencil arguments of every run
  std::vector<long long> ranks;                     ///< rank counts (1 is the baseline)
  bool along_x = false;                             ///< --dims R,1,1 (else funnel-stencil chooses)
  std::vector<std::pair<long long, double>> goals;  ///< (ranks, fraction of one rank)
};

/// Runs `c` through funnel-run: each rank count's cell updates per second as a fraction of one
/// rank's. Adds a row per rank count above 1 and the runs under o.raw[c.key].
void split_part(const context& ctx, const split_case& c, outcome& o) {
  const launch_mode mode = effective_mode(ctx, launch_mode::funnel_auto);
  json runs = json::array();
  double one_rank = 0.0;
  for (const long long r : c.ranks) {
    std::vector<std::string> args = c.args;
    if (c.along_x) args.insert(args.end(), {"--dims", std::to_string(r) + ",1,1"});
    const stencil_app_result res =
        run_stencil_app(ctx, c.key + "-" + std::to_string(r), static_cast<int>(r), mode, {}, args);
    json run = json::object();
    run["ranks"] = r;
    run["cell_updates_per_s"] = res.cell_updates_per_s;
    run["time_s"] = res.seconds;
    run["wall_s"] = res.wall_seconds;
    run["summary"] = res.summary;
    runs.push_back(std::move(run));
    if (r == 1) one_rank = res.cell_updates_per_s;
    if (r == 1 || one_rank <= 0.0) continue;
    comparison row;
    row.what = std::to_string(r) + " ranks split " + c.label;
    row.baseline_name = "1 rank owns the grid";
    row.baseline = one_rank;
    row.funnel_name = std::to_string(r) + " ranks via " + to_string(mode);
    row.funnel = res.cell_updates_per_s;
    row.unit = "updates/s";
    row.ratio = res.cell_updates_per_s / one_rank;
    for (const auto& [ranks, fraction] : c.goals) {
      if (ranks == r) row.target = at_least(fraction);
    }
    row.goal_applies = ctx.on_gpu();
    o.rows.push_back(row);
  }
  if (one_rank <= 0.0) o.notes.push_back(c.label + ": the rank list has no 1: no ratio");
  json raw = json::object();
  raw["grid"] = c.label;
  raw["args"] = c.args;
  raw["launch"] = to_string(mode);
  raw["runs"] = std::move(runs);
  o.raw[c.key] = std::move(raw);
}

/// The cube the ranks split (--shared-*), and the small grid split along x (--split-*), where
/// each rank's step is a few tiny kernels and the halo exchange dominates.
std::vector<split_case> split_cases(const option_values& opt) {
  const long long n = opt.integer("shared-n");
  const std::string cube = std::to_string(n) + "," + std::to_string(n) + "," + std::to_string(n);
  split_case shared{"shared",
                    std::to_string(n) + "^3",
                    {"--problem", "heat3d", "--n", cube, "--dtype", opt.text("shared-dtype"),
                     "--steps", opt.text("shared-steps")},
                    opt.integers("ranks"),
                    false,
                    {{8, 0.97}}};
  const std::vector<long long> g = opt.integers("split-grid");
  if (g.size() != 3) {
    throw invalid_argument("--split-grid " + opt.text("split-grid") +
                           ": expected NX,NY,NZ (three integers >= 1)");
  }
  const std::string grid =
      std::to_string(g[0]) + "," + std::to_string(g[1]) + "," + std::to_string(g[2]);
  split_case small{
      "split",
      std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]),
      {"--problem", "heat3d", "--n", grid, "--dtype", "float", "--steps", opt.text("split-steps")},
      opt.integers("split-ranks"),
      true,
      {{8, 0.70}, {16, 0.55}, {32, 0.40}}};
  return {shared, small};
}

outcome run_stencil(const context& ctx) {
  outcome o;
  o.name = "stencil";
  const std::vector<split_case> cases = split_cases(*ctx.options);  // checked before any run
  resident_part(ctx, o);
  for (const split_case& c : cases) {
    try {
      split_part(ctx, c, o);
    } catch (const unsupported& e) {
      o.notes.push_back("ranks splitting " + c.label + ": skipped: " + e.what());
      o.raw[c.key] = {{"skipped", std::string(e.what())}};
    }
  }
  return o;
}

}  // namespace

benchmark stencil_benchmark() {
  command_spec spec;
  spec.name = "stencil";
  spec.brief = "heat3d vs a device copy; N ranks splitting one grid vs one rank";
  spec.summary =
      "heat3d resident on one device: effective bandwidth (cell updates x 2 x element size / s)\n"
      "against a device-to-device copy of the same field in the same run (goal >= 0.90), float\n"
      "and double; and N ranks splitting one grid on one GPU through funnel-run +\n"
      "funnel-stencil against one rank owning it: the cube (goal >= 0.97 at N = 8) and a small\n"
      "float grid split along x (goals >= 0.70 / 0.55 / 0.40 at N = 8 / 16 / 32).";
  spec.options = {
      integers_option("sizes", "LIST", "edges of the resident cubes", "256,512,1024", "12,16", 4),
      choices_option("dtypes", "LIST", "element types (float,double)", "float,double",
                     "float,double", {"float", "double"}),
      integer_option("steps", "S", "stencil steps (and copies) per timed repetition", "20", "2"),
      integers_option("ranks", "LIST", "ranks splitting the shared grid", "1,2,4,8", "1,2"),
      integer_option("shared-n", "N", "edge of the grid the ranks split", "512", "12", 4),
      choice_option("shared-dtype", "T", "its element type", "float", "float", {"float", "double"}),
      integer_option("shared-steps", "S", "funnel-stencil steps", "200", "3"),
      integers_option("split-grid", "NX,NY,NZ", "the small grid split along x (float)", "768,96,96",
                      "8,4,4"),
      integers_option("split-ranks", "LIST", "ranks splitting the small grid", "1,2,4,8,16,32",
                      "1,2"),
      integer_option("split-steps", "S", "its funnel-stencil steps", "500", "3"),
  };
  return benchmark{spec, run_stencil};
}

}  // namespace funnel::bench
