// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Kokkos kernels on the CUDA backend (a Kokkos build with its CUDA backend): Kokkos::Cuda
// instances on funnel streams, the Kokkos kernels (every heat3d work split, heat3d_variant.hpp)
// bitwise equal to the CUDA kernels on rows of n + 2h cells and on padded rows
// (field_layout::row_align), the Jacobi norm to rounding, and the speed of the Kokkos kernels
// against the CUDA kernels in the same process (printed; not asserted): every heat3d variant on
// 512^3, the front end's heat3d on padded rows, and jacobi2d 16384^2 with its norm, both row
// layouts.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "funnel/kernels/heat3d.hpp"
#include "funnel/kernels/jacobi2d.hpp"
#include "funnel/kokkos/execution_space.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/stream.hpp"
#include "heat3d_variant.hpp"
#include "kernel_test_support.hpp"
#include "kokkos_environment.hpp"

namespace fk = funnel::kernels;
namespace fkk = funnel::kernels::detail::kokkos;
namespace ft = funnel::kernels::testing;
using funnel::backend_kind;
using funnel::box;
using funnel::field_layout;

namespace {

template <class T>
using device_view = Kokkos::View<T*, Kokkos::CudaSpace>;

template <class T>
device_view<T> to_device(const std::vector<T>& host) {
  device_view<T> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, "funnel::tests::field"),
                   host.size());
  Kokkos::deep_copy(d, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                           host.data(), host.size()));
  return d;
}

template <class T>
std::vector<T> to_host(const device_view<T>& d) {
  std::vector<T> host(d.extent(0));
  Kokkos::deep_copy(
      Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(host.data(), host.size()), d);
  return host;
}

template <class T>
void check_heat(const field_layout& layout, const box& region, std::mt19937_64& rng) {
  const funnel::stream stream(backend_kind::cuda);
  const auto in = to_device(ft::random_field<T>(layout, rng));
  const auto by_cuda = to_device(ft::poisoned_field<T>(layout));
  const auto by_kokkos = to_device(ft::poisoned_field<T>(layout));
  const fk::heat3d_params<T> params{static_cast<T>(0.15)};
  fk::heat3d_step(stream.view(), fk::implementation::cuda, layout, in.data(), by_cuda.data(),
                  region, params);
  fk::heat3d_step(stream.view(), fk::implementation::kokkos, layout, in.data(), by_kokkos.data(),
                  region, params);
  stream.synchronize();
  EXPECT_EQ(ft::differing_cells(to_host(by_cuda), to_host(by_kokkos)), 0);
}

}  // namespace

TEST(KokkosCuda, ExecutionSpaceIsOnTheStream) {
  const funnel::stream stream(backend_kind::cuda);
  const auto space = funnel::kokkos::execution_space_for(stream.view());
  EXPECT_EQ(space.cuda_stream(), stream.view().native_handle());
  // The instance is cached: asking again gives the same stream.
  EXPECT_EQ(funnel::kokkos::execution_space_for(stream.view()).cuda_stream(),
            stream.view().native_handle());
}

TEST(KokkosCuda, Heat3dBitwiseEqualToCudaKernel) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  const auto cube = ft::make_layout(67, 33, 40);
  const auto plane = ft::make_layout(130, 47, 1);
  check_heat<float>(cube, cube.interior_box(), rng);
  check_heat<double>(cube, box{{3, 2, 5}, {41, 30, 39}}, rng);
  check_heat<float>(plane, plane.interior_box(), rng);
  // Padded rows: every row's interior on 16 bytes (4 floats, 2 doubles), as --row-align 16.
  const auto cube4 = ft::make_layout(67, 33, 40, 1, 4);
  const auto cube2 = ft::make_layout(67, 33, 40, 1, 2);
  check_heat<float>(cube4, cube4.interior_box(), rng);
  check_heat<double>(cube2, box{{3, 2, 5}, {41, 30, 39}}, rng);
}

namespace {

// Every variant of the Kokkos heat3d kernel against the CUDA kernel, with the arrays `shift`
// elements into their buffers (1: not aligned for pair loads in either kernel).
template <class T>
void check_variants(const field_layout& layout, const box& region, std::size_t shift,
                    std::mt19937_64& rng) {
  SCOPED_TRACE("shift " + std::to_string(shift) + (sizeof(T) == 4 ? ", float" : ", double"));
  const funnel::stream stream(backend_kind::cuda);
  auto field = ft::random_field<T>(layout, rng);
  field.insert(field.begin(), shift, T(0));
  const auto in = to_device(field);
  const auto c = static_cast<T>(0.15);
  auto poisoned = ft::poisoned_field<T>(layout);
  poisoned.insert(poisoned.begin(), shift, T(0));
  const auto by_cuda = to_device(poisoned);
  fk::heat3d_step(stream.view(), fk::implementation::cuda, layout, in.data() + shift,
                  by_cuda.data() + shift, region, fk::heat3d_params<T>{c});
  const auto expected = to_host(by_cuda);
  for (const fkk::heat3d_variant variant : fkk::heat3d_variants) {
    SCOPED_TRACE(std::string("variant ") + fkk::to_string(variant));
    const auto by_kokkos = to_device(poisoned);
    fkk::heat3d_step(stream.view(), layout, in.data() + shift, by_kokkos.data() + shift, region, c,
                     variant);
    stream.synchronize();
    EXPECT_EQ(ft::differing_cells(expected, to_host(by_kokkos)), 0);
  }
}

}  // namespace

