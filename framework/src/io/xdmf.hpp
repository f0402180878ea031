// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the XDMF (version 2) index of a snapshot series, as ParaView's XDMF reader wants it:
// a temporal collection of uniform co-rectilinear grids with cell-centred attributes pointing
// at the global datasets (virtual datasets in file_per_rank mode, read transparently by HDF5).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/io/dtype.hpp"

namespace funnel::io::detail {

/// One snapshot as the XDMF index lists it.
struct xdmf_entry {
  std::int64_t step = 0;
  double time = 0.0;
  std::string file;  ///< relative to the .xmf file
  index3 global_cells{1, 1, 1};
  std::array<double, 3> spacing{1, 1, 1};
  std::array<double, 3> origin{0, 0, 0};
  std::vector<std::pair<std::string, dtype>> fields;
};

/// The XML text of the series, entries in the given order.
std::string xdmf_document(const std::string& series, const std::vector<xdmf_entry>& entries);

}  // namespace funnel::io::detail
