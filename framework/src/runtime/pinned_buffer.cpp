// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/pinned_buffer.hpp"

#include <unistd.h>

#include <cstdlib>
#include <utility>

#include "funnel/config.hpp"
#include "funnel/runtime/detail/backend_checks.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {
namespace {

std::size_t page_size() {
  const long size = ::sysconf(_SC_PAGESIZE);
  return size > 0 ? static_cast<std::size_t>(size) : std::size_t{4096};
}

void* allocate_host(std::size_t bytes) {
  const std::size_t page = page_size();
  // std::aligned_alloc needs a size that is a multiple of the alignment.
  const std::size_t rounded = (bytes + page - 1) / page * page;
  void* ptr = std::aligned_alloc(page, rounded);
  if (ptr == nullptr) {
    throw out_of_memory(bytes, "pinned host memory", 0, 0, "std::aligned_alloc failed");
  }
  return ptr;
}

#if FUNNEL_HAS_CUDA
void* allocate_cuda(std::size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t status = cudaMallocHost(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky, but leave no error behind for the next call
    throw out_of_memory(bytes, "pinned host memory", 0, 0, "cudaMallocHost failed");
  }
  FUNNEL_CUDA_TRY(status, "funnel::pinned_buffer, " + std::to_string(bytes) + " bytes");
  return ptr;
}
#endif

}  // namespace

pinned_buffer::pinned_buffer(backend_kind backend, std::size_t bytes)
    : backend_(backend), data_(nullptr), size_(0), registered_(false) {
  detail::expect_size("funnel::pinned_buffer", "bytes", bytes);
  if (backend == backend_kind::host) {
    data_ = allocate_host(bytes);
  } else {
    detail::require_cuda("funnel::pinned_buffer(cuda)");
#if FUNNEL_HAS_CUDA
    data_ = allocate_cuda(bytes);
#endif
  }
  size_ = bytes;
}

pinned_buffer pinned_buffer::register_memory(backend_kind backend, void* ptr, std::size_t bytes) {
  constexpr const char* what = "funnel::pinned_buffer::register_memory";
  detail::expect_pointer(what, "ptr", ptr);
  detail::expect_size(what, "bytes", bytes);
  if (backend == backend_kind::cuda) {
    detail::require_cuda(what);
#if FUNNEL_HAS_CUDA
    FUNNEL_CUDA_TRY(cudaHostRegister(ptr, bytes, cudaHostRegisterDefault),
                    std::string(what) + ", " + std::to_string(bytes) + " bytes");
#endif
  }
  return pinned_buffer{backend, ptr, bytes, true};
}

pinned_buffer::~pinned_buffer() { destroy(); }

pinned_buffer::pinned_buffer(pinned_buffer&& other) noexcept
    : backend_(other.backend_),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      registered_(std::exchange(other.registered_, false)) {}

pinned_buffer& pinned_buffer::operator=(pinned_buffer&& other) noexcept {
  if (this != &other) {
    destroy();
    backend_ = other.backend_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    registered_ = std::exchange(other.registered_, false);
  }
  return *this;
}

void pinned_buffer::destroy() noexcept {
  if (data_ == nullptr) return;
  if (backend_ == backend_kind::host) {
    if (!registered_) std::free(data_);  // registered host memory belongs to the caller
  } else {
#if FUNNEL_HAS_CUDA
    if (registered_) {
      FUNNEL_CUDA_LOG(cudaHostUnregister(data_));
    } else {
      FUNNEL_CUDA_LOG(cudaFreeHost(data_));
    }
#endif
  }
  data_ = nullptr;
  size_ = 0;
}

}  // namespace funnel
