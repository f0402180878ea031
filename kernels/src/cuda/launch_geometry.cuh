// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Launch shapes and small device helpers shared by the CUDA kernels of funnel::kernels.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/error.hpp"
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

// gridDim.y and gridDim.z stop at 65535, which a tall region reaches (a 2D box of 2.1 million
// rows, in 8-row blocks of 4 rows a thread). Launches of more row blocks fold them into z:
// the block's row is block_row(); blocks past the last row do nothing. Below the limit z is 1
// and the launch is the one the kernel was tuned with.
constexpr std::int64_t max_grid_yz = 65535;

/// A grid of `blocks_x` by `row_blocks` blocks, the rows folded into y and z.
inline dim3 grid_with_rows(unsigned blocks_x, std::int64_t row_blocks, const char* kernel) {
  // The fewest z that fits, then rows spread evenly over it: at most z - 1 idle blocks.
  const std::int64_t rows = std::max<std::int64_t>(row_blocks, 1);
  const std::int64_t z = (rows + max_grid_yz - 1) / max_grid_yz;
  FUNNEL_EXPECTS(z <= max_grid_yz, std::string(kernel) + ": " + std::to_string(row_blocks) +
                                       " blocks of rows exceed the 65535 x 65535 of one launch");
  const std::int64_t y = (rows + z - 1) / z;
  return dim3(blocks_x, static_cast<unsigned>(y), static_cast<unsigned>(z));
}

/// The row of blocks this block covers, in a grid made by grid_with_rows.
__device__ inline std::int64_t block_row() {
  return static_cast<std::int64_t>(blockIdx.z) * gridDim.y + blockIdx.y;
}

}  // namespace funnel::kernels::detail::cuda
