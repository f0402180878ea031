// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// snapshot_writer::submit()/wait() under real mpirun (3 ranks): the block is written after
// submit() returns, errors of one rank's block surface on every rank at wait(), a failed snapshot
// leaves no main file and the writer goes on, and a writer destroyed with a block in flight
// neither hangs nor leaves a main file. The data itself is read back by check_snapshots.py.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/io/snapshot_writer.hpp"
#include "io_mpi_support.hpp"
#include "io_test_support.hpp"

namespace funnel::io::test {
namespace {

namespace fs = std::filesystem;

const index3 global{12, 10, 6};
const index3 procs{1, 3, 1};

snapshot_options options_in(const std::string& dir) {
  snapshot_options o;
  o.directory = dir;
  o.series = "s";
  o.problem = "test";
  o.mode = file_mode::file_per_rank;
  return o;
}

// One test's directory, this rank's block and field, and a writer of them.
struct submit_case {
  explicit submit_case(const std::string& tag)
      : dir(MPI_COMM_WORLD, tag),
        block(make_block(global, procs, world_rank(), 1)),
        u(make_field<double>(block, 5, 1, -1.0)),
        fields{field_view::of("u", u.data())},
        writer(MPI_COMM_WORLD, options_in(dir.path())) {}
  shared_directory dir;
  grid_block block;
  std::vector<double> u;
  std::vector<field_view> fields;
  snapshot_writer writer;
};

bool exists_on_root(const std::string& path) {
  int found = world_rank() == 0 && fs::exists(path) ? 1 : 0;
  MPI_Bcast(&found, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return found != 0;
}

TEST(SnapshotSubmit, BlockIsWrittenAfterSubmitReturns) {
  submit_case c("submit");
  EXPECT_TRUE(c.writer.overlaps());  // not ASSERT: a rank leaving early hangs the others
  // The writing thread may read the data only once this thread has returned from submit(): a
  // synchronous submit() would find the promise unset and fail the snapshot.
  std::promise<void> returned;
  std::future<void> submit_returned = returned.get_future();
  c.writer.submit(1, 0.5, c.block, c.fields, [&submit_returned] {
    if (submit_returned.wait_for(std::chrono::minutes(1)) != std::future_status::ready) {
      throw error("the block was read before submit() returned");
    }
  });
  returned.set_value();
  const std::string main_file = c.writer.wait();
  EXPECT_EQ(main_file, c.dir.path() + "/s-00000001.h5");
  EXPECT_TRUE(exists_on_root(main_file));
  EXPECT_TRUE(exists_on_root(c.dir.path() + "/s.xmf"));
  EXPECT_EQ(c.writer.wait(), "") << "nothing is in flight after wait()";
  EXPECT_GT(c.writer.background_seconds(), 0.0) << "the block was written on the thread";
}

TEST(SnapshotSubmit, OneRanksFailureSurfacesOnEveryRankAndTheWriterGoesOn) {
  submit_case c("submit-fail");
  c.writer.submit(2, 1.0, c.block, c.fields, [] {
    if (world_rank() == 1) throw system_error("device copy failed on purpose", 5);
  });
  try {
    c.writer.wait();
    ADD_FAILURE() << "wait() returned after a failed block";
  } catch (const system_error& e) {
    EXPECT_NE(std::string(e.what()).find("device copy failed on purpose"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.errnum(), 5);
  }
  EXPECT_FALSE(exists_on_root(c.dir.path() + "/s-00000002.h5")) << "main file of a failed snapshot";
  // The next snapshot starts clean, and the failure is not reported twice.
  c.writer.submit(3, 1.5, c.block, c.fields);
  EXPECT_EQ(c.writer.wait(), c.dir.path() + "/s-00000003.h5");
  EXPECT_TRUE(exists_on_root(c.dir.path() + "/s-00000003.h5"));
}

TEST(SnapshotSubmit, FailureIsReportedByTheNextSubmit) {
  submit_case c("submit-next");
  c.writer.submit(4, 2.0, c.block, c.fields, [] {
    if (world_rank() == 2) throw invalid_argument("bad block on rank 2");
  });
  EXPECT_THROW(c.writer.submit(5, 2.5, c.block, c.fields), invalid_argument);
  // The failed snapshot was completed by that submit(); the new one was not started.
  EXPECT_EQ(c.writer.wait(), "");
}

TEST(SnapshotSubmit, DestroyedWithABlockInFlightLeavesNoMainFile) {
  shared_directory dir(MPI_COMM_WORLD, "submit-drop");
  const grid_block block = make_block(global, procs, world_rank(), 1);
  const auto u = make_field<double>(block, 5, 1, -1.0);
  {
    snapshot_writer writer(MPI_COMM_WORLD, options_in(dir.path()));
    writer.submit(6, 3.0, block, {field_view::of("u", u.data())});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(exists_on_root(dir.path() + "/s-00000006.h5"));
  EXPECT_TRUE(exists_on_root(dir.path() + "/s-00000006.blocks/rank-00000.h5"))
      << "the block itself is finished before the writer goes";
}

TEST(SnapshotSubmit, OtherFunnelFilesAreWrittenWhileABlockIsInFlight) {
  // The block thread and this thread both call HDF5 (funnel's calls share one lock): another
  // series is written while the block of the first may still be on its way.
  submit_case c("submit-other");
  snapshot_options other = options_in(c.dir.path());
  other.series = "t";
  snapshot_writer second(MPI_COMM_WORLD, other);
  for (std::int64_t step = 1; step <= 4; ++step) {
    c.writer.submit(step, 0.5, c.block, c.fields);
    EXPECT_EQ(second.write(step, 0.5, c.block, c.fields),
              c.dir.path() + "/t-0000000" + std::to_string(step) + ".h5");
  }
  EXPECT_EQ(c.writer.wait(), c.dir.path() + "/s-00000004.h5");
  for (std::int64_t step = 1; step <= 4; ++step) {
    EXPECT_TRUE(exists_on_root(c.dir.path() + "/s-0000000" + std::to_string(step) + ".h5"));
  }
}

TEST(SnapshotSubmit, RequestErrorsAreCheckedBeforeAnythingIsWritten) {
  submit_case c("submit-bad");
  const std::string name = world_rank() == 1 ? "v" : "u";
  EXPECT_THROW(c.writer.submit(7, 3.5, c.block, {field_view::of(name, c.u.data())}),
               invalid_argument);
  EXPECT_FALSE(exists_on_root(c.dir.path() + "/s-00000007.blocks"));
  EXPECT_EQ(c.writer.wait(), "");
}

// A shared file is written in a staging folder and renamed out (array_file.hpp,
// staging_suffix); a writer killed meanwhile leaves the folder behind, and earlier versions left
// a `.space` placeholder. The next writer of the series removes its own series' leftovers, never
// another series' (a series "s" does not own "s-2-...") nor a name that only looks like one.
TEST(SnapshotWriter, RemovesItsSeriesStagingLeftovers) {
  shared_directory dir(MPI_COMM_WORLD, "staging");
  const std::vector<std::string> removed = {".0123456789abcdef.s-00000009.h5.writing",
                                            "s-00000007.h5.space"};
  const std::vector<std::string> kept = {
      ".0123456789abcdef.other-00000001.h5.writing",  // another series
      ".0123456789abcdef.s-2-00000001.h5.writing",    // series "s-2"
      "s-2-00000001.h5.space",                        // series "s-2"
      ".0123456789abcdeg.s-00000001.h5.writing",      // not a token
      "0123456789abcdef.s-00000002.h5.writing"};      // no leading dot
  if (world_rank() == 0) {
    fs::create_directory(dir.path() + "/" + removed[0]);
    std::ofstream(dir.path() + "/" + removed[0] + "/0123456789abcdef.h5") << "partial";
    for (const auto& name : kept) std::ofstream(dir.path() + "/" + name) << "partial";
    std::ofstream(dir.path() + "/" + removed[1]) << "space";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  { snapshot_writer writer(MPI_COMM_WORLD, options_in(dir.path())); }
  for (const auto& name : removed) EXPECT_FALSE(exists_on_root(dir.path() + "/" + name)) << name;
  for (const auto& name : kept) EXPECT_TRUE(exists_on_root(dir.path() + "/" + name)) << name;
}

// Series names whose staging folders fit a file name (255), and none that could own another
// series' files ("s-" and "s--0000005.h5" of a negative step): refused, as negative steps are.
TEST(SnapshotWriter, RefusesSeriesNamesTooLongOrEndingInADashAndNegativeSteps) {
  shared_directory dir(MPI_COMM_WORLD, "series-names");
  for (const std::string& series : {std::string("s-"), std::string(129, 'a'), std::string("")}) {
    auto o = options_in(dir.path());
    o.series = series;
    EXPECT_THROW(snapshot_writer(MPI_COMM_WORLD, o), invalid_argument) << "'" << series << "'";
  }
  auto o = options_in(dir.path());
  o.series = std::string(128, 'a');
  snapshot_writer writer(MPI_COMM_WORLD, o);
  const grid_block block = make_block(global, procs, world_rank(), 1);
  const auto u = make_field<double>(block, 5, 1, -1.0);
  EXPECT_THROW(writer.write(-5, 0.0, block, {field_view::of("u", u.data())}), invalid_argument);
  EXPECT_FALSE(writer.write(5, 0.0, block, {field_view::of("u", u.data())}).empty());
}

}  // namespace
}  // namespace funnel::io::test
