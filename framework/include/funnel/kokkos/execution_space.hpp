// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file execution_space.hpp
 * @brief Kokkos execution-space instances that run in a funnel stream's order.
 *
 * Needs Kokkos (FUNNEL_HAS_KOKKOS) and, with Kokkos' CUDA backend, a compiler that Kokkos
 * accepts (nvcc_wrapper or clang), like every Kokkos translation unit.
 */
#pragma once

#include <Kokkos_Core.hpp>
#include <utility>

#include "funnel/error.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::kokkos {

#if defined(KOKKOS_ENABLE_CUDA)
/// @brief The execution space of a funnel CUDA stream (Kokkos::Cuda with Kokkos' CUDA backend).
using stream_execution_space = Kokkos::Cuda;
#else
/// @brief The execution space of a funnel stream: without Kokkos' CUDA backend, the default
/// host execution space (Kokkos::Cuda with it).
using stream_execution_space = Kokkos::DefaultHostExecutionSpace;
#endif

/**
 * @brief The Kokkos execution space instance that runs work in `stream`'s order.
 *
 * With Kokkos' CUDA backend: a `Kokkos::Cuda` instance built on the stream's handle (Kokkos does
 * not own or destroy the stream). Instances are cached per stream handle, because building one
 * allocates Kokkos' per-instance scratch; the cache is emptied when Kokkos finalises. Without it:
 * the default host execution space for the host stream.
 * @param stream a CUDA stream (Kokkos CUDA) or the host stream (Kokkos without CUDA)
 * @return the instance; with Kokkos CUDA, a copy of the one cached for the stream handle
 * @throw funnel::invalid_argument for a host stream with Kokkos CUDA (use
 * host_execution_space or with_execution_space)
 * @throw funnel::unsupported for a CUDA stream when Kokkos has no CUDA backend
 */
[[nodiscard]] stream_execution_space execution_space_for(stream_view stream);

/**
 * @brief The host execution space, for work on the host stream (host memory).
 * @return a default-constructed Kokkos::DefaultHostExecutionSpace
 */
[[nodiscard]] inline Kokkos::DefaultHostExecutionSpace host_execution_space() {
  return Kokkos::DefaultHostExecutionSpace{};
}

/**
 * @brief Calls `f(space)` with the execution space matching `stream` at run time: the stream's
 * `Kokkos::Cuda` instance for a CUDA stream, the host execution space for the host stream. `f`
 * is generic (e.g. `[&](auto space) {...}`), so both paths are compiled.
 * @tparam F the callable's type
 * @param stream the stream the work belongs to
 * @param f callable taking an execution space instance
 * @return what `f` returns
 * @throw funnel::unsupported for a CUDA stream when Kokkos has no CUDA backend
 */
template <class F>
decltype(auto) with_execution_space(stream_view stream, F&& f) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (stream.is_cuda()) return std::forward<F>(f)(execution_space_for(stream));
#else
  if (stream.is_cuda()) {
    throw unsupported(
        "funnel::kokkos: a CUDA stream needs Kokkos with its CUDA backend; this Kokkos has "
        "host backends only");
  }
#endif
  return std::forward<F>(f)(host_execution_space());
}

}  // namespace funnel::kokkos
