// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Writes snapshot series for check_snapshots.py (an independent h5py reader): a 3D series with
// a float64 and a float32 field and a 2D series, every cell a known function of its global
// index, plus expected.json describing what was written. Each series is written by two writer
// objects in turn, as by a run and its restart, so the XDMF index must keep the first one's
// snapshots. The first writer uses write(); the second submit(), whose `ready` callback fills
// the arrays on the writing thread (as a device-to-host copy would land), then wait().
//
// usage: mpirun -np 4 io_snapshot_writer <directory> <shared|per_rank>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

#include "funnel/io/snapshot_writer.hpp"
#include "io_test_support.hpp"

using namespace funnel::io;
using namespace funnel::io::test;
using funnel::index3;

namespace {

struct series_spec {
  const char* name;
  index3 global;
  index3 procs;
  std::vector<std::int64_t> steps;
};

snapshot_options options_for(const std::string& dir, const series_spec& s, file_mode mode) {
  snapshot_options opt;
  opt.directory = dir;
  opt.series = s.name;
  opt.problem = std::string("test-") + s.name;
  opt.spacing = {0.5, 0.25, 2.0};
  opt.origin = {-1.0, 0.0, 3.0};
  opt.mode = mode;
  return opt;
}

void write_series(const std::string& dir, const series_spec& s, file_mode mode, std::int64_t seed,
                  int rank) {
  const grid_block block = make_block(s.global, s.procs, rank, 1 + rank % 2);
  const bool flat = s.global[2] == 1;
  // Half the steps by one writer, the rest by a second (a restarted run).
  const std::size_t half = s.steps.size() / 2;
  {
    snapshot_writer writer(MPI_COMM_WORLD, options_for(dir, s, mode));
    for (std::size_t i = 0; i < half; ++i) {
      const std::int64_t step = s.steps[i];
      const auto u = make_field<double>(block, seed, step, -9.0e99);
      const auto v = make_field<float>(block, seed + 1, step, -9.0e9F);
      std::vector<field_view> fields{field_view::of("u", u.data())};
      if (!flat) fields.push_back(field_view::of("v", v.data()));
      writer.write(step, 0.125 * static_cast<double>(step), block, fields);
    }
  }
  // One pair of arrays per step: a submitted snapshot's arrays stay untouched until the next
  // submit() returns, and outlive the writer (whose destructor waits for a block in flight). They
  // start poisoned everywhere; `ready` fills them.
  const auto cells = static_cast<std::size_t>(block.layout.allocated_cells());
  std::vector<std::vector<double>> us(s.steps.size(), std::vector<double>(cells, -7.0e99));
  std::vector<std::vector<float>> vs(s.steps.size(), std::vector<float>(cells, -7.0e9F));
  snapshot_writer writer(MPI_COMM_WORLD, options_for(dir, s, mode));
  if (writer.overlaps() != (mode == file_mode::file_per_rank)) {
    throw std::runtime_error("overlaps() is " + std::to_string(writer.overlaps()) +
                             " under MPI_THREAD_FUNNELED in this file mode");
  }
  for (std::size_t i = half; i < s.steps.size(); ++i) {
    const std::int64_t step = s.steps[i];
    std::vector<field_view> fields{field_view::of("u", us[i].data())};
    if (!flat) fields.push_back(field_view::of("v", vs[i].data()));
    writer.submit(step, 0.125 * static_cast<double>(step), block, fields,
                  [&block, &u = us[i], &v = vs[i], seed, step] {
                    // Into the arrays the views point at (assignment could move a new one in).
                    const auto du = make_field<double>(block, seed, step, -9.0e99);
                    const auto dv = make_field<float>(block, seed + 1, step, -9.0e9F);
                    std::copy(du.begin(), du.end(), u.begin());
                    std::copy(dv.begin(), dv.end(), v.begin());
                  });
  }
  writer.wait();
}

std::string json_array(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    if (provided < MPI_THREAD_FUNNELED)
      throw std::runtime_error("MPI gives no MPI_THREAD_FUNNELED");
    if (argc != 3 || size != 4)
      throw std::runtime_error("usage: mpirun -np 4 io_snapshot_writer DIR shared|per_rank");
    const std::string dir = argv[1];
    const file_mode mode =
        std::string(argv[2]) == "shared" ? file_mode::shared_file : file_mode::file_per_rank;
    const std::int64_t seed = shared_seed(MPI_COMM_WORLD);
    const std::vector<series_spec> specs{{"flow", {19, 13, 7}, {2, 2, 1}, {0, 5, 10, 15}},
                                         {"plane", {29, 11, 1}, {1, 4, 1}, {0, 3}}};
    for (const auto& s : specs) write_series(dir, s, mode, seed, rank);
    if (rank == 0) {
      std::ofstream out(dir + "/expected.json");
      out << "{\"seed\": " << seed << ", \"series\": [";
      for (std::size_t i = 0; i < specs.size(); ++i) {
        const auto& s = specs[i];
        out << (i ? ", " : "") << "{\"name\": \"" << s.name
            << "\", \"global\": " << json_array({s.global[0], s.global[1], s.global[2]})
            << ", \"steps\": " << json_array(s.steps) << "}";
      }
      out << "]}\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    status = 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
