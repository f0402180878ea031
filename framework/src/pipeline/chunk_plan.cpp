// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/pipeline/chunk_plan.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "funnel/error.hpp"

namespace funnel {
namespace {

constexpr const char* axis_names[] = {"x", "y", "z"};
constexpr std::int64_t unbounded = std::numeric_limits<std::int64_t>::max() / 4;

std::string str(std::int64_t v) { return std::to_string(v); }

void validate(const field_layout& field, int radius, int steps, int chunks,
              const neighbour_faces& faces) {
  FUNNEL_EXPECTS(radius >= 1, "stencil_radius=" + str(radius) + " is invalid: it must be >= 1");
  FUNNEL_EXPECTS(steps >= 1, "steps_per_pass=" + str(steps) + " is invalid: it must be >= 1");
  FUNNEL_EXPECTS(chunks >= 1, "chunks=" + str(chunks) + " is invalid: it must be >= 1");
  FUNNEL_EXPECTS(field.row_align_valid() && !field.padded(),
                 "the field's rows are padded (row alignment " + str(field.row_align) +
                     " cells): the pipeline streams whole planes and needs unpadded rows");
  for (int a = 0; a < 3; ++a) {
    FUNNEL_EXPECTS(field.interior[a] >= 1, std::string{"field interior along "} + axis_names[a] +
                                               " is " + str(field.interior[a]) +
                                               ": every axis needs at least one cell");
    for (int side = 0; side < 2; ++side) {
      FUNNEL_EXPECTS(!faces.has(a, side) || field.halo_along(a) > 0,
                     std::string{"a neighbour is marked on the "} + (side == 0 ? "low" : "high") +
                         " " + axis_names[a] + " face, but the field has a single cell along " +
                         axis_names[a] + " and no halo there");
    }
  }
  const int axis = chunk_plan::chunk_axis_of(field);
  FUNNEL_EXPECTS(field.interior[axis] > 1,
                 "the field has a single interior cell: there is nothing to split into chunks");
  FUNNEL_EXPECTS(field.halo >= radius, "field halo " + str(field.halo) +
                                           " is shallower than the stencil radius " + str(radius) +
                                           ": the halo must be >= stencil_radius");
  const std::int64_t depth = std::int64_t{steps} * radius;
  FUNNEL_EXPECTS(!faces.any() || field.halo >= depth,
                 "field halo " + str(field.halo) + " is shallower than steps_per_pass (" +
                     str(steps) + ") x stencil_radius (" + str(radius) + ") = " + str(depth) +
                     ": with neighbours the halo must be >= k*h so k steps per pass stay exact");
  const std::int64_t planes = field.interior[axis];
  FUNNEL_EXPECTS(depth <= planes, "steps_per_pass (" + str(steps) + ") x stencil_radius (" +
                                      str(radius) + ") = " + str(depth) + " exceeds the " +
                                      str(planes) + " interior planes along " + axis_names[axis] +
                                      ": a chunk must hold at least k*h planes");
  const int most = chunk_plan::max_chunks(field, radius, steps);
  FUNNEL_EXPECTS(chunks <= most, "chunks=" + str(chunks) + " is too many: the " + str(planes) +
                                     " interior planes along " + axis_names[axis] +
                                     " give at most " + str(most) +
                                     " chunks of at least k*h = " + str(depth) + " planes each");
}

// The cells one step updates along one axis, in field coordinates: the chunk's interior
// [first, last) widened by `widen` on sides that face a neighbouring chunk or rank, and never
// into the halo of a physical face.
std::pair<std::int64_t, std::int64_t> step_extent(std::int64_t first, std::int64_t last,
                                                  std::int64_t widen, std::int64_t interior_lo,
                                                  std::int64_t interior_hi, bool open_low,
                                                  bool open_high) {
  const std::int64_t floor = open_low ? -unbounded : interior_lo;
  const std::int64_t ceil = open_high ? unbounded : interior_hi;
  return {std::max(first - widen, floor), std::min(last + widen, ceil)};
}

}  // namespace

int chunk_plan::chunk_axis_of(const field_layout& field) noexcept {
  for (int a = 2; a > 0; --a) {
    if (field.interior[a] > 1) return a;
  }
  return 0;
}

int chunk_plan::max_chunks(const field_layout& field, int stencil_radius,
                           int steps_per_pass) noexcept {
  if (stencil_radius < 1 || steps_per_pass < 1) return 0;
  const std::int64_t depth = std::int64_t{steps_per_pass} * stencil_radius;
  const std::int64_t most = field.interior[chunk_axis_of(field)] / depth;
  return static_cast<int>(std::min<std::int64_t>(most, std::numeric_limits<int>::max()));
}

chunk_plan::chunk_plan(const field_layout& field, int stencil_radius, int steps_per_pass,
                       int chunks, neighbour_faces faces)
    : field_(field),
      axis_(chunk_axis_of(field)),
      radius_(stencil_radius),
      steps_(steps_per_pass),
      faces_(faces) {
  validate(field, stencil_radius, steps_per_pass, chunks, faces);
  const int c = axis_;
  plane_cells_ = 1;
  for (int a = 0; a < c; ++a) plane_cells_ *= field.allocated(a);

  const box interior = field.interior_box();
  const std::int64_t depth = std::int64_t{steps_} * radius_;
  const std::int64_t planes = field.interior[c];
  const std::int64_t base = planes / chunks;
  const std::int64_t extra = planes % chunks;
  const std::int64_t halo_c = field.halo_along(c);

  chunks_.reserve(static_cast<std::size_t>(chunks));
  std::int64_t first = interior.lo[c];
  for (int i = 0; i < chunks; ++i) {
    const std::int64_t last = first + base + (i < extra ? 1 : 0);
    chunk ch;
    ch.index = i;
    for (int a = 0; a < 3; ++a) {
      ch.input.lo[a] = ch.output.lo[a] = 0;
      ch.input.hi[a] = ch.output.hi[a] = field.allocated(a);
    }
    ch.input.lo[c] = std::max<std::int64_t>(0, first - depth);
    ch.input.hi[c] = std::min(field.allocated(c), last + depth);
    ch.output.lo[c] = first;
    ch.output.hi[c] = last;

    // The device buffer keeps the field's strides; along the chunk axis it must still be a valid
    // field_layout (interior > 1 so the halo applies), hence the padding for thin inputs.
    const std::int64_t input_planes = ch.input.extent(c);
    ch.layout = field;
    ch.layout.interior[c] = std::max<std::int64_t>(input_planes - 2 * halo_c, 2);

    for (int s = 1; s <= steps_; ++s) {
      const std::int64_t widen = std::int64_t{steps_ - s} * radius_;
      box region;
      for (int a = 0; a < 3; ++a) {
        const bool chunked = a == c;
        const auto [lo, hi] =
            step_extent(chunked ? first : interior.lo[a], chunked ? last : interior.hi[a], widen,
                        interior.lo[a], interior.hi[a], faces_.has(a, 0), faces_.has(a, 1));
        const std::int64_t shift = chunked ? ch.input.lo[c] : 0;
        region.lo[a] = lo - shift;
        region.hi[a] = hi - shift;
      }
      ch.regions.push_back(region);
    }
    ch.input_offset = ch.input.lo[c] * plane_cells_;
    ch.input_cells = input_planes * plane_cells_;
    ch.output_offset = first * plane_cells_;
    ch.output_cells = (last - first) * plane_cells_;
    max_buffer_cells_ = std::max(max_buffer_cells_, ch.layout.allocated_cells());
    chunks_.push_back(std::move(ch));
    first = last;
  }
}

chunk_plan chunk_plan::for_chunk_bytes(const field_layout& field, int stencil_radius,
                                       int steps_per_pass, std::size_t max_input_bytes,
                                       std::size_t element_bytes, neighbour_faces faces) {
  FUNNEL_EXPECTS(element_bytes > 0, "element_bytes=0 is invalid: it must be sizeof(T)");
  validate(field, stencil_radius, steps_per_pass, 1, faces);
  const auto bytes_of = [&](const chunk_plan& p) {
    return static_cast<std::size_t>(p.max_buffer_cells()) * element_bytes;
  };
  int lo = 1;
  int hi = max_chunks(field, stencil_radius, steps_per_pass);
  chunk_plan finest(field, stencil_radius, steps_per_pass, hi, faces);
  FUNNEL_EXPECTS(bytes_of(finest) <= max_input_bytes,
                 "max_input_bytes=" + std::to_string(max_input_bytes) +
                     " is too small: the thinnest chunks this field allows (" + str(hi) +
                     " chunks) need " + std::to_string(bytes_of(finest)) + " bytes per buffer");
  // The largest buffer shrinks as chunks are added, so bisect for the fewest chunks that fit.
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (bytes_of(chunk_plan(field, stencil_radius, steps_per_pass, mid, faces)) <=
        max_input_bytes) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return chunk_plan(field, stencil_radius, steps_per_pass, lo, faces);
}

std::int64_t chunk_plan::interior_cell_updates() const noexcept {
  return field_.interior[0] * field_.interior[1] * field_.interior[2] * steps_;
}

std::int64_t chunk_plan::input_cells_total() const noexcept {
  std::int64_t total = 0;
  for (const auto& ch : chunks_) total += ch.input_cells;
  return total;
}

std::int64_t chunk_plan::output_cells_total() const noexcept {
  std::int64_t total = 0;
  for (const auto& ch : chunks_) total += ch.output_cells;
  return total;
}

std::string chunk_plan::describe() const {
  std::int64_t thinnest = unbounded;
  std::int64_t thickest = 0;
  for (const auto& ch : chunks_) {
    thinnest = std::min(thinnest, ch.output.extent(axis_));
    thickest = std::max(thickest, ch.output.extent(axis_));
  }
  std::ostringstream out;
  out << size() << (size() == 1 ? " chunk" : " chunks") << " along " << axis_names[axis_] << " of "
      << thinnest;
  if (thickest != thinnest) out << "-" << thickest;
  out << " planes, k=" << steps_ << ", h=" << radius_;
  return out.str();
}

}  // namespace funnel
