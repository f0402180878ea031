// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file module_loading.hpp
 * @brief When CUDA loads funnel-stencil's kernels: all at start, unless the user chose.
 */
#pragma once

#include <string>

namespace funnel::stencil {

/**
 * @brief Settles CUDA_MODULE_LOADING for this process before CUDA starts, and returns it.
 *
 * CUDA 12.2 and later load each kernel lazily, at its first launch: inside the first step, where
 * every rank of a shared GPU loads its kernels while its neighbours' exchange kernels wait for
 * it (docs/halo.md, "Lazy loading and the run's clock", has the figures); and the CUDA
 * programming guide warns that loading a kernel may wait for the kernels already running in the
 * context, which an exchange kernel waiting on a neighbour is. So funnel-stencil loads its
 * kernels when CUDA starts ("EAGER"), unless CUDA_MODULE_LOADING is already set: a value the
 * user chose (any value, as CUDA reads it) is kept.
 *
 * Call it before MPI_Init (an MPI library may start CUDA) and before any CUDA call.
 * @return the value the process runs with ("" where setting it failed: CUDA's default)
 */
std::string settle_module_loading();

/// @brief The CUDA_MODULE_LOADING this process runs with ("" when unset).
std::string module_loading();

}  // namespace funnel::stencil
