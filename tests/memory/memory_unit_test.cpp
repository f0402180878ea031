// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Host-backend memory_pool and device_buffer: statistics, byte limit, trim, bad arguments, move
// semantics, and the memfd arena's export/import (a second mapping and a forked process).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"

namespace {

using funnel::backend_kind;
using funnel::memory_pool;
using funnel::memory_pool_options;
using funnel::stream_view;

constexpr std::size_t kib = 1024;
const stream_view host = stream_view::host();

std::mt19937_64& rng() {
  static std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

std::vector<std::uint32_t> random_words(std::size_t count) {
  std::vector<std::uint32_t> words(count);
  std::uniform_int_distribution<std::uint32_t> dist;
  for (auto& w : words) w = dist(rng());
  return words;
}

std::size_t random_size(std::size_t lo, std::size_t hi) {
  return std::uniform_int_distribution<std::size_t>(lo, hi)(rng());
}

std::size_t rounded(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

memory_pool_options named(const std::string& name) {
  memory_pool_options options;
  options.name = name;
  return options;
}

TEST(HostPool, StatisticsAndHighWaterMarks) {
  memory_pool pool(backend_kind::host, named("stats"));
  EXPECT_EQ(pool.backend(), backend_kind::host);
  EXPECT_EQ(pool.name(), "stats");
  const std::size_t a_bytes = random_size(1, 10 * kib);
  const std::size_t b_bytes = random_size(1, 10 * kib);
  void* a = pool.allocate(host, a_bytes);
  void* b = pool.allocate(host, b_bytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 256, 0U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 256, 0U);
  auto stats = pool.statistics();
  EXPECT_EQ(stats.used, a_bytes + b_bytes);
  EXPECT_EQ(stats.used_high, a_bytes + b_bytes);
  EXPECT_EQ(stats.reserved, rounded(a_bytes) + rounded(b_bytes));
  EXPECT_EQ(stats.reserved_high, stats.reserved);

  pool.deallocate(host, a, a_bytes);
  stats = pool.statistics();
  EXPECT_EQ(stats.used, b_bytes);
  EXPECT_EQ(stats.used_high, a_bytes + b_bytes);
  // The default release threshold keeps freed memory reserved for reuse.
  EXPECT_EQ(stats.reserved, rounded(a_bytes) + rounded(b_bytes));

  void* again = pool.allocate(host, a_bytes);
  EXPECT_EQ(again, a) << "a freed block of the same size is reused";
  EXPECT_EQ(pool.statistics().reserved, rounded(a_bytes) + rounded(b_bytes));
  pool.deallocate(host, again, a_bytes);
  pool.deallocate(host, b, b_bytes);
  stats = pool.statistics();
  EXPECT_EQ(stats.used, 0U);
  EXPECT_EQ(stats.used_high, a_bytes + b_bytes);
  EXPECT_EQ(stats.reserved_high, rounded(a_bytes) + rounded(b_bytes));
}

TEST(HostPool, ReleaseThresholdBoundsCachedMemory) {
  memory_pool_options options = named("threshold");
  options.release_threshold = 0;
  memory_pool pool(backend_kind::host, options);
  std::vector<std::pair<void*, std::size_t>> blocks;
  for (int i = 0; i < 8; ++i) {
    const std::size_t bytes = random_size(1, 4 * kib);
    blocks.emplace_back(pool.allocate(host, bytes), bytes);
  }
  std::size_t used = 0;
  std::size_t reserved = 0;
  for (auto [ptr, bytes] : blocks) {
    used += bytes;
    reserved += rounded(bytes);
  }
  EXPECT_EQ(pool.statistics().used, used);
  EXPECT_EQ(pool.statistics().reserved, reserved);
  for (auto [ptr, bytes] : blocks) {
    pool.deallocate(host, ptr, bytes);
    used -= bytes;
    reserved -= rounded(bytes);
    EXPECT_EQ(pool.statistics().used, used);
    EXPECT_EQ(pool.statistics().reserved, reserved) << "threshold 0 caches nothing";
  }
}

TEST(HostPool, ByteLimitRaisesOutOfMemoryWithTheNumbers) {
  memory_pool_options options = named("small-gpu");
  const std::size_t limit = random_size(8 * kib, 64 * kib);
  options.byte_limit = limit;
  memory_pool pool(backend_kind::host, options);
  const std::size_t first = limit / 2 + random_size(1, limit / 4);
  void* ptr = pool.allocate(host, first);
  const std::size_t too_much = limit - first + 1;
  try {
    (void)pool.allocate(host, too_much);
    FAIL() << "expected funnel::out_of_memory";
  } catch (const funnel::out_of_memory& e) {
    EXPECT_EQ(e.requested_bytes(), too_much);
    EXPECT_EQ(e.pool_used_bytes(), first);
    EXPECT_EQ(e.pool_reserved_bytes(), rounded(first));
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(too_much)), std::string::npos) << what;
    EXPECT_NE(what.find("small-gpu"), std::string::npos) << what;
    EXPECT_NE(what.find("byte limit " + std::to_string(limit)), std::string::npos) << what;
  }
  EXPECT_EQ(pool.statistics().used, first) << "a refused allocation changes nothing";
  void* fits = pool.allocate(host, limit - first);  // exactly up to the limit still works
  pool.deallocate(host, fits, limit - first);
  pool.deallocate(host, ptr, first);
  // After freeing, the whole limit is available again.
  void* whole = pool.allocate(host, limit);
  pool.deallocate(host, whole, limit);
  EXPECT_THROW((void)pool.allocate(host, limit + 1), funnel::out_of_memory);
}

TEST(HostPool, TrimReturnsCachedMemory) {
  memory_pool pool(backend_kind::host, named("trim"));
  std::vector<std::pair<void*, std::size_t>> blocks;
  std::size_t total = 0;
  for (int i = 0; i < 6; ++i) {
    const std::size_t bytes = (i + 1) * 4 * kib;
    blocks.emplace_back(pool.allocate(host, bytes), bytes);
    total += bytes;
  }
  const std::size_t kept_bytes = blocks[0].second;
  void* kept = blocks[0].first;
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    pool.deallocate(host, blocks[i].first, blocks[i].second);
  }
  EXPECT_EQ(pool.statistics().reserved, total);
  pool.trim_to(total / 2);
  EXPECT_LE(pool.statistics().reserved, total / 2);
  EXPECT_GE(pool.statistics().reserved, kept_bytes);
  pool.trim_to(0);
  EXPECT_EQ(pool.statistics().reserved, kept_bytes) << "live memory cannot be trimmed";
  EXPECT_EQ(pool.statistics().reserved_high, total);
  pool.deallocate(host, kept, kept_bytes);
  pool.trim_to(0);
  EXPECT_EQ(pool.statistics().reserved, 0U);
}

