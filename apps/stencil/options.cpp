// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>
#include <utility>

#include "cli_support.hpp"
#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/io/regular_file.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/kernels/implementation.hpp"
#include "key_value_config.hpp"

namespace funnel::stencil {
namespace {

/// The largest --config file read (a config is a few dozen short lines).
constexpr std::size_t config_max_bytes = std::size_t{1} << 20;
/// The deepest halo --halo-depth takes (each step recomputes up to K - 1 ghost layers).
constexpr int max_halo_depth = 16;

/// The text of the --config file. Every refusal is a usage error (the user named the wrong
/// file); a system error is told by its reason alone, without the library's source location.
std::string read_config_file(const std::string& path) {
  try {
    return io::read_regular_file(path, config_max_bytes, "--config");
  } catch (const system_error& e) {
    throw invalid_argument("--config " +
                           app::not_valid(path, std::string("a readable regular file (") +
                                                    std::strerror(e.errnum()) + ")"));
  } catch (const error& e) {
    throw invalid_argument(e.what());
  }
}

/// multi-gpu-programming-models' Jacobi spellings -> the long names they stand for.
const std::vector<std::pair<std::string, std::string>>& jacobi_spellings() {
  static const std::vector<std::pair<std::string, std::string>> spellings = {
      {"-nx", "--nx"}, {"-ny", "--ny"}, {"-niter", "--niter"}, {"-nccheck", "--nccheck"}};
  return spellings;
}

/// jacobi2d's least -nx/-ny: a field axis of one interior cell carries no halo (field_layout),
/// so each way takes two interior cells besides its two boundary cells.
constexpr std::int64_t jacobi_least_extent = 4;

/// "A,B,C", as --n and --dims are written (messages, config files).
template <class Triple>
std::string triple_text(const Triple& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

[[noreturn]] void bad_value(const std::string& name, const std::string& value,
                            const std::string& allowed) {
  throw invalid_argument(name + " " + app::not_valid(value, allowed));
}

/// The kernel implementations compiled into this build (the only ones --help offers).
std::vector<std::string> kernel_choices() {
  std::vector<std::string> choices;
  for (const auto impl : {kernels::implementation::cuda, kernels::implementation::host,
                          kernels::implementation::kokkos}) {
    if (kernels::implementation_compiled(impl)) choices.push_back(kernels::to_string(impl));
  }
  return choices;
}

/// "A,B[,C]" with each value >= min; a missing third value is 1 (a 2D grid or split).
index3 parse_triple(const std::string& name, const std::string& text, const std::string& allowed) {
  const auto parts = app::split_list(text);
  if (parts.size() < 2 || parts.size() > 3) bad_value(name, text, allowed);
  index3 value{1, 1, 1};
  for (std::size_t a = 0; a < parts.size(); ++a) value[a] = app::to_integer(parts[a]);
  return value;
}

/// A validator for "A,B[,C]" of integers in [min, max].
CLI::Validator triple_of(std::int64_t min, std::int64_t max, const std::string& allowed) {
  const CLI::Validator item = app::integer_in(min, max);
  return CLI::Validator(
      [item, allowed](std::string& text) -> std::string {
        const auto parts = app::split_list(text);
        bool ok = parts.size() == 2 || parts.size() == 3;
        for (const auto& part : parts) ok = ok && item(part).empty();
        return ok ? std::string{} : app::not_valid(text, allowed);
      },
      "");
}

/// Storage CLI11 fills; turned into `options` after parsing.
struct raw_options {
  std::string problem = "heat3d";
  std::string n;
  std::optional<std::int64_t> steps;
  std::string dtype;
  std::string backend = "auto";
  std::string kernel;
  std::string mode = "resident";
  std::string halo = "auto";
  std::string halo_overlap = "auto";
  std::string graphs = "auto";
  std::string halo_depth = "auto";
  std::string steps_per_launch = "auto";
  std::string row_align = "auto";
  std::string dims;
  std::string placement = "rank";
  std::optional<std::int64_t> check_every;
  std::optional<std::int64_t> nx, ny;
  std::string summary;
  std::int64_t output_every = 0;
  std::string output_dir = "output";
  std::string output_overlap = "auto";
  std::int64_t checkpoint_every = 0;
  std::string checkpoint_dir = "checkpoints";
  int keep = 2;
  bool checkpoint_start_over = false;
  std::optional<std::string> restart;
  int streams = 0;
  int chunks = 0;
  int steps_per_pass = 1;
  std::string trace;
  std::string pool_limit;
  std::string field_dump;
  std::string config;
  bool quiet = false;
};

constexpr const char* exit_status_text =
    "exit status (each run prints one line that says why it did not end with 0):\n"
    "  0   the run completed its steps (jacobi2d: or converged)\n"
    "  1   runtime error: I/O, MPI, CUDA, a damaged checkpoint, a full disk, ...\n"
    "  2   usage error: a bad option, value, combination or --config file\n"
    "  75  stopped by SIGTERM or SIGUSR1 (funnel-run forwards them): the step is finished and a\n"
    "      checkpoint written (none when the signal came before the first step), requeue\n";

/// Every option of funnel-stencil, bound to `raw`. One place for the command line, the config
/// file and the help.
void define_options(CLI::App& app, raw_options& raw) {
  app::apply_common_style(app);
  app.footer(
      std::string("jacobi2d also takes multi-gpu-programming-models' spelling: -nx NX -ny NY "
                  "-niter N\n-nccheck K (they select jacobi2d unless --problem is given).\n"
                  "Kokkos options (--kokkos-...) go to Kokkos when --kernel kokkos runs.\n\n") +
      exit_status_text);

  const std::string problem = "problem";
  app.add_option("--problem", raw.problem, "problem to solve (default heat3d)")
      ->type_name("heat3d|jacobi2d")
      ->check(app::one_of({"heat3d", "jacobi2d"}))
      ->group(problem);
  app.add_option("--n", raw.n,
                 "heat3d: interior cells of the unit cube (default 128,128,128 on the host, "
                 "256,256,256 on a GPU; axes of one cell last); jacobi2d: the grid including its "
                 "boundary, as -nx/-ny, each >= 4 (default 1024,1024 host, 16384,16384 GPU)")
      ->type_name("NX,NY[,NZ]")
      ->check(triple_of(1, std::numeric_limits<std::int64_t>::max(),
                        "NX,NY[,NZ] with positive integers"))
      ->group(problem);
  app.add_option("--steps,--niter", raw.steps,
                 "the step the run ends at (heat3d 100, jacobi2d 1000); with --restart the same "
                 "value finishes the interrupted run")
      ->type_name("N")
      ->check(app::integer_in(0))
      ->group(problem);
  app.add_option("--dtype", raw.dtype, "heat3d element type (default double); jacobi2d is float")
      ->type_name("float|double")
      ->check(app::one_of({"float", "double"}))
      ->group(problem);
  app.add_option("--check-every,--nccheck", raw.check_every,
                 "heat3d: report the error every K steps (default 0: at the end only); "
                 "jacobi2d: compute the norm every K iterations (default 1)")
      ->type_name("K")
      ->check(app::integer_in(0))
      ->group(problem);
  // -nx/-ny: the footer names them (no description: not listed with the others).
  app.add_option("--nx", raw.nx)->check(app::integer_in(jacobi_least_extent))->group(problem);
  app.add_option("--ny", raw.ny)->check(app::integer_in(jacobi_least_extent))->group(problem);

  const std::string execution = "execution";
  app.add_option("--backend", raw.backend,
                 "where the field lives (default auto: cuda when a GPU is visible, else host)")
      ->type_name(app::join_choices(app::backend_choices()))
      ->check(app::one_of(app::backend_choices()))
      ->group(execution);
  app.add_option("--kernel", raw.kernel, "kernel implementation (default: the backend's own)")
      ->type_name(app::join_choices(kernel_choices()))
      ->check(app::one_of(kernel_choices()))
      ->group(execution);
  app.add_option("--mode", raw.mode,
                 "field in device memory (default resident), or in host memory streamed through "
                 "the GPU in chunks each pass (heat3d only)")
      ->type_name("resident|streamed")
      ->check(app::one_of({"resident", "streamed"}))
      ->group(execution);
  app.add_option("--halo", raw.halo,
                 "halo path (default auto: IPC to every rank of this node whose GPU this rank can "
                 "reach, on its GPU or through peer access, MPI otherwise; ipc: IPC or an error; "
                 "mpi: MPI everywhere, as between nodes)")
      ->type_name("auto|ipc|mpi")
      ->check(app::one_of({"auto", "ipc", "mpi"}))
      ->group(execution);
  app.add_option("--halo-overlap", raw.halo_overlap,
                 "resident mode: on: the inner cells update while the faces travel; off: the "
                 "exchange, then one update of every cell (fewer kernels per step); auto "
                 "(default): on, but off where ranks share a GPU time-sliced (without MPS), and "
                 "for steps run as CUDA graphs off where more than 4 ranks share a GPU or steps "
                 "are two per launch (docs/halo.md)")
      ->type_name("auto|on|off")
      ->check(app::one_of({"auto", "on", "off"}))
      ->group(execution);
  app.add_option("--graphs", raw.graphs,
                 "resident mode: auto (default): heat3d with the cuda kernel runs blocks of 8 "
                 "steps as one CUDA graph when every halo neighbour is on this GPU under MPS "
                 "(or there is none), in the order --halo-overlap gives; off: every step is "
                 "enqueued alone")
      ->type_name("auto|off")
      ->check(app::one_of({"auto", "off"}))
      ->group(execution);
  app.add_option("--halo-depth", raw.halo_depth,
                 "resident heat3d: ghost cells per face, and steps per halo exchange: the steps "
                 "in between recompute the ghosts they need (bitwise the same field, K times "
                 "fewer exchanges); auto (default): 1 (docs/halo.md, \"Deep halos\")")
      ->type_name("auto|K")
      ->check(app::auto_or_integer_in(1, max_halo_depth))
      ->group(execution);
  app.add_option("--steps-per-launch", raw.steps_per_launch,
                 "resident heat3d on a 3D grid: 2: a halo 2 cells deep, and the two steps after "
                 "each exchange in one kernel launch (kernels cuda and host; the same field "
                 "bitwise); auto (default): 2 with --kernel cuda where each rank's field is at "
                 "least the GPU's L2 cache (a pass through device memory saved) or 4 or more "
                 "ranks share a GPU under MPS with boxes of 2^19 cells and 96 along x or more "
                 "(half the launches), else 1 (docs/halo.md, \"Two steps per launch\")")
      ->type_name("auto|1|2")
      ->check(app::one_of({"auto", "1", "2"}))
      ->group(execution);
  app.add_option("--row-align", raw.row_align,
                 "resident mode: none: rows of n + 2 cells; 16: each row of the field padded in "
                 "memory so that its interior starts on 16 bytes, where the cuda kernels load "
                 "rows as 16-byte vectors (for heat3d faster only for one step per launch on "
                 "large rows: docs/performance.md); auto (default): 16 for jacobi2d with the cuda "
                 "kernel where some rank's row of n + 2 cells is not a multiple of 16 bytes (its "
                 "kernel would load it 1 or 2 floats at a time) and that rank's box holds at "
                 "least 10^7 cells (measured faster padded there, slower on smaller boxes: "
                 "docs/halo.md), else none. Files hold the interior only: a checkpoint restarts "
                 "with any")
      ->type_name("auto|none|16")
      ->check(app::one_of({"auto", "none", "16"}))
      ->group(execution);
  app.add_option("--dims", raw.dims,
                 "ranks along each axis (default: funnel chooses the split with the fewest halo "
                 "cells; 0 on an axis: funnel chooses it)")
      ->type_name("PX,PY[,PZ]")
      ->check(triple_of(0, std::numeric_limits<int>::max(),
                        "PX,PY[,PZ] with integers >= 0 (0: funnel chooses)"))
      ->group(execution);
  app.add_option("--placement", raw.placement,
                 "which box each rank takes: rank (default): rank r takes the r-th box, z "
                 "fastest, as MPI_Cart_create places them; device: the ranks of one GPU (and of "
                 "one node) take consecutive boxes counting x fastest, slabs across z (y in 2D), "
                 "whatever GPU the launcher gave each rank, so fewer faces cross between GPUs "
                 "(faster for heat3d with 16 ranks a GPU on 2 GPUs, slower for jacobi2d: "
                 "docs/halo.md, \"Boxes by GPU\")")
      ->type_name("rank|device")
      ->check(app::one_of({"rank", "device"}))
      ->group(execution);
  app.add_option("--streams", raw.streams, "streamed mode: chunks in flight (default 3)")
      ->type_name("S")
      ->check(app::integer_in(1, std::numeric_limits<int>::max()))
      ->group(execution);
  app.add_option("--chunks", raw.chunks,
                 "streamed mode: chunks per pass (default: chosen from a probe)")
      ->type_name("C")
      ->check(app::integer_in(1, std::numeric_limits<int>::max()))
      ->group(execution);
  app.add_option("--steps-per-pass", raw.steps_per_pass,
                 "streamed mode: steps per pass (default 1)")
      ->type_name("k")
      ->check(app::integer_in(1, std::numeric_limits<int>::max()))
      ->group(execution);
  app.add_option("--trace", raw.trace,
                 "streamed mode: write a Chrome trace (open in Perfetto; default: none)")
      ->type_name("FILE")
      ->check(app::non_empty_path())
      ->group(execution);
  app.add_option("--pool-limit", raw.pool_limit,
                 "byte limit of the device pool (K/M/G suffixes; default: none); streamed mode "
                 "picks enough chunks to stay under it")
      ->type_name("BYTES")
      ->check(app::byte_count())
      ->group(execution);

  const std::string output = "output and restart";
  app.add_option("--summary", raw.summary, "write the JSON summary to FILE (default: none)")
      ->type_name("FILE")
      ->check(app::non_empty_path())
      ->group(output);
  app.add_option("--output-every", raw.output_every,
                 "HDF5 snapshot (+ XDMF for ParaView) every N steps (default 0: none)")
      ->type_name("N")
      ->check(app::integer_in(0))
      ->group(output);
  app.add_option("--output-dir", raw.output_dir, "snapshot directory (default output)")
      ->type_name("D")
      ->check(app::non_empty_path())
      ->group(output);
  app.add_option("--output-overlap", raw.output_overlap,
                 "write snapshots on a thread while the next steps run (one file per rank + a "
                 "main file); off: the loop waits for each (one shared file with parallel "
                 "HDF5); auto (default): on when every rank may use 2 or more CPUs")
      ->type_name("auto|on|off")
      ->check(app::one_of({"auto", "on", "off"}))
      ->group(output);
  app.add_option("--checkpoint-every", raw.checkpoint_every,
                 "checkpoint every N steps (default 0: only when signalled)")
      ->type_name("N")
      ->check(app::integer_in(0))
      ->group(output);
  app.add_option("--checkpoint-dir", raw.checkpoint_dir,
                 "checkpoint directory (default checkpoints)")
      ->type_name("D")
      ->check(app::non_empty_path())
      ->group(output);
  app.add_option("--keep", raw.keep, "checkpoints kept (default 2)")
      ->type_name("K")
      ->check(app::integer_in(1, std::numeric_limits<int>::max()))
      ->group(output);
  app.add_flag("--checkpoint-start-over", raw.checkpoint_start_over,
               "remove another run's checkpoints from --checkpoint-dir (without it such a "
               "directory is refused; --restart continues a series)")
      ->group(output);
  app.add_option("--restart", raw.restart,
                 "continue from a checkpoint (default: --checkpoint-dir's latest)")
      ->type_name("[DIR|FILE]")
      ->expected(0, 1)
      ->group(output);
  app.add_option("--field-dump", raw.field_dump,
                 "testing aid: rank 0 writes the final global interior as raw binary (x "
                 "fastest, native endianness); small grids only")
      ->type_name("FILE")
      ->check(app::non_empty_path())
      ->group(output);

  const std::string other = "other";
  app.add_option("--config", raw.config,
                 "read options from FILE: 'key = value' lines, keys are the long option names "
                 "('#' comments); the command line wins")
      ->type_name("FILE")
      ->group(other);
  app.add_flag("--quiet", raw.quiet, "no progress lines")->group(other);
  app.set_help_flag("-h,--help", "this text")->group(other);
  app.set_version_flag("--version", "funnel-stencil " FUNNEL_VERSION, "the version")->group(other);
}

/// Arguments with the Jacobi spellings made long options (CLI11 reads "-nx" as "-n -x").
std::vector<std::string> with_long_spellings(const std::vector<std::string>& args,
                                             bool& jacobi_spelling) {
  std::vector<std::string> out;
  for (const auto& arg : args) {
    const auto& spellings = jacobi_spellings();
    const auto it = std::find_if(spellings.begin(), spellings.end(),
                                 [&](const auto& s) { return s.first == arg; });
    jacobi_spelling = jacobi_spelling || it != spellings.end();
    out.push_back(it != spellings.end() ? it->second : arg);
  }
  return out;
}

/// CLI11's message about an option given in its Jacobi spelling names it as the user wrote it.
std::string as_written(std::string message) {
  for (const auto& [shown, name] : jacobi_spellings()) {
    if (message.rfind(name + " ", 0) == 0) return shown + message.substr(name.size());
  }
  return message;
}

options to_options(const CLI::App& app, const raw_options& raw, bool jacobi_spelling) {
  options o;
  const auto given = [&](const char* name) { return app.count(std::string("--") + name) > 0; };
  o.problem = raw.problem == "jacobi2d" ? problem_kind::jacobi2d : problem_kind::heat3d;
  const bool jacobi_size = raw.nx || raw.ny;
  if ((jacobi_spelling || jacobi_size) && !given("problem")) o.problem = problem_kind::jacobi2d;
  if (!raw.n.empty()) o.n = parse_triple("--n", raw.n, "NX,NY[,NZ] with positive integers");
  if (jacobi_size) {
    if (o.problem != problem_kind::jacobi2d) {
      throw invalid_argument("-nx/-ny are the jacobi2d spelling; --problem '" +
                             to_string(o.problem) + "' takes --n NX,NY,NZ");
    }
    if (o.n)
      throw invalid_argument("--n and -nx/-ny both given: use one spelling of the grid size");
    // As in the reference code, a missing -nx or -ny takes the other's value.
    o.n = index3{raw.nx.value_or(*raw.ny), raw.ny.value_or(*raw.nx), 1};
  }
  o.steps = raw.steps;
  if (!raw.dtype.empty()) {
    o.dtype = raw.dtype == "float" ? scalar_type::float32 : scalar_type::float64;
  }
  o.backend = raw.backend;
  if (!raw.kernel.empty()) o.kernel = raw.kernel;
  o.mode = raw.mode == "streamed" ? run_mode::streamed : run_mode::resident;
  o.halo = raw.halo;
  o.halo_overlap = raw.halo_overlap;
  o.graphs = raw.graphs == "auto";
  o.halo_depth = raw.halo_depth == "auto" ? 0 : static_cast<int>(app::to_integer(raw.halo_depth));
  o.steps_per_launch =
      raw.steps_per_launch == "auto" ? 0 : static_cast<int>(app::to_integer(raw.steps_per_launch));
  o.row_align = raw.row_align;
  if (o.mode == run_mode::streamed && o.row_align == "16") {
    throw invalid_argument(
        "--row-align 16: applies to --mode resident only (the streamed mode moves whole planes "
        "of unpadded rows)");
  }
  if (o.mode == run_mode::streamed && !o.graphs) {
    throw invalid_argument("--graphs off: applies to --mode resident only");
  }
  if (o.mode == run_mode::streamed && o.halo_overlap == "off") {
    throw invalid_argument(
        "--halo-overlap off: applies to --mode resident only (the streamed mode overlaps its "
        "chunks instead)");
  }
  if (!raw.dims.empty()) {
    const index3 d = parse_triple("--dims", raw.dims, "PX,PY[,PZ]");
    for (int a = 0; a < 3; ++a) o.dims[a] = static_cast<int>(d[a]);
  }
  o.placement = raw.placement;
  o.check_every = raw.check_every;
  o.summary = raw.summary;
  o.output_every = raw.output_every;
  o.output_dir = raw.output_dir;
  o.output_overlap = raw.output_overlap;
  o.checkpoint_every = raw.checkpoint_every;
  o.checkpoint_dir = raw.checkpoint_dir;
  o.keep = raw.keep;
  o.checkpoint_start_over = raw.checkpoint_start_over;
  o.restart = raw.restart;
  o.streams = raw.streams;
  o.chunks = raw.chunks;
  o.steps_per_pass = raw.steps_per_pass;
  o.trace = raw.trace;
  if (!raw.pool_limit.empty()) o.pool_limit = app::to_bytes(raw.pool_limit);
  o.field_dump = raw.field_dump;
  o.quiet = raw.quiet;
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() > 0 && !option->get_lnames().empty()) {
      o.given.push_back(option->get_lnames().front());
    }
  }
  return o;
}

/// Bytes of the two fields of a grid, or nothing when that overflows 63 bits.
std::optional<std::int64_t> fields_bytes(const index3& n, std::int64_t element_size) {
  std::int64_t bytes = 2 * element_size;
  for (const auto cells : n) {
    if (__builtin_mul_overflow(bytes, cells, &bytes)) return std::nullopt;
  }
  return bytes;
}

}  // namespace

