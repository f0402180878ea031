// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Checkpoint/restart under real mpirun (3 ranks): 2 ranks write, 3 ranks with another
// decomposition read back bitwise; keep_last pruning; the directory lock between runs; the
// collective termination flag.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <limits>

#include "funnel/error.hpp"
#include "funnel/io/atomic_file.hpp"
#include "funnel/io/checkpoint_reader.hpp"
#include "funnel/io/checkpoint_writer.hpp"
#include "funnel/io/regular_file.hpp"
#include "funnel/io/termination_request.hpp"
#include "io_mpi_support.hpp"
#include "io_test_support.hpp"

namespace fs = std::filesystem;
using namespace funnel::io;
using namespace funnel::io::test;
using funnel::box;
using funnel::index3;

namespace {

constexpr double poison_double = -7.25e300;
constexpr float poison_float = -3.5e30F;

template <class T>
void expect_bitwise_equal(const std::vector<T>& got, const std::vector<T>& want) {
  ASSERT_EQ(got.size(), want.size());
  std::size_t first_bad = got.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      first_bad = i;
      break;
    }
  }
  EXPECT_EQ(first_bad, got.size())
      << "rank " << world_rank() << ": first differing element " << first_bad << ": "
      << got[first_bad] << " vs " << want[first_bad];
}

// Writes a checkpoint of fields u (double) and v (float) with the ranks of `writers` (those
// not in it pass MPI_COMM_NULL and do nothing), continuing the series `run_id` (empty: a new
// run, which needs an empty directory).
void write_checkpoint(MPI_Comm writers, const std::string& dir, file_mode mode,
                      const index3& global, const index3& procs, std::int64_t seed,
                      std::int64_t step, const std::string& run_id = {}, int row_align = 1) {
  if (writers == MPI_COMM_NULL) return;
  int rank = 0;
  MPI_Comm_rank(writers, &rank);
  checkpoint_options opt;
  opt.directory = dir;
  opt.problem = "heat";
  opt.configuration = R"({"seed": )" + std::to_string(seed) + "}";
  opt.spacing = {0.5, 0.25, 0.125};
  opt.mode = mode;
  opt.run_id = run_id;
  checkpoint_writer writer(writers, opt);
  const grid_block block = make_block(global, procs, rank, 1, row_align);
  const auto u = make_field<double>(block, seed, step, poison_double);
  const auto v = make_field<float>(block, seed + 1, step, poison_float);
  const std::string path =
      writer.write(step, 0.01 * static_cast<double>(step), block,
                   {field_view::of("u", u.data()), field_view::of("v", v.data())});
  EXPECT_EQ(fs::path(path).filename().string(),
            "ckpt-" + std::string(8 - std::to_string(step).size(), '0') + std::to_string(step));
}

void expect_restart_equal(const std::string& dir, const index3& global, const index3& procs,
                          int halo, std::int64_t seed, std::int64_t step, int row_align = 1) {
  checkpoint_reader reader(MPI_COMM_WORLD, dir);
  EXPECT_EQ(reader.step(), step);
  EXPECT_EQ(reader.time(), 0.01 * static_cast<double>(step));
  EXPECT_EQ(reader.problem(), "heat");
  EXPECT_EQ(reader.configuration(), R"({"seed": )" + std::to_string(seed) + "}");
  EXPECT_EQ(reader.global_cells(), global);
  EXPECT_EQ(reader.spacing(), (std::array<double, 3>{0.5, 0.25, 0.125}));
  EXPECT_EQ(reader.field_names(), (std::vector<std::string>{"u", "v"}));
  EXPECT_EQ(reader.field_type("v"), dtype::float32);
  EXPECT_NO_THROW(reader.require("heat", global, {"u"}, dtype::float64));
  const grid_block block = make_block(global, procs, world_rank(), halo, row_align);
  std::vector<double> u(static_cast<std::size_t>(block.layout.allocated_cells()), poison_double);
  std::vector<float> v(u.size(), poison_float);
  reader.read("u", block, u.data());
  reader.read("v", block, v.data());
  expect_bitwise_equal(u, make_field<double>(block, seed, step, poison_double));
  expect_bitwise_equal(v, make_field<float>(block, seed + 1, step, poison_float));
}

