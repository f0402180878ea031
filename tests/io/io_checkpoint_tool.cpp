// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The MPI program kill_checkpoint_writers.py drives.
//
//   io_checkpoint_tool write  DIR MODE SEED [N]  writes checkpoints of steps latest+1, latest+2,
//                                            ... (continuing the series of DIR) until killed, N
//                                            are written, or a write fails (exit 1); prints
//                                            "ready" and "wrote <step>"
//   io_checkpoint_tool snapshots DIR MODE SEED [N]  the same with snapshots (series "s", steps
//                                            1, 2, ...) instead of checkpoints
//   io_checkpoint_tool signal DIR MODE SEED  steps (10 ms each) until SIGTERM/SIGUSR1 reaches any
//                                            rank, then checkpoints that step on all ranks and
//                                            exits with termination_request::requeue_exit_code
//   io_checkpoint_tool verify DIR MODE SEED  opens DIR's latest checkpoint (all checksums), reads
//                                            it with this run's decomposition, compares bitwise;
//                                            prints "step <n> ok"; exits 3 when there is none
//
// MODE is shared or per_rank. The fields of step s are value_at(..., SEED, s).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "funnel/io/checkpoint_reader.hpp"
#include "funnel/io/checkpoint_writer.hpp"
#include "funnel/io/snapshot_writer.hpp"
#include "funnel/io/termination_request.hpp"
#include "io_test_support.hpp"

using namespace funnel::io;
using namespace funnel::io::test;
using funnel::index3;

namespace {

constexpr int no_checkpoint = 3;
const index3 global{40, 36, 30};

index3 procs_for(int size) { return {1, size, 1}; }

int run_writer(const std::string& dir, file_mode mode, std::int64_t seed, int rank, int size,
               int count) {
  checkpoint_options opt;
  std::int64_t step = 0;
  {
    int found = 0;
    if (rank == 0) found = checkpoint_reader::latest(dir) ? 1 : 0;
    MPI_Bcast(&found, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (found) {
      const checkpoint_reader reader(MPI_COMM_WORLD, dir);
      step = reader.step();
      opt.run_id = reader.run_id();  // continue the series in its directory
    } else {
      // No checkpoint was ever published: a victim killed after its first checkpoint was in
      // place but before `latest` named it left one the writer would refuse as another run's.
      // Nothing published can be lost by starting over.
      opt.start_over = true;
    }
  }
  opt.directory = dir;
  opt.keep_last = 2;
  opt.problem = "kill-test";
  opt.mode = mode;
  checkpoint_writer writer(MPI_COMM_WORLD, opt);
  if (rank == 0) std::printf("ready\n"), std::fflush(stdout);
  const grid_block block = make_block(global, procs_for(size), rank, 1);
  for (int i = 0; i < count; ++i) {
    ++step;
    const auto u = make_field<double>(block, seed, step, 0.0);
    const auto v = make_field<float>(block, seed + 1, step, 0.0F);
    writer.write(step, static_cast<double>(step), block,
                 {field_view::of("u", u.data()), field_view::of("v", v.data())});
    if (rank == 0) std::printf("wrote %lld\n", static_cast<long long>(step)), std::fflush(stdout);
  }
  return 0;
}

int run_snapshots(const std::string& dir, file_mode mode, std::int64_t seed, int rank, int size,
                  int count) {
  snapshot_options opt;
  opt.directory = dir;
  opt.series = "s";
  opt.problem = "kill-test";
  opt.mode = mode;
  snapshot_writer writer(MPI_COMM_WORLD, opt);
  if (rank == 0) std::printf("ready\n"), std::fflush(stdout);
  const grid_block block = make_block(global, procs_for(size), rank, 1);
  for (std::int64_t step = 1; step <= count; ++step) {
    const auto u = make_field<double>(block, seed, step, 0.0);
    writer.write(step, static_cast<double>(step), block, {field_view::of("u", u.data())});
    if (rank == 0) std::printf("wrote %lld\n", static_cast<long long>(step)), std::fflush(stdout);
  }
  return 0;
}

int run_until_signal(const std::string& dir, file_mode mode, std::int64_t seed, int rank,
                     int size) {
  termination_request request;
  checkpoint_options opt;
  opt.directory = dir;
  opt.problem = "kill-test";
  opt.mode = mode;
  checkpoint_writer writer(MPI_COMM_WORLD, opt);
  const grid_block block = make_block(global, procs_for(size), rank, 1);
  if (rank == 0) std::printf("ready\n"), std::fflush(stdout);
  for (std::int64_t step = 1; step <= 3000; ++step) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // one "time step"
    if (!request.agreed(MPI_COMM_WORLD)) continue;
    const auto u = make_field<double>(block, seed, step, 0.0);
    const auto v = make_field<float>(block, seed + 1, step, 0.0F);
    writer.write(step, static_cast<double>(step), block,
                 {field_view::of("u", u.data()), field_view::of("v", v.data())});
    if (rank == 0) {
      std::printf("checkpointed %lld\n", static_cast<long long>(step));
      std::fflush(stdout);
    }
    return termination_request::requeue_exit_code;
  }
  return 1;  // no signal arrived
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

int run_verifier(const std::string& dir, std::int64_t seed, int rank, int size) {
  int found = 0;
  if (rank == 0) found = checkpoint_reader::latest(dir) ? 1 : 0;
  MPI_Bcast(&found, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!found) return no_checkpoint;
  checkpoint_reader reader(MPI_COMM_WORLD, dir);
  reader.require("kill-test", global, {"u"}, dtype::float64);
  reader.require("kill-test", global, {"v"}, dtype::float32);
  const grid_block block = make_block(global, procs_for(size), rank, 2);
  const std::int64_t step = reader.step();
  std::vector<double> u(static_cast<std::size_t>(block.layout.allocated_cells()), -1.0);
  std::vector<float> v(u.size(), -1.0F);
  reader.read("u", block, u.data());
  reader.read("v", block, v.data());
  int ok = same_bits(u, make_field<double>(block, seed, step, -1.0)) &&
           same_bits(v, make_field<float>(block, seed + 1, step, -1.0F));
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) std::printf("step %lld %s\n", static_cast<long long>(step), ok ? "ok" : "DIFFERS");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 1;
  try {
    if (argc != 5 && argc != 6) {
      throw std::runtime_error(
          "usage: io_checkpoint_tool write|snapshots|signal|verify DIR MODE SEED [N]");
    }
    const std::string command = argv[1];
    const file_mode mode =
        std::string(argv[3]) == "shared" ? file_mode::shared_file : file_mode::file_per_rank;
    const std::int64_t seed = std::stoll(argv[4]);
    const int count = argc == 6 ? std::stoi(argv[5]) : 100000;
    if (command == "write") {
      status = run_writer(argv[2], mode, seed, rank, size, count);
    } else if (command == "snapshots") {
      status = run_snapshots(argv[2], mode, seed, rank, size, count);
    } else if (command == "signal") {
      status = run_until_signal(argv[2], mode, seed, rank, size);
    } else {
      status = run_verifier(argv[2], seed, rank, size);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    status = 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