std::string to_string(problem_kind problem) {
  return problem == problem_kind::heat3d ? "heat3d" : "jacobi2d";
}

std::size_t element_size_of(scalar_type type) noexcept {
  return type == scalar_type::float32 ? 4 : 8;
}

std::string to_string(scalar_type type) {
  return type == scalar_type::float32 ? "float" : "double";
}

std::string to_string(run_mode mode) {
  return mode == run_mode::resident ? "resident" : "streamed";
}

options parse_options(const std::vector<std::string>& args) {
  CLI::App app("funnel-stencil", "funnel-stencil");
  raw_options raw;
  define_options(app, raw);
  std::vector<std::string> ours;
  std::vector<std::string> kokkos_args;
  for (const auto& arg : args) (arg.rfind("--kokkos-", 0) == 0 ? kokkos_args : ours).push_back(arg);
  bool jacobi_spelling = false;
  std::vector<std::string> argv = with_long_spellings(ours, jacobi_spelling);
  std::reverse(argv.begin(), argv.end());  // CLI11 takes the arguments last to first
  try {
    app.parse(argv);
  } catch (const CLI::CallForHelp&) {
    options o;
    o.help = true;
    return o;
  } catch (const CLI::CallForVersion&) {
    options o;
    o.version = true;
    return o;
  } catch (const CLI::ParseError& e) {
    throw invalid_argument(as_written(app::describe(e)));
  }
  app::reject_extras(app, "funnel-stencil --help");
  if (app.count("--config") > 0 && raw.config.empty()) {
    throw invalid_argument("--config '' is not valid: expected the path of a 'key = value' file");
  }
  if (!raw.config.empty()) {
    const std::string text = read_config_file(raw.config);
    // Every line of the file is checked on an app of its own first (CLI11 skips the lines of
    // options the command line gives), then merged: the command line wins.
    CLI::App file_only("funnel-stencil", "funnel-stencil");
    raw_options scratch;
    define_options(file_only, scratch);
    for (CLI::App* target : {&file_only, &app}) {
      auto format = std::make_shared<app::key_value_config>(
          *target, raw.config, std::vector<std::string>{"config", "help", "version"});
      target->config_formatter(format);
      std::istringstream in(text);
      try {
        target->parse_from_stream(in);
      } catch (const CLI::ParseError& e) {
        throw invalid_argument(format->locate(app::describe(e)));
      }
    }
  }
  options o = to_options(app, raw, jacobi_spelling);
  o.kokkos_args = std::move(kokkos_args);
  return o;
}

