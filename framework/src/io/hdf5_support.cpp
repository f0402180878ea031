// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "hdf5_support.hpp"

#include <exception>

#include "funnel/error.hpp"

namespace funnel::io::detail {
namespace {

herr_t close_any(hid_t id) {
  switch (H5Iget_type(id)) {
    case H5I_FILE:
      return H5Fclose(id);
    case H5I_GROUP:
      return H5Gclose(id);
    case H5I_DATASET:
      return H5Dclose(id);
    case H5I_DATASPACE:
      return H5Sclose(id);
    case H5I_DATATYPE:
      return H5Tclose(id);
    case H5I_ATTR:
      return H5Aclose(id);
    case H5I_GENPROP_LST:
      return H5Pclose(id);
    default:
      return -1;
  }
}

herr_t collect_message(unsigned /*n*/, const H5E_error2_t* entry, void* out) {
  auto& messages = *static_cast<std::vector<std::string>*>(out);
  if (entry->desc != nullptr && entry->desc[0] != '\0') {
    std::string text;
    for (const char* c = entry->desc; *c != '\0'; ++c) text += (*c == '\n' ? ' ' : *c);
    // A failed system call is described with its time, descriptor, buffer address, sizes...:
    // its error message is what a user needs.
    const std::string marker = "error message = '";
    if (const auto at = text.find(marker); at != std::string::npos) {
      const auto end = text.find('\'', at + marker.size());
      text = text.substr(at + marker.size(),
                         end == std::string::npos ? end : end - at - marker.size());
    }
    if (messages.empty() || messages.back() != text) messages.push_back(text);
  }
  return 0;
}

std::string where_attr(const std::string& where, const char* name) {
  return where + ": attribute '" + name + "'";
}

h5_id open_attribute(hid_t object, const char* name, const std::string& where) {
  const htri_t exists = H5Aexists(object, name);
  if (exists < 0) {
    throw error(where_attr(where, name) + " cannot be looked up: the metadata is corrupted (" +
                h5_error_text() + ")");
  }
  if (exists == 0) throw error(where_attr(where, name) + " is missing");
  return h5_id(h5_check(H5Aopen(object, name, H5P_DEFAULT), where_attr(where, name)));
}

template <class T>
void write_array(hid_t object, const char* name, const T* values, std::size_t count, hid_t file_t,
                 hid_t mem_t) {
  const hsize_t dims[1] = {count};
  h5_id space(h5_check(H5Screate_simple(1, dims, nullptr), std::string("dataspace of ") + name));
  h5_id attr(h5_check(H5Acreate2(object, name, file_t, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                      std::string("creating attribute ") + name));
  h5_check(H5Awrite(attr.get(), mem_t, values), std::string("writing attribute ") + name);
}

template <class T>
std::vector<T> read_array(hid_t object, const char* name, std::size_t count, hid_t mem_t,
                          H5T_class_t cls, const std::string& where) {
  h5_id attr = open_attribute(object, name, where);
  h5_id type(h5_check(H5Aget_type(attr.get()), where_attr(where, name)));
  h5_id space(h5_check(H5Aget_space(attr.get()), where_attr(where, name)));
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (H5Tget_class(type.get()) != cls || n != static_cast<hssize_t>(count)) {
    throw error(where_attr(where, name) + " has " + std::to_string(n) +
                " elements of another type; expected " + std::to_string(count));
  }
  std::vector<T> values(count);
  h5_check(H5Aread(attr.get(), mem_t, values.data()), where_attr(where, name));
  return values;
}

}  // namespace

h5_id& h5_id::operator=(h5_id&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    other.id_ = H5I_INVALID_HID;
  }
  return *this;
}

void h5_id::close(const std::string& what) {
  if (id_ < 0) return;
  const std::lock_guard<std::recursive_mutex> lock(h5_mutex());
  const hid_t id = id_;
  id_ = H5I_INVALID_HID;
  h5_check(close_any(id), what);
}

void h5_id::reset() noexcept {
  if (id_ < 0) return;
  const std::lock_guard<std::recursive_mutex> lock(h5_mutex());
  // While an exception unwinds, it already tells what failed (often the same write error).
  if (close_any(id_) < 0 && std::uncaught_exceptions() == 0)
    funnel::detail::log_error("closing an HDF5 object failed: " + h5_error_text());
  id_ = H5I_INVALID_HID;
}

std::recursive_mutex& h5_mutex() noexcept {
  static std::recursive_mutex mutex;
  return mutex;
}

h5_guard::h5_guard() noexcept : lock_(h5_mutex()) {
  H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

h5_guard::~h5_guard() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }

std::string h5_error_text() {
  std::vector<std::string> messages;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_message, &messages);
  if (messages.empty()) return "HDF5 gave no reason";
  // The innermost reasons say what went wrong; the outer ones only which calls gave up.
  constexpr std::size_t kept = 3;
  std::string text;
  for (std::size_t i = 0; i < messages.size() && i < kept; ++i) {
    text += (i == 0 ? "" : "; ") + messages[i];
  }
  return text;
}