TEST(HostPool, BadArgumentsAreClearErrors) {
  memory_pool pool(backend_kind::host, named("strict"));
  try {
    (void)pool.allocate(host, 0);
    FAIL() << "expected funnel::invalid_argument";
  } catch (const funnel::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("allocate(0 bytes)"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)pool.allocate(stream_view::from_native_handle(nullptr), 64),
               funnel::invalid_argument);
  EXPECT_THROW((void)pool.export_handle(), funnel::invalid_argument);
  EXPECT_THROW((void)pool.import_pointer(funnel::ipc_pointer{}), funnel::invalid_argument);

  const std::size_t bytes = random_size(1, 8 * kib);
  void* ptr = pool.allocate(host, bytes);
  const auto before = pool.statistics();
  auto expect_logged_and_ignored = [&](void* p, std::size_t n, stream_view s, const char* needle) {
    testing::internal::CaptureStderr();
    pool.deallocate(s, p, n);
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find("funnel: "), std::string::npos) << log;
    EXPECT_NE(log.find(needle), std::string::npos) << log;
    EXPECT_NE(log.find("'strict'"), std::string::npos) << log;
    const auto after = pool.statistics();
    EXPECT_EQ(after.used, before.used);
    EXPECT_EQ(after.reserved, before.reserved);
  };
  int foreign = 0;
  expect_logged_and_ignored(&foreign, sizeof foreign, host, "not a live allocation");
  expect_logged_and_ignored(ptr, bytes + 1, host, "wrong size");
  expect_logged_and_ignored(ptr, bytes, stream_view::from_native_handle(nullptr), "backend");
  expect_logged_and_ignored(nullptr, bytes, host, "null pointer");
  pool.deallocate(host, ptr, bytes);
  EXPECT_EQ(pool.statistics().used, 0U);
  const auto freed = pool.statistics();
  testing::internal::CaptureStderr();
  pool.deallocate(host, ptr, bytes);  // double free
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("double free"), std::string::npos) << log;
  EXPECT_EQ(pool.statistics().reserved, freed.reserved);
}

