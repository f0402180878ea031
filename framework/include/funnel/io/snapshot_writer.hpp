// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file snapshot_writer.hpp
 * @brief HDF5 snapshots of global fields plus an XDMF index that ParaView opens as a series.
 */
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
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
 * Two ways to write a snapshot:
 * - write(): returns when the snapshot is complete on disk;
 * - submit(): returns once the snapshot is under way; each rank writes its block file on a
 *   background thread, overlapped with whatever the caller does next (its next time steps), and
 *   the snapshot is completed (main file, XDMF entry, errors of any rank reported on every rank)
 *   by the next submit(), write() or wait(). Overlap needs file_per_rank mode and MPI
 *   initialised with at least MPI_THREAD_FUNNELED (the thread makes no MPI call); otherwise
 *   submit() writes the block before returning, exactly as write() does.
 *
 * A snapshot's main file is written only after every rank's block file is complete, so a main
 * file never names a block that is still being written. All funnel HDF5 calls of a process hold
 * one lock, so other funnel files (checkpoints, another series) may be written while a block is
 * in flight; HDF5 calls of the application itself must wait for wait().
 *
 * All members except the destructor are collective over the communicator. Move-only.
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
   * @throw funnel::error for a directory that is not safe to write files into by name, with the
   * rules of checkpoint directories (docs/security.md): another user's, one others may write
   * unless it is sticky, one inside a directory others may write that is not sticky, or a link
   * there
   */
  snapshot_writer(MPI_Comm comm, snapshot_options options);
  /**
   * @brief Waits for a block still being written (not collective: the snapshot stays
   * incomplete, without a main file; a write error is logged), then frees the communicator.
   * Call wait() first to complete the last snapshot.
   */
  ~snapshot_writer();
  /**
   * @brief Takes over `other`'s series, including a snapshot in flight.
   * @param other the writer to take; may then only be destroyed or assigned to
   */
  snapshot_writer(snapshot_writer&& other) noexcept;
  /**
   * @brief Ends this writer's series as the destructor does, then takes over `other`'s.
   * @param other the writer to take; may then only be destroyed or assigned to
   * @return this writer
   */
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
   * @throw funnel::error when HDF5 fails (message names the file and HDF5's reason), or when
   * another user's entry is where the snapshot goes (a sticky shared directory): it is neither
   * written through nor replaced
   */
  std::string write(std::int64_t step, double time, const grid_block& block,
                    const std::vector<field_view>& fields);

  /**
   * @brief Starts one snapshot (collective): completes the one in flight (see wait()), checks
   * the request, prepares the directory, then leaves this rank's block to a background thread.
   * @param step time step number (names the file)
   * @param time simulation time
   * @param block this rank's block and memory layout (same global grid on every rank)
   * @param fields the fields to write; their data must stay valid and unchanged until the next
   * submit(), write() or wait() returns, or the writer is destroyed (everything `ready` uses too)
   * @param ready called on the writing thread before the fields are read, e.g. to wait for the
   * device-to-host copy that fills them (empty: nothing to wait for); an exception it throws
   * fails the snapshot like a write error
   * @throw as write(), for this request or for the snapshot completed first
   */
  void submit(std::int64_t step, double time, const grid_block& block,
              const std::vector<field_view>& fields, std::function<void()> ready = {});

  /**
   * @brief Completes the snapshot in flight, if any (collective): waits for every rank's block,
   * then writes the main file and the XDMF entry.
   * @return path of the completed snapshot's main file; "" when none was in flight
   * @throw funnel::error (or the failing rank's exception type) on every rank when any rank's
   * block or the main file could not be written
   */
  std::string wait();

  /**
   * @brief Whether submit() overlaps the block writes with the caller.
   * @return true in file_per_rank mode with MPI threads at least MPI_THREAD_FUNNELED (see the
   * class notes); false when submit() writes as write() does
   */
  [[nodiscard]] bool overlaps() const noexcept;

  /**
   * @brief Time the background thread spent writing this rank's blocks, to judge the overlap.
   * @return seconds, summed over the completed snapshots (waiting for `ready` not included; 0
   * while nothing overlapped)
   */
  [[nodiscard]] double background_seconds() const noexcept;

  /**
   * @brief The series' XDMF file, for visualisation tools.
   * @return `<directory>/<series>.xmf`
   */
  [[nodiscard]] std::string xdmf_path() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace funnel::io
