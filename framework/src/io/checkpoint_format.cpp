// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_format.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <utility>

#include "checksum.hpp"
#include "file_system.hpp"
#include "funnel/error.hpp"
#include "funnel/ipc/unique_fd.hpp"
#include "hdf5_support.hpp"

namespace funnel::io::detail {
namespace {

class digest {
 public:
  void add(const char* name, const void* data, std::size_t bytes) {
    state_ = fnv1a(name, std::strlen(name) + 1, state_);
    const auto size = static_cast<std::uint64_t>(bytes);
    state_ = fnv1a(&size, sizeof size, state_);
    state_ = fnv1a(data, bytes, state_);
  }
  void add(const char* name, const std::string& s) { add(name, s.data(), s.size()); }
  template <class T>
  void add(const char* name, const std::vector<T>& v) {
    add(name, v.data(), v.size() * sizeof(T));
  }
  [[nodiscard]] std::uint64_t value() const noexcept { return state_; }

 private:
  std::uint64_t state_ = fnv1a_basis;
};

constexpr const char* sum_header = "funnel-checkpoint-sum 1";
constexpr std::size_t max_sum_bytes = 65536;

// FNV-1a 64 of `text` continued over the bytes of `fd` outside `skip` (sorted, disjoint).
std::uint64_t sum_of(const std::string& text, int fd, std::uint64_t size, const byte_ranges& skip,
                     const std::string& path) {
  std::uint64_t state = fnv1a(text.data(), text.size());
  std::vector<char> buffer(1 << 16);
  std::uint64_t at = 0;
  std::size_t next = 0;
  while (at < size) {
    if (next < skip.size() && at >= skip[next].first) {
      at = std::max(at, skip[next].first + skip[next].second);
      ++next;
      continue;
    }
    std::uint64_t end = next < skip.size() ? std::min(size, skip[next].first) : size;
    end = std::min(end, at + buffer.size());
    const ssize_t n =
        ::pread(fd, buffer.data(), static_cast<std::size_t>(end - at), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    FUNNEL_SYSTEM_CHECK(n < 0, "read", path);
    if (n == 0) throw error("'" + path + "' ended while it was checksummed");
    state = fnv1a(buffer.data(), static_cast<std::size_t>(n), state);
    at += static_cast<std::uint64_t>(n);
  }
  return state;
}

unique_fd open_regular(const std::string& path, struct stat& st) {
  unique_fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  FUNNEL_SYSTEM_CHECK(fd.get() < 0, "open", path);
  FUNNEL_SYSTEM_CHECK(::fstat(fd.get(), &st) != 0, "stat", path);
  if (!S_ISREG(st.st_mode)) {
    throw error("'" + path + "' is " + file_type_name(st.st_mode) + ", not a regular file");
  }
  return fd;
}

}  // namespace

byte_ranges raw_data_ranges(const std::string& main, const std::vector<std::string>& fields) {
  byte_ranges ranges;
  h5_guard guard;
  h5_id fapl = file_access();
  h5_id file(h5_check(H5Fopen(main.c_str(), H5F_ACC_RDONLY, fapl.get()), main));
  for (const auto& name : fields) {
    h5_id d(h5_check(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), main + ": " + name));
    const haddr_t offset = H5Dget_offset(d.get());
    if (offset != HADDR_UNDEF) ranges.emplace_back(offset, H5Dget_storage_size(d.get()));
  }
  return ranges;
}

void write_file_sum(const std::string& main, byte_ranges skip) {
  std::sort(skip.begin(), skip.end());
  struct stat st {};
  const unique_fd fd = open_regular(main, st);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::string text = std::string(sum_header) + "\nsize " + std::to_string(size) + "\n";
  for (const auto& [offset, length] : skip) {
    text += "skip " + std::to_string(offset) + " " + std::to_string(length) + "\n";
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(sum_of(text, fd.get(), size, skip, main)));
  text += "fnv1a64 " + std::string(hex) + "\n";
  const std::string path = join(parent_path(main), checkpoint_sum_name);
  const unique_fd out(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  FUNNEL_SYSTEM_CHECK(out.get() < 0, "open", path);
  write_all(out.get(), text, path);
  FUNNEL_SYSTEM_CHECK(::fsync(out.get()) != 0, "fsync", path);
}

void verify_file_sum(const std::string& main) {
  const std::string path = join(parent_path(main), checkpoint_sum_name);
  const std::string bad = "checkpoint '" + main + "' is corrupted: ";
  struct stat sum_stat {};
  if (::lstat(path.c_str(), &sum_stat) != 0 && errno == ENOENT) {
    throw error("checkpoint '" + main + "' has no '" + checkpoint_sum_name +
                "': it is incomplete, or was written by a funnel older than checkpoint format "
                "version 2 (which this one does not read)");
  }
  const std::string text = read_regular_at(AT_FDCWD, path, path, max_sum_bytes, false);
  std::istringstream in(text);
  std::string line;
  std::string covered;  // the text the checksum covers: everything before the fnv1a64 line
  std::uint64_t size = 0;
  bool have_size = false;
  std::string expected;
  byte_ranges skip;
  std::getline(in, line);
  if (line != sum_header) throw error(bad + "'" + path + "' is not a checkpoint checksum file");
  covered = line + "\n";
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "fnv1a64") {
      words >> expected;
      break;
    }
    unsigned long long a = 0;
    unsigned long long b = 0;
    if (key == "size" && (words >> a) && !have_size) {
      size = a;
      have_size = true;
    } else if (key == "skip" && (words >> a >> b) && b <= ~0ULL - a &&
               (skip.empty() || a >= skip.back().first + skip.back().second) &&
               skip.size() < 4096) {
      skip.emplace_back(a, b);
    } else {
      throw error(bad + "'" + path + "' has a malformed line '" + excerpt(line) + "'");
    }
    covered += line + "\n";
  }
  if (!have_size || expected.size() != 16) {
    throw error(bad + "'" + path + "' is incomplete");
  }
  struct stat st {};
  const unique_fd fd = open_regular(main, st);
  if (static_cast<std::uint64_t>(st.st_size) != size) {
    throw error(bad + "it has " + std::to_string(st.st_size) + " bytes, not " +
                std::to_string(size) + " (truncated or extended)");
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(sum_of(covered, fd.get(), size, skip, main)));
  if (expected != hex) {
    throw error(bad + "its HDF5 structure does not match its checksum (" + path + ")");
  }
}

