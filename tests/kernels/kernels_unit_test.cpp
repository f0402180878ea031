// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Host kernels against a plain double-precision reference: random interiors and halos, outputs
// poisoned with NaN (cells in the region must be written, cells outside must keep their bits),
// several layouts (3D, 2D, 1D, halo 2) and thin regions, region splits bitwise, the Jacobi
// norm, the initial conditions and the heat solution's convergence order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "funnel/error.hpp"
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

std::vector<ft::region_case> heat_cases() {
  std::vector<ft::region_case> cases;
  auto add = [&](std::string name, field_layout layout, box region) {
    cases.push_back({std::move(name), layout, region});
  };
  const auto cube = ft::make_layout(9, 7, 6);
  add("3d interior", cube, cube.interior_box());
  add("3d one z plane", cube, box{{1, 1, 3}, {10, 8, 4}});
  add("3d one x column", cube, box{{5, 1, 1}, {6, 8, 7}});
  add("3d single cell", cube, box{{4, 3, 2}, {5, 4, 3}});
  add("3d into the halo of halo 2", ft::make_layout(6, 5, 4, 2), box{{1, 1, 1}, {9, 8, 7}});
  const auto plane = ft::make_layout(13, 9, 1);
  add("2d interior", plane, plane.interior_box());
  add("2d thin row", plane, box{{1, 4, 0}, {14, 5, 1}});
  const auto line = ft::make_layout(17, 1, 1);
  add("1d interior", line, line.interior_box());
  // Padded rows (field_layout::row_align): each row's interior on a multiple of 4 or 8 cells.
  const auto padded = ft::make_layout(9, 7, 6, 1, 4);
  add("3d rows padded to 4", padded, padded.interior_box());
  add("3d rows padded to 4, one x column", padded, box{{5, 1, 1}, {6, 8, 7}});
  add("3d halo 2 padded to 8, into the halo", ft::make_layout(6, 5, 4, 2, 8),
      box{{1, 1, 1}, {9, 8, 7}});
  const auto padded_plane = ft::make_layout(13, 9, 1, 1, 4);
  add("2d rows padded to 4", padded_plane, padded_plane.interior_box());
  const auto padded_line = ft::make_layout(17, 1, 1, 1, 2);
  add("1d padded to 2", padded_line, padded_line.interior_box());
  return cases;
}

template <class T>
void check_heat_against_reference(const ft::region_case& hc, std::mt19937_64& rng) {
  SCOPED_TRACE(hc.name);
  const auto in = ft::random_field<T>(hc.layout, rng);
  auto out = ft::poisoned_field<T>(hc.layout);
  const T c = static_cast<T>(0.1);
  fk::heat3d_step(stream_view::host(), fk::implementation::host, hc.layout, in.data(), out.data(),
                  hc.region, fk::heat3d_params<T>{c});
  const field_layout& l = hc.layout;
  std::int64_t written = 0;
  for (std::int64_t k = 0; k < l.allocated(2); ++k) {
    for (std::int64_t j = 0; j < l.allocated(1); ++j) {
      for (std::int64_t i = 0; i < l.allocated(0); ++i) {
        const T got = out[static_cast<std::size_t>(l.index(i, j, k))];
        if (ft::contains(hc.region, i, j, k)) {
          const double want = ft::reference_heat(l, in, i, j, k, static_cast<double>(c));
          ASSERT_NEAR(static_cast<double>(got), want, ft::reference_tolerance<T>())
              << "cell " << i << "," << j << "," << k;
          ++written;
        } else {
          ASSERT_TRUE(ft::same_bits(got, ft::poison<T>()))
              << "cell " << i << "," << j << "," << k << " outside the region was written";
        }
      }
    }
  }
  EXPECT_EQ(written, hc.region.cells());
  for (const std::size_t n : ft::padding_elements(l)) {
    ASSERT_TRUE(ft::same_bits(out[n], ft::poison<T>())) << "padding element " << n << " written";
  }
}

