// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel-bench pool: a step loop that allocates and frees its halo and staging buffers every
// step, from funnel's pool vs preallocated once vs the raw allocator (cudaMalloc/cudaFree).
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include "benchmarks.hpp"
#include "device_support.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "rank_launch.hpp"
#include "timing.hpp"

namespace funnel::bench {
namespace {

constexpr int halo_faces = 6;       // one send and one receive buffer per face
constexpr int staging_buffers = 2;  // double-buffered staging of a slab
constexpr int staging_planes = 8;

/// The per-step buffers of a rank: face-sized halo buffers and slab-sized staging buffers.
std::vector<std::size_t> step_buffer_sizes(std::int64_t n) {
  const auto face = static_cast<std::size_t>(n * n) * sizeof(double);
  const auto plane = static_cast<std::size_t>((n + 2) * (n + 2)) * sizeof(double);
  std::vector<std::size_t> sizes(2 * halo_faces, face);
  sizes.insert(sizes.end(), staging_buffers, staging_planes * plane);
  return sizes;
}

/// The fixed part of a step: one heat3d step of the resident field, then the halo buffers
/// filled from it and sent to their receive buffers, and the staging slabs filled.
class step_work {
 public:
  step_work(stream_view stream, memory_pool& fields, std::int64_t n)
      : stream_(stream), fields_(fields), layout_{{n, n, n}, 1} {
    bytes_ = static_cast<std::size_t>(layout_.allocated_cells()) * sizeof(double);
    a_ = static_cast<double*>(fields_.allocate(stream_, bytes_));
    b_ = static_cast<double*>(fields_.allocate(stream_, bytes_));
    kernels::heat3d_initialize(stream_, layout_, layout_.interior, {0, 0, 0}, a_);
    kernels::heat3d_initialize(stream_, layout_, layout_.interior, {0, 0, 0}, b_);
    stream_.synchronize();
  }
  ~step_work() {
    fields_.deallocate(stream_, a_, bytes_);
    fields_.deallocate(stream_, b_, bytes_);
  }
  step_work(const step_work&) = delete;
  step_work& operator=(const step_work&) = delete;

  void operator()(const std::vector<void*>& buffers, const std::vector<std::size_t>& sizes) {
    kernels::heat3d_step(stream_, kernels::default_implementation(stream_), layout_, a_, b_,
                         layout_.interior_box(), kernels::heat3d_params<double>{0.1});
    std::swap(a_, b_);
    for (int f = 0; f < halo_faces; ++f) {
      const auto send = static_cast<std::size_t>(2 * f);
      copy_async(stream_, buffers[send], a_ + f * layout_.interior[0], sizes[send]);
      copy_async(stream_, buffers[send + 1], buffers[send], sizes[send]);
    }
    for (std::size_t s = 2 * halo_faces; s < buffers.size(); ++s) {
      copy_async(stream_, buffers[s], a_, sizes[s]);
    }
  }

 private:
  stream_view stream_;
  memory_pool& fields_;
  field_layout layout_;
  std::size_t bytes_ = 0;
  double* a_ = nullptr;
  double* b_ = nullptr;
};

/// The figures of one rank's step loop in each mode.
struct pool_measurement {
  std::vector<std::size_t> sizes;  // the per-step buffers
  std::size_t footprint = 0;       // their sum: what preallocating them once takes
  samples preallocated;            // step loop, buffers allocated once
  samples pooled;                  // step loop, funnel pool per step
  samples raw;                     // step loop, raw allocator per step
  samples pool_pairs;              // allocate + free pairs alone, funnel pool
  samples raw_pairs;               // allocate + free pairs alone, raw allocator
  long long pairs = 0;             // pairs per repetition of the *_pairs loops
  pool_statistics stats{};         // the per-step pool's statistics afterwards
};

pool_measurement measure_pool(backend_kind backend, std::int64_t n, long long steps, int warmup,
                              int repeat) {
  pool_measurement m;
  m.sizes = step_buffer_sizes(n);
  const std::vector<std::size_t>& sizes = m.sizes;
  m.footprint = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});

  stream s(backend);
  memory_pool_options field_options;
  field_options.name = "bench-fields";
  memory_pool fields(backend, field_options);
  step_work work(s, fields, n);
  std::vector<void*> buffers(sizes.size(), nullptr);

