#include "funnel/kokkos/scope_guard.hpp"

#include <Kokkos_Core.hpp>
#include <exception>
#include <string>

#include "funnel/config.hpp"
#include "funnel/error.hpp"

#if FUNNEL_HAS_CUDA && defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace funnel::kokkos {
namespace {

// The device Kokkos' CUDA backend should use: the caller's choice, else the device the binding
// made current, so Kokkos shares the context funnel holds. -1 lets Kokkos decide (no CUDA).
int kokkos_device(std::optional<int> device) {
  if (device) return *device;
#if FUNNEL_HAS_CUDA && defined(KOKKOS_ENABLE_CUDA)
  int current = 0;
  FUNNEL_CUDA_TRY(cudaGetDevice(&current), "funnel::kokkos::scope_guard: current device");
  return current;
#else
  return -1;
#endif
}

}  // namespace

scope_guard::scope_guard(std::optional<int> device) {
  if (Kokkos::is_initialized()) return;
#if KOKKOS_VERSION >= 30700
  if (Kokkos::is_finalized()) {
    throw unsupported(
        "funnel::kokkos::scope_guard: Kokkos was already finalised in this process and cannot be "
        "initialised again");
  }
  Kokkos::InitializationSettings settings;
  const int id = kokkos_device(device);
  if (id >= 0) settings.set_device_id(id);
  Kokkos::initialize(settings);
#else
  Kokkos::InitArguments arguments;
  arguments.device_id = kokkos_device(device);
  Kokkos::initialize(arguments);
#endif
  initialized_here_ = true;
}

scope_guard::~scope_guard() {
  if (!initialized_here_ || !Kokkos::is_initialized()) return;
  try {
    Kokkos::finalize();
  } catch (const std::exception& e) {
    detail::log_error(std::string("funnel::kokkos::scope_guard: Kokkos::finalize failed: ") +
                      e.what());
  } catch (...) {
    detail::log_error("funnel::kokkos::scope_guard: Kokkos::finalize failed");
  }
}

}  // namespace funnel::kokkos