template <class T>
void check_heat_split(const ft::region_case& hc, std::mt19937_64& rng) {
  SCOPED_TRACE(hc.name);
  const auto in = ft::random_field<T>(hc.layout, rng);
  auto whole = ft::poisoned_field<T>(hc.layout);
  auto pieces = ft::poisoned_field<T>(hc.layout);
  const fk::heat3d_params<T> params{static_cast<T>(1.0 / 7.0)};
  fk::heat3d_step(stream_view::host(), fk::implementation::host, hc.layout, in.data(), whole.data(),
                  hc.region, params);
  for (const box& part : ft::random_split(hc.region, rng)) {
    fk::heat3d_step(stream_view::host(), fk::implementation::host, hc.layout, in.data(),
                    pieces.data(), part, params);
  }
  EXPECT_EQ(ft::differing_cells(whole, pieces), 0);
}

}  // namespace

TEST(Implementation, ParsesAndPrints) {
  for (auto impl :
       {fk::implementation::cuda, fk::implementation::host, fk::implementation::kokkos}) {
    EXPECT_EQ(fk::parse_implementation(fk::to_string(impl)), impl);
  }
  EXPECT_THROW((void)fk::parse_implementation("openmp"), funnel::invalid_argument);
  EXPECT_THROW((void)fk::parse_implementation(""), funnel::invalid_argument);
  EXPECT_EQ(fk::default_implementation(stream_view::host()), fk::implementation::host);
  EXPECT_EQ(fk::default_implementation(stream_view::from_native_handle(nullptr)),
            fk::implementation::cuda);
  EXPECT_TRUE(fk::implementation_compiled(fk::implementation::host));
}

TEST(Heat3dHost, MatchesDoubleReferenceFloat) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  for (const auto& hc : heat_cases()) check_heat_against_reference<float>(hc, rng);
}

TEST(Heat3dHost, MatchesDoubleReferenceDouble) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  for (const auto& hc : heat_cases()) check_heat_against_reference<double>(hc, rng);
}

TEST(Heat3dHost, RegionSplitsAreBitwiseIdentical) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  for (int repeat = 0; repeat < 4; ++repeat) {
    for (const auto& hc : heat_cases()) {
      check_heat_split<float>(hc, rng);
      check_heat_split<double>(hc, rng);
    }
  }
}

// heat3d_two_steps == two heat3d_step calls, bitwise, on random regions of several layouts
// (halos 1 and 2, one-cell-thick regions included); `in` is left as it was.
template <class T>
void check_two_steps_host(const ft::two_step_case& tc, std::mt19937_64& rng) {
  SCOPED_TRACE(tc.name);
  const auto in = ft::random_field<T>(tc.layout, rng);
  const auto out = ft::random_field<T>(tc.layout, rng);
  const fk::heat3d_params<T> params{static_cast<T>(1.0 / 7.0)};
  const auto expected = ft::two_steps_expected(
      tc, in, out, [&](const field_layout& l, const T* a, T* b, const box& r) {
        fk::heat3d_step(stream_view::host(), fk::implementation::host, l, a, b, r, params);
      });
  auto got = out;
  fk::heat3d_two_steps(stream_view::host(), fk::implementation::host, tc.layout, in.data(),
                       got.data(), tc.first, tc.second, params);
  EXPECT_EQ(ft::differing_cells(expected, got), 0);
  EXPECT_NE(ft::differing_cells(out, got), 0) << "nothing was written";
}

TEST(Heat3dHost, TwoStepsEqualTwoSingleSteps) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  const field_layout layouts[] = {ft::make_layout(9, 7, 6),       ft::make_layout(12, 5, 9, 2),
                                  ft::make_layout(2, 3, 2, 2),    ft::make_layout(2, 6, 5),
                                  ft::make_layout(9, 7, 6, 1, 4), ft::make_layout(12, 5, 9, 2, 8)};
  for (int repeat = 0; repeat < 25; ++repeat) {
    for (const auto& layout : layouts) {
      const auto tc = ft::random_two_step_case("layout " + std::to_string(layout.interior[0]) +
                                                   "x" + std::to_string(layout.interior[1]) + "x" +
                                                   std::to_string(layout.interior[2]),
                                               layout, rng);
      check_two_steps_host<float>(tc, rng);
      check_two_steps_host<double>(tc, rng);
    }
  }
}

