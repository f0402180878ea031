// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file halo_signals.hpp
 * @brief How the GPU-ordered halo path signals between neighbours.
 */
#pragma once

#include <string>
#include <string_view>

namespace funnel {

/// @brief How GPU-ordered exchanges order their copies (halo_options::signals).
enum class halo_signals {
  /// kernel where MPS serves the node's ranks or each rank has its GPU to itself, stream
  /// otherwise (time-sliced ranks: a waiting kernel would hold its context's slice while the
  /// neighbour cannot run)
  automatic,
  /// the exchange's own kernel copies, signals and waits (its work can be captured in a CUDA
  /// graph and launched again)
  kernel,
  /// stream memory operations write and wait on the signal words (the host passes each
  /// exchange's count)
  stream
};

/**
 * @brief The value's name, as parse_halo_signals() and FUNNEL_HALO_SIGNALS read it.
 * @param signals the value
 * @return "auto", "kernel" or "stream"
 */
[[nodiscard]] std::string to_string(halo_signals signals);

/**
 * @brief The value named by `text`.
 * @param text "auto", "kernel" or "stream"
 * @return the value
 * @throw funnel::invalid_argument naming the text and what is allowed
 */
[[nodiscard]] halo_signals parse_halo_signals(std::string_view text);

}  // namespace funnel
