// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel-bench kernels: heat3d_two_steps (two steps of the heat stencil in one launch) in the
// block shape it takes and in every other compiled shape, against two heat3d_step launches on
// the same region in the same run: the measurement that chose the kernel's shapes, kept so that
// the choice can be made again on the next GPU (docs/halo.md, "The second kernel").
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks.hpp"
#include "cli_support.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/kernels/heat3d_block_shape.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/stream.hpp"
#include "timing.hpp"

namespace funnel::bench {
namespace {

/// "24x96x96" -> {24, 96, 96} (--regions is checked with it when parsed); each extent at least 2
/// (both steps need neighbours on every axis) and at most 2^40 cells in all.
index3 parse_region(const std::string& text) {
  const auto bad = [&] {
    return invalid_argument(app::not_valid(text,
                                           "NXxNYxNZ with each extent an integer >= 2 and at most "
                                           "2^40 cells (e.g. 24x96x96)"));
  };
  index3 n{0, 0, 0};
  std::size_t at = 0;
  for (int axis = 0; axis < 3; ++axis) {
    const std::size_t end = axis < 2 ? text.find('x', at) : text.size();
    if (end == std::string::npos || end == at || end - at > 13) throw bad();
    for (std::size_t i = at; i < end; ++i) {
      if (text[i] < '0' || text[i] > '9') throw bad();
    }
    n[axis] = std::stoll(text.substr(at, end - at));
    if (n[axis] < 2) throw bad();
    at = end + 1;
  }
  constexpr std::int64_t max_cells = std::int64_t{1} << 40;
  if (n[0] > max_cells || n[1] > max_cells / n[0] || n[2] > max_cells / (n[0] * n[1])) throw bad();
  return n;
}

std::vector<index3> parse_regions(const std::string& list) {
  std::vector<index3> regions;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t end = std::min(list.find(',', at), list.size());
    regions.push_back(parse_region(list.substr(at, end - at)));
    at = end + 1;
  }
  return regions;
}

std::string region_name(const index3& n) {
  return std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]);
}

kernels::heat3d_block_shape parse_shape(const std::string& name) {
  for (const kernels::heat3d_block_shape& s : kernels::heat3d_two_steps_shapes(4)) {
    if (s.to_string() == name) return s;
  }
  throw invalid_argument("--shapes: '" + name + "' is not a block shape of heat3d_two_steps");
}

/// One way of taking two steps: two heat3d_step launches (`two_launches`), heat3d_two_steps as
/// it chooses (`own`; on the GPU `shape` says what it takes), or in a chosen `shape` (planes
/// resolved).
struct variant {
  std::string name;
  bool two_launches = false;
  bool own = false;
  std::optional<kernels::heat3d_block_shape> shape;
};

/// The variants measured on one region: the baseline, the kernel's choice, then each wanted
/// shape compiled for T with each planes count (CUDA only) that is not one of those already.
/// Says in `notes` what is left out.
template <class T>
std::vector<variant> variants_for(const context& ctx, const box& second,
                                  const std::vector<std::string>& shapes,
                                  const std::vector<long long>& planes, const std::string& dtype,
                                  std::vector<std::string>& notes) {
  if (!ctx.on_gpu()) return {{"2 x heat3d_step", true, false, {}}, {"host", false, true, {}}};
  const kernels::heat3d_block_shape own = kernels::heat3d_two_steps_shape(sizeof(T), second);
  std::vector<variant> out = {{"2 x heat3d_step", true, false, {}},
                              {own.to_string() + " (own)", false, true, own}};
  const std::vector<kernels::heat3d_block_shape> compiled =
      kernels::heat3d_two_steps_shapes(sizeof(T));
  for (const std::string& name : shapes) {
    kernels::heat3d_block_shape shape = parse_shape(name);
    if (std::find(compiled.begin(), compiled.end(), shape) == compiled.end()) {
      std::string note = dtype;
      note +=
          ": " + name + " is not compiled (its shared-memory rings exceed 48 KiB): not measured";
      notes.push_back(std::move(note));
      continue;
    }
    for (const long long p : planes) {
      shape.planes = p;
      const kernels::heat3d_block_shape resolved = kernels::resolve_planes(shape, second);
      if (std::none_of(out.begin(), out.end(),
                       [&](const variant& v) { return v.shape == resolved; })) {
        out.push_back({resolved.to_string(), false, false, resolved});
      }
    }
  }
  return out;
}

