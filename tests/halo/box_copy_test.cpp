// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// pack_box / unpack_box / copy_box against a plain loop, on random data with poisoned outputs.
// Host backend by default; the CUDA backend with HALO_TEST_CUDA=1 (box_copy_gpu).
#include "funnel/halo/box_copy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "strided_copy.hpp"

#ifndef HALO_TEST_CUDA
#define HALO_TEST_CUDA 0
#endif

namespace {

using funnel::box;
using funnel::field_layout;

constexpr funnel::backend_kind test_backend =
    HALO_TEST_CUDA ? funnel::backend_kind::cuda : funnel::backend_kind::host;
constexpr double poison = -12345.0;

std::mt19937& rng() {
  static std::mt19937 r(std::random_device{}());
  return r;
}

template <class T>
std::vector<T> random_values(std::int64_t n) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(dist(rng()));
  return v;
}

box random_box(const field_layout& lay) {
  box b;
  for (int a = 0; a < 3; ++a) {
    const auto n = lay.allocated(a);
    b.lo[a] = std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng());
    b.hi[a] = std::uniform_int_distribution<std::int64_t>(b.lo[a] + 1, n)(rng());
  }
  return b;
}

// Device copies of host vectors, in the test backend's pool.
template <class T>
struct device_array {
  funnel::device_buffer<T> buf;
  device_array(funnel::memory_pool& pool, funnel::stream_view s, const std::vector<T>& v)
      : buf(pool, s, v.size()) {
    funnel::copy_async(s, buf.data(), v.data(), v.size() * sizeof(T));
  }
  std::vector<T> read(funnel::stream_view s) const {
    std::vector<T> v(buf.size());
    funnel::copy_async(s, v.data(), buf.data(), v.size() * sizeof(T));
    s.synchronize();
    return v;
  }
};

template <class T>
class BoxCopy : public ::testing::Test {};
using element_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BoxCopy, element_types);

TYPED_TEST(BoxCopy, PackUnpackAndCopyMatchALoop) {
  using T = TypeParam;
  funnel::memory_pool pool(test_backend);
  funnel::stream stream(test_backend);
  for (int trial = 0; trial < 20; ++trial) {
    // Rows unpadded or padded (field_layout::row_align 2, 4 or 8 cells), independently for the
    // source and the destination of copy_box.
    const auto any_row_align = [] { return 1 << std::uniform_int_distribution<int>(0, 3)(rng()); };
    const field_layout src_lay{{std::uniform_int_distribution<std::int64_t>(2, 40)(rng()),
                                std::uniform_int_distribution<std::int64_t>(2, 9)(rng()),
                                std::uniform_int_distribution<std::int64_t>(1, 7)(rng())},
                               std::uniform_int_distribution<int>(1, 2)(rng()),
                               any_row_align()};
    const box region = random_box(src_lay);
    const std::vector<T> src = random_values<T>(src_lay.allocated_cells());
    const device_array<T> d_src(pool, stream, src);

    // pack
    device_array<T> d_packed(pool, stream, std::vector<T>(region.cells(), T(poison)));
    funnel::pack_box(stream, d_packed.buf.data(), d_src.buf.data(), src_lay, region);
    const std::vector<T> packed = d_packed.read(stream);
    std::size_t n = 0;
    for (auto k = region.lo[2]; k < region.hi[2]; ++k)
      for (auto j = region.lo[1]; j < region.hi[1]; ++j)
        for (auto i = region.lo[0]; i < region.hi[0]; ++i)
          ASSERT_EQ(packed[n++], src[static_cast<std::size_t>(src_lay.index(i, j, k))]);

    // unpack into a poisoned field: the region holds the buffer, the rest stays poisoned
    const std::vector<T> buffer = random_values<T>(region.cells());
    const device_array<T> d_buffer(pool, stream, buffer);
    device_array<T> d_field(pool, stream, std::vector<T>(src_lay.allocated_cells(), T(poison)));
    funnel::unpack_box(stream, d_field.buf.data(), src_lay, region, d_buffer.buf.data());
    const std::vector<T> field = d_field.read(stream);
    n = 0;
    for (auto k = 0; k < src_lay.allocated(2); ++k)
      for (auto j = 0; j < src_lay.allocated(1); ++j)
        for (auto i = 0; i < src_lay.allocated(0); ++i) {
          const bool in = i >= region.lo[0] && i < region.hi[0] && j >= region.lo[1] &&
                          j < region.hi[1] && k >= region.lo[2] && k < region.hi[2];
          const T got = field[static_cast<std::size_t>(src_lay.index(i, j, k))];
          if (in) {
            const auto at = static_cast<std::size_t>(
                ((k - region.lo[2]) * region.extent(1) + (j - region.lo[1])) * region.extent(0) +
                (i - region.lo[0]));
            ASSERT_EQ(got, buffer[at]);
          } else {
            ASSERT_EQ(got, T(poison));
          }
        }
    EXPECT_EQ(std::count(field.begin(), field.end(), T(poison)),
              static_cast<std::ptrdiff_t>(field.size()) - region.cells())
        << "an element outside the region (padding included) was written";

    // copy into another layout at a shifted position
    const field_layout dst_lay{
        {src_lay.interior[0] + 3, src_lay.interior[1] + 1, src_lay.interior[2] + 2},
        src_lay.halo,
        any_row_align()};
    box dst_region = region;
    for (int a = 0; a < 3; ++a) {
      const auto room = dst_lay.allocated(a) - region.extent(a);
      dst_region.lo[a] = std::uniform_int_distribution<std::int64_t>(0, room)(rng());
      dst_region.hi[a] = dst_region.lo[a] + region.extent(a);
    }
    device_array<T> d_dst(pool, stream, std::vector<T>(dst_lay.allocated_cells(), T(poison)));
    funnel::copy_box(stream, d_dst.buf.data(), dst_lay, dst_region, d_src.buf.data(), src_lay,
                     region);
    const std::vector<T> dst = d_dst.read(stream);
    std::size_t written = 0;
    for (auto k = 0; k < dst_lay.allocated(2); ++k)
      for (auto j = 0; j < dst_lay.allocated(1); ++j)
        for (auto i = 0; i < dst_lay.allocated(0); ++i) {
          const T got = dst[static_cast<std::size_t>(dst_lay.index(i, j, k))];
          const bool in = i >= dst_region.lo[0] && i < dst_region.hi[0] && j >= dst_region.lo[1] &&
                          j < dst_region.hi[1] && k >= dst_region.lo[2] && k < dst_region.hi[2];
          if (!in) {
            ASSERT_EQ(got, T(poison));
            continue;
          }
          ++written;
          ASSERT_EQ(got,
                    src[static_cast<std::size_t>(src_lay.index(
                        i - dst_region.lo[0] + region.lo[0], j - dst_region.lo[1] + region.lo[1],
                        k - dst_region.lo[2] + region.lo[2]))]);
        }
    EXPECT_EQ(written, static_cast<std::size_t>(region.cells()));
    EXPECT_EQ(std::count(dst.begin(), dst.end(), T(poison)),
              static_cast<std::ptrdiff_t>(dst.size()) - region.cells());
  }
}

