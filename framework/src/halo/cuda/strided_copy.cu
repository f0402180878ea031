// The CUDA kernel behind pack_box / unpack_box / copy_box.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "../strided_copy.hpp"
#include "funnel/error.hpp"

namespace funnel::detail {
namespace {

// One thread per cell over the flattened box, x fastest: consecutive threads touch consecutive
// x, so every row of a y or z face is read and written in full coalesced transactions. (An x
// face is `halo` cells wide: its accesses are strided by nature; it is the smallest face.)
// Grid-stride loop so any box size fits a bounded grid.
template <class T>
__global__ void copy_strided_kernel(T* __restrict__ dst, std::int64_t dst_sy, std::int64_t dst_sz,
                                    const T* __restrict__ src, std::int64_t src_sy,
                                    std::int64_t src_sz, std::int64_t nx, std::int64_t ny,
                                    std::int64_t total) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t id = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       id < total; id += step) {
    const std::int64_t i = id % nx;
    const std::int64_t row = id / nx;
    const std::int64_t j = row % ny;
    const std::int64_t k = row / ny;
    dst[k * dst_sz + j * dst_sy + i] = src[k * src_sz + j * src_sy + i];
  }
}

template <class T>
void launch(cudaStream_t stream, const strided_block& dst, const strided_block& src,
            const index3& extent) {
  constexpr int threads = 256;
  constexpr std::int64_t max_blocks = 4096;  // enough to fill an H100 several times over
  const std::int64_t total = extent[0] * extent[1] * extent[2];
  const auto blocks = static_cast<unsigned>(std::min(max_blocks, (total + threads - 1) / threads));
  copy_strided_kernel<T><<<blocks, threads, 0, stream>>>(
      static_cast<T*>(dst.base), dst.stride_y, dst.stride_z, static_cast<const T*>(src.base),
      src.stride_y, src.stride_z, extent[0], extent[1], total);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::halo::copy_box kernel launch");
}

}  // namespace

void copy_strided_cuda(cuda_stream_handle stream, std::size_t element_size,
                       const strided_block& dst, const strided_block& src, const index3& extent) {
  // Only the element size matters to a copy: float and double move as 4- and 8-byte words.
  if (element_size == 4) {
    launch<std::uint32_t>(stream, dst, src, extent);
  } else {
    launch<std::uint64_t>(stream, dst, src, extent);
  }
}

}  // namespace funnel::detail
