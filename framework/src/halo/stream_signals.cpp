// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "stream_signals.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>

#include "funnel/config.hpp"
#include "funnel/error.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>
#endif

namespace funnel::detail {
namespace {

#if FUNNEL_HAS_CUDA
using batch_mem_op_fn = CUresult (*)(CUstream, unsigned int, CUstreamBatchMemOpParams*,
                                     unsigned int);

// The driver's cuStreamBatchMemOp (the v2 operations, CUDA 12 and later), or null when the
// driver has none.
batch_mem_op_fn batch_mem_op() {
  static batch_mem_op_fn fn = [] {
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuStreamBatchMemOp", &address, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return static_cast<batch_mem_op_fn>(nullptr);
    }
    return reinterpret_cast<batch_mem_op_fn>(address);
  }();
  return fn;
}
#endif

// Host waits: spin a little (a neighbour on another core answers within microseconds), then
// sleep in growing steps so that ranks oversubscribing the cores do not starve each other.
bool host_wait(const std::uint64_t* word, std::uint64_t value,
               std::chrono::steady_clock::time_point deadline) {
  for (int spin = 0; spin < 256; ++spin) {
    if (load_signal(word) >= value) return true;
  }
  auto pause = std::chrono::microseconds(5);
  while (load_signal(word) < value) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
  return true;
}

}  // namespace

std::uint64_t load_signal(const std::uint64_t* word) noexcept {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

bool stream_signals_supported(backend_kind backend) {
  if (backend == backend_kind::host) return true;
#if FUNNEL_HAS_CUDA
  // Since CUDA 12 the driver supports stream memory operations on every device it runs
  // (the v1 capability attributes are deprecated); the entry point says whether it has them.
  return batch_mem_op() != nullptr;
#else
  return false;
#endif
}

std::size_t enqueue_signals(stream_view stream, const std::vector<signal_op>& ops,
                            std::chrono::steady_clock::time_point deadline) {
  if (ops.empty()) return 0;
  if (!stream.is_cuda()) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const signal_op& op = ops[i];
      if (op.what == signal_op::kind::write) {
        __atomic_store_n(op.word, op.value, __ATOMIC_RELEASE);
      } else if (!host_wait(op.word, op.value, deadline)) {
        return i;
      }
    }
    return ops.size();
  }
#if FUNNEL_HAS_CUDA
  const batch_mem_op_fn fn = batch_mem_op();
  FUNNEL_EXPECTS(fn != nullptr,
                 "funnel: the CUDA driver offers no stream memory operations (cuStreamBatchMemOp)");
  std::vector<CUstreamBatchMemOpParams> params(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    CUstreamBatchMemOpParams& p = params[i];
    const auto address = reinterpret_cast<CUdeviceptr>(ops[i].word);
    if (ops[i].what == signal_op::kind::wait) {
      p.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
      p.waitValue.address = address;
      p.waitValue.value64 = ops[i].value;
      p.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
    } else {
      // v2 writes are fenced after the stream's earlier work (its copies into the neighbour).
      p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
      p.writeValue.address = address;
      p.writeValue.value64 = ops[i].value;
      p.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
    }
  }
  const CUresult result = fn(static_cast<CUstream>(stream.native_handle()),
                             static_cast<unsigned int>(params.size()), params.data(), 0);
  if (result != CUDA_SUCCESS) {
    const std::string code = "CUresult " + std::to_string(static_cast<int>(result));
    throw cuda_error("CUDA driver error " + code + " in cuStreamBatchMemOp (" +
                         std::to_string(ops.size()) + " halo signal operations)",
                     static_cast<int>(result), code);
  }
  return ops.size();
#else
  (void)deadline;
  throw unsupported("funnel: halo signals on a CUDA stream, but CUDA is not compiled in");
#endif
}

}  // namespace funnel::detail
