// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
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

std::string version() {
  return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
         "." + std::to_string(KOKKOS_VERSION % 100);
}

}  // namespace

scope_guard::scope_guard(std::optional<int> device) : scope_guard({}, device) {}

scope_guard::scope_guard(const std::vector<std::string>& kokkos_arguments,
                         std::optional<int> device) {
  if (Kokkos::is_initialized()) return;
#if KOKKOS_VERSION >= 30700
  if (Kokkos::is_finalized()) {
    throw unsupported(
        "funnel::kokkos::scope_guard: Kokkos was already finalised in this process and cannot be "
        "initialised again");
  }
#endif
  // Kokkos reads its options from argv (every version); the device goes there too unless the
  // options choose one.
  std::vector<std::string> arguments{"funnel"};
  bool device_given = false;
  for (const auto& argument : kokkos_arguments) {
    arguments.push_back(argument);
    device_given = device_given || argument.rfind("--kokkos-device", 0) == 0 ||
                   argument.rfind("--kokkos-num-devices", 0) == 0 ||
                   argument.rfind("--kokkos-map-device-id-by", 0) == 0;
  }
  const int id = kokkos_device(device);
  if (id >= 0 && !device_given) arguments.push_back("--kokkos-device-id=" + std::to_string(id));
  std::vector<char*> argv;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(arguments.size());
  try {
    Kokkos::initialize(argc, argv.data());
  } catch (const std::exception& e) {
    throw invalid_argument("Kokkos could not read its options (" + std::string(e.what()) +
                           "); see --kokkos-help");
  }
  initialized_here_ = true;
  // Kokkos removes the options it knows from argv: what is left it does not know.
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[static_cast<std::size_t>(i)]).rfind("--kokkos-", 0) != 0) continue;
    const std::string unknown = argv[static_cast<std::size_t>(i)];
    Kokkos::finalize();
    initialized_here_ = false;
    throw invalid_argument("'" + unknown + "' is not an option of Kokkos " + version() +
                           " (see --kokkos-help)");
  }
}

bool scope_guard::has_cuda() noexcept {
#if defined(KOKKOS_ENABLE_CUDA)
  return true;
#else
  return false;
#endif
}

std::string scope_guard::execution_space(bool cuda_stream) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (cuda_stream) return "Kokkos " + version() + " " + Kokkos::Cuda::name();
#else
  (void)cuda_stream;
#endif
  return "Kokkos " + version() + " " + Kokkos::DefaultHostExecutionSpace::name();
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
