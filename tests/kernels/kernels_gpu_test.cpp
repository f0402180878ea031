// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// CUDA kernels against the host kernels on fresh random data (bitwise: both use the same
// uncontracted per-cell arithmetic), region splits on the GPU, the Jacobi norm, the initial
// fills, and the effective bandwidth of heat3d on 512^3 against a device-to-device copy measured
// in the same process (printed; not asserted).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/kernels/detail/initial_values.hpp"
#include "funnel/kernels/error_norms.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/kernels/implementation.hpp"
#include "funnel/kernels/jacobi2d.hpp"
#include "kernel_test_support.hpp"

namespace fk = funnel::kernels;
namespace ft = funnel::kernels::testing;
using funnel::box;
using funnel::field_layout;
using funnel::index3;
using funnel::stream_view;

namespace {

// Test-local owners for the raw CUDA objects (the tests exercise the kernels, not the runtime).
class test_stream {
 public:
  test_stream() {
    FUNNEL_CUDA_TRY(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "kernels_gpu test");
  }
  ~test_stream() { FUNNEL_CUDA_LOG(cudaStreamDestroy(s_)); }
  test_stream(const test_stream&) = delete;
  test_stream& operator=(const test_stream&) = delete;
  [[nodiscard]] stream_view view() const { return stream_view::from_native_handle(s_); }
  void synchronize() const { FUNNEL_CUDA_TRY(cudaStreamSynchronize(s_), "kernels_gpu test"); }

 private:
  cudaStream_t s_{};
};

// `offset` elements past a 256-byte aligned allocation (the kernels pick their vector width
// and first column from where the arrays sit).
template <class T>
class device_array {
 public:
  explicit device_array(std::size_t count, std::size_t offset = 0) : count_(count) {
    FUNNEL_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&base_), (count + offset) * sizeof(T)),
                    "kernels_gpu test");
    p_ = base_ + offset;
  }
  explicit device_array(const std::vector<T>& host, std::size_t offset = 0)
      : device_array(host.size(), offset) {
    upload(host);
  }
  ~device_array() { FUNNEL_CUDA_LOG(cudaFree(base_)); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  [[nodiscard]] T* get() const { return p_; }
  // cudaMemcpy from pageable memory may return before its DMA has landed, and the tests'
  // streams are non-blocking (no order with the legacy stream the copy runs on): wait for it,
  // or a kernel may read the old contents, or the poison land on its results.
  void upload(const std::vector<T>& host) {
    FUNNEL_CUDA_TRY(cudaMemcpy(p_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice),
                    "kernels_gpu test");
    FUNNEL_CUDA_TRY(cudaDeviceSynchronize(), "kernels_gpu test");
  }
  [[nodiscard]] std::vector<T> download() const {
    std::vector<T> host(count_);
    FUNNEL_CUDA_TRY(cudaMemcpy(host.data(), p_, count_ * sizeof(T), cudaMemcpyDeviceToHost),
                    "kernels_gpu test");
    return host;
  }

 private:
  T* base_{};
  T* p_{};
  std::size_t count_;
};

class timing_event {
 public:
  timing_event() { FUNNEL_CUDA_TRY(cudaEventCreate(&e_), "kernels_gpu test"); }
  ~timing_event() { FUNNEL_CUDA_LOG(cudaEventDestroy(e_)); }
  timing_event(const timing_event&) = delete;
  timing_event& operator=(const timing_event&) = delete;
  void record(stream_view s) {
    FUNNEL_CUDA_TRY(cudaEventRecord(e_, s.native_handle()), "kernels_gpu test");
  }
  static float ms(const timing_event& a, const timing_event& b) {
    FUNNEL_CUDA_TRY(cudaEventSynchronize(b.e_), "kernels_gpu test");
    float t = 0;
    FUNNEL_CUDA_TRY(cudaEventElapsedTime(&t, a.e_, b.e_), "kernels_gpu test");
    return t;
  }

 private:
  cudaEvent_t e_{};
};

