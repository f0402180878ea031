// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// trace_recorder::write_gathered: one file holding every rank's spans under pid = rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "funnel/error.hpp"
#include "funnel/trace/trace_recorder.hpp"

namespace {

TEST(TraceRecorderMpi, GathersAllRanksIntoOneFile) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char dir[] = "/tmp/funnel-trace-mpi-XXXXXX";
  if (rank == 0) {
    ASSERT_NE(mkdtemp(dir), nullptr);
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  const std::string path = std::string{dir} + "/trace.json";

  funnel::trace_recorder rec("rank " + std::to_string(rank), rank);
  const int t = rec.track("kernel");
  for (int i = 0; i <= rank; ++i) rec.add_span(t, "step", 10.0 * i, 5.0, {{"rank", rank}});
  rec.write_gathered(MPI_COMM_WORLD, path);

  if (rank == 0) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const auto doc = nlohmann::json::parse(text.str());
    std::vector<int> spans_per_rank(static_cast<std::size_t>(size), 0);
    for (const auto& e : doc.at("traceEvents")) {
      if (e.at("ph") != "X") continue;
      const int pid = e.at("pid").get<int>();
      ASSERT_GE(pid, 0);
      ASSERT_LT(pid, size);
      EXPECT_EQ(e.at("args").at("rank").get<int>(), pid);
      ++spans_per_rank[static_cast<std::size_t>(pid)];
    }
    for (int r = 0; r < size; ++r) EXPECT_EQ(spans_per_rank[static_cast<std::size_t>(r)], r + 1);
    std::remove(path.c_str());
    rmdir(dir);
  }
}

// A file rank 0 cannot open fails the call on every rank (the others do not wait in the gather
// for a rank that has thrown), with rank 0's reason.
TEST(TraceRecorderMpi, AnUnwritablePathFailsOnEveryRank) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  funnel::trace_recorder rec("rank " + std::to_string(rank), rank);
  rec.add_span(rec.track("kernel"), "step", 0.0, 1.0);
  try {
    rec.write_gathered(MPI_COMM_WORLD, "/nonexistent-funnel-dir/trace.json");
    ADD_FAILURE() << "rank " << rank << ": no error";
  } catch (const funnel::system_error& e) {
    EXPECT_EQ(e.errnum(), ENOENT);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-funnel-dir/trace.json"), std::string::npos);
  }
  // Every rank is still in step: a collective after the failure completes.
  int ranks = 0;
  MPI_Allreduce(&rank, &ranks, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_GE(ranks, rank);
}

}  // namespace
