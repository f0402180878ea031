// Writes snapshot series for check_snapshots.py (an independent h5py reader): a 3D series with
// a float64 and a float32 field and a 2D series, every cell a known function of its global
// index, plus expected.json describing what was written. The 3D series is written by two
// writer objects in turn, as by a run and its restart, so the XDMF index must keep the first
// one's snapshots.
//
// usage: mpirun -np 4 io_snapshot_writer <directory> <shared|per_rank>
#include <mpi.h>

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
  for (int part = 0; part < 2; ++part) {
    snapshot_writer writer(MPI_COMM_WORLD, options_for(dir, s, mode));
    for (std::size_t i = part == 0 ? 0 : half; i < (part == 0 ? half : s.steps.size()); ++i) {
      const std::int64_t step = s.steps[i];
      const auto u = make_field<double>(block, seed, step, -9.0e99);
      const auto v = make_field<float>(block, seed + 1, step, -9.0e9F);
      std::vector<field_view> fields{field_view::of("u", u.data())};
      if (!flat) fields.push_back(field_view::of("v", v.data()));
      writer.write(step, 0.125 * static_cast<double>(step), block, fields);
    }
  }
}

std::string json_array(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
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
