// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "machine.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "device_support.hpp"
#include "funnel/runtime/device.hpp"

namespace funnel::bench {

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string first_line_of(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return "";
  char line[512] = {0};
  const bool got = std::fgets(line, sizeof(line), pipe) != nullptr;
  ::pclose(pipe);
  if (!got) return "";
  std::string out = line;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) {
    out.pop_back();
  }
  return out;
}

json describe_machine(backend_kind backend) {
  json m = json::object();
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  m["host"] = std::string(host);
  m["date"] = utc_timestamp();
  m["backend"] = to_string(backend);
  m["cpus"] = static_cast<long long>(::sysconf(_SC_NPROCESSORS_ONLN));

  json gpus = json::array();
  for (int id = 0; id < cuda_device_count(); ++id) {
    const device_properties p = device(id).properties();
    json g = json::object();
    g["index"] = id;
    g["name"] = p.name;
    g["uuid"] = p.uuid;
    g["sm_count"] = p.sm_count;
    g["memory_bytes"] = p.total_memory;
    g["copy_engines"] = p.async_engine_count;
    g["compute_capability"] =
        std::to_string(p.compute_major) + "." + std::to_string(p.compute_minor);
    gpus.push_back(std::move(g));
  }
  m["gpus"] = std::move(gpus);
  m["gpu_name"] = cuda_device_count() > 0 ? json(device(0).properties().name) : json("none");
  m["nvidia_driver"] = first_line_of("nvidia-smi --query-gpu=driver_version --format=csv,noheader");
  m["cuda_runtime"] = cuda_runtime_version();
  m["cuda_driver_api"] = cuda_driver_version();

  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  MPI_Get_library_version(library, &length);
  std::string mpi(library, static_cast<std::size_t>(length));
  if (const auto cut = mpi.find_first_of(",\n"); cut != std::string::npos) mpi.resize(cut);
  m["mpi"] = mpi;
  m["mpirun"] = first_line_of("mpirun --version");
#if defined(__VERSION__)
  m["compiler"] = std::string(__VERSION__);
#endif
  return m;
}

}  // namespace funnel::bench
