// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/checkpoint_reader.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "array_file.hpp"
#include "checkpoint_directory.hpp"
#include "checkpoint_format.hpp"
#include "checksum.hpp"
#include "collective.hpp"
#include "file_system.hpp"
#include "funnel/error.hpp"
#include "funnel/io/checkpoint_writer.hpp"
#include "hdf5_support.hpp"

namespace funnel::io {
namespace {

std::string text(const index3& v) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

std::string text(const box& b) { return "[" + text(b.lo) + ", " + text(b.hi) + ")"; }

// A directory with `latest`, a ckpt-<step> directory, or a checkpoint file: the file to open.
// `latest` goes first: a checkpoint file at the top of a checkpoint directory that others may
// write (sticky) may be theirs, and is never taken in its place.
std::string resolve_main_file(const std::string& path) {
  if (!detail::exists(path)) throw error("checkpoint '" + path + "' does not exist");
  if (!detail::is_directory(path)) {
    // Only a checkpoint's own file: a snapshot, /dev/null or any other file is refused by name
    // here, not later as a checkpoint of an older format.
    const std::string name = path.substr(path.find_last_of('/') + 1);
    if (name != detail::checkpoint_file_name) {
      throw error("'" + path +
                  "' is not a checkpoint: give a checkpoint directory (ckpt-<step>), "
                  "the directory that holds their 'latest', or a checkpoint's '" +
                  detail::checkpoint_file_name + "'");
    }
    return path;
  }
  const std::string direct = detail::join(path, detail::checkpoint_file_name);
  const auto latest = checkpoint_reader::latest(path);
  if (!latest && detail::exists(direct)) {
    if (detail::is_shared_directory(path)) {
      for (const char* name : {detail::checkpoint_file_name, detail::checkpoint_sum_name,
                               detail::checkpoint_blocks_name}) {
        detail::refuse_foreign_entry(detail::join(path, name), "checkpoint file");
      }
    }
    return direct;
  }
  if (!latest) {
    throw error("'" + path + "' holds no checkpoint: it has neither a 'latest' file nor a '" +
                detail::checkpoint_file_name + "'");
  }
  const std::string file = detail::join(*latest, detail::checkpoint_file_name);
  if (!detail::exists(file)) {
    throw error("checkpoint '" + *latest + "' (named by " + path + "/latest) is incomplete: '" +
                file + "' is missing");
  }
  return file;
}

// a * b, or -1 when it exceeds 2^62 (no grid or block is that large).
std::int64_t checked_product(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t limit = std::int64_t{1} << 62;
  if (a < 0 || b < 0 || (a != 0 && b > limit / a)) return -1;
  return a * b;
}

}  // namespace

struct checkpoint_reader::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::string file;
  detail::h5_id h5;
  detail::checkpoint_header header;
  std::vector<dtype> types;

  ~impl() {
    h5.reset();
    detail::release(comm);
  }

  [[nodiscard]] std::size_t field_index(const std::string& field) const {
    const auto& names = header.fields;
    const auto it = std::find(names.begin(), names.end(), field);
    FUNNEL_EXPECTS(it != names.end(), "checkpoint '" + file + "' has no field '" + field +
                                          "'; it has: " + detail::join_names(names));
    return static_cast<std::size_t>(it - names.begin());
  }

  [[nodiscard]] std::string where() const { return "checkpoint file '" + file + "'"; }
  void open_and_parse();
  void read_header();
  void check_header() const;
  void read_datasets();
  void check_block_names() const;
  void verify_share();
  void check_block_files(std::size_t first, std::size_t stride) const;
};