MPI_Comm first_ranks(int count) {
  MPI_Comm comm = MPI_COMM_NULL;
  const int rank = world_rank();
  MPI_Comm_split(MPI_COMM_WORLD, rank < count ? 0 : MPI_UNDEFINED, rank, &comm);
  return comm;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

class Checkpoint : public ::testing::TestWithParam<file_mode> {
 protected:
  void SetUp() override { ASSERT_EQ(world_size(), 3) << "this test runs on 3 ranks"; }
};

TEST_P(Checkpoint, TwoWritersThreeReadersBitwise3D) {
  shared_directory dir(MPI_COMM_WORLD, "ckpt3d");
  const std::int64_t seed = shared_seed(MPI_COMM_WORLD);
  const index3 global{23, 17, 9};
  MPI_Comm two = first_ranks(2);
  write_checkpoint(two, dir.path(), GetParam(), global, {2, 1, 1}, seed, 40);
  if (two != MPI_COMM_NULL) MPI_Comm_free(&two);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_restart_equal(dir.path(), global, {1, 3, 1}, 2, seed, 40);
}

TEST_P(Checkpoint, TwoWritersThreeReadersBitwise2D) {
  shared_directory dir(MPI_COMM_WORLD, "ckpt2d");
  const std::int64_t seed = shared_seed(MPI_COMM_WORLD);
  const index3 global{31, 19, 1};
  MPI_Comm two = first_ranks(2);
  write_checkpoint(two, dir.path(), GetParam(), global, {1, 2, 1}, seed, 7);
  if (two != MPI_COMM_NULL) MPI_Comm_free(&two);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_restart_equal(dir.path(), global, {3, 1, 1}, 1, seed, 7);
}

// Files hold the interior only: a checkpoint of padded rows (funnel-stencil --row-align 16)
// restarts into unpadded rows bitwise, and the other way round.
TEST_P(Checkpoint, RestartsAcrossRowPadding) {
  const index3 global{23, 17, 9};
  for (const int written : {4, 1}) {
    const int read = written == 4 ? 1 : 8;
    SCOPED_TRACE("rows written padded to " + std::to_string(written) + ", read padded to " +
                 std::to_string(read));
    shared_directory dir(MPI_COMM_WORLD, "ckpt-rows-" + std::to_string(written));
    const std::int64_t seed = shared_seed(MPI_COMM_WORLD);
    MPI_Comm two = first_ranks(2);
    write_checkpoint(two, dir.path(), GetParam(), global, {2, 1, 1}, seed, 12, {}, written);
    if (two != MPI_COMM_NULL) MPI_Comm_free(&two);
    MPI_Barrier(MPI_COMM_WORLD);
    expect_restart_equal(dir.path(), global, {1, 3, 1}, 2, seed, 12, read);
  }
}

TEST_P(Checkpoint, KeepsLastKAndLatestNamesNewest) {
  shared_directory dir(MPI_COMM_WORLD, "keep");
  const std::int64_t seed = shared_seed(MPI_COMM_WORLD);
  const index3 global{12, 10, 8};
  for (std::int64_t step : {10, 20, 30, 40}) {
    write_checkpoint(MPI_COMM_WORLD, dir.path(), GetParam(), global, {1, 1, 3}, seed, step,
                     "keep-test");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"ckpt-00000030", "ckpt-00000040", "latest"}));
  EXPECT_EQ(funnel::io::read_regular_file(dir.path() + "/latest", 4096), "ckpt-00000040\n");
  EXPECT_EQ(checkpoint_reader::latest(dir.path()).value(), dir.path() + "/ckpt-00000040");
  expect_restart_equal(dir.path(), global, {3, 1, 1}, 1, seed, 40);
  // The same step written again (a restarted run) replaces the old checkpoint.
  write_checkpoint(MPI_COMM_WORLD, dir.path(), GetParam(), global, {3, 1, 1}, seed + 5, 40,
                   checkpoint_reader(MPI_COMM_WORLD, dir.path()).run_id());
  expect_restart_equal(dir.path(), global, {1, 1, 3}, 1, seed + 5, 40);
  // A specific older checkpoint can still be named directly.
  checkpoint_reader older(MPI_COMM_WORLD, dir.path() + "/ckpt-00000030");
  EXPECT_EQ(older.step(), 30);
}

TEST_P(Checkpoint, SecondWriterOfTheDirectoryIsRefused) {
  shared_directory dir(MPI_COMM_WORLD, "lock");
  checkpoint_options opt;
  opt.directory = dir.path();
  opt.mode = GetParam();
  checkpoint_writer first(MPI_COMM_WORLD, opt);
  try {
    checkpoint_writer second(MPI_COMM_WORLD, opt);
    FAIL() << "two writers of one checkpoint directory must be refused";
  } catch (const funnel::error& e) {
    EXPECT_NE(std::string(e.what()).find("in use by another run"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, Checkpoint, ::testing::ValuesIn(supported_modes()),
                         [](const auto& param_info) { return mode_name(param_info.param); });

TEST(TerminationRequestMpi, OneRankSignalledStopsAll) {
  termination_request request;
  request.reset();
  EXPECT_FALSE(request.agreed(MPI_COMM_WORLD));
  if (world_rank() == 1) std::raise(SIGUSR1);
  EXPECT_EQ(request.requested(), world_rank() == 1);
  EXPECT_TRUE(request.agreed(MPI_COMM_WORLD));
  request.reset();
}

}  // namespace