/// Times every variant on a field of `n` interior cells and a 2-deep halo (the first step on
/// the interior grown by one cell, the second on the interior, as funnel-stencil takes them):
/// seconds per two steps, one entry per variant.
template <class T>
std::vector<samples> time_variants(const context& ctx, const index3& n,
                                   const std::vector<variant>& variants, long long launches) {
  const field_layout layout{n, 2};
  const box second = layout.interior_box();
  box first = second;
  for (int axis = 0; axis < 3; ++axis) {
    first.lo[axis] -= 1;
    first.hi[axis] += 1;
  }
  stream s(ctx.backend);
  memory_pool_options options;
  options.name = "bench-kernels";
  memory_pool pool(ctx.backend, options);
  const auto cells = static_cast<std::size_t>(layout.allocated_cells());
  device_buffer<T> a(pool, s, cells);
  device_buffer<T> b(pool, s, cells);
  kernels::heat3d_initialize(s.view(), layout, layout.interior, {0, 0, 0}, a.data());
  kernels::heat3d_initialize(s.view(), layout, layout.interior, {0, 0, 0}, b.data());
  const kernels::heat3d_params<T> params{T(0.1)};
  const kernels::implementation impl = kernels::default_implementation(s.view());
  std::vector<std::function<void()>> bodies;
  bodies.reserve(variants.size());
  for (const variant& v : variants) {
    bodies.emplace_back([&, v] {
      for (long long i = 0; i < launches; ++i) {
        if (v.two_launches) {
          kernels::heat3d_step(s.view(), impl, layout, a.data(), b.data(), first, params);
          kernels::heat3d_step(s.view(), impl, layout, b.data(), a.data(), second, params);
        } else if (v.own) {
          kernels::heat3d_two_steps(s.view(), impl, layout, a.data(), b.data(), first, second,
                                    params);
        } else {
          kernels::heat3d_two_steps(s.view(), layout, a.data(), b.data(), first, second, params,
                                    *v.shape);
        }
      }
    });
  }
  std::vector<samples> t = time_interleaved(s.view(), ctx.warmup, ctx.repeat, bodies);
  s.synchronize();
  for (samples& one : t) {
    for (double& seconds : one.seconds) seconds /= static_cast<double>(launches);
  }
  return t;
}

template <class T>
void region_rows(const context& ctx, const index3& n, const std::string& dtype, outcome& o,
                 json& cases) {
  const option_values& opt = *ctx.options;
  const field_layout layout{n, 2};
  json c = json::object();
  c["region"] = region_name(n);
  c["dtype"] = dtype;
  std::vector<std::string> notes;
  const std::vector<variant> variants = variants_for<T>(
      ctx, layout.interior_box(), opt.choices("shapes"), opt.integers("planes"), dtype, notes);
  for (const std::string& note : notes) {
    if (std::find(o.notes.begin(), o.notes.end(), note) == o.notes.end()) o.notes.push_back(note);
  }
  std::vector<samples> t;
  try {
    t = time_variants<T>(ctx, n, variants, opt.integer("launches"));
  } catch (const out_of_memory& e) {
    c["skipped"] = std::string("does not fit: ") + e.what();
    o.notes.push_back(region_name(n) + " " + dtype + ": does not fit the device");
    cases.push_back(std::move(c));
    return;
  }
  json measured = json::array();
  for (std::size_t v = 0; v < variants.size(); ++v) {
    json one = json::object();
    one["variant"] = variants[v].name;
    one["seconds_per_two_steps"] = t[v].to_json();
    measured.push_back(std::move(one));
    if (v == 0) continue;
    comparison row;
    row.what = region_name(n) + " " + dtype + " " + variants[v].name;
    row.baseline_name = variants[0].name;
    row.baseline = t[0].median() * 1e6;
    row.funnel_name = "heat3d_two_steps";
    row.funnel = t[v].median() * 1e6;
    row.unit = "us";
    row.ratio = t[0].median() / t[v].median();
    row.goal_applies = ctx.on_gpu();
    o.rows.push_back(row);
  }
  c["variants"] = std::move(measured);
  cases.push_back(std::move(c));
}

