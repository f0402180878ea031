#include "funnel/io/snapshot_writer.hpp"

#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "array_file.hpp"
#include "collective.hpp"
#include "file_system.hpp"
#include "funnel/error.hpp"
#include "funnel/io/atomic_file.hpp"
#include "hdf5_support.hpp"
#include "xdmf.hpp"

namespace funnel::io {
namespace {

bool valid_series(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

std::string snapshot_name(const std::string& series, std::int64_t step) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%08lld", static_cast<long long>(step));
  return series + "-" + digits;
}

// A snapshot file of this series, as left by an earlier run, turned back into its index entry.
// Unreadable files are left out of the index rather than failing the run.
std::optional<detail::xdmf_entry> read_entry(const std::string& dir, const std::string& file) {
  using namespace detail;
  try {
    h5_quiet quiet;
    const std::string path = join(dir, file);
    h5_id fapl = file_access();
    h5_id f(h5_check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), path));
    xdmf_entry e;
    e.file = file;
    e.step = read_int64_attribute(f.get(), "step", path);
    e.time = read_double_attribute(f.get(), "time", path);
    const auto cells = read_int64_array(f.get(), "global_cells", 3, path);
    const auto spacing = read_double_array(f.get(), "grid_spacing", 3, path);
    const auto origin = read_double_array(f.get(), "origin", 3, path);
    for (int a = 0; a < 3; ++a) {
      e.global_cells[a] = cells[a];
      e.spacing[a] = spacing[a];
      e.origin[a] = origin[a];
    }
    for (const auto& name : split_names(read_string_attribute(f.get(), "fields", path))) {
      h5_id d(h5_check(H5Dopen2(f.get(), name.c_str(), H5P_DEFAULT), path + ":/" + name));
      e.fields.emplace_back(name, dataset_dtype(d.get(), path + ":/" + name));
    }
    return e;
  } catch (const std::exception& ex) {
    funnel::detail::log_error(std::string("snapshot index: leaving out ") + file + ": " +
                              ex.what());
    return std::nullopt;
  }
}

}  // namespace

struct snapshot_writer::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  snapshot_options options;
  file_mode mode = file_mode::file_per_rank;
  std::map<std::int64_t, detail::xdmf_entry> entries;  // on rank 0

  ~impl() { detail::release(comm); }

  void scan_existing() {
    const std::string prefix = options.series + "-";
    for (const auto& name : detail::list_directory(options.directory)) {
      if (name.size() <= prefix.size() + 3 || name.compare(0, prefix.size(), prefix) != 0 ||
          name.compare(name.size() - 3, 3, ".h5") != 0) {
        continue;
      }
      const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
      if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
      if (auto e = read_entry(options.directory, name)) entries[e->step] = std::move(*e);
    }
  }

  void write_index() const {
    std::vector<detail::xdmf_entry> list;
    for (const auto& [step, e] : entries) list.push_back(e);
    write_file_atomically(detail::join(options.directory, options.series + ".xmf"),
                          detail::xdmf_document(options.series, list));
  }
};

snapshot_writer::snapshot_writer(MPI_Comm comm, snapshot_options options)
    : impl_(std::make_unique<impl>()) {
  FUNNEL_EXPECTS(!options.directory.empty(), "snapshot directory must not be empty");
  FUNNEL_EXPECTS(valid_series(options.series),
                 "series name '" + options.series + "' must be letters, digits, '_' or '-'");
  impl_->mode = resolve(options.mode);
  impl_->options = std::move(options);
  impl_->comm = detail::duplicate(comm);
  detail::on_root(impl_->comm, [&] {
    detail::make_directories(impl_->options.directory);
    impl_->scan_existing();
  });
}

snapshot_writer::~snapshot_writer() = default;
snapshot_writer::snapshot_writer(snapshot_writer&&) noexcept = default;
snapshot_writer& snapshot_writer::operator=(snapshot_writer&&) noexcept = default;

std::string snapshot_writer::write(std::int64_t step, double time, const grid_block& block,
                                   const std::vector<field_view>& fields) {
  MPI_Comm comm = impl_->comm;
  const snapshot_options& opt = impl_->options;
  detail::check_write_request(comm, block, fields);
  const std::vector<box> boxes = detail::gather_boxes(comm, block.local_box);
  const std::string name = snapshot_name(opt.series, step);
  detail::array_file_spec spec;
  spec.main_path = detail::join(opt.directory, name + ".h5");
  spec.blocks_dir = detail::join(opt.directory, name + ".blocks");
  spec.mode = impl_->mode;
  // Rank files of an earlier run with more ranks would otherwise linger next to the new ones.
  if (spec.mode == file_mode::file_per_rank) {
    detail::on_root(comm, [&] { detail::remove_tree(spec.blocks_dir); });
  }
  const detail::array_metadata meta{step, time, opt.problem, opt.spacing};
  detail::write_array_file(comm, spec, block, fields, boxes, [&](hid_t file) {
    detail::write_common_attributes(file, meta, block.global_cells, fields);
    detail::write_attribute(file, "origin",
                            std::vector<double>(opt.origin.begin(), opt.origin.end()));
  });
  detail::on_root(comm, [&] {
    detail::xdmf_entry e;
    e.step = step;
    e.time = time;
    e.file = name + ".h5";
    e.global_cells = block.global_cells;
    e.spacing = opt.spacing;
    e.origin = opt.origin;
    for (const auto& f : fields) e.fields.emplace_back(f.name, f.type);
    impl_->entries[step] = std::move(e);
    impl_->write_index();
  });
  return spec.main_path;
}

std::string snapshot_writer::xdmf_path() const {
  return detail::join(impl_->options.directory, impl_->options.series + ".xmf");
}

}  // namespace funnel::io