int auto_steps_per_launch(const options& o, const std::string& kernel,
                          const field_layout& rank_layout, std::size_t l2_cache_bytes,
                          int sharing_ranks) {
  if (o.mode != run_mode::resident || o.problem != problem_kind::heat3d || kernel != "cuda")
    return 1;
  if (o.halo_depth > 0 && o.halo_depth != 2) return 1;
  for (int axis = 0; axis < 3; ++axis) {
    if (rank_layout.interior[axis] < 2) return 1;  // not 3D, or a box a 2-deep halo overruns
  }
  if (l2_cache_bytes == 0) return 1;  // no GPU
  const std::int64_t cells =
      rank_layout.interior[0] * rank_layout.interior[1] * rank_layout.interior[2];
  const auto bytes = static_cast<std::size_t>(cells) * element_size_of(*o.dtype);
  const bool launch_bound = sharing_ranks >= pair_sharing_ranks &&
                            rank_layout.interior[0] >= pair_row_cells && cells >= pair_box_cells;
  return bytes >= l2_cache_bytes || launch_bound ? 2 : 1;
}

bool graph_overlap(const std::string& choice, bool time_sliced, int ranks_per_gpu,
                   int steps_per_launch) {
  if (choice != "auto") return choice == "on";
  return !time_sliced && ranks_per_gpu <= graph_overlap_most_ranks && steps_per_launch == 1;
}