  // (1) preallocated once, (2) funnel's pool per step, (3) the raw allocator per step.
  memory_pool_options prealloc_options;
  prealloc_options.name = "bench-prealloc";
  memory_pool prealloc_pool(backend, prealloc_options);
  std::vector<void*> prealloc(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) prealloc[i] = prealloc_pool.allocate(s, sizes[i]);

  memory_pool_options step_options;
  step_options.name = "bench-per-step";
  memory_pool step_pool(backend, step_options);

  const auto preallocated = [&] {
    for (long long i = 0; i < steps; ++i) work(prealloc, sizes);
  };
  const auto pooled = [&] {
    for (long long i = 0; i < steps; ++i) {
      for (std::size_t b = 0; b < sizes.size(); ++b) buffers[b] = step_pool.allocate(s, sizes[b]);
      work(buffers, sizes);
      for (std::size_t b = 0; b < sizes.size(); ++b) step_pool.deallocate(s, buffers[b], sizes[b]);
    }
  };
  const auto raw = [&] {
    for (long long i = 0; i < steps; ++i) {
      for (std::size_t b = 0; b < sizes.size(); ++b) buffers[b] = raw_allocate(backend, sizes[b]);
      work(buffers, sizes);
      // Code that frees with cudaFree must know the step's work is done first.
      s.synchronize();
      for (void* p : buffers) raw_free(backend, p);
    }
  };
  std::vector<samples> t = time_interleaved(s, warmup, repeat, {preallocated, pooled, raw});
  m.preallocated = std::move(t[0]);
  m.pooled = std::move(t[1]);
  m.raw = std::move(t[2]);
  m.stats = step_pool.statistics();

  // The allocator calls alone: what one allocate + free pair costs without the step's work.
  m.pairs = steps * static_cast<long long>(sizes.size());
  std::vector<samples> alone =
      time_interleaved(s, warmup, repeat,
                       {[&] {
                          for (long long i = 0; i < steps; ++i) {
                            for (std::size_t b = 0; b < sizes.size(); ++b) {
                              step_pool.deallocate(s, step_pool.allocate(s, sizes[b]), sizes[b]);
                            }
                          }
                        },
                        [&] {
                          for (long long i = 0; i < steps; ++i) {
                            for (const std::size_t bytes : sizes)
                              raw_free(backend, raw_allocate(backend, bytes));
                          }
                        }});
  m.pool_pairs = std::move(alone[0]);
  m.raw_pairs = std::move(alone[1]);
  for (std::size_t i = 0; i < sizes.size(); ++i) prealloc_pool.deallocate(s, prealloc[i], sizes[i]);
  s.synchronize();
  return m;
}

std::string raw_allocator_name(backend_kind backend) {
  return backend == backend_kind::cuda ? "cudaMalloc/cudaFree" : "malloc/free";
}

/// `ranks` ranks (through funnel-run --mps on on a GPU) each run the step loop at once.
void ranks_part(const context& ctx, std::int64_t n, long long steps, int ranks, outcome& o) {
  const launch_mode mode = effective_mode(ctx, launch_mode::mps_on);
  const std::string tag = "pool-" + std::to_string(ranks) + "ranks";
  const std::string result = ctx.output_dir + "/" + tag + ".result.json";
  (void)run_ranks(
      ctx, tag, ranks, mode, {},
      {ctx.self, "pool-worker", "--backend", to_string(ctx.backend), "--n", std::to_string(n),
       "--steps", std::to_string(steps), "--repeat", std::to_string(ctx.repeat), "--warmup",
       std::to_string(ctx.warmup), "--result", result});
  json r = read_json_file(result);
  const std::string who =
      std::to_string(ranks) + " ranks" + (mode == launch_mode::mps_on ? " MPS" : "");
  const auto row = [&](const std::string& what, const std::string& base_name, const char* base,
                       const char* funnel) {
    comparison c;
    c.what = who + ": " + what;
    c.baseline_name = base_name;
    c.baseline = 1e3 * r.at(base).get<double>() / double(steps);
    c.funnel_name = "funnel pool per step";
    c.funnel = 1e3 * r.at(funnel).get<double>() / double(steps);
    c.unit = "ms/step";
    c.ratio = base == std::string("raw_s") ? c.baseline / c.funnel : c.funnel / c.baseline;
    return c;
  };
  o.rows.push_back(row("pool / prealloc", "preallocated once", "preallocated_s", "pool_s"));
  o.rows.push_back(row(raw_allocator_name(ctx.backend) + " / pool",
                       raw_allocator_name(ctx.backend) + " per step", "raw_s", "pool_s"));
  o.raw["ranks"] = std::move(r);
  o.raw["ranks_launch"] = to_string(mode);
}

