// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Host-backend tests of every runtime type, plus the CUDA-backend error paths that run without a
// GPU. The CUDA behaviour itself is covered by runtime_gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/detail/backend_checks.hpp"
#include "funnel/runtime/detail/gpu_uuid.hpp"
#include "funnel/runtime/device.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"

namespace funnel {
namespace {

constexpr backend_kind host = backend_kind::host;
constexpr unsigned char poison = 0xA5;

std::vector<unsigned char> random_bytes(std::size_t n) {
  std::mt19937 gen{std::random_device{}()};
  std::uniform_int_distribution<int> dist(0, 255);
  std::vector<unsigned char> out(n);
  std::generate(out.begin(), out.end(), [&] { return static_cast<unsigned char>(dist(gen)); });
  return out;
}

// Runs `fn`, expects it to throw E, and returns the message so tests can check its content.
template <class E, class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw the wrong type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool have_gpu() { return cuda_device_count() > 0; }

// ---- owners are move-only and not implicitly constructible -------------------------------------

static_assert(!std::is_copy_constructible_v<stream> && !std::is_copy_assignable_v<stream>);
static_assert(std::is_nothrow_move_constructible_v<stream>);
static_assert(std::is_nothrow_move_assignable_v<stream>);
static_assert(!std::is_convertible_v<backend_kind, stream>);
static_assert(!std::is_convertible_v<int, stream> &&
              !std::is_convertible_v<std::nullptr_t, stream>);
static_assert(!std::is_copy_constructible_v<event> && !std::is_copy_assignable_v<event>);
static_assert(std::is_nothrow_move_constructible_v<event>);
static_assert(std::is_nothrow_move_assignable_v<event>);
static_assert(!std::is_convertible_v<backend_kind, event>);
static_assert(!std::is_copy_constructible_v<pinned_buffer>);
static_assert(std::is_nothrow_move_constructible_v<pinned_buffer>);
static_assert(std::is_nothrow_move_assignable_v<pinned_buffer>);
static_assert(std::is_nothrow_destructible_v<stream> && std::is_nothrow_destructible_v<event> &&
              std::is_nothrow_destructible_v<pinned_buffer>);
static_assert(std::is_trivially_copyable_v<event_ipc_handle> && sizeof(event_ipc_handle) == 64);
static_assert(std::is_trivially_copyable_v<event_view>);

// ---- stream ------------------------------------------------------------------------------------

TEST(Stream, HostStreamViewsTheHostBackend) {
  for (auto priority : {stream_priority::normal, stream_priority::high}) {
    stream s{host, priority};
    EXPECT_EQ(s.backend(), host);
    EXPECT_EQ(s.view(), stream_view::host());
    const stream_view converted = s;
    EXPECT_EQ(converted, s.view());
    EXPECT_EQ(s.native_handle(), nullptr);
    EXPECT_NO_THROW(s.synchronize());
    EXPECT_TRUE(s.view().is_done());
  }
}

TEST(Stream, MoveKeepsTheBackend) {
  stream a{host};
  stream b{std::move(a)};
  EXPECT_EQ(b.backend(), host);
  stream c{host, stream_priority::high};
  c = std::move(b);
  EXPECT_EQ(c.backend(), host);
  EXPECT_EQ(c.release(), nullptr);
}

TEST(Stream, AdoptingTheLegacyDefaultStreamIsRejected) {
  const auto msg = message_of<invalid_argument>([] { (void)stream::from_native_handle(nullptr); });
  EXPECT_TRUE(contains(msg, "nullptr")) << msg;
}

TEST(Stream, CudaStreamWithoutGpuIsUnsupported) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is visible: the CUDA path is tested by runtime_gpu";
  const auto msg = message_of<unsupported>([] { stream s{backend_kind::cuda}; });
  EXPECT_TRUE(contains(msg, "funnel::stream(cuda)")) << msg;
  EXPECT_TRUE(contains(msg, "CUDA")) << msg;
}

// ---- event -------------------------------------------------------------------------------------

TEST(Event, HostEventIsCompleteOnceRecorded) {
  stream s{host};
  event e{host};
  EXPECT_TRUE(e.query());
  e.record(s);
  EXPECT_TRUE(e.query());
  EXPECT_NO_THROW(e.synchronize());
  EXPECT_EQ(e.view(), event_view::host());
  EXPECT_TRUE(e.view().query());
  EXPECT_EQ(e.flags(), event_flags::none);
}

TEST(Event, HostTimingMeasuresTheWorkBetweenRecords) {
  stream s{host};
  event start{host, event_flags::timing};
  event end{host, event_flags::timing};
  start.record(s);
  const auto wall_start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto wall_ms =
      std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - wall_start)
          .count();
  end.record(s);
  const float ms = event::elapsed_ms(start, end);
  // The events bracket the sleep, so they can only measure at least the sleep's length.
  EXPECT_GE(ms, 20.0F);
  EXPECT_GE(ms, wall_ms * 0.99F);
  EXPECT_LE(event::elapsed_ms(end, start), 0.0F);
}