std::vector<ft::region_case> gpu_cases() {
  const auto cube = ft::make_layout(67, 33, 40);
  const auto plane = ft::make_layout(130, 47, 1);
  const auto line = ft::make_layout(1000, 1, 1);
  // Even strides: the 3D kernel loads two cells per row with one vector load.
  const auto even = ft::make_layout(64, 30, 21);
  // Planes of more than 6 MiB in float and double: blocks issued in z order inside row groups,
  // four planes per thread, and a last chunk of three planes.
  const auto wide = ft::make_layout(1400, 1200, 7);
  // Rows and planes of a multiple of 16 bytes (64 x 32 allocated): float takes four cells per
  // thread (one float4 per row), double two; the same for wide planes (1400 x 1202 allocated).
  const auto padded = ft::make_layout(62, 30, 21);
  const auto padded_wide = ft::make_layout(1398, 1200, 7);
  return {
      {"3d interior", cube, cube.interior_box()},
      {"3d even strides", even, even.interior_box()},
      {"3d even strides, odd sub-box", even, box{{3, 2, 5}, {40, 29, 20}}},
      {"3d even strides, even start", even, box{{2, 1, 1}, {65, 31, 22}}},
      {"3d wide planes", wide, wide.interior_box()},
      {"3d 16-byte rows", padded, padded.interior_box()},
      {"3d 16-byte rows, odd sub-box", padded, box{{3, 2, 5}, {42, 29, 20}}},
      {"3d 16-byte rows, aligned start", padded, box{{4, 1, 1}, {60, 31, 22}}},
      {"3d 16-byte rows, wide planes", padded_wide, padded_wide.interior_box()},
      {"3d 16-byte rows, narrow", ft::make_layout(22, 40, 9),
       ft::make_layout(22, 40, 9).interior_box()},
      {"3d thin z slab", cube, box{{1, 1, 17}, {68, 34, 18}}},
      {"3d odd sub-box", cube, box{{3, 2, 5}, {41, 30, 39}}},
      {"3d halo 2 into the halo", ft::make_layout(40, 20, 70, 2), box{{1, 1, 1}, {43, 23, 73}}},
      // Narrow rows (a grid split along x among many ranks) take narrower, taller blocks:
      // 16 x 16 for 24 cells, 32 x 8 for 50, and one cell or an odd width.
      {"3d narrow rows", ft::make_layout(24, 40, 9), ft::make_layout(24, 40, 9).interior_box()},
      {"3d 50-cell rows", ft::make_layout(50, 40, 9), ft::make_layout(50, 40, 9).interior_box()},
      {"3d one cell wide", cube, box{{5, 1, 1}, {6, 34, 41}}},
      {"3d narrow odd rows", cube, box{{3, 2, 5}, {20, 30, 39}}},
      {"2d interior", plane, plane.interior_box()},
      {"2d one row", plane, box{{1, 20, 0}, {131, 21, 1}}},
      {"1d interior", line, line.interior_box()},
      // Padded rows (field_layout::row_align, funnel-stencil's --row-align 16): the interior of
      // every row starts on 4 cells (16 bytes of float) or 2, so the vector columns start at
      // the interior's edge; sub-boxes, halo 2, wide planes, narrow rows, 2D and 1D.
      {"3d rows padded to 4", ft::make_layout(67, 33, 40, 1, 4),
       ft::make_layout(67, 33, 40, 1, 4).interior_box()},
      {"3d rows padded to 4, odd sub-box", ft::make_layout(67, 33, 40, 1, 4),
       box{{3, 2, 5}, {41, 30, 39}}},
      {"3d rows padded to 4, one cell wide", ft::make_layout(67, 33, 40, 1, 4),
       box{{5, 1, 1}, {6, 34, 41}}},
      {"3d halo 2 padded to 2, into the halo", ft::make_layout(40, 20, 70, 2, 2),
       box{{1, 1, 1}, {43, 23, 73}}},
      {"3d rows padded to 4, wide planes", ft::make_layout(1398, 1200, 7, 1, 4),
       ft::make_layout(1398, 1200, 7, 1, 4).interior_box()},
      {"3d rows padded to 8, narrow", ft::make_layout(24, 40, 9, 1, 8),
       ft::make_layout(24, 40, 9, 1, 8).interior_box()},
      {"2d rows padded to 4", ft::make_layout(130, 47, 1, 1, 4),
       ft::make_layout(130, 47, 1, 1, 4).interior_box()},
      {"1d padded to 4", ft::make_layout(1000, 1, 1, 1, 4),
       ft::make_layout(1000, 1, 1, 1, 4).interior_box()}};
}

