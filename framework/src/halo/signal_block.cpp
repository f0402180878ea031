// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "signal_block.hpp"

#include <cstring>
#include <utility>

#include "funnel/config.hpp"
#include "funnel/error.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel::detail {

signal_block::signal_block(backend_kind backend, memory_pool& pool) : backend_(backend) {
  if (backend == backend_kind::host) {
    host_words_ = device_buffer<signal_words>(pool, stream_view::host(), 1);
    mine_ = host_words_.data();
    std::memset(mine_, 0, sizeof(signal_words));
    return;
  }
#if FUNNEL_HAS_CUDA
  void* block = nullptr;
  FUNNEL_CUDA_TRY(cudaMalloc(&block, sizeof(signal_words)), "halo_exchange: signal words");
  mine_ = static_cast<signal_words*>(block);
  FUNNEL_CUDA_TRY(cudaMemset(mine_, 0, sizeof(signal_words)), "halo_exchange: signal words");
  void* flag = nullptr;
  FUNNEL_CUDA_TRY(cudaHostAlloc(&flag, sizeof(std::uint32_t), cudaHostAllocMapped),
                  "halo_exchange: stall word");
  stall_host_ = static_cast<std::uint32_t*>(flag);
  *stall_host_ = 0;
  void* on_device = nullptr;
  FUNNEL_CUDA_TRY(cudaHostGetDevicePointer(&on_device, flag, 0), "halo_exchange: stall word");
  stall_device_ = static_cast<std::uint32_t*>(on_device);
#else
  throw unsupported("halo_exchange: signal words on the cuda backend, but CUDA is not compiled in");
#endif
}

signal_block::~signal_block() { reset(); }

signal_block::signal_block(signal_block&& other) noexcept
    : backend_(other.backend_),
      mine_(std::exchange(other.mine_, nullptr)),
      stall_host_(std::exchange(other.stall_host_, nullptr)),
      stall_device_(std::exchange(other.stall_device_, nullptr)),
      host_words_(std::move(other.host_words_)),
      mapped_(std::move(other.mapped_)) {
  other.mapped_.clear();
}

signal_block& signal_block::operator=(signal_block&& other) noexcept {
  if (this != &other) {
    reset();
    backend_ = other.backend_;
    mine_ = std::exchange(other.mine_, nullptr);
    stall_host_ = std::exchange(other.stall_host_, nullptr);
    stall_device_ = std::exchange(other.stall_device_, nullptr);
    host_words_ = std::move(other.host_words_);
    mapped_ = std::move(other.mapped_);
    other.mapped_.clear();
  }
  return *this;
}

void signal_block::reset() noexcept {
  release();
#if FUNNEL_HAS_CUDA
  if (backend_ == backend_kind::cuda && mine_ != nullptr) FUNNEL_CUDA_LOG(cudaFree(mine_));
  if (stall_host_ != nullptr) FUNNEL_CUDA_LOG(cudaFreeHost(stall_host_));
#endif
  mine_ = nullptr;
  stall_host_ = nullptr;
  stall_device_ = nullptr;
}

export_bytes signal_block::export_handle(const memory_pool& pool) const {
  export_bytes bytes{};
  if (backend_ == backend_kind::host) {
    // The words are an allocation of the pool: the pool's own export data names them.
    const ipc_pointer p = pool.export_pointer(mine_);
    std::memcpy(bytes.data(), p.bytes, bytes.size());
    return bytes;
  }
#if FUNNEL_HAS_CUDA
  cudaIpcMemHandle_t handle{};
  FUNNEL_CUDA_TRY(cudaIpcGetMemHandle(&handle, mine_), "halo_exchange: exporting signal words");
  static_assert(sizeof handle <= sizeof bytes, "a CUDA IPC handle fits the export data");
  std::memcpy(bytes.data(), &handle, sizeof handle);
#endif
  return bytes;
}

signal_words* signal_block::map(int rank, const export_bytes& handle, imported_fields& pool) {
  auto it = mapped_.find(rank);
  if (it != mapped_.end()) return it->second;
  signal_words* words = nullptr;
  if (backend_ == backend_kind::host) {
    words = static_cast<signal_words*>(pool.map(handle));
  } else {
#if FUNNEL_HAS_CUDA
    cudaIpcMemHandle_t h{};
    std::memcpy(&h, handle.data(), sizeof h);
    void* ptr = nullptr;
    FUNNEL_CUDA_TRY(cudaIpcOpenMemHandle(&ptr, h, cudaIpcMemLazyEnablePeerAccess),
                    "halo_exchange: mapping rank " + std::to_string(rank) + "'s signal words");
    words = static_cast<signal_words*>(ptr);
#endif
  }
  mapped_.emplace(rank, words);
  return words;
}

void signal_block::release() noexcept {
#if FUNNEL_HAS_CUDA
  if (backend_ == backend_kind::cuda) {
    for (auto& [rank, words] : mapped_) FUNNEL_CUDA_LOG(cudaIpcCloseMemHandle(words));
  }
#endif
  // Host mappings belong to the imported pool (imported_fields), released with it.
  mapped_.clear();
}

}  // namespace funnel::detail