void resolve_defaults(options& o, bool on_gpu) {
  if (o.problem == problem_kind::jacobi2d) {
    if (o.dtype && *o.dtype != scalar_type::float32) {
      bad_value("--dtype", to_string(*o.dtype), "float for jacobi2d (the reference is float only)");
    }
    o.dtype = scalar_type::float32;
    if (!o.n) o.n = on_gpu ? index3{16384, 16384, 1} : index3{1024, 1024, 1};
    const index3 n = *o.n;
    if (n[0] < jacobi_least_extent || n[1] < jacobi_least_extent || n[2] != 1) {
      bad_value("--n",
                n[2] == 1 ? std::to_string(n[0]) + "," + std::to_string(n[1]) : triple_text(n),
                "NX,NY with NX, NY >= " + std::to_string(jacobi_least_extent) +
                    " for jacobi2d (the grid including its boundary: two interior cells or more "
                    "each way)");
    }
    if (!o.steps) o.steps = 1000;
    if (!o.check_every) o.check_every = 1;
    if (*o.check_every < 1) {
      bad_value("--check-every", std::to_string(*o.check_every),
                "an integer >= 1 for jacobi2d (the norm cadence, -nccheck)");
    }
  } else {
    if (!o.dtype) o.dtype = scalar_type::float64;
    if (!o.n) o.n = on_gpu ? index3{256, 256, 256} : index3{128, 128, 128};
    if (!o.steps) o.steps = 100;
    if (!o.check_every) o.check_every = 0;
    if (!kernels::heat3d_grid_supported(*o.n)) {
      bad_value("--n", triple_text(*o.n),
                "more than one cell, with the axes of one cell last (64,64,1 for a 2D grid, not "
                "1,64,64)");
    }
  }
  const index3 n = *o.n;
  const auto element_size = static_cast<std::int64_t>(element_size_of(*o.dtype));
  if (!fields_bytes(n, element_size)) {
    bad_value("--n", triple_text(n),
              "a grid whose two fields of " + std::to_string(element_size) +
                  "-byte cells fit in 2^63 bytes");
  }
  if (o.mode == run_mode::resident) {
    for (const char* key : {"--streams", "--chunks", "--steps-per-pass", "--trace"}) {
      if (std::find(o.given.begin(), o.given.end(), key + 2) != o.given.end()) {
        throw invalid_argument(std::string(key) +
                               " is not valid with --mode resident: it needs --mode streamed");
      }
    }
  }
  if (o.halo_depth > 0 && (o.mode != run_mode::resident || o.problem != problem_kind::heat3d)) {
    throw invalid_argument("--halo-depth " + std::to_string(o.halo_depth) +
                           " is not valid here: it applies to heat3d with --mode resident (the "
                           "streamed mode's depth is --steps-per-pass)");
  }
  if (o.mode == run_mode::streamed && o.problem != problem_kind::heat3d) {
    bad_value("--mode", "streamed", "resident for jacobi2d (streamed mode runs heat3d)");
  }
  if (o.steps_per_launch > 0 &&
      (o.mode != run_mode::resident || o.problem != problem_kind::heat3d)) {
    throw invalid_argument("--steps-per-launch " + std::to_string(o.steps_per_launch) +
                           " is not valid here: it applies to heat3d with --mode resident");
  }
  if (o.steps_per_launch == 2) {
    if (o.kernel == "kokkos") {
      throw invalid_argument(
          "--steps-per-launch 2 is not valid with --kernel kokkos: it needs "
          "--kernel cuda or host");
    }
    if (o.halo_depth > 0 && o.halo_depth != 2) {
      throw invalid_argument("--steps-per-launch 2 needs --halo-depth 2 or auto, not " +
                             std::to_string(o.halo_depth));
    }
    if (n[0] < 2 || n[1] < 2 || n[2] < 2) {
      throw invalid_argument(
          "--steps-per-launch 2 needs a 3D grid (every --n extent >= 2), not --n " +
          triple_text(n));
    }
  }
  if (!o.kokkos_args.empty() && o.kernel != "kokkos") {
    throw invalid_argument("'" + app::echo(o.kokkos_args.front()) +
                           "' is not valid without --kernel kokkos (it is an option of Kokkos)");
  }
}