TEST(Event, ElapsedNeedsTimingEventsThatWereRecorded) {
  stream s{host};
  event plain{host};
  event timed{host, event_flags::timing};
  event unrecorded{host, event_flags::timing};
  plain.record(s);
  timed.record(s);
  auto msg = message_of<invalid_argument>([&] { (void)event::elapsed_ms(plain, timed); });
  EXPECT_TRUE(contains(msg, "start event was created without event_flags::timing")) << msg;
  msg = message_of<invalid_argument>([&] { (void)event::elapsed_ms(timed, plain); });
  EXPECT_TRUE(contains(msg, "end event")) << msg;
  msg = message_of<invalid_argument>([&] { (void)event::elapsed_ms(timed, unrecorded); });
  EXPECT_TRUE(contains(msg, "end event was never recorded")) << msg;
}

// Timing events `start` and `end` recorded on a host stream 5 ms apart by `record(event&, s)`.
template <class Record>
void record_5ms_apart(event& start, event& end, Record record) {
  stream s{host};
  record(start, s);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  record(end, s);
}

TEST(Event, MoveCarriesTheRecordedTime) {
  event start{host, event_flags::timing};
  event end{host, event_flags::timing};
  record_5ms_apart(start, end, [](event& e, stream& s) { e.record(s); });
  event moved_start{std::move(start)};
  event moved_end{host, event_flags::timing};
  moved_end = std::move(end);
  EXPECT_GE(event::elapsed_ms(moved_start, moved_end), 5.0F);
  EXPECT_EQ(moved_start.flags(), event_flags::timing);
}

TEST(Event, FlagsCombineAndValidate) {
  static_assert(has_flags(event_flags::timing | event_flags::interprocess, event_flags::timing));
  static_assert(!has_flags(event_flags::timing, event_flags::interprocess));
  static_assert(has_flags(event_flags::timing, event_flags::none));
  auto msg = message_of<invalid_argument>([] {
    event e{host, event_flags::timing | event_flags::interprocess};
  });
  EXPECT_TRUE(contains(msg, "interprocess")) << msg;
  msg = message_of<invalid_argument>([] { event e{host, static_cast<event_flags>(8)}; });
  EXPECT_TRUE(contains(msg, "unknown event_flags value 8")) << msg;
}

TEST(Event, InterprocessIsUnsupportedOnTheHostBackend) {
  auto msg = message_of<unsupported>([] { event e{host, event_flags::interprocess}; });
  EXPECT_TRUE(contains(msg, "host backend")) << msg;
  event plain{host};
  msg = message_of<unsupported>([&] { (void)plain.export_ipc(); });
  EXPECT_TRUE(contains(msg, "host backend")) << msg;
}

TEST(Event, MixingBackendsIsRejected) {
  event e{host};
  const auto cuda_view = stream_view::from_native_handle(nullptr);
  const auto msg = message_of<invalid_argument>([&] { e.record(cuda_view); });
  EXPECT_TRUE(contains(msg, "cannot mix backends")) << msg;
  EXPECT_TRUE(contains(msg, "expected a host object, got a cuda one")) << msg;
}

