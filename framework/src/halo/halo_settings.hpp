// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the halo settings a job may give in the environment (FUNNEL_HALO_TIMEOUT,
// FUNNEL_HALO_SIGNALS, FUNNEL_HALO_PUSH, FUNNEL_HALO_MPI_CHUNK), read in this one place, once per
// process, and resolved against halo_options: an explicit option wins, then the variable, then the
// default.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>

#include "funnel/halo/halo_options.hpp"
#include "funnel/halo/halo_signals.hpp"

namespace funnel::detail {

/// What the environment says (each unset when its variable is unset or empty).
struct halo_environment {
  std::optional<std::chrono::milliseconds> stall_timeout;
  std::optional<halo_signals> signals;
  std::optional<bool> push;
  std::optional<std::size_t> mpi_chunk;

  /**
   * @brief The variables as `lookup` gives them (a getenv; tests pass their own).
   * @throw funnel::invalid_argument naming a variable whose value is not allowed, and what is
   */
  static halo_environment parse(const std::function<const char*(const char*)>& lookup);
  /// @brief This process's environment, parsed at the first call (a bad value throws each time).
  static const halo_environment& process();
};

/// The settings an exchange uses.
struct halo_settings {
  std::chrono::milliseconds stall_timeout{std::chrono::seconds(60)};
  halo_signals signals = halo_signals::automatic;
  bool push = false;
  /// The largest MPI message of a face (0: whole faces); docs/halo.md, "Staged faces in pieces".
  std::size_t mpi_chunk = std::size_t{1} << 20;
};

/// @brief `options` where set, else `environment`, else the defaults.
[[nodiscard]] halo_settings resolve(const halo_options& options,
                                    const halo_environment& environment);

}  // namespace funnel::detail
