// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "xdmf.hpp"

#include <cstdio>
#include <sstream>

namespace funnel::io::detail {
namespace {

std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// XDMF lists dimensions slowest first (z y x), like the HDF5 datasets.
template <class T>
std::string slowest_first(const std::array<T, 3>& xyz, bool flat, T add) {
  std::string s;
  for (int axis = flat ? 1 : 2; axis >= 0; --axis) {
    if (!s.empty()) s += ' ';
    if constexpr (std::is_floating_point_v<T>) {
      s += number(xyz[axis] + add);
    } else {
      s += std::to_string(xyz[axis] + add);
    }
  }
  return s;
}

void write_grid(std::ostringstream& out, const xdmf_entry& e) {
  const bool flat = e.global_cells[2] == 1;
  const int rank = flat ? 2 : 3;
  const std::string cells = slowest_first<std::int64_t>(e.global_cells, flat, 0);
  out << "      <Grid Name=\"step " << e.step << "\" GridType=\"Uniform\">\n"
      << "        <Time Value=\"" << number(e.time) << "\"/>\n"
      << "        <Topology TopologyType=\"" << rank << "DCoRectMesh\" Dimensions=\""
      << slowest_first<std::int64_t>(e.global_cells, flat, 1) << "\"/>\n"
      << "        <Geometry GeometryType=\"" << (flat ? "ORIGIN_DXDY" : "ORIGIN_DXDYDZ") << "\">\n"
      << "          <DataItem Dimensions=\"" << rank
      << "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">"
      << slowest_first<double>(e.origin, flat, 0.0) << "</DataItem>\n"
      << "          <DataItem Dimensions=\"" << rank
      << "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">"
      << slowest_first<double>(e.spacing, flat, 0.0) << "</DataItem>\n"
      << "        </Geometry>\n";
  for (const auto& [name, type] : e.fields) {
    out << "        <Attribute Name=\"" << name << "\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
        << "          <DataItem Dimensions=\"" << cells << "\" NumberType=\"Float\" Precision=\""
        << size_of(type) << "\" Format=\"HDF\">" << e.file << ":/" << name << "</DataItem>\n"
        << "        </Attribute>\n";
  }
  out << "      </Grid>\n";
}

}  // namespace

std::string xdmf_document(const std::string& series, const std::vector<xdmf_entry>& entries) {
  std::ostringstream out;
  out << "<?xml version=\"1.0\" ?>\n"
      << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
      << "<Xdmf Version=\"2.0\">\n"
      << "  <Domain>\n"
      << "    <Grid Name=\"" << series
      << "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const auto& e : entries) write_grid(out, e);
  out << "    </Grid>\n"
      << "  </Domain>\n"
      << "</Xdmf>\n";
  return out.str();
}

}  // namespace funnel::io::detail