// Host streams have no graphs: record_in_graph is record(), with the same backend check.
TEST(Event, RecordInGraphOnTheHostIsRecord) {
  event start{host, event_flags::timing};
  event end{host, event_flags::timing};
  record_5ms_apart(start, end, [](event& e, stream& s) { e.record_in_graph(s); });
  EXPECT_GE(event::elapsed_ms(start, end), 5.0F);
  const auto msg = message_of<invalid_argument>(
      [&] { start.record_in_graph(stream_view::from_native_handle(nullptr)); });
  EXPECT_TRUE(contains(msg, "cannot mix backends")) << msg;
}

TEST(Event, CudaEventsWithoutGpuAreUnsupported) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is visible: the CUDA path is tested by runtime_gpu";
  auto msg = message_of<unsupported>([] { event e{backend_kind::cuda, event_flags::timing}; });
  EXPECT_TRUE(contains(msg, "funnel::event(cuda)")) << msg;
  msg = message_of<unsupported>([] { (void)event::import_ipc(event_ipc_handle{}); });
  EXPECT_TRUE(contains(msg, "import_ipc")) << msg;
  msg = message_of<invalid_argument>([] { (void)event::from_native_handle(nullptr); });
  EXPECT_TRUE(contains(msg, "nullptr")) << msg;
}

// ---- stream operations -------------------------------------------------------------------------

TEST(StreamOperations, CopyCopiesEveryByte) {
  stream s{host};
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{100003}}) {
    const auto src = random_bytes(n);
    std::vector<unsigned char> dst(n + 1, poison);
    copy_async(s, dst.data(), src.data(), n);
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin())) << n << " bytes";
    EXPECT_EQ(dst[n], poison) << "wrote past the end";
  }
}

TEST(StreamOperations, Copy2dCopiesTheBlockAndLeavesThePaddingAlone) {
  stream s{host};
  const std::size_t width = 13;
  const std::size_t height = 9;
  const std::size_t src_pitch = 20;
  const std::size_t dst_pitch = 32;
  const auto src = random_bytes(src_pitch * height);
  std::vector<unsigned char> dst(dst_pitch * height, poison);
  copy_2d_async(s, dst.data(), dst_pitch, src.data(), src_pitch, width, height);
  for (std::size_t row = 0; row < height; ++row) {
    for (std::size_t col = 0; col < dst_pitch; ++col) {
      const unsigned char expected = col < width ? src[row * src_pitch + col] : poison;
      ASSERT_EQ(dst[row * dst_pitch + col], expected) << "row " << row << " col " << col;
    }
  }
}

TEST(StreamOperations, Copy2dRejectsPitchesBelowTheWidth) {
  stream s{host};
  std::vector<unsigned char> a(64);
  std::vector<unsigned char> b(64);
  auto msg =
      message_of<invalid_argument>([&] { copy_2d_async(s, a.data(), 4, b.data(), 8, 8, 2); });
  EXPECT_TRUE(contains(msg, "dst_pitch = 4 is below width_bytes = 8")) << msg;
  msg = message_of<invalid_argument>([&] { copy_2d_async(s, a.data(), 8, b.data(), 7, 8, 2); });
  EXPECT_TRUE(contains(msg, "src_pitch = 7")) << msg;
  msg = message_of<invalid_argument>([&] { copy_2d_async(s, a.data(), 8, b.data(), 8, 8, 0); });
  EXPECT_TRUE(contains(msg, "height = 0")) << msg;
}

TEST(StreamOperations, MemsetFillsExactlyTheRange) {
  stream s{host};
  std::mt19937 gen{std::random_device{}()};
  const int value = std::uniform_int_distribution<int>(0, 255)(gen);
  const std::size_t offset = 3;
  const std::size_t n = 1000;
  std::vector<unsigned char> buf(n + 2 * offset, poison);
  memset_async(s, buf.data() + offset, value, n);
  for (std::size_t i = 0; i < buf.size(); ++i) {
    const bool inside = i >= offset && i < offset + n;
    ASSERT_EQ(buf[i], inside ? static_cast<unsigned char>(value) : poison) << i;
  }
}

