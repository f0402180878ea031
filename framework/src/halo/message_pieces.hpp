// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: how a face sent through MPI is cut into messages. The sender cuts each face into
// pieces of its own chunk size (halo_settings::mpi_chunk) and tells the neighbour that size once,
// when the exchange is set up, so the receiver posts one receive per piece; ranks may differ in it.
#pragma once

#include <algorithm>
#include <cstddef>

namespace funnel::detail {

/// The largest MPI message of a face: MPI counts bytes in an int.
inline constexpr std::size_t max_mpi_message = std::size_t{1} << 30;
/// The most pieces a face is cut into, whatever the chunk: each piece costs a request (and on
/// the staged path an event and two copies), and a neighbour's chunk cannot be refused.
inline constexpr std::size_t max_pieces = 1024;

class message_pieces {
 public:
  message_pieces() = default;
  /// @param bytes the face's bytes; @param chunk the largest piece (0: the whole face in one,
  /// as far as max_mpi_message allows), raised where the face would take more than max_pieces
  message_pieces(std::size_t bytes, std::size_t chunk) noexcept
      : bytes_(bytes),
        piece_(std::min(std::max(chunk == 0 ? bytes : chunk, (bytes + max_pieces - 1) / max_pieces),
                        max_mpi_message)) {
    if (piece_ == 0) piece_ = 1;  // a face of 0 bytes: one empty message
  }

  /// @brief The size of every piece but the last.
  [[nodiscard]] std::size_t piece() const noexcept { return piece_; }
  /// @brief How many messages the face takes (at least one, even for 0 bytes).
  [[nodiscard]] std::size_t count() const noexcept {
    return bytes_ == 0 ? 1 : (bytes_ + piece_ - 1) / piece_;
  }
  /// @brief Where piece `k` starts in the face.
  [[nodiscard]] std::size_t offset(std::size_t k) const noexcept { return k * piece_; }
  /// @brief The bytes of piece `k`.
  [[nodiscard]] std::size_t size(std::size_t k) const noexcept {
    return std::min(piece_, bytes_ - offset(k));
  }

 private:
  std::size_t bytes_ = 0;
  std::size_t piece_ = 1;
};

}  // namespace funnel::detail
