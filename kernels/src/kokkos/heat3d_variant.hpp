// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the shapes of work the Kokkos heat3d kernel can give its 3D fields, so that the
// candidates can be measured side by side against the CUDA kernel in one process (the bandwidth
// report of tests/kokkos/kokkos_gpu_test.cpp) and checked bitwise on every backend
// (tests/kernels/kernels_kokkos_test.cpp). funnel::kernels::heat3d_step with the kokkos
// implementation runs `heat3d_default_variant<T>(layout)`; the others exist to re-measure that
// choice.
#pragma once

#include <Kokkos_Macros.hpp>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::kernels::detail::kokkos {

/// How 3D work is split into work items (2D and 1D fields always take one cell per item). Every
/// variant computes each cell with detail::heat_update_3d from the same operands, so all give
/// bitwise the same result; they differ only in which work item updates which cells.
enum class heat3d_variant {
  /// One cell per work item over an MDRangePolicy (tiles of 64 x 4 on CUDA).
  cell,
  /// 2 adjacent x-cells in 2 consecutive z-planes per work item over an MDRangePolicy (tiles of
  /// 64 x 4 work items on CUDA, the CUDA kernel's block): all loads before the arithmetic, one
  /// vector load per row when the strides and arrays allow it.
  x2z2,
  /// The same with 4 adjacent x-cells, loaded as two pairs (a row of 514 cells, 512^3 with its
  /// halo, has no 16-byte alignment for floats on every row); tiles of 32 x 8 work items on CUDA.
  x4z2,
  /// A TeamPolicy: a team per 8 rows of 2 z-planes, a team thread per row, its vector lanes
  /// across the row (x fastest), each lane updating blocks of 2 x-cells in both planes as x2z2.
  team_rows,
};

/// Whether Kokkos runs on CUDA in this build (its default execution space).
#if defined(KOKKOS_ENABLE_CUDA)
inline constexpr bool kokkos_on_cuda = true;
#else
inline constexpr bool kokkos_on_cuda = false;
#endif

/// What funnel::kernels::heat3d_step runs for the kokkos implementation, per element type and
/// row layout: the fastest split against the CUDA kernel in tests/kokkos/kokkos_gpu_test.cpp's
/// report (every split's figures: docs/performance.md, "Kokkos kernels against the CUDA
/// kernels"). Float takes x4z2 on both row layouts. Double on CUDA takes team_rows on rows of
/// n + 2 cells and x2z2 on padded rows, the faster of the two on each; off CUDA x2z2, the
/// simpler (a team per 8 rows is no gain on host threads). Re-measure on a new GPU before
/// changing it.
template <class T>
constexpr heat3d_variant heat3d_default_variant(const field_layout& layout) noexcept {
  if constexpr (sizeof(T) <= 4) {
    return heat3d_variant::x4z2;
  } else {
    return kokkos_on_cuda && !layout.padded() ? heat3d_variant::team_rows : heat3d_variant::x2z2;
  }
}

/// Every variant, in declaration order (for tests and the bandwidth report).
inline constexpr heat3d_variant heat3d_variants[] = {
    heat3d_variant::cell, heat3d_variant::x2z2, heat3d_variant::x4z2, heat3d_variant::team_rows};

/// "cell", "x2z2", "x4z2" or "team_rows".
const char* to_string(heat3d_variant variant) noexcept;

/// heat3d_step of the kokkos implementation with the 3D work split as `variant`. Takes the
/// front end's checked arguments (funnel::kernels::heat3d_step checks them); an empty region is
/// a no-op.
template <class T>
void heat3d_step(stream_view stream, const field_layout& layout, const T* in, T* out,
                 const box& region, T c, heat3d_variant variant);

}  // namespace funnel::kernels::detail::kokkos
