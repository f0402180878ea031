// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// CUDA-backend memory_pool on a real GPU: no device-wide sync in allocate/free loops, flat
// reserved memory with a release threshold, trim, out-of-memory recovery, byte limit,
// device_buffer round trips and peer access grants.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/device.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "gpu_test_kernels.hpp"

namespace {

using funnel::backend_kind;
using funnel::memory_pool;
using funnel::memory_pool_options;

constexpr std::size_t mib = std::size_t{1} << 20;

memory_pool_options named(const std::string& name) {
  memory_pool_options options;
  options.name = name;
  return options;
}

std::vector<std::uint64_t> random_words(std::size_t count) {
  static std::mt19937_64 engine{std::random_device{}()};
  std::vector<std::uint64_t> words(count);
  for (auto& w : words) w = engine();
  return words;
}

// Mapped pinned flag a spinning kernel polls; released (and the kernel finished) on destruction.
class spin_guard {
 public:
  explicit spin_guard(const funnel::stream& stream) : stream_(stream) {
    void* host_flag = nullptr;
    FUNNEL_CUDA_TRY(cudaHostAlloc(&host_flag, sizeof(int), cudaHostAllocMapped), "spin flag");
    flag_ = static_cast<int*>(host_flag);
    *flag_ = 0;
    void* device_flag = nullptr;
    FUNNEL_CUDA_TRY(cudaHostGetDevicePointer(&device_flag, host_flag, 0), "spin flag");
    funnel::testing::launch_spin(stream.view().native_handle(),
                                 static_cast<const int*>(device_flag), 20'000'000'000ULL);
  }
  spin_guard(const spin_guard&) = delete;
  spin_guard& operator=(const spin_guard&) = delete;
  ~spin_guard() {
    release();
    FUNNEL_CUDA_LOG(cudaStreamSynchronize(stream_.view().native_handle()));
    FUNNEL_CUDA_LOG(cudaFreeHost(const_cast<int*>(flag_)));
  }
  void release() { *flag_ = 1; }

 private:
  const funnel::stream& stream_;
  volatile int* flag_ = nullptr;
};

TEST(CudaPool, LoopKeepsReservedFlatAndNeverSynchronisesTheDevice) {
  memory_pool_options options = named("loop");
  options.release_threshold = 64 * mib;
  memory_pool pool(backend_kind::cuda, options);
  funnel::stream work(backend_kind::cuda);
  funnel::stream busy(backend_kind::cuda);
  constexpr std::size_t bytes = 4 * mib;

  void* first = pool.allocate(work, bytes);
  pool.deallocate(work, first, bytes);
  work.synchronize();
  const std::size_t reserved_after_first = pool.statistics().reserved;
  EXPECT_GE(reserved_after_first, bytes);

  {
    spin_guard spinner(busy);
    for (int i = 0; i < 1000; ++i) {
      void* ptr = pool.allocate(work, bytes);
      funnel::memset_async(work, ptr, i & 0xff, bytes);
      pool.deallocate(work, ptr, bytes);
    }
    // A device-wide synchronisation inside the loop would have waited for the spinner.
    EXPECT_EQ(cudaStreamQuery(busy.view().native_handle()), cudaErrorNotReady)
        << "allocate/deallocate synchronised the device";
    spinner.release();
  }
  work.synchronize();
  const auto stats = pool.statistics();
  EXPECT_EQ(stats.reserved, reserved_after_first) << "reserved memory grew in the loop";
  EXPECT_EQ(stats.reserved_high, reserved_after_first);
  EXPECT_LE(stats.reserved, options.release_threshold);
  EXPECT_EQ(stats.used, 0U);
  EXPECT_GE(stats.used_high, bytes);
}

TEST(CudaPool, TrimReturnsMemory) {
  memory_pool pool(backend_kind::cuda, named("trim"));
  funnel::stream s(backend_kind::cuda);
  void* kept = pool.allocate(s, 8 * mib);
  void* big = pool.allocate(s, 256 * mib);
  funnel::memset_async(s, big, 0, 256 * mib);
  pool.deallocate(s, big, 256 * mib);
  s.synchronize();
  EXPECT_GE(pool.statistics().reserved, 264 * mib) << "default threshold keeps freed memory";
  pool.trim_to(0);
  auto stats = pool.statistics();
  EXPECT_GE(stats.reserved, 8 * mib) << "live memory stays";
  EXPECT_LT(stats.reserved, 256 * mib) << "trim did not return the freed 256 MiB";
  pool.deallocate(s, kept, 8 * mib);
  s.synchronize();
  pool.trim_to(0);
  EXPECT_EQ(pool.statistics().reserved, 0U);
}

TEST(CudaPool, DeviceOutOfMemoryLeavesTheStreamUsable) {
  memory_pool pool(backend_kind::cuda, named("huge"));
  funnel::stream s(backend_kind::cuda);
  const std::size_t total = funnel::device(0).properties().total_memory;
  ASSERT_GT(total, 0U);
  const std::size_t request = total * 2;
  try {
    (void)pool.allocate(s, request);
    FAIL() << "expected funnel::out_of_memory";
  } catch (const funnel::out_of_memory& e) {
    EXPECT_EQ(e.requested_bytes(), request);
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(request)), std::string::npos) << what;
    EXPECT_NE(what.find("'huge'"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaErrorMemoryAllocation"), std::string::npos) << what;
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the error must not linger";
  // The stream and pool still work: a round trip through a smaller allocation.
  const std::size_t count = mib / 8;
  const auto expected = random_words(count);
  std::vector<std::uint64_t> back(count, 0xdeadbeefdeadbeefULL);
  funnel::device_buffer<std::uint64_t> buffer(pool, s, count);
  funnel::copy_async(s, buffer.data(), expected.data(), count * 8);
  funnel::copy_async(s, back.data(), buffer.data(), count * 8);
  s.synchronize();
  EXPECT_EQ(back, expected);
}

TEST(CudaPool, ByteLimitStopsBeforeTheDevice) {
  memory_pool_options options = named("small-gpu");
  options.byte_limit = 8 * mib;
  memory_pool pool(backend_kind::cuda, options);
  funnel::stream s(backend_kind::cuda);
  void* ptr = pool.allocate(s, 6 * mib);
  s.synchronize();
  const std::size_t reserved = pool.statistics().reserved;
  try {
    (void)pool.allocate(s, 4 * mib);
    FAIL() << "expected funnel::out_of_memory";
  } catch (const funnel::out_of_memory& e) {
    EXPECT_EQ(e.requested_bytes(), 4 * mib);
    EXPECT_NE(std::string(e.what()).find("byte limit 8388608"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pool.statistics().reserved, reserved) << "the device was asked anyway";
  void* fits = pool.allocate(s, 2 * mib);
  pool.deallocate(s, fits, 2 * mib);
  pool.deallocate(s, ptr, 6 * mib);
  s.synchronize();
}

TEST(CudaPool, StatisticsAndBadArguments) {
  memory_pool pool(backend_kind::cuda, named("stats"));
  funnel::stream s(backend_kind::cuda);
  EXPECT_THROW((void)pool.allocate(funnel::stream_view::host(), 64), funnel::invalid_argument);
  EXPECT_THROW((void)pool.allocate(s, 0), funnel::invalid_argument);
  EXPECT_THROW((void)pool.export_handle(), funnel::invalid_argument);
  void* ptr = pool.allocate(s, 3 * mib);
  auto stats = pool.statistics();
  EXPECT_GE(stats.used, 3 * mib);
  EXPECT_GE(stats.reserved, stats.used);
  testing::internal::CaptureStderr();
  pool.deallocate(s, ptr, 1);  // wrong size
  EXPECT_NE(testing::internal::GetCapturedStderr().find("wrong size"), std::string::npos);
  pool.deallocate(s, ptr, 3 * mib);
  s.synchronize();
  stats = pool.statistics();
  EXPECT_EQ(stats.used, 0U);
  EXPECT_GE(stats.used_high, 3 * mib);
}

TEST(CudaPool, DeviceBufferRoundTripWithStreamChange) {
  memory_pool pool(backend_kind::cuda, named("buffer"));
  funnel::stream a(backend_kind::cuda);
  funnel::stream b(backend_kind::cuda);
  const std::size_t count = 100'003;
  const auto expected = random_words(count);
  std::vector<std::uint64_t> back(count, 0xdeadbeefdeadbeefULL);
  {
    funnel::device_buffer<std::uint64_t> buffer(pool, a, count);
    funnel::copy_async(a, buffer.data(), expected.data(), count * 8);
    a.synchronize();
    funnel::copy_async(b, back.data(), buffer.data(), count * 8);
    buffer.set_stream(b);  // the last user frees it
  }
  b.synchronize();
  EXPECT_EQ(back, expected);
  EXPECT_EQ(pool.statistics().used, 0U);
}

TEST(CudaPool, GrantAccessToAPeerDevice) {
  if (funnel::device::count() < 2) GTEST_SKIP() << "peer access needs at least 2 GPUs";
  const funnel::device owner(0);
  const funnel::device peer(1);
  if (!peer.can_access_peer(owner)) {
    memory_pool pool(backend_kind::cuda, named("no-peer"));
    EXPECT_THROW(pool.grant_access(peer), funnel::unsupported);
    GTEST_SKIP() << "devices 0 and 1 have no peer access";
  }
  memory_pool pool(backend_kind::cuda, named("shared"));
  pool.grant_access(owner);  // own device: no-op
  pool.grant_access(peer);
  funnel::stream s0(backend_kind::cuda);
  const std::size_t count = 65'536;
  const auto expected = random_words(count);
  std::vector<std::uint64_t> back(count, 0xdeadbeefdeadbeefULL);
  funnel::device_buffer<std::uint64_t> source(pool, s0, count);
  funnel::copy_async(s0, source.data(), expected.data(), count * 8);
  s0.synchronize();

  peer.make_current();
  {
    funnel::stream s1(backend_kind::cuda);
    memory_pool_options on_peer = named("peer-local");
    on_peer.device = 1;
    memory_pool peer_pool(backend_kind::cuda, on_peer);
    funnel::device_buffer<std::uint64_t> target(peer_pool, s1, count);
    // A kernel on device 1 reads device 0's pool memory directly.
    funnel::testing::launch_copy_words(s1.view().native_handle(), target.data(), source.data(),
                                       count);
    funnel::copy_async(s1, back.data(), target.data(), count * 8);
    s1.synchronize();
  }
  owner.make_current();
  EXPECT_EQ(back, expected);
}

}  // namespace

// A pool created with default options takes memory from the device current at creation, so a
// rank bound to GPU 1 never gets its field on GPU 0 (seen as a hang of ranks on two GPUs).
TEST(CudaPool, DefaultOptionsUseTheCurrentDevice) {
  const int count = funnel::device::count();
  for (int id = 0; id < count; ++id) {
    SCOPED_TRACE("device " + std::to_string(id));
    funnel::device(id).make_current();
    funnel::memory_pool pool(funnel::backend_kind::cuda);
    funnel::stream s(funnel::backend_kind::cuda);
    void* p = pool.allocate(s, 4096);
    s.synchronize();
    cudaPointerAttributes attributes{};
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, p), cudaSuccess);
    EXPECT_EQ(attributes.device, id);
    pool.deallocate(s, p, 4096);
    s.synchronize();
  }
  funnel::device(0).make_current();
}
