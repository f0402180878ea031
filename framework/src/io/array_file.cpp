// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "array_file.hpp"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>

#include "checkpoint_format.hpp"
#include "collective.hpp"
#include "file_system.hpp"
#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/io/atomic_file.hpp"
#include "hdf5_support.hpp"

namespace funnel::io::detail {
namespace {

void check_fields(const grid_block& block, const std::vector<field_view>& fields) {
  validate(block);
  FUNNEL_EXPECTS(!fields.empty(), "at least one field is needed");
  std::set<std::string> seen;
  for (const auto& f : fields) {
    FUNNEL_EXPECTS(valid_field_name(f.name),
                   "field name '" + f.name +
                       "' is not allowed: use letters, digits, '_' and '-' "
                       "(and not 'funnel')");
    FUNNEL_EXPECTS(seen.insert(f.name).second, "field '" + f.name + "' is given twice");
    FUNNEL_EXPECTS(block.local_box.empty() || f.data != nullptr,
                   "field '" + f.name + "' has no data (nullptr)");
  }
}

// What all ranks must agree on, as text: the global grid and the typed field list.
std::string signature(const grid_block& block, const std::vector<field_view>& fields) {
  std::string s = std::to_string(block.global_cells[0]) + "x" +
                  std::to_string(block.global_cells[1]) + "x" +
                  std::to_string(block.global_cells[2]) + " fields";
  for (const auto& f : fields) s += " " + f.name + ":" + to_string(f.type);
  return s;
}

std::vector<hsize_t> block_dims(const box& b, const index3& global_cells) {
  index3 e = b.extents();
  if (global_cells[2] != 1)
    return {static_cast<hsize_t>(e[2]), static_cast<hsize_t>(e[1]), static_cast<hsize_t>(e[0])};
  return {static_cast<hsize_t>(e[1]), static_cast<hsize_t>(e[0])};
}

// Contiguous datasets (no chunking, no fill on allocation): the cheapest layout for whole-array
// writes, and the only one collective MPI-IO writes of hyperslabs handle without filters.
h5_id plain_dataset_properties() {
  h5_id dcpl(h5_check(H5Pcreate(H5P_DATASET_CREATE), "dataset properties"));
  h5_check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "fill time");
  return dcpl;
}

h5_id create_dataset(hid_t file, const field_view& field, const std::vector<hsize_t>& dims,
                     const std::string& path) {
  h5_id fspace = simple_space(dims);
  h5_id dcpl = plain_dataset_properties();
  return h5_id(h5_check(H5Dcreate2(file, field.name.c_str(), file_type(field.type), fspace.get(),
                                   H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                        "creating '" + path + "' dataset '" + field.name + "'"));
}

void write_dataset(hid_t dset, const field_view& field, const grid_block& block,
                   const box& file_box, hid_t dxpl, const std::string& path) {
  const std::string what = "writing '" + path + "' dataset '" + field.name + "'";
  h5_id fspace(h5_check(H5Dget_space(dset), what));
  const bool empty = block.local_box.empty();
  if (empty) {
    h5_check(H5Sselect_none(fspace.get()), what);
  } else {
    select_box(fspace.get(), file_box, block.global_cells);
  }
  h5_id mspace = memory_space(block.layout, block.global_cells, empty);
  h5_check(H5Dwrite(dset, memory_type(field.type), mspace.get(), fspace.get(), dxpl, field.data),
           what);
}

#if FUNNEL_HAS_PARALLEL_HDF5
// Bytes a shared file of these fields needs at most: the data plus room for the metadata.
std::uint64_t shared_file_bound(const grid_block& block, const std::vector<field_view>& fields,
                                std::size_t writers) {
  constexpr std::uint64_t metadata_room = std::uint64_t{256} << 10;
  std::uint64_t bytes = metadata_room + 64 * writers * (fields.size() + 1);
  const auto cells = static_cast<std::uint64_t>(block.global_cells[0]) *
                     static_cast<std::uint64_t>(block.global_cells[1]) *
                     static_cast<std::uint64_t>(block.global_cells[2]);
  for (const auto& f : fields) bytes += cells * size_of(f.type);
  return bytes;
}

// A shared file is written by every rank through collective HDF5 calls, and an I/O error that
// reaches some ranks only (a full file system: OpenMPI's OMPIO reports it as a short write on the
// ranks whose part failed) makes HDF5 skip collective steps on those ranks inside H5Dwrite or
// H5Fclose, where the others then wait forever. So the file's space is made certain before HDF5
// writes anything: rank 0 reserves the bytes in a placeholder file (a clean error on every rank
// when they are not there), and once the datasets are laid out, hands them over to the HDF5 file
// (fallocate: no data is written). Every step is agreed on before the next, and the file is closed
// by all ranks together, never by a destructor. File systems without fallocate get no reservation.
// The file is written as `path`, its space held in `placeholder` (both in write_shared's
// private folder), and named main_path in messages.
void write_shared_file(MPI_Comm comm, const std::string& path, const std::string& placeholder,
                       const array_file_spec& spec, const grid_block& block,
                       const std::vector<field_view>& fields, const std::vector<box>& boxes,
                       const file_decorator& decorate) {
  const std::uint64_t bound = shared_file_bound(block, fields, boxes.size());
  space_reservation reserved;
  on_root(comm, [&] { reserved = reserve_space(placeholder, bound); });
  const h5_guard guard;
  h5_id dxpl;
  h5_id file;
  on_all(comm, [&] {
    dxpl = h5_id(h5_check(H5Pcreate(H5P_DATASET_XFER), "transfer properties"));
    h5_check(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "collective transfer");
    h5_id mpio(h5_check(H5Pcreate(H5P_FILE_ACCESS), "file access properties"));
    h5_check(H5Pset_fapl_mpio(mpio.get(), comm, MPI_INFO_NULL), "MPI-IO driver");
    h5_id fapl = file_access(mpio.get());
    file = h5_id(h5_check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                          "creating '" + spec.main_path + "'"));
  });
  std::vector<h5_id> datasets;
  std::exception_ptr failure = capture([&] {
    for (const auto& field : fields) {
      datasets.push_back(
          create_dataset(file.get(), field, file_dims(block.global_cells), spec.main_path));
    }
    decorate(file.get());
  });
  bool ok = none_failed(comm, failure);
  if (ok) {
    failure = capture([&] {
      if (rank_of(comm) != 0) return;
      reserved.release();
      allocate_space(path, bound);  // HDF5 trims the file to its end when it closes it
    });
    ok = none_failed(comm, failure);
  }
  for (std::size_t f = 0; ok && f < fields.size(); ++f) {
    failure = capture([&] {
      write_dataset(datasets[f].get(), fields[f], block, block.local_box, dxpl.get(),
                    spec.main_path);
    });
    ok = none_failed(comm, failure);
  }
  // All ranks are here together, whatever happened: close together, every handle even after a
  // close failed on this rank (the others are in the collective closes), keeping the first error.
  std::exception_ptr closing;
  const auto keep_first = [&closing](std::exception_ptr e) {
    if (!closing) closing = std::move(e);
  };
  for (auto& d : datasets) {
    keep_first(capture([&] { d.close("closing a dataset of '" + spec.main_path + "'"); }));
  }
  keep_first(capture([&] { file.close("closing '" + spec.main_path + "'"); }));
  agree(comm, failure ? failure : closing);
}

void write_shared(MPI_Comm comm, const array_file_spec& spec, const grid_block& block,
                  const std::vector<field_view>& fields, const std::vector<box>& boxes,
                  const file_decorator& decorate) {
  // Every rank opens the same file, named by rank 0 (staging_suffix says why it is neither
  // main_path nor a name others can see).
  std::string tokens;
  on_root(comm, [&] { tokens = new_run_id() + new_run_id(); });
  tokens = broadcast(comm, tokens);
  const std::string folder = staging_path(spec.main_path, tokens.substr(0, 16));
  const std::string staged = join(folder, tokens.substr(16) + ".h5");
  bool created = false;  // rank 0: removes only a folder it made
  const auto remove_folder = [&] {
    std::error_code ignored;
    if (created) std::filesystem::remove_all(folder, ignored);
  };
  try {
    on_root(comm, [&] {
      FUNNEL_SYSTEM_CHECK(::mkdir(folder.c_str(), 0700) != 0, "mkdir", folder);
      created = true;
    });
    write_shared_file(comm, staged, join(folder, "space"), spec, block, fields, boxes, decorate);
    on_root(comm, [&] {
      // One fsync of the shared file after every rank's data reached it (MPI_File_close does
      // not promise stable storage), and one of its folder after the rename.
      if (spec.sync) {
        sync_file(staged);
        rename_durably(staged, spec.main_path);
      } else {
        FUNNEL_SYSTEM_CHECK(std::rename(staged.c_str(), spec.main_path.c_str()) != 0, "rename",
                            staged + " -> " + spec.main_path);
      }
    });
  } catch (...) {
    remove_folder();
    throw;
  }
  // The file is in place: a folder that will not go away is left, not a failed write.
  remove_folder();
}
#endif

}  // namespace