// Offsets (in elements) of the input and output arrays from a 256-byte aligned address: the
// kernels take the widest vector both arrays are aligned for (float offsets 1 and 3: single
// cells; 2: pairs), and arrays shifted differently.
struct array_offsets {
  std::size_t in;
  std::size_t out;
};
constexpr array_offsets offset_cases[] = {{0, 0}, {1, 1}, {3, 3}, {0, 1}, {2, 0}};

template <class T>
void check_heat_cuda_vs_host(const ft::region_case& gc, std::mt19937_64& rng,
                             array_offsets offsets = {0, 0}) {
  SCOPED_TRACE(gc.name + ", array offsets " + std::to_string(offsets.in) + "/" +
               std::to_string(offsets.out));
  test_stream stream;
  const auto in = ft::random_field<T>(gc.layout, rng);
  auto host_out = ft::poisoned_field<T>(gc.layout);
  const fk::heat3d_params<T> params{static_cast<T>(0.15)};
  fk::heat3d_step(stream_view::host(), fk::implementation::host, gc.layout, in.data(),
                  host_out.data(), gc.region, params);
  device_array<T> d_in(in, offsets.in);
  device_array<T> d_out(ft::poisoned_field<T>(gc.layout), offsets.out);
  fk::heat3d_step(stream.view(), fk::implementation::cuda, gc.layout, d_in.get(), d_out.get(),
                  gc.region, params);
  stream.synchronize();
  // Bitwise over the whole array: the region equal to host, everything else still poisoned.
  EXPECT_EQ(ft::differing_cells(host_out, d_out.download()), 0);

  device_array<T> d_pieces(ft::poisoned_field<T>(gc.layout), offsets.out);
  for (const box& part : ft::random_split(gc.region, rng)) {
    fk::heat3d_step(stream.view(), fk::implementation::cuda, gc.layout, d_in.get(), d_pieces.get(),
                    part, params);
  }
  stream.synchronize();
  EXPECT_EQ(ft::differing_cells(host_out, d_pieces.download()), 0) << "split region";
}

}  // namespace

TEST(Heat3dCuda, BitwiseEqualToHostFloat) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  for (const auto& gc : gpu_cases()) {
    for (const array_offsets offsets : offset_cases)
      check_heat_cuda_vs_host<float>(gc, rng, offsets);
  }
}

TEST(Heat3dCuda, BitwiseEqualToHostDouble) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  for (const auto& gc : gpu_cases()) {
    for (const array_offsets offsets : offset_cases) {
      check_heat_cuda_vs_host<double>(gc, rng, offsets);
    }
  }
}

