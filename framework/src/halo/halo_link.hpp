// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: one neighbour of a halo exchange, the cells that travel to and from it, and the
// interface every transport (local, MPI, IPC with a host handshake, GPU-ordered IPC) implements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/halo/neighbor_path.hpp"
#include "funnel/halo/pushed_exchange.hpp"
#include "funnel/runtime/stream_view.hpp"
#include "strided_copy.hpp"

namespace funnel::detail {

/// A neighbour across one face of this rank's box and the regions that move between the two.
struct halo_link {
  neighbor_path path;
  box send_region;             ///< my boundary layer across this face
  box recv_region;             ///< my ghosts across this face
  field_layout remote_layout;  ///< the neighbour's layout (where my send region goes)
  box remote_region;           ///< the neighbour's ghosts facing me
  std::size_t bytes = 0;       ///< bytes of one face

  /// @brief Index of this face in per-face arrays: 2 * axis + side (0..5).
  [[nodiscard]] int face() const noexcept { return 2 * path.axis + static_cast<int>(path.where); }
  /// @brief Index of the neighbour's face towards this rank.
  [[nodiscard]] int remote_face() const noexcept {
    return 2 * path.axis + static_cast<int>(opposite(path.where));
  }
};

/// The cells a rank sends across its face `s` of `axis` (ghosts = false: its boundary layer) or
/// receives there (ghosts = true), in allocated coordinates. Axes before `axis` span the whole
/// allocated extent (their ghosts were filled by the earlier phases and travel on to the
/// diagonal neighbours); later axes span the interior only.
[[nodiscard]] box face_region(const field_layout& layout, int axis, side s, bool ghosts);

/// Checks the invariants every copy of a link relies on (regions inside both arrays, equal
/// extents); throws funnel::invalid_argument naming the link otherwise.
void check_link(const field_layout& layout, const halo_link& link);

/// "(x, y, z)" and "[(lo), (hi))" for messages.
[[nodiscard]] std::string describe(const index3& v);
[[nodiscard]] std::string describe(const box& b);

/// What every transport needs to know about the exchange under way.
struct exchange_step {
  stream_view stream = stream_view::host();  ///< orders this rank's halo work
  void* field = nullptr;                     ///< this rank's field
  const field_layout* layout = nullptr;      ///< its layout
  std::size_t element_size = 0;              ///< 4 or 8
  std::uint64_t count = 0;                   ///< 1 for the first exchange, then 2, 3, ...
  std::size_t field_index = 0;  ///< position of `field` in the bound field cycle (0 if none)

  /// @brief `region` of this rank's field as a strided block.
  [[nodiscard]] strided_block block(const box& region) const {
    return field_block(field, *layout, region, element_size);
  }
  /// @brief Copies `region`'s cells (extents of `region`) from `src` to `dst` on the stream.
  void copy(const strided_block& dst, const strided_block& src, const box& region) const {
    copy_strided(stream, element_size, dst, src, region.extents());
  }
};

/**
 * How ghosts travel over one kind of link. The exchange calls, for every exchange:
 * begin(); then per axis in order: post(axis), complete(axis); then finish(). Work that only
 * touches the field's interior may run between the first axis with remote links being posted
 * and its completion. A transport owns its links and whatever buffers they need.
 */
class link_transport {
 public:
  virtual ~link_transport() = default;
  link_transport() = default;
  link_transport(const link_transport&) = delete;
  link_transport& operator=(const link_transport&) = delete;

  /// @brief The links this transport serves.
  [[nodiscard]] virtual const std::vector<halo_link>& links() const noexcept = 0;
  /// @brief True when the links of `axis` wait on another rank (not a copy within the field).
  [[nodiscard]] virtual bool remote() const noexcept { return true; }
  /// @brief True when the work of post/complete may be captured into a CUDA graph and launched
  /// again: ordered on the GPU, nothing read from the host call (see halo_exchange::replayable).
  [[nodiscard]] virtual bool replayable() const noexcept { return false; }
  /// @brief True when describe_push() can hand this transport's exchanges to an update kernel
  /// (see halo_exchange::push_next).
  [[nodiscard]] virtual bool pushable() const noexcept { return false; }
  /// @brief Adds this transport's faces of exchange `step` to `push` (pushable() only).
  virtual void describe_push(const exchange_step& /*step*/, pushed_exchange& /*push*/) const {}
  /// @brief Once per exchange, before any axis.
  virtual void begin(const exchange_step& /*step*/) {}
  /// @brief Starts this transport's transfers along `axis`.
  virtual void post(const exchange_step& step, int axis) = 0;
  /// @brief Puts this transport's incoming faces of `axis` into the ghosts (stream-ordered).
  virtual void complete(const exchange_step& step, int axis) = 0;
  /// @brief Once per exchange, after the last axis.
  virtual void finish(const exchange_step& /*step*/) {}
  /// @brief Releases what other ranks map (collective part of halo_exchange::close()).
  virtual void release() noexcept {}

  /// @brief True when some link of this transport lies along `axis`.
  [[nodiscard]] bool has_axis(int axis) const noexcept {
    for (const auto& l : links()) {
      if (l.path.axis == axis) return true;
    }
    return false;
  }
};

}  // namespace funnel::detail