outcome run_pool(const context& ctx) {
  const option_values& opt = *ctx.options;
  const std::int64_t n = opt.integer("n");
  const long long steps = opt.integer("steps");
  const pool_measurement m = measure_pool(ctx.backend, n, steps, ctx.warmup, ctx.repeat);
  const std::vector<std::size_t>& sizes = m.sizes;
  const std::size_t footprint = m.footprint;
  const pool_statistics& stats = m.stats;
  const std::vector<samples> t = {m.preallocated, m.pooled, m.raw};
  const std::vector<samples> alone = {m.pool_pairs, m.raw_pairs};
  const long long pairs = m.pairs;

  const std::string raw_name = raw_allocator_name(ctx.backend);
  const auto per_step_ms = [&](const samples& x) { return 1e3 * x.median() / double(steps); };
  outcome o;
  o.name = "pool";
  comparison time_row;
  time_row.what = "step time, pool / preallocated";
  time_row.baseline_name = "preallocated once";
  time_row.baseline = per_step_ms(t[0]);
  time_row.funnel_name = "funnel pool per step";
  time_row.funnel = per_step_ms(t[1]);
  time_row.unit = "ms/step";
  time_row.ratio = t[1].median() / t[0].median();
  time_row.target = at_most(1.03);
  time_row.goal_applies = ctx.on_gpu();
  o.rows.push_back(time_row);

  comparison memory_row;
  memory_row.what = "reserved high-water / footprint";
  memory_row.baseline_name = "preallocated footprint";
  memory_row.baseline = double(footprint) / (1 << 20);
  memory_row.funnel_name = "pool reserved high-water";
  memory_row.funnel = double(stats.reserved_high) / (1 << 20);
  memory_row.unit = "MiB";
  memory_row.ratio = double(stats.reserved_high) / double(footprint);
  memory_row.target = at_most(1.05);
  memory_row.goal_applies = ctx.on_gpu();
  o.rows.push_back(memory_row);

  comparison raw_row;
  raw_row.what = "step time, " + raw_name + " / pool";
  raw_row.baseline_name = raw_name + " per step";
  raw_row.baseline = per_step_ms(t[2]);
  raw_row.funnel_name = "funnel pool per step";
  raw_row.funnel = per_step_ms(t[1]);
  raw_row.unit = "ms/step";
  raw_row.ratio = t[2].median() / t[1].median();
  o.rows.push_back(raw_row);

  const double pool_pair_us = 1e6 * alone[0].median() / double(pairs);
  const double raw_pair_us = 1e6 * alone[1].median() / double(pairs);
  o.notes.push_back(raw_name + " costs " + si(raw_pair_us) +
                    " us per allocate+free pair, funnel's pool " + si(pool_pair_us) + " us (" +
                    std::to_string(sizes.size()) + " buffers per step, " +
                    si(double(footprint) / (1 << 20)) + " MiB)");

  json& raw_json = o.raw;
  raw_json["n"] = n;
  raw_json["steps"] = steps;
  raw_json["buffer_bytes"] = json(sizes);
  raw_json["footprint_bytes"] = footprint;
  raw_json["preallocated"] = t[0].to_json();
  raw_json["pool"] = t[1].to_json();
  raw_json["raw_allocator"] = t[2].to_json();
  raw_json["raw_allocator_name"] = raw_name;
  raw_json["pool_pairs_alone"] = alone[0].to_json();
  raw_json["raw_pairs_alone"] = alone[1].to_json();
  raw_json["pairs_per_repetition"] = pairs;
  raw_json["pool_pair_us"] = pool_pair_us;
  raw_json["raw_pair_us"] = raw_pair_us;
  json pool_stats = json::object();
  pool_stats["reserved"] = stats.reserved;
  pool_stats["used"] = stats.used;
  pool_stats["reserved_high"] = stats.reserved_high;
  pool_stats["used_high"] = stats.used_high;
  raw_json["pool_statistics"] = std::move(pool_stats);

  const auto ranks = static_cast<int>(opt.integer("ranks"));
  if (ranks > 0) {
    try {
      ranks_part(ctx, opt.integer("ranks-n"), steps, ranks, o);
    } catch (const unsupported& e) {
      o.notes.push_back(std::to_string(ranks) + " ranks: skipped: " + e.what());
    }
  }
  return o;
}

}  // namespace

