// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal interface between the dispatching front end (src/host/heat3d.cpp, jacobi2d.cpp) and
// the three implementations (src/host, src/cuda, src/kokkos). The front end validates every
// argument once, so the implementations receive a checked, non-empty region.
#pragma once

#include <cstdint>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/halo/pushed_exchange.hpp"
#include "funnel/kernels/error_norms.hpp"
#include "funnel/kernels/heat3d_block_shape.hpp"
#include "funnel/kernels/implementation.hpp"
#include "funnel/runtime/stream_view.hpp"

// 1 when the implementation's sources are part of funnel_kernels: src/cuda/CMakeLists.txt and
// src/kokkos/CMakeLists.txt define them (their folders are built only with FUNNEL_HAS_CUDA and
// FUNNEL_HAS_KOKKOS).
#ifndef FUNNEL_KERNELS_WITH_CUDA
#define FUNNEL_KERNELS_WITH_CUDA 0
#endif
#ifndef FUNNEL_KERNELS_WITH_KOKKOS
#define FUNNEL_KERNELS_WITH_KOKKOS 0
#endif

namespace funnel::kernels::detail {

// ---- argument checks (validation.cpp) --------------------------------------------------------

/// Number of axes of `extents` longer than one cell when they are the leading ones (x, then y,
/// then z), else -1: the stencil's axes. 0 for a single cell.
[[nodiscard]] int leading_axes(const index3& extents) noexcept;
/// Number of axes with neighbours (1, 2 or 3); they must be x, then y, then z, and the row
/// alignment a power of two.
int stencil_dims(const field_layout& layout, const char* kernel);
/// Throws unless `region` keeps one cell from the edge on axes with neighbours and is [0, 1) on
/// the others; returns false for an empty region (nothing to do).
bool check_region(const field_layout& layout, const box& region, const char* kernel);
/// check_region for both, and throws unless the field is 3D and `second` lies inside `first`;
/// returns false when `second` is empty (nothing to do).
bool check_two_step_regions(const field_layout& layout, const box& first, const box& second,
                            const char* kernel);
/// Throws unless `stream` suits `impl` and `impl` is compiled in.
void check_stream(stream_view stream, implementation impl, const char* kernel);
/// Throws for null or overlapping arrays of `layout.allocated_cells()` elements.
void check_arrays(const field_layout& layout, const void* in, const void* out,
                  std::size_t element_size, const char* kernel);
/// Throws unless the rank's interior at `offset` lies inside `global_interior`, every axis
/// with more than one global cell has a halo in `layout` and its row alignment is a power of two.
void check_placement(const field_layout& layout, const index3& global_interior,
                     const index3& offset, const char* what);

// ---- implementations ---------------------------------------------------------------------------

namespace host {
template <class T>
void heat3d_step(const field_layout& layout, const T* in, T* out, const box& region, T c);
template <class T>
void heat3d_two_steps(const field_layout& layout, const T* in, T* out, const box& first,
                      const box& second, T c);
void jacobi2d_step(const field_layout& layout, const float* a, float* a_new, const box& region,
                   float* l2_norm);
}  // namespace host

namespace cuda {
template <class T>
void heat3d_step(stream_view stream, const field_layout& layout, const T* in, T* out,
                 const box& region, T c);
template <class T>
void heat3d_step_pushed(stream_view stream, const field_layout& layout, const T* in, T* out,
                        const box& region, T c, const pushed_exchange& push);
/// `shape`: one of heat3d_two_steps_shapes(), its planes resolved.
template <class T>
void heat3d_two_steps(stream_view stream, const field_layout& layout, const T* in, T* out,
                      const box& first, const box& second, T c, const heat3d_block_shape& shape);
void jacobi2d_step(stream_view stream, const field_layout& layout, const float* a, float* a_new,
                   const box& region, float* l2_norm);
template <class T>
void heat3d_initialize(stream_view stream, const field_layout& layout,
                       const index3& global_interior, const index3& offset, T* field);
void jacobi2d_initialize(stream_view stream, const field_layout& layout,
                         const index3& global_interior, const index3& offset, float* a,
                         float* a_new);
/// heat3d_error on the GPU: `decay` is the exact solution's factor at the field's time.
template <class T>
error_norms heat3d_error(stream_view stream, const field_layout& layout,
                         const index3& global_interior, const index3& offset, double decay,
                         const T* field);
}  // namespace cuda

namespace kokkos {
template <class T>
void heat3d_step(stream_view stream, const field_layout& layout, const T* in, T* out,
                 const box& region, T c);
void jacobi2d_step(stream_view stream, const field_layout& layout, const float* a, float* a_new,
                   const box& region, float* l2_norm);
}  // namespace kokkos

}  // namespace funnel::kernels::detail