TEST(Heat3dHost, TwoStepsRejectBadArguments) {
  const auto layout = ft::make_layout(6, 5, 4, 2);
  std::vector<float> in(static_cast<std::size_t>(layout.allocated_cells()), 0.0F);
  std::vector<float> out(in.size(), 0.0F);
  const fk::heat3d_params<float> p{0.1F};
  const box first{{1, 1, 1}, {9, 8, 7}};
  const auto two = [&](const field_layout& l, const box& a, const box& b) {
    fk::heat3d_two_steps(stream_view::host(), fk::implementation::host, l, in.data(), out.data(), a,
                         b, p);
  };
  // The second region must lie inside the first.
  EXPECT_THROW(two(layout, box{{2, 2, 2}, {5, 5, 5}}, box{{1, 2, 2}, {5, 5, 5}}),
               funnel::invalid_argument);
  // Both keep one cell from the edge.
  EXPECT_THROW(two(layout, box{{0, 1, 1}, {9, 8, 7}}, box{{1, 1, 1}, {5, 5, 5}}),
               funnel::invalid_argument);
  // 2D fields take heat3d_step twice.
  const auto flat = ft::make_layout(6, 5, 1);
  EXPECT_THROW(two(flat, box{{1, 1, 0}, {6, 5, 1}}, box{{1, 1, 0}, {6, 5, 1}}),
               funnel::invalid_argument);
  // Aliasing arrays.
  EXPECT_THROW(fk::heat3d_two_steps(stream_view::host(), fk::implementation::host, layout,
                                    in.data(), in.data(), first, first, p),
               funnel::invalid_argument);
  // Kokkos has no two-step kernel (or is not compiled in).
  EXPECT_THROW(fk::heat3d_two_steps(stream_view::host(), fk::implementation::kokkos, layout,
                                    in.data(), out.data(), first, first, p),
               funnel::unsupported);
  // An empty second region writes nothing.
  out.assign(out.size(), 3.0F);
  two(layout, first, box{{2, 2, 2}, {2, 5, 5}});
  EXPECT_EQ(std::count(out.begin(), out.end(), 3.0F), static_cast<long>(out.size()));
}

// The CUDA two-step kernel's shapes as every build names them: which are compiled, and the rule
// heat3d_two_steps follows (32x8x2 under 2^21 cells, else 32x16x4 for float; the most of 32, 16,
// 8 and 4 planes that still give 384 blocks, else 4), and a shape refused off a CUDA stream.
// Only funnel's CUDA kernel pushes an exchange (halo_exchange::push_next): the host and Kokkos
// implementations refuse, and so does an empty region (its launch would never signal).
TEST(Heat3dHost, PushedStepRefusedOffCuda) {
  const auto layout = ft::make_layout(6, 5, 4);
  std::vector<float> in(static_cast<std::size_t>(layout.allocated_cells()), 0.0F);
  std::vector<float> out(in.size(), 0.0F);
  const fk::heat3d_params<float> p{0.1F};
  const funnel::pushed_exchange push;
  for (const auto impl : {fk::implementation::host, fk::implementation::kokkos}) {
    EXPECT_THROW(fk::heat3d_step_pushed(stream_view::host(), impl, layout, in.data(), out.data(),
                                        layout.interior_box(), p, push),
                 funnel::unsupported);
  }
  // cuda with the host stream: refused before anything is launched.
  EXPECT_ANY_THROW(fk::heat3d_step_pushed(stream_view::host(), fk::implementation::cuda, layout,
                                          in.data(), out.data(), box{{1, 1, 1}, {1, 1, 1}}, p,
                                          push));
}