// heat3d_two_steps on the GPU == on the host, bitwise over the whole array: one column and many
// (32 x 8 cells; past 2^21 cells 32 x 16; chunks of 4 to 32 planes), partial columns
// and chunks, narrow rows (a grid split along x among many ranks), halo 2 with `first` grown
// into it, first = second (the cells around it read from `out`), one-cell-thick regions and
// shifted arrays.
// With a `shape`, the kernel is launched in that block shape instead of its own choice.
template <class T>
void check_two_steps_cuda_vs_host(const ft::two_step_case& tc, std::mt19937_64& rng,
                                  array_offsets offsets,
                                  std::optional<fk::heat3d_block_shape> shape = std::nullopt) {
  SCOPED_TRACE(tc.name + ", first " + std::to_string(tc.first.lo[0]) + ".." +
               std::to_string(tc.first.hi[0]) + ", array offsets " + std::to_string(offsets.in) +
               "/" + std::to_string(offsets.out) + ", shape " +
               (shape ? shape->to_string() : std::string("the kernel's")));
  test_stream stream;
  const auto in = ft::random_field<T>(tc.layout, rng);
  const auto out = ft::random_field<T>(tc.layout, rng);
  const fk::heat3d_params<T> params{static_cast<T>(0.15)};
  auto host = out;
  fk::heat3d_two_steps(stream_view::host(), fk::implementation::host, tc.layout, in.data(),
                       host.data(), tc.first, tc.second, params);
  device_array<T> d_in(in, offsets.in);
  device_array<T> d_out(out, offsets.out);
  if (shape) {
    fk::heat3d_two_steps(stream.view(), tc.layout, d_in.get(), d_out.get(), tc.first, tc.second,
                         params, *shape);
  } else {
    fk::heat3d_two_steps(stream.view(), fk::implementation::cuda, tc.layout, d_in.get(),
                         d_out.get(), tc.first, tc.second, params);
  }
  stream.synchronize();
  EXPECT_EQ(ft::differing_cells(host, d_out.download()), 0);
  EXPECT_EQ(ft::differing_cells(in, d_in.download()), 0) << "the input was written";
}

std::vector<ft::two_step_case> two_step_cases(std::mt19937_64& rng) {
  const auto cube = ft::make_layout(67, 33, 40, 2);
  const auto narrow = ft::make_layout(24, 96, 20, 2);
  const auto grown = [](const field_layout& l) {
    box first = l.interior_box();
    box second = first;
    for (int axis = 0; axis < 3; ++axis) {
      first.lo[axis] -= 1;
      first.hi[axis] += 1;
    }
    return ft::two_step_case{"", l, first, second};
  };
  std::vector<ft::two_step_case> cases;
  for (const auto& l : {cube, narrow, ft::make_layout(2, 2, 2, 2), ft::make_layout(33, 9, 5, 2),
                        ft::make_layout(67, 33, 40, 2, 4), ft::make_layout(24, 96, 20, 2, 8)}) {
    auto c = grown(l);
    c.name = "interior grown by one, " + std::to_string(l.interior[0]) + " cells along x";
    cases.push_back(c);
  }
  cases.push_back({"halo 1, first = second", ft::make_layout(40, 17, 9),
                   ft::make_layout(40, 17, 9).interior_box(),
                   ft::make_layout(40, 17, 9).interior_box()});
  // More than 2^21 cells: the CUDA kernel's shape for large regions (partial columns and chunks).
  const auto large = ft::make_layout(131, 130, 130, 2);
  auto large_grown = grown(large);
  large_grown.name = "large, interior grown by one";
  cases.push_back(large_grown);
  cases.push_back({"large, first = second", large, large.interior_box(), large.interior_box()});
  for (int n = 0; n < 6; ++n) cases.push_back(ft::random_two_step_case("random", cube, rng));
  cases.push_back(
      ft::random_two_step_case("random, rows padded to 4", ft::make_layout(67, 33, 40, 2, 4), rng));
  return cases;
}

TEST(Heat3dCuda, TwoStepsBitwiseEqualToHost) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  for (const auto& tc : two_step_cases(rng)) {
    for (const array_offsets offsets : {array_offsets{0, 0}, array_offsets{1, 3}}) {
      check_two_steps_cuda_vs_host<float>(tc, rng, offsets);
      check_two_steps_cuda_vs_host<double>(tc, rng, offsets);
    }
  }
}

