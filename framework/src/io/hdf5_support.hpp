// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: RAII ids, error handling and attribute/dataspace helpers over the HDF5 C API.
#pragma once

#include <hdf5.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/io/dtype.hpp"

namespace funnel::io::detail {

/// Owns one HDF5 id of any kind and closes it with the matching H5?close. Move-only.
class h5_id {
 public:
  h5_id() = default;
  explicit h5_id(hid_t id) noexcept : id_(id) {}
  ~h5_id() { reset(); }
  h5_id(h5_id&& other) noexcept : id_(other.id_) { other.id_ = H5I_INVALID_HID; }
  h5_id& operator=(h5_id&& other) noexcept;
  h5_id(const h5_id&) = delete;
  h5_id& operator=(const h5_id&) = delete;

  [[nodiscard]] hid_t get() const noexcept { return id_; }
  /// Closes now and throws funnel::error (with `what`) when closing fails, e.g. a file whose
  /// last data cannot be flushed.
  void close(const std::string& what);
  /// Closes, logging failures; never throws.
  void reset() noexcept;

 private:
  hid_t id_ = H5I_INVALID_HID;
};

/// The process-wide lock every funnel HDF5 call holds: HDF5 built without thread safety (the
/// platform's parallel HDF5) must not be entered by two threads at once, and a snapshot's rank
/// block is written on a background thread while the caller may open another file.
std::recursive_mutex& h5_mutex() noexcept;

/// Held around every block of funnel's HDF5 calls: takes h5_mutex() and turns HDF5's automatic
/// error printing off for its lifetime (restoring the previous setting), so failures reach the
/// user once, as a funnel::error, not as an HDF5 stack dump.
class h5_guard {
 public:
  h5_guard() noexcept;
  ~h5_guard();
  h5_guard(const h5_guard&) = delete;
  h5_guard& operator=(const h5_guard&) = delete;

 private:
  std::lock_guard<std::recursive_mutex> lock_;
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

/// The messages of HDF5's current error stack, innermost last, "; "-separated (may be empty).
std::string h5_error_text();

/// Throws funnel::error "<what>: <HDF5 reason>" when `status` < 0; returns `status`.
hid_t h5_check(hid_t status, const std::string& what);

/// File access properties: HDF5 1.8+ object format, whose metadata carries checksums, so a
/// flipped bit in a header is detected. The HDF5_USE_FILE_LOCKING environment variable is left
/// to HDF5 (never overridden here).
h5_id file_access(hid_t driver_fapl = H5P_DEFAULT);

/// Memory and file types of a dtype.
hid_t memory_type(dtype type) noexcept;
hid_t file_type(dtype type) noexcept;

/// The dtype of a dataset; throws funnel::error naming `where` unless it is a 4- or 8-byte float.
dtype dataset_dtype(hid_t dataset, const std::string& where);

/// Dimensions of the stored global array: {nz, ny, nx}, or {ny, nx} when nz == 1.
std::vector<hsize_t> file_dims(const index3& global_cells);
/// A simple dataspace of `dims`.
h5_id simple_space(const std::vector<hsize_t>& dims);
/// Selects the cells of `b` (global coordinates) in a dataspace of file_dims(global_cells).
void select_box(hid_t space, const box& b, const index3& global_cells);
/// A memory dataspace of the allocated array of `layout` with its interior selected; the rank
/// (2 or 3) follows the global grid.
h5_id memory_space(const field_layout& layout, const index3& global_cells, bool empty);

/// Attribute writers (create + write on `object`).
void write_attribute(hid_t object, const char* name, const std::string& value);
void write_attribute(hid_t object, const char* name, std::int64_t value);
void write_attribute(hid_t object, const char* name, double value);
void write_attribute(hid_t object, const char* name, const std::vector<std::int64_t>& values);
void write_attribute(hid_t object, const char* name, const std::vector<double>& values);
void write_attribute(hid_t object, const char* name, const std::vector<std::uint64_t>& values);

/// Attribute readers; throw funnel::error naming `where` when the attribute is missing or has
/// another type or size.
std::string read_string_attribute(hid_t object, const char* name, const std::string& where);
std::int64_t read_int64_attribute(hid_t object, const char* name, const std::string& where);
double read_double_attribute(hid_t object, const char* name, const std::string& where);
std::vector<std::int64_t> read_int64_array(hid_t object, const char* name, std::size_t count,
                                           const std::string& where);
std::vector<double> read_double_array(hid_t object, const char* name, std::size_t count,
                                      const std::string& where);
std::vector<std::uint64_t> read_uint64_array(hid_t object, const char* name, std::size_t count,
                                             const std::string& where);

}  // namespace funnel::io::detail
