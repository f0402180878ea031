// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: MPI tags of the halo exchange's messages on its private communicator.
#pragma once

#include "funnel/decomposition/side.hpp"

namespace funnel::detail {

// Tag = base + 2 * axis + the side of the *sender's* face the message crosses, so the two faces
// towards one neighbour (a periodic axis of two ranks) never mix.
constexpr int tag_data = 0;      ///< mpi: a packed face
constexpr int tag_free = 8;      ///< ipc handshake: "my ghosts are free" + my current field
constexpr int tag_written = 16;  ///< ipc handshake: "I wrote your ghosts"
constexpr int tag_setup = 24;    ///< ipc: one-time setup messages
constexpr int tag_pieces = 32;   ///< mpi: the sender's piece size, once at setup

[[nodiscard]] constexpr int halo_tag(int base, int axis, side sender_face) noexcept {
  return base + 2 * axis + static_cast<int>(sender_face);
}

}  // namespace funnel::detail
