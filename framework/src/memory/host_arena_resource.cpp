// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Host backend pool that can be shared with other processes: allocations are carved (first fit,
// coalescing on free) out of one memfd arena mapped MAP_SHARED. Exporting the pool hands out a
// dup of the memfd; a pointer travels as its offset in the arena. This is the host twin of a
// CUDA pool with POSIX file descriptor handles, so the IPC code above runs on CPU-only machines.
//
// Statistics: reserved == bytes carved out (live allocations rounded to 256 B); the pages of
// freed ranges stay in the memfd until trim_to() punches them out.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "funnel/error.hpp"
#include "pool_resource.hpp"

namespace funnel::detail {
namespace {

// What an ipc_pointer of a host pool holds.
struct host_pointer_data {
  static constexpr std::uint32_t magic_value = 0x464e4c48;  // "FNLH"
  std::uint32_t magic;
  std::uint32_t reserved;
  std::uint64_t offset;
  std::uint64_t size;
};
static_assert(sizeof(host_pointer_data) <= sizeof(ipc_pointer::bytes));

// A MAP_SHARED mapping of a whole memfd, unmapped on destruction.
class shared_mapping {
 public:
  shared_mapping(int fd, std::size_t size) : size_(size) {
    base_ = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    FUNNEL_SYSTEM_CHECK(base_ == MAP_FAILED, "mmap",
                        "mapping a host IPC arena of " + std::to_string(size) + " B");
  }
  shared_mapping(const shared_mapping&) = delete;
  shared_mapping& operator=(const shared_mapping&) = delete;
  ~shared_mapping() {
    if (::munmap(base_, size_) != 0) log_error("munmap of a host IPC arena failed");
  }
  [[nodiscard]] unsigned char* base() const noexcept { return static_cast<unsigned char*>(base_); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  void* base_;
  std::size_t size_;
};

class host_arena_resource final : public pool_resource {
 public:
  host_arena_resource(unique_fd memfd, std::size_t capacity)
      : memfd_(std::move(memfd)), mapping_(memfd_.get(), capacity) {
    free_.emplace(0, capacity);
  }

  [[nodiscard]] backend_kind backend() const noexcept override { return backend_kind::host; }
  [[nodiscard]] bool ipc_exportable() const noexcept override { return true; }

  void* allocate(stream_view /*stream*/, std::size_t bytes, std::string& why) override {
    std::size_t size = 0;
    if (!aligned_size(bytes, size, why)) return nullptr;
    std::lock_guard lock(mutex_);
    auto fit = std::find_if(free_.begin(), free_.end(),
                            [&](const auto& range) { return range.second >= size; });
    if (fit == free_.end()) {
      why = "the host IPC arena of " + std::to_string(mapping_.size()) +
            " B (memory_pool_options::host_ipc_capacity) has no free range of " +
            std::to_string(size) + " B";
      return nullptr;
    }
    const std::size_t offset = fit->first;
    const std::size_t left = fit->second - size;
    free_.erase(fit);
    if (left > 0) free_.emplace(offset + size, left);
    reserved_ += size;
    reserved_high_ = std::max(reserved_high_, reserved_);
    return mapping_.base() + offset;
  }

  void deallocate(stream_view /*stream*/, void* ptr, std::size_t bytes) noexcept override {
    const std::size_t size = round_up_to_alignment(bytes);
    std::size_t offset = offset_of(ptr);
    std::lock_guard lock(mutex_);
    reserved_ -= size;
    std::size_t length = size;
    // Coalesce with the neighbours so large requests keep finding room.
    auto next = free_.lower_bound(offset);
    if (next != free_.end() && offset + length == next->first) {
      length += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        length += prev->second;
        free_.erase(prev);
      }
    }
    try {
      free_.emplace(offset, length);
    } catch (...) {  // the range is lost to this arena, which is only a leak inside the arena
      log_error("host IPC arena: out of memory while recording a free range");
    }
  }

  void fill_statistics(pool_statistics& stats) const override {
    std::lock_guard lock(mutex_);
    stats.reserved = reserved_;
    stats.reserved_high = reserved_high_;
  }

  // Gives the pages of every free range back to the kernel; reserved (carved bytes) is already
  // at its minimum, so `bytes_to_keep` cannot ask for more.
  void trim_to(std::size_t /*bytes_to_keep*/) override {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::lock_guard lock(mutex_);
    for (const auto& [offset, length] : free_) {
      const std::size_t first = (offset + page - 1) / page * page;
      const std::size_t last = (offset + length) / page * page;
      if (last <= first) continue;
      const int rc = ::fallocate(memfd_.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                 static_cast<off_t>(first), static_cast<off_t>(last - first));
      FUNNEL_SYSTEM_CHECK(rc != 0, "fallocate(FALLOC_FL_PUNCH_HOLE)", "trimming a host IPC arena");
    }
  }

  void grant_access(int /*peer_device*/) override {
    throw unsupported("grant_access needs a pool of the cuda backend");
  }

  [[nodiscard]] unique_fd export_handle() const override { return memfd_.duplicate(); }

