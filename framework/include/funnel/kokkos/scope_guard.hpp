// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file scope_guard.hpp
 * @brief Initialises Kokkos for the lifetime of a scope, on the device funnel bound the rank to.
 */
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace funnel::kokkos {

/**
 * @brief Initialises Kokkos unless it already is, and finalises it on destruction if (and only
 * if) this guard initialised it.
 *
 * Device choice: Kokkos' CUDA backend is given the rank's current CUDA device (the one funnel's
 * binding made current, e.g. the GPU `funnel-run` picked), or `device` when given, so Kokkos
 * uses the context funnel already holds instead of picking a device of its own. An application
 * that initialised Kokkos itself keeps its settings; the guard then does nothing.
 *
 * Command-line options of Kokkos (`--kokkos-threads=4`, `--kokkos-help`, ...) can be passed
 * through; `--kokkos-device-id` given there wins over the device above.
 *
 * Non-copyable, non-movable: create one in `main`, after MPI_Init and the binding, and before
 * any funnel Kokkos kernel; it must die before MPI_Finalize.
 */
class scope_guard {
 public:
  /**
   * @brief Initialises Kokkos with its default settings, unless it already is.
   * @param device CUDA device for Kokkos' CUDA backend; empty: the current CUDA device (ignored
   * without Kokkos CUDA)
   * @throw funnel::unsupported when Kokkos is not compiled into funnel, or was already finalised
   * (Kokkos cannot be initialised twice in a process)
   */
  explicit scope_guard(std::optional<int> device = std::nullopt);
  /**
   * @brief Initialises Kokkos with command-line options, unless it already is.
   * @param kokkos_arguments Kokkos' command-line options, each `--kokkos-NAME[=VALUE]`
   * @param device as above
   * @throw funnel::invalid_argument (Kokkos left uninitialised) when this Kokkos does not know
   * or cannot read one of the options, naming it
   * @throw funnel::unsupported as above
   */
  explicit scope_guard(const std::vector<std::string>& kokkos_arguments,
                       std::optional<int> device = std::nullopt);
  /// @brief Finalises Kokkos when this guard initialised it (never throws).
  ~scope_guard();
  scope_guard(const scope_guard&) = delete;
  scope_guard& operator=(const scope_guard&) = delete;
  scope_guard(scope_guard&&) = delete;
  scope_guard& operator=(scope_guard&&) = delete;

  /**
   * @brief Whether this guard initialised Kokkos.
   * @return true when it called Kokkos::initialize (and so will call finalize); false when the
   * application had initialised Kokkos already
   */
  [[nodiscard]] bool initialized_here() const noexcept { return initialized_here_; }

  /**
   * @brief Whether funnel's Kokkos kernels can run on CUDA streams.
   * @return true when the Kokkos funnel was built with has its CUDA backend
   */
  [[nodiscard]] static bool has_cuda() noexcept;
  /**
   * @brief The Kokkos version and the execution space funnel's Kokkos kernels use on a CUDA
   * stream or on the host stream, for a run's log (callable before initialisation).
   * @param cuda_stream the kernels run on CUDA streams (Kokkos::Cuda)
   * @return e.g. "Kokkos 3.4.1 Serial"; the host space when Kokkos has no CUDA backend
   */
  [[nodiscard]] static std::string execution_space(bool cuda_stream);

 private:
  bool initialized_here_ = false;
};

}  // namespace funnel::kokkos
