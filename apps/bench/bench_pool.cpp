// funnel-bench pool: a step loop that allocates and frees its halo and staging buffers every
// step, from funnel's pool vs preallocated once vs the raw allocator (cudaMalloc/cudaFree).
#include <cstddef>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include "benchmarks.hpp"
#include "device_support.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
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

outcome run_pool(const context& ctx) {
  const option_values& opt = *ctx.options;
  const std::int64_t n = opt.integer("n", 8);
  const long long steps = opt.integer("steps");
  const std::vector<std::size_t> sizes = step_buffer_sizes(n);
  const std::size_t footprint = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});

  stream s(ctx.backend);
  memory_pool_options field_options;
  field_options.name = "bench-fields";
  memory_pool fields(ctx.backend, field_options);
  step_work work(s, fields, n);
  std::vector<void*> buffers(sizes.size(), nullptr);

  // (1) preallocated once, (2) funnel's pool per step, (3) the raw allocator per step.
  memory_pool_options prealloc_options;
  prealloc_options.name = "bench-prealloc";
  memory_pool prealloc_pool(ctx.backend, prealloc_options);
  std::vector<void*> prealloc(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) prealloc[i] = prealloc_pool.allocate(s, sizes[i]);

  memory_pool_options step_options;
  step_options.name = "bench-per-step";
  memory_pool step_pool(ctx.backend, step_options);

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
      for (std::size_t b = 0; b < sizes.size(); ++b)
        buffers[b] = raw_allocate(ctx.backend, sizes[b]);
      work(buffers, sizes);
      // Code that frees with cudaFree must know the step's work is done first.
      s.synchronize();
      for (void* p : buffers) raw_free(ctx.backend, p);
    }
  };
  const std::vector<samples> t =
      time_interleaved(s, ctx.warmup, ctx.repeat, {preallocated, pooled, raw});
  const pool_statistics stats = step_pool.statistics();

  // The allocator calls alone: what one allocate + free pair costs without the step's work.
  const long long pairs = steps * static_cast<long long>(sizes.size());
  const std::vector<samples> alone = time_interleaved(
      s, ctx.warmup, ctx.repeat,
      {[&] {
         for (long long i = 0; i < steps; ++i) {
           for (std::size_t b = 0; b < sizes.size(); ++b) {
             step_pool.deallocate(s, step_pool.allocate(s, sizes[b]), sizes[b]);
           }
         }
       },
       [&] {
         for (long long i = 0; i < pairs; ++i) {
           raw_free(ctx.backend,
                    raw_allocate(
                        ctx.backend,
                        sizes[static_cast<std::size_t>(i % static_cast<long long>(sizes.size()))]));
         }
       }});
  for (std::size_t i = 0; i < sizes.size(); ++i) prealloc_pool.deallocate(s, prealloc[i], sizes[i]);
  s.synchronize();

  const std::string raw_name = ctx.on_gpu() ? "cudaMalloc/cudaFree" : "malloc/free";
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
  o.notes.push_back("under 8 ranks with MPS: not measured by this version");

  json_value& raw_json = o.raw;
  raw_json.set("n", n);
  raw_json.set("steps", steps);
  raw_json.set("buffer_bytes", json_value::array_of(sizes));
  raw_json.set("footprint_bytes", footprint);
  raw_json.set("preallocated", t[0].to_json());
  raw_json.set("pool", t[1].to_json());
  raw_json.set("raw_allocator", t[2].to_json());
  raw_json.set("raw_allocator_name", raw_name);
  raw_json.set("pool_pairs_alone", alone[0].to_json());
  raw_json.set("raw_pairs_alone", alone[1].to_json());
  raw_json.set("pairs_per_repetition", pairs);
  raw_json.set("pool_pair_us", pool_pair_us);
  raw_json.set("raw_pair_us", raw_pair_us);
  json_value pool_stats = json_value::object();
  pool_stats.set("reserved", stats.reserved);
  pool_stats.set("used", stats.used);
  pool_stats.set("reserved_high", stats.reserved_high);
  pool_stats.set("used_high", stats.used_high);
  raw_json.set("pool_statistics", std::move(pool_stats));
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
      "high-water <= 1.05x the preallocated footprint; prints what cudaMalloc costs.";
  spec.options = {
      integer_option("n", "N", "edge of the rank's resident box (N^3 doubles)", "256", "12", 8),
      integer_option("steps", "S", "steps per timed repetition", "200", "3"),
  };
  return benchmark{spec, run_pool};
}

}  // namespace funnel::bench
