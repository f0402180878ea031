#include "funnel/io/checkpoint_reader.hpp"

#include <algorithm>
#include <utility>

#include "array_file.hpp"
#include "checkpoint_directory.hpp"
#include "checkpoint_format.hpp"
#include "checksum.hpp"
#include "collective.hpp"
#include "file_system.hpp"
#include "funnel/error.hpp"
#include "hdf5_support.hpp"

namespace funnel::io {
namespace {

std::string text(const index3& v) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

std::string text(const box& b) { return "[" + text(b.lo) + ", " + text(b.hi) + ")"; }

// A directory with `latest`, a ckpt-<step> directory, or a checkpoint file: the file to open.
std::string resolve_main_file(const std::string& path) {
  if (!detail::exists(path)) throw error("checkpoint '" + path + "' does not exist");
  if (!detail::is_directory(path)) return path;
  const std::string direct = detail::join(path, detail::checkpoint_file_name);
  if (detail::exists(direct)) return direct;
  const auto latest = checkpoint_reader::latest(path);
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

}  // namespace

struct checkpoint_reader::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::string file;
  detail::h5_id h5;
  std::int64_t step = 0;
  double time = 0.0;
  std::string problem;
  std::string configuration;
  std::string version;
  index3 global_cells{1, 1, 1};
  std::array<double, 3> spacing{1, 1, 1};
  std::vector<std::string> names;
  std::vector<dtype> types;
  std::vector<std::vector<std::uint64_t>> checksums;
  std::vector<box> boxes;

  ~impl() {
    h5.reset();
    detail::release(comm);
  }

  [[nodiscard]] std::size_t field_index(const std::string& field) const {
    const auto it = std::find(names.begin(), names.end(), field);
    FUNNEL_EXPECTS(it != names.end(), "checkpoint '" + file + "' has no field '" + field +
                                          "'; it has: " + detail::join_names(names));
    return static_cast<std::size_t>(it - names.begin());
  }

  void open_and_parse();
  void parse_boxes(std::int64_t writers);
  void verify_share();
  void check_block_files(std::size_t first, std::size_t stride) const;
};

void checkpoint_reader::impl::open_and_parse() {
  using namespace detail;
  h5_guard guard;
  h5_id fapl = file_access();
  h5 = h5_id(h5_check(
      H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.get()),
      "cannot open checkpoint file '" + file + "' (truncated, corrupted or not an HDF5 file)"));
  const hid_t f = h5.get();
  const std::string where = "checkpoint file '" + file + "'";
  if (H5Aexists(f, "format") <= 0 ||
      read_string_attribute(f, "format", where) != checkpoint_format) {
    throw error(where + " is not a funnel checkpoint (no format = \"" + checkpoint_format +
                "\" attribute)");
  }
  const auto format_version = read_int64_attribute(f, "format_version", where);
  if (format_version != checkpoint_format_version) {
    throw error(where + " has format version " + std::to_string(format_version) +
                "; this funnel reads version " + std::to_string(checkpoint_format_version));
  }
  step = read_int64_attribute(f, "step", where);
  time = read_double_attribute(f, "time", where);
  problem = read_string_attribute(f, "problem", where);
  configuration = read_string_attribute(f, "configuration", where);
  version = read_string_attribute(f, "funnel_version", where);
  const auto cells = read_int64_array(f, "global_cells", 3, where);
  const auto dx = read_double_array(f, "grid_spacing", 3, where);
  for (int a = 0; a < 3; ++a) {
    if (cells[a] <= 0) throw error(where + ": global_cells " + std::to_string(cells[a]) + " <= 0");
    global_cells[a] = cells[a];
    spacing[a] = dx[a];
  }
  names = split_names(read_string_attribute(f, "fields", where));
  if (names.empty()) throw error(where + " lists no fields");
  const auto writers = read_int64_attribute(f, "writers", where);
  parse_boxes(writers);
  const auto dims = file_dims(global_cells);
  for (const auto& name : names) {
    const std::string dwhere = where + " dataset '" + name + "'";
    if (H5Lexists(f, name.c_str(), H5P_DEFAULT) <= 0) throw error(dwhere + " is missing");
    h5_id d(h5_check(H5Dopen2(f, name.c_str(), H5P_DEFAULT), dwhere));
    types.push_back(dataset_dtype(d.get(), dwhere));
    h5_id space(h5_check(H5Dget_space(d.get()), dwhere));
    std::vector<hsize_t> stored(
        static_cast<std::size_t>(std::max(0, H5Sget_simple_extent_ndims(space.get()))));
    H5Sget_simple_extent_dims(space.get(), stored.data(), nullptr);
    if (stored != dims)
      throw error(dwhere + " does not have the shape of the grid " + text(global_cells));
    checksums.push_back(read_uint64_array(d.get(), "checksums", boxes.size(), dwhere));
  }
}