void checkpoint_reader::impl::open_and_parse() {
  using namespace detail;
  h5_guard guard;
  require_regular_file(file, "checkpoint file", /*follow_links=*/true);
  h5_id fapl = file_access();
  h5 = h5_id(h5_check(
      H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.get()),
      "cannot open checkpoint file '" + file + "' (truncated, corrupted or not an HDF5 file)"));
  const hid_t f = h5.get();
  const htri_t has_format = H5Aexists(f, "format");
  if (has_format < 0) {
    throw error(where() + " is corrupted: its root attributes cannot be read (" + h5_error_text() +
                ")");
  }
  if (has_format == 0 || read_string_attribute(f, "format", where()) != checkpoint_format) {
    throw error(where() + " is not a funnel checkpoint (no format = \"" + checkpoint_format +
                "\" attribute)");
  }
  const auto format_version = read_int64_attribute(f, "format_version", where());
  if (format_version != checkpoint_format_version) {
    throw error(where() + " has format version " + std::to_string(format_version) +
                "; this funnel reads version " + std::to_string(checkpoint_format_version) +
                (format_version == 1 ? " only (version 1, without run id and metadata checksum, "
                                       "is no longer read): restart with the funnel that wrote it, "
                                       "or start the run again"
                                     : ""));
  }
  read_header();
  read_datasets();
  if (read_uint64_array(f, "metadata_checksum", 1, where())[0] != metadata_checksum(header)) {
    throw error("checkpoint '" + file +
                "' is corrupted: its metadata (step, time, grid, fields, writer boxes, checksums, "
                "...) does not match its metadata_checksum");
  }
  check_header();
  check_block_names();
}

void checkpoint_reader::impl::read_header() {
  using namespace detail;
  const hid_t f = h5.get();
  const std::string w = where();
  header.run_id = read_string_attribute(f, "run_id", w);
  header.step = read_int64_attribute(f, "step", w);
  header.time = read_double_attribute(f, "time", w);
  header.problem = read_string_attribute(f, "problem", w);
  header.configuration = read_string_attribute(f, "configuration", w);
  header.funnel_version = read_string_attribute(f, "funnel_version", w);
  header.dtype = read_string_attribute(f, "dtype", w);
  const auto cells = read_int64_array(f, "global_cells", 3, w);
  const auto dx = read_double_array(f, "grid_spacing", 3, w);
  for (int a = 0; a < 3; ++a) {
    header.global_cells[a] = cells[a];
    header.spacing[a] = dx[a];
  }
  header.fields = split_names(read_string_attribute(f, "fields", w));
  const auto writers = read_int64_attribute(f, "writers", w);
  // Checked before anything of this size is allocated.
  if (writers <= 0 || writers > (std::int64_t{1} << 24)) {
    throw error(w + ": writers = " + std::to_string(writers) + " is not a rank count");
  }
  const auto packed = read_int64_array(f, "writer_boxes", static_cast<std::size_t>(writers) * 6, w);
  for (std::int64_t i = 0; i < writers; ++i) {
    const auto* p = &packed[static_cast<std::size_t>(i) * 6];
    header.writer_boxes.push_back(box{{p[0], p[1], p[2]}, {p[3], p[4], p[5]}});
  }
}

// Values that the checksum covers can still be wrong in a file written by other means.
void checkpoint_reader::impl::check_header() const {
  const std::string w = where();
  const auto bad = [&](const std::string& what) { throw error(w + ": " + what); };
  if (header.step < 0 || header.step > checkpoint_writer::max_step) {
    bad("step " + std::to_string(header.step) + " is outside [0, " +
        std::to_string(checkpoint_writer::max_step) + "]");
  }
  if (!std::isfinite(header.time)) bad("time is not finite");
  if (!detail::valid_run_id(header.run_id)) bad("run_id is malformed");
  if (!detail::printable(header.problem, detail::max_problem_length)) {
    bad("problem is not a problem name");
  }
  if (!detail::printable(header.funnel_version, 64)) bad("funnel_version is not a version");
  std::int64_t total = 1;
  for (int a = 0; a < 3; ++a) {
    if (header.global_cells[a] <= 0) {
      bad("global_cells " + std::to_string(header.global_cells[a]) + " <= 0");
    }
    if (!(std::isfinite(header.spacing[a]) && header.spacing[a] > 0)) {
      bad("grid_spacing is not positive and finite");
    }
    total = checked_product(total, header.global_cells[a]);
    if (total < 0) bad("the grid " + text(header.global_cells) + " has more than 2^62 cells");
  }
  if (header.fields.empty()) bad("it lists no fields");
  // Each name was checked by read_datasets() before HDF5 was asked for it; a list may still
  // name a field twice.
  for (std::size_t i = 0; i < header.fields.size(); ++i) {
    const auto& name = header.fields[i];
    if (std::find(header.fields.begin(), header.fields.begin() + static_cast<std::ptrdiff_t>(i),
                  name) != header.fields.begin() + static_cast<std::ptrdiff_t>(i)) {
      bad("field list '" + detail::excerpt(detail::join_names(header.fields)) + "' is malformed");
    }
  }
  const std::string stored = detail::dtype_summary(types);
  if (stored != header.dtype) bad("dtype '" + header.dtype + "' is not its datasets' " + stored);
  std::int64_t cells = 0;
  for (const auto& b : header.writer_boxes) {
    for (int a = 0; a < 3 && !b.empty(); ++a) {  // a rank without cells may have any empty box
      if (b.lo[a] < 0 || b.lo[a] > b.hi[a] || b.hi[a] > header.global_cells[a]) {
        bad("writer box " + text(b) + " lies outside the grid " + text(header.global_cells));
      }
    }
    cells += b.cells();  // each at most the grid's, and at most 2^24 of them: no overflow
  }
  if (cells != total) {
    bad("the writer boxes hold " + std::to_string(cells) + " cells, not the grid's " +
        text(header.global_cells));
  }
}

