// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file context.hpp
 * @brief What every benchmark gets: the backend, the common options and where things are.
 */
#pragma once

#include <string>

#include "cli.hpp"
#include "funnel/runtime/backend_kind.hpp"

namespace funnel::bench {

/// @brief The run's settings, shared by all benchmarks.
struct context {
  backend_kind backend = backend_kind::host;  ///< from --backend
  bool quick = false;                         ///< --quick
  int repeat = 5;                             ///< --repeat: timed repetitions (median counts)
  int warmup = 1;                             ///< --warmup
  std::string self;                           ///< path of this funnel-bench executable
  std::string bin_dir;                        ///< its folder (funnel-run, funnel-stencil too)
  std::string output_dir;                     ///< where side files go (traces, run logs)
  const option_values* options = nullptr;     ///< the subcommand's options

  /// @brief True on the CUDA backend.
  [[nodiscard]] bool on_gpu() const noexcept { return backend == backend_kind::cuda; }
};

}  // namespace funnel::bench
