// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file options.hpp
 * @brief funnel-stencil's command line and --config file: what the user asked for.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"

namespace funnel::stencil {

/// @brief The two problems the app solves.
enum class problem_kind { heat3d, jacobi2d };

/// @brief Element type of the field.
enum class scalar_type { float32, float64 };

/// @brief Where the field lives between steps.
enum class run_mode { resident, streamed };

/// @brief "heat3d" or "jacobi2d".
[[nodiscard]] std::string to_string(problem_kind problem);
/// @brief "float" or "double".
[[nodiscard]] std::string to_string(scalar_type type);
/// @brief Bytes of one cell of `type` (4 or 8).
[[nodiscard]] std::size_t element_size_of(scalar_type type) noexcept;
/// @brief "resident" or "streamed".
[[nodiscard]] std::string to_string(run_mode mode);

/**
 * @brief Everything the command line and the --config file asked for.
 *
 * Unset optionals mean "pick the default once the backend is known" (see resolve_defaults):
 * the defaults differ between a GPU and 2 CPU cores.
 */
struct options {
  problem_kind problem = problem_kind::heat3d;  ///< --problem
  std::optional<index3> n;                      ///< --n (heat3d: interior; jacobi2d: -nx,-ny)
  std::optional<std::int64_t> steps;            ///< --steps / -niter: the step the run ends at
  std::optional<scalar_type> dtype;             ///< --dtype
  std::string backend = "auto";                 ///< --backend auto|cuda|host
  std::optional<std::string> kernel;            ///< --kernel cuda|host|kokkos
  run_mode mode = run_mode::resident;           ///< --mode
  std::string halo = "auto";                    ///< --halo auto|ipc|mpi
  std::string halo_overlap = "auto";            ///< --halo-overlap auto|on|off (resident mode)
  bool graphs = true;                           ///< --graphs auto|off (resident mode)
  int halo_depth = 0;                           ///< --halo-depth (0 = auto; resident heat3d)
  int steps_per_launch = 0;                     ///< --steps-per-launch (0 = auto; resident heat3d)
  std::string row_align = "auto";               ///< --row-align auto|none|16 (resident mode)
  std::array<int, 3> dims{0, 0, 0};             ///< --dims (0: let MPI choose)
  std::string placement = "rank";               ///< --placement rank|device
  std::optional<std::int64_t> check_every;      ///< --check-every / -nccheck
  std::string summary;                          ///< --summary FILE ("" = none)
  std::int64_t output_every = 0;                ///< --output-every (0 = no snapshots)
  std::string output_dir = "output";            ///< --output-dir
  std::string output_overlap = "auto";          ///< --output-overlap auto|on|off
  std::int64_t checkpoint_every = 0;            ///< --checkpoint-every (0 = only on signal)
  std::string checkpoint_dir = "checkpoints";   ///< --checkpoint-dir
  int keep = 2;                                 ///< --keep
  bool checkpoint_start_over = false;           ///< --checkpoint-start-over
  std::optional<std::string> restart;           ///< --restart ("" = --checkpoint-dir)
  int streams = 0;                              ///< --streams (0 = auto)
  int chunks = 0;                               ///< --chunks (0 = auto)
  int steps_per_pass = 1;                       ///< --steps-per-pass
  std::string trace;                            ///< --trace FILE ("" = none)
  std::optional<std::size_t> pool_limit;        ///< --pool-limit BYTES (device pool byte limit)
  std::string field_dump;                       ///< --field-dump FILE ("" = none)
  bool quiet = false;                           ///< --quiet
  bool help = false;                            ///< --help
  bool version = false;                         ///< --version
  std::vector<std::string> given;               ///< long names given (command line or config)
  std::vector<std::string> kokkos_args;         ///< --kokkos-* arguments, passed to Kokkos
};

/**
 * @brief Parses the command line (and a --config file it names) with CLI11.
 *
 * Accepts `--name value`, `--name=value`, the flags --quiet/--help/--version, `--restart` with
 * or without a value, and the jacobi2d spellings of NVIDIA's multi-gpu-programming-models
 * (-nx, -ny, -niter, -nccheck), which select jacobi2d unless --problem says otherwise. Options
 * on the command line override the --config file, wherever --config appears; the file must be
 * a regular file of at most 1 MiB. Arguments starting with --kokkos- are kept for Kokkos.
 * @param args the arguments after the program name
 * @return the parsed options (defaults not resolved yet)
 * @throw funnel::invalid_argument with one line naming the bad value (quoted, escaped and cut
 * to 80 characters) and what is allowed
 */
[[nodiscard]] options parse_options(const std::vector<std::string>& args);

/**
 * @brief Fills the unset options with the defaults for the chosen backend and checks the
 * combinations (jacobi2d is float only, steps-per-pass needs streamed mode, a grid whose
 * fields' bytes fit in 63 bits, ...).
 * @param opts parsed options, updated in place
 * @param on_gpu true when the run uses the CUDA backend (larger default grids)
 * @throw funnel::invalid_argument naming the conflicting values
 */
void resolve_defaults(options& opts, bool on_gpu);

/// @brief Ranks sharing a GPU under MPS from which --steps-per-launch auto takes two steps per
/// launch for boxes of at least pair_row_cells cells along x and pair_box_cells cells, whatever
/// the cache.
inline constexpr int pair_sharing_ranks = 4;
/// @brief See pair_sharing_ranks: a box narrower than this along x keeps one step per launch.
inline constexpr std::int64_t pair_row_cells = 96;
/// @brief See pair_sharing_ranks: a box of fewer cells keeps one step per launch.
inline constexpr std::int64_t pair_box_cells = std::int64_t{1} << 19;

/**
 * @brief What --steps-per-launch auto means for one rank: 2 for funnel's CUDA kernel on resident
 * heat3d (a 3D box, --halo-depth auto or 2) whose field of interior cells is at least the GPU's
 * L2 cache, or that shares its GPU under MPS with at least pair_sharing_ranks - 1 other ranks
 * and is at least pair_row_cells cells wide along x and pair_box_cells cells in all; else 1. Two
 * steps per launch read and write the field once for two steps: a field larger than L2 saves a
 * pass through device memory, one that L2 holds pays the fused kernel's extra work. Ranks
 * sharing a GPU pay for every launch and exchange, half as many in pairs; below those box sizes
 * the fused kernel has too few blocks and loses more than the launches save. The figures that
 * set these bounds: docs/halo.md, "Two steps per launch". The job takes the smallest answer of
 * its ranks (run.cpp), so that every rank uses the same halo depth.
 * @param o options after resolve_defaults
 * @param kernel the resolved kernel (cuda, host or kokkos)
 * @param rank_layout this rank's box
 * @param l2_cache_bytes the rank's GPU's L2 cache (0 without a GPU)
 * @param sharing_ranks ranks sharing the rank's GPU under MPS (0 or 1: none, or time-sliced)
 */
[[nodiscard]] int auto_steps_per_launch(const options& o, const std::string& kernel,
                                        const field_layout& rank_layout, std::size_t l2_cache_bytes,
                                        int sharing_ranks = 0);

/// @brief Most ranks on one GPU for which --halo-overlap auto overlaps the steps of CUDA graphs.
inline constexpr int graph_overlap_most_ranks = 4;

/**
 * @brief --halo-overlap for the steps of CUDA graphs. auto is on where at most
 * graph_overlap_most_ranks ranks share each GPU under MPS and the steps are one per launch: the
 * overlapped step is two kernels more (the inner update and the boundary slabs apart), and every
 * kernel of every rank is work the GPU's front end does one client at a time: up to 4 ranks
 * gain from the overlap, more lose (docs/halo.md, "Overlapped graphs").
 * @param choice --halo-overlap: auto, on or off
 * @param time_sliced some GPU of the job is shared by ranks that MPS does not serve
 * @param ranks_per_gpu the most ranks on one GPU of the job
 * @param steps_per_launch --steps-per-launch resolved (1 or 2)
 */
[[nodiscard]] bool graph_overlap(const std::string& choice, bool time_sliced, int ranks_per_gpu,
                                 int steps_per_launch);

/// @brief The --help text (options, Jacobi spellings, exit statuses).
[[nodiscard]] std::string usage();

/**
 * @brief The options as `key = value` lines in --config syntax (the run configuration stored in
 * checkpoints and summaries); excludes per-invocation keys (restart, config, quiet).
 */
[[nodiscard]] std::string to_config_text(const options& opts);

}  // namespace funnel::stencil
