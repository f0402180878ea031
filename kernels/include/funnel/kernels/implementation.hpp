// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file implementation.hpp
 * @brief Which implementation of a stencil kernel runs: CUDA, host C++ or Kokkos.
 */
#pragma once

#include <string>
#include <string_view>

#include "funnel/runtime/stream_view.hpp"

namespace funnel::kernels {

/**
 * @brief The implementations every stencil has.
 *
 * All three give bitwise identical stencil updates (see detail/stencil_arithmetic.hpp).
 */
enum class implementation {
  cuda,  ///< runs on a CUDA stream over device memory
  host,  ///< runs on the host stream over host memory (OpenMP threads when available)
  /// runs on the Kokkos execution space that matches the stream (a `Kokkos::Cuda` instance on a
  /// CUDA stream, the default host execution space on the host stream)
  kokkos
};

/**
 * @brief The implementation's name, as parse_implementation() reads it.
 * @param impl the implementation
 * @return "cuda", "host" or "kokkos"
 */
[[nodiscard]] std::string to_string(implementation impl);

/**
 * @brief Parses a user's `--kernel` value.
 * @param name "cuda", "host" or "kokkos"
 * @return the implementation
 * @throw funnel::invalid_argument for any other string (the message lists the allowed ones)
 */
[[nodiscard]] implementation parse_implementation(std::string_view name);

/**
 * @brief The natural implementation for a stream.
 * @param stream the stream the kernels will run on
 * @return `cuda` for a CUDA stream, `host` otherwise
 */
[[nodiscard]] implementation default_implementation(stream_view stream) noexcept;

/**
 * @brief Whether this build contains an implementation.
 * @param impl the implementation
 * @return true when compiled in: cuda needs FUNNEL_HAS_CUDA, kokkos needs FUNNEL_HAS_KOKKOS,
 * host is always there
 */
[[nodiscard]] bool implementation_compiled(implementation impl) noexcept;

}  // namespace funnel::kernels
