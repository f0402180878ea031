// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/binding/binding_report.hpp"

#include <sstream>
#include <string>

namespace funnel {

std::string binding_report::to_string() const {
  std::ostringstream line;
  line << "host=" << host << " rank=" << rank << '/' << size << " local_rank=" << local_rank << '/'
       << local_size << " nodes=" << node_count << " backend=" << funnel::to_string(backend);
  if (device >= 0) {
    line << " device=" << device << " uuid=" << gpu_uuid << " ranks_on_gpu=" << ranks_on_gpu;
  } else {
    line << " device=none";
  }
  line << " mps=" << (mps_serving ? "serving" : "off");
  if (mps_serving) line << " pipe=" << mps_pipe;
  line << " launcher=" << (from_funnel_run ? "funnel-run" : "none");
  return line.str();
}

}  // namespace funnel
