// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// pipeline_executor on the host backend: streamed passes equal whole-field steps bitwise, for
// several k, chunk counts, slot counts, staging choices, 2D and 3D, under a pool byte limit
// smaller than the field; rank faces with neighbours are emulated by cutting a sub-box out of
// a bigger field; the frame each chunk's second buffer gets holds every cell no step writes
// (slot buffers poisoned with NaN first); the trace holds one span per chunk and operation.
#include "funnel/pipeline/pipeline_executor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <tuple>

#include "funnel/error.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/pipeline/chunk_plan.hpp"
#include "funnel/trace/trace_recorder.hpp"
#include "stencil_reference.hpp"

namespace {

using funnel::backend_kind;
using funnel::box;
using funnel::chunk;
using funnel::chunk_plan;
using funnel::field_layout;
using funnel::host_staging;
using funnel::memory_pool;
using funnel::memory_pool_options;
using funnel::pass_mode;
using funnel::pipeline_executor;
using funnel::pipeline_options;
using funnel::stream_view;

constexpr double coefficient = 0.1;

std::uint64_t fresh_seed() { return std::random_device{}(); }

pipeline_executor<double>::compute_function heat_callback() {
  return [](stream_view s, const field_layout& layout, const double* in, double* out,
            const box& region, int step) {
    EXPECT_FALSE(s.is_cuda());
    EXPECT_GE(step, 1);
    funnel::test::heat_step(layout, in, out, region, coefficient);
  };
}

memory_pool limited_pool(std::size_t limit) {
  memory_pool_options options;
  options.name = "pipeline-test";
  options.byte_limit = limit;
  return memory_pool(backend_kind::host, options);
}

// Streams `passes` passes of k steps and compares with passes*k whole-field steps, bitwise.
void expect_streamed_equals_resident(const field_layout& f, int k, int chunks, int slots,
                                     host_staging staging, int passes) {
  SCOPED_TRACE("interior (" + std::to_string(f.interior[0]) + "," + std::to_string(f.interior[1]) +
               "," + std::to_string(f.interior[2]) + ") k=" + std::to_string(k) +
               " C=" + std::to_string(chunks) + " S=" + std::to_string(slots) +
               " staging=" + std::to_string(static_cast<int>(staging)));
  const auto initial = funnel::test::random_field<double>(f, fresh_seed());
  const auto expected = funnel::test::reference_steps(f, initial, k * passes, coefficient);

  const chunk_plan plan(f, 1, k, chunks);
  memory_pool pool =
      limited_pool(2 * static_cast<std::size_t>(slots) *
                   static_cast<std::size_t>(plan.max_buffer_cells()) * sizeof(double));
  pipeline_executor<double> executor(backend_kind::host, pool, plan, {slots, staging});
  EXPECT_LE(executor.device_bytes(), pool.statistics().used);

  std::vector<double> in = initial;
  // `out` has the boundary values (never written by a pass) and NaN in every interior plane,
  // so cells a pass forgets to write show up.
  std::vector<double> out = initial;
  const std::int64_t first = plan[0].output_offset;
  const std::int64_t last =
      plan[plan.size() - 1].output_offset + plan[plan.size() - 1].output_cells;
  for (std::int64_t i = first; i < last; ++i) {
    out[static_cast<std::size_t>(i)] = std::numeric_limits<double>::quiet_NaN();
  }
  for (int p = 0; p < passes; ++p) {
    const auto stats = executor.run(in.data(), out.data(), heat_callback());
    EXPECT_EQ(stats.chunks, chunks);
    EXPECT_EQ(stats.cell_updates, f.interior[0] * f.interior[1] * f.interior[2] * k);
    EXPECT_EQ(stats.h2d_bytes, static_cast<std::size_t>(plan.input_cells_total()) * sizeof(double));
    EXPECT_EQ(stats.d2h_bytes,
              static_cast<std::size_t>(plan.output_cells_total()) * sizeof(double));
    EXPECT_EQ(stats.staged_input, staging == host_staging::always);
    in.swap(out);
  }
  const std::int64_t diff = funnel::test::first_difference(in, expected);
  EXPECT_EQ(diff, -1) << "streamed and resident differ first at cell " << diff;
}

TEST(PipelineExecutor, StreamedEqualsResidentIn3D) {
  const field_layout f{{9, 7, 24}, 1};
  for (const int k : {1, 2, 3}) {
    for (const int chunks : {1, 2, 5, 8}) {
      if (chunks > chunk_plan::max_chunks(f, 1, k)) continue;
      for (const int slots : {1, 2, 3}) {
        expect_streamed_equals_resident(f, k, chunks, slots, host_staging::never, 2);
      }
    }
  }
}

TEST(PipelineExecutor, StreamedEqualsResidentIn2DWithStaging) {
  const field_layout f{{13, 20, 1}, 1};
  for (const int k : {1, 2, 3}) {
    for (const int chunks : {1, 3, 6}) {
      if (chunks > chunk_plan::max_chunks(f, 1, k)) continue;
      expect_streamed_equals_resident(f, k, chunks, 2, host_staging::always, 2);
      expect_streamed_equals_resident(f, k, chunks, 3, host_staging::automatic, 1);
    }
  }
}

TEST(PipelineExecutor, DeepHaloAndThinChunks) {
  // halo 3 > k*h: the input is clamped to k*h extra planes; each chunk a single plane.
  const field_layout f{{6, 5, 10}, 3};
  expect_streamed_equals_resident(f, 1, 10, 3, host_staging::never, 3);
  expect_streamed_equals_resident(f, 3, 3, 2, host_staging::always, 2);
}

TEST(PipelineExecutor, PoolSmallerThanTheFieldForcesManyChunks) {
  const field_layout f{{16, 12, 120}, 2};
  const int k = 2;
  const int slots = 3;
  const std::size_t field_bytes = static_cast<std::size_t>(f.allocated_cells()) * sizeof(double);
  const std::size_t limit = field_bytes / 2;
  memory_pool pool = limited_pool(limit);
  const chunk_plan plan = chunk_plan::for_chunk_bytes(f, 1, k, limit / (2 * slots), sizeof(double));
  EXPECT_GT(plan.size(), 6);
  pipeline_executor<double> executor(backend_kind::host, pool, plan, {slots, host_staging::never});
  EXPECT_LT(pool.statistics().used_high, field_bytes);

  const auto initial = funnel::test::random_field<double>(f, fresh_seed());
  std::vector<double> in = initial;
  std::vector<double> out = initial;
  for (int pass = 0; pass < 3; ++pass) {
    (void)executor.run(in.data(), out.data(), heat_callback());
    in.swap(out);
  }
  EXPECT_TRUE(funnel::test::bitwise_equal(
      in, funnel::test::reference_steps(f, initial, 3 * k, coefficient)));

  // The same plan does not fit with more slots: a clear out_of_memory.
  try {
    pipeline_executor<double> too_many(backend_kind::host, pool, plan, {3 * slots});
    ADD_FAILURE() << "expected out_of_memory";
  } catch (const funnel::out_of_memory& e) {
    EXPECT_NE(std::string{e.what()}.find("use more chunks"), std::string::npos) << e.what();
  }
}

// The cells of `global`'s field `initial` that a rank with `local` layout holds, its halo
// included (local allocated (i, j, k) = global allocated (i, j, k) + shift).
std::vector<double> local_part(const field_layout& global, const std::vector<double>& initial,
                               const field_layout& local, const funnel::index3& shift) {
  std::vector<double> in(static_cast<std::size_t>(local.allocated_cells()));
  for (std::int64_t z = 0; z < local.allocated(2); ++z) {
    for (std::int64_t y = 0; y < local.allocated(1); ++y) {
      for (std::int64_t x = 0; x < local.allocated(0); ++x) {
        in[static_cast<std::size_t>(local.index(x, y, z))] = initial[static_cast<std::size_t>(
            global.index(x + shift[0], y + shift[1], z + shift[2]))];
      }
    }
  }
  return in;
}

// Expects the interior of the rank's `out` bitwise equal to the same cells of `expected`.
void expect_interior_of(const field_layout& global, const std::vector<double>& expected,
                        const field_layout& local, const funnel::index3& shift,
                        const std::vector<double>& out) {
  const box interior = local.interior_box();
  for (std::int64_t z = interior.lo[2]; z < interior.hi[2]; ++z) {
    for (std::int64_t y = interior.lo[1]; y < interior.hi[1]; ++y) {
      for (std::int64_t x = interior.lo[0]; x < interior.hi[0]; ++x) {
        const double want = expected[static_cast<std::size_t>(
            global.index(x + shift[0], y + shift[1], z + shift[2]))];
        const double got = out[static_cast<std::size_t>(local.index(x, y, z))];
        ASSERT_EQ(std::memcmp(&want, &got, sizeof want), 0) << "cell " << x << "," << y << "," << z;
      }
    }
  }
}

// One "rank" of a bigger field: its halo (k deep) holds the neighbours' cells, as after a halo
// exchange; k streamed steps with open faces must equal k steps of the whole field.
TEST(PipelineExecutor, NeighbourFacesMatchTheWholeField) {
  for (const int k : {1, 2, 3}) {
    const field_layout global{{14, 9, 16}, k};
    const auto initial = funnel::test::random_field<double>(global, fresh_seed());
    const auto expected = funnel::test::reference_steps(global, initial, k, coefficient);
    // The local interior is global interior cells x in [4, 10), y all, z in [5, 13).
    const field_layout local{{6, 9, 8}, k};
    const funnel::index3 shift{4, 0, 5};  // local allocated (i,j,k) = global (i,j,k) + shift
    funnel::neighbour_faces faces;
    faces.open[0] = {true, true};
    faces.open[2] = {true, true};
    const std::vector<double> in = local_part(global, initial, local, shift);
    std::vector<double> out(in.size(), std::numeric_limits<double>::quiet_NaN());
    for (const int chunks : {1, 2, 8 / k}) {
      const chunk_plan plan(local, 1, k, chunks, faces);
      memory_pool pool(backend_kind::host);
      pipeline_executor<double> executor(backend_kind::host, pool, plan, {2});
      (void)executor.run(in.data(), out.data(), heat_callback());
      SCOPED_TRACE("k=" + std::to_string(k) + " chunks=" + std::to_string(chunks));
      expect_interior_of(global, expected, local, shift, out);
    }
  }
}

// One pass of `plan` over `in` after a pass over NaN, so the slot buffers start full of NaN: a
// cell the second buffer misses (the frame copied before step 1) or a step misses shows up.
// `out` starts as `in` with NaN in the planes the pass writes.
template <class T>
std::vector<T> pass_after_poison(const chunk_plan& plan, int slots, const std::vector<T>& in,
                                 const typename pipeline_executor<T>::compute_function& compute) {
  const T nan{std::numeric_limits<double>::quiet_NaN()};
  memory_pool pool(backend_kind::host);
  pipeline_executor<T> executor(backend_kind::host, pool, plan, {slots});
  const std::vector<T> poison(in.size(), nan);
  std::vector<T> out(in.size(), nan);
  (void)executor.run(poison.data(), out.data(), compute);
  out = in;
  const chunk& last = plan[plan.size() - 1];
  std::fill(out.begin() + plan[0].output_offset,
            out.begin() + last.output_offset + last.output_cells, nan);
  (void)executor.run(in.data(), out.data(), compute);
  return out;
}

std::vector<double> pass_after_poison(const chunk_plan& plan, int slots,
                                      const std::vector<double>& in) {
  return pass_after_poison<double>(plan, slots, in, heat_callback());
}

// Fields of every shape the plan allows (non-cubic, axes of one cell without halo there, chunks
// along z, y or x, a halo deeper than k*h): after k steps the whole array, halo columns of the
// written planes included, equals the reference bitwise.
TEST(PipelineExecutor, FrameHoldsTheCellsNoStepWrites) {
  const field_layout fields[] = {{{5, 9, 14}, 1},  {{1, 7, 12}, 1}, {{9, 1, 10}, 1},
                                 {{11, 16, 1}, 1}, {{1, 1, 18}, 1}, {{24, 1, 1}, 1},
                                 {{6, 5, 10}, 3}};
  for (const field_layout& f : fields) {
    const auto initial = funnel::test::random_field<double>(f, fresh_seed());
    for (const int k : {1, 2, 3}) {
      const auto expected = funnel::test::reference_steps(f, initial, k, coefficient);
      const int most = chunk_plan::max_chunks(f, 1, k);
      for (const int chunks : {1, 2, most}) {
        if (chunks > most) continue;
        for (const int slots : {1, 2}) {
          const auto out = pass_after_poison(chunk_plan(f, 1, k, chunks), slots, initial);
          const std::int64_t diff = funnel::test::first_difference(out, expected);
          EXPECT_EQ(diff, -1) << "interior (" << f.interior[0] << "," << f.interior[1] << ","
                              << f.interior[2] << ") halo " << f.halo << " k=" << k
                              << " C=" << chunks << " S=" << slots << ": first difference at cell "
                              << diff;
        }
      }
    }
  }
}

// As above for a rank with neighbours below in y and on both sides in z (its halo holds their
// cells) and physical faces in x and above in y: the interior equals the whole field's.
TEST(PipelineExecutor, FrameWithNeighbourFaces) {
  for (const int k : {2, 3}) {
    const field_layout global{{7, 12, 16}, k};
    const auto initial = funnel::test::random_field<double>(global, fresh_seed());
    const auto expected = funnel::test::reference_steps(global, initial, k, coefficient);
    // Local interior = global interior cells x all, y in [6, 12), z in [5, 13).
    const field_layout local{{7, 6, 8}, k};
    const funnel::index3 shift{0, 6, 5};  // local allocated (i,j,k) = global (i,j,k) + shift
    funnel::neighbour_faces faces;
    faces.open[1] = {true, false};
    faces.open[2] = {true, true};
    const std::vector<double> in = local_part(global, initial, local, shift);
    for (const int chunks : {1, 2, chunk_plan::max_chunks(local, 1, k)}) {
      const auto out = pass_after_poison(chunk_plan(local, 1, k, chunks, faces), 2, in);
      SCOPED_TRACE("k=" + std::to_string(k) + " chunks=" + std::to_string(chunks));
      expect_interior_of(global, expected, local, shift, out);
    }
  }
}

// Elements of 16 bytes (std::complex<double>): the frame of an element type funnel has no
// kernel for (the strided copy moves any element size).
TEST(PipelineExecutor, FrameOfWideElements) {
  using complex = std::complex<double>;
  const complex c{coefficient, 0.0};
  const pipeline_executor<complex>::compute_function heat =
      [c](stream_view, const field_layout& layout, const complex* in, complex* out,
          const box& region, int) { funnel::test::heat_step(layout, in, out, region, c); };
  for (const field_layout& f : {field_layout{{5, 7, 9}, 1}, field_layout{{6, 11, 1}, 2}}) {
    std::vector<complex> initial;
    for (const double v : funnel::test::random_field<double>(f, fresh_seed())) {
      initial.emplace_back(v, 1.0 - v);
    }
    for (const int k : {2, 3}) {
      const auto out = pass_after_poison<complex>(chunk_plan(f, 1, k, 2), 2, initial, heat);
      const std::int64_t diff =
          funnel::test::first_difference(out, funnel::test::reference_steps(f, initial, k, c));
      EXPECT_EQ(diff, -1) << "interior (" << f.interior[0] << "," << f.interior[1] << ","
                          << f.interior[2] << ") k=" << k << ": first difference at cell " << diff;
    }
  }
}

TEST(PipelineExecutor, TraceHasOneSpanPerChunkAndOperation) {
  const field_layout f{{8, 6, 12}, 1};
  const chunk_plan plan(f, 1, 2, 4);
  memory_pool pool(backend_kind::host);
  pipeline_executor<double> executor(backend_kind::host, pool, plan, {2, host_staging::always});
  auto in = funnel::test::random_field<double>(f, fresh_seed());
  auto out = in;
  funnel::trace_recorder trace("test", 0);
  const auto stats = executor.run(in.data(), out.data(), heat_callback(), &trace);
  EXPECT_TRUE(stats.staged_input);
  EXPECT_TRUE(stats.staged_output);
  for (const std::string name : {"stage in", "h2d", "kernel", "d2h", "stage out"}) {
    int seen = 0;
    for (const auto& span : trace.spans()) {
      if (trace.tracks()[static_cast<std::size_t>(span.track)] != name) continue;
      EXPECT_EQ(span.name, name);
      ASSERT_GE(span.args.size(), 2u);
      EXPECT_EQ(span.args[0].key, "chunk");
      EXPECT_EQ(span.args[0].value, seen);
      EXPECT_EQ(span.args[1].key, "bytes");
      const auto& ch = plan[seen];
      const bool out_side = name == "d2h" || name == "stage out";
      EXPECT_EQ(span.args[1].value,
                (out_side ? ch.output_cells : ch.input_cells) * static_cast<std::int64_t>(8));
      EXPECT_GE(span.duration_us, 0.0);
      ++seen;
    }
    EXPECT_EQ(seen, plan.size()) << name;
  }
}

TEST(PipelineExecutor, BenchmarkModesRunAndPipelinedStaysCorrect) {
  const field_layout f{{10, 8, 18}, 1};
  const chunk_plan plan(f, 1, 1, 6);
  memory_pool pool(backend_kind::host);
  pipeline_executor<double> executor(backend_kind::host, pool, plan, {3, host_staging::always});
  const auto initial = funnel::test::random_field<double>(f, fresh_seed());
  std::vector<double> out = initial;
  for (const pass_mode mode : {pass_mode::h2d_only, pass_mode::d2h_only, pass_mode::compute_only,
                               pass_mode::copies_only, pass_mode::serial, pass_mode::pipelined}) {
    const auto stats = executor.run(initial.data(), out.data(), heat_callback(), nullptr, mode);
    EXPECT_EQ(stats.mode, mode);
    const bool copies_in = mode != pass_mode::d2h_only && mode != pass_mode::compute_only;
    const bool copies_out = mode != pass_mode::h2d_only && mode != pass_mode::compute_only;
    EXPECT_EQ(stats.h2d_bytes > 0, copies_in) << to_string(mode);
    EXPECT_EQ(stats.d2h_bytes > 0, copies_out) << to_string(mode);
    EXPECT_EQ(stats.cell_updates > 0, mode == pass_mode::compute_only ||
                                          mode == pass_mode::serial || mode == pass_mode::pipelined)
        << to_string(mode);
    if (mode == pass_mode::serial || mode == pass_mode::pipelined) {
      EXPECT_TRUE(funnel::test::bitwise_equal(
          out, funnel::test::reference_steps(f, initial, 1, coefficient)))
          << to_string(mode);
    }
  }
}

TEST(PipelineExecutor, RejectsBadArguments) {
  const field_layout f{{8, 6, 12}, 1};
  const chunk_plan plan(f, 1, 1, 2);
  memory_pool pool(backend_kind::host);
  EXPECT_THROW(pipeline_executor<double>(backend_kind::host, pool, plan, {0}),
               funnel::invalid_argument);
  pipeline_executor<double> executor(backend_kind::host, pool, plan);
  std::vector<double> field(static_cast<std::size_t>(f.allocated_cells()));
  EXPECT_THROW((void)executor.run(field.data(), field.data(), heat_callback()),
               funnel::invalid_argument);
  EXPECT_THROW((void)executor.run(nullptr, field.data(), heat_callback()),
               funnel::invalid_argument);
  std::vector<double> other(field.size());
  EXPECT_THROW((void)executor.run(field.data(), other.data(), {}), funnel::invalid_argument);
}

}  // namespace
