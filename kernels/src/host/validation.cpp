// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Argument checks shared by every kernel front end: one place that says what a valid call is,
// with messages that name the bad value and what is allowed.
#include <cstdint>
#include <string>

#include "detail/backends.hpp"
#include "funnel/error.hpp"

namespace funnel::kernels::detail {
namespace {

constexpr const char* axis_name[3] = {"x", "y", "z"};

std::string to_string(const index3& v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         ")";
}

std::string to_string(const box& b) { return "[" + to_string(b.lo) + ", " + to_string(b.hi) + ")"; }

void check_row_align(const field_layout& layout, const char* kernel) {
  FUNNEL_EXPECTS(layout.row_align_valid(), std::string(kernel) + ": row alignment " +
                                               std::to_string(layout.row_align) +
                                               " cells; it must be a power of two >= 1");
}

}  // namespace

int leading_axes(const index3& extents) noexcept {
  int dims = 0;
  for (int axis = 0; axis < 3; ++axis) {
    if (extents[axis] <= 1) continue;
    if (dims != axis) return -1;
    ++dims;
  }
  return dims;
}

int stencil_dims(const field_layout& layout, const char* kernel) {
  check_row_align(layout, kernel);
  for (int axis = 0; axis < 3; ++axis) {
    FUNNEL_EXPECTS(layout.interior[axis] >= 1,
                   std::string(kernel) + ": interior extent along " + axis_name[axis] + " is " +
                       std::to_string(layout.interior[axis]) + "; it must be >= 1");
  }
  const int dims = leading_axes({layout.allocated(0), layout.allocated(1), layout.allocated(2)});
  FUNNEL_EXPECTS(dims >= 0, std::string(kernel) + ": interior " + to_string(layout.interior) +
                                " has neighbours along an axis but not along an earlier one; "
                                "axes with more than one cell must be x, then y, then z");
  FUNNEL_EXPECTS(layout.halo >= 1 || dims == 0, std::string(kernel) + ": halo width is " +
                                                    std::to_string(layout.halo) +
                                                    "; a stencil needs halo >= 1");
  FUNNEL_EXPECTS(dims >= 1, std::string(kernel) + ": interior " + to_string(layout.interior) +
                                " has a single cell; there is nothing to update");
  return dims;
}

bool check_region(const field_layout& layout, const box& region, const char* kernel) {
  if (region.empty()) return false;
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t extent = layout.allocated(axis);
    const std::int64_t lo_min = extent > 1 ? 1 : 0;
    const std::int64_t hi_max = extent > 1 ? extent - 1 : 1;
    FUNNEL_EXPECTS(
        region.lo[axis] >= lo_min && region.hi[axis] <= hi_max,
        std::string(kernel) + ": region " + to_string(region) + " leaves [" +
            std::to_string(lo_min) + ", " + std::to_string(hi_max) + ") along " + axis_name[axis] +
            " (allocated extents " +
            to_string(index3{layout.allocated(0), layout.allocated(1), layout.allocated(2)}) +
            "; the stencil reads one cell beyond the region)");
  }
  return true;
}

bool check_two_step_regions(const field_layout& layout, const box& first, const box& second,
                            const char* kernel) {
  FUNNEL_EXPECTS(
      stencil_dims(layout, kernel) == 3,
      std::string(kernel) + ": the field must be 3D (allocated extents " +
          to_string(index3{layout.allocated(0), layout.allocated(1), layout.allocated(2)}) +
          "); take heat3d_step twice on 1D and 2D fields");
  check_region(layout, first, kernel);
  if (!check_region(layout, second, kernel)) return false;
  for (int axis = 0; axis < 3; ++axis) {
    FUNNEL_EXPECTS(first.lo[axis] <= second.lo[axis] && second.hi[axis] <= first.hi[axis],
                   std::string(kernel) + ": the second step's region " + to_string(second) +
                       " must lie inside the first's " + to_string(first));
  }
  return true;
}

void check_stream(stream_view stream, implementation impl, const char* kernel) {
  if (!implementation_compiled(impl)) {
    throw unsupported(std::string(kernel) + ": the " + to_string(impl) +
                      " implementation is not compiled into this build");
  }
  if (impl == implementation::cuda) {
    FUNNEL_EXPECTS(stream.is_cuda(), std::string(kernel) +
                                         ": the cuda implementation needs a CUDA stream, got "
                                         "the host stream");
  }
  if (impl == implementation::host) {
    FUNNEL_EXPECTS(!stream.is_cuda(), std::string(kernel) +
                                          ": the host implementation needs the host stream, got "
                                          "a CUDA stream (use cuda or kokkos)");
  }
}

void check_arrays(const field_layout& layout, const void* in, const void* out,
                  std::size_t element_size, const char* kernel) {
  FUNNEL_EXPECTS(in != nullptr && out != nullptr,
                 std::string(kernel) + ": input and output arrays must not be null");
  const auto a = reinterpret_cast<std::uintptr_t>(in);
  const auto b = reinterpret_cast<std::uintptr_t>(out);
  const auto bytes = static_cast<std::uintptr_t>(layout.allocated_cells()) * element_size;
  FUNNEL_EXPECTS(a + bytes <= b || b + bytes <= a,
                 std::string(kernel) + ": input and output arrays overlap (" +
                     std::to_string(bytes) + " bytes each, " +
                     std::to_string(a > b ? a - b : b - a) +
                     " bytes apart); the update needs two distinct arrays");
}

void check_placement(const field_layout& layout, const index3& global_interior,
                     const index3& offset, const char* what) {
  check_row_align(layout, what);
  for (int axis = 0; axis < 3; ++axis) {
    FUNNEL_EXPECTS(global_interior[axis] >= 1 && offset[axis] >= 0 &&
                       offset[axis] + layout.interior[axis] <= global_interior[axis],
                   std::string(what) + ": local interior " + to_string(layout.interior) +
                       " at offset " + to_string(offset) + " does not fit in the global interior " +
                       to_string(global_interior) + " along " + axis_name[axis]);
    FUNNEL_EXPECTS(global_interior[axis] == 1 || layout.halo_along(axis) > 0,
                   std::string(what) + ": the global grid has " +
                       std::to_string(global_interior[axis]) + " cells along " + axis_name[axis] +
                       " but the local layout (interior " + to_string(layout.interior) +
                       ") has no halo there; every rank needs at least 2 cells along each axis "
                       "of more than one global cell");
  }
}

}  // namespace funnel::kernels::detail
