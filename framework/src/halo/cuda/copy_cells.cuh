// Internal: the device loop of one strided copy, shared by the copy kernels (strided_copy.cu)
// and the exchange's kernel (kernel_signals.cu).
#pragma once

#include <cstdint>

#include "../strided_copy.hpp"

namespace funnel::detail {

// One thread per cell over the copy's flattened box, x fastest: consecutive threads touch
// consecutive x, so every row of a y or z face is read and written in full coalesced
// transactions. (An x face is `halo` cells wide: its accesses are strided by nature; it is the
// smallest face.) Grid-stride loop over blockIdx.x, so any box size fits a bounded grid.
template <class T>
__device__ void copy_cells(const strided_copy& c, std::int64_t total) {
  const std::int64_t nx = c.extent[0];
  const std::int64_t ny = c.extent[1];
  auto* dst = static_cast<T*>(c.dst.base);
  const auto* src = static_cast<const T*>(c.src.base);
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t id = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       id < total; id += step) {
    const std::int64_t i = id % nx;
    const std::int64_t row = id / nx;
    const std::int64_t j = row % ny;
    const std::int64_t k = row / ny;
    dst[k * c.dst.stride_z + j * c.dst.stride_y + i] =
        src[k * c.src.stride_z + j * c.src.stride_y + i];
  }
}

}  // namespace funnel::detail
