// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "field_dump.hpp"

#include <mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "funnel/error.hpp"

namespace funnel::stencil {
namespace {

/// Copies the rows of `region` between a strided array (x fastest) and a dense buffer.
void copy_rows(const box& region, std::int64_t row_pitch, std::int64_t plane_pitch,
               std::int64_t origin_offset, std::size_t element_size, const unsigned char* from,
               unsigned char* to, bool strided_source) {
  const std::size_t row = static_cast<std::size_t>(region.extent(0)) * element_size;
  std::size_t dense = 0;
  for (std::int64_t k = 0; k < region.extent(2); ++k) {
    for (std::int64_t j = 0; j < region.extent(1); ++j) {
      const auto strided =
          static_cast<std::size_t>(origin_offset + k * plane_pitch + j * row_pitch) * element_size;
      if (strided_source) {
        std::memcpy(to + dense, from + strided, row);
      } else {
        std::memcpy(to + strided, from + dense, row);
      }
      dense += row;
    }
  }
}

}  // namespace

void write_field_dump(const cartesian_decomposition& d, const void* host_field,
                      std::size_t element_size, const std::string& path) {
  const field_layout layout = d.layout();
  const box interior = layout.interior_box();
  const std::int64_t local_cells = interior.cells();
  std::vector<unsigned char> mine(static_cast<std::size_t>(local_cells) * element_size);
  copy_rows(interior, layout.row_pitch(), layout.plane_pitch(),
            layout.index(interior.lo[0], interior.lo[1], interior.lo[2]), element_size,
            static_cast<const unsigned char*>(host_field), mine.data(), true);

  const bool root = d.rank() == 0;
  std::vector<int> counts(root ? d.size() : 0), displacements(root ? d.size() : 0);
  std::vector<unsigned char> all;
  if (root) {
    std::int64_t total = 0;
    for (int r = 0; r < d.size(); ++r) {
      const std::int64_t bytes = d.box_of(r).cells() * static_cast<std::int64_t>(element_size);
      FUNNEL_EXPECTS(total + bytes <= INT32_MAX,
                     "--field-dump is for small grids: " + std::to_string(total + bytes) +
                         " bytes exceed the 2 GiB a single gather allows");
      counts[r] = static_cast<int>(bytes);
      displacements[r] = static_cast<int>(total);
      total += bytes;
    }
    all.resize(static_cast<std::size_t>(total));
  }
  FUNNEL_MPI_TRY(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(),
                             counts.data(), displacements.data(), MPI_BYTE, 0, d.comm()),
                 "field_dump");
  if (!root) return;

  const index3 global = d.global_cells();
  std::vector<unsigned char> grid(static_cast<std::size_t>(global[0] * global[1] * global[2]) *
                                  element_size);
  for (int r = 0; r < d.size(); ++r) {
    const box b = d.box_of(r);
    copy_rows(b, global[0], global[0] * global[1],
              (b.lo[2] * global[1] + b.lo[1]) * global[0] + b.lo[0], element_size,
              all.data() + displacements[r], grid.data(), false);
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  FUNNEL_SYSTEM_CHECK(file == nullptr, "fopen", "--field-dump " + path);
  const std::size_t written = std::fwrite(grid.data(), 1, grid.size(), file);
  const int closed = std::fclose(file);
  FUNNEL_SYSTEM_CHECK(written != grid.size() || closed != 0, "fwrite", "--field-dump " + path);
}

}  // namespace funnel::stencil
