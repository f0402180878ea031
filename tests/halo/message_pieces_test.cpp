// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// How a face sent through MPI is cut into messages: the pieces cover the face exactly once, in
// order, none larger than the chunk or than an int counts.
#include "message_pieces.hpp"

#include <gtest/gtest.h>

#include <cstddef>

namespace {

using funnel::detail::max_mpi_message;
using funnel::detail::message_pieces;

// The pieces tile [0, bytes) in order and none is empty unless the face is.
void expect_tiles(const message_pieces& p, std::size_t bytes) {
  std::size_t next = 0;
  for (std::size_t k = 0; k < p.count(); ++k) {
    EXPECT_EQ(p.offset(k), next) << "piece " << k;
    EXPECT_LE(p.size(k), p.piece()) << "piece " << k;
    if (bytes > 0) {
      EXPECT_GT(p.size(k), 0U) << "piece " << k;
    }
    next += p.size(k);
  }
  EXPECT_EQ(next, bytes);
}

TEST(MessagePieces, ChunksCutTheFaceInOrder) {
  const message_pieces p(10, 4);
  EXPECT_EQ(p.count(), 3U);
  EXPECT_EQ(p.size(0), 4U);
  EXPECT_EQ(p.size(2), 2U);
  expect_tiles(p, 10);
  const message_pieces exact(12, 4);
  EXPECT_EQ(exact.count(), 3U);
  EXPECT_EQ(exact.size(2), 4U);
  expect_tiles(exact, 12);
  for (std::size_t bytes : {1, 7, 64, 1000, 4097}) {
    for (std::size_t chunk : {1, 3, 7, 64, 4096, 5000})
      expect_tiles(message_pieces(bytes, chunk), bytes);
  }
}

TEST(MessagePieces, ZeroChunkSendsTheWholeFace) {
  const message_pieces p(16 << 20, 0);
  EXPECT_EQ(p.count(), 1U);
  EXPECT_EQ(p.size(0), std::size_t{16} << 20);
  const message_pieces larger(100, 4096);
  EXPECT_EQ(larger.count(), 1U);
  EXPECT_EQ(larger.size(0), 100U);
}

TEST(MessagePieces, NoMessageExceedsWhatAnIntCounts) {
  const std::size_t bytes = 5 * max_mpi_message / 2;
  for (std::size_t chunk : {std::size_t{0}, 4 * max_mpi_message}) {
    const message_pieces p(bytes, chunk);
    EXPECT_EQ(p.piece(), max_mpi_message);
    EXPECT_EQ(p.count(), 3U);
    expect_tiles(p, bytes);
  }
}

TEST(MessagePieces, NoFaceTakesMoreThanMaxPieces) {
  using funnel::detail::max_pieces;
  for (std::size_t bytes : {max_pieces, max_pieces + 1, std::size_t{64} << 20}) {
    const message_pieces p(bytes, 1);
    EXPECT_LE(p.count(), max_pieces) << bytes;
    expect_tiles(p, bytes);
  }
  EXPECT_EQ(message_pieces(4096, 7).piece(), 7U);  // small faces keep small pieces
}

TEST(MessagePieces, EmptyFaceIsOneEmptyMessage) {
  for (std::size_t chunk : {0, 1, 64}) {
    const message_pieces p(0, chunk);
    EXPECT_EQ(p.count(), 1U);
    EXPECT_EQ(p.size(0), 0U);
  }
}

}  // namespace