benchmark pool_benchmark() {
  command_spec spec;
  spec.name = "pool";
  spec.brief = "allocate/free per step: funnel pool vs preallocated vs cudaMalloc";
  spec.summary =
      "A step loop (heat3d step, halo and staging copies) that allocates and frees its halo and\n"
      "staging buffers every step: funnel's pool vs preallocated once vs cudaMalloc/cudaFree\n"
      "(malloc/free on the host backend). Goals: pool <= 1.03x preallocated time, reserved\n"
      "high-water <= 1.05x the preallocated footprint; prints what cudaMalloc costs, also with\n"
      "--ranks ranks (funnel-run --mps on) running the loop at once.";
  spec.options = {
      integer_option("n", "N", "edge of the rank's resident box (N^3 doubles)", "256", "12", 8),
      integer_option("steps", "S", "steps per timed repetition", "200", "3"),
      integer_option("ranks", "R", "then R ranks at once (funnel-run --mps on); 0: skip", "8", "2",
                     0),
      integer_option("ranks-n", "N", "box edge of each of those ranks", "128", "10", 8),
  };
  return benchmark{spec, run_pool};
}

command_spec pool_worker_spec() {
  command_spec spec;
  spec.name = "pool-worker";
  spec.brief = "internal: one rank of pool --ranks";
  spec.summary =
      "Internal: one rank of `funnel-bench pool --ranks R` (started under mpirun). Runs the\n"
      "pool step loop after a barrier; rank 0 writes the medians over ranks to --result.";
  spec.options = {
      integer_option("n", "N", "box edge", "128", "128", 8),
      integer_option("steps", "S", "steps per timed repetition", "200", "200"),
      text_option("result", "FILE", "where rank 0 writes its JSON", "", ""),
  };
  spec.hidden = true;
  return spec;
}

int pool_worker_main(const option_values& options) {
  const std::int64_t n = options.integer("n");
  const long long steps = options.integer("steps");
  const std::string result = options.text("result");
  FUNNEL_EXPECTS(!result.empty(), "funnel-bench pool-worker: --result FILE is required");
  const backend_kind backend = select_backend(options.text("backend"));
  MPI_Init(nullptr, nullptr);
  try {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    FUNNEL_MPI_TRY(MPI_Barrier(MPI_COMM_WORLD));
    const pool_measurement m =
        measure_pool(backend, n, steps, static_cast<int>(options.integer("warmup")),
                     static_cast<int>(options.integer("repeat")));
    const double mine[4] = {m.preallocated.median(), m.pooled.median(), m.raw.median(),
                            double(m.stats.reserved_high) / double(m.footprint)};
    std::vector<double> all(4 * static_cast<std::size_t>(size));
    FUNNEL_MPI_TRY(MPI_Gather(mine, 4, MPI_DOUBLE, all.data(), 4, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0) {
      // The slowest rank sets the pace of a bulk-synchronous code: report the maxima.
      json j = json::object();
      j["ranks"] = size;
      j["n"] = n;
      j["steps"] = steps;
      const char* names[4] = {"preallocated_s", "pool_s", "raw_s", "reserved_high_over_footprint"};
      for (int k = 0; k < 4; ++k) {
        std::vector<double> column;
        for (int r = 0; r < size; ++r) column.push_back(all[std::size_t(4 * r + k)]);
        j[std::string("per_rank_") + names[k]] = json(column);
        j[names[k]] = *std::max_element(column.begin(), column.end());
      }
      const char* mps = std::getenv("FUNNEL_MPS");
      j["funnel_mps"] = mps != nullptr ? json(std::string(mps)) : json();
      write_json_file(result, j);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "funnel-bench pool-worker: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}

}  // namespace funnel::bench
