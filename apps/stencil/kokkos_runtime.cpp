// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "kokkos_runtime.hpp"

#include <optional>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#if FUNNEL_HAS_KOKKOS
#include "funnel/kokkos/scope_guard.hpp"
#endif

namespace funnel::stencil {

#if FUNNEL_HAS_KOKKOS

struct kokkos_runtime::impl {
  // The device is the one the binding made current (scope_guard's default).
  std::optional<kokkos::scope_guard> guard;
};

kokkos_runtime::kokkos_runtime(const std::string& kernel, const std::vector<std::string>& arguments)
    : impl_(std::make_unique<impl>()) {
  if (kernel == "kokkos") impl_->guard.emplace(arguments);
}

std::string kokkos_runtime::describe(const std::string& kernel, backend_kind backend) {
  if (kernel != "kokkos") return kernel;
  return kernel + " (" + kokkos::scope_guard::execution_space(backend == backend_kind::cuda) + ")";
}

void kokkos_runtime::check(const std::string& kernel, backend_kind backend) {
  if (kernel == "kokkos" && backend == backend_kind::cuda && !kokkos::scope_guard::has_cuda()) {
    throw unsupported(
        "--kernel 'kokkos' with the cuda backend needs Kokkos built with its CUDA backend; this "
        "one runs on the host only (use --backend host)");
  }
}

#else  // without Kokkos, --kernel kokkos is refused before a run starts (resolve_kernel)

struct kokkos_runtime::impl {};

kokkos_runtime::kokkos_runtime(const std::string&, const std::vector<std::string>&) {}

std::string kokkos_runtime::describe(const std::string& kernel, backend_kind) { return kernel; }

void kokkos_runtime::check(const std::string&, backend_kind) {}

#endif

kokkos_runtime::~kokkos_runtime() = default;

}  // namespace funnel::stencil
