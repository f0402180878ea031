// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file field_dump.hpp
 * @brief --field-dump: the global interior gathered on rank 0 as raw binary (a testing aid).
 */
#pragma once

#include <cstddef>
#include <string>

#include "funnel/decomposition/cartesian_decomposition.hpp"

namespace funnel::stencil {

/**
 * @brief Gathers every rank's interior on rank 0 and writes the global interior to `path`:
 * raw values, x fastest then y then z, native endianness, no header (collective).
 *
 * Meant for tests that compare runs bitwise on small grids: rank 0 holds the whole grid.
 * @param decomposition the split
 * @param host_field this rank's field (allocated layout) in host memory
 * @param element_size bytes per value
 * @param path output file (rank 0)
 * @throw funnel::system_error when rank 0 cannot write the file
 */
void write_field_dump(const cartesian_decomposition& decomposition, const void* host_field,
                      std::size_t element_size, const std::string& path);

}  // namespace funnel::stencil