void checkpoint_reader::impl::parse_boxes(std::int64_t writers) {
  const std::string where = "checkpoint file '" + file + "'";
  if (writers <= 0 || writers > (std::int64_t{1} << 24)) {
    throw error(where + ": writers = " + std::to_string(writers) + " is not a rank count");
  }
  const auto packed = detail::read_int64_array(h5.get(), "writer_boxes",
                                               static_cast<std::size_t>(writers) * 6, where);
  std::int64_t cells = 0;
  for (std::int64_t w = 0; w < writers; ++w) {
    const auto* p = &packed[static_cast<std::size_t>(w) * 6];
    const box b{{p[0], p[1], p[2]}, {p[3], p[4], p[5]}};
    for (int a = 0; a < 3 && !b.empty(); ++a) {
      if (b.lo[a] < 0 || b.hi[a] > global_cells[a]) {
        throw error(where + ": writer box " + text(b) + " lies outside the grid " +
                    text(global_cells));
      }
    }
    cells += b.cells();
    boxes.push_back(b);
  }
  if (cells != global_cells[0] * global_cells[1] * global_cells[2]) {
    throw error(where + ": the writer boxes hold " + std::to_string(cells) +
                " cells, not the grid's " + text(global_cells));
  }
}

// In file_per_rank mode a missing or truncated block file would read as fill values through
// the virtual dataset; opening each file directly names the broken file instead.
void checkpoint_reader::impl::check_block_files(std::size_t first, std::size_t stride) const {
  using namespace detail;
  h5_id d(h5_check(H5Dopen2(h5.get(), names.front().c_str(), H5P_DEFAULT), file));
  h5_id dcpl(h5_check(H5Dget_create_plist(d.get()), file));
  if (H5Pget_layout(dcpl.get()) != H5D_VIRTUAL) return;
  size_t count = 0;
  h5_check(H5Pget_virtual_count(dcpl.get(), &count), file);
  for (std::size_t i = first; i < count; i += stride) {
    const ssize_t length = H5Pget_virtual_filename(dcpl.get(), i, nullptr, 0);
    h5_check(length, file + ": virtual mapping " + std::to_string(i));
    std::string name(static_cast<std::size_t>(length) + 1, '\0');
    H5Pget_virtual_filename(dcpl.get(), i, name.data(), name.size());
    name.resize(static_cast<std::size_t>(length));
    const std::string path = name.front() == '/' ? name : join(parent_path(file), name);
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
  detail::on_root(impl_->comm, [&] { file = resolve_main_file(path); });
  impl_->file = detail::broadcast(impl_->comm, file);
  detail::on_all(impl_->comm, [&] { impl_->open_and_parse(); });
  if (verify_checksums) detail::on_all(impl_->comm, [&] { impl_->verify_share(); });
}

checkpoint_reader::~checkpoint_reader() = default;
checkpoint_reader::checkpoint_reader(checkpoint_reader&&) noexcept = default;
checkpoint_reader& checkpoint_reader::operator=(checkpoint_reader&&) noexcept = default;

const std::string& checkpoint_reader::file() const noexcept { return impl_->file; }
std::int64_t checkpoint_reader::step() const noexcept { return impl_->step; }
double checkpoint_reader::time() const noexcept { return impl_->time; }
const std::string& checkpoint_reader::problem() const noexcept { return impl_->problem; }
const std::string& checkpoint_reader::configuration() const noexcept {
  return impl_->configuration;
}
const std::string& checkpoint_reader::funnel_version() const noexcept { return impl_->version; }
const index3& checkpoint_reader::global_cells() const noexcept { return impl_->global_cells; }
const std::array<double, 3>& checkpoint_reader::spacing() const noexcept { return impl_->spacing; }
const std::vector<std::string>& checkpoint_reader::field_names() const noexcept {
  return impl_->names;
}
const std::vector<box>& checkpoint_reader::writer_boxes() const noexcept { return impl_->boxes; }

dtype checkpoint_reader::field_type(const std::string& field) const {
  return impl_->types[impl_->field_index(field)];
}

void checkpoint_reader::require(const std::string& problem, const index3& global_cells,
                                const std::vector<std::string>& fields, dtype type) const {
  std::string mismatches;
  const auto add = [&](const std::string& m) {
    mismatches += (mismatches.empty() ? "" : "; ") + m;
  };
  if (problem != impl_->problem) {
    add("problem '" + impl_->problem + "' (this run: '" + problem + "')");
  }
  if (global_cells != impl_->global_cells) {
    add("grid " + text(impl_->global_cells) + " (this run: " + text(global_cells) + ")");
  }
  for (const auto& f : fields) {
    const auto it = std::find(impl_->names.begin(), impl_->names.end(), f);
    if (it == impl_->names.end()) {
      add("no field '" + f + "'");
    } else if (const dtype stored =
                   impl_->types[static_cast<std::size_t>(it - impl_->names.begin())];
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
    FUNNEL_EXPECTS(block.global_cells == impl_->global_cells,
                   "the block's grid " + text(block.global_cells) + " is not the checkpoint's " +
                       text(impl_->global_cells));
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