// Every compiled block shape (what `funnel-bench kernels` measures) gives the host's result,
// with the kernel's own planes per block, one plane, and a chunk that ends mid-region.
template <class T>
void check_every_two_step_shape(std::mt19937_64& rng) {
  const auto cube = ft::make_layout(67, 33, 40, 2);
  std::vector<ft::two_step_case> cases = {
      {"cube, first = second", cube, cube.interior_box(), cube.interior_box()},
      ft::random_two_step_case("random", cube, rng),
      ft::random_two_step_case("random, narrow rows", ft::make_layout(24, 40, 20, 2), rng)};
  for (fk::heat3d_block_shape shape : fk::heat3d_two_steps_shapes(sizeof(T))) {
    for (const std::int64_t planes : {0, 1, 7}) {
      shape.planes = planes;
      for (const auto& tc : cases) check_two_steps_cuda_vs_host<T>(tc, rng, {1, 3}, shape);
    }
  }
}

TEST(Heat3dCuda, TwoStepsEveryBlockShapeBitwiseEqualToHost) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  check_every_two_step_shape<float>(rng);
  check_every_two_step_shape<double>(rng);
  // A shape that is not compiled (double has no 16-row columns) is refused in one line.
  const auto layout = ft::make_layout(8, 8, 8, 2);
  device_array<double> a(static_cast<std::size_t>(layout.allocated_cells()));
  device_array<double> b(static_cast<std::size_t>(layout.allocated_cells()));
  test_stream stream;
  EXPECT_THROW(
      fk::heat3d_two_steps(stream.view(), layout, a.get(), b.get(), layout.interior_box(),
                           layout.interior_box(), fk::heat3d_params<double>{0.1}, {16, 4, 0}),
      funnel::invalid_argument);
  EXPECT_THROW(
      fk::heat3d_two_steps(stream.view(), layout, a.get(), b.get(), layout.interior_box(),
                           layout.interior_box(), fk::heat3d_params<double>{0.1}, {8, 2, -1}),
      funnel::invalid_argument);
}

TEST(Heat3dCuda, RefusesTheHostStream) {
  const auto layout = ft::make_layout(8, 8, 8);
  device_array<float> a(static_cast<std::size_t>(layout.allocated_cells()));
  device_array<float> b(static_cast<std::size_t>(layout.allocated_cells()));
  EXPECT_THROW(fk::heat3d_step(stream_view::host(), fk::implementation::cuda, layout, a.get(),
                               b.get(), layout.interior_box(), fk::heat3d_params<float>{0.1F}),
               funnel::invalid_argument);
}

TEST(Jacobi2dCuda, FieldBitwiseAndNormCloseToHost) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  test_stream stream;
  // Rows of 1028 (16 bytes: four cells per thread), 1030 (two) and 1031 floats (one); regions
  // with every start and end alignment, one row, and row counts not a multiple of a thread's.
  // Then the same rows padded so that each row's interior starts on 16 bytes (--row-align 16).
  for (const int row_align : {1, 4}) {
    for (const std::int64_t nx : {1028, 1030, 1031}) {
      field_layout layout = fk::jacobi2d_layout(nx, 517);
      layout.row_align = row_align;
      SCOPED_TRACE("nx " + std::to_string(nx) + ", row_align " + std::to_string(row_align));
      for (const box& region : {layout.interior_box(), box{{1, 100, 0}, {nx - 1, 101, 1}},
                                box{{33, 7, 0}, {900, 400, 1}}, box{{4, 3, 0}, {6, 514, 1}},
                                box{{2, 1, 0}, {nx - 2, 511, 1}}}) {
        const auto a = ft::random_field<float>(layout, rng);
        auto host_new = ft::poisoned_field<float>(layout);
        float host_norm = 0.0F;
        fk::jacobi2d_step(stream_view::host(), fk::implementation::host, layout, a.data(),
                          host_new.data(), region, &host_norm);
        for (const array_offsets offsets : offset_cases) {
          SCOPED_TRACE("array offsets " + std::to_string(offsets.in) + "/" +
                       std::to_string(offsets.out));
          device_array<float> d_a(a, offsets.in);
          device_array<float> d_new(ft::poisoned_field<float>(layout), offsets.out);
          device_array<float> d_norm(std::vector<float>{0.0F});
          fk::jacobi2d_step(stream.view(), fk::implementation::cuda, layout, d_a.get(), d_new.get(),
                            region, d_norm.get());
          stream.synchronize();
          EXPECT_EQ(ft::differing_cells(host_new, d_new.download()), 0);
          const float cuda_norm = d_norm.download()[0];
          // Float sums of region.cells() terms in different orders: a relative 1e-5 covers it.
          EXPECT_NEAR(cuda_norm, host_norm, 1e-5 * host_norm);
          EXPECT_GT(host_norm, 0.0F);
          // Without a norm the field is the same.
          device_array<float> d_new2(ft::poisoned_field<float>(layout), offsets.out);
          fk::jacobi2d_step(stream.view(), fk::implementation::cuda, layout, d_a.get(),
                            d_new2.get(), region, nullptr);
          stream.synchronize();
          EXPECT_EQ(ft::differing_cells(host_new, d_new2.download()), 0);
        }
      }
    }
  }
}