TEST(StreamOperations, BadSizesAndPointersNameTheValue) {
  stream s{host};
  std::vector<unsigned char> buf(16);
  auto msg = message_of<invalid_argument>([&] { copy_async(s, buf.data(), buf.data() + 8, 0); });
  EXPECT_TRUE(contains(msg, "funnel::copy_async: bytes = 0")) << msg;
  msg = message_of<invalid_argument>([&] {
    const int negative = -8;
    copy_async(s, buf.data(), buf.data() + 8, static_cast<std::size_t>(negative));
  });
  EXPECT_TRUE(contains(msg, "(-8 as a signed value)")) << msg;
  msg = message_of<invalid_argument>([&] { copy_async(s, nullptr, buf.data(), 4); });
  EXPECT_TRUE(contains(msg, "dst is a null pointer")) << msg;
  msg = message_of<invalid_argument>([&] { copy_async(s, buf.data(), nullptr, 4); });
  EXPECT_TRUE(contains(msg, "src is a null pointer")) << msg;
  msg = message_of<invalid_argument>([&] { memset_async(s, nullptr, 0, 4); });
  EXPECT_TRUE(contains(msg, "funnel::memset_async: dst")) << msg;
  msg = message_of<invalid_argument>([&] { memset_async(s, buf.data(), 0, 0); });
  EXPECT_TRUE(contains(msg, "bytes = 0")) << msg;
  msg = message_of<invalid_argument>([&] { launch_host_func(s, nullptr, nullptr); });
  EXPECT_TRUE(contains(msg, "fn is a null pointer")) << msg;
}

TEST(StreamOperations, HostFuncRunsBeforeTheCallReturns) {
  stream s{host};
  int calls = 0;
  launch_host_func(
      s, [](void* data) { ++*static_cast<int*>(data); }, &calls);
  EXPECT_EQ(calls, 1);
}

TEST(StreamOperations, WaitEventOrdersHostWorkAndRejectsMixedBackends) {
  stream producer{host};
  stream consumer{host};
  const auto src = random_bytes(256);
  std::vector<unsigned char> staged(256, poison);
  std::vector<unsigned char> dst(256, poison);
  event ready{host};
  copy_async(producer, staged.data(), src.data(), src.size());
  ready.record(producer);
  wait_event(consumer, ready.view());
  copy_async(consumer, dst.data(), staged.data(), staged.size());
  EXPECT_EQ(dst, src);
  const auto msg = message_of<invalid_argument>(
      [&] { wait_event(stream_view::from_native_handle(nullptr), ready.view()); });
  EXPECT_TRUE(contains(msg, "funnel::wait_event: cannot mix backends")) << msg;
}

TEST(StreamOperations, CudaStreamsWithoutCudaAreUnsupported) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is visible: the CUDA path is tested by runtime_gpu";
  std::vector<unsigned char> a(8);
  std::vector<unsigned char> b(8);
  const auto cuda = stream_view::from_native_handle(nullptr);
  if (!cuda_compiled()) {
    const auto msg = message_of<unsupported>([&] { copy_async(cuda, a.data(), b.data(), 8); });
    EXPECT_TRUE(contains(msg, "no CUDA")) << msg;
  } else {
    // With CUDA compiled in but no device the runtime itself reports the failure.
    EXPECT_THROW(copy_async(cuda, a.data(), b.data(), 8), error);
  }
}

// ---- pinned buffer -----------------------------------------------------------------------------

TEST(PinnedBuffer, HostAllocationIsPageAlignedAndUsable) {
  const std::size_t page = 4096;
  for (std::size_t n : {std::size_t{1}, std::size_t{4095}, std::size_t{3 * 4096 + 1}}) {
    pinned_buffer buf{host, n};
    ASSERT_NE(buf.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf.data()) % page, 0U);
    EXPECT_EQ(buf.size(), n);
    EXPECT_FALSE(buf.is_registered());
    EXPECT_EQ(buf.backend(), host);
    const auto src = random_bytes(n);
    stream s{host};
    copy_async(s, buf.data(), src.data(), n);
    EXPECT_TRUE(std::equal(src.begin(), src.end(), buf.as<unsigned char>()));
  }
}

TEST(PinnedBuffer, TypedViewSeesTheSameMemory) {
  pinned_buffer buf{host, 16 * sizeof(double)};
  auto* values = buf.as<double>();
  EXPECT_EQ(static_cast<void*>(values), buf.data());
  for (int i = 0; i < 16; ++i) values[i] = 0.5 * i;
  EXPECT_EQ(static_cast<const double*>(buf.data())[15], 7.5);
}

