// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file benchmarks.hpp
 * @brief The funnel-bench subcommands: each has a spec (options, --help) and a run function.
 */
#pragma once

#include <functional>
#include <vector>

#include "cli.hpp"
#include "context.hpp"
#include "report.hpp"

namespace funnel::bench {

/// @brief A benchmark subcommand.
struct benchmark {
  command_spec spec;                           ///< name, summary, options
  std::function<outcome(const context&)> run;  ///< measures; throws on failure
};

/// @brief share, stencil, pipeline, pool, scaling, kernels — the order `all` runs them in.
[[nodiscard]] const std::vector<benchmark>& all_benchmarks();

/// @brief `share`: N ranks on one GPU, time-sliced vs MPS through funnel-run.
[[nodiscard]] benchmark share_benchmark();
/// @brief `stencil`: heat3d vs a device copy; N ranks splitting one grid vs one rank.
[[nodiscard]] benchmark stencil_benchmark();
/// @brief `pipeline`: serial vs pipelined vs bound; the temporal-blocking curve.
[[nodiscard]] benchmark pipeline_benchmark();
/// @brief `pool`: allocate/free per step from funnel's pool vs preallocated vs cudaMalloc.
[[nodiscard]] benchmark pool_benchmark();
/// @brief `scaling`: heat3d and jacobi2d on 1 and 2 GPUs, strong and weak.
[[nodiscard]] benchmark scaling_benchmark();
/// @brief `kernels`: heat3d_two_steps' block shapes vs two heat3d_step launches.
[[nodiscard]] benchmark kernels_benchmark();

/// @brief The spec of `share-worker`, the per-rank program `share` starts.
[[nodiscard]] command_spec share_worker_spec();
/**
 * @brief `funnel-bench share-worker ...`: one rank of the share benchmark (under mpirun).
 * @param options its parsed options
 * @return the process exit status
 */
int share_worker_main(const option_values& options);

/// @brief The spec of `pool-worker`, the per-rank program `pool --ranks` starts.
[[nodiscard]] command_spec pool_worker_spec();
/**
 * @brief `funnel-bench pool-worker ...`: one rank of the pool benchmark (under mpirun).
 * @param options its parsed options
 * @return the process exit status
 */
int pool_worker_main(const option_values& options);

}  // namespace funnel::bench