bool valid_field_name(const std::string& name) {
  if (name.empty() || name == "funnel") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string staging_path(const std::string& main_path, const std::string& token) {
  return join(parent_path(main_path), "." + token + "." + base_name(main_path) + staging_suffix);
}

std::string staged_main_name(const std::string& name) {
  constexpr std::size_t token = 16;
  const std::string suffix = staging_suffix;
  if (name.size() <= 2 + token + suffix.size() || name[0] != '.' || name[1 + token] != '.' ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0 ||
      name.find_first_not_of("0123456789abcdef", 1) != 1 + token) {
    return "";
  }
  return name.substr(2 + token, name.size() - 2 - token - suffix.size());
}

std::string rank_file_name(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.h5", rank);
  return name;
}

std::string dtype_summary(const std::vector<dtype>& types) {
  std::string type = to_string(types.front());
  for (const dtype t : types) {
    if (to_string(t) != type) type = "mixed";
  }
  return type;
}

std::string dtype_summary(const std::vector<field_view>& fields) {
  std::vector<dtype> types;
  for (const auto& f : fields) types.push_back(f.type);
  return dtype_summary(types);
}

void write_rank_file(const array_file_spec& spec, int rank, const grid_block& block,
                     const std::vector<field_view>& fields) {
  if (block.local_box.empty()) return;
  h5_guard guard;
  const std::string path = join(spec.blocks_dir, rank_file_name(rank));
  h5_id fapl = file_access();
  h5_id file(h5_check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                      "creating '" + path + "'"));
  const std::vector<hsize_t> dims = block_dims(block.local_box, block.global_cells);
  for (const auto& field : fields) {
    h5_id dset = create_dataset(file.get(), field, dims, path);
    write_dataset(dset.get(), field, block, box{{0, 0, 0}, block.local_box.extents()}, H5P_DEFAULT,
                  path);
    dset.close("closing '" + path + "' dataset '" + field.name + "'");
  }
  file.close("closing '" + path + "'");
  if (spec.sync) sync_file(path);
}

