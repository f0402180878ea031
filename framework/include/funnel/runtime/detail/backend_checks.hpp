// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file backend_checks.hpp
 * @brief Argument checks shared by the runtime's types and the layers built on them.
 *
 * Internal (funnel::detail): installed with the public headers, but not part of funnel's API. A
 * header so that the memory, pipeline and halo layers reject bad arguments with the same
 * messages as the runtime.
 */
#pragma once

#include <cstddef>
#include <string_view>

#include "funnel/runtime/backend_kind.hpp"

namespace funnel::detail {

/**
 * @brief Checks that the CUDA backend can be used in this process.
 * @param what the operation that needs it, e.g. "funnel::stream(cuda)"; it starts the message
 * @throw funnel::unsupported when CUDA is not compiled in or no CUDA device is visible
 */
void require_cuda(std::string_view what);

/**
 * @brief Whether a cudaGetDeviceCount error means "no GPU here" (no device, no or too old a
 * driver) rather than a failure the user must see (e.g. an MPS server refusing the client).
 * @param code a cudaError_t value as an int
 * @return true for cudaErrorNoDevice and cudaErrorInsufficientDriver; false for every other
 * code, and always false in a build without CUDA
 */
[[nodiscard]] bool cuda_error_means_no_gpu(int code) noexcept;

/**
 * @brief Checks that two objects belong to the same backend.
 * @param what the operation, e.g. "funnel::event::record"
 * @param expected the backend of the object the operation acts on
 * @param got the backend of the argument
 * @throw funnel::invalid_argument naming both backends when they differ
 */
void expect_same_backend(std::string_view what, backend_kind expected, backend_kind got);

/**
 * @brief Checks a byte count: not zero, and not a negative number converted to size_t.
 * @param what the operation, e.g. "funnel::copy_async"
 * @param name the parameter's name, e.g. "bytes"
 * @param value its value
 * @throw funnel::invalid_argument naming the parameter and its value
 */
void expect_size(std::string_view what, std::string_view name, std::size_t value);

/**
 * @brief Checks that a pointer is not null.
 * @param what the operation
 * @param name the parameter's name, e.g. "dst"
 * @param ptr its value
 * @throw funnel::invalid_argument naming the parameter
 */
void expect_pointer(std::string_view what, std::string_view name, const void* ptr);

}  // namespace funnel::detail
