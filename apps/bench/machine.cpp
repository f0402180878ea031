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

json_value describe_machine(backend_kind backend) {
  json_value m = json_value::object();
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  m.set("host", std::string(host));
  m.set("date", utc_timestamp());
  m.set("backend", to_string(backend));
  m.set("cpus", static_cast<long long>(::sysconf(_SC_NPROCESSORS_ONLN)));

  json_value gpus = json_value::array();
  for (int id = 0; id < cuda_device_count(); ++id) {
    const device_properties p = device(id).properties();
    json_value g = json_value::object();
    g.set("index", id);
    g.set("name", p.name);
    g.set("uuid", p.uuid);
    g.set("sm_count", p.sm_count);
    g.set("memory_bytes", p.total_memory);
    g.set("copy_engines", p.async_engine_count);
    g.set("compute_capability",
          std::to_string(p.compute_major) + "." + std::to_string(p.compute_minor));
    gpus.push_back(std::move(g));
  }
  m.set("gpus", std::move(gpus));
  m.set("gpu_name",
        cuda_device_count() > 0 ? json_value(device(0).properties().name) : json_value("none"));
  m.set("nvidia_driver",
        first_line_of("nvidia-smi --query-gpu=driver_version --format=csv,noheader"));
  m.set("cuda_runtime", cuda_runtime_version());
  m.set("cuda_driver_api", cuda_driver_version());

  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  MPI_Get_library_version(library, &length);
  std::string mpi(library, static_cast<std::size_t>(length));
  if (const auto cut = mpi.find_first_of(",\n"); cut != std::string::npos) mpi.resize(cut);
  m.set("mpi", mpi);
  m.set("mpirun", first_line_of("mpirun --version"));
#if defined(__VERSION__)
  m.set("compiler", std::string(__VERSION__));
#endif
  return m;
}

}  // namespace funnel::bench
