// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include <string>
#include <string_view>

#include "funnel/error.hpp"
#include "funnel/halo/halo_method.hpp"
#include "funnel/halo/halo_signals.hpp"
#include "funnel/halo/halo_transport.hpp"
#include "funnel/halo/neighbor_path.hpp"

namespace funnel {

std::string to_string(halo_method method) {
  switch (method) {
    case halo_method::automatic:
      return "auto";
    case halo_method::ipc:
      return "ipc";
    case halo_method::mpi:
      return "mpi";
  }
  return "unknown";
}

halo_method parse_halo_method(std::string_view text) {
  for (halo_method m : {halo_method::automatic, halo_method::ipc, halo_method::mpi}) {
    if (text == to_string(m)) return m;
  }
  throw invalid_argument("halo method '" + std::string(text) + "' is not auto, ipc or mpi");
}

std::string to_string(halo_signals signals) {
  switch (signals) {
    case halo_signals::automatic:
      return "auto";
    case halo_signals::kernel:
      return "kernel";
    case halo_signals::stream:
      return "stream";
  }
  return "unknown";
}

halo_signals parse_halo_signals(std::string_view text) {
  for (halo_signals s : {halo_signals::automatic, halo_signals::kernel, halo_signals::stream}) {
    if (text == to_string(s)) return s;
  }
  throw invalid_argument("halo signals '" + std::string(text.substr(0, 40)) +
                         "' is not auto, kernel or stream");
}

std::string to_string(halo_transport transport) {
  switch (transport) {
    case halo_transport::local:
      return "local";
    case halo_transport::mpi_host:
      return "mpi-host";
    case halo_transport::mpi_cuda_aware:
      return "mpi-cuda-aware";
    case halo_transport::mpi_staged:
      return "mpi-staged";
    case halo_transport::ipc:
      return "ipc";
    case halo_transport::ipc_ordered:
      return "ipc-ordered";
    case halo_transport::peer_ordered:
      return "peer-ordered";
  }
  return "unknown";
}

std::string to_string(const neighbor_path& path) {
  static constexpr const char* axes = "xyz";
  return std::string(1, axes[path.axis]) + (path.where == side::lower ? "-" : "+") + " rank " +
         std::to_string(path.rank) + " " + to_string(path.transport);
}

}  // namespace funnel