option_spec regions_option() {
  option_spec o = text_option(
      "regions", "LIST",
      "regions of the two steps, NXxNYxNZ[,...] (each extent >= 2): a grid split among 32 ranks, "
      "96^3, the grid it splits, a slab and the cube",
      "24x96x96,96x96x96,768x96x96,64x512x512,512x512x512", "6x5x4,24x12x9");
  o.check = [](const std::string& value) {
    try {
      (void)parse_regions(value);
      return std::string{};
    } catch (const invalid_argument& e) {
      return std::string(e.what());
    }
  };
  return o;
}

outcome run_kernels(const context& ctx) {
  const option_values& opt = *ctx.options;
  const std::vector<index3> regions = parse_regions(opt.text("regions"));  // checked first
  outcome o;
  o.name = "kernels";
  json cases = json::array();
  for (const std::string& dtype : opt.choices("dtypes")) {
    for (const index3& n : regions) {
      if (dtype == "float") {
        region_rows<float>(ctx, n, dtype, o, cases);
      } else {
        region_rows<double>(ctx, n, dtype, o, cases);
      }
    }
  }
  if (!ctx.on_gpu()) {
    o.notes.push_back("host backend: the kernel's own loop only; block shapes are CUDA's");
  }
  o.raw["regions"] = std::move(cases);
  o.raw["launches"] = opt.integer("launches");
  return o;
}

}  // namespace

benchmark kernels_benchmark() {
  command_spec spec;
  spec.name = "kernels";
  spec.brief = "heat3d_two_steps' block shapes vs two heat3d_step launches";
  spec.summary =
      "Two steps of the 3D heat stencil on one region (a field with a 2-deep halo: the first\n"
      "step on the interior grown by one cell, the second on the interior): one\n"
      "heat3d_two_steps launch in the block shape it takes, and in each shape of --shapes with\n"
      "each --planes, against two heat3d_step launches in the same run. Ratio: their time over\n"
      "the one launch's (above 1: the one launch is faster). A case reads REGION TYPE\n"
      "32xTILExROWS/PLANES, \"(own)\" marking the shape heat3d_two_steps takes there. The\n"
      "figures that chose the kernel's shapes (docs/halo.md); run it again on another GPU.";
  spec.options = {
      regions_option(),
      choices_option("dtypes", "LIST", "element types (float,double)", "float,double",
                     "float,double", {"float", "double"}),
      choices_option("shapes", "LIST",
                     "block shapes (columns of 32 x 8 or 16 cells x rows per thread) measured "
                     "beside the kernel's own choice, on the GPU; double has the 8-row ones",
                     "32x8x2,32x8x4,32x16x2,32x16x4", "32x8x2,32x8x4,32x16x2,32x16x4",
                     {"32x8x2", "32x8x4", "32x16x2", "32x16x4"}),
      integers_option("planes", "LIST",
                      "z-planes per block for each shape of --shapes (0: the kernel's rule)", "0",
                      "0,1", 0),
      integer_option("launches", "N", "launches (two steps each) per timed repetition", "20", "2"),
  };
  return benchmark{spec, run_kernels};
}

}  // namespace funnel::bench
