// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/halo/box_copy.hpp"

#include <cstring>
#include <string>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "strided_copy.hpp"

namespace funnel {
namespace detail {
namespace {

std::string describe(const box& b) {
  auto t = [](const index3& v) {
    return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
           ")";
  };
  return "[" + t(b.lo) + ", " + t(b.hi) + ")";
}

void copy_strided_host(std::size_t element_size, const strided_block& dst, const strided_block& src,
                       const index3& extent) {
  const std::size_t row_bytes = static_cast<std::size_t>(extent[0]) * element_size;
  auto* d = static_cast<unsigned char*>(dst.base);
  const auto* s = static_cast<const unsigned char*>(src.base);
  for (std::int64_t k = 0; k < extent[2]; ++k) {
    for (std::int64_t j = 0; j < extent[1]; ++j) {
      const auto d_off = static_cast<std::size_t>(k * dst.stride_z + j * dst.stride_y);
      const auto s_off = static_cast<std::size_t>(k * src.stride_z + j * src.stride_y);
      std::memcpy(d + d_off * element_size, s + s_off * element_size, row_bytes);
    }
  }
}

}  // namespace

strided_block field_block(void* field, const field_layout& layout, const box& region,
                          std::size_t element_size) {
  FUNNEL_EXPECTS(field != nullptr, "the field pointer is null");
  FUNNEL_EXPECTS(layout.row_align_valid(), "row alignment " + std::to_string(layout.row_align) +
                                               " is not a power of two >= 1");
  for (int axis = 0; axis < 3; ++axis) {
    FUNNEL_EXPECTS(region.lo[axis] >= 0 && region.hi[axis] <= layout.allocated(axis) &&
                       region.lo[axis] <= region.hi[axis],
                   "region " + describe(region) + " is not inside the allocated array [0, " +
                       std::to_string(layout.allocated(axis)) + ") along axis " +
                       std::to_string(axis));
  }
  const std::int64_t offset = layout.index(region.lo[0], region.lo[1], region.lo[2]);
  return strided_block{
      static_cast<unsigned char*>(field) + static_cast<std::size_t>(offset) * element_size,
      layout.row_pitch(), layout.plane_pitch()};
}

strided_block dense_block(void* buffer, const index3& extent) {
  FUNNEL_EXPECTS(buffer != nullptr, "the buffer pointer is null");
  return strided_block{buffer, extent[0], extent[0] * extent[1]};
}

void copy_strided(stream_view stream, std::size_t element_size, const strided_block& dst,
                  const strided_block& src, const index3& extent) {
  if (extent[0] <= 0 || extent[1] <= 0 || extent[2] <= 0) return;
  FUNNEL_EXPECTS(element_size > 0, "element size 0 is invalid");
  if (!stream.is_cuda()) {
    copy_strided_host(element_size, dst, src, extent);
    return;
  }
#if FUNNEL_HAS_CUDA
  copy_strided_cuda(stream.native_handle(), element_size, dst, src, extent);
#else
  throw unsupported("box copy on a CUDA stream, but CUDA is not compiled into this build");
#endif
}

void copy_strided_batch(stream_view stream, std::size_t element_size, const strided_copy* copies,
                        int count) {
  FUNNEL_EXPECTS(count >= 0 && count <= max_batch, "a batch of " + std::to_string(count) +
                                                       " copies (at most " +
                                                       std::to_string(max_batch) + ")");
  if (count == 0) return;
  FUNNEL_EXPECTS(element_size > 0, "element size 0 is invalid");
  if (!stream.is_cuda()) {
    for (int c = 0; c < count; ++c) {
      copy_strided(stream, element_size, copies[c].dst, copies[c].src, copies[c].extent);
    }
    return;
  }
#if FUNNEL_HAS_CUDA
  copy_strided_batch_cuda(stream.native_handle(), element_size, copies, count);
#else
  throw unsupported("box copy on a CUDA stream, but CUDA is not compiled into this build");
#endif
}

}  // namespace detail

namespace {

template <class T>
void pack(stream_view stream, T* buffer, const T* field, const field_layout& layout,
          const box& region) {
  const auto src = detail::field_block(const_cast<T*>(field), layout, region, sizeof(T));
  const auto dst = detail::dense_block(buffer, region.extents());
  detail::copy_strided(stream, sizeof(T), dst, src, region.extents());
}

template <class T>
void unpack(stream_view stream, T* field, const field_layout& layout, const box& region,
            const T* buffer) {
  const auto dst = detail::field_block(field, layout, region, sizeof(T));
  const auto src = detail::dense_block(const_cast<T*>(buffer), region.extents());
  detail::copy_strided(stream, sizeof(T), dst, src, region.extents());
}

template <class T>
void copy(stream_view stream, T* dst, const field_layout& dst_layout, const box& dst_region,
          const T* src, const field_layout& src_layout, const box& src_region) {
  FUNNEL_EXPECTS(dst_region.extents() == src_region.extents(),
                 "copy_box regions differ in size: destination " + detail::describe(dst_region) +
                     ", source " + detail::describe(src_region));
  const auto d = detail::field_block(dst, dst_layout, dst_region, sizeof(T));
  const auto s = detail::field_block(const_cast<T*>(src), src_layout, src_region, sizeof(T));
  detail::copy_strided(stream, sizeof(T), d, s, dst_region.extents());
}

}  // namespace

void pack_box(stream_view stream, float* buffer, const float* field, const field_layout& layout,
              const box& region) {
  pack(stream, buffer, field, layout, region);
}
void pack_box(stream_view stream, double* buffer, const double* field, const field_layout& layout,
              const box& region) {
  pack(stream, buffer, field, layout, region);
}
void unpack_box(stream_view stream, float* field, const field_layout& layout, const box& region,
                const float* buffer) {
  unpack(stream, field, layout, region, buffer);
}
void unpack_box(stream_view stream, double* field, const field_layout& layout, const box& region,
                const double* buffer) {
  unpack(stream, field, layout, region, buffer);
}
void copy_box(stream_view stream, float* dst, const field_layout& dst_layout, const box& dst_region,
              const float* src, const field_layout& src_layout, const box& src_region) {
  copy(stream, dst, dst_layout, dst_region, src, src_layout, src_region);
}
void copy_box(stream_view stream, double* dst, const field_layout& dst_layout,
              const box& dst_region, const double* src, const field_layout& src_layout,
              const box& src_region) {
  copy(stream, dst, dst_layout, dst_region, src, src_layout, src_region);
}

}  // namespace funnel
