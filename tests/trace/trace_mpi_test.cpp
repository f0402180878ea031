// trace_recorder::write_gathered: one file holding every rank's spans under pid = rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "funnel/trace/trace_recorder.hpp"
#include "json_checker.hpp"

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
    const auto doc = funnel::test::parse_json(text.str());
    std::vector<int> spans_per_rank(static_cast<std::size_t>(size), 0);
    for (const auto& e : doc.at("traceEvents").items) {
      if (e.at("ph").text != "X") continue;
      const int pid = static_cast<int>(e.at("pid").number);
      ASSERT_GE(pid, 0);
      ASSERT_LT(pid, size);
      EXPECT_EQ(static_cast<int>(e.at("args").at("rank").number), pid);
      ++spans_per_rank[static_cast<std::size_t>(pid)];
    }
    for (int r = 0; r < size; ++r) EXPECT_EQ(spans_per_rank[static_cast<std::size_t>(r)], r + 1);
    std::remove(path.c_str());
    rmdir(dir);
  }
}

}  // namespace
