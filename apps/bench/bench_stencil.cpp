// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel-bench stencil: heat3d resident on one device against a device-to-device copy of the
// same field (the bandwidth the stencil could reach), and N ranks splitting one grid on one GPU
// through funnel-run + funnel-stencil against one rank owning the whole grid.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks.hpp"
#include "cli_support.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/kernels/jacobi2d.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "rank_launch.hpp"
#include "timing.hpp"

namespace funnel::bench {
namespace {

/// The rows a resident case is measured on: "none" gives rows of n + 2 cells, "8" and "16" pad
/// each row (field_layout::row_align) so that its first interior cell sits on that many bytes,
/// and the CUDA kernels load the interior as 8- or 16-byte vectors from its edge
/// (funnel-stencil --row-align none|16).
struct row_alignment {
  std::string name;  ///< as --row-align spells it
  int bytes = 0;     ///< 0: no padding
};

row_alignment parse_row_alignment(const std::string& name) {
  return row_alignment{name, name == "none" ? 0 : std::stoi(name)};
}

/// `natural` with its rows aligned as `alignment` asks, for elements of T.
template <class T>
field_layout aligned(const field_layout& natural, const row_alignment& alignment) {
  field_layout layout = natural;
  layout.row_align = row_align_for(sizeof(T), static_cast<std::size_t>(alignment.bytes));
  return layout;
}

/// One resident problem: a field, the step that updates it, and what a copy of it moves.
template <class T>
struct resident_problem {
  std::string kernel;   ///< "heat3d" or "jacobi2d"
  std::string label;    ///< e.g. "heat3d 512^3 float"
  field_layout layout;  ///< the field's layout without row padding
  std::string rows;     ///< the --row-align variant the kernel is fastest on (carries the goal)
  bool norm = false;    ///< jacobi2d: the L2 norm every step
  std::function<void(stream_view, const field_layout&, const T*, T*, float*)> step;
  std::function<void(stream_view, const field_layout&, T*)> initialize;
};

/// Figures of one resident problem: each row alignment's steps and a copy of the field.
struct resident_case {
  std::vector<samples> stencil;  ///< one per row alignment
  samples copy;
  double copy_bytes_per_s = 0.0;            ///< read + write of the allocated field
  std::vector<double> stencil_bytes_per_s;  ///< effective: one read + one write per cell update
};

template <class T>
resident_case measure_resident(const context& ctx, const resident_problem<T>& problem,
                               const std::vector<row_alignment>& alignments, long long steps) {
  stream s(ctx.backend);
  memory_pool_options options;
  options.name = "bench-stencil";
  memory_pool pool(ctx.backend, options);
  // One pair of arrays per row alignment (released to the pool, in reverse, on any exit).
  struct arrays {
    field_layout layout;
    device_buffer<T> a;
    device_buffer<T> b;
  };
  std::vector<arrays> fields;
  for (const row_alignment& alignment : alignments) {
    const field_layout layout = aligned<T>(problem.layout, alignment);
    const auto cells = static_cast<std::size_t>(layout.allocated_cells());
    fields.push_back({layout, device_buffer<T>(pool, s, cells), device_buffer<T>(pool, s, cells)});
    problem.initialize(s.view(), layout, fields.back().a.data());
    problem.initialize(s.view(), layout, fields.back().b.data());
  }
  const device_buffer<float> norm(pool, s, problem.norm ? 1 : 0);
  // The copy moves the unpadded field: the bytes every variant's steps read and write.
  const auto copy_bytes = static_cast<std::size_t>(problem.layout.allocated_cells()) * sizeof(T);
  std::vector<std::function<void()>> bodies;
  for (arrays& f : fields) {
    bodies.emplace_back([&, fp = &f] {
      T* a = fp->a.data();
      T* b = fp->b.data();
      for (long long i = 0; i < steps; ++i) {
        if (!norm.empty()) memset_async(s, norm.data(), 0, sizeof(float));
        problem.step(s.view(), fp->layout, a, b, norm.data());
        std::swap(a, b);
      }
    });
  }
  bodies.emplace_back([&] {
    for (long long i = 0; i < steps; ++i) {
      copy_async(s, fields[0].b.data(), fields[0].a.data(), copy_bytes);
    }
  });
  const std::vector<samples> t = time_interleaved(s, ctx.warmup, ctx.repeat, bodies);
  s.synchronize();

  resident_case out;
  out.copy = t.back();
  out.copy_bytes_per_s = 2.0 * double(copy_bytes) * double(steps) / out.copy.median();
  const double updates = double(problem.layout.interior_box().cells()) * double(steps);
  for (std::size_t v = 0; v < alignments.size(); ++v) {
    out.stencil.push_back(t[v]);
    out.stencil_bytes_per_s.push_back(2.0 * sizeof(T) * updates / t[v].median());
  }
  return out;
}

template <class T>
resident_problem<T> heat3d_problem(std::int64_t n, const std::string& dtype) {
  resident_problem<T> p;
  p.kernel = "heat3d";
  p.label = p.kernel + " " + std::to_string(n) + "^3 " + dtype;
  p.layout = field_layout{{n, n, n}, 1};
  p.rows = "16";
  p.step = [](stream_view s, const field_layout& l, const T* a, T* b, float*) {
    kernels::heat3d_step(s, kernels::default_implementation(s), l, a, b, l.interior_box(),
                         kernels::heat3d_params<T>{T(0.1)});
  };
  p.initialize = [](stream_view s, const field_layout& l, T* a) {
    kernels::heat3d_initialize(s, l, l.interior, {0, 0, 0}, a);
  };
  return p;
}

resident_problem<float> jacobi2d_problem(std::int64_t n) {
  resident_problem<float> p;
  p.kernel = "jacobi2d";
  p.label = p.kernel + " " + std::to_string(n) + "^2 float, norm every step,";
  p.layout = kernels::jacobi2d_layout(n, n);
  p.rows = "none";
  p.norm = true;
  p.step = [](stream_view s, const field_layout& l, const float* a, float* b, float* norm) {
    kernels::jacobi2d_step(s, kernels::default_implementation(s), l, a, b, l.interior_box(), norm);
  };
  p.initialize = [](stream_view s, const field_layout& l, float* a) {
    kernels::jacobi2d_initialize(s, l, l.interior, {0, 0, 0}, a, nullptr);
  };
  return p;
}

/// Measures `problem` on every row alignment and adds a row per alignment (problem.rows carries
/// the goal, or the first listed when it is not measured) and the raw figures to `cases`.
template <class T>
void resident_rows(const context& ctx, const resident_problem<T>& problem,
                   const std::vector<row_alignment>& alignments, long long steps, double goal,
                   outcome& o, json& cases) {
  json c = json::object();
  c["case"] = problem.label;
  c["steps"] = steps;
  resident_case r;
  try {
    r = measure_resident<T>(ctx, problem, alignments, steps);
  } catch (const out_of_memory& e) {
    c["skipped"] = std::string("does not fit: ") + e.what();
    o.notes.push_back(problem.label + ": does not fit the device");
    cases.push_back(std::move(c));
    return;
  }
  c["copy"] = r.copy.to_json();
  c["copy_bytes_per_s"] = r.copy_bytes_per_s;
  json variants = json::array();
  std::size_t goal_row = 0;
  for (std::size_t v = 0; v < alignments.size(); ++v) {
    if (alignments[v].name == problem.rows) goal_row = v;
  }
  for (std::size_t v = 0; v < alignments.size(); ++v) {
    comparison row;
    row.what = problem.label + " vs copy";
    if (alignments[v].bytes > 0) {
      row.what += ", interior on " + std::to_string(alignments[v].bytes) + " B";
    }
    row.baseline_name = "device-to-device copy";
    row.baseline = r.copy_bytes_per_s / 1e9;
    row.funnel_name = problem.kernel + " effective bandwidth";
    row.funnel = r.stencil_bytes_per_s[v] / 1e9;
    row.unit = "GB/s";
    row.ratio = r.stencil_bytes_per_s[v] / r.copy_bytes_per_s;
    if (v == goal_row) row.target = at_least(goal);
    row.goal_applies = ctx.on_gpu();
    o.rows.push_back(row);
    json variant = json::object();
    variant["row_align"] = alignments[v].name;
    const field_layout layout = aligned<T>(problem.layout, alignments[v]);
    variant["row_pitch"] = layout.row_pitch();
    variant["interior_x"] = layout.index(layout.interior_box().lo[0], 0, 0);
    variant["stencil"] = r.stencil[v].to_json();
    variant["stencil_bytes_per_s"] = r.stencil_bytes_per_s[v];
    variants.push_back(std::move(variant));
  }
  c["variants"] = std::move(variants);
  cases.push_back(std::move(c));
}

void resident_part(const context& ctx, outcome& o) {
  const option_values& opt = *ctx.options;
  const std::vector<long long> sizes = opt.integers("sizes");
  const std::vector<std::string> dtypes = opt.choices("dtypes");
  const long long steps = opt.integer("steps");
  std::vector<row_alignment> alignments;
  for (const std::string& a : opt.choices("row-align"))
    alignments.push_back(parse_row_alignment(a));
  json cases = json::array();
  for (const std::string& dtype : dtypes) {
    for (const long long n : sizes) {
      if (dtype == "float") {
        resident_rows(ctx, heat3d_problem<float>(n, dtype), alignments, steps, 0.93, o, cases);
      } else {
        resident_rows(ctx, heat3d_problem<double>(n, dtype), alignments, steps, 0.93, o, cases);
      }
    }
  }
  for (const long long n : opt.integers("jacobi-n")) {
    resident_rows(ctx, jacobi2d_problem(n), alignments, steps, 0.85, o, cases);
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

/// The ranks along each axis that a funnel-stencil summary names, as "8x1x2".
std::string decomposition_text(const json& summary) {
  std::string text;
  for (const json& d : summary.at("decomposition")) {
    text += (text.empty() ? "" : "x") + std::to_string(d.get<long long>());
  }
  return text;
}

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
    row.what = std::to_string(r) + " ranks split " + c.label + " (" +
               decomposition_text(res.summary) + ")";
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

/// The cube the ranks split (--shared-*), and the small grid (--split-*), where each rank's step
/// is a few tiny kernels and the halo exchange dominates, once per --split-dims choice.
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
  const std::vector<long long> g = opt.integers("split-grid");  // three: split_grid_option()
  const std::string grid =
      std::to_string(g[0]) + "," + std::to_string(g[1]) + "," + std::to_string(g[2]);
  std::vector<split_case> cases = {shared};
  std::vector<std::string> seen;
  for (const std::string& dims : opt.choices("split-dims")) {
    if (std::find(seen.begin(), seen.end(), dims) != seen.end()) continue;  // once each
    seen.push_back(dims);
    const bool along_x = dims == "x";
    split_case c{along_x ? "split-x" : "split",
                 std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]) +
                     (along_x ? " along x" : ""),
                 {"--problem", "heat3d", "--n", grid, "--dtype", "float", "--steps",
                  opt.text("split-steps")},
                 opt.integers("split-ranks"),
                 along_x,
                 {}};
    // The goals are for the split funnel-stencil chooses; along x is there to compare with.
    if (!along_x) c.goals = {{8, 0.70}, {16, 0.55}, {32, 0.40}};
    cases.push_back(std::move(c));
  }
  return cases;
}

/// --split-grid: three integers >= 1, checked when the command line is parsed.
option_spec split_grid_option() {
  option_spec o = integers_option("split-grid", "NX,NY,NZ",
                                  "the small grid the ranks split (float)", "768,96,96", "8,4,4");
  o.check = [](const std::string& value) {
    return std::count(value.begin(), value.end(), ',') == 2
               ? std::string{}
               : app::not_valid(value, "NX,NY,NZ (three integers >= 1)");
  };
  return o;
}

outcome run_stencil(const context& ctx) {
  outcome o;
  o.name = "stencil";
  const std::vector<split_case> cases = split_cases(*ctx.options);
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
      "against a device-to-device copy of the same field in the same run (goal >= 0.93), float\n"
      "and double, on rows padded as funnel-stencil pads them and as given (--row-align); "
      "jacobi2d\n"
      "with its norm every step the same way (goal >= 0.85); and N ranks splitting one grid on\n"
      "one GPU through funnel-run + funnel-stencil against one rank owning it: the cube (goal\n"
      ">= 0.97 at N = 8) and a small float grid (goals >= 0.70 / 0.55 / 0.40 at N = 8 / 16 /\n"
      "32, for the split funnel-stencil chooses; along x for comparison: --split-dims).";
  spec.options = {
      integers_option("sizes", "LIST", "edges of the resident cubes", "256,512,1024", "12,16", 4),
      choices_option("dtypes", "LIST", "element types (float,double)", "float,double",
                     "float,double", {"float", "double"}),
      integer_option("steps", "S", "stencil steps (and copies) per timed repetition", "20", "2"),
      choices_option("row-align", "LIST",
                     "rows of the resident fields: padded so the interior starts on 16 or 8 "
                     "bytes, or none (n + 2 cells); the goal goes to the rows each kernel is "
                     "fastest on (heat3d 16, jacobi2d none: funnel-stencil --row-align), else "
                     "to the first listed",
                     "16,none", "16,none,8", {"16", "none", "8"}),
      integers_option(
          "jacobi-n", "LIST",
          "jacobi2d grids (N x N cells with the boundary, norm every step) against a copy", "16384",
          "18", 3),
      integers_option("ranks", "LIST", "ranks splitting the shared grid", "1,2,4,8", "1,2"),
      integer_option("shared-n", "N", "edge of the grid the ranks split", "512", "12", 4),
      choice_option("shared-dtype", "T", "its element type", "float", "float", {"float", "double"}),
      integer_option("shared-steps", "S", "funnel-stencil steps", "200", "3"),
      split_grid_option(),
      integers_option("split-ranks", "LIST", "ranks splitting the small grid", "1,2,4,8,16,32",
                      "1,2"),
      integer_option("split-steps", "S", "its funnel-stencil steps", "500", "3"),
      choices_option("split-dims", "LIST",
                     "how the ranks split the small grid: funnel (funnel-stencil's own "
                     "decomposition, as a user's run gets it; the goals are its) or x (N x 1 x 1)",
                     "funnel", "funnel,x", {"funnel", "x"}),
  };
  return benchmark{spec, run_stencil};
}

}  // namespace funnel::bench
