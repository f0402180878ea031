// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/dtype.hpp"

#include "funnel/error.hpp"

namespace funnel::io {

std::string to_string(dtype type) { return type == dtype::float32 ? "float32" : "float64"; }

dtype parse_dtype(const std::string& name) {
  if (name == "float32") return dtype::float32;
  if (name == "float64") return dtype::float64;
  throw invalid_argument("unknown dtype '" + name + "': expected float32 or float64");
}

}  // namespace funnel::io