TEST(Heat3dBlockShape, CompiledShapesAndTheKernelsRule) {
  const auto names = [](const std::vector<fk::heat3d_block_shape>& shapes) {
    std::string s;
    for (const auto& shape : shapes) s += shape.to_string() + " ";
    return s;
  };
  EXPECT_EQ(names(fk::heat3d_two_steps_shapes(4)), "32x8x2 32x8x4 32x16x2 32x16x4 ");
  EXPECT_EQ(names(fk::heat3d_two_steps_shapes(8)), "32x8x2 32x8x4 ");
  EXPECT_THROW((void)fk::heat3d_two_steps_shapes(2), funnel::invalid_argument);
  EXPECT_THROW((void)fk::heat3d_two_steps_shape(16, box{{2, 2, 2}, {4, 4, 4}}),
               funnel::invalid_argument);
  const auto rule = [](std::size_t size, const index3& n) {
    return fk::heat3d_two_steps_shape(size, box{{2, 2, 2}, {2 + n[0], 2 + n[1], 2 + n[2]}})
        .to_string();
  };
  // Under 2^21 cells: 32x8x2, both types.
  EXPECT_EQ(rule(4, {24, 96, 96}), "32x8x2/4");      // 12 columns: 288 blocks, too few for any
  EXPECT_EQ(rule(8, {96, 96, 96}), "32x8x2/8");      // 36 columns: 432 blocks
  EXPECT_EQ(rule(8, {127, 128, 128}), "32x8x2/16");  // 64 columns: 512 blocks
  EXPECT_EQ(rule(4, {32, 8, 1000}), "32x8x2/4");     // one column: 250 blocks, too few
  // From 2^21 cells: float 32x16x4, double 32x8x2.
  EXPECT_EQ(rule(4, {128, 128, 128}), "32x16x4/8");  // 32 columns: 512 blocks
  EXPECT_EQ(rule(4, {768, 96, 96}), "32x16x4/32");   // 144 columns: 432 blocks
  EXPECT_EQ(rule(8, {768, 96, 96}), "32x8x2/32");    // 288 columns: 864 blocks
  EXPECT_EQ(rule(4, {512, 512, 512}), "32x16x4/32");
  EXPECT_EQ(rule(8, {512, 512, 512}), "32x8x2/32");
  EXPECT_EQ(rule(4, {32, 16, 4096}), "32x16x4/8");  // one column: 512 blocks
  // A shape's own planes stay; 0 takes the rule's.
  const box large{{2, 2, 2}, {34, 18, 4098}};
  EXPECT_EQ(fk::resolve_planes({8, 4, 3}, large).to_string(), "32x8x4/3");
  EXPECT_EQ(fk::resolve_planes({8, 4, 0}, large).to_string(), "32x8x4/16");  // 2 columns

  // Off a CUDA stream (or without CUDA) a chosen shape is refused, as is a shape not compiled.
  const auto layout = ft::make_layout(6, 5, 4, 2);
  std::vector<double> in(static_cast<std::size_t>(layout.allocated_cells()), 0.0);
  std::vector<double> out(in.size(), 0.0);
  const box interior = layout.interior_box();
  EXPECT_THROW(fk::heat3d_two_steps(stream_view::host(), layout, in.data(), out.data(), interior,
                                    interior, fk::heat3d_params<double>{0.1}, {8, 2, 0}),
               funnel::error);
}

TEST(Heat3dHost, EmptyRegionWritesNothing) {
  const auto layout = ft::make_layout(5, 5, 5);
  FUNNEL_TEST_SEEDED_RNG(rng);
  const auto in = ft::random_field<float>(layout, rng);
  auto out = ft::poisoned_field<float>(layout);
  const auto before = out;
  fk::heat3d_step(stream_view::host(), fk::implementation::host, layout, in.data(), out.data(),
                  box{{2, 2, 2}, {2, 4, 4}}, fk::heat3d_params<float>{0.1F});
  EXPECT_EQ(ft::differing_cells(before, out), 0);
}

TEST(Heat3dHost, RejectsBadArguments) {
  const auto layout = ft::make_layout(6, 5, 4);
  std::vector<double> in(static_cast<std::size_t>(layout.allocated_cells()), 0.0);
  std::vector<double> out(in.size(), 0.0);
  const fk::heat3d_params<double> p{0.1};
  const auto host = stream_view::host();
  const auto step = [&](stream_view s, fk::implementation impl, const double* src, double* dst,
                        box region) { fk::heat3d_step(s, impl, layout, src, dst, region, p); };
  // The region must keep one cell from the array's edge.
  EXPECT_THROW(
      step(host, fk::implementation::host, in.data(), out.data(), box{{0, 1, 1}, {7, 6, 5}}),
      funnel::invalid_argument);
  EXPECT_THROW(
      step(host, fk::implementation::host, in.data(), out.data(), box{{1, 1, 1}, {7, 6, 6}}),
      funnel::invalid_argument);
  // In-place or overlapping arrays, null arrays.
  EXPECT_THROW(step(host, fk::implementation::host, in.data(), in.data(), layout.interior_box()),
               funnel::invalid_argument);
  EXPECT_THROW(
      step(host, fk::implementation::host, in.data(), in.data() + 3, layout.interior_box()),
      funnel::invalid_argument);
  EXPECT_THROW(step(host, fk::implementation::host, nullptr, out.data(), layout.interior_box()),
               funnel::invalid_argument);
  // The host implementation cannot run on a CUDA stream.
  EXPECT_THROW(step(stream_view::from_native_handle(nullptr), fk::implementation::host, in.data(),
                    out.data(), layout.interior_box()),
               funnel::invalid_argument);
  // cuda needs a CUDA stream (or, without CUDA compiled in, is unsupported).
  EXPECT_THROW(step(host, fk::implementation::cuda, in.data(), out.data(), layout.interior_box()),
               funnel::error);
  // Axes with neighbours must come first: y of one cell but z of many is refused.
  const auto odd = ft::make_layout(6, 1, 4);
  EXPECT_THROW(fk::heat3d_step(host, fk::implementation::host, odd, in.data(), out.data(),
                               odd.interior_box(), p),
               funnel::invalid_argument);
  EXPECT_THROW(fk::heat3d_step(host, fk::implementation::host, layout, in.data(), out.data(),
                               layout.interior_box(), fk::heat3d_params<double>{NAN}),
               funnel::invalid_argument);
}

