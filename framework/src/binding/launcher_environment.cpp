// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/binding/launcher_environment.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>

#include "funnel/error.hpp"

namespace funnel {
namespace {

// A non-negative int from variable `name`, or `fallback` when it is unset.
int read_count(const std::function<const char*(const char*)>& lookup, const char* name,
               int fallback) {
  const char* text = lookup(name);
  if (text == nullptr) return fallback;
  const std::string value{text};
  char* end = nullptr;
  errno = 0;
  const long parsed = std::strtol(value.c_str(), &end, 10);
  const bool ok = !value.empty() && value.front() != '-' && value.front() != '+' &&
                  end == value.c_str() + value.size() && errno == 0 && parsed <= INT_MAX;
  FUNNEL_EXPECTS(ok, std::string{name} + "='" + value +
                         "' is not allowed: funnel-run sets it to a non-negative integer");
  return static_cast<int>(parsed);
}

std::string read_string(const std::function<const char*(const char*)>& lookup, const char* name) {
  const char* text = lookup(name);
  return text == nullptr ? std::string{} : std::string{text};
}

}  // namespace

launcher_environment launcher_environment::parse(
    const std::function<const char*(const char*)>& lookup) {
  launcher_environment env;
  env.from_funnel_run = read_string(lookup, "FUNNEL_LAUNCHER") == "funnel-run";
  env.local_rank = read_count(lookup, "FUNNEL_LOCAL_RANK", -1);
  env.local_size = read_count(lookup, "FUNNEL_LOCAL_SIZE", -1);
  FUNNEL_EXPECTS(
      env.local_rank < 0 || env.local_size < 0 || env.local_rank < env.local_size,
      "FUNNEL_LOCAL_RANK=" + std::to_string(env.local_rank) +
          " is not allowed: it must be below FUNNEL_LOCAL_SIZE=" + std::to_string(env.local_size));
  env.gpu_uuid = read_string(lookup, "FUNNEL_GPU_UUID");
  env.gpu_index = read_count(lookup, "FUNNEL_GPU_INDEX", -1);
  env.ranks_on_gpu = read_count(lookup, "FUNNEL_RANKS_ON_GPU", 0);
  const std::string mps = read_string(lookup, "FUNNEL_MPS");
  FUNNEL_EXPECTS(mps.empty() || mps == "on" || mps == "off",
                 "FUNNEL_MPS='" + mps + "' is not allowed: funnel-run sets it to on or off");
  env.mps = mps == "on";
  env.mps_pipe = read_string(lookup, "FUNNEL_MPS_PIPE");
  env.cuda_mps_pipe_directory = read_string(lookup, "CUDA_MPS_PIPE_DIRECTORY");
  return env;
}

launcher_environment launcher_environment::from_process() {
  return parse([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace funnel
