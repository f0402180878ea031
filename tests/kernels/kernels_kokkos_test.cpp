// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The Kokkos kernels against the host kernels on the host stream: the stencil updates must be
// bitwise equal (tolerance 0: the same uncontracted per-cell arithmetic), cells outside the
// region untouched, region splits bitwise, and the Jacobi norm equal to rounding. Every
// work split of the Kokkos heat3d kernel (heat3d_variant.hpp) is checked the same way, so the
// GPU-shaped variants are tested without a GPU.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/kernels/implementation.hpp"
#include "funnel/kernels/jacobi2d.hpp"
#include "heat3d_variant.hpp"
#include "kernel_test_support.hpp"
#include "kokkos_environment.hpp"

namespace fk = funnel::kernels;
namespace fkk = funnel::kernels::detail::kokkos;
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
          {"1d interior", line, line.interior_box()},
          // Padded rows (field_layout::row_align): every row's interior on 4 or 2 cells.
          {"3d rows padded to 4", ft::make_layout(19, 11, 9, 1, 4),
           ft::make_layout(19, 11, 9, 1, 4).interior_box()},
          {"3d halo 2 padded to 2, into the halo", ft::make_layout(8, 7, 6, 2, 2),
           box{{1, 1, 1}, {11, 10, 9}}},
          {"2d rows padded to 4", ft::make_layout(33, 17, 1, 1, 4),
           ft::make_layout(33, 17, 1, 1, 4).interior_box()}};
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

// Rows of an even number of cells, so that the variants' pair loads apply on aligned arrays
// (kokkos_cases() has odd rows: loads of one value).
std::vector<ft::region_case> even_row_cases() {
  const auto even = ft::make_layout(18, 10, 9);    // allocated 20 x 12 x 11
  const auto halo2 = ft::make_layout(8, 7, 6, 2);  // allocated 12 x 11 x 10
  return {{"3d even rows", even, even.interior_box()},
          {"3d even rows, odd x bounds", even, box{{3, 2, 1}, {14, 11, 10}}},
          {"3d even rows, one column", even, box{{4, 1, 2}, {5, 11, 10}}},
          {"3d even rows, one plane", even, box{{1, 1, 5}, {19, 11, 6}}},
          {"3d even rows, to the halo's last cell", halo2, box{{1, 1, 1}, {11, 10, 9}}},
          {"3d even rows, 3 cells wide", halo2, box{{5, 2, 1}, {8, 9, 9}}}};
}

// One variant on `kc`, whole and split, with the arrays `shift` elements into their buffers
// (1: not aligned for pairs, whatever the strides), against the host kernel.
template <class T>
void check_variant(fkk::heat3d_variant variant, const ft::region_case& kc, std::size_t shift,
                   std::mt19937_64& rng) {
  SCOPED_TRACE(kc.name + ", variant " + fkk::to_string(variant) + ", shift " +
               std::to_string(shift) + (sizeof(T) == 4 ? ", float" : ", double"));
  const auto cells = static_cast<std::size_t>(kc.layout.allocated_cells());
  const auto field = ft::random_field<T>(kc.layout, rng);
  std::vector<T> in(shift + cells);
  std::copy(field.begin(), field.end(), in.begin() + static_cast<std::ptrdiff_t>(shift));
  std::vector<T> whole(shift + cells, ft::poison<T>());
  std::vector<T> pieces(shift + cells, ft::poison<T>());
  // operator new aligns to 16 bytes here, so shift 0 gives pair-aligned arrays.
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(in.data()) % 16, 0U);
  const auto c = static_cast<T>(0.15);
  const auto host = stream_view::host();
  auto host_out = ft::poisoned_field<T>(kc.layout);
  fk::heat3d_step(host, fk::implementation::host, kc.layout, field.data(), host_out.data(),
                  kc.region, fk::heat3d_params<T>{c});
  fkk::heat3d_step(host, kc.layout, in.data() + shift, whole.data() + shift, kc.region, c, variant);
  for (const box& part : ft::random_split(kc.region, rng)) {
    fkk::heat3d_step(host, kc.layout, in.data() + shift, pieces.data() + shift, part, c, variant);
  }
  whole.erase(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(shift));
  pieces.erase(pieces.begin(), pieces.begin() + static_cast<std::ptrdiff_t>(shift));
  EXPECT_EQ(ft::differing_cells(host_out, whole), 0);
  EXPECT_EQ(ft::differing_cells(host_out, pieces), 0) << "split region";
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

TEST(Heat3dKokkos, EveryVariantBitwiseEqualToHost) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  auto cases = kokkos_cases();
  for (auto& kc : even_row_cases()) cases.push_back(kc);
  for (const fkk::heat3d_variant variant : fkk::heat3d_variants) {
    for (const auto& kc : cases) {
      for (const std::size_t shift : {0, 1}) {
        check_variant<float>(variant, kc, shift, rng);
        check_variant<double>(variant, kc, shift, rng);
      }
    }
  }
}

TEST(Jacobi2dKokkos, FieldBitwiseAndNormCloseToHost) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  // Rows of 70 cells (pair loads), of 71 (single values), then padded (interior on 4 cells).
  for (const auto& [width, row_align] : {std::pair{70, 1}, std::pair{71, 1}, std::pair{70, 4}}) {
    field_layout layout = fk::jacobi2d_layout(width, 45);
    layout.row_align = row_align;
    SCOPED_TRACE("width " + std::to_string(width) + ", row_align " + std::to_string(row_align));
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
      fk::jacobi2d_step(host, fk::implementation::kokkos, layout, a.data(), kokkos_new.data(),
                        region, &kokkos_norm);
      fk::jacobi2d_step(host, fk::implementation::kokkos, layout, a.data(), kokkos_plain.data(),
                        region, nullptr);
      EXPECT_EQ(ft::differing_cells(host_new, kokkos_new), 0);
      EXPECT_EQ(ft::differing_cells(host_new, kokkos_plain), 0);
      EXPECT_GT(host_norm, 0.25F);
      EXPECT_NEAR(kokkos_norm, host_norm, 1e-5 * host_norm);
    }
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