// The grids an application may split: the one rule the kernels' own checks apply, asked before
// anything is allocated.
TEST(Heat3dGrid, SupportedWhenTheAxesOfOneCellComeLast) {
  for (const index3& n : {index3{64, 64, 64}, index3{64, 64, 1}, index3{64, 1, 1}, index3{2, 1, 1},
                          index3{18, 5000003, 1}}) {
    EXPECT_TRUE(fk::heat3d_grid_supported(n)) << n[0] << "," << n[1] << "," << n[2];
  }
  for (const index3& n : {index3{1, 1, 1}, index3{1, 64, 64}, index3{64, 1, 64}, index3{1, 1, 64},
                          index3{1, 64, 1}, index3{0, 64, 64}, index3{64, 64, -1}}) {
    EXPECT_FALSE(fk::heat3d_grid_supported(n)) << n[0] << "," << n[1] << "," << n[2];
  }
}

TEST(Jacobi2dHost, MatchesReferenceAndNorm) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  for (const int row_align : {1, 4}) {  // rows of 37 cells, then padded (interior on 4 cells)
    field_layout layout = fk::jacobi2d_layout(37, 23);
    layout.row_align = row_align;
    SCOPED_TRACE("row_align " + std::to_string(row_align));
    for (const box& region :
         {layout.interior_box(), box{{1, 5, 0}, {36, 6, 0 + 1}}, box{{20, 1, 0}, {21, 22, 1}}}) {
      const auto a = ft::random_field<float>(layout, rng);
      auto a_new = ft::poisoned_field<float>(layout);
      float norm = 0.5F;
      fk::jacobi2d_step(stream_view::host(), fk::implementation::host, layout, a.data(),
                        a_new.data(), region, &norm);
      double want_norm = 0.0;
      for (std::int64_t j = 0; j < layout.allocated(1); ++j) {
        for (std::int64_t i = 0; i < layout.allocated(0); ++i) {
          const float got = a_new[static_cast<std::size_t>(layout.index(i, j, 0))];
          if (ft::contains(region, i, j, 0)) {
            const double want = ft::reference_jacobi(layout, a, i, j);
            ASSERT_NEAR(got, want, ft::reference_tolerance<float>()) << i << "," << j;
            const double d = want - a[static_cast<std::size_t>(layout.index(i, j, 0))];
            want_norm += d * d;
          } else {
            ASSERT_TRUE(ft::same_bits(got, ft::poison<float>())) << i << "," << j;
          }
        }
      }
      EXPECT_NEAR(norm, 0.5 + want_norm, 1e-5 * (0.5 + want_norm));
      for (const std::size_t n : ft::padding_elements(layout)) {
        ASSERT_TRUE(ft::same_bits(a_new[n], ft::poison<float>())) << "padding element " << n;
      }
    }
  }
}

