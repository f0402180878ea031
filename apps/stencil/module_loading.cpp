// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "module_loading.hpp"

#include <cstdlib>

namespace funnel::stencil {

namespace {
constexpr const char* variable = "CUDA_MODULE_LOADING";
}  // namespace

std::string module_loading() {
  const char* value = std::getenv(variable);
  return value != nullptr ? value : "";
}

std::string settle_module_loading() {
  const std::string chosen = module_loading();
  if (!chosen.empty()) return chosen;
  // An empty value counts as unset (CUDA then takes its default), so it is overwritten.
  return ::setenv(variable, "EAGER", 1) == 0 ? "EAGER" : "";
}

}  // namespace funnel::stencil
