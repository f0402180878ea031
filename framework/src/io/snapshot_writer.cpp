// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/snapshot_writer.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <system_error>
#include <thread>
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

// A series name's bound: its files' staging folders (detail::staging_path) add 26 characters
// to `<series>-<step>.h5`, and a file name stops at 255.
constexpr std::size_t longest_series = 128;

bool valid_series(const std::string& s) {
  // No '-' at the end: series "s-" would own "s--0000005.h5".
  if (s.empty() || s.size() > longest_series || s.back() == '-') return false;
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
    const std::string path = join(dir, file);
    // A FIFO of that name would block the open: only regular files are examined.
    require_regular_file(path, "snapshot file", /*follow_links=*/false);
    h5_guard guard;
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

// One snapshot between its start (submit/write) and its completion (wait).
struct snapshot_in_flight {
  std::int64_t step = 0;
  double time = 0.0;
  detail::array_file_spec spec;
  grid_block block;
  std::vector<field_view> fields;
  std::vector<box> boxes;
  std::thread worker;          // writing this rank's block (file_per_rank, background)
  std::exception_ptr failure;  // set by whoever wrote the block, read after the join
  double seconds = 0.0;        // spent writing the block file

  // Writes this rank's block file; never throws (the failure is kept for wait()).
  void write_block(int rank, const std::function<void()>& ready) noexcept {
    try {
      if (ready) ready();
      const auto start = std::chrono::steady_clock::now();
      detail::write_rank_file(spec, rank, block, fields);
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } catch (...) {
      failure = std::current_exception();
    }
  }

  void join() noexcept {
    if (worker.joinable()) worker.join();
  }
};

struct snapshot_writer::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  snapshot_options options;
  file_mode mode = file_mode::file_per_rank;
  bool mpi_allows_threads = false;
  double background_seconds = 0.0;
  std::map<std::int64_t, detail::xdmf_entry> entries;  // on rank 0
  std::unique_ptr<snapshot_in_flight> pending;

  ~impl() {
    if (pending) {
      pending->join();
      if (pending->failure) {
        funnel::detail::log_error("snapshot of step " + std::to_string(pending->step) +
                                  " left incomplete: " + describe(pending->failure));
      }
    }
    detail::release(comm);
  }

  [[nodiscard]] bool overlaps() const noexcept {
    return mode == file_mode::file_per_rank && mpi_allows_threads;
  }

  static std::string describe(const std::exception_ptr& failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      return e.what();
    } catch (...) {
      return "unknown exception";
    }
  }

  // Whether `name` is a main file of this series, `<series>-<digits>.h5` (a series named
  // "run" does not own "run-2-00000001.h5").
  [[nodiscard]] bool of_series(const std::string& name) const {
    const std::string prefix = options.series + "-";
    if (name.size() <= prefix.size() + 3 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - 3, 3, ".h5") != 0) {
      return false;
    }
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    return digits.find_first_not_of("0123456789") == std::string::npos;
  }

  void scan_existing() {
    const std::string placeholder = detail::space_placeholder_suffix;
    // In a sticky directory other users may write, only this user's files are this series.
    const bool shared = detail::is_shared_directory(options.directory);
    for (const auto& name : detail::list_directory(options.directory)) {
      if (shared && detail::is_foreign_entry(detail::join(options.directory, name))) continue;
      // What a shared file's writer killed meanwhile leaves: its staging folder
      // (detail::staging_suffix), or, from earlier versions, the placeholder of its space.
      const bool placeholder_left =
          name.size() > placeholder.size() &&
          name.compare(name.size() - placeholder.size(), placeholder.size(), placeholder) == 0 &&
          of_series(name.substr(0, name.size() - placeholder.size()));
      if (of_series(detail::staged_main_name(name)) || placeholder_left) {
        detail::remove_tree(detail::join(options.directory, name));
        continue;
      }
      if (!of_series(name)) continue;
      if (auto e = read_entry(options.directory, name)) entries[e->step] = std::move(*e);
    }
  }

  void write_index() const {
    std::vector<detail::xdmf_entry> list;
    for (const auto& [step, e] : entries) list.push_back(e);
    write_file_atomically(detail::join(options.directory, options.series + ".xmf"),
                          detail::xdmf_document(options.series, list));
  }

  // The main file's root attributes.
  [[nodiscard]] detail::file_decorator decorator(const snapshot_in_flight& p) const {
    return [this, &p](hid_t file) {
      const detail::array_metadata meta{p.step, p.time, options.problem, options.spacing};
      detail::write_common_attributes(file, meta, p.block.global_cells, p.fields);
      detail::write_attribute(file, "origin",
                              std::vector<double>(options.origin.begin(), options.origin.end()));
    };
  }

  // Collective: everything up to this rank's block (written now or on a thread).
  void start(std::int64_t step, double time, const grid_block& block,
             const std::vector<field_view>& fields, std::function<void()> ready, bool background) {
    complete();
    FUNNEL_EXPECTS(step >= 0, "snapshot step " + std::to_string(step) + " is negative");
    detail::check_write_request(comm, block, fields);
    auto p = std::make_unique<snapshot_in_flight>();
    p->step = step;
    p->time = time;
    p->block = block;
    p->fields = fields;
    p->boxes = detail::gather_boxes(comm, block.local_box);
    const std::string name = snapshot_name(options.series, step);
    p->spec.main_path = detail::join(options.directory, name + ".h5");
    p->spec.blocks_dir = detail::join(options.directory, name + ".blocks");
    p->spec.mode = mode;
    detail::on_root(comm, [&] {
      for (const auto* path : {&p->spec.main_path, &p->spec.blocks_dir}) {
        detail::refuse_foreign_entry(*path, "snapshot file");
      }
    });
    if (mode == file_mode::shared_file) {
      // Collective MPI-IO: written here, by this thread.
      detail::on_all(comm, [&] {
        if (ready) ready();
      });
      detail::write_array_file(comm, p->spec, block, fields, p->boxes, decorator(*p));
    } else {
      detail::prepare_blocks_directory(comm, p->spec);
      const int rank = detail::rank_of(comm);
      if (background && overlaps()) {
        try {
          p->worker = std::thread([q = p.get(), rank, ready] { q->write_block(rank, ready); });
        } catch (const std::system_error&) {
          p->write_block(rank, ready);  // no thread to be had: write it now, on every rank alike
        }
      } else {
        p->write_block(rank, ready);
      }
    }
    pending = std::move(p);
  }

  // Collective: waits for the blocks, agrees on the outcome, writes the main file and index.
  std::string complete() {
    if (!pending) return {};
    const std::unique_ptr<snapshot_in_flight> p = std::move(pending);
    const bool on_thread = p->worker.joinable();
    p->join();
    if (on_thread) background_seconds += p->seconds;
    detail::agree(comm, p->failure);
    if (p->spec.mode == file_mode::file_per_rank) {
      detail::on_root(comm, [&] {
        detail::write_virtual_main(p->spec, p->block, p->fields, p->boxes, decorator(*p));
      });
    }
    detail::on_root(comm, [&] {
      detail::xdmf_entry e;
      e.step = p->step;
      e.time = p->time;
      e.file = detail::base_name(p->spec.main_path);
      e.global_cells = p->block.global_cells;
      e.spacing = options.spacing;
      e.origin = options.origin;
      for (const auto& f : p->fields) e.fields.emplace_back(f.name, f.type);
      entries[p->step] = std::move(e);
      write_index();
    });
    return p->spec.main_path;
  }
};

