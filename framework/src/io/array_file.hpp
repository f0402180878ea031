// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: writing global arrays (one dataset per field) from rank blocks, shared by snapshots
// and checkpoints: one file through collective MPI-IO, or a file per rank plus a main file whose
// virtual datasets stitch the blocks.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/io/field_view.hpp"
#include "funnel/io/file_mode.hpp"
#include "funnel/io/grid_block.hpp"

namespace funnel::io::detail {

/// Where one array file goes.
struct array_file_spec {
  std::string main_path;                      ///< the file readers open
  std::string blocks_dir;                     ///< per-rank files (file_per_rank), next to main_path
  file_mode mode = file_mode::file_per_rank;  ///< resolved: shared_file or file_per_rank
  bool sync = false;                          ///< fsync every file written before returning
};

/// Attributes every funnel array file carries at its root.
struct array_metadata {
  std::int64_t step = 0;
  double time = 0.0;
  std::string problem;
  std::array<double, 3> spacing{1, 1, 1};
};

/// Collective: checks the block and fields on every rank and that all ranks agree on the
/// global grid and the field names and types; throws the same error on every rank.
void check_write_request(MPI_Comm comm, const grid_block& block,
                         const std::vector<field_view>& fields);

/// Collective: every rank's box, in rank order.
std::vector<box> gather_boxes(MPI_Comm comm, const box& mine);

/// Called with the open main file to add attributes; collectively in shared_file mode, on rank
/// 0 only in file_per_rank mode, so it must not communicate.
using file_decorator = std::function<void(hid_t main_file)>;

/// Collective, file_per_rank mode: rank 0 removes an earlier main file of this name and empties
/// `spec.blocks_dir` (rank files of an earlier run with more ranks would otherwise linger next
/// to the new ones), then creates it.
void prepare_blocks_directory(MPI_Comm comm, const array_file_spec& spec);

/// file_per_rank mode, no communication: writes this rank's block file into the prepared
/// `spec.blocks_dir` (nothing for an empty box). Safe on a background thread: all HDF5 calls
/// hold h5_mutex().
void write_rank_file(const array_file_spec& spec, int rank, const grid_block& block,
                     const std::vector<field_view>& fields);

/// file_per_rank mode, rank 0 only, no communication: the main file, whose virtual datasets map
/// every rank's box to its block file (which need not exist yet).
void write_virtual_main(const array_file_spec& spec, const grid_block& block,
                        const std::vector<field_view>& fields, const std::vector<box>& boxes,
                        const file_decorator& decorate);

/// Suffix of the placeholder that earlier versions kept beside a shared file to hold its space
/// (a writer killed meanwhile left `<main file><suffix>`; snapshot writers still remove those).
inline constexpr const char* space_placeholder_suffix = ".space";

/**
 * A shared file is written in a folder of its own, mode 0700, beside the main file:
 * `.<16 hex digits>.<main file's name>` followed by this suffix, under a second random name
 * that nobody else can see, then renamed into place once every rank closed it (a writer killed
 * meanwhile leaves the folder behind). Open MPI's OMPIO opens a POSIX semaphore named after the
 * last name of each file it opens for writing (`/dev/shm/sem.OMPIO_<name>`, for shared file
 * pointers, which funnel does not use), after creating the file, and fails the open when
 * another user holds that name: under a fixed name two users' jobs on a node collided and any
 * user could stop another's writes by creating it first, and under a name others can list
 * they could still take it in between. The space placeholder lives in the folder too.
 */
inline constexpr const char* staging_suffix = ".writing";

/// The staging folder of `main_path` for the random `token` (16 hex digits).
std::string staging_path(const std::string& main_path, const std::string& token);

/// The main file name that the staging folder `name` (a name, no path) stands for; empty when
/// `name` is not a staging name.
std::string staged_main_name(const std::string& name);

/// Collective: writes the fields' global datasets; throws the same error on every rank.
void write_array_file(MPI_Comm comm, const array_file_spec& spec, const grid_block& block,
                      const std::vector<field_view>& fields, const std::vector<box>& boxes,
                      const file_decorator& decorate);

/// True for a field name funnel writes: letters, digits, '_' and '-', not "funnel".
bool valid_field_name(const std::string& name);

/// The file name of rank `rank`'s block file in file_per_rank mode: "rank-<5+ digits>.h5".
std::string rank_file_name(int rank);

/// The common dtype name of `types`, or "mixed" (the `dtype` attribute).
std::string dtype_summary(const std::vector<dtype>& types);
/// The fields' common dtype name, or "mixed".
std::string dtype_summary(const std::vector<field_view>& fields);

/// Writes the attributes of array_metadata plus global_cells, fields, dtype, funnel_version.
void write_common_attributes(hid_t file, const array_metadata& meta, const index3& global_cells,
                             const std::vector<field_view>& fields);

/// "a,b,c" of the field names.
std::string join_names(const std::vector<std::string>& names);
/// Inverse of join_names.
std::vector<std::string> split_names(const std::string& joined);

}  // namespace funnel::io::detail