// The main file of file_per_rank mode: each field a virtual dataset mapping every rank's box to
// the dataset of the same name in that rank's file, named relative to the main file so the
// directory can be moved (HDF5 looks for relative source files next to the virtual file).
void write_virtual_main(const array_file_spec& spec, const grid_block& block,
                        const std::vector<field_view>& fields, const std::vector<box>& boxes,
                        const file_decorator& decorate) {
  h5_guard guard;
  h5_id fapl = file_access();
  h5_id file(h5_check(H5Fcreate(spec.main_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                      "creating '" + spec.main_path + "'"));
  const std::string relative_dir = base_name(spec.blocks_dir);
  for (const auto& field : fields) {
    const std::string what = "'" + spec.main_path + "' virtual dataset '" + field.name + "'";
    h5_id vspace = simple_space(file_dims(block.global_cells));
    h5_id dcpl(h5_check(H5Pcreate(H5P_DATASET_CREATE), what));
    // Cells whose block file is missing read as NaN, not as plausible zeros.
    const double nan_double = std::numeric_limits<double>::quiet_NaN();
    const float nan_float = std::numeric_limits<float>::quiet_NaN();
    const void* fill = field.type == dtype::float32 ? static_cast<const void*>(&nan_float)
                                                    : static_cast<const void*>(&nan_double);
    h5_check(H5Pset_fill_value(dcpl.get(), memory_type(field.type), fill), what);
    for (std::size_t r = 0; r < boxes.size(); ++r) {
      if (boxes[r].empty()) continue;
      select_box(vspace.get(), boxes[r], block.global_cells);
      h5_id source = simple_space(block_dims(boxes[r], block.global_cells));
      const std::string source_file = relative_dir + "/" + rank_file_name(static_cast<int>(r));
      h5_check(H5Pset_virtual(dcpl.get(), vspace.get(), source_file.c_str(), field.name.c_str(),
                              source.get()),
               what + ": mapping " + source_file);
    }
    h5_check(H5Sselect_all(vspace.get()), what);
    h5_id dset(h5_check(H5Dcreate2(file.get(), field.name.c_str(), file_type(field.type),
                                   vspace.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                        "creating " + what));
    dset.close("closing " + what);
  }
  decorate(file.get());
  file.close("closing '" + spec.main_path + "'");
  if (spec.sync) {
    sync_file(spec.main_path);
    sync_directory(spec.blocks_dir);
  }
}

void prepare_blocks_directory(MPI_Comm comm, const array_file_spec& spec) {
  on_root(comm, [&] {
    // A main file of the same name (a run that is redoing this step) would name blocks that
    // are about to be rewritten: it goes first, and a new one comes once the blocks are done.
    remove_tree(spec.main_path);
    remove_tree(spec.blocks_dir);
    make_directories(spec.blocks_dir);
  });
}

void check_write_request(MPI_Comm comm, const grid_block& block,
                         const std::vector<field_view>& fields) {
  on_all(comm, [&] { check_fields(block, fields); });
  const std::string mine = signature(block, fields);
  const std::string root = broadcast(comm, mine);
  on_all(comm, [&] {
    FUNNEL_EXPECTS(mine == root, "rank " + std::to_string(rank_of(comm)) + " writes '" + mine +
                                     "' but rank 0 writes '" + root +
                                     "': all ranks must write the same grid and fields");
  });
}

std::vector<box> gather_boxes(MPI_Comm comm, const box& mine) {
  const std::array<std::int64_t, 6> packed{mine.lo[0], mine.lo[1], mine.lo[2],
                                           mine.hi[0], mine.hi[1], mine.hi[2]};
  const int size = size_of(comm);
  std::vector<std::int64_t> all(static_cast<std::size_t>(size) * 6);
  FUNNEL_MPI_TRY(MPI_Allgather(packed.data(), 6, MPI_INT64_T, all.data(), 6, MPI_INT64_T, comm),
                 "gathering rank boxes");
  std::vector<box> boxes(static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < boxes.size(); ++r) {
    boxes[r] = box{{all[6 * r], all[6 * r + 1], all[6 * r + 2]},
                   {all[6 * r + 3], all[6 * r + 4], all[6 * r + 5]}};
  }
  return boxes;
}

void write_array_file(MPI_Comm comm, const array_file_spec& spec, const grid_block& block,
                      const std::vector<field_view>& fields, const std::vector<box>& boxes,
                      const file_decorator& decorate) {
  if (spec.mode == file_mode::shared_file) {
#if FUNNEL_HAS_PARALLEL_HDF5
    write_shared(comm, spec, block, fields, boxes, decorate);
    return;
#else
    throw unsupported("shared_file mode needs parallel HDF5");
#endif
  }
  prepare_blocks_directory(comm, spec);
  const int rank = rank_of(comm);
  on_all(comm, [&] { write_rank_file(spec, rank, block, fields); });
  on_root(comm, [&] { write_virtual_main(spec, block, fields, boxes, decorate); });
}

void write_common_attributes(hid_t file, const array_metadata& meta, const index3& global_cells,
                             const std::vector<field_view>& fields) {
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f.name);
  write_attribute(file, "step", meta.step);
  write_attribute(file, "time", meta.time);
  write_attribute(file, "problem", meta.problem);
  write_attribute(file, "grid_spacing",
                  std::vector<double>(meta.spacing.begin(), meta.spacing.end()));
  write_attribute(file, "global_cells",
                  std::vector<std::int64_t>(global_cells.begin(), global_cells.end()));
  write_attribute(file, "fields", join_names(names));
  write_attribute(file, "dtype", dtype_summary(fields));
  write_attribute(file, "funnel_version", std::string(FUNNEL_VERSION));
}

std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
  return joined;
}

std::vector<std::string> split_names(const std::string& joined) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= joined.size() && !joined.empty()) {
    auto end = joined.find(',', start);
    if (end == std::string::npos) end = joined.size();
    names.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

}  // namespace funnel::io::detail
