// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "solver.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "funnel/error.hpp"
#include "solvers.hpp"

namespace funnel::stencil {

std::string field_name_of(problem_kind problem) {
  return problem == problem_kind::heat3d ? "u" : "a";
}

namespace {

/// The bytes the cuda kernels load at once from rows whose length allows it.
constexpr std::size_t vector_bytes = 16;

/// The smallest box --row-align auto pads: padding measured faster on larger boxes and slower on
/// smaller ones; the bound lies between the nearest sizes measured (docs/halo.md, "The split of a
/// small grid").
constexpr std::int64_t smallest_padded_box = 10'000'000;

}  // namespace

std::int64_t auto_padded_row(const options& opts, const std::string& kernel,
                             const std::vector<row_shape>& rows) {
  if (opts.row_align != "auto" || opts.problem != problem_kind::jacobi2d ||
      opts.mode != run_mode::resident || kernel != "cuda") {
    return 0;
  }
  const int vector_cells = row_align_for(element_size_of(opts.dtype.value()), vector_bytes);
  for (const row_shape& r : rows) {
    if (r.row_cells % vector_cells != 0 && r.box_cells >= smallest_padded_box) return r.row_cells;
  }
  return 0;
}

int row_align_of(const options& opts, const std::string& kernel,
                 const std::vector<row_shape>& rows) {
  const bool padded = opts.row_align == "16" || auto_padded_row(opts, kernel, rows) != 0;
  return padded ? row_align_for(element_size_of(opts.dtype.value()), vector_bytes) : 1;
}

std::vector<row_shape> row_shapes_of(const cartesian_decomposition& d) {
  std::vector<row_shape> rows;
  rows.reserve(static_cast<std::size_t>(d.dims()[0]));
  for (int x = 0; x < d.dims()[0]; ++x) {
    const box b = d.box_at({x, 0, 0});
    rows.push_back({d.layout_of(b).allocated(0), b.cells()});
  }
  return rows;
}

int row_align_bytes(const cartesian_decomposition& d, std::size_t element_size) {
  return d.row_align() > 1 ? d.row_align() * static_cast<int>(element_size) : 0;
}

namespace {

cartesian_decomposition split_grid(MPI_Comm comm, const options& opts,
                                   const std::vector<int>& placement) {
  constexpr std::array<bool, 3> closed{false, false, false};
  const index3 n = opts.n.value();
  if (opts.problem == problem_kind::jacobi2d) {
    // The reference grid's first/last columns and rows are our halo; rows wrap around.
    return cartesian_decomposition(comm, index3{n[0] - 2, n[1] - 2, 1}, 1,
                                   {opts.dims[0], opts.dims[1], 1}, {false, true, false},
                                   placement);
  }
  // k steps per pass recompute k planes of each neighbour's cells, so the halo is k deep.
  if (opts.mode == run_mode::streamed) {
    return cartesian_decomposition(comm, n, opts.steps_per_pass, opts.dims, closed, placement);
  }
  // Resident: the halo depth is the steps per exchange (--halo-depth). auto is 1 (deeper halos
  // measured no faster on one GPU: docs/halo.md, "Deep halos"), or 2 for two steps per launch
  // (given, or chosen by auto in run.cpp: docs/halo.md, "Two steps per launch").
  const int depth = opts.halo_depth > 0 ? opts.halo_depth : opts.steps_per_launch == 2 ? 2 : 1;
  try {
    return cartesian_decomposition(comm, n, depth, opts.dims, closed, placement);
  } catch (const invalid_argument& e) {
    if (opts.halo_depth > 0) {
      throw invalid_argument("--halo-depth " + std::to_string(depth) + ": " + e.what());
    }
    if (opts.steps_per_launch == 2)
      throw invalid_argument(std::string("--steps-per-launch 2: ") + e.what());
    throw;
  }
}

}  // namespace

cartesian_decomposition make_decomposition(MPI_Comm comm, const options& opts,
                                           const std::string& kernel,
                                           const std::vector<int>& placement) {
  cartesian_decomposition d = split_grid(comm, opts, placement);
  d.set_row_align(row_align_of(opts, kernel, row_shapes_of(d)));
  return d;
}

std::unique_ptr<solver> make_solver(const run_setup& setup) {
  if (setup.opts->problem == problem_kind::jacobi2d) return make_jacobi2d_solver(setup);
  return make_heat3d_solver(setup);
}

}  // namespace funnel::stencil
