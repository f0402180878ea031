// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// pipeline_executor on the CUDA backend: streamed passes equal the host reference bitwise, with
// the pool's byte limit a third of the field, for pinned and pageable host arrays; then the
// benchmark figures and a trace of one pass (printed, not asserted).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "funnel/memory/memory_pool.hpp"
#include "funnel/pipeline/choose_pipeline.hpp"
#include "funnel/pipeline/pipeline_benchmark.hpp"
#include "funnel/pipeline/pipeline_executor.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "funnel/trace/trace_recorder.hpp"
#include "gpu_heat_kernel.hpp"
#include "stencil_reference.hpp"

namespace {

using funnel::backend_kind;
using funnel::box;
using funnel::chunk_plan;
using funnel::field_layout;
using funnel::memory_pool;
using funnel::pipeline_executor;
using funnel::stream_view;

constexpr double coefficient = 0.1;

pipeline_executor<double>::compute_function gpu_heat() {
  return [](stream_view s, const field_layout& layout, const double* in, double* out,
            const box& region,
            int) { funnel::test::launch_heat_step(s, layout, in, out, region, coefficient); };
}

std::size_t field_bytes(const field_layout& f) {
  return static_cast<std::size_t>(f.allocated_cells()) * sizeof(double);
}

memory_pool pool_of_a_third(const field_layout& f) {
  funnel::memory_pool_options options;
  options.name = "pipeline-gpu";
  options.byte_limit = field_bytes(f) / 3;
  return memory_pool(backend_kind::cuda, options);
}

// Runs `passes` passes through host arrays `a`/`b` (a holds the initial field) and returns the
// final field.
std::vector<double> stream_passes(pipeline_executor<double>& executor, double* a, double* b,
                                  std::size_t cells, int passes, bool expect_staged) {
  for (int p = 0; p < passes; ++p) {
    const auto stats = executor.run(a, b, gpu_heat());
    EXPECT_EQ(stats.staged_input, expect_staged);
    EXPECT_EQ(stats.staged_output, expect_staged);
    std::swap(a, b);
  }
  return std::vector<double>(a, a + cells);
}

TEST(PipelineGpu, FieldThreeTimesThePoolLimitEqualsHostReference) {
  const field_layout f{{40, 36, 180}, 1};
  for (const int k : {1, 2, 3}) {
    for (const bool pinned : {true, false}) {
      SCOPED_TRACE("k=" + std::to_string(k) + (pinned ? " pinned" : " pageable"));
      const auto initial = funnel::test::random_field<double>(f, std::random_device{}());
      const auto expected = funnel::test::reference_steps(f, initial, 2 * k, coefficient);
      memory_pool pool = pool_of_a_third(f);
      const int slots = 3;
      const chunk_plan plan =
          chunk_plan::for_chunk_bytes(f, 1, k, field_bytes(f) / 3 / (2 * slots), sizeof(double));
      EXPECT_GT(plan.size(), 3);
      pipeline_executor<double> executor(backend_kind::cuda, pool, plan, {slots});
      EXPECT_LE(pool.statistics().used_high, field_bytes(f) / 3);

      std::vector<double> result;
      if (pinned) {
        funnel::pinned_buffer a(backend_kind::cuda, field_bytes(f));
        funnel::pinned_buffer b(backend_kind::cuda, field_bytes(f));
        std::memcpy(a.data(), initial.data(), field_bytes(f));
        std::memcpy(b.data(), initial.data(), field_bytes(f));
        result = stream_passes(executor, a.as<double>(), b.as<double>(), initial.size(), 2, false);
      } else {
        std::vector<double> a = initial;
        std::vector<double> b = initial;
        result = stream_passes(executor, a.data(), b.data(), initial.size(), 2, true);
      }
      const std::int64_t diff = funnel::test::first_difference(result, expected);
      EXPECT_EQ(diff, -1) << "first difference at cell " << diff;
    }
  }
}

TEST(PipelineGpu, ReportsEfficiencyAndTrace) {
  const field_layout f{{256, 256, 384}, 1};
  memory_pool pool = pool_of_a_third(f);
  funnel::pinned_buffer in(backend_kind::cuda, field_bytes(f));
  funnel::pinned_buffer out(backend_kind::cuda, field_bytes(f));
  std::memset(in.data(), 0, field_bytes(f));
  std::memset(out.data(), 0, field_bytes(f));
  const auto probe =
      funnel::probe_pipeline<double>(backend_kind::cuda, pool, f, 1, in.as<double>(),
                                     out.as<double>(), gpu_heat(), std::size_t{32} << 20);
  const auto choice = funnel::choose_pipeline(f, 1, sizeof(double), field_bytes(f) / 3, probe);
  std::printf("probe: %s\nchoice: %s\n", probe.describe().c_str(), choice.describe().c_str());
  pipeline_executor<double> executor(backend_kind::cuda, pool,
                                     chunk_plan(f, 1, choice.steps_per_pass, choice.chunks),
                                     {choice.slots});
  const auto bench =
      funnel::run_pipeline_benchmark(executor, in.as<double>(), out.as<double>(), gpu_heat(), 3);
  std::printf("%s", bench.report().c_str());
  funnel::trace_recorder trace("pipeline_gpu", 0);
  const auto stats = executor.run(in.as<double>(), out.as<double>(), gpu_heat(), &trace);
  std::printf("%s\n", stats.summary().c_str());
  EXPECT_EQ(static_cast<int>(trace.spans().size()), 3 * executor.plan().size());
  EXPECT_GT(stats.pass_seconds, 0.0);
  EXPECT_GT(stats.h2d_seconds, 0.0);
  EXPECT_GT(stats.kernel_seconds, 0.0);
  EXPECT_GT(stats.d2h_seconds, 0.0);
  if (const char* dir = std::getenv("OUT"))
    trace.write_file(std::string{dir} + "/pipeline_gpu_trace.json");
}

}  // namespace
