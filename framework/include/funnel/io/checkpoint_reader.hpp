// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file checkpoint_reader.hpp
 * @brief Validating reader of checkpoints, for restarts with any number of ranks.
 */
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/io/dtype.hpp"
#include "funnel/io/grid_block.hpp"

namespace funnel::io {

/**
 * @brief Opens a checkpoint written by checkpoint_writer and reads rank blocks out of it.
 *
 * The constructor validates everything before the caller allocates: the files are regular files
 * (a FIFO or device is refused, never opened), the file opens as HDF5 and is not truncated, the
 * format (version 2) and metadata are complete, match their metadata checksum and lie in range
 * (step in [0, checkpoint_writer::max_step], a finite time, positive finite spacing, writer
 * boxes tiling the grid), block files are the writer's own relative names inside the checkpoint
 * directory, and (unless disabled) every writer block of every field matches its stored
 * checksum. Metadata HDF5 cannot read is reported as corrupted, not as absent. The writer blocks
 * are spread over the reading ranks, so a reader with another number of ranks or another
 * decomposition verifies them all. Any problem becomes a funnel::error naming the file and what is
 * wrong, on every rank; HDF5's own error printing is off meanwhile. require() then compares the
 * checkpoint with the run (problem, grid, fields, dtype).
 *
 * read() fills the interior of a rank's array from a hyperslab of the global dataset, so the
 * data is bitwise what was written whatever the decompositions. Members are collective.
 */
class checkpoint_reader {
 public:
  /**
   * @brief The newest complete checkpoint of a directory, as named by its `latest` file.
   * @param directory a checkpoint directory
   * @return path of `ckpt-<step>`, or nullopt when there is no `latest` file
   * @throw funnel::error when `latest` names something that is not a checkpoint directory, is
   *        not a regular file (never followed when it is a link), or is too large
   */
  [[nodiscard]] static std::optional<std::string> latest(const std::string& directory);

  /**
   * @brief Opens and validates a checkpoint (collective).
   * @param comm reading ranks (any number)
   * @param path a checkpoint directory (its `latest` is followed), one `ckpt-<step>`
   *        directory, or its `checkpoint.h5`
   * @param verify_checksums false skips reading the data for checksum verification
   * @throw funnel::error for a missing, truncated, corrupted or incomplete checkpoint
   */
  checkpoint_reader(MPI_Comm comm, const std::string& path, bool verify_checksums = true);
  /// @brief Closes the file; never throws.
  ~checkpoint_reader();
  /**
   * @brief Takes over `other`'s file.
   * @param other the reader to take; may then only be destroyed or assigned to
   */
  checkpoint_reader(checkpoint_reader&& other) noexcept;
  /**
   * @brief Closes this reader's file, then takes over `other`'s.
   * @param other the reader to take; may then only be destroyed or assigned to
   * @return this reader
   */
  checkpoint_reader& operator=(checkpoint_reader&& other) noexcept;
  checkpoint_reader(const checkpoint_reader&) = delete;
  checkpoint_reader& operator=(const checkpoint_reader&) = delete;

  /**
   * @brief The checkpoint's main file, for messages.
   * @return the path of its `checkpoint.h5`, as resolved from the constructor's `path`
   */
  [[nodiscard]] const std::string& file() const noexcept;
  /**
   * @brief Step stored in the checkpoint.
   * @return the step, in [0, checkpoint_writer::max_step]
   */
  [[nodiscard]] std::int64_t step() const noexcept;
  /**
   * @brief Simulation time stored in the checkpoint.
   * @return the time (finite)
   */
  [[nodiscard]] double time() const noexcept;
  /**
   * @brief The run (series) that wrote it.
   * @return its id: pass it as checkpoint_options::run_id to continue that series in the same
   * directory
   */
  [[nodiscard]] const std::string& run_id() const noexcept;
  /**
   * @brief Problem name, as the writer stored it.
   * @return the name require() compares with the run's
   */
  [[nodiscard]] const std::string& problem() const noexcept;
  /**
   * @brief Run configuration stored verbatim by the writer.
   * @return the text, unparsed
   */
  [[nodiscard]] const std::string& configuration() const noexcept;
  /**
   * @brief Which funnel wrote the checkpoint.
   * @return its FUNNEL_VERSION
   */
  [[nodiscard]] const std::string& funnel_version() const noexcept;
  /**
   * @brief Size of the stored grid.
   * @return global cells along x, y, z
   */
  [[nodiscard]] const index3& global_cells() const noexcept;
  /**
   * @brief Cell size of the stored grid.
   * @return spacing along x, y, z, each positive and finite
   */
  [[nodiscard]] const std::array<double, 3>& spacing() const noexcept;
  /**
   * @brief The stored fields.
   * @return their names, in the writer's order
   */
  [[nodiscard]] const std::vector<std::string>& field_names() const noexcept;
  /**
   * @brief How the writing run was decomposed.
   * @return one box per writing rank, in global coordinates; together they tile the grid
   */
  [[nodiscard]] const std::vector<box>& writer_boxes() const noexcept;
  /**
   * @brief Element type of a field.
   * @param field field name
   * @return its dtype
   * @throw funnel::invalid_argument when the checkpoint has no such field
   */
  [[nodiscard]] dtype field_type(const std::string& field) const;

  /**
   * @brief Checks the checkpoint against the run about to restart from it.
   * @param problem the run's problem name
   * @param global_cells the run's global grid
   * @param fields fields the run needs
   * @param type element type the run computes in
   * @throw funnel::invalid_argument listing every mismatch (checkpoint value vs run value)
   */
  void require(const std::string& problem, const index3& global_cells,
               const std::vector<std::string>& fields, dtype type) const;

  /**
   * @brief Reads this rank's block of a field into the interior of its array (collective).
   * @param field field name
   * @param block this rank's block and layout (any decomposition of the same global grid)
   * @param type element type of `host`; must equal the stored type (no conversion)
   * @param host the rank's array, block.layout.allocated_cells() elements; halo untouched
   * @throw funnel::invalid_argument for an unknown field, a dtype or grid mismatch
   * @throw funnel::error when HDF5 fails to read
   */
  void read(const std::string& field, const grid_block& block, dtype type, void* host) const;

  /**
   * @brief Typed form of read().
   * @tparam T float or double, the stored type (dtype_of<T>())
   * @param field field name
   * @param block this rank's block and layout
   * @param host the rank's float or double array
   * @throw funnel::invalid_argument, funnel::error as the untyped read()
   */
  template <class T>
  void read(const std::string& field, const grid_block& block, T* host) const {
    read(field, block, dtype_of<T>(), static_cast<void*>(host));
  }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace funnel::io