TEST(Jacobi2dHost, SplitsBitwiseAndNullNorm) {
  FUNNEL_TEST_SEEDED_RNG(rng);
  const auto layout = fk::jacobi2d_layout(64, 48);
  const auto a = ft::random_field<float>(layout, rng);
  auto whole = ft::poisoned_field<float>(layout);
  auto pieces = ft::poisoned_field<float>(layout);
  fk::jacobi2d_step(stream_view::host(), fk::implementation::host, layout, a.data(), whole.data(),
                    layout.interior_box(), nullptr);
  float norm = 0.0F;
  for (const box& part : ft::random_split(layout.interior_box(), rng)) {
    fk::jacobi2d_step(stream_view::host(), fk::implementation::host, layout, a.data(),
                      pieces.data(), part, &norm);
  }
  EXPECT_EQ(ft::differing_cells(whole, pieces), 0);
  EXPECT_GT(norm, 0.0F);
  // 3D layouts are refused.
  const auto cube = ft::make_layout(4, 4, 4);
  std::vector<float> x(static_cast<std::size_t>(cube.allocated_cells()));
  std::vector<float> y(x.size());
  EXPECT_THROW(fk::jacobi2d_step(stream_view::host(), fk::implementation::host, cube, x.data(),
                                 y.data(), cube.interior_box(), nullptr),
               funnel::invalid_argument);
  EXPECT_THROW((void)fk::jacobi2d_layout(2, 10), funnel::invalid_argument);
}

TEST(Jacobi2dHost, InitializeMatchesReferenceBoundary) {
  // Two ranks side by side along x and a third below: boundary columns only where the rank
  // touches the global left/right edge, rows numbered as the reference does.
  const std::int64_t nx = 20;
  const std::int64_t ny = 12;
  const index3 global{nx - 2, ny - 2, 1};
  struct part {
    field_layout layout;
    index3 offset;
  };
  // The last part pads its rows (interior on 4 cells): the padding must be 0, as the CUDA fill
  // leaves it.
  const std::vector<part> parts = {{ft::make_layout(9, 10, 1), {0, 0, 0}},
                                   {ft::make_layout(9, 6, 1), {9, 0, 0}},
                                   {ft::make_layout(9, 4, 1), {9, 6, 0}},
                                   {ft::make_layout(9, 4, 1, 1, 4), {9, 6, 0}}};
  const double pi_f = static_cast<double>(static_cast<float>(M_PI));
  for (const auto& p : parts) {
    auto a = ft::poisoned_field<float>(p.layout);
    auto b = ft::poisoned_field<float>(p.layout);
    fk::jacobi2d_initialize(stream_view::host(), p.layout, global, p.offset, a.data(), b.data());
    EXPECT_EQ(ft::differing_cells(a, b), 0);
    const std::int64_t ax = p.layout.allocated(0);
    for (std::int64_t j = 0; j < p.layout.allocated(1); ++j) {
      const std::int64_t iy = p.offset[1] + j;
      const float boundary =
          static_cast<float>(std::sin(2.0 * pi_f * static_cast<double>(iy) / (ny - 1)));
      for (std::int64_t i = 0; i < ax; ++i) {
        const bool left = i == 0 && p.offset[0] == 0;
        const bool right = i == ax - 1 && p.offset[0] + p.layout.interior[0] == global[0];
        const float want = left || right ? boundary : 0.0F;
        ASSERT_EQ(a[static_cast<std::size_t>(p.layout.index(i, j, 0))], want) << i << "," << j;
      }
    }
    for (const std::size_t n : ft::padding_elements(p.layout)) ASSERT_EQ(a[n], 0.0F) << n;
  }
  EXPECT_EQ(fk::jacobi2d_boundary_value(0, ny), 0.0F);
  EXPECT_NEAR(fk::jacobi2d_boundary_value(10, 41), std::sin(2.0 * M_PI * 10 / 40), 1e-6);
}

