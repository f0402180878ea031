// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/checkpoint_writer.hpp"

#include <cmath>
#include <optional>
#include <utility>

#include "array_file.hpp"
#include "checkpoint_directory.hpp"
#include "checkpoint_format.hpp"
#include "checksum.hpp"
#include "collective.hpp"
#include "file_system.hpp"
#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/io/directory_lock.hpp"
#include "hdf5_support.hpp"

namespace funnel::io {
namespace {

// checksums[f][r]: checksum of field f's block on rank r.
std::vector<std::vector<std::uint64_t>> gather_checksums(MPI_Comm comm, const grid_block& block,
                                                         const std::vector<field_view>& fields) {
  std::vector<std::uint64_t> mine(fields.size(), detail::fnv1a_basis);
  if (!block.local_box.empty()) {
    for (std::size_t f = 0; f < fields.size(); ++f) {
      mine[f] = detail::interior_checksum(fields[f].data, block.layout, fields[f].type);
    }
  }
  const auto ranks = static_cast<std::size_t>(detail::size_of(comm));
  std::vector<std::uint64_t> all(ranks * fields.size());
  FUNNEL_MPI_TRY(MPI_Allgather(mine.data(), static_cast<int>(fields.size()), MPI_UINT64_T,
                               all.data(), static_cast<int>(fields.size()), MPI_UINT64_T, comm),
                 "gathering checksums");
  std::vector<std::vector<std::uint64_t>> table(fields.size(), std::vector<std::uint64_t>(ranks));
  for (std::size_t r = 0; r < ranks; ++r) {
    for (std::size_t f = 0; f < fields.size(); ++f) table[f][r] = all[r * fields.size() + f];
  }
  return table;
}

std::vector<std::int64_t> pack(const std::vector<box>& boxes) {
  std::vector<std::int64_t> packed;
  for (const auto& b : boxes) {
    packed.insert(packed.end(), b.lo.begin(), b.lo.end());
    packed.insert(packed.end(), b.hi.begin(), b.hi.end());
  }
  return packed;
}

// The run id stored in a complete checkpoint; "" when it has none or cannot be read (another
// format, damage): such a checkpoint is nobody's series.
std::string stored_run_id(const std::string& checkpoint_dir) {
  try {
    const std::string path = detail::join(checkpoint_dir, detail::checkpoint_file_name);
    detail::verify_file_sum(path);  // HDF5 must not meet a damaged file
    detail::h5_guard guard;
    detail::h5_id fapl = detail::file_access();
    detail::h5_id file(detail::h5_check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), path));
    return detail::read_string_attribute(file.get(), "run_id", path);
  } catch (const error&) {
    return {};
  }
}

// Rank 0: a directory holding checkpoints of another series is refused, or started over.
void claim_directory(const checkpoint_options& opt) {
  const auto found = detail::list_checkpoints(opt.directory);
  if (found.empty()) return;
  if (opt.start_over) {
    detail::remove_checkpoints(opt.directory);
    return;
  }
  std::string owner;
  for (const auto& entry : found) {
    const std::string id = stored_run_id(detail::join(opt.directory, entry.second));
    if (!opt.run_id.empty() && id == opt.run_id) return;  // this run's series, continued
    if (!id.empty()) owner = id;
  }
  std::string latest = "none";
  try {
    if (const auto name = detail::read_latest(opt.directory)) latest = *name;
  } catch (const error&) {
    latest = "unreadable";
  }
  const std::string range = found.size() == 1 ? found.front().second
                                              : found.front().second + " to " + found.back().second;
  throw error("checkpoint directory '" + opt.directory + "' holds " + std::to_string(found.size()) +
              " checkpoint(s) of another run (" + range + ", latest " + latest + ", run id " +
              (owner.empty() ? "unknown" : owner) +
              "); this run would overwrite them: restart from them, write to another directory, "
              "or start over explicitly (which removes them)");
}

}  // namespace

struct checkpoint_writer::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  checkpoint_options options;
  file_mode mode = file_mode::file_per_rank;
  std::optional<directory_lock> lock;  // held by rank 0

  ~impl() {
    lock.reset();
    detail::release(comm);
  }
};