  [[nodiscard]] ipc_pointer export_pointer(void* ptr) const override {
    host_pointer_data data{};
    data.magic = host_pointer_data::magic_value;
    data.offset = offset_of(ptr);
    data.size = mapping_.size();
    ipc_pointer out;
    std::memcpy(out.bytes, &data, sizeof data);
    return out;
  }

 private:
  [[nodiscard]] std::size_t offset_of(const void* ptr) const noexcept {
    return static_cast<std::size_t>(static_cast<const unsigned char*>(ptr) - mapping_.base());
  }

  unique_fd memfd_;
  shared_mapping mapping_;
  mutable std::mutex mutex_;
  std::map<std::size_t, std::size_t> free_;  // offset -> length of each free range
  std::size_t reserved_ = 0;
  std::size_t reserved_high_ = 0;
};

// Another process's arena, mapped here; pointers into it are handed out by offset.
class imported_host_arena final : public pool_resource {
 public:
  imported_host_arena(int fd, std::size_t size) : mapping_(fd, size) {}

  [[nodiscard]] backend_kind backend() const noexcept override { return backend_kind::host; }
  [[nodiscard]] bool imported() const noexcept override { return true; }

  void* allocate(stream_view /*stream*/, std::size_t /*bytes*/, std::string& /*why*/) override {
    throw invalid_argument("an imported memory pool cannot allocate");
  }
  void deallocate(stream_view /*stream*/, void* /*ptr*/, std::size_t /*bytes*/) noexcept override {}
  void fill_statistics(pool_statistics& stats) const override {
    stats.reserved = 0;
    stats.reserved_high = 0;
  }
  void trim_to(std::size_t /*bytes_to_keep*/) override {}
  void grant_access(int /*peer_device*/) override {
    throw unsupported("grant_access needs a pool of the cuda backend");
  }
  [[nodiscard]] unique_fd export_handle() const override {
    throw invalid_argument("an imported memory pool cannot be exported again");
  }
  [[nodiscard]] ipc_pointer export_pointer(void* /*ptr*/) const override {
    throw invalid_argument("an imported memory pool cannot export pointers");
  }

  [[nodiscard]] void* import_pointer(const ipc_pointer& in) override {
    host_pointer_data data{};
    std::memcpy(&data, in.bytes, sizeof data);
    FUNNEL_EXPECTS(data.magic == host_pointer_data::magic_value,
                   "import_pointer: the data was not made by export_pointer of a host pool");
    FUNNEL_EXPECTS(data.size == mapping_.size() && data.offset < mapping_.size(),
                   "import_pointer: offset " + std::to_string(data.offset) + " of an arena of " +
                       std::to_string(data.size) + " B does not fit the imported arena of " +
                       std::to_string(mapping_.size()) + " B (pointer from another pool?)");
    void* ptr = mapping_.base() + data.offset;
    std::lock_guard lock(mutex_);
    ++open_[ptr];
    return ptr;
  }

  // The whole arena stays mapped until the pool dies; closing only checks the bookkeeping.
  void close_imported_pointer(void* ptr) noexcept override {
    std::lock_guard lock(mutex_);
    auto it = open_.find(ptr);
    if (it == open_.end()) {
      log_error("close_imported_pointer: pointer was not imported from this pool (ignored)");
      return;
    }
    if (--it->second == 0) open_.erase(it);
  }

 private:
  shared_mapping mapping_;
  std::mutex mutex_;
  std::unordered_map<void*, int> open_;  // imported pointer -> times imported
};

}  // namespace

std::unique_ptr<pool_resource> make_host_arena_resource(const memory_pool_options& options) {
  FUNNEL_EXPECTS(options.host_ipc_capacity > 0,
                 "memory pool '" + options.name +
                     "': host_ipc_capacity must be > 0 bytes for an ipc_exportable host pool");
  const std::size_t capacity = round_up_to_alignment(options.host_ipc_capacity);
  unique_fd memfd(::memfd_create(("funnel-pool-" + options.name).c_str(), MFD_CLOEXEC));
  FUNNEL_SYSTEM_CHECK(!memfd, "memfd_create", "host IPC arena of pool '" + options.name + "'");
  FUNNEL_SYSTEM_CHECK(::ftruncate(memfd.get(), static_cast<off_t>(capacity)) != 0, "ftruncate",
                      "sizing the host IPC arena of pool '" + options.name + "' to " +
                          std::to_string(capacity) + " B");
  return std::make_unique<host_arena_resource>(std::move(memfd), capacity);
}

std::unique_ptr<pool_resource> import_host_arena_resource(int fd,
                                                          const memory_pool_options& options) {
  struct stat info {};
  FUNNEL_SYSTEM_CHECK(
      ::fstat(fd, &info) != 0, "fstat",
      "importing host memory pool '" + options.name + "' from fd " + std::to_string(fd));
  FUNNEL_EXPECTS(S_ISREG(info.st_mode) && info.st_size > 0,
                 "import_handle: fd " + std::to_string(fd) +
                     " is not a host pool arena (expected a descriptor from export_handle of an "
                     "ipc_exportable host pool)");
  return std::make_unique<imported_host_arena>(fd, static_cast<std::size_t>(info.st_size));
}

}  // namespace funnel::detail