// Regions taller than a launch's 65535 blocks along y or z (grid_with_rows folds rows into z;
// 3D regions take the one-dimensional grid): every row and plane updated, bitwise as on the
// host, in one launch and in pieces.
TEST(KernelsCuda, TallRegionsBitwiseEqualToHost) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  // 2D heat: 75,000 blocks of 8 rows. 3D: 70,000 blocks of 2 planes; 67,500 blocks of 4 rows.
  for (const auto& gc :
       std::vector<ft::region_case>{{"2d, 600000 rows", ft::make_layout(4, 600000, 1),
                                     ft::make_layout(4, 600000, 1).interior_box()},
                                    {"3d, 140000 planes", ft::make_layout(4, 2, 140000),
                                     ft::make_layout(4, 2, 140000).interior_box()},
                                    {"3d, 270000 rows", ft::make_layout(3, 270000, 2),
                                     ft::make_layout(3, 270000, 2).interior_box()}}) {
    check_heat_cuda_vs_host<float>(gc, rng);
    check_heat_cuda_vs_host<double>(gc, rng, {1, 1});
  }
  // jacobi2d: 68,750 blocks of 32 rows, rows of 2 cells (unpadded and padded).
  test_stream stream;
  for (const int row_align : {1, 4}) {
    field_layout layout = fk::jacobi2d_layout(4, 2200000);
    layout.row_align = row_align;
    SCOPED_TRACE("jacobi2d 4 x 2200000, row_align " + std::to_string(row_align));
    const auto a = ft::random_field<float>(layout, rng);
    auto host_new = ft::poisoned_field<float>(layout);
    float host_norm = 0.0F;
    fk::jacobi2d_step(stream_view::host(), fk::implementation::host, layout, a.data(),
                      host_new.data(), layout.interior_box(), &host_norm);
    device_array<float> d_a(a, 0);
    device_array<float> d_new(ft::poisoned_field<float>(layout), 0);
    device_array<float> d_norm(std::vector<float>{0.0F});
    fk::jacobi2d_step(stream.view(), fk::implementation::cuda, layout, d_a.get(), d_new.get(),
                      layout.interior_box(), d_norm.get());
    stream.synchronize();
    EXPECT_EQ(ft::differing_cells(host_new, d_new.download()), 0);
    // Float sums in two orders; the blocks folded into z (3,215 of 68,750) count in the norm.
    EXPECT_NEAR(d_norm.download()[0], host_norm, 1e-3 * host_norm);
  }
}

