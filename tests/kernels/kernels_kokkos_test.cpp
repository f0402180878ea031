// The Kokkos kernels against the host kernels on the host stream: the stencil updates must be
// bitwise equal (tolerance 0: the same uncontracted per-cell arithmetic), cells outside the
// region untouched, region splits bitwise, and the Jacobi norm equal to rounding.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/kernels/implementation.hpp"
#include "funnel/kernels/jacobi2d.hpp"
#include "kernel_test_support.hpp"
#include "kokkos_environment.hpp"

namespace fk = funnel::kernels;
namespace ft = funnel::kernels::testing;
using funnel::box;
using funnel::field_layout;
using funnel::stream_view;

namespace {

std::vector<ft::region_case> kokkos_cases() {
  const auto cube = ft::make_layout(19, 11, 9);
  const auto plane = ft::make_layout(33, 17, 1);
  const auto line = ft::make_layout(50, 1, 1);
  return {{"3d interior", cube, cube.interior_box()},
          {"3d thin y slab", cube, box{{1, 6, 1}, {20, 7, 10}}},
          {"3d halo 2 into the halo", ft::make_layout(8, 7, 6, 2), box{{1, 1, 1}, {11, 10, 9}}},
          // taller than wide: z spans more planes than x and y cells together
          {"3d tall", ft::make_layout(6, 5, 21), box{{1, 1, 1}, {7, 6, 22}}},
          {"2d interior", plane, plane.interior_box()},
          {"2d column", plane, box{{7, 1, 0}, {8, 18, 1}}},
          {"1d interior", line, line.interior_box()}};
}

template <class T>
void check_heat(const ft::region_case& kc, std::mt19937_64& rng) {
  SCOPED_TRACE(kc.name);
  const auto in = ft::random_field<T>(kc.layout, rng);
  auto host_out = ft::poisoned_field<T>(kc.layout);
  auto kokkos_out = ft::poisoned_field<T>(kc.layout);
  auto kokkos_pieces = ft::poisoned_field<T>(kc.layout);
  const fk::heat3d_params<T> params{static_cast<T>(0.125)};
  const auto host = stream_view::host();
  fk::heat3d_step(host, fk::implementation::host, kc.layout, in.data(), host_out.data(), kc.region,
                  params);
  fk::heat3d_step(host, fk::implementation::kokkos, kc.layout, in.data(), kokkos_out.data(),
                  kc.region, params);
  for (const box& part : ft::random_split(kc.region, rng)) {
    fk::heat3d_step(host, fk::implementation::kokkos, kc.layout, in.data(), kokkos_pieces.data(),
                    part, params);
  }
  EXPECT_EQ(ft::differing_cells(host_out, kokkos_out), 0);
  EXPECT_EQ(ft::differing_cells(host_out, kokkos_pieces), 0) << "split region";
  // The region really was written (the host result there is finite).
  const auto& l = kc.layout;
  const auto& r = kc.region;
  EXPECT_FALSE(
      std::isnan(kokkos_out[static_cast<std::size_t>(l.index(r.lo[0], r.lo[1], r.lo[2]))]));
}

}  // namespace

TEST(Heat3dKokkos, BitwiseEqualToHost) {
  ASSERT_TRUE(fk::implementation_compiled(fk::implementation::kokkos));
  FUNNEL_TEST_SEEDED_RNG(rng);
  for (const auto& kc : kokkos_cases()) {
    check_heat<float>(kc, rng);
    check_heat<double>(kc, rng);
  }
}

TEST(Jacobi2dKokkos, FieldBitwiseAndNormCloseToHost) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  const auto layout = fk::jacobi2d_layout(70, 45);
  for (const box& region :
       {layout.interior_box(), box{{1, 9, 0}, {69, 10, 1}}, box{{5, 3, 0}, {60, 40, 1}}}) {
    const auto a = ft::random_field<float>(layout, rng);
    auto host_new = ft::poisoned_field<float>(layout);
    auto kokkos_new = ft::poisoned_field<float>(layout);
    auto kokkos_plain = ft::poisoned_field<float>(layout);
    float host_norm = 0.25F;
    float kokkos_norm = 0.25F;
    const auto host = stream_view::host();
    fk::jacobi2d_step(host, fk::implementation::host, layout, a.data(), host_new.data(), region,
                      &host_norm);
    fk::jacobi2d_step(host, fk::implementation::kokkos, layout, a.data(), kokkos_new.data(), region,
                      &kokkos_norm);
    fk::jacobi2d_step(host, fk::implementation::kokkos, layout, a.data(), kokkos_plain.data(),
                      region, nullptr);
    EXPECT_EQ(ft::differing_cells(host_new, kokkos_new), 0);
    EXPECT_EQ(ft::differing_cells(host_new, kokkos_plain), 0);
    EXPECT_GT(host_norm, 0.25F);
    EXPECT_NEAR(kokkos_norm, host_norm, 1e-5 * host_norm);
  }
}

TEST(KernelsKokkos, RefusesACudaStreamWithoutKokkosCuda) {
#if defined(KOKKOS_ENABLE_CUDA)
  GTEST_SKIP() << "this Kokkos has its CUDA backend";
#else
  const auto layout = ft::make_layout(4, 4, 4);
  std::vector<float> a(static_cast<std::size_t>(layout.allocated_cells()));
  std::vector<float> b(a.size());
  EXPECT_THROW(
      fk::heat3d_step(stream_view::from_native_handle(nullptr), fk::implementation::kokkos, layout,
                      a.data(), b.data(), layout.interior_box(), fk::heat3d_params<float>{0.1F}),
      funnel::unsupported);
#endif
}
