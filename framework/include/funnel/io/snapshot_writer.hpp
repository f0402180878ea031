/**
 * @file snapshot_writer.hpp
 * @brief HDF5 snapshots of global fields plus an XDMF index that ParaView opens as a series.
 */
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "funnel/io/field_view.hpp"
#include "funnel/io/grid_block.hpp"
#include "funnel/io/snapshot_options.hpp"

namespace funnel::io {

/**
 * @brief Writes snapshots of a series: one HDF5 file per step holding one global dataset per
 * field, and `<series>.xmf` listing every snapshot of the series in time.
 *
 * File `<directory>/<series>-<step, 8 digits>.h5` holds, for each field, dataset `/<name>` of
 * the whole grid, shape (nz, ny, nx) or (ny, nx) for 2D, and root attributes `step` (int64),
 * `time` (double), `grid_spacing` (double[3], x y z), `origin` (double[3], x y z),
 * `global_cells` (int64[3], x y z), `problem`, `dtype`, `funnel_version` (strings). In
 * file_per_rank mode the rank blocks are in `<series>-<step>.blocks/rank-<r>.h5` and the
 * datasets of the main file are virtual datasets over them. The XDMF file is rewritten
 * atomically after each snapshot; snapshots of the series already in the directory (e.g. from
 * before a restart) stay listed.
 *
 * All members are collective over the communicator. Move-only.
 */
class snapshot_writer {
 public:
  /**
   * @brief Prepares a series (collective); creates the directory.
   * @param comm ranks that write (duplicated internally)
   * @param options directory, series name, problem, spacing
   * @throw funnel::invalid_argument for an empty directory or a bad series name
   * @throw funnel::unsupported for file_mode::shared_file without parallel HDF5
   * @throw funnel::system_error when the directory cannot be created
   */
  snapshot_writer(MPI_Comm comm, snapshot_options options);
  /// @brief Frees the communicator; never throws.
  ~snapshot_writer();
  /// @brief Takes over `other`'s series.
  snapshot_writer(snapshot_writer&& other) noexcept;
  /// @brief Takes over `other`'s series.
  snapshot_writer& operator=(snapshot_writer&& other) noexcept;
  snapshot_writer(const snapshot_writer&) = delete;
  snapshot_writer& operator=(const snapshot_writer&) = delete;

  /**
   * @brief Writes one snapshot and updates the XDMF file (collective).
   * @param step time step number (names the file)
   * @param time simulation time
   * @param block this rank's block and memory layout (same global grid on every rank)
   * @param fields the fields to write, same names and order on every rank
   * @return path of the snapshot's main HDF5 file
   * @throw funnel::invalid_argument for an inconsistent block or field list
   * @throw funnel::error when HDF5 fails (message names the file and HDF5's reason)
   */
  std::string write(std::int64_t step, double time, const grid_block& block,
                    const std::vector<field_view>& fields);

  /// @brief Path of the series' XDMF file.
  [[nodiscard]] std::string xdmf_path() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace funnel::io
