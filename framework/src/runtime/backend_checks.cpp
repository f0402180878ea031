// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/detail/backend_checks.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "funnel/error.hpp"

namespace funnel::detail {

void require_cuda(std::string_view what) {
  if (!cuda_compiled()) {
    throw unsupported(std::string(what) +
                      " needs the CUDA backend, but this funnel build has no CUDA "
                      "(rebuild with FUNNEL_ENABLE_CUDA=ON, or use backend_kind::host)");
  }
  if (cuda_device_count() == 0) {
    throw unsupported(std::string(what) +
                      " needs the CUDA backend, but no CUDA device is visible to this process "
                      "(check CUDA_VISIBLE_DEVICES, or use backend_kind::host)");
  }
}

void expect_same_backend(std::string_view what, backend_kind expected, backend_kind got) {
  if (expected == got) return;
  throw invalid_argument(std::string(what) + ": cannot mix backends: expected a " +
                         to_string(expected) + " object, got a " + to_string(got) + " one");
}

void expect_size(std::string_view what, std::string_view name, std::size_t value) {
  if (value == 0) {
    throw invalid_argument(std::string(what) + ": " + std::string(name) +
                           " = 0; it must be positive");
  }
  // A negative int converted to size_t lands above PTRDIFF_MAX; no real buffer is that large.
  if (value > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max())) {
    throw invalid_argument(std::string(what) + ": " + std::string(name) + " = " +
                           std::to_string(value) + " (" +
                           std::to_string(static_cast<std::ptrdiff_t>(value)) +
                           " as a signed value); it must be positive and at most " +
                           std::to_string(std::numeric_limits<std::ptrdiff_t>::max()));
  }
}

void expect_pointer(std::string_view what, std::string_view name, const void* ptr) {
  if (ptr != nullptr) return;
  throw invalid_argument(std::string(what) + ": " + std::string(name) +
                         " is a null pointer; it must point to valid memory");
}

}  // namespace funnel::detail
