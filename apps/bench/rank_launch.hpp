// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file rank_launch.hpp
 * @brief Starting N ranks the way users do: `mpirun -np N [funnel-run opts --] program args`.
 */
#pragma once

#include <string>
#include <vector>

#include "context.hpp"
#include "json.hpp"
#include "process.hpp"

namespace funnel::bench {

/// @brief How the ranks are started.
enum class launch_mode {
  plain,        ///< mpirun alone (host backend: there is no GPU to bind or share)
  mps_off,      ///< funnel-run --mps off: ranks time-slice the GPU
  mps_on,       ///< funnel-run --mps on: one MPS server funnels the ranks into one context
  funnel_auto,  ///< funnel-run with its defaults (MPS when ranks share a GPU)
};

/// @brief "plain mpirun", "funnel-run --mps off", ...
[[nodiscard]] std::string to_string(launch_mode mode);

/**
 * @brief True when FUNNEL_BENCH_LAUNCH_ON_HOST=1: the host backend starts ranks through
 * funnel-run as on a GPU (tests do this with stand-ins for the NVIDIA tools).
 */
[[nodiscard]] bool launcher_forced_on_host() noexcept;

/**
 * @brief The mode to use for `wanted` on this backend: `plain` on the host backend (funnel-run
 * binds GPUs and starts MPS, neither of which exists there) unless launcher_forced_on_host(),
 * `wanted` otherwise. funnel-run is taken from FUNNEL_BENCH_LAUNCHER, else beside funnel-bench.
 */
[[nodiscard]] launch_mode effective_mode(const context& ctx, launch_mode wanted) noexcept;

/**
 * @brief Runs `ranks` ranks of `program` and waits for them.
 * @param ctx the run's context (backend, bin_dir, output_dir)
 * @param tag names the log file (<output_dir>/<tag>.log)
 * @param ranks number of ranks
 * @param mode plain mpirun or through funnel-run
 * @param launcher_extra more funnel-run options (e.g. --gpus 0,1); ignored for `plain`
 * @param program the program and its arguments
 * @return how mpirun ended
 * @throw funnel::unsupported when funnel-run is needed and not installed beside funnel-bench
 * @throw funnel::error naming the command and the log's tail when the run fails
 */
process_result run_ranks(const context& ctx, const std::string& tag, int ranks, launch_mode mode,
                         const std::vector<std::string>& launcher_extra,
                         const std::vector<std::string>& program);

/// @brief A funnel-stencil run's figures.
struct stencil_app_result {
  json summary;                     ///< its --summary JSON
  double cell_updates_per_s = 0.0;  ///< from the summary
  double seconds = 0.0;             ///< time_s from the summary (the stepping loop)
  double wall_seconds = 0.0;        ///< mpirun's wall time, start-up included
};

/**
 * @brief Runs funnel-stencil on `ranks` ranks and reads its --summary.
 * @param ctx the run's context
 * @param tag names the log and summary files
 * @param ranks number of ranks
 * @param mode how ranks are started
 * @param launcher_extra more funnel-run options
 * @param app_args funnel-stencil's arguments (--summary and --quiet are added)
 * @return the summary and its figures
 * @throw funnel::unsupported when funnel-stencil (or a needed funnel-run) is not installed
 * @throw funnel::error when the run fails
 */
stencil_app_result run_stencil_app(const context& ctx, const std::string& tag, int ranks,
                                   launch_mode mode, const std::vector<std::string>& launcher_extra,
                                   std::vector<std::string> app_args);

/// @brief The time limit of one child run: generous, so a hung job cannot hang funnel-bench.
[[nodiscard]] double child_timeout_s(const context& ctx) noexcept;

}  // namespace funnel::bench
