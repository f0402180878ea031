// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Kokkos interop on the host backend (the platform's Kokkos 3.4 Serial in CI): scope_guard,
// execution spaces for funnel streams, unmanaged views over pool, pinned and field memory.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <random>
#include <type_traits>

#include "funnel/error.hpp"
#include "funnel/kokkos/execution_space.hpp"
#include "funnel/kokkos/scope_guard.hpp"
#include "funnel/kokkos/unmanaged_view.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "kokkos_environment.hpp"

namespace fkk = funnel::kokkos;
using funnel::backend_kind;
using funnel::stream_view;

namespace {

// A functor rather than KOKKOS_LAMBDA: nvcc refuses extended lambdas inside the generic lambda
// that with_execution_space calls.
struct scaled_index {
  fkk::unmanaged_view<double, Kokkos::HostSpace> view;
  double scale;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    view(i) = scale * static_cast<double>(i);
  }
};

}  // namespace

TEST(KokkosScopeGuard, SecondGuardLeavesKokkosAlone) {
  ASSERT_TRUE(Kokkos::is_initialized());  // by the environment's guard
  {
    const fkk::scope_guard inner;
    EXPECT_FALSE(inner.initialized_here());
  }
  EXPECT_TRUE(Kokkos::is_initialized());
}

TEST(KokkosExecutionSpace, HostStreamRunsOnTheHostSpace) {
  funnel::memory_pool pool(backend_kind::host);
  const std::size_t n = 1000;
  funnel::device_buffer<double> buffer(pool, stream_view::host(), n);
  const auto view = fkk::host_view_of(buffer);
  ASSERT_EQ(view.extent(0), n);
  ASSERT_EQ(view.data(), buffer.data());
  std::mt19937_64 rng(std::random_device{}());
  const double scale = std::uniform_real_distribution<double>(1.0, 2.0)(rng);
  fkk::with_execution_space(stream_view::host(), [&](const auto& space) {
    // Both branches are compiled (with Kokkos CUDA the generic lambda is also instantiated for
    // Kokkos::Cuda); only the host one may run for the host stream.
    using space_type = std::decay_t<decltype(space)>;
    if constexpr (std::is_same_v<space_type, Kokkos::DefaultHostExecutionSpace>) {
      Kokkos::parallel_for("funnel::tests::fill", Kokkos::RangePolicy<space_type>(space, 0, n),
                           scaled_index{view, scale});
      space.fence();
    } else {
      ADD_FAILURE() << "the host stream was given a non-host execution space";
    }
  });
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(buffer.data()[i], scale * static_cast<double>(i));
}

TEST(KokkosExecutionSpace, CudaStreamNeedsKokkosCuda) {
#if defined(KOKKOS_ENABLE_CUDA)
  EXPECT_THROW((void)fkk::execution_space_for(stream_view::host()), funnel::invalid_argument);
#else
  EXPECT_THROW((void)fkk::execution_space_for(stream_view::from_native_handle(nullptr)),
               funnel::unsupported);
  EXPECT_THROW(
      fkk::with_execution_space(stream_view::from_native_handle(nullptr), [](const auto&) {}),
      funnel::unsupported);
  const auto space = fkk::execution_space_for(stream_view::host());
  static_assert(std::is_same_v<std::decay_t<decltype(space)>, Kokkos::DefaultHostExecutionSpace>);
#endif
}

TEST(KokkosViews, FieldViewFollowsFunnelLayout) {
  // Unpadded rows and rows padded to 2, 4 and 8 cells, halos 1 and 2: the view has the
  // allocated extents (never the padding), and every cell of it is the layout's.
  for (const int row_align : {1, 2, 4, 8}) {
    for (const int halo : {1, 2}) {
      funnel::field_layout layout;
      layout.interior = {5, 4, 3};
      layout.halo = halo;
      layout.row_align = row_align;
      std::vector<float> field(static_cast<std::size_t>(layout.allocated_cells()));
      const auto view = fkk::field_view<Kokkos::HostSpace>(field.data(), layout);
      ASSERT_EQ(view.extent(0), static_cast<std::size_t>(layout.allocated(0)));
      ASSERT_EQ(view.extent(1), static_cast<std::size_t>(layout.allocated(1)));
      ASSERT_EQ(view.extent(2), static_cast<std::size_t>(layout.allocated(2)));
      for (std::int64_t k = 0; k < layout.allocated(2); ++k) {
        for (std::int64_t j = 0; j < layout.allocated(1); ++j) {
          for (std::int64_t i = 0; i < layout.allocated(0); ++i) {
            ASSERT_EQ(&view(i, j, k), field.data() + layout.index(i, j, k))
                << i << "," << j << "," << k << " row_align " << row_align << " halo " << halo;
          }
        }
      }
      // Contiguous (one block deep_copy may move) exactly when no padding lies between rows.
      EXPECT_EQ(view.span_is_contiguous(), !layout.padded())
          << "row_align " << row_align << " halo " << halo;
    }
  }
}

TEST(KokkosViews, PinnedAndPlainViews) {
#if defined(KOKKOS_ENABLE_CUDA)
  // With Kokkos CUDA the pinned memory space is CudaHostPinnedSpace: only page-locked memory
  // (a cuda-backend pinned buffer) may be viewed in it.
  const funnel::pinned_buffer unpinned(backend_kind::host, 4096);
  EXPECT_THROW((void)fkk::pinned_view_of<double>(unpinned), funnel::invalid_argument);
  const funnel::pinned_buffer pinned(backend_kind::cuda, 4096);
#else
  const funnel::pinned_buffer pinned(backend_kind::host, 4096);
#endif
  const auto pv = fkk::pinned_view_of<double>(pinned);
  EXPECT_EQ(pv.extent(0), 4096 / sizeof(double));
  EXPECT_EQ(static_cast<void*>(pv.data()), pinned.data());
  std::vector<int> plain(17);
  const auto v = fkk::view_of<Kokkos::HostSpace>(plain.data(), plain.size());
  EXPECT_EQ(v.extent(0), plain.size());
  v(16) = 42;
  EXPECT_EQ(plain[16], 42);
}
