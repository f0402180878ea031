// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// choose_pipeline, probe_pipeline and run_pipeline_benchmark on the host backend; the bounds of
// pipeline_benchmark_result.
#include <gtest/gtest.h>

#include <random>

#include "funnel/error.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/pipeline/choose_pipeline.hpp"
#include "funnel/pipeline/pipeline_benchmark.hpp"
#include "funnel/pipeline/pipeline_probe.hpp"
#include "stencil_reference.hpp"

namespace {

using funnel::backend_kind;
using funnel::box;
using funnel::chunk_plan;
using funnel::field_layout;
using funnel::pipeline_overrides;
using funnel::pipeline_probe;
using funnel::stream_view;

constexpr double coefficient = 0.1;

funnel::pipeline_executor<double>::compute_function heat_callback() {
  return
      [](stream_view, const field_layout& layout, const double* in, double* out, const box& region,
         int) { funnel::test::heat_step(layout, in, out, region, coefficient); };
}

TEST(ChoosePipeline, KeepsOverridesAndFitsTheBudget) {
  const field_layout f{{64, 64, 256}, 1};
  const std::size_t field_bytes = static_cast<std::size_t>(f.allocated_cells()) * 8;
  pipeline_overrides fixed;
  fixed.chunks = 16;
  fixed.slots = 4;
  fixed.steps_per_pass = 2;
  const auto kept = funnel::choose_pipeline(f, 1, 8, field_bytes, {}, fixed, {}, 1);
  EXPECT_EQ(kept.chunks, 16);
  EXPECT_EQ(kept.slots, 4);
  EXPECT_EQ(kept.steps_per_pass, 2);
  EXPECT_NE(kept.describe().find("chunks=16 streams=4 steps-per-pass=2"), std::string::npos);

  // A budget of a tenth of the field: 2*S buffers must fit, so many chunks.
  const auto small = funnel::choose_pipeline(f, 1, 8, field_bytes / 10, {});
  const chunk_plan plan(f, 1, small.steps_per_pass, small.chunks);
  EXPECT_LE(static_cast<std::size_t>(plan.max_buffer_cells()) * 8 * 2 *
                static_cast<std::size_t>(small.slots),
            field_bytes / 10);
  EXPECT_EQ(small.steps_per_pass, 1);

  fixed.chunks = 1;
  EXPECT_THROW((void)funnel::choose_pipeline(f, 1, 8, field_bytes / 10, {}, fixed),
               funnel::invalid_argument);
  fixed.chunks = 0;
  EXPECT_THROW((void)funnel::choose_pipeline(f, 1, 8, field_bytes, {}, fixed),
               funnel::invalid_argument);
}

TEST(ChoosePipeline, StepsPerPassGrowWithKernelHeadroomWithinTheHalo) {
  const field_layout f{{64, 64, 512}, 4};
  const std::size_t budget = std::size_t{1} << 30;
  pipeline_probe fast_kernels{50.0, 50.0, 1e12};  // kernel ~160x faster per cell than the link
  const auto wide = funnel::choose_pipeline(f, 1, 8, budget, fast_kernels, {}, {}, 16);
  EXPECT_EQ(wide.steps_per_pass, 16);
  EXPECT_EQ(wide.bound, "h2d");
  funnel::neighbour_faces faces;
  faces.open[2][0] = true;
  const auto halo_limited = funnel::choose_pipeline(f, 1, 8, budget, fast_kernels, {}, faces, 16);
  EXPECT_EQ(halo_limited.steps_per_pass, 4);
  pipeline_probe slow_kernels{50.0, 50.0, 1e9};  // kernel slower than the link: k stays 1
  const auto slow = funnel::choose_pipeline(f, 1, 8, budget, slow_kernels, {}, {}, 16);
  EXPECT_EQ(slow.steps_per_pass, 1);
  EXPECT_EQ(slow.bound, "kernel");
  EXPECT_GT(slow.predicted_efficiency, 0.0);
  EXPECT_LE(slow.predicted_efficiency, 1.0);
}

TEST(PipelineProbeAndBenchmark, RunOnTheHostBackend) {
  const field_layout f{{24, 20, 48}, 1};
  auto in = funnel::test::random_field<double>(f, std::random_device{}());
  std::vector<double> out = in;
  funnel::memory_pool pool(backend_kind::host);
  const pipeline_probe probe = funnel::probe_pipeline<double>(
      backend_kind::host, pool, f, 1, in.data(), out.data(), heat_callback(), 64 << 10);
  EXPECT_GT(probe.h2d_gb_per_s, 0.0);
  EXPECT_GT(probe.d2h_gb_per_s, 0.0);
  EXPECT_GT(probe.cell_updates_per_s, 0.0);

  const auto choice = funnel::choose_pipeline(f, 1, 8, std::size_t{1} << 20, probe);
  funnel::pipeline_executor<double> executor(backend_kind::host, pool,
                                             chunk_plan(f, 1, choice.steps_per_pass, choice.chunks),
                                             {choice.slots});
  out = in;
  const auto result =
      funnel::run_pipeline_benchmark(executor, in.data(), out.data(), heat_callback(), 2);
  EXPECT_TRUE(funnel::test::bitwise_equal(
      out, funnel::test::reference_steps(f, in, choice.steps_per_pass, coefficient)));
  EXPECT_EQ(result.copies_both.h2d_bytes, result.pipelined.h2d_bytes);
  EXPECT_EQ(result.copies_both.d2h_bytes, result.pipelined.d2h_bytes);
  EXPECT_EQ(result.compute_alone.cell_updates, result.pipelined.cell_updates);
  EXPECT_EQ(result.serial.mode, funnel::pass_mode::serial);
  EXPECT_NE(result.report().find("(a)/(b)"), std::string::npos);
  EXPECT_NE(result.report().find("(c')/(b)"), std::string::npos);
  EXPECT_GT(result.efficiency_vs_bidirectional_bound(), 0.0);
  EXPECT_THROW(
      (void)funnel::run_pipeline_benchmark(executor, in.data(), out.data(), heat_callback(), 0),
      funnel::invalid_argument);
}

// Figures of the H100 run in docs/performance.md: copies dominate, and the two directions at once
// take longer than either alone, so the bidirectional bound is the larger one.
TEST(PipelineBenchmarkResult, BidirectionalBoundTimesBothDirectionsAtOnce) {
  funnel::pipeline_benchmark_result r;
  r.h2d_alone.h2d_seconds = 0.168;
  r.d2h_alone.d2h_seconds = 0.156;
  r.compute_alone.kernel_seconds = 0.0126;
  r.copies_both.pass_seconds = 0.2026;
  r.pipelined.pass_seconds = 0.2044;
  EXPECT_DOUBLE_EQ(r.bound_seconds(), 0.168);
  EXPECT_DOUBLE_EQ(r.bidirectional_bound_seconds(), 0.2026);
  EXPECT_DOUBLE_EQ(r.efficiency_vs_bidirectional_bound(), 0.2026 / 0.2044);
  // Kernel-bound: the kernels set both bounds.
  r.compute_alone.kernel_seconds = 0.3;
  EXPECT_DOUBLE_EQ(r.bound_seconds(), 0.3);
  EXPECT_DOUBLE_EQ(r.bidirectional_bound_seconds(), 0.3);
  // Nothing timed: 0, not a division by zero.
  EXPECT_EQ(funnel::pipeline_benchmark_result{}.efficiency_vs_bidirectional_bound(), 0.0);
}

}  // namespace
