#include "module_loading.hpp"

#include <cstdlib>

namespace funnel::stencil {

std::string settle_module_loading() {
  const char* chosen = std::getenv("CUDA_MODULE_LOADING");
  if (chosen != nullptr && *chosen != '\0') return chosen;
  // An empty value counts as unset (CUDA then takes its default), so it is overwritten.
  return ::setenv("CUDA_MODULE_LOADING", "EAGER", 1) == 0 ? "EAGER" : "";
}

}  // namespace funnel::stencil