snapshot_writer::snapshot_writer(MPI_Comm comm, snapshot_options options)
    : impl_(std::make_unique<impl>()) {
  FUNNEL_EXPECTS(!options.directory.empty(), "snapshot directory must not be empty");
  FUNNEL_EXPECTS(valid_series(options.series),
                 "series name '" + detail::excerpt(options.series) +
                     "' must be 1 to 128 letters, digits, '_' or '-', not ending in '-'");
  impl_->mode = resolve(options.mode);
  impl_->options = std::move(options);
  int level = MPI_THREAD_SINGLE;
  FUNNEL_MPI_TRY(MPI_Query_thread(&level), "snapshot_writer");
  impl_->mpi_allows_threads = level >= MPI_THREAD_FUNNELED;
  impl_->comm = detail::duplicate(comm);
  // HDF5 initialises itself on its first call, and a parallel HDF5 build makes MPI calls then:
  // that must happen here, on the thread that may call MPI, not on the block-writing thread.
  detail::on_all(impl_->comm, [] {
    const detail::h5_guard guard;
    detail::h5_check(H5open(), "initialising HDF5");
  });
  detail::on_root(impl_->comm, [&] {
    detail::make_directories(impl_->options.directory);
    // The rules of checkpoint directories: snapshot files are made by name (HDF5), so nobody
    // else may plant links or files where they go.
    detail::check_output_directory(impl_->options.directory, "snapshot directory");
    impl_->scan_existing();
  });
}

snapshot_writer::~snapshot_writer() = default;
snapshot_writer::snapshot_writer(snapshot_writer&&) noexcept = default;
snapshot_writer& snapshot_writer::operator=(snapshot_writer&&) noexcept = default;

std::string snapshot_writer::write(std::int64_t step, double time, const grid_block& block,
                                   const std::vector<field_view>& fields) {
  impl_->start(step, time, block, fields, {}, false);
  return impl_->complete();
}

void snapshot_writer::submit(std::int64_t step, double time, const grid_block& block,
                             const std::vector<field_view>& fields, std::function<void()> ready) {
  impl_->start(step, time, block, fields, std::move(ready), true);
}

std::string snapshot_writer::wait() { return impl_->complete(); }

bool snapshot_writer::overlaps() const noexcept { return impl_->overlaps(); }

double snapshot_writer::background_seconds() const noexcept { return impl_->background_seconds; }

std::string snapshot_writer::xdmf_path() const {
  return detail::join(impl_->options.directory, impl_->options.series + ".xmf");
}

}  // namespace funnel::io