TEST(HostPool, CudaBackendWithoutDeviceIsUnsupported) {
  if (funnel::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THROW(memory_pool(backend_kind::cuda, named("nogpu")), funnel::unsupported);
}

TEST(HostPool, MoveSemantics) {
  memory_pool a(backend_kind::host, named("moved"));
  const std::size_t bytes = random_size(1, 4 * kib);
  void* ptr = a.allocate(host, bytes);
  memory_pool b(std::move(a));
  EXPECT_EQ(b.name(), "moved");
  EXPECT_EQ(b.statistics().used, bytes);
  EXPECT_THROW((void)a.allocate(host, 16),
               funnel::invalid_argument);  // NOLINT(bugprone-use-after-move)
  memory_pool c(backend_kind::host, named("target"));
  void* other = c.allocate(host, 64);
  c.deallocate(host, other, 64);
  c = std::move(b);
  EXPECT_EQ(c.name(), "moved");
  EXPECT_EQ(c.statistics().used, bytes);
  c.deallocate(host, ptr, bytes);
  EXPECT_EQ(c.statistics().used, 0U);
  a = std::move(c);  // a moved-from pool can be assigned to again
  EXPECT_EQ(a.statistics().used_high, bytes);
}

TEST(DeviceBuffer, OwnsOneAllocation) {
  memory_pool pool(backend_kind::host, named("buffers"));
  const std::size_t count = random_size(1, 4096);
  const auto expected = random_words(count);
  {
    funnel::device_buffer<std::uint32_t> buffer(pool, host, count);
    EXPECT_EQ(buffer.size(), count);
    EXPECT_EQ(buffer.size_bytes(), count * sizeof(std::uint32_t));
    EXPECT_EQ(buffer.stream(), host);
    EXPECT_EQ(pool.statistics().used, count * sizeof(std::uint32_t));
    std::memcpy(buffer.data(), expected.data(), buffer.size_bytes());
    funnel::device_buffer<std::uint32_t> moved(std::move(buffer));
    EXPECT_EQ(buffer.data(), nullptr);  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(buffer.empty());
    EXPECT_EQ(std::memcmp(moved.data(), expected.data(), moved.size_bytes()), 0);
    funnel::device_buffer<std::uint32_t> assigned(pool, host, 3);
    EXPECT_EQ(pool.statistics().used, (count + 3) * sizeof(std::uint32_t));
    assigned = std::move(moved);  // frees the 3 elements
    EXPECT_EQ(pool.statistics().used, count * sizeof(std::uint32_t));
    EXPECT_EQ(std::memcmp(assigned.data(), expected.data(), assigned.size_bytes()), 0);
    assigned.set_stream(host);
    EXPECT_EQ(assigned.stream(), host);
  }
  EXPECT_EQ(pool.statistics().used, 0U);
  funnel::device_buffer<double> empty(pool, host, 0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(pool.statistics().used, 0U);
  EXPECT_THROW((funnel::device_buffer<double>(pool, host, std::size_t(-1) / 2)),
               funnel::invalid_argument);
}

memory_pool_options arena_options(const std::string& name, std::size_t capacity) {
  memory_pool_options options = named(name);
  options.ipc_exportable = true;
  options.host_ipc_capacity = capacity;
  return options;
}

TEST(HostArena, SecondMappingSeesTheSameMemory) {
  memory_pool pool(backend_kind::host, arena_options("arena", 1 << 20));
  const std::size_t count = random_size(16, 8192);
  const auto expected = random_words(count);
  auto* mine = static_cast<std::uint32_t*>(pool.allocate(host, count * 4));
  std::memcpy(mine, expected.data(), count * 4);

  funnel::unique_fd fd = pool.export_handle();
  ASSERT_TRUE(fd.valid());
  memory_pool imported = memory_pool::import_handle(backend_kind::host, fd.get(), named("peer"));
  EXPECT_TRUE(imported.is_imported());
  EXPECT_FALSE(pool.is_imported());
  EXPECT_THROW((void)imported.allocate(host, 64), funnel::invalid_argument);
  auto* theirs = static_cast<std::uint32_t*>(imported.import_pointer(pool.export_pointer(mine)));
  EXPECT_NE(theirs, mine) << "the import is a second mapping";
  EXPECT_EQ(std::memcmp(theirs, expected.data(), count * 4), 0);
  theirs[count - 1] = ~expected[count - 1];
  EXPECT_EQ(mine[count - 1], ~expected[count - 1]) << "writes travel both ways";
  imported.close_imported_pointer(theirs);
  testing::internal::CaptureStderr();
  imported.close_imported_pointer(theirs);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("not imported"), std::string::npos);

  funnel::ipc_pointer garbage{};
  EXPECT_THROW((void)imported.import_pointer(garbage), funnel::invalid_argument);
  int foreign = 0;
  EXPECT_THROW((void)pool.export_pointer(&foreign), funnel::invalid_argument);
  pool.deallocate(host, mine, count * 4);
  EXPECT_THROW((void)pool.export_pointer(mine), funnel::invalid_argument) << "freed pointer";
}

TEST(HostArena, ForkedProcessReadsAndWrites) {
  memory_pool pool(backend_kind::host, arena_options("forked", 1 << 20));
  const std::size_t count = random_size(16, 8192);
  const auto expected = random_words(count);
  auto* mine = static_cast<std::uint32_t*>(pool.allocate(host, count * 4));
  std::memcpy(mine, expected.data(), count * 4);
  funnel::unique_fd fd = pool.export_handle();
  const funnel::ipc_pointer where = pool.export_pointer(mine);

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child checks, then overwrites with the complement; exit codes tell the parent.
    int code = 0;
    try {
      memory_pool imported = memory_pool::import_handle(backend_kind::host, fd.get());
      auto* theirs = static_cast<std::uint32_t*>(imported.import_pointer(where));
      if (std::memcmp(theirs, expected.data(), count * 4) != 0) code = 2;
      for (std::size_t i = 0; i < count; ++i) theirs[i] = ~theirs[i];
      imported.close_imported_pointer(theirs);
    } catch (...) {
      code = 3;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "2: child read wrong data, 3: child threw";
  for (std::size_t i = 0; i < count; ++i) {
    ASSERT_EQ(mine[i], ~expected[i]) << "child's write not visible at " << i;
  }
  pool.deallocate(host, mine, count * 4);
}

TEST(HostArena, CapacityFirstFitAndCoalescing) {
  memory_pool pool(backend_kind::host, arena_options("tiny", 4 * kib));
  void* blocks[4];
  for (auto& b : blocks) b = pool.allocate(host, kib);
  EXPECT_EQ(pool.statistics().reserved, 4 * kib);
  try {
    (void)pool.allocate(host, 1);
    FAIL() << "expected funnel::out_of_memory";
  } catch (const funnel::out_of_memory& e) {
    EXPECT_NE(std::string(e.what()).find("host_ipc_capacity"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'tiny'"), std::string::npos) << e.what();
  }
  pool.deallocate(host, blocks[1], kib);
  pool.deallocate(host, blocks[2], kib);
  void* merged = pool.allocate(host, 2 * kib);  // only fits if the two ranges coalesced
  EXPECT_EQ(merged, blocks[1]);
  pool.deallocate(host, merged, 2 * kib);
  pool.deallocate(host, blocks[0], kib);
  pool.deallocate(host, blocks[3], kib);
  EXPECT_EQ(pool.statistics().reserved, 0U);
  EXPECT_EQ(pool.statistics().reserved_high, 4 * kib);
  void* whole = pool.allocate(host, 4 * kib);
  pool.deallocate(host, whole, 4 * kib);
}

TEST(HostArena, TrimPunchesOutFreedPages) {
  memory_pool pool(backend_kind::host, arena_options("punch", 8 << 20));
  const std::size_t bytes = 4 << 20;
  void* ptr = pool.allocate(host, bytes);
  std::memset(ptr, 0x5a, bytes);
  funnel::unique_fd fd = pool.export_handle();
  struct stat touched {};
  ASSERT_EQ(::fstat(fd.get(), &touched), 0);
  EXPECT_GE(static_cast<std::size_t>(touched.st_blocks) * 512, bytes);
  pool.deallocate(host, ptr, bytes);
  pool.trim_to(0);
  struct stat trimmed {};
  ASSERT_EQ(::fstat(fd.get(), &trimmed), 0);
  EXPECT_LT(static_cast<std::size_t>(trimmed.st_blocks) * 512, bytes / 8);
}

TEST(HostArena, ZeroCapacityIsRefused) {
  EXPECT_THROW(memory_pool(backend_kind::host, arena_options("zero", 0)), funnel::invalid_argument);
}

}  // namespace
