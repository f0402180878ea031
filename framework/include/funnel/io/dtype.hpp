// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file dtype.hpp
 * @brief Element types funnel writes to and reads from HDF5 files.
 */
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

namespace funnel::io {

/// @brief Element type of a field: stored as IEEE little-endian float of this width.
enum class dtype {
  float32,  ///< float, 4 bytes
  float64   ///< double, 8 bytes
};

/**
 * @brief The dtype of a C++ element type.
 * @tparam T float or double
 * @return dtype::float32 or dtype::float64
 */
template <class T>
[[nodiscard]] constexpr dtype dtype_of() noexcept {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "funnel::io fields are float or double");
  return std::is_same_v<T, float> ? dtype::float32 : dtype::float64;
}

/**
 * @brief Bytes per element.
 * @param type the element type
 * @return 4 or 8
 */
[[nodiscard]] constexpr std::size_t size_of(dtype type) noexcept {
  return type == dtype::float32 ? 4 : 8;
}

/**
 * @brief The name stored in files and shown in messages: "float32" or "float64".
 * @param type the element type
 * @return its name
 */
[[nodiscard]] std::string to_string(dtype type);

/**
 * @brief Parses a name written by to_string().
 * @param name "float32" or "float64"
 * @return the dtype
 * @throw funnel::invalid_argument for any other name
 */
[[nodiscard]] dtype parse_dtype(const std::string& name);

}  // namespace funnel::io