TEST(PinnedBuffer, MisalignedTypedViewIsRejected) {
  std::vector<unsigned char> memory(64);
  auto buf = pinned_buffer::register_memory(host, memory.data() + 1, 32);
  const auto msg = message_of<invalid_argument>([&] { (void)buf.as<double>(); });
  EXPECT_TRUE(contains(msg, "is not aligned to 8 bytes")) << msg;
  EXPECT_EQ(buf.as<unsigned char>(), memory.data() + 1);
}

TEST(PinnedBuffer, RegisteredMemoryIsWrappedNotOwned) {
  std::vector<unsigned char> memory(1024, poison);
  {
    auto buf = pinned_buffer::register_memory(host, memory.data(), memory.size());
    EXPECT_TRUE(buf.is_registered());
    EXPECT_EQ(buf.data(), memory.data());
    EXPECT_EQ(buf.size(), memory.size());
    memset_async(stream_view::host(), buf.data(), 7, buf.size());
  }
  // Still ours after the buffer is gone (a double free would abort here or at exit).
  EXPECT_TRUE(std::all_of(memory.begin(), memory.end(), [](unsigned char c) { return c == 7; }));
}

TEST(PinnedBuffer, MoveTransfersOwnershipAndEmptiesTheSource) {
  pinned_buffer a{host, 100};
  void* const memory = a.data();
  pinned_buffer b{std::move(a)};
  EXPECT_EQ(b.data(), memory);
  EXPECT_EQ(b.size(), 100U);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(a.size(), 0U);
  pinned_buffer c{host, 10};
  c = std::move(b);
  EXPECT_EQ(c.data(), memory);
  EXPECT_EQ(c.size(), 100U);
}

TEST(PinnedBuffer, BadArgumentsNameTheValue) {
  auto msg = message_of<invalid_argument>([] { pinned_buffer b{host, 0}; });
  EXPECT_TRUE(contains(msg, "funnel::pinned_buffer: bytes = 0")) << msg;
  msg = message_of<invalid_argument>([] {
    const long negative = -1;
    pinned_buffer b{host, static_cast<std::size_t>(negative)};
  });
  EXPECT_TRUE(contains(msg, "(-1 as a signed value)")) << msg;
  msg =
      message_of<invalid_argument>([] { (void)pinned_buffer::register_memory(host, nullptr, 16); });
  EXPECT_TRUE(contains(msg, "ptr is a null pointer")) << msg;
  int x = 0;
  msg = message_of<invalid_argument>([&] { (void)pinned_buffer::register_memory(host, &x, 0); });
  EXPECT_TRUE(contains(msg, "bytes = 0")) << msg;
}

TEST(PinnedBuffer, CudaPinnedMemoryWithoutGpuIsUnsupported) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is visible: the CUDA path is tested by runtime_gpu";
  auto msg = message_of<unsupported>([] { pinned_buffer b{backend_kind::cuda, 64}; });
  EXPECT_TRUE(contains(msg, "funnel::pinned_buffer(cuda)")) << msg;
  int x = 0;
  msg = message_of<unsupported>(
      [&] { (void)pinned_buffer::register_memory(backend_kind::cuda, &x, sizeof x); });
  EXPECT_TRUE(contains(msg, "register_memory")) << msg;
}

// ---- device ------------------------------------------------------------------------------------

