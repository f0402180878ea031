// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The CUDA kernel behind pack_box / unpack_box / copy_box.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "../strided_copy.hpp"
#include "copy_cells.cuh"
#include "funnel/error.hpp"

namespace funnel::detail {
namespace {

using batch_copies = std::array<strided_copy, max_batch>;

// The copies of a batch and their plans, passed by value (kernel parameter space).
struct batch {
  strided_copy copies[max_batch];
  copy_rows plans[max_batch];
};

// blockIdx.y picks the copy.
__global__ void copy_strided_batch_kernel(batch b) {
  copy_cells(b.copies[blockIdx.y], b.plans[blockIdx.y]);
}

// `copies` count words of `word` bytes.
void launch_batch(cudaStream_t stream, const strided_copy* copies, int count, std::int64_t word) {
  constexpr int threads = 256;
  constexpr std::int64_t max_blocks = 4096;
  batch b{};
  std::int64_t largest = 0;  // threads of the largest copy's plan
  int used = 0;
  for (int c = 0; c < count; ++c) {
    const copy_rows plan = plan_copy_rows(copies[c], word);
    if (plan.threads() == 0) continue;
    b.copies[used] = copies[c];
    b.plans[used] = plan;
    largest = std::max(largest, plan.threads());
    ++used;
  }
  if (used == 0) return;
  const dim3 grid(static_cast<unsigned>(std::min(max_blocks, (largest + threads - 1) / threads)),
                  static_cast<unsigned>(used));
  copy_strided_batch_kernel<<<grid, threads, 0, stream>>>(b);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::halo batched copy kernel launch");
}

}  // namespace

void copy_strided_batch_cuda(cuda_stream_handle stream, std::size_t element_size,
                             const strided_copy* copies, int count) {
  // Only the element size matters to a copy: the x extent and the strides are counted in words
  // of 8, 4 or 1 bytes, the widest that divides an element (float and double one word each);
  // the plan then moves them in units as wide as the runs and addresses allow.
  const std::size_t word = element_size % 8 == 0 ? 8 : element_size % 4 == 0 ? 4 : 1;
  const auto words = static_cast<std::int64_t>(element_size / word);
  batch_copies in_words{};
  for (int c = 0; c < count; ++c) {
    strided_copy w = copies[c];
    for (strided_block* side : {&w.dst, &w.src}) {
      side->stride_y *= words;
      side->stride_z *= words;
    }
    w.extent[0] *= words;
    in_words[static_cast<std::size_t>(c)] = w;
  }
  launch_batch(stream, in_words.data(), count, static_cast<std::int64_t>(word));
}

void copy_strided_cuda(cuda_stream_handle stream, std::size_t element_size,
                       const strided_block& dst, const strided_block& src, const index3& extent) {
  const strided_copy one{dst, src, extent};
  copy_strided_batch_cuda(stream, element_size, &one, 1);
}

}  // namespace funnel::detail