TEST(InitializeCuda, MatchesHostFills) {
  for (const int row_align : {1, 4}) {
    SCOPED_TRACE("row_align " + std::to_string(row_align));
    test_stream stream;
    const index3 global{30, 20, 16};
    const auto layout = ft::make_layout(15, 20, 8, 1, row_align);
    const index3 offset{15, 0, 8};
    std::vector<double> host(static_cast<std::size_t>(layout.allocated_cells()));
    fk::heat3d_initialize(stream_view::host(), layout, global, offset, host.data());
    device_array<double> d(ft::poisoned_field<double>(layout));
    fk::heat3d_initialize(stream.view(), layout, global, offset, d.get());
    stream.synchronize();
    const auto got = d.download();
    for (std::size_t n = 0; n < host.size(); ++n) {
      ASSERT_NEAR(got[n], host[n], 1e-14) << n;  // two libraries' sin(), each within 2 ulp
    }

    const auto jl = ft::make_layout(100, 30, 1, 1, row_align);
    const index3 jglobal{100, 60, 1};
    const index3 joffset{0, 30, 0};
    std::vector<float> ja(static_cast<std::size_t>(jl.allocated_cells()));
    std::vector<float> jb(ja.size());
    fk::jacobi2d_initialize(stream_view::host(), jl, jglobal, joffset, ja.data(), jb.data());
    device_array<float> da(ft::poisoned_field<float>(jl));
    device_array<float> db(ft::poisoned_field<float>(jl));
    fk::jacobi2d_initialize(stream.view(), jl, jglobal, joffset, da.get(), db.get());
    stream.synchronize();
    const auto ga = da.download();
    const auto gb = db.download();
    for (std::size_t n = 0; n < ja.size(); ++n) {
      ASSERT_NEAR(ga[n], ja[n], 1e-7) << n;
      ASSERT_EQ(ga[n], gb[n]) << n;
    }
    for (const std::size_t n : ft::padding_elements(layout)) ASSERT_EQ(got[n], 0.0) << n;
    for (const std::size_t n : ft::padding_elements(jl)) ASSERT_EQ(ga[n], 0.0F) << n;
  }
}

// The error against the exact solution on the GPU: the host's figures (to the rounding of two
// sin() and another summation order), the same figures on a second call, and no read outside
// the interior (ghosts and padding are NaN), for a box inside a larger grid with padded rows.
template <class T>
void error_on_gpu_matches_host(std::mt19937_64& rng) {
  for (const int row_align : {1, 8}) {
    SCOPED_TRACE("row_align " + std::to_string(row_align));
    test_stream stream;
    const index3 global{40, 24, 30};
    const index3 offset{13, 0, 7};
    const auto layout = ft::make_layout(21, 24, 11, 2, row_align);
    const double alpha = 0.5;
    const double t = 0.003;
    const double decay = std::exp(-fk::heat3d_decay_rate(global) * alpha * t);
    std::uniform_real_distribution<double> noise(-1e-3, 1e-3);
    std::vector<T> field = ft::poisoned_field<T>(layout);
    const box inside = layout.interior_box();
    for (std::int64_t k = inside.lo[2]; k < inside.hi[2]; ++k) {
      for (std::int64_t j = inside.lo[1]; j < inside.hi[1]; ++j) {
        for (std::int64_t i = inside.lo[0]; i < inside.hi[0]; ++i) {
          const double exact = fk::detail::heat_mode_value(
              offset[0] + i - inside.lo[0], offset[1] + j - inside.lo[1],
              offset[2] + k - inside.lo[2], global[0], global[1], global[2]);
          field[static_cast<std::size_t>(layout.index(i, j, k))] =
              static_cast<T>(exact * decay + noise(rng));
        }
      }
    }
    const fk::error_norms host = fk::heat3d_error(layout, global, offset, alpha, t, field.data());
    device_array<T> d(field);
    const fk::error_norms gpu =
        fk::heat3d_error(stream.view(), layout, global, offset, alpha, t, d.get());
    const fk::error_norms again =
        fk::heat3d_error(stream.view(), layout, global, offset, alpha, t, d.get());
    EXPECT_EQ(gpu.cells, 21 * 24 * 11);
    EXPECT_EQ(gpu.cells, host.cells);
    EXPECT_GT(host.max_abs, 1e-4);
    EXPECT_NEAR(gpu.max_abs, host.max_abs, 1e-12);
    EXPECT_NEAR(gpu.sum_squares, host.sum_squares, 1e-12 * host.sum_squares);
    EXPECT_TRUE(ft::same_bits(gpu.max_abs, again.max_abs));
    EXPECT_TRUE(ft::same_bits(gpu.sum_squares, again.sum_squares));
    // The host stream reads host memory: the host's own figures.
    const fk::error_norms on_host =
        fk::heat3d_error(stream_view::host(), layout, global, offset, alpha, t, field.data());
    EXPECT_TRUE(ft::same_bits(on_host.sum_squares, host.sum_squares));
  }
}

