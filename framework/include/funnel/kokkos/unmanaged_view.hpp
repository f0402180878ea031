// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file unmanaged_view.hpp
 * @brief Unmanaged Kokkos views over funnel's memory: pool buffers, pinned buffers, fields.
 *
 * Unmanaged: the view neither allocates nor frees; the funnel owner (device_buffer,
 * pinned_buffer) must outlive it. Needs Kokkos (FUNNEL_HAS_KOKKOS).
 */
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>

#include "funnel/decomposition/field_layout.hpp"
#include "funnel/error.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/runtime/pinned_buffer.hpp"

namespace funnel::kokkos {

#if defined(KOKKOS_ENABLE_CUDA)
/// @brief Memory space of cuda-backend pool allocations (stream-ordered pools hand out device
/// memory).
using device_memory_space = Kokkos::CudaSpace;
/// @brief Memory space of cuda-backend pinned buffers: host memory the device can read.
using pinned_memory_space = Kokkos::CudaHostPinnedSpace;
#else
/// @brief Memory space of pool allocations: without Kokkos CUDA, every funnel buffer Kokkos can
/// touch is host memory (Kokkos::CudaSpace with it).
using device_memory_space = Kokkos::HostSpace;
/// @brief Memory space of pinned buffers: without Kokkos CUDA, plain host memory
/// (Kokkos::CudaHostPinnedSpace with it).
using pinned_memory_space = Kokkos::HostSpace;
#endif

/// @brief A 1D unmanaged view of `T` in `MemorySpace`.
template <class T, class MemorySpace>
using unmanaged_view = Kokkos::View<T*, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/**
 * @brief A 3D unmanaged view of a field in funnel's layout: `view(i, j, k)` is allocated cell
 * (i, j, k), x fastest, extents = the layout's allocated extents. Strided (LayoutStride: 1,
 * row_pitch(), plane_pitch()), so the same type views padded and unpadded rows alike.
 */
template <class T, class MemorySpace>
using unmanaged_field_view =
    Kokkos::View<T***, Kokkos::LayoutStride, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/**
 * @brief Views `count` elements at `data` in `MemorySpace`.
 * @tparam MemorySpace where `data` lives, e.g. device_memory_space
 * @tparam T the element type
 * @param data first element (may be null when count is 0)
 * @param count elements
 * @return the view; `data` must outlive it
 */
template <class MemorySpace, class T>
[[nodiscard]] unmanaged_view<T, MemorySpace> view_of(T* data, std::size_t count) {
  return unmanaged_view<T, MemorySpace>(data, count);
}

/**
 * @brief Views a rank's field array (`layout.allocated_cells()` elements at `data`) in 3D.
 *
 * The view holds the allocated cells only: on padded rows (layout.row_align > 1) it starts at
 * the first row's cell 0 (`data` + layout.lead()) and steps layout.row_pitch() elements from
 * one row to the next, so every index within its extents is a cell of the array and never
 * padding (Kokkos' span() of a strided view, extent times stride, still counts lead() elements
 * past the array's end; the view is then not contiguous, and deep_copy goes cell by cell).
 * @tparam MemorySpace where `data` lives
 * @tparam T the element type
 * @param data the array's first element
 * @param layout the field's layout
 * @return the view, extents allocated(0), allocated(1), allocated(2); `data` must outlive it
 */
template <class MemorySpace, class T>
[[nodiscard]] unmanaged_field_view<T, MemorySpace> field_view(T* data, const field_layout& layout) {
  const Kokkos::LayoutStride strides(static_cast<std::size_t>(layout.allocated(0)), 1,
                                     static_cast<std::size_t>(layout.allocated(1)),
                                     static_cast<std::size_t>(layout.row_pitch()),
                                     static_cast<std::size_t>(layout.allocated(2)),
                                     static_cast<std::size_t>(layout.plane_pitch()));
  return unmanaged_field_view<T, MemorySpace>(data + layout.lead(), strides);
}

/**
 * @brief Views a cuda-backend pool buffer in device memory.
 * @tparam T the element type
 * @param buffer the buffer (must outlive the view)
 * @return a view of its size() elements
 * @throw funnel::invalid_argument for a host-backend buffer with Kokkos CUDA (view it with
 * host_view_of)
 */
template <class T>
[[nodiscard]] unmanaged_view<T, device_memory_space> device_view_of(
    const device_buffer<T>& buffer) {
#if defined(KOKKOS_ENABLE_CUDA)
  FUNNEL_EXPECTS(buffer.empty() || buffer.stream().is_cuda(),
                 "funnel::kokkos::device_view_of: the buffer comes from a host-backend pool; "
                 "use host_view_of");
#endif
  return unmanaged_view<T, device_memory_space>(buffer.data(), buffer.size());
}

/**
 * @brief Views a host-backend pool buffer in host memory.
 * @tparam T the element type
 * @param buffer the buffer (must outlive the view)
 * @return a view of its size() elements
 * @throw funnel::invalid_argument for a cuda-backend buffer (device memory)
 */
template <class T>
[[nodiscard]] unmanaged_view<T, Kokkos::HostSpace> host_view_of(const device_buffer<T>& buffer) {
  FUNNEL_EXPECTS(buffer.empty() || !buffer.stream().is_cuda(),
                 "funnel::kokkos::host_view_of: the buffer holds device memory; use "
                 "device_view_of");
  return unmanaged_view<T, Kokkos::HostSpace>(buffer.data(), buffer.size());
}

/**
 * @brief Views a pinned buffer as `size() / sizeof(T)` elements of `T` in the pinned memory
 * space (host memory that, on the cuda backend, device kernels may also read).
 * @tparam T the element type
 * @param buffer the buffer (must outlive the view)
 * @return a view of size() / sizeof(T) elements
 * @throw funnel::invalid_argument for a host-backend buffer with Kokkos CUDA (it is not
 * pinned; view it with Kokkos::HostSpace through view_of), or memory not aligned for T
 */
template <class T>
[[nodiscard]] unmanaged_view<T, pinned_memory_space> pinned_view_of(const pinned_buffer& buffer) {
#if defined(KOKKOS_ENABLE_CUDA)
  FUNNEL_EXPECTS(buffer.data() == nullptr || buffer.backend() == backend_kind::cuda,
                 "funnel::kokkos::pinned_view_of: a host-backend buffer is not page-locked; "
                 "view it with view_of<Kokkos::HostSpace>");
#endif
  return unmanaged_view<T, pinned_memory_space>(buffer.as<T>(), buffer.size() / sizeof(T));
}

}  // namespace funnel::kokkos
