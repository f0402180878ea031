// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/kokkos/execution_space.hpp"

#include <Kokkos_Core.hpp>
#include <mutex>
#include <unordered_map>

namespace funnel::kokkos {

#if defined(KOKKOS_ENABLE_CUDA)
namespace {

// Kokkos::Cuda instances by stream handle. Building an instance allocates Kokkos' per-instance
// scratch, too costly for every kernel call; instances must also be gone before
// Kokkos::finalize, hence the finalize hook that empties the cache.
class instance_cache {
 public:
  Kokkos::Cuda get(cudaStream_t stream) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!hook_installed_) {
      Kokkos::push_finalize_hook([this] { clear(); });
      hook_installed_ = true;
    }
    auto found = instances_.find(stream);
    if (found == instances_.end()) found = instances_.emplace(stream, Kokkos::Cuda(stream)).first;
    return found->second;
  }

 private:
  void clear() {
    const std::lock_guard<std::mutex> lock(mutex_);
    instances_.clear();
    hook_installed_ = false;
  }

  std::mutex mutex_;
  std::unordered_map<cudaStream_t, Kokkos::Cuda> instances_;
  bool hook_installed_ = false;
};

instance_cache& cache() {
  static instance_cache instances;
  return instances;
}

}  // namespace

stream_execution_space execution_space_for(stream_view stream) {
  FUNNEL_EXPECTS(stream.is_cuda(),
                 "funnel::kokkos::execution_space_for: the host stream has no Kokkos::Cuda "
                 "instance; use host_execution_space() or with_execution_space()");
  return cache().get(stream.native_handle());
}

#else

stream_execution_space execution_space_for(stream_view stream) {
  if (stream.is_cuda()) {
    throw unsupported(
        "funnel::kokkos::execution_space_for: a CUDA stream needs Kokkos with its CUDA backend; "
        "this Kokkos has host backends only");
  }
  return host_execution_space();
}

#endif

}  // namespace funnel::kokkos
