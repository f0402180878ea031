// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The GPU-ordered exchange of one axis as one kernel (see kernel_signals.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "../kernel_signals.hpp"
#include "copy_cells.cuh"
#include "funnel/error.hpp"
#include "funnel/halo/detail/pushed_exchange.cuh"

namespace funnel::detail {
namespace {

using word = device_signal;

// Waits until `*w >= value` (wait_for_signal with the rank's stall words).
__device__ bool wait_for(std::uint64_t* w, std::uint64_t value, int face, const wait_context& a) {
  return wait_for_signal(w, value, face, &a.mine->stalled, a.stall_flag, a.timeout_ns);
}

// The last block of the grid to finish its copies signals and waits (a ticket per axis in the
// rank's own words, reset for the next exchange by that block).
// Copies into another GPU's memory (peer-ordered links) are fenced at system scope, so that the
// neighbour's GPU sees them before it sees the signal.
__device__ void signal_and_wait(const axis_signals& a) {
  if (a.system_scope) {
    __threadfence_system();  // this block's copies are visible before its ticket is
  } else {
    __threadfence();
  }
  const unsigned blocks = gridDim.x * gridDim.y;
  signal_words* mine = a.context.mine;
  if (atomicAdd(&mine->tickets[a.axis], 1U) != blocks - 1) return;
  mine->tickets[a.axis] = 0;
  __threadfence_system();  // every block's copies are visible before the signals
  const std::uint64_t c = mine->exchanges + 1;
  for (int i = 0; i < a.count; ++i)
    word(as_signal(a.signal[i])).store(c, cuda::memory_order_release);
  for (int i = 0; i < a.count; ++i) {
    if (!wait_for(a.wait[i], c, a.wait_face[i], a.context)) break;
  }
  if (a.last) a.context.mine->exchanges = c;
}

// An axis's copies with their plans (made on the host), as the kernel's parameter.
struct planned_axis {
  axis_signals signals;
  copy_rows plans[6];
};

// blockIdx.y picks the copy, as in the strided copy kernel; blockIdx.x strides over its rows.
__global__ void exchange_axis_kernel(planned_axis a) {
  if (blockIdx.y < static_cast<unsigned>(a.signals.count)) {
    copy_cells(a.signals.copies[blockIdx.y], a.plans[blockIdx.y]);
  }
  __syncthreads();
  if (threadIdx.x == 0) signal_and_wait(a.signals);
}

// Exchange c's arrival: "my ghosts of exchange c - 1 are done with" to every neighbour, then
// wait for the neighbours' own. The kernels before it on the stream (every read and write of
// this rank's ghosts since the last exchange) are complete when it starts.
__global__ void arrive_kernel(arrival_signals a) {
  const std::uint64_t done = a.context.mine->exchanges;  // c - 1
  __threadfence_system();                                // a neighbour may be on another GPU
  for (int i = 0; i < a.count; ++i)
    word(as_signal(a.signal[i])).store(done, cuda::memory_order_release);
  for (int i = 0; i < a.count; ++i) {
    if (!wait_for(a.wait[i], done, a.wait_face[i], a.context)) break;
  }
}

// Launches `kernel` at the GPU's highest priority: the exchange is every neighbour's critical
// path, so its blocks go before the updates of the other ranks sharing the GPU (graphs keep the
// priority, see funnel::graph).
template <class... Params, class... Args>
void launch_first(cuda_stream_handle stream, dim3 grid, dim3 block, void (*kernel)(Params...),
                  Args... args) {
  static const int highest = [] {
    int least = 0;
    int greatest = 0;
    FUNNEL_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                    "funnel::halo exchange kernel priority");
    return greatest;
  }();
  cudaLaunchAttribute priority{};
  priority.id = cudaLaunchAttributePriority;
  priority.val.priority = highest;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  config.attrs = &priority;
  config.numAttrs = 1;
  FUNNEL_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, args...),
                  "funnel::halo exchange kernel launch");
}

}  // namespace

void exchange_axis_cuda(cuda_stream_handle stream, std::size_t element_size,
                        const axis_signals& axis) {
  constexpr int threads = 256;
  constexpr std::int64_t max_blocks = 1024;
  FUNNEL_EXPECTS(axis.count >= 1 && axis.count <= 6,
                 "funnel::halo exchange kernel: " + std::to_string(axis.count) + " links");
  planned_axis planned{};
  planned.signals = axis;
  std::int64_t largest = 1;  // threads of the largest copy's plan
  const std::int64_t word_bytes = element_size == 4 ? 4 : 8;
  for (int i = 0; i < axis.count; ++i) {
    planned.plans[i] = plan_copy_rows(axis.copies[i], word_bytes);
    largest = std::max(largest, planned.plans[i].threads());
  }
  const dim3 grid(static_cast<unsigned>(std::min(max_blocks, (largest + threads - 1) / threads)),
                  static_cast<unsigned>(axis.count));
  launch_first(stream, grid, dim3(threads), exchange_axis_kernel, planned);
}

void arrive_cuda(cuda_stream_handle stream, const arrival_signals& arrival) {
  launch_first(stream, dim3(1), dim3(1), arrive_kernel, arrival);
}

}  // namespace funnel::detail
