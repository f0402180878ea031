// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pushed_exchange.hpp
 * @brief An exchange done by the update kernel itself: it writes the cells of its faces straight
 * into the neighbours' ghosts and signals them when its last block is done.
 */
#pragma once

#include <cstdint>

namespace funnel {

/**
 * @brief One face of a pushed exchange.
 *
 * The cells of this rank inside [lo, hi) (coordinates of its allocated array, ghosts counted
 * from 0, as field_layout::index) go to the neighbour: cell (i, j, k) to
 * `dst + (k - lo[2]) * dst_sz + (j - lo[1]) * dst_sy + (i - lo[0])` elements.
 */
struct pushed_face {
  std::int64_t lo[3] = {0, 0, 0};   ///< first cell of this rank's boundary layer on the face
  std::int64_t hi[3] = {0, 0, 0};   ///< one past its last cell
  void* dst = nullptr;              ///< the neighbour's ghost that cell lo goes to
  std::int64_t dst_sy = 0;          ///< elements between rows of the neighbour's array
  std::int64_t dst_sz = 0;          ///< elements between its planes
  std::uint64_t* signal = nullptr;  ///< the neighbour's word for this face, set to the count
  std::uint64_t* wait = nullptr;    ///< this rank's word the neighbour sets in turn
  int face = -1;                    ///< 2 * axis + side (what a stall report names)
};

/**
 * @brief What an update kernel needs to do an exchange while it updates (see
 * halo_exchange::push_next).
 *
 * Every block of the kernel pushes the face cells it computes (push_value in
 * funnel/halo/detail/pushed_exchange.cuh); the blocks that hold face cells end with
 * pushed_block_done, and the last of them writes the exchange count into every neighbour's word,
 * then waits (bounded by the stall timeout) until every neighbour has written this rank's. Face
 * ghosts only: edge and corner ghosts are not written, so it serves stencils that read face
 * neighbours only (heat3d's seven points). The count comes from device memory, so a graph of such
 * kernels can be launched again.
 */
struct pushed_exchange {
  pushed_face faces[6];                 ///< faces used: count
  int count = 0;                        ///< faces with a neighbour
  std::uint64_t* exchanges = nullptr;   ///< this rank's count of exchanges (device memory)
  std::uint32_t* ticket = nullptr;      ///< blocks done so far (reset by the last)
  std::uint32_t* stalled = nullptr;     ///< face + 1 of a wait that gave up (device memory)
  std::uint32_t* stall_flag = nullptr;  ///< the same, in pinned host memory the watchdog reads
  std::uint64_t timeout_ns = 0;         ///< how long the last block may wait
};

}  // namespace funnel
