// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file backend_kind.hpp
 * @brief The two execution backends behind funnel's runtime API.
 */
#pragma once

#include <string>
#include <string_view>

namespace funnel {

/**
 * @brief Where funnel's streams run work and its pools take memory from.
 *
 * The host backend has the CUDA backend's semantics, so every layer above the runtime runs and
 * is tested on machines without a GPU.
 */
enum class backend_kind {
  /// the CPU: in-order streams that complete work eagerly, events, pools with statistics and
  /// byte limits
  host,
  cuda  ///< an NVIDIA GPU through the CUDA runtime
};

/**
 * @brief The backend's name, as select_backend() and the command lines spell it.
 * @param kind the backend
 * @return "host" or "cuda"
 */
[[nodiscard]] std::string to_string(backend_kind kind);

/**
 * @brief Resolves a user's backend request.
 * @param request "auto" (CUDA when compiled in and a device is present, else host), "cuda" or
 * "host"
 * @return the backend to use
 * @throw funnel::invalid_argument for any other string
 * @throw funnel::unsupported when "cuda" is asked for but not compiled in or no device is present
 * @throw funnel::cuda_error ("auto" and "cuda") when the CUDA runtime cannot count the devices
 * for another reason than "no GPU or no driver here", e.g. an MPS server that refuses this client:
 * such a rank must not quietly run on the host while the others use the GPU
 */
[[nodiscard]] backend_kind select_backend(std::string_view request);

/**
 * @brief Whether this build contains the CUDA backend (FUNNEL_HAS_CUDA).
 * @return true when it does; a GPU may still be missing at run time (cuda_device_count())
 */
[[nodiscard]] bool cuda_compiled() noexcept;

/**
 * @brief Number of CUDA devices visible to this process.
 * @return the count; 0 without CUDA compiled in, without a GPU, or when the CUDA runtime cannot
 * count them (select_backend() tells these cases apart, this function does not)
 */
[[nodiscard]] int cuda_device_count() noexcept;

}  // namespace funnel