TEST(KokkosCuda, Heat3dVariantsBitwiseEqualToCudaKernel) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  const auto odd = ft::make_layout(67, 33, 40);    // allocated rows of 69 cells: scalar loads
  const auto even = ft::make_layout(130, 34, 41);  // rows of 132: pair loads when aligned
  // rows of 69 cells in slots of 72, each row's interior on 4 cells (16 bytes for float)
  const auto padded = ft::make_layout(67, 33, 40, 1, 4);
  for (const std::size_t shift : {0, 1}) {
    check_variants<float>(odd, odd.interior_box(), shift, rng);
    check_variants<double>(odd, box{{3, 2, 5}, {41, 30, 39}}, shift, rng);
    check_variants<float>(even, even.interior_box(), shift, rng);
    check_variants<double>(even, even.interior_box(), shift, rng);
    check_variants<float>(even, box{{3, 2, 5}, {128, 30, 40}}, shift, rng);
    check_variants<double>(even, box{{64, 1, 1}, {67, 35, 42}}, shift, rng);
    check_variants<float>(padded, padded.interior_box(), shift, rng);
    check_variants<double>(padded, box{{3, 2, 5}, {41, 30, 39}}, shift, rng);
  }
}

TEST(KokkosCuda, Jacobi2dFieldBitwiseNormClose) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  const funnel::stream stream(backend_kind::cuda);
  // Rows of 1030 cells (pair loads), of 1031 (single values), then each interior on 16 bytes.
  for (const auto& [width, row_align] :
       {std::pair{1030, 1}, std::pair{1031, 1}, std::pair{1030, 4}}) {
    SCOPED_TRACE("width " + std::to_string(width) + ", row_align " + std::to_string(row_align));
    field_layout layout = fk::jacobi2d_layout(width, 517);
    layout.row_align = row_align;
    const auto a = to_device(ft::random_field<float>(layout, rng));
    const auto by_cuda = to_device(ft::poisoned_field<float>(layout));
    const auto by_kokkos = to_device(ft::poisoned_field<float>(layout));
    const auto norms = to_device(std::vector<float>{0.0F, 0.0F});
    fk::jacobi2d_step(stream.view(), fk::implementation::cuda, layout, a.data(), by_cuda.data(),
                      layout.interior_box(), norms.data());
    fk::jacobi2d_step(stream.view(), fk::implementation::kokkos, layout, a.data(), by_kokkos.data(),
                      layout.interior_box(), norms.data() + 1);
    stream.synchronize();
    EXPECT_EQ(ft::differing_cells(to_host(by_cuda), to_host(by_kokkos)), 0);
    const auto n = to_host(norms);
    EXPECT_GT(n[0], 0.0F);
    EXPECT_NEAR(n[1], n[0], 1e-5 * n[0]);
  }
}