checkpoint_writer::checkpoint_writer(MPI_Comm comm, checkpoint_options options)
    : impl_(std::make_unique<impl>()) {
  FUNNEL_EXPECTS(!options.directory.empty(), "checkpoint directory must not be empty");
  FUNNEL_EXPECTS(options.keep_last >= 1,
                 "keep_last = " + std::to_string(options.keep_last) + " must be at least 1");
  FUNNEL_EXPECTS(options.run_id.empty() || detail::valid_run_id(options.run_id),
                 "run id '" + detail::excerpt(options.run_id) +
                     "' must be 1 to 64 letters, digits, '-', '_' or '.'");
  FUNNEL_EXPECTS(detail::printable(options.problem, detail::max_problem_length),
                 "the problem name must be at most " + std::to_string(detail::max_problem_length) +
                     " characters without control characters");
  impl_->mode = resolve(options.mode);
  impl_->options = std::move(options);
  impl_->comm = detail::duplicate(comm);
  checkpoint_options& opt = impl_->options;
  detail::on_root(impl_->comm, [&] {
    detail::make_directories(opt.directory);
    detail::check_output_directory(opt.directory, "checkpoint directory");
    impl_->lock.emplace(opt.directory);
    detail::remove_leftovers(opt.directory);
    claim_directory(opt);
    if (opt.run_id.empty()) opt.run_id = detail::new_run_id();
  });
  opt.run_id = detail::broadcast(impl_->comm, opt.run_id);
}

checkpoint_writer::~checkpoint_writer() = default;
checkpoint_writer::checkpoint_writer(checkpoint_writer&&) noexcept = default;
checkpoint_writer& checkpoint_writer::operator=(checkpoint_writer&&) noexcept = default;

const std::string& checkpoint_writer::directory() const noexcept {
  return impl_->options.directory;
}

const std::string& checkpoint_writer::run_id() const noexcept { return impl_->options.run_id; }

std::string checkpoint_writer::write(std::int64_t step, double time, const grid_block& block,
                                     const std::vector<field_view>& fields) {
  MPI_Comm comm = impl_->comm;
  const checkpoint_options& opt = impl_->options;
  detail::on_all(comm, [&] {
    FUNNEL_EXPECTS(step >= 0 && step <= max_step, "checkpoint step " + std::to_string(step) +
                                                      " is outside [0, " +
                                                      std::to_string(max_step) + "]");
    FUNNEL_EXPECTS(std::isfinite(time), "checkpoint time must be finite");
  });
  detail::check_write_request(comm, block, fields);
  detail::checkpoint_header header;
  header.run_id = opt.run_id;
  header.step = step;
  header.time = time;
  header.problem = opt.problem;
  header.configuration = opt.configuration;
  header.global_cells = block.global_cells;
  header.spacing = opt.spacing;
  for (const auto& f : fields) header.fields.push_back(f.name);
  header.dtype = detail::dtype_summary(fields);
  header.funnel_version = FUNNEL_VERSION;
  header.writer_boxes = detail::gather_boxes(comm, block.local_box);
  header.checksums = gather_checksums(comm, block, fields);

  const std::string name = detail::checkpoint_name(step);
  const std::string tmp = detail::join(opt.directory, name + ".tmp");
  detail::on_root(comm, [&] {
    // Another user's entry of that name (a sticky shared directory) could be neither replaced
    // nor retired: refused before anything is written.
    detail::refuse_foreign_entry(detail::join(opt.directory, name), "checkpoint");
    detail::remove_tree(tmp);
    detail::make_checkpoint_directory(opt.directory, name + ".tmp");
  });
  detail::array_file_spec spec;
  spec.main_path = detail::join(tmp, detail::checkpoint_file_name);
  spec.blocks_dir = detail::join(tmp, detail::checkpoint_blocks_name);
  spec.mode = impl_->mode;
  spec.sync = true;
  const detail::array_metadata meta{step, time, opt.problem, opt.spacing};
  detail::write_array_file(comm, spec, block, fields, header.writer_boxes, [&](hid_t file) {
    using detail::write_attribute;
    write_attribute(file, "format", std::string(detail::checkpoint_format));
    write_attribute(file, "format_version", detail::checkpoint_format_version);
    write_attribute(file, "run_id", header.run_id);
    detail::write_common_attributes(file, meta, block.global_cells, fields);
    write_attribute(file, "configuration", opt.configuration);
    write_attribute(file, "writers", static_cast<std::int64_t>(header.writer_boxes.size()));
    write_attribute(file, "writer_boxes", pack(header.writer_boxes));
    for (std::size_t f = 0; f < fields.size(); ++f) {
      detail::h5_id dset(detail::h5_check(H5Dopen2(file, fields[f].name.c_str(), H5P_DEFAULT),
                                          "reopening dataset " + fields[f].name));
      write_attribute(dset.get(), "checksums", header.checksums[f]);
    }
    write_attribute(file, "metadata_checksum",
                    std::vector<std::uint64_t>{detail::metadata_checksum(header)});
  });
  // Only a complete, synced checkpoint gets its final name, and only then does `latest` move.
  detail::on_root(comm, [&] {
    detail::write_file_sum(spec.main_path, detail::raw_data_ranges(spec.main_path, header.fields));
    detail::install_checkpoint(opt.directory, name);
    detail::publish_latest(opt.directory, name);
    detail::prune_checkpoints(opt.directory, opt.keep_last, name);
  });
  return detail::join(opt.directory, name);
}

}  // namespace funnel::io
