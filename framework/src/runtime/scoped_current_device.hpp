// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal (CUDA builds): makes a device the calling thread's current one for a scope and puts
// the caller's back after, for calls that act on the current device (peer access, cudaMalloc).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "funnel/error.hpp"

namespace funnel::detail {

class scoped_current_device {
 public:
  explicit scoped_current_device(int id) {
    FUNNEL_CUDA_TRY(cudaGetDevice(&previous_), "funnel::device");
    if (previous_ != id) FUNNEL_CUDA_TRY(cudaSetDevice(id), "funnel::device " + std::to_string(id));
  }
  ~scoped_current_device() { FUNNEL_CUDA_LOG(cudaSetDevice(previous_)); }
  scoped_current_device(const scoped_current_device&) = delete;
  scoped_current_device& operator=(const scoped_current_device&) = delete;
  scoped_current_device(scoped_current_device&&) = delete;
  scoped_current_device& operator=(scoped_current_device&&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace funnel::detail