std::string to_config_text(const options& o) {
  std::ostringstream out;
  out << "problem = " << to_string(o.problem) << "\n";
  if (o.n) out << "n = " << triple_text(*o.n) << "\n";
  if (o.steps) out << "steps = " << *o.steps << "\n";
  if (o.dtype) out << "dtype = " << to_string(*o.dtype) << "\n";
  out << "backend = " << o.backend << "\n";
  if (o.kernel) out << "kernel = " << *o.kernel << "\n";
  out << "mode = " << to_string(o.mode) << "\n";
  out << "halo = " << o.halo << "\n";
  out << "halo-overlap = " << o.halo_overlap << "\n";
  out << "graphs = " << (o.graphs ? "auto" : "off") << "\n";
  if (o.mode == run_mode::resident && o.problem == problem_kind::heat3d) {
    out << "halo-depth = " << (o.halo_depth > 0 ? std::to_string(o.halo_depth) : "auto") << "\n";
    out << "steps-per-launch = "
        << (o.steps_per_launch > 0 ? std::to_string(o.steps_per_launch) : "auto") << "\n";
  }
  if (o.mode == run_mode::resident) out << "row-align = " << o.row_align << "\n";
  out << "dims = " << triple_text(o.dims) << "\n";
  out << "placement = " << o.placement << "\n";
  if (o.check_every) out << "check-every = " << *o.check_every << "\n";
  out << "output-every = " << o.output_every << "\n";
  out << "output-dir = " << o.output_dir << "\n";
  out << "output-overlap = " << o.output_overlap << "\n";
  out << "checkpoint-every = " << o.checkpoint_every << "\n";
  out << "checkpoint-dir = " << o.checkpoint_dir << "\n";
  out << "keep = " << o.keep << "\n";
  out << "checkpoint-start-over = " << (o.checkpoint_start_over ? "true" : "false") << "\n";
  if (o.mode == run_mode::streamed) {
    out << "streams = " << o.streams << "\n";
    out << "chunks = " << o.chunks << "\n";
    out << "steps-per-pass = " << o.steps_per_pass << "\n";
  }
  return out.str();
}

std::string usage() {
  CLI::App app(
      "The sample simulation of funnel: a 3D heat equation (verified against its exact "
      "solution) or NVIDIA multi-gpu-programming-models' 2D Jacobi relaxation, split across MPI "
      "ranks that share GPUs. Start it directly or through funnel-run (mpirun -np N funnel-run "
      "-- funnel-stencil ...).",
      "funnel-stencil");
  raw_options raw;
  define_options(app, raw);
  return app.help();
}

}  // namespace funnel::stencil
