// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel-advect: a user's own 3D advection-diffusion code on funnel. Periodic unit cube,
// first-order upwind advection plus fourth-order diffusion (2-cell halos), explicit steps. It
// checks itself: the total mass must stay what it was (the scheme is conservative with periodic
// boundaries), and with --expect-norm the final L2 norm must equal another run's (e.g. one rank's).
// Exit status: 0 correct, 1 a check failed or the run failed, 2 bad input.
//
// The regions between "porting:NAME" and "porting:end" markers are quoted by docs/library.md,
// verbatim (tests/docs/porting_blocks.py checks it).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <funnel/binding/binding.hpp>
#include <funnel/decomposition/cartesian_decomposition.hpp>
#include <funnel/decomposition/field_layout.hpp>
#include <funnel/error.hpp>
#include <funnel/halo/halo_exchange.hpp>
#include <funnel/halo/halo_options.hpp>
#include <funnel/memory/device_buffer.hpp>
#include <funnel/memory/memory_pool.hpp>
#include <funnel/runtime/backend_kind.hpp>
#include <funnel/runtime/stream.hpp>
#include <funnel/runtime/stream_operations.hpp>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "advect.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_failed = 1;
constexpr int exit_usage = 2;

struct settings {
  std::vector<std::int64_t> cells{32, 32, 32};
  std::vector<double> velocity{1.0, 0.5, -0.25};
  double diffusion = 0.01;
  int steps = 20;
  std::string backend = "auto";
  std::size_t row_align_bytes = 0;  // --row-align: 0 (none) or 16
  double tolerance = 0.0;           // unless given: the rounding bound for the run's size
  std::optional<double> expect_norm;
  bool verbose = false;
};

/// A bad request, the same on every rank: reported once, and every rank exits 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void say(int rank, const std::string& line) {
  if (rank == 0) std::fprintf(stderr, "funnel-advect: %s\n", line.c_str());
}

/// The mass drift that rounding alone can make: each cell's update rounds independently, a
/// random walk of cells x steps roundings of relative size eps; ten times that, and never
/// below 1e-12.
double rounding_tolerance(const std::vector<std::int64_t>& cells, int steps) {
  const double roundings = static_cast<double>(cells[0]) * static_cast<double>(cells[1]) *
                           static_cast<double>(cells[2]) * std::max(steps, 1);
  return std::max(1e-12, 10.0 * std::numeric_limits<double>::epsilon() * std::sqrt(roundings));
}

