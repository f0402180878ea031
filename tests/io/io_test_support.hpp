// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the io tests: a Cartesian split of a grid, a field whose every cell is a
// known function of its global index (the python checker computes the same, bit for bit), and
// fresh random seeds.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <random>
#include <vector>

#include "funnel/io/grid_block.hpp"

namespace funnel::io::test {

/// Rank `rank`'s box of `global` split over procs[0] x procs[1] x procs[2] ranks (x fastest);
/// uneven splits give the first ranks one more cell.
inline box split(const index3& global, const index3& procs, int rank) {
  const index3 coord{rank % procs[0], (rank / procs[0]) % procs[1], rank / (procs[0] * procs[1])};
  box b;
  for (int a = 0; a < 3; ++a) {
    const std::int64_t base = global[a] / procs[a];
    const std::int64_t extra = global[a] % procs[a];
    b.lo[a] = coord[a] * base + std::min(coord[a], extra);
    b.hi[a] = b.lo[a] + base + (coord[a] < extra ? 1 : 0);
  }
  return b;
}

/// The block of `rank` with a halo of `halo` cells, its rows padded for `row_align` cells.
inline grid_block make_block(const index3& global, const index3& procs, int rank, int halo,
                             int row_align = 1) {
  grid_block g;
  g.global_cells = global;
  g.local_box = split(global, procs, rank);
  g.layout.interior = g.local_box.extents();
  g.layout.halo = halo;
  g.layout.row_align = row_align;
  return g;
}

/// The test field at global cell (i, j, k): integer hashing plus one division, so C++ and
/// numpy compute identical doubles.
inline double value_at(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t seed,
                       std::int64_t step) {
  const std::int64_t h = ((i * 73856093) ^ (j * 19349663) ^ (k * 83492791) ^ seed) % 1000003;
  return static_cast<double>(h) / 7.0 + static_cast<double>(step);
}

/// A rank's array of the test field; halo cells hold `poison`.
template <class T>
std::vector<T> make_field(const grid_block& g, std::int64_t seed, std::int64_t step, T poison) {
  std::vector<T> data(static_cast<std::size_t>(g.layout.allocated_cells()), poison);
  const box inner = g.layout.interior_box();
  for (std::int64_t k = inner.lo[2]; k < inner.hi[2]; ++k) {
    for (std::int64_t j = inner.lo[1]; j < inner.hi[1]; ++j) {
      for (std::int64_t i = inner.lo[0]; i < inner.hi[0]; ++i) {
        data[static_cast<std::size_t>(g.layout.index(i, j, k))] = static_cast<T>(
            value_at(g.local_box.lo[0] + i - inner.lo[0], g.local_box.lo[1] + j - inner.lo[1],
                     g.local_box.lo[2] + k - inner.lo[2], seed, step));
      }
    }
  }
  return data;
}

/// A fresh random seed, the same on every rank of `comm`.
inline std::int64_t shared_seed(MPI_Comm comm) {
  long long seed = static_cast<long long>(std::random_device{}() % 1000000007U);
  MPI_Bcast(&seed, 1, MPI_LONG_LONG, 0, comm);
  return seed;
}

}  // namespace funnel::io::test
