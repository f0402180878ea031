// Kokkos kernels on the CUDA backend (a Kokkos build with its CUDA backend): Kokkos::Cuda
// instances on funnel streams, the Kokkos kernels bitwise equal to the CUDA kernels, the Jacobi
// norm to rounding, and the Kokkos heat3d bandwidth against the CUDA kernel on 512^3 in the same
// process (printed; not asserted).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "funnel/kernels/heat3d.hpp"
#include "funnel/kernels/jacobi2d.hpp"
#include "funnel/kokkos/execution_space.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/stream.hpp"
#include "kernel_test_support.hpp"
#include "kokkos_environment.hpp"

namespace fk = funnel::kernels;
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
}

TEST(KokkosCuda, Jacobi2dFieldBitwiseNormClose) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  const funnel::stream stream(backend_kind::cuda);
  const auto layout = fk::jacobi2d_layout(1030, 517);
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

namespace {

template <class T>
double seconds_per_step(const funnel::stream& stream, fk::implementation impl,
                        const field_layout& layout, T* a, T* b) {
  constexpr int warmup = 3;
  constexpr int reps = 20;
  const fk::heat3d_params<T> params{static_cast<T>(0.1)};
  auto run = [&](int count) {
    for (int r = 0; r < count; ++r) {
      fk::heat3d_step(stream.view(), impl, layout, r % 2 ? b : a, r % 2 ? a : b,
                      layout.interior_box(), params);
    }
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

template <class T>
void report_bandwidth(std::int64_t n) {
  const funnel::stream stream(backend_kind::cuda);
  const auto layout = ft::make_layout(n, n, n);
  const auto cells = static_cast<std::size_t>(layout.allocated_cells());
  device_view<T> a("funnel::tests::a", cells);
  device_view<T> b("funnel::tests::b", cells);
  const double cuda_s =
      seconds_per_step(stream, fk::implementation::cuda, layout, a.data(), b.data());
  const double kokkos_s =
      seconds_per_step(stream, fk::implementation::kokkos, layout, a.data(), b.data());
  const double bytes = 2.0 * static_cast<double>(layout.interior_box().cells()) * sizeof(T);
  std::printf("heat3d %lld^3 %s: cuda %.1f GB/s, kokkos %.1f GB/s, kokkos/cuda %.3f\n",
              static_cast<long long>(n), sizeof(T) == 4 ? "float" : "double", bytes / cuda_s / 1e9,
              bytes / kokkos_s / 1e9, cuda_s / kokkos_s);
  EXPECT_GT(kokkos_s, 0.0);
}

}  // namespace

TEST(KokkosCudaBandwidth, Report512) {
  report_bandwidth<float>(512);
  report_bandwidth<double>(512);
}