TEST(Heat3dHost, InitializeMatchesModeAndZeroBoundary) {
  for (const int row_align : {1, 4}) {  // then padded rows: the padding must be 0
    SCOPED_TRACE("row_align " + std::to_string(row_align));
    const index3 global{10, 8, 6};
    const auto layout = ft::make_layout(5, 8, 3, 1, row_align);
    const index3 offset{5, 0, 3};  // the upper-x, upper-z rank of a 2 x 1 x 2 split
    auto field = ft::poisoned_field<double>(layout);
    fk::heat3d_initialize(stream_view::host(), layout, global, offset, field.data());
    const double h = fk::heat3d_grid_spacing(global);
    EXPECT_DOUBLE_EQ(h, 1.0 / 11.0);
    for (std::int64_t k = 0; k < layout.allocated(2); ++k) {
      for (std::int64_t j = 0; j < layout.allocated(1); ++j) {
        for (std::int64_t i = 0; i < layout.allocated(0); ++i) {
          const index3 g{offset[0] + i - 1, offset[1] + j - 1, offset[2] + k - 1};
          const double got = field[static_cast<std::size_t>(layout.index(i, j, k))];
          bool outside = false;
          double want = 1.0;
          for (int axis = 0; axis < 3; ++axis) {
            outside = outside || g[axis] < 0 || g[axis] >= global[axis];
            const double length = (global[axis] + 1) * h;
            want *= std::sin(M_PI * (g[axis] + 1) * h / length);
          }
          if (outside) {
            ASSERT_EQ(got, 0.0) << "boundary cell " << i << "," << j << "," << k;
          } else {
            ASSERT_NEAR(got, want, 1e-14) << i << "," << j << "," << k;
          }
          ASSERT_NEAR(fk::heat3d_exact_solution(global, g, 1.0, 0.0), outside ? 0.0 : want, 1e-14);
        }
      }
    }
    for (const std::size_t n : ft::padding_elements(layout)) ASSERT_EQ(field[n], 0.0) << n;
    const auto norms = fk::heat3d_error(layout, global, offset, 1.0, 0.0, field.data());
    EXPECT_EQ(norms.cells, layout.interior_box().cells());
    EXPECT_LT(norms.max_abs, 1e-15);
    // A rank whose box sticks out of the global grid is refused.
    EXPECT_THROW(
        fk::heat3d_initialize(stream_view::host(), layout, global, index3{6, 0, 3}, field.data()),
        funnel::invalid_argument);
  }
}

// Parts of a field add up to the norms of the whole: the larger max_abs, the sums.
TEST(ErrorNorms, AddTakesTheLargerMaximumAndTheSums) {
  fk::error_norms whole;
  whole.add({0.25, 1.5, 3});
  whole.add({0.125, 0.5, 5});
  EXPECT_EQ(whole.max_abs, 0.25);
  EXPECT_EQ(whole.sum_squares, 2.0);
  EXPECT_EQ(whole.cells, 8);
  whole.add({0.5, 0.0, 0});
  EXPECT_EQ(whole.max_abs, 0.5);
  EXPECT_EQ(whole.rms(), 0.5);
}

TEST(Heat3dHost, DecayRateOfUnitCube) {
  EXPECT_NEAR(fk::heat3d_decay_rate({31, 31, 31}), 3.0 * M_PI * M_PI, 1e-12);
  EXPECT_NEAR(fk::heat3d_decay_rate({31, 31, 1}), 2.0 * M_PI * M_PI, 1e-12);
  // Longer y side (63 cells at the same spacing): L_y = 2.
  EXPECT_NEAR(fk::heat3d_decay_rate({31, 63, 1}), M_PI * M_PI * 1.25, 1e-12);
}

namespace {

// Runs the heat problem on one rank to time t_end with c = alpha dt / h^2 fixed and returns the
// maximum error against the exact solution.
double heat_error_after(std::int64_t n, int steps_at_8) {
  const index3 global{n, n, n};
  const auto layout = ft::make_layout(n, n, n);
  std::vector<double> a(static_cast<std::size_t>(layout.allocated_cells()));
  fk::heat3d_initialize(stream_view::host(), layout, global, {0, 0, 0}, a.data());
  auto b = a;  // the boundary cells of both arrays hold the Dirichlet zeros
  const double c = 0.1;
  const double h = fk::heat3d_grid_spacing(global);
  const double dt = c * h * h;  // alpha = 1
  const auto refine = static_cast<int>((n + 1) / 8);
  const int steps = steps_at_8 * refine * refine;
  for (int s = 0; s < steps; ++s) {
    fk::heat3d_step(stream_view::host(), fk::implementation::host, layout, a.data(), b.data(),
                    layout.interior_box(), fk::heat3d_params<double>{c});
    std::swap(a, b);
  }
  return fk::heat3d_error(layout, global, {0, 0, 0}, 1.0, steps * dt, a.data()).max_abs;
}

}  // namespace

TEST(Heat3dHost, ErrorShrinksAtSecondOrder) {
  const double coarse = heat_error_after(7, 40);
  const double fine = heat_error_after(15, 40);
  const double finer = heat_error_after(31, 40);
  EXPECT_GT(coarse, 0.0);
  EXPECT_GT(coarse / fine, 3.5);
  EXPECT_LT(coarse / fine, 4.5);
  EXPECT_GT(fine / finer, 3.5);
  EXPECT_LT(fine / finer, 4.5);
}