hid_t h5_check(hid_t status, const std::string& what) {
  if (status < 0) throw error(what + ": " + h5_error_text());
  return status;
}

h5_id file_access(hid_t driver_fapl) {
  h5_id fapl(
      h5_check(driver_fapl == H5P_DEFAULT ? H5Pcreate(H5P_FILE_ACCESS) : H5Pcopy(driver_fapl),
               "file access properties"));
  h5_check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST), "libver bounds");
  return fapl;
}

hid_t memory_type(dtype type) noexcept {
  return type == dtype::float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

hid_t file_type(dtype type) noexcept {
  return type == dtype::float32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
}

dtype dataset_dtype(hid_t dataset, const std::string& where) {
  h5_id type(h5_check(H5Dget_type(dataset), where));
  const std::size_t size = H5Tget_size(type.get());
  if (H5Tget_class(type.get()) != H5T_FLOAT || (size != 4 && size != 8)) {
    throw error(where + " holds " + std::to_string(size) +
                "-byte elements that are not float32 or float64");
  }
  return size == 4 ? dtype::float32 : dtype::float64;
}

std::vector<hsize_t> file_dims(const index3& g) {
  if (g[2] == 1) return {static_cast<hsize_t>(g[1]), static_cast<hsize_t>(g[0])};
  return {static_cast<hsize_t>(g[2]), static_cast<hsize_t>(g[1]), static_cast<hsize_t>(g[0])};
}

h5_id simple_space(const std::vector<hsize_t>& dims) {
  return h5_id(h5_check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                        "creating a dataspace"));
}

void select_box(hid_t space, const box& b, const index3& global_cells) {
  if (b.empty()) {
    h5_check(H5Sselect_none(space), "selecting nothing");
    return;
  }
  std::vector<hsize_t> first{static_cast<hsize_t>(b.lo[2]), static_cast<hsize_t>(b.lo[1]),
                             static_cast<hsize_t>(b.lo[0])};
  std::vector<hsize_t> count{static_cast<hsize_t>(b.extent(2)), static_cast<hsize_t>(b.extent(1)),
                             static_cast<hsize_t>(b.extent(0))};
  if (global_cells[2] == 1) {  // stored 2D: drop z
    first.erase(first.begin());
    count.erase(count.begin());
  }
  h5_check(H5Sselect_hyperslab(space, H5S_SELECT_SET, first.data(), nullptr, count.data(), nullptr),
           "selecting a hyperslab");
}

h5_id memory_space(const field_layout& layout, const index3& global_cells, bool empty) {
  const bool flat = global_cells[2] == 1;
  std::vector<hsize_t> dims{static_cast<hsize_t>(layout.allocated(2)),
                            static_cast<hsize_t>(layout.allocated(1)),
                            static_cast<hsize_t>(layout.row_pitch())};
  // In memory a row is a slot of row_pitch() elements, cell x at lead() + x (field_layout.hpp).
  const box inner = layout.interior_box();
  std::vector<hsize_t> start{static_cast<hsize_t>(inner.lo[2]), static_cast<hsize_t>(inner.lo[1]),
                             static_cast<hsize_t>(layout.lead() + inner.lo[0])};
  std::vector<hsize_t> count{static_cast<hsize_t>(layout.interior[2]),
                             static_cast<hsize_t>(layout.interior[1]),
                             static_cast<hsize_t>(layout.interior[0])};
  if (flat) {
    dims.erase(dims.begin());
    start.erase(start.begin());
    count.erase(count.begin());
  }
  h5_id space = simple_space(dims);
  if (empty) {
    h5_check(H5Sselect_none(space.get()), "selecting nothing");
  } else {
    h5_check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                                 nullptr),
             "selecting the interior");
  }
  return space;
}

