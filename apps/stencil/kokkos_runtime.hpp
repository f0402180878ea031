// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file kokkos_runtime.hpp
 * @brief Kokkos for `--kernel kokkos`: initialised once per rank after the binding (on the GPU
 * funnel chose), with the --kokkos-* options, and finalised before MPI_Finalize.
 */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "funnel/runtime/backend_kind.hpp"

namespace funnel::stencil {

/**
 * @brief Holds Kokkos initialised while the run's Kokkos kernels may run. Declare it before the
 * objects that run them, so that it is destroyed after them.
 */
class kokkos_runtime {
 public:
  /**
   * @brief Initialises Kokkos when `kernel` is "kokkos" (otherwise does nothing).
   * @param kernel the run's kernel implementation
   * @param arguments the --kokkos-* options
   * @throw funnel::invalid_argument for an option Kokkos does not know or cannot read
   */
  kokkos_runtime(const std::string& kernel, const std::vector<std::string>& arguments);
  ~kokkos_runtime();
  kokkos_runtime(const kokkos_runtime&) = delete;
  kokkos_runtime& operator=(const kokkos_runtime&) = delete;

  /**
   * @brief The kernel as the plan names it: "kokkos (Kokkos 3.4.1 Serial)" or `kernel`.
   * @param kernel the run's kernel implementation
   * @param backend the run's backend
   */
  [[nodiscard]] static std::string describe(const std::string& kernel, backend_kind backend);

  /**
   * @brief Refuses `--kernel kokkos` where this build's Kokkos cannot run it (the cuda backend
   * without Kokkos' CUDA backend). Needs no initialisation.
   * @throw funnel::unsupported naming what is missing
   */
  static void check(const std::string& kernel, backend_kind backend);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace funnel::stencil