TEST(Device, UuidIsFormattedLikeNvidiaSmi) {
  std::mt19937 gen{std::random_device{}()};
  std::uniform_int_distribution<int> dist(0, 255);
  unsigned char bytes[16];
  for (auto& b : bytes) b = static_cast<unsigned char>(dist(gen));
  const std::string uuid = detail::format_gpu_uuid(bytes);
  ASSERT_EQ(uuid.size(), 4U + 32U + 4U) << uuid;
  EXPECT_EQ(uuid.substr(0, 4), "GPU-");
  // Rebuild the bytes from the text: every byte must appear, in order, as two lowercase digits.
  std::string hex;
  for (std::size_t i = 4; i < uuid.size(); ++i) {
    const bool dash_here = i == 12 || i == 17 || i == 22 || i == 27;
    ASSERT_EQ(uuid[i] == '-', dash_here) << uuid << " at " << i;
    if (!dash_here) hex += uuid[i];
  }
  for (std::size_t i = 0; i < 16; ++i) {
    const auto digits = hex.substr(2 * i, 2);
    EXPECT_EQ(digits.find_first_not_of("0123456789abcdef"), std::string::npos) << uuid;
    EXPECT_EQ(std::stoi(digits, nullptr, 16), bytes[i]) << uuid << " byte " << i;
  }
  const unsigned char known[16] = {0x8f, 0x0e, 0x5a, 0x1c, 0x00, 0xff, 0x4B, 0x2a,
                                   0x9d, 0x01, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc};
  EXPECT_EQ(detail::format_gpu_uuid(known), "GPU-8f0e5a1c-00ff-4b2a-9d01-123456789abc");
}

TEST(Device, WithoutGpuEveryEntryPointIsUnsupported) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is visible: devices are tested by runtime_gpu";
  EXPECT_EQ(device::count(), 0);
  auto msg = message_of<unsupported>([] { device d{0}; });
  EXPECT_TRUE(contains(msg, "funnel::device needs the CUDA backend")) << msg;
  EXPECT_TRUE(contains(msg, cuda_compiled() ? "no CUDA device is visible" : "has no CUDA")) << msg;
  msg = message_of<unsupported>([] { (void)device::current(); });
  EXPECT_TRUE(contains(msg, "funnel::device::current")) << msg;
}

TEST(Device, PropertiesDefaultToEmpty) {
  const device_properties p{};
  EXPECT_TRUE(p.name.empty() && p.uuid.empty());
  EXPECT_EQ(p.sm_count, 0);
  EXPECT_EQ(p.total_memory, 0U);
  EXPECT_FALSE(p.memory_pools_supported || p.concurrent_kernels);
}

// ---- backend selection -------------------------------------------------------------------------

TEST(Backend, ExplicitCudaWithoutGpuIsUnsupportedWithAReason) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is visible";
  const auto msg = message_of<unsupported>([] { (void)select_backend("cuda"); });
  EXPECT_TRUE(contains(msg, "backend 'cuda' requested")) << msg;
  EXPECT_EQ(select_backend("auto"), host);
}

// "auto" falls back to the host only when there is no GPU; an MPS refusal (805-810), a device
// in use (46) or an allocation failure of the context (2) must stop the rank instead.
TEST(Backend, OnlyNoDeviceOrNoDriverMeansNoGpu) {
  if (!cuda_compiled()) GTEST_SKIP() << "no CUDA in this build";
  EXPECT_TRUE(detail::cuda_error_means_no_gpu(100));  // cudaErrorNoDevice
  EXPECT_TRUE(detail::cuda_error_means_no_gpu(35));   // cudaErrorInsufficientDriver
  for (const int refused : {2, 3, 46, 805, 806, 807, 808, 809, 810}) {
    EXPECT_FALSE(detail::cuda_error_means_no_gpu(refused)) << refused;
  }
}

}  // namespace
}  // namespace funnel

// A failed check says where in funnel it failed (what()), but the line a program prints for its
// user (message(), user_message()) is the message alone, without a source path.
TEST(Error, ExpectsKeepsTheLocationOutOfTheUsersLine) {
  try {
    FUNNEL_EXPECTS(1 + 1 == 3, "the sum is not three");
    FAIL() << "FUNNEL_EXPECTS did not throw";
  } catch (const funnel::invalid_argument& e) {
    EXPECT_EQ(e.message(), "the sum is not three");
    EXPECT_EQ(funnel::user_message(e), "the sum is not three");
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("the sum is not three [expected 1 + 1 == 3 at ", 0), 0U) << what;
    EXPECT_NE(what.find("runtime_unit_test.cpp:"), std::string::npos) << what;
  }
  const funnel::unsupported plain("no GPU here");
  EXPECT_EQ(plain.message(), "no GPU here");
  const std::runtime_error other("not funnel's");
  EXPECT_EQ(funnel::user_message(other), "not funnel's");
}