/// Parses the command line (the same on every rank, so every rank decides alike).
/// @return the settings, or nothing after --help
std::optional<settings> parse(int argc, char** argv) {
  settings s;
  CLI::App app{
      "funnel-advect: 3D advection-diffusion on the periodic unit cube (upwind advection, "
      "fourth-order diffusion, 2-cell halos) with funnel's binding, pool, decomposition and halo "
      "exchange. Checks that the total mass is conserved; exits 0 when correct, 1 when a check "
      "fails, 2 for bad input.\n"
      "Run: mpirun -np N funnel-run -- funnel-advect [options]",
      "funnel-advect"};
  app.add_option("--cells", s.cells, "global cells NX,NY,NZ (NZ=1: a 2D run)")
      ->delimiter(',')
      ->expected(3)
      ->capture_default_str();
  app.add_option("--steps", s.steps, "time steps")->capture_default_str();
  app.add_option("--velocity", s.velocity, "advection velocity CX,CY,CZ")
      ->delimiter(',')
      ->expected(3)
      ->capture_default_str();
  app.add_option("--diffusion", s.diffusion, "diffusion coefficient D")->capture_default_str();
  app.add_option("--backend", s.backend, "auto, cuda or host")
      ->check(CLI::IsMember({"auto", "cuda", "host"}))
      ->capture_default_str();
  std::string row_align = "none";
  app.add_option("--row-align", row_align,
                 "pad rows so each row's interior starts on 16 bytes (16), or not (none)")
      ->check(CLI::IsMember({"none", "16"}))
      ->capture_default_str();
  app.add_option("--tolerance", s.tolerance,
                 "largest relative mass drift (and norm difference) accepted (default: the "
                 "rounding bound max(1e-12, 10 eps sqrt(cells x steps)))");
  app.add_option("--expect-norm", s.expect_norm,
                 "the final L2 norm of a reference run (e.g. one rank's); fail when it differs");
  app.add_flag("--verbose", s.verbose, "print the binding of every rank and the halo paths");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::cout << app.help();
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw usage_error(std::string(e.what()) + " (see --help)");
  }
  s.row_align_bytes = row_align == "16" ? 16 : 0;
  // Checked here rather than by CLI11's range validators, whose messages print DBL_MAX.
  if (!std::all_of(s.cells.begin(), s.cells.end(), [](std::int64_t n) { return n >= 1; })) {
    throw usage_error("--cells: every count must be at least 1");
  }
  if (s.steps < 0) throw usage_error("--steps: must be at least 0");
  if (!std::all_of(s.velocity.begin(), s.velocity.end(),
                   [](double v) { return std::isfinite(v); })) {
    throw usage_error("--velocity: must be finite numbers");
  }
  if (!(s.diffusion >= 0.0 && std::isfinite(s.diffusion))) {
    throw usage_error("--diffusion: must be a finite number >= 0");
  }
  if (app.count("--tolerance") == 0) {
    s.tolerance = rounding_tolerance(s.cells, s.steps);
  } else if (!(s.tolerance > 0.0)) {
    throw usage_error("--tolerance: must be a number > 0");
  }
  return s;
}

/// Initial field at the cell centre (x, y, z) of the unit cube: 1 plus a blob off the centre.
double initial(double x, double y, double z) {
  const double r2 = (x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6) + (z - 0.4) * (z - 0.4);
  return 1.0 + std::exp(-r2 / 0.02);
}

/// Sum of u and of u^2 over the interior of a host copy of a rank's field, times the cell volume.
std::array<double, 2> moments(const funnel::field_layout& layout, const std::vector<double>& u,
                              double volume) {
  std::array<double, 2> m{0.0, 0.0};
  const funnel::box b = layout.interior_box();
  for (std::int64_t z = b.lo[2]; z < b.hi[2]; ++z) {
    for (std::int64_t y = b.lo[1]; y < b.hi[1]; ++y) {
      for (std::int64_t x = b.lo[0]; x < b.hi[0]; ++x) {
        const double v = u[static_cast<std::size_t>(layout.index(x, y, z))];
        m[0] += v * volume;
        m[1] += v * v * volume;
      }
    }
  }
  return m;
}

// [porting:decompose]
constexpr int halo_width = 2;  // the fourth-order Laplacian reaches two cells out

/// funnel's split of the periodic grid, each row's interior starting on a multiple of
/// `row_align` cells (1: rows not padded). A grid it cannot split (too few cells for the ranks
/// and the halo) is refused alike on every rank, so that is bad input and nobody hangs.
funnel::cartesian_decomposition decompose(const funnel::index3& cells, int row_align) {
  try {
    funnel::cartesian_decomposition d{
        MPI_COMM_WORLD, cells, halo_width, {0, 0, 0}, {true, true, true}};
    d.set_row_align(row_align);
    return d;
  } catch (const funnel::invalid_argument& e) {
    throw usage_error(e.what());
  }
}
// [porting:end]

