// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the device loop of one strided copy, shared by the copy kernels (strided_copy.cu)
// and the exchange's kernel (kernel_signals.cu). The copy runs as the rows of its plan
// (copy_rows.hpp, made on the host and passed with the copy): each piece of a row is `lanes`
// consecutive threads, each moving units_per_lane units spaced `lanes` apart, all loaded before any
// is stored; a grid-stride loop over the pieces, so any copy fits a bounded grid. The callers
// launch blocks of 256 threads (lanes, a power of two up to 32, must divide the block) and at
// most 4096 blocks (2^20 threads: the 32-bit path's bound below).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "../copy_rows.hpp"
#include "../strided_copy.hpp"

namespace funnel::detail {

// The pieces of plan `p` that this thread takes; I counts pieces and rows (32 bits where they
// fit: a 64-bit division is a long instruction sequence on the GPU).
template <class V, class I>
__device__ void copy_row_pieces(const copy_rows& p, const void* src_base, void* dst_base) {
  const auto lanes = static_cast<I>(p.lanes);
  const int lanes_shift = __ffs(p.lanes) - 1;  // lanes is a power of two dividing the block
  const auto pieces = static_cast<I>(p.pieces);
  const auto rows_y = static_cast<I>(p.rows_y);
  const auto total = static_cast<I>(p.rows) * pieces;
  const I lane = threadIdx.x & (lanes - 1);
  const I stride = (static_cast<I>(gridDim.x) * blockDim.x) >> lanes_shift;
  const auto* src = static_cast<const V*>(src_base);
  auto* dst = static_cast<V*>(dst_base);
  for (I id = (static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x) >> lanes_shift; id < total;
       id += stride) {
    const I row = pieces == 1 ? id : id / pieces;
    const I piece = id - row * pieces;
    const I k = rows_y == static_cast<I>(p.rows) ? 0 : row / rows_y;
    const I j = row - k * rows_y;
    const V* from =
        src + (static_cast<std::int64_t>(k) * p.src_sz + static_cast<std::int64_t>(j) * p.src_sy);
    V* to =
        dst + (static_cast<std::int64_t>(k) * p.dst_sz + static_cast<std::int64_t>(j) * p.dst_sy);
    const std::int64_t first = static_cast<std::int64_t>(piece) * lanes * units_per_lane + lane;
    V v[units_per_lane];
#pragma unroll
    for (int u = 0; u < units_per_lane; ++u) {
      const std::int64_t i = first + std::int64_t{u} * lanes;
      if (i < p.row_units) v[u] = from[i];
    }
#pragma unroll
    for (int u = 0; u < units_per_lane; ++u) {
      const std::int64_t i = first + std::int64_t{u} * lanes;
      if (i < p.row_units) to[i] = v[u];
    }
  }
}

template <class V>
__device__ void copy_row_pieces(const copy_rows& p, const void* src, void* dst) {
  // 32 bits while the pieces and one grid stride past them fit (the grid is at most 2^20
  // threads).
  if (p.rows * p.pieces <= std::numeric_limits<std::int32_t>::max()) {
    copy_row_pieces<V, std::uint32_t>(p, src, dst);
  } else {
    copy_row_pieces<V, std::uint64_t>(p, src, dst);
  }
}

// Copies `c` as planned by `p` (plan_copy_rows).
__device__ inline void copy_cells(const strided_copy& c, const copy_rows& p) {
  if (p.rows == 0) return;
  switch (p.unit) {
    case 16:
      copy_row_pieces<uint4>(p, c.src.base, c.dst.base);
      break;
    case 8:
      copy_row_pieces<uint2>(p, c.src.base, c.dst.base);
      break;
    case 4:
      copy_row_pieces<std::uint32_t>(p, c.src.base, c.dst.base);
      break;
    case 2:
      copy_row_pieces<std::uint16_t>(p, c.src.base, c.dst.base);
      break;
    default:
      copy_row_pieces<std::uint8_t>(p, c.src.base, c.dst.base);
      break;
  }
}

}  // namespace funnel::detail
