// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the one operation behind pack_box / unpack_box / copy_box, for any element size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "funnel/config.hpp"
#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::detail {

/// One side of a strided 3D copy: element (i, j, k) is at
/// `base + (k * stride_z + j * stride_y + i) * element_size`.
struct strided_block {
  void* base = nullptr;
  std::int64_t stride_y = 0;
  std::int64_t stride_z = 0;
};

/// `region` of a field with `layout` at `field`, as a strided block (region checked against the
/// allocated array).
strided_block field_block(void* field, const field_layout& layout, const box& region,
                          std::size_t element_size);
/// A dense buffer holding `extent` cells, x fastest.
strided_block dense_block(void* buffer, const index3& extent);

/// Copies `extent` cells of `element_size` bytes each from `src` to `dst` on `stream` (kernel
/// on CUDA, now on host).
void copy_strided(stream_view stream, std::size_t element_size, const strided_block& dst,
                  const strided_block& src, const index3& extent);

/// One copy of a batch.
struct strided_copy {
  strided_block dst;
  strided_block src;
  index3 extent{0, 0, 0};
};

/// The most copies one batch holds.
constexpr int max_batch = 6;

/// Several copies on `stream` at once: one kernel launch on CUDA (a step of a small box costs
/// tens of microseconds, and each launch is a few of them). At most max_batch copies.
void copy_strided_batch(stream_view stream, std::size_t element_size, const strided_copy* copies,
                        int count);

#if FUNNEL_HAS_CUDA
/// The CUDA kernel launch (strided_copy.cu).
void copy_strided_cuda(cuda_stream_handle stream, std::size_t element_size,
                       const strided_block& dst, const strided_block& src, const index3& extent);
/// The batched kernel launch (strided_copy.cu).
void copy_strided_batch_cuda(cuda_stream_handle stream, std::size_t element_size,
                             const strided_copy* copies, int count);
#endif

}  // namespace funnel::detail
