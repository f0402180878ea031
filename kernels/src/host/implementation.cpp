// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/kernels/implementation.hpp"

#include <string>

#include "detail/backends.hpp"
#include "funnel/error.hpp"

namespace funnel::kernels {

std::string to_string(implementation impl) {
  switch (impl) {
    case implementation::cuda:
      return "cuda";
    case implementation::host:
      return "host";
    case implementation::kokkos:
      return "kokkos";
  }
  return "unknown";
}

implementation parse_implementation(std::string_view name) {
  if (name == "cuda") return implementation::cuda;
  if (name == "host") return implementation::host;
  if (name == "kokkos") return implementation::kokkos;
  throw invalid_argument("unknown kernel implementation '" + std::string(name) +
                         "': use cuda|host|kokkos");
}

implementation default_implementation(stream_view stream) noexcept {
  return stream.is_cuda() ? implementation::cuda : implementation::host;
}

bool implementation_compiled(implementation impl) noexcept {
  switch (impl) {
    case implementation::cuda:
      return FUNNEL_KERNELS_WITH_CUDA != 0;
    case implementation::host:
      return true;
    case implementation::kokkos:
      return FUNNEL_KERNELS_WITH_KOKKOS != 0;
  }
  return false;
}

}  // namespace funnel::kernels
