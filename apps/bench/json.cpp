// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "json.hpp"

#include <fstream>

#include "funnel/error.hpp"

namespace funnel::bench {

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  FUNNEL_SYSTEM_CHECK(!in, "open", path);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw invalid_argument(path + ": " + e.what());
  }
}

void write_json_file(const std::string& path, const json& value) {
  std::ofstream out(path, std::ios::trunc);
  FUNNEL_SYSTEM_CHECK(!out, "open", path);
  out << value.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  out.flush();
  FUNNEL_SYSTEM_CHECK(!out, "write", path);
}

}  // namespace funnel::bench
