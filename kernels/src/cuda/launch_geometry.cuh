// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Launch shapes and small device helpers shared by the CUDA kernels of funnel::kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::kernels::detail::cuda {

// 32 threads along x give each warp one 128-byte line of floats (coalesced); 8 rows along y keep
// a block's y-neighbour reads inside the rows its own warps load (L1 hits).
constexpr int block_x = 32;
constexpr int block_y = 8;
constexpr int block_threads = block_x * block_y;

// A region and the strides of the array it lives in, passed by value to the kernels. x counts
// memory columns from the start of a row's slot (the layout's lead() included), so that a column
// that is a multiple of a vector's width is aligned for it in an aligned array.
struct region_geometry {
  std::int64_t lo[3];
  std::int64_t hi[3];
  std::int64_t sy;  // elements between (i, j, k) and (i, j + 1, k)
  std::int64_t sz;  // elements between (i, j, k) and (i, j, k + 1)
};

inline region_geometry make_geometry(const field_layout& layout, const box& region) {
  region_geometry g{};
  for (int axis = 0; axis < 3; ++axis) {
    g.lo[axis] = region.lo[axis];
    g.hi[axis] = region.hi[axis];
  }
  g.lo[0] += layout.lead();
  g.hi[0] += layout.lead();
  g.sy = layout.row_pitch();
  g.sz = layout.plane_pitch();
  return g;
}

inline unsigned blocks_for(std::int64_t cells, int per_block) {
  return static_cast<unsigned>((cells + per_block - 1) / per_block);
}

inline cudaStream_t native(stream_view stream) { return stream.native_handle(); }

}  // namespace funnel::kernels::detail::cuda