void checkpoint_reader::impl::read_datasets() {
  using namespace detail;
  const hid_t f = h5.get();
  const auto dims = file_dims(header.global_cells);
  for (const auto& name : header.fields) {
    const std::string dwhere = where() + " dataset '" + name + "'";
    if (!valid_field_name(name)) {
      throw error(where() + ": field name '" + excerpt(name) + "' is malformed");
    }
    const htri_t exists = H5Lexists(f, name.c_str(), H5P_DEFAULT);
    if (exists < 0) throw error(dwhere + " is corrupted: " + h5_error_text());
    if (exists == 0) throw error(dwhere + " is missing");
    h5_id d(h5_check(H5Dopen2(f, name.c_str(), H5P_DEFAULT), dwhere));
    types.push_back(dataset_dtype(d.get(), dwhere));
    h5_id space(h5_check(H5Dget_space(d.get()), dwhere));
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) throw error(dwhere + " is corrupted: " + h5_error_text());
    std::vector<hsize_t> stored(static_cast<std::size_t>(rank));
    h5_check(H5Sget_simple_extent_dims(space.get(), stored.data(), nullptr), dwhere);
    if (stored != dims) {
      throw error(dwhere + " does not have the shape of the grid " + text(header.global_cells));
    }
    header.checksums.push_back(
        read_uint64_array(d.get(), "checksums", header.writer_boxes.size(), dwhere));
  }
}

// file_per_rank mode: a virtual dataset names its block files, and HDF5 opens what they name.
// They must be the writer's own names, relative to the checkpoint directory: a crafted file
// naming '/home/user/...' or '../..' must not make a restart open files elsewhere.
void checkpoint_reader::impl::check_block_names() const {
  using namespace detail;
  for (const auto& field : header.fields) {
    const std::string what = where() + " dataset '" + field + "'";
    h5_id d(h5_check(H5Dopen2(h5.get(), field.c_str(), H5P_DEFAULT), what));
    h5_id dcpl(h5_check(H5Dget_create_plist(d.get()), what));
    if (H5Pget_layout(dcpl.get()) != H5D_VIRTUAL) continue;
    size_t count = 0;
    h5_check(H5Pget_virtual_count(dcpl.get(), &count), what);
    std::size_t mapping = 0;
    for (std::size_t w = 0; w < header.writer_boxes.size(); ++w) {
      if (header.writer_boxes[w].empty()) continue;
      const std::string expected =
          std::string(checkpoint_blocks_name) + "/" + rank_file_name(static_cast<int>(w));
      std::string name;
      if (mapping < count) {
        const ssize_t length = H5Pget_virtual_filename(dcpl.get(), mapping, nullptr, 0);
        h5_check(length, what + ": virtual mapping " + std::to_string(mapping));
        name.assign(static_cast<std::size_t>(length) + 1, '\0');
        H5Pget_virtual_filename(dcpl.get(), mapping, name.data(), name.size());
        name.resize(static_cast<std::size_t>(length));
      }
      if (name != expected) {
        throw error(what + " names block file '" + excerpt(name, 200) + "' for writer " +
                    std::to_string(w) + "; block files must be '" + expected +
                    "', relative names inside the checkpoint directory");
      }
      ++mapping;
    }
    if (mapping != count) {
      throw error(what + " maps " + std::to_string(count) + " block files for " +
                  std::to_string(mapping) + " writers");
    }
  }
}

