#include "funnel/io/checkpoint_writer.hpp"

#include <optional>
#include <utility>

#include "array_file.hpp"
#include "checkpoint_directory.hpp"
#include "checkpoint_format.hpp"
#include "checksum.hpp"
#include "collective.hpp"
#include "file_system.hpp"
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
  impl_->mode = resolve(options.mode);
  impl_->options = std::move(options);
  impl_->comm = detail::duplicate(comm);
  detail::on_root(impl_->comm, [&] {
    const std::string& dir = impl_->options.directory;
    detail::make_directories(dir);
    impl_->lock.emplace(dir);
    detail::remove_leftovers(dir);
  });
}

checkpoint_writer::~checkpoint_writer() = default;
checkpoint_writer::checkpoint_writer(checkpoint_writer&&) noexcept = default;
checkpoint_writer& checkpoint_writer::operator=(checkpoint_writer&&) noexcept = default;

const std::string& checkpoint_writer::directory() const noexcept {
  return impl_->options.directory;
}

std::string checkpoint_writer::write(std::int64_t step, double time, const grid_block& block,
                                     const std::vector<field_view>& fields) {
  MPI_Comm comm = impl_->comm;
  const checkpoint_options& opt = impl_->options;
  detail::check_write_request(comm, block, fields);
  const std::vector<box> boxes = detail::gather_boxes(comm, block.local_box);
  const auto checksums = gather_checksums(comm, block, fields);

  const std::string name = detail::checkpoint_name(step);
  const std::string tmp = detail::join(opt.directory, name + ".tmp");
  detail::on_root(comm, [&] {
    detail::remove_tree(tmp);
    detail::make_directories(tmp);
  });
  detail::array_file_spec spec;
  spec.main_path = detail::join(tmp, detail::checkpoint_file_name);
  spec.blocks_dir = detail::join(tmp, detail::checkpoint_blocks_name);
  spec.mode = impl_->mode;
  spec.sync = true;
  const detail::array_metadata meta{step, time, opt.problem, opt.spacing};
  detail::write_array_file(comm, spec, block, fields, boxes, [&](hid_t file) {
    using detail::write_attribute;
    write_attribute(file, "format", std::string(detail::checkpoint_format));
    write_attribute(file, "format_version", detail::checkpoint_format_version);
    detail::write_common_attributes(file, meta, block.global_cells, fields);
    write_attribute(file, "configuration", opt.configuration);
    write_attribute(file, "writers", static_cast<std::int64_t>(boxes.size()));
    write_attribute(file, "writer_boxes", pack(boxes));
    for (std::size_t f = 0; f < fields.size(); ++f) {
      detail::h5_id dset(detail::h5_check(H5Dopen2(file, fields[f].name.c_str(), H5P_DEFAULT),
                                          "reopening dataset " + fields[f].name));
      write_attribute(dset.get(), "checksums", checksums[f]);
    }
  });
  // Only a complete, synced checkpoint gets its final name, and only then does `latest` move.
  detail::on_root(comm, [&] {
    detail::install_checkpoint(opt.directory, name);
    detail::publish_latest(opt.directory, name);
    detail::prune_checkpoints(opt.directory, opt.keep_last, name);
  });
  return detail::join(opt.directory, name);
}

}  // namespace funnel::io
