// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file box_copy.hpp
 * @brief Stream-ordered copies of a sub-box of a field: to a dense buffer (pack), from one
 * (unpack), or into a box of another field (possibly another process's, imported over IPC).
 *
 * Regions are boxes in *allocated-array* coordinates of the field's field_layout (0 at the
 * lower ghost edge). On a CUDA stream the copy is a kernel (consecutive threads walk x, so
 * rows are read and written coalesced); pointers must then be device-accessible from the
 * current device (device, imported peer or mapped pinned memory). On the host stream it runs
 * now, row by row. An empty region copies nothing. Source and destination must not overlap.
 */
#pragma once

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

/**
 * @brief Copies `region` of `field` into the dense buffer `buffer` (x fastest, then y, z).
 * @param stream orders the copy
 * @param buffer destination of region.cells() elements
 * @param field the field's allocated array
 * @param layout the field's layout
 * @param region the cells to copy, inside the allocated array
 * @throw funnel::invalid_argument for a region outside the array or null pointers
 * @throw funnel::unsupported for a CUDA stream in a build without CUDA
 * @throw funnel::cuda_error when the kernel launch fails
 */
void pack_box(stream_view stream, float* buffer, const float* field, const field_layout& layout,
              const box& region);
/**
 * @brief pack_box() for a double field.
 * @param stream orders the copy
 * @param buffer destination of region.cells() elements
 * @param field the field's allocated array
 * @param layout the field's layout
 * @param region the cells to copy, inside the allocated array
 * @throw funnel::invalid_argument, funnel::unsupported, funnel::cuda_error as for a float field
 */
void pack_box(stream_view stream, double* buffer, const double* field, const field_layout& layout,
              const box& region);

/**
 * @brief Copies the dense buffer `buffer` (x fastest) into `region` of `field`.
 * @param stream orders the copy
 * @param field the field's allocated array
 * @param layout the field's layout
 * @param region the cells to write, inside the allocated array
 * @param buffer source of region.cells() elements
 * @throw funnel::invalid_argument for a region outside the array or null pointers
 * @throw funnel::unsupported for a CUDA stream in a build without CUDA
 * @throw funnel::cuda_error when the kernel launch fails
 */
void unpack_box(stream_view stream, float* field, const field_layout& layout, const box& region,
                const float* buffer);
/**
 * @brief unpack_box() for a double field.
 * @param stream orders the copy
 * @param field the field's allocated array
 * @param layout the field's layout
 * @param region the cells to write, inside the allocated array
 * @param buffer source of region.cells() elements
 * @throw funnel::invalid_argument, funnel::unsupported, funnel::cuda_error as for a float field
 */
void unpack_box(stream_view stream, double* field, const field_layout& layout, const box& region,
                const double* buffer);

/**
 * @brief Copies `src_region` of `src` into `dst_region` of `dst` (same extents).
 * @param stream orders the copy
 * @param dst destination field's allocated array (may be another process's, imported)
 * @param dst_layout its layout
 * @param dst_region cells written, inside dst's allocated array
 * @param src source field's allocated array
 * @param src_layout its layout
 * @param src_region cells read, inside src's allocated array, same extents as dst_region
 * @throw funnel::invalid_argument for regions outside their arrays, different extents or null
 * pointers
 * @throw funnel::unsupported for a CUDA stream in a build without CUDA
 * @throw funnel::cuda_error when the kernel launch fails
 */
void copy_box(stream_view stream, float* dst, const field_layout& dst_layout, const box& dst_region,
              const float* src, const field_layout& src_layout, const box& src_region);
/**
 * @brief copy_box() for double fields.
 * @param stream orders the copy
 * @param dst destination field's allocated array (may be another process's, imported)
 * @param dst_layout its layout
 * @param dst_region cells written, inside dst's allocated array
 * @param src source field's allocated array
 * @param src_layout its layout
 * @param src_region cells read, inside src's allocated array, same extents as dst_region
 * @throw funnel::invalid_argument, funnel::unsupported, funnel::cuda_error as for float fields
 */
void copy_box(stream_view stream, double* dst, const field_layout& dst_layout,
              const box& dst_region, const double* src, const field_layout& src_layout,
              const box& src_region);

}  // namespace funnel
