// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file checkpoint_writer.hpp
 * @brief Atomic, checksummed checkpoints that survive a writer killed at any instant.
 */
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "funnel/io/checkpoint_options.hpp"
#include "funnel/io/field_view.hpp"
#include "funnel/io/grid_block.hpp"

namespace funnel::io {

/**
 * @brief Writes checkpoints into a directory it owns (directory_lock held by rank 0).
 *
 * A checkpoint is the directory `ckpt-<step, 8 digits>` holding `checkpoint.h5` (and, in
 * file_per_rank mode, `blocks/rank-<r>.h5`). checkpoint.h5 has one global dataset per field
 * (attribute `checksums`: FNV-1a 64 of each writer block's cells, x fastest, in writer-rank
 * order) and root attributes `format` ("funnel-checkpoint"), `format_version` (2), `run_id`,
 * `step`, `time`, `problem`, `configuration`, `fields`, `dtype`, `global_cells`, `grid_spacing`,
 * `funnel_version`, `writers`, `writer_boxes` (int64 [writers * 6]: lo x y z, hi x y z) and
 * `metadata_checksum` (FNV-1a 64 over all of the others and every `checksums`).
 *
 * The directory must be this user's and not writable by other users, unless it is sticky (like
 * /tmp), in which case each checkpoint directory is made private; it is refused otherwise, with
 * a line naming it and its mode. Files are created exclusively and never through a symbolic link.
 * A directory that holds checkpoints of another run (see checkpoint_options::run_id) is refused,
 * unless checkpoint_options::start_over asks to remove them.
 *
 * In shared_file mode the file's space is reserved (fallocate) before HDF5 writes into it, so a
 * full file system or quota is a clean error on every rank rather than a write that fails on
 * some ranks inside HDF5's collective close (where the others would wait forever).
 *
 * write() is atomic: everything is written under `ckpt-<step>.tmp`, fsynced, renamed to
 * `ckpt-<step>` and the directory fsynced; only then is the file `latest` (naming the
 * checkpoint) replaced the same way, and checkpoints beyond the newest `keep_last` removed.
 * A writer killed at any instant therefore leaves the previous checkpoint complete and named by
 * `latest`; leftovers (`*.tmp`, `*.old`) are removed by the next writer.
 *
 * All members are collective over the communicator. Move-only.
 */
class checkpoint_writer {
 public:
  /// @brief Name of the file naming the newest complete checkpoint.
  static constexpr const char* latest_file_name = "latest";
  /// @brief The largest step a checkpoint may have (its directory name has at most 18 digits).
  static constexpr std::int64_t max_step = 999'999'999'999'999'999;

  /**
   * @brief Opens (creates) the directory, takes its lock, removes leftovers (collective).
   * @param comm ranks that write (duplicated internally)
   * @param options directory, keep_last, problem, configuration, spacing
   * @throw funnel::invalid_argument for an empty directory, keep_last < 1, a malformed run id
   * @throw funnel::error when another process holds the directory's lock, when it holds
   *        checkpoints of another run (and start_over is not set), or when other users may write
   *        it (not sticky) or it is not this user's
   * @throw funnel::system_error when the directory cannot be created
   */
  checkpoint_writer(MPI_Comm comm, checkpoint_options options);
  /// @brief Releases the lock and the communicator; never throws.
  ~checkpoint_writer();
  /**
   * @brief Takes over `other`'s directory and lock.
   * @param other the writer to take; may then only be destroyed or assigned to
   */
  checkpoint_writer(checkpoint_writer&& other) noexcept;
  /**
   * @brief Releases this writer's lock, then takes over `other`'s directory and lock.
   * @param other the writer to take; may then only be destroyed or assigned to
   * @return this writer
   */
  checkpoint_writer& operator=(checkpoint_writer&& other) noexcept;
  checkpoint_writer(const checkpoint_writer&) = delete;
  checkpoint_writer& operator=(const checkpoint_writer&) = delete;

  /**
   * @brief Writes one checkpoint atomically and makes it the latest (collective).
   * @param step time step the fields belong to, in [0, max_step]
   * @param time simulation time at that step (finite)
   * @param block this rank's block and memory layout
   * @param fields the fields, same names and order on every rank
   * @return path of the checkpoint directory `ckpt-<step>`
   * @throw funnel::invalid_argument for a step or time out of range, an inconsistent block or
   *        field list
   * @throw funnel::error / funnel::system_error when writing fails; `latest` is then unchanged
   */
  std::string write(std::int64_t step, double time, const grid_block& block,
                    const std::vector<field_view>& fields);

  /**
   * @brief The directory this writer owns.
   * @return checkpoint_options::directory as given
   */
  [[nodiscard]] const std::string& directory() const noexcept;
  /**
   * @brief The run id stored in this writer's checkpoints.
   * @return checkpoint_options::run_id as given, or the id made for a fresh run
   */
  [[nodiscard]] const std::string& run_id() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace funnel::io