// In file_per_rank mode a missing or truncated block file would read as fill values through
// the virtual dataset; opening each file directly names the broken file instead. Their names
// were checked by check_block_names(); a block file must be a regular file, not a link.
void checkpoint_reader::impl::check_block_files(std::size_t first, std::size_t stride) const {
  using namespace detail;
  h5_id d(h5_check(H5Dopen2(h5.get(), header.fields.front().c_str(), H5P_DEFAULT), file));
  h5_id dcpl(h5_check(H5Dget_create_plist(d.get()), file));
  if (H5Pget_layout(dcpl.get()) != H5D_VIRTUAL) return;
  const std::string blocks = join(parent_path(file), checkpoint_blocks_name);
  if (first == 0) require_directory(blocks, "block files of checkpoint '" + file + "'");
  for (std::size_t w = first; w < header.writer_boxes.size(); w += stride) {
    if (header.writer_boxes[w].empty()) continue;
    const std::string path = join(blocks, rank_file_name(static_cast<int>(w)));
    require_regular_file(path, "block file of checkpoint '" + file + "'", /*follow_links=*/false);
    h5_id fapl = file_access();
    h5_id block_file(h5_check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()),
                              "cannot open block file '" + path + "' of checkpoint '" + file +
                                  "' (missing, truncated or corrupted)"));
  }
}

void checkpoint_reader::impl::verify_share() {
  using namespace detail;
  h5_guard guard;
  const auto rank = static_cast<std::size_t>(rank_of(comm));
  const auto size = static_cast<std::size_t>(size_of(comm));
  check_block_files(rank, size);
  std::vector<unsigned char> buffer;
  const auto& names = header.fields;
  const auto& boxes = header.writer_boxes;
  const auto& checksums = header.checksums;
  const index3& global_cells = header.global_cells;
  for (std::size_t f = 0; f < names.size(); ++f) {
    h5_id d(h5_check(H5Dopen2(h5.get(), names[f].c_str(), H5P_DEFAULT), file));
    h5_id fspace(h5_check(H5Dget_space(d.get()), file));
    for (std::size_t w = rank; w < boxes.size(); w += size) {
      const box& b = boxes[w];
      std::uint64_t sum = fnv1a_basis;
      if (!b.empty()) {
        buffer.resize(static_cast<std::size_t>(b.cells()) * size_of(types[f]));
        select_box(fspace.get(), b, global_cells);
        const auto count = static_cast<hsize_t>(b.cells());
        h5_id mspace(h5_check(H5Screate_simple(1, &count, nullptr), file));
        h5_check(
            H5Dread(d.get(), memory_type(types[f]), mspace.get(), fspace.get(), H5P_DEFAULT,
                    buffer.data()),
            "reading field '" + names[f] + "' block " + std::to_string(w) + " of '" + file + "'");
        sum = fnv1a(buffer.data(), buffer.size());
      }
      if (sum != checksums[f][w]) {
        throw error("checkpoint '" + file + "' is corrupted: field '" + names[f] + "' block " +
                    std::to_string(w) + " " + text(b) + " does not match its checksum");
      }
    }
  }
}

std::optional<std::string> checkpoint_reader::latest(const std::string& directory) {
  const auto name = detail::read_latest(directory);
  if (!name) return std::nullopt;
  const std::string path = detail::join(directory, *name);
  if (!detail::is_directory(path)) {
    throw error("'" + directory + "/latest' names checkpoint '" + *name +
                "', which does not exist");
  }
  return path;
}

checkpoint_reader::checkpoint_reader(MPI_Comm comm, const std::string& path, bool verify_checksums)
    : impl_(std::make_unique<impl>()) {
  impl_->comm = detail::duplicate(comm);
  std::string file;
  detail::on_root(impl_->comm, [&] {
    file = resolve_main_file(path);
    detail::verify_file_sum(file);  // before HDF5 parses any of it
  });
  impl_->file = detail::broadcast(impl_->comm, file);
  detail::on_all(impl_->comm, [&] { impl_->open_and_parse(); });
  if (verify_checksums) detail::on_all(impl_->comm, [&] { impl_->verify_share(); });
}