int run(const settings& s, int rank) {
  funnel::backend_kind backend = funnel::backend_kind::host;
  try {
    backend = funnel::select_backend(s.backend);  // e.g. cuda asked for on a machine without
  } catch (const funnel::error& e) {
    throw usage_error(e.what());
  }
  // [porting:bind]
  // This rank's GPU (funnel-run's choice), who shares it, and whether MPS serves them; rank 0
  // warns loudly when ranks share a GPU without MPS.
  const funnel::binding bound = funnel::binding::detect(MPI_COMM_WORLD, backend);
  // [porting:end]
  if (s.verbose) bound.print_plan(std::cout);

  // [porting:run-decompose]
  const funnel::index3 cells{s.cells[0], s.cells[1], s.cells[2]};
  const int row_align = funnel::row_align_for(sizeof(double), s.row_align_bytes);
  const funnel::cartesian_decomposition decomposition = decompose(cells, row_align);
  const funnel::field_layout layout = decomposition.layout();  // interior + 2 ghosts per side
  const funnel::box mine = decomposition.local_box();          // this rank's cells, global
  // [porting:end]

  // [porting:pool]
  funnel::stream stream{backend};
  funnel::memory_pool_options pool_options;
  pool_options.name = "advect";
  pool_options.ipc_exportable = true;  // ranks on one node (and GPU) reach each other's ghosts
  // host backend only: the shared arena the fields are carved from (4 fields' worth, >= 64 MiB)
  pool_options.host_ipc_capacity = std::max<std::size_t>(
      std::size_t{64} << 20,
      4 * sizeof(double) * static_cast<std::size_t>(layout.allocated_cells()));
  funnel::memory_pool pool{backend, pool_options};
  const auto allocated = static_cast<std::size_t>(layout.allocated_cells());
  funnel::device_buffer<double> u{pool, stream, allocated};
  funnel::device_buffer<double> next{pool, stream, allocated};
  // [porting:end]

  // Initial field on the host, global coordinates from the rank's box, then uploaded.
  std::vector<double> host(allocated, 0.0);
  const funnel::box inner = layout.interior_box();
  const double h[3] = {1.0 / static_cast<double>(cells[0]), 1.0 / static_cast<double>(cells[1]),
                       1.0 / static_cast<double>(cells[2])};
  for (std::int64_t z = inner.lo[2]; z < inner.hi[2]; ++z) {
    for (std::int64_t y = inner.lo[1]; y < inner.hi[1]; ++y) {
      for (std::int64_t x = inner.lo[0]; x < inner.hi[0]; ++x) {
        const auto centre = [&](int a, std::int64_t i) {
          return (static_cast<double>(mine.lo[a] + i - inner.lo[a]) + 0.5) * h[a];
        };
        host[static_cast<std::size_t>(layout.index(x, y, z))] =
            initial(centre(0, x), centre(1, y), centre(2, z));
      }
    }
  }
  funnel::copy_async(stream, u.data(), host.data(), u.size_bytes());
  funnel::copy_async(stream, next.data(), host.data(), next.size_bytes());
  const double volume = h[0] * h[1] * h[2];
  std::array<double, 2> start = moments(layout, host, volume);
  MPI_Allreduce(MPI_IN_PLACE, start.data(), 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

  // Time step within the stability limit of forward Euler for both terms (an axis of one cell
  // has no ghosts and no derivative).
  advect::coefficients k{};
  double rate = 0.0;
  for (int a = 0; a < 3; ++a) {
    if (layout.halo_along(a) == 0) continue;
    rate += std::abs(s.velocity[a]) / h[a] + 8.0 / 3.0 * s.diffusion / (h[a] * h[a]);
  }
  const double dt = rate > 0.0 ? 0.9 / rate : 0.0;
  // Neighbours along each axis, in elements of the array: the layout's pitches (rows may be
  // padded: field_layout::row_pitch()).
  const std::int64_t strides[3] = {1, layout.row_pitch(), layout.plane_pitch()};
  for (int a = 0; a < 3; ++a) {
    if (layout.halo_along(a) > 0) {
      k.courant[a] = s.velocity[a] * dt / h[a];
      k.diffusion[a] = s.diffusion * dt / (h[a] * h[a]);
      k.stride[a] = strides[a];
    }
  }

  // [porting:halo]
  funnel::halo_options halo_options;
  halo_options.field_cycle = {u.data(), next.data()};  // the two buffers swap every step
  funnel::halo_exchange halo{decomposition, backend, pool, sizeof(double), halo_options};
  // [porting:end]
  if (s.verbose) {
    for (const auto& path : halo.paths()) {
      std::printf("funnel-advect: rank %d: %s\n", rank, funnel::to_string(path).c_str());
    }
  }

  stream.synchronize();  // the upload: timed apart from the steps
  MPI_Barrier(MPI_COMM_WORLD);
  const double loop_start = MPI_Wtime();
  // [porting:loop]
  for (int step = 0; step < s.steps; ++step) {
    double* in = step % 2 == 0 ? u.data() : next.data();
    double* out = step % 2 == 0 ? next.data() : u.data();
    halo.exchange(stream, in);                 // fills in's ghosts: enqueued, ordered on the stream
    advect::step(stream, layout, in, out, k);  // the user's own kernel, on funnel's stream
  }
  // [porting:end]
  halo.wait(stream);  // never a bare synchronize: a stalled neighbour must not hang us
  double loop_seconds = MPI_Wtime() - loop_start;  // the slowest rank's is the job's
  MPI_Allreduce(MPI_IN_PLACE, &loop_seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double* last = s.steps % 2 == 0 ? u.data() : next.data();
  funnel::copy_async(stream, host.data(), last, u.size_bytes());
  // [porting:close]
  halo.wait(stream);  // a host wait that throws, naming the rank, if a neighbour stalls
  halo.close();       // collective: no rank maps or writes our fields any more
  // [porting:end]

  std::array<double, 2> end = moments(layout, host, volume);
  MPI_Allreduce(MPI_IN_PLACE, end.data(), 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double drift = std::abs(end[0] - start[0]) / std::abs(start[0]);
  const double norm = std::sqrt(end[1]);
  const auto& dims = decomposition.dims();
  char summary[512];
  std::snprintf(summary, sizeof summary,
                "%d rank%s (%dx%dx%d), %lldx%lldx%lld cells, halo %d%s, %d steps in %.4f s on %s: "
                "mass %.12e, relative drift %.1e (tolerance %.1e), L2 norm %.15e",
                decomposition.size(), decomposition.size() == 1 ? "" : "s", dims[0], dims[1],
                dims[2], static_cast<long long>(cells[0]), static_cast<long long>(cells[1]),
                static_cast<long long>(cells[2]), halo_width,
                layout.padded() ? ", rows padded (interior on 16 B)" : "", s.steps, loop_seconds,
                funnel::to_string(backend).c_str(), end[0], drift, s.tolerance, norm);
  if (rank == 0) std::printf("funnel-advect: %s\n", summary);
  if (!(drift <= s.tolerance)) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "FAILED: the total mass drifted by %.3e of its initial value (tolerance %.1e): "
                  "wrong ghosts or a non-conservative stencil",
                  drift, s.tolerance);
    say(rank, line);
    return exit_failed;
  }
  if (s.expect_norm &&
      !(std::abs(norm - *s.expect_norm) <= s.tolerance * std::abs(*s.expect_norm))) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "FAILED: L2 norm %.15e differs from the expected %.15e by more than %.1e of it",
                  norm, *s.expect_norm, s.tolerance);
    say(rank, line);
    return exit_failed;
  }
  return exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  // [porting:init]
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // [porting:end]
  int status = exit_failed;
  try {
    const std::optional<settings> s = parse(argc, argv);
    status = s ? run(*s, rank) : exit_ok;
  } catch (const usage_error& e) {
    say(rank, e.what());
    status = exit_usage;
  } catch (const std::exception& e) {
    // Only this rank may have failed: end the whole job so that no rank hangs.
    std::fprintf(stderr, "funnel-advect: rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_failed);
  }
  MPI_Finalize();
  return status;
}