void write_attribute(hid_t object, const char* name, const std::string& value) {
  h5_id type(h5_check(H5Tcopy(H5T_C_S1), "string type"));
  h5_check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
  h5_check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
  h5_id space(h5_check(H5Screate(H5S_SCALAR), "scalar dataspace"));
  h5_id attr(h5_check(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                      std::string("creating attribute ") + name));
  const char* text = value.c_str();
  h5_check(H5Awrite(attr.get(), type.get(), &text), std::string("writing attribute ") + name);
}

void write_attribute(hid_t object, const char* name, std::int64_t value) {
  h5_id space(h5_check(H5Screate(H5S_SCALAR), "scalar dataspace"));
  h5_id attr(
      h5_check(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
               std::string("creating attribute ") + name));
  h5_check(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value),
           std::string("writing attribute ") + name);
}

void write_attribute(hid_t object, const char* name, double value) {
  h5_id space(h5_check(H5Screate(H5S_SCALAR), "scalar dataspace"));
  h5_id attr(
      h5_check(H5Acreate2(object, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
               std::string("creating attribute ") + name));
  h5_check(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value),
           std::string("writing attribute ") + name);
}

void write_attribute(hid_t object, const char* name, const std::vector<std::int64_t>& values) {
  write_array(object, name, values.data(), values.size(), H5T_STD_I64LE, H5T_NATIVE_INT64);
}

void write_attribute(hid_t object, const char* name, const std::vector<double>& values) {
  write_array(object, name, values.data(), values.size(), H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
}

void write_attribute(hid_t object, const char* name, const std::vector<std::uint64_t>& values) {
  write_array(object, name, values.data(), values.size(), H5T_STD_U64LE, H5T_NATIVE_UINT64);
}

std::string read_string_attribute(hid_t object, const char* name, const std::string& where) {
  h5_id attr = open_attribute(object, name, where);
  h5_id stored(h5_check(H5Aget_type(attr.get()), where_attr(where, name)));
  h5_id space(h5_check(H5Aget_space(attr.get()), where_attr(where, name)));
  if (H5Tget_class(stored.get()) != H5T_STRING || H5Tis_variable_str(stored.get()) <= 0 ||
      H5Sget_simple_extent_npoints(space.get()) != 1) {
    throw error(where_attr(where, name) + " is not a variable-length string");
  }
  h5_id type(h5_check(H5Tcopy(H5T_C_S1), "string type"));
  h5_check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
  h5_check(H5Tset_cset(type.get(), H5Tget_cset(stored.get())), "string type");
  char* text = nullptr;
  h5_check(H5Aread(attr.get(), type.get(), &text), where_attr(where, name));
  std::string value = text != nullptr ? std::string(text) : std::string();
  H5free_memory(text);
  return value;
}

std::int64_t read_int64_attribute(hid_t object, const char* name, const std::string& where) {
  return read_array<std::int64_t>(object, name, 1, H5T_NATIVE_INT64, H5T_INTEGER, where)[0];
}

double read_double_attribute(hid_t object, const char* name, const std::string& where) {
  return read_array<double>(object, name, 1, H5T_NATIVE_DOUBLE, H5T_FLOAT, where)[0];
}

std::vector<std::int64_t> read_int64_array(hid_t object, const char* name, std::size_t count,
                                           const std::string& where) {
  return read_array<std::int64_t>(object, name, count, H5T_NATIVE_INT64, H5T_INTEGER, where);
}

std::vector<double> read_double_array(hid_t object, const char* name, std::size_t count,
                                      const std::string& where) {
  return read_array<double>(object, name, count, H5T_NATIVE_DOUBLE, H5T_FLOAT, where);
}

std::vector<std::uint64_t> read_uint64_array(hid_t object, const char* name, std::size_t count,
                                             const std::string& where) {
  return read_array<std::uint64_t>(object, name, count, H5T_NATIVE_UINT64, H5T_INTEGER, where);
}

}  // namespace funnel::io::detail