checkpoint_reader::~checkpoint_reader() = default;
checkpoint_reader::checkpoint_reader(checkpoint_reader&&) noexcept = default;
checkpoint_reader& checkpoint_reader::operator=(checkpoint_reader&&) noexcept = default;

const std::string& checkpoint_reader::file() const noexcept { return impl_->file; }
std::int64_t checkpoint_reader::step() const noexcept { return impl_->header.step; }
double checkpoint_reader::time() const noexcept { return impl_->header.time; }
const std::string& checkpoint_reader::run_id() const noexcept { return impl_->header.run_id; }
const std::string& checkpoint_reader::problem() const noexcept { return impl_->header.problem; }
const std::string& checkpoint_reader::configuration() const noexcept {
  return impl_->header.configuration;
}
const std::string& checkpoint_reader::funnel_version() const noexcept {
  return impl_->header.funnel_version;
}
const index3& checkpoint_reader::global_cells() const noexcept {
  return impl_->header.global_cells;
}
const std::array<double, 3>& checkpoint_reader::spacing() const noexcept {
  return impl_->header.spacing;
}
const std::vector<std::string>& checkpoint_reader::field_names() const noexcept {
  return impl_->header.fields;
}
const std::vector<box>& checkpoint_reader::writer_boxes() const noexcept {
  return impl_->header.writer_boxes;
}

dtype checkpoint_reader::field_type(const std::string& field) const {
  return impl_->types[impl_->field_index(field)];
}

void checkpoint_reader::require(const std::string& problem, const index3& global_cells,
                                const std::vector<std::string>& fields, dtype type) const {
  std::string mismatches;
  const auto add = [&](const std::string& m) {
    mismatches += (mismatches.empty() ? "" : "; ") + m;
  };
  const detail::checkpoint_header& h = impl_->header;
  if (problem != h.problem) {
    add("problem '" + h.problem + "' (this run: '" + problem + "')");
  }
  if (global_cells != h.global_cells) {
    add("grid " + text(h.global_cells) + " (this run: " + text(global_cells) + ")");
  }
  for (const auto& f : fields) {
    const auto it = std::find(h.fields.begin(), h.fields.end(), f);
    if (it == h.fields.end()) {
      add("no field '" + f + "'");
    } else if (const dtype stored = impl_->types[static_cast<std::size_t>(it - h.fields.begin())];
               stored != type) {
      add("field '" + f + "' is " + to_string(stored) + " (this run: " + to_string(type) + ")");
    }
  }
  if (!mismatches.empty()) {
    throw invalid_argument("checkpoint '" + impl_->file +
                           "' does not match this run: " + mismatches);
  }
}

void checkpoint_reader::read(const std::string& field, const grid_block& block, dtype type,
                             void* host) const {
  detail::on_all(impl_->comm, [&] {
    validate(block);
    const std::size_t f = impl_->field_index(field);
    FUNNEL_EXPECTS(block.global_cells == impl_->header.global_cells,
                   "the block's grid " + text(block.global_cells) + " is not the checkpoint's " +
                       text(impl_->header.global_cells));
    FUNNEL_EXPECTS(type == impl_->types[f],
                   "field '" + field + "' is " + to_string(impl_->types[f]) +
                       " in the checkpoint; it cannot be read as " + to_string(type));
    const bool empty = block.local_box.empty();
    FUNNEL_EXPECTS(empty || host != nullptr, "read into a nullptr array");
    detail::h5_guard guard;
    const std::string what = "reading field '" + field + "' of '" + impl_->file + "'";
    detail::h5_id d(detail::h5_check(H5Dopen2(impl_->h5.get(), field.c_str(), H5P_DEFAULT), what));
    detail::h5_id fspace(detail::h5_check(H5Dget_space(d.get()), what));
    detail::select_box(fspace.get(), block.local_box, block.global_cells);
    detail::h5_id mspace = detail::memory_space(block.layout, block.global_cells, empty);
    detail::h5_check(
        H5Dread(d.get(), detail::memory_type(type), mspace.get(), fspace.get(), H5P_DEFAULT, host),
        what);
  });
}

}  // namespace funnel::io