std::uint64_t metadata_checksum(const checkpoint_header& h) {
  digest d;
  d.add("format", std::string(checkpoint_format));
  d.add("format_version", &checkpoint_format_version, sizeof checkpoint_format_version);
  d.add("run_id", h.run_id);
  d.add("step", &h.step, sizeof h.step);
  d.add("time", &h.time, sizeof h.time);
  d.add("problem", h.problem);
  d.add("configuration", h.configuration);
  d.add("global_cells", h.global_cells.data(), sizeof h.global_cells);
  d.add("grid_spacing", h.spacing.data(), sizeof h.spacing);
  std::string names;
  for (const auto& f : h.fields) names += f + '\0';
  d.add("fields", names);
  d.add("dtype", h.dtype);
  d.add("funnel_version", h.funnel_version);
  std::vector<std::int64_t> boxes;
  for (const auto& b : h.writer_boxes) {
    boxes.insert(boxes.end(), b.lo.begin(), b.lo.end());
    boxes.insert(boxes.end(), b.hi.begin(), b.hi.end());
  }
  d.add("writer_boxes", boxes);
  for (const auto& sums : h.checksums) d.add("checksums", sums);
  return d.value();
}

bool printable(const std::string& text, std::size_t max_length) {
  if (text.size() > max_length) return false;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool valid_run_id(const std::string& id) {
  if (id.empty() || id.size() > max_run_id_length) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string new_run_id() {
  std::random_device source;
  const std::uint64_t bits = (static_cast<std::uint64_t>(source()) << 32) ^ source();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

}  // namespace funnel::io::detail