namespace {

// Seconds per call of `step(in, out)` on `stream`, ping-ponging between a and b.
template <class T, class Step>
double seconds_per_step(const funnel::stream& stream, T* a, T* b, const Step& step) {
  constexpr int warmup = 3;
  constexpr int reps = 20;
  auto run = [&](int count) {
    for (int r = 0; r < count; ++r) step(r % 2 ? b : a, r % 2 ? a : b);
  };
  funnel::event start(backend_kind::cuda, funnel::event_flags::timing);
  funnel::event stop(backend_kind::cuda, funnel::event_flags::timing);
  run(warmup);
  start.record(stream.view());
  run(reps);
  stop.record(stream.view());
  stop.synchronize();
  return funnel::event::elapsed_ms(start, stop) / 1e3 / reps;
}

// "" for rows of n + 2h cells, else how they are padded.
std::string rows_label(const field_layout& layout) {
  return layout.row_align > 1 ? ", rows padded to " + std::to_string(layout.row_align) : "";
}

// The CUDA kernel and the Kokkos kernel through the front end (the default variant), then every
// variant, each right after a fresh measurement of the CUDA kernel, so that a ratio compares
// runs taken seconds apart. `row_align` > 1 pads the rows.
template <class T>
void report_bandwidth(std::int64_t n, int row_align = 1) {
  const funnel::stream stream(backend_kind::cuda);
  const auto layout = ft::make_layout(n, n, n, 1, row_align);
  const std::string rows = rows_label(layout);
  const auto region = layout.interior_box();
  const auto cells = static_cast<std::size_t>(layout.allocated_cells());
  device_view<T> a("funnel::tests::a", cells);
  device_view<T> b("funnel::tests::b", cells);
  const fk::heat3d_params<T> params{static_cast<T>(0.1)};
  auto by = [&](fk::implementation impl) {
    return [&, impl](const T* in, T* out) {
      fk::heat3d_step(stream.view(), impl, layout, in, out, region, params);
    };
  };
  const double bytes = 2.0 * static_cast<double>(region.cells()) * sizeof(T);
  const char* type = sizeof(T) == 4 ? "float" : "double";
  const double cuda_s = seconds_per_step(stream, a.data(), b.data(), by(fk::implementation::cuda));
  const double kokkos_s =
      seconds_per_step(stream, a.data(), b.data(), by(fk::implementation::kokkos));
  std::printf("heat3d %lld^3 %s%s: cuda %.1f GB/s, kokkos %.1f GB/s, kokkos/cuda %.3f\n",
              static_cast<long long>(n), type, rows.c_str(), bytes / cuda_s / 1e9,
              bytes / kokkos_s / 1e9, cuda_s / kokkos_s);
  EXPECT_GT(kokkos_s, 0.0);
  for (const fkk::heat3d_variant variant : fkk::heat3d_variants) {
    const double variant_cuda_s =
        seconds_per_step(stream, a.data(), b.data(), by(fk::implementation::cuda));
    const double variant_s = seconds_per_step(stream, a.data(), b.data(), [&](const T* in, T* out) {
      fkk::heat3d_step(stream.view(), layout, in, out, region, params.alpha_dt_over_h2, variant);
    });
    std::printf(
        "heat3d %lld^3 %s%s variant %-9s: cuda %.1f GB/s, kokkos %.1f GB/s, kokkos/cuda "
        "%.3f%s\n",
        static_cast<long long>(n), type, rows.c_str(), fkk::to_string(variant),
        bytes / variant_cuda_s / 1e9, bytes / variant_s / 1e9, variant_cuda_s / variant_s,
        variant == fkk::heat3d_default_variant<T>(layout) ? " (default)" : "");
    EXPECT_GT(variant_s, 0.0);
  }
}

// jacobi2d on n x n interior cells with its norm every sweep (funnel-stencil's default cadence
// -nccheck 1), CUDA kernel then Kokkos kernel.
void report_jacobi_bandwidth(std::int64_t n, int row_align) {
  const funnel::stream stream(backend_kind::cuda);
  field_layout layout = fk::jacobi2d_layout(n + 2, n + 2);
  layout.row_align = row_align;
  const auto region = layout.interior_box();
  const auto cells = static_cast<std::size_t>(layout.allocated_cells());
  device_view<float> a("funnel::tests::a", cells);
  device_view<float> b("funnel::tests::b", cells);
  device_view<float> norm("funnel::tests::norm", 1);
  auto by = [&](fk::implementation impl) {
    return [&, impl](const float* in, float* out) {
      fk::jacobi2d_step(stream.view(), impl, layout, in, out, region, norm.data());
    };
  };
  const double bytes = 2.0 * static_cast<double>(region.cells()) * sizeof(float);
  const double cuda_s = seconds_per_step(stream, a.data(), b.data(), by(fk::implementation::cuda));
  const double kokkos_s =
      seconds_per_step(stream, a.data(), b.data(), by(fk::implementation::kokkos));
  std::printf(
      "jacobi2d %lld^2 float, norm every sweep%s: cuda %.1f GB/s, kokkos %.1f GB/s, kokkos/cuda "
      "%.3f\n",
      static_cast<long long>(n), rows_label(layout).c_str(), bytes / cuda_s / 1e9,
      bytes / kokkos_s / 1e9, cuda_s / kokkos_s);
  EXPECT_GT(kokkos_s, 0.0);
}

}  // namespace

TEST(KokkosCudaBandwidth, Report512) {
  report_bandwidth<float>(512);
  report_bandwidth<double>(512);
  // Padded rows, each interior on 16 bytes (funnel-stencil --row-align 16).
  report_bandwidth<float>(512, 4);
  report_bandwidth<double>(512, 2);
  report_jacobi_bandwidth(16384, 1);
  report_jacobi_bandwidth(16384, 4);
}
