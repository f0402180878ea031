// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file field_view.hpp
 * @brief A named, typed, non-owning view of one rank's field in host memory.
 */
#pragma once

#include <string>
#include <utility>

#include "funnel/io/dtype.hpp"

namespace funnel::io {

/**
 * @brief One field to write: its dataset name, element type and host array.
 *
 * `data` points at the rank's whole array (halo included) in the layout of the grid_block it is
 * written with. The writer reads the interior through an HDF5 memory hyperslab: no copy.
 */
struct field_view {
  std::string name;             ///< dataset name: letters, digits, '_' and '-'
  dtype type = dtype::float64;  ///< element type of `data`
  const void* data = nullptr;   ///< host array of layout.allocated_cells() elements

  /**
   * @brief A view of a float or double array.
   * @param name dataset name
   * @param data host array (not copied; must outlive the write call)
   * @return the view
   */
  template <class T>
  [[nodiscard]] static field_view of(std::string name, const T* data) {
    return field_view{std::move(name), dtype_of<T>(), data};
  }
};

}  // namespace funnel::io