TYPED_TEST(BoxCopy, RejectsRegionsOutsideTheArray) {
  using T = TypeParam;
  funnel::memory_pool pool(test_backend);
  funnel::stream stream(test_backend);
  const field_layout lay{{4, 4, 1}, 1};
  funnel::device_buffer<T> field(pool, stream, static_cast<std::size_t>(lay.allocated_cells()));
  funnel::device_buffer<T> buf(pool, stream, 64);
  try {
    funnel::pack_box(stream, buf.data(), field.data(), lay, box{{0, 0, 0}, {7, 2, 1}});
    ADD_FAILURE() << "no exception";
  } catch (const funnel::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[0, 6) along axis 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(funnel::unpack_box(stream, field.data(), lay, box{{0, 0, 0}, {1, 1, 2}}, buf.data()),
               funnel::invalid_argument);
  EXPECT_THROW(funnel::copy_box(stream, field.data(), lay, box{{0, 0, 0}, {2, 2, 1}}, field.data(),
                                lay, box{{0, 0, 0}, {3, 2, 1}}),
               funnel::invalid_argument);
  EXPECT_THROW(funnel::pack_box(stream, static_cast<T*>(nullptr), field.data(), lay,
                                box{{0, 0, 0}, {1, 1, 1}}),
               funnel::invalid_argument);
  stream.synchronize();
}

// The strided copy under copy_box (and the pipeline's chunk frame) moves elements of any size:
// 8-, 4- or 1-byte words on CUDA, whole elements on the host. A batch of random boxes of fields
// of 1- to 16-byte elements, against a cell-by-cell copy.
TEST(StridedCopy, MovesElementsOfAnySize) {
  funnel::memory_pool pool(test_backend);
  funnel::stream stream(test_backend);
  for (const std::size_t element : {1, 2, 3, 4, 6, 8, 12, 16}) {
    SCOPED_TRACE("element size " + std::to_string(element));
    const field_layout lay{{std::uniform_int_distribution<std::int64_t>(2, 30)(rng()),
                            std::uniform_int_distribution<std::int64_t>(2, 9)(rng()),
                            std::uniform_int_distribution<std::int64_t>(1, 7)(rng())},
                           1};
    const auto bytes = static_cast<std::size_t>(lay.allocated_cells()) * element;
    std::vector<unsigned char> src(bytes);
    for (auto& b : src) b = static_cast<unsigned char>(rng()());
    const std::vector<unsigned char> poisoned(bytes, 0xA5);
    const device_array<unsigned char> d_src(pool, stream, src);
    device_array<unsigned char> d_dst(pool, stream, poisoned);
    std::vector<box> boxes;
    std::vector<funnel::detail::strided_copy> copies;
    for (int c = 0; c < funnel::detail::max_batch; ++c) {
      boxes.push_back(random_box(lay));
      copies.push_back({funnel::detail::field_block(d_dst.buf.data(), lay, boxes.back(), element),
                        funnel::detail::field_block(d_src.buf.data(), lay, boxes.back(), element),
                        boxes.back().extents()});
    }
    funnel::detail::copy_strided_batch(stream, element, copies.data(),
                                       static_cast<int>(copies.size()));
    std::vector<unsigned char> want = poisoned;
    for (const box& b : boxes) {
      for (auto k = b.lo[2]; k < b.hi[2]; ++k)
        for (auto j = b.lo[1]; j < b.hi[1]; ++j)
          for (auto i = b.lo[0]; i < b.hi[0]; ++i) {
            const auto at = static_cast<std::size_t>(lay.index(i, j, k)) * element;
            std::memcpy(&want[at], &src[at], element);
          }
    }
    EXPECT_EQ(d_dst.read(stream), want);
  }
}

// The boxes a halo exchange copies, whose rows the CUDA copy merges and moves in wide units
// (copy_rows.hpp): whole planes (one run), full rows (a run per plane), x faces (a lane per row),
// interior faces (rows apart, units capped by an unaligned start), and one x face of more rows
// than the copy kernel's grid has threads (its grid-stride loop). Against a cell-by-cell copy,
// for 1-, 4-, 8- and 12-byte elements.
TEST(StridedCopy, FacesAndWholePlanes) {
  funnel::memory_pool pool(test_backend);
  funnel::stream stream(test_backend);
  struct field_case {
    field_layout layout;
    std::vector<box> boxes;
  };
  const field_layout even{{128, 12, 6}, 2};
  const field_layout odd{{129, 11, 5}, 1};
  const field_layout tall{{2, 1100, 1000}, 1};  // 4 x 1102 x 1002 cells: 1.1M rows
  const std::vector<field_case> cases{
      {even,
       {box{{0, 0, 2}, {132, 16, 4}}, box{{0, 2, 0}, {132, 4, 10}}, box{{2, 0, 0}, {4, 16, 10}},
        box{{2, 2, 2}, {130, 14, 8}}, box{{3, 2, 2}, {5, 14, 8}}, box{{0, 0, 0}, {132, 16, 10}}}},
      {odd,
       {box{{0, 0, 1}, {131, 13, 2}}, box{{0, 1, 0}, {131, 2, 7}}, box{{1, 0, 0}, {2, 13, 7}},
        box{{1, 1, 1}, {130, 12, 6}}, box{{129, 1, 1}, {130, 12, 6}},
        box{{0, 0, 0}, {131, 13, 7}}}},
      {tall, {box{{1, 0, 0}, {3, 1102, 1002}}}},
  };
  for (const std::size_t element : {1, 4, 8, 12}) {
    for (const field_case& fc : cases) {
      if (fc.layout.allocated_cells() > 1000000 && element != 4) continue;  // tall: 4 B only
      SCOPED_TRACE("element size " + std::to_string(element) + ", field " +
                   std::to_string(fc.layout.allocated(0)) + " x " +
                   std::to_string(fc.layout.allocated(1)) + " x " +
                   std::to_string(fc.layout.allocated(2)));
      const field_layout& lay = fc.layout;
      const auto bytes = static_cast<std::size_t>(lay.allocated_cells()) * element;
      std::vector<unsigned char> src(bytes);
      for (auto& b : src) b = static_cast<unsigned char>(rng()());
      const std::vector<unsigned char> poisoned(bytes, 0xA5);
      const device_array<unsigned char> d_src(pool, stream, src);
      for (const box& b : fc.boxes) {
        device_array<unsigned char> d_dst(pool, stream, poisoned);
        const funnel::detail::strided_copy copy{
            funnel::detail::field_block(d_dst.buf.data(), lay, b, element),
            funnel::detail::field_block(d_src.buf.data(), lay, b, element), b.extents()};
        funnel::detail::copy_strided_batch(stream, element, &copy, 1);
        std::vector<unsigned char> want = poisoned;
        for (auto k = b.lo[2]; k < b.hi[2]; ++k)
          for (auto j = b.lo[1]; j < b.hi[1]; ++j) {
            const auto at = static_cast<std::size_t>(lay.index(b.lo[0], j, k)) * element;
            const auto run = static_cast<std::size_t>(b.extent(0)) * element;
            std::memcpy(&want[at], &src[at], run);
          }
        EXPECT_EQ(d_dst.read(stream), want) << "box " << b.lo[0] << "," << b.lo[1] << "," << b.lo[2]
                                            << " - " << b.hi[0] << "," << b.hi[1] << "," << b.hi[2];
      }
    }
  }
}

}  // namespace
