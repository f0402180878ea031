// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/device.hpp"

#include <string>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/detail/backend_checks.hpp"
#include "funnel/runtime/detail/gpu_uuid.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>

#include "scoped_current_device.hpp"
#endif

namespace funnel {
namespace {

#if FUNNEL_HAS_CUDA
using detail::scoped_current_device;
#endif

std::string describe(const device& d) {
  std::string text = "device " + std::to_string(d.id());
  try {
    const auto props = d.properties();
    text += " (" + props.name + ", " + props.uuid + ")";
  } catch (const error&) {  // the id alone still names the device
  }
  return text;
}

}  // namespace

device::device(int id) : id_(id) {
  detail::require_cuda("funnel::device");
  const int visible = count();
  FUNNEL_EXPECTS(id >= 0 && id < visible, "funnel::device: device id " + std::to_string(id) +
                                              " is out of range; " + std::to_string(visible) +
                                              " CUDA device(s) visible, ids 0.." +
                                              std::to_string(visible - 1));
}

device device::current() {
  detail::require_cuda("funnel::device::current");
  int id = 0;
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaGetDevice(&id), "funnel::device::current");
#endif
  return device{id};
}

int device::count() noexcept { return cuda_device_count(); }

device_properties device::properties() const {
  device_properties out;
#if FUNNEL_HAS_CUDA
  cudaDeviceProp p{};
  FUNNEL_CUDA_TRY(cudaGetDeviceProperties(&p, id_),
                  "funnel::device::properties, device " + std::to_string(id_));
  out.name = p.name;
  unsigned char uuid[16];
  for (int i = 0; i < 16; ++i) uuid[i] = static_cast<unsigned char>(p.uuid.bytes[i]);
  out.uuid = detail::format_gpu_uuid(uuid);
  out.sm_count = p.multiProcessorCount;
  out.total_memory = p.totalGlobalMem;
  out.l2_cache_bytes = static_cast<std::size_t>(p.l2CacheSize);
  out.async_engine_count = p.asyncEngineCount;
  out.memory_pools_supported = p.memoryPoolsSupported != 0;
  out.concurrent_kernels = p.concurrentKernels != 0;
  out.pci_domain = p.pciDomainID;
  out.pci_bus = p.pciBusID;
  out.pci_device = p.pciDeviceID;
  out.compute_major = p.major;
  out.compute_minor = p.minor;
#endif
  return out;
}

void device::make_current() const {
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaSetDevice(id_),
                  "funnel::device::make_current, device " + std::to_string(id_));
#endif
}

bool device::can_access_peer(const device& peer) const {
  if (peer.id_ == id_) return true;
  int can_access = 0;
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaDeviceCanAccessPeer(&can_access, id_, peer.id_),
                  "funnel::device::can_access_peer, devices " + std::to_string(id_) + " -> " +
                      std::to_string(peer.id_));
#endif
  return can_access != 0;
}

void device::enable_peer_access(const device& peer) const {
  if (peer.id_ == id_) return;
  if (!can_access_peer(peer)) {
    throw unsupported("funnel::device::enable_peer_access: " + describe(*this) + " cannot access " +
                      describe(peer) +
                      " peer-to-peer (cudaDeviceCanAccessPeer says no); exchange data through "
                      "host memory instead");
  }
#if FUNNEL_HAS_CUDA
  const scoped_current_device guard{id_};
  const cudaError_t status = cudaDeviceEnablePeerAccess(peer.id_, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // the runtime records it as the last error; it is success for us
    return;
  }
  FUNNEL_CUDA_TRY(status, "funnel::device::enable_peer_access, device " + std::to_string(id_) +
                              " -> " + std::to_string(peer.id_));
#endif
}

}  // namespace funnel