TEST(ErrorNormsCuda, MatchHostFloat) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  error_on_gpu_matches_host<float>(rng);
}

TEST(ErrorNormsCuda, MatchHostDouble) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  error_on_gpu_matches_host<double>(rng);
}

namespace {

// Effective bandwidth of heat3d on an n^3 interior: each step reads and writes every interior
// cell once (2 * cells * sizeof(T) bytes), compared with cudaMemcpyAsync D2D of the same array.
template <class T>
void report_heat_bandwidth(std::int64_t n) {
  test_stream stream;
  const auto layout = ft::make_layout(n, n, n);
  const auto cells = static_cast<std::size_t>(layout.allocated_cells());
  device_array<T> a(cells);
  device_array<T> b(cells);
  fk::heat3d_initialize(stream.view(), layout, {n, n, n}, {0, 0, 0}, a.get());
  fk::heat3d_initialize(stream.view(), layout, {n, n, n}, {0, 0, 0}, b.get());
  const fk::heat3d_params<T> params{static_cast<T>(0.1)};
  constexpr int warmup = 3;
  constexpr int reps = 20;
  auto run_heat = [&](int count) {
    for (int r = 0; r < count; ++r) {
      fk::heat3d_step(stream.view(), fk::implementation::cuda, layout, r % 2 ? b.get() : a.get(),
                      r % 2 ? a.get() : b.get(), layout.interior_box(), params);
    }
  };
  auto run_copy = [&](int count) {
    for (int r = 0; r < count; ++r) {
      FUNNEL_CUDA_TRY(
          cudaMemcpyAsync(r % 2 ? a.get() : b.get(), r % 2 ? b.get() : a.get(), cells * sizeof(T),
                          cudaMemcpyDeviceToDevice, stream.view().native_handle()),
          "kernels_gpu test");
    }
  };
  timing_event e0;
  timing_event e1;
  timing_event e2;
  timing_event e3;
  run_copy(warmup);
  e0.record(stream.view());
  run_copy(reps);
  e1.record(stream.view());
  run_heat(warmup);
  e2.record(stream.view());
  run_heat(reps);
  e3.record(stream.view());
  const double copy_s = timing_event::ms(e0, e1) / 1e3 / reps;
  const double heat_s = timing_event::ms(e2, e3) / 1e3 / reps;
  const double copy_gbs = 2.0 * static_cast<double>(cells * sizeof(T)) / copy_s / 1e9;
  const double interior = static_cast<double>(layout.interior_box().cells());
  const double heat_gbs = 2.0 * interior * sizeof(T) / heat_s / 1e9;
  std::printf(
      "heat3d %lld^3 %s: %.3f ms/step, %.1f GB/s effective; D2D copy %.1f GB/s; ratio %.3f; "
      "%.2f Gcell-updates/s\n",
      static_cast<long long>(n), sizeof(T) == 4 ? "float" : "double", heat_s * 1e3, heat_gbs,
      copy_gbs, heat_gbs / copy_gbs, interior / heat_s / 1e9);
  ::testing::Test::RecordProperty(
      std::string("heat3d_bandwidth_ratio_") + (sizeof(T) == 4 ? "float" : "double"),
      std::to_string(heat_gbs / copy_gbs));
  // The timed kernels must have run cleanly (a figure, not a timing assertion).
  stream.synchronize();
  EXPECT_GT(heat_gbs, 0.0);
}

}  // namespace

TEST(Heat3dCudaBandwidth, Report512Float) { report_heat_bandwidth<float>(512); }
TEST(Heat3dCudaBandwidth, Report512Double) { report_heat_bandwidth<double>(512); }
