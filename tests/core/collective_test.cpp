// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The shared collectives on 3 ranks: every rank gets every rank's string whole, whatever its
// length; a problem one rank sees becomes an error on every rank.
#include "collective.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "funnel/error.hpp"

namespace {

using funnel::detail::allgather_strings;
using funnel::detail::on_all_or_none;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

TEST(Collective, AllgatherStringsKeepsEveryLength) {
  // Rank 1's string is longer than any fixed width the callers used before (64, 96).
  const std::vector<std::string> want = {"", std::string(200, 'x') + "-1", "GPU-2"};
  const auto got =
      allgather_strings(MPI_COMM_WORLD, want[static_cast<std::size_t>(world_rank())], "test");
  EXPECT_EQ(got, want);
}

TEST(Collective, OneRanksProblemIsAnErrorOnEveryRank) {
  const int rank = world_rank();
  try {
    on_all_or_none(MPI_COMM_WORLD, "test step", [&] {
      if (rank == 2) throw funnel::invalid_argument("rank 2's own problem");
    });
    ADD_FAILURE() << "no error on rank " << rank;
  } catch (const funnel::invalid_argument& e) {
    EXPECT_EQ(e.message(), rank == 2 ? "rank 2's own problem"
                                     : "test step: failed on another rank (see its message)");
  }
  EXPECT_NO_THROW(on_all_or_none(MPI_COMM_WORLD, "test step", [] {}));
}

}  // namespace
