// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Chunk plans: tiling, input halos, per-step regions and every error case.
#include "funnel/pipeline/chunk_plan.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "funnel/error.hpp"

namespace {

using funnel::box;
using funnel::chunk_plan;
using funnel::field_layout;
using funnel::neighbour_faces;

void expect_invalid(const std::function<void()>& call, const std::string& mentions) {
  try {
    call();
    ADD_FAILURE() << "expected funnel::invalid_argument mentioning '" << mentions << "'";
  } catch (const funnel::invalid_argument& e) {
    EXPECT_NE(std::string{e.what()}.find(mentions), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << mentions << "'";
  }
}

// The interior parts of the outputs must cover the field's interior planes once each, in order,
// and each output must sit inside its input.
void expect_tiling(const chunk_plan& plan) {
  const field_layout& f = plan.field();
  const int c = plan.axis();
  std::int64_t next = f.interior_box().lo[c];
  for (const auto& ch : plan.chunks()) {
    EXPECT_EQ(ch.output.lo[c], next) << "chunk " << ch.index;
    EXPECT_GT(ch.output.extent(c), 0) << "chunk " << ch.index;
    EXPECT_LE(ch.input.lo[c], ch.output.lo[c]);
    EXPECT_GE(ch.input.hi[c], ch.output.hi[c]);
    EXPECT_GE(ch.input.lo[c], 0);
    EXPECT_LE(ch.input.hi[c], f.allocated(c));
    EXPECT_EQ(ch.input_cells, ch.input.cells());
    EXPECT_EQ(ch.output_cells, ch.output.cells());
    EXPECT_EQ(ch.input_offset, f.index(ch.input.lo[0], ch.input.lo[1], ch.input.lo[2]));
    EXPECT_EQ(ch.output_offset, f.index(ch.output.lo[0], ch.output.lo[1], ch.output.lo[2]));
    EXPECT_GE(ch.layout.allocated_cells(), ch.input_cells);
    EXPECT_LE(ch.layout.allocated_cells(), plan.max_buffer_cells());
    for (int a = 0; a < c; ++a) EXPECT_EQ(ch.layout.allocated(a), f.allocated(a));
    ASSERT_EQ(static_cast<int>(ch.regions.size()), plan.steps_per_pass());
    // The last step updates exactly the chunk's interior cells.
    box interior = f.interior_box();
    interior.lo[c] = ch.output.lo[c] - ch.input.lo[c];
    interior.hi[c] = ch.output.hi[c] - ch.input.lo[c];
    EXPECT_EQ(ch.regions.back(), interior) << "chunk " << ch.index;
    next = ch.output.hi[c];
  }
  EXPECT_EQ(next, f.interior_box().hi[c]);
  EXPECT_EQ(plan.output_cells_total(), f.interior[c] * plan.plane_cells());
}

// Every cell a step reads (region ± h) must lie in the device buffer's input planes.
void expect_reads_in_bounds(const chunk_plan& plan) {
  const int h = plan.stencil_radius();
  for (const auto& ch : plan.chunks()) {
    for (const box& r : ch.regions) {
      for (int a = 0; a < 3; ++a) {
        if (plan.field().interior[a] == 1) {
          EXPECT_EQ(r.lo[a], 0);
          EXPECT_EQ(r.hi[a], 1);
          continue;
        }
        EXPECT_GE(r.lo[a] - h, 0) << "chunk " << ch.index << " axis " << a;
        EXPECT_LE(r.hi[a] + h, ch.input.extent(a)) << "chunk " << ch.index << " axis " << a;
      }
    }
  }
}

TEST(ChunkPlan, SplitsThreeDimensionalFieldAlongZWithUnevenChunks) {
  const field_layout f{{8, 6, 10}, 1};
  const chunk_plan plan(f, 1, 1, 3);
  EXPECT_EQ(plan.axis(), 2);
  EXPECT_EQ(plan.size(), 3);
  EXPECT_EQ(plan.plane_cells(), 10 * 8);
  EXPECT_EQ(plan[0].output.extent(2), 4);
  EXPECT_EQ(plan[1].output.extent(2), 3);
  EXPECT_EQ(plan[2].output.extent(2), 3);
  // Input of the first chunk starts at the physical halo plane; of the middle chunk, h before.
  EXPECT_EQ(plan[0].input.lo[2], 0);
  EXPECT_EQ(plan[1].input.lo[2], plan[1].output.lo[2] - 1);
  EXPECT_EQ(plan[2].input.hi[2], f.allocated(2));
  expect_tiling(plan);
  expect_reads_in_bounds(plan);
  EXPECT_EQ(plan.describe(), "3 chunks along z of 3-4 planes, k=1, h=1");
}

TEST(ChunkPlan, OneChunkCopiesTheWholeField) {
  const field_layout f{{5, 7, 9}, 2};
  const chunk_plan plan(f, 1, 2, 1);
  ASSERT_EQ(plan.size(), 1);
  EXPECT_EQ(plan[0].input_offset, 0);
  EXPECT_EQ(plan[0].input_cells, f.allocated_cells());
  EXPECT_EQ(plan[0].layout.allocated_cells(), f.allocated_cells());
  // Physical faces: every step updates exactly the interior.
  for (const box& r : plan[0].regions) EXPECT_EQ(r, f.interior_box());
  expect_tiling(plan);
  expect_reads_in_bounds(plan);
}

TEST(ChunkPlan, TwoDimensionalFieldSplitsAlongY) {
  const field_layout f{{12, 9, 1}, 1};
  const chunk_plan plan(f, 1, 3, 2);
  EXPECT_EQ(plan.axis(), 1);
  EXPECT_EQ(plan.plane_cells(), 14);
  EXPECT_EQ(plan[0].output.extent(1), 5);
  EXPECT_EQ(plan[1].output.extent(1), 4);
  // Chunk 0's upper region shrinks by h per step towards chunk 1: 3 steps widen by 2, 1, 0.
  const std::int64_t out_hi = plan[0].output.hi[1] - plan[0].input.lo[1];
  EXPECT_EQ(plan[0].regions[0].hi[1], out_hi + 2);
  EXPECT_EQ(plan[0].regions[1].hi[1], out_hi + 1);
  EXPECT_EQ(plan[0].regions[2].hi[1], out_hi);
  // ... but never into the physical halo below.
  for (const box& r : plan[0].regions) EXPECT_EQ(r.lo[1], 1);
  expect_tiling(plan);
  expect_reads_in_bounds(plan);
}

TEST(ChunkPlan, AsManyChunksAsPlanesAndThinFieldsWork) {
  const field_layout f{{3, 2, 7}, 1};
  const chunk_plan plan(f, 1, 1, 7);
  EXPECT_EQ(plan.size(), 7);
  for (const auto& ch : plan.chunks()) EXPECT_EQ(ch.output.extent(2), 1);
  expect_tiling(plan);
  expect_reads_in_bounds(plan);
  // A deep halo with a thin input: the device layout is padded to stay a valid field_layout.
  const field_layout deep{{4, 4, 6}, 3};
  const chunk_plan thin(deep, 1, 1, 6);
  for (const auto& ch : thin.chunks()) {
    EXPECT_GE(ch.layout.allocated(2), ch.input.extent(2));
    EXPECT_GT(ch.layout.interior[2], 1);
  }
  expect_tiling(thin);
  expect_reads_in_bounds(thin);
}

TEST(ChunkPlan, NeighbourFacesAreRecomputedIntoTheHalo) {
  const field_layout f{{6, 5, 8}, 2};
  neighbour_faces faces;
  faces.open[0][1] = true;  // neighbour on the high x face
  faces.open[2][0] = true;  // neighbour below
  const chunk_plan plan(f, 1, 2, 2, faces);
  const box& first_step = plan[0].regions[0];
  EXPECT_EQ(first_step.lo[0], 2);      // physical low x face: interior only
  EXPECT_EQ(first_step.hi[0], 2 + 7);  // open high x face: one cell into the halo
  EXPECT_EQ(first_step.lo[1], 2);
  EXPECT_EQ(first_step.hi[1], 7);
  EXPECT_EQ(first_step.lo[2] + plan[0].input.lo[2], 1);  // open below: one plane into the halo
  expect_tiling(plan);
  expect_reads_in_bounds(plan);
}

TEST(ChunkPlan, ForChunkBytesPicksTheFewestChunksThatFit) {
  const field_layout f{{16, 16, 64}, 1};
  const std::size_t budget = 18 * 18 * 12 * sizeof(double);
  const chunk_plan plan = chunk_plan::for_chunk_bytes(f, 1, 1, budget, sizeof(double));
  EXPECT_LE(static_cast<std::size_t>(plan.max_buffer_cells()) * sizeof(double), budget);
  ASSERT_GT(plan.size(), 1);
  const chunk_plan fewer(f, 1, 1, plan.size() - 1);
  EXPECT_GT(static_cast<std::size_t>(fewer.max_buffer_cells()) * sizeof(double), budget);
  expect_tiling(plan);
  expect_invalid([&] { (void)chunk_plan::for_chunk_bytes(f, 1, 1, 100, sizeof(double)); },
                 "too small");
}

TEST(ChunkPlan, RejectsBadRequestsWithClearMessages) {
  const field_layout f{{8, 8, 8}, 1};
  expect_invalid([&] { chunk_plan(f, 1, 1, 0); }, "chunks=0");
  expect_invalid([&] { chunk_plan(f, 0, 1, 1); }, "stencil_radius=0");
  expect_invalid([&] { chunk_plan(f, 1, 0, 1); }, "steps_per_pass=0");
  expect_invalid([&] { chunk_plan(f, 1, 1, 9); }, "at most 8 chunks");
  expect_invalid([&] { chunk_plan(f, 2, 1, 1); }, "shallower than the stencil radius");
  // k*h larger than a chunk: 8 planes in 3 chunks give chunks of 2, k*h = 3.
  expect_invalid([&] { chunk_plan(f, 1, 3, 3); }, "at least k*h = 3 planes");
  expect_invalid([&] { chunk_plan(f, 1, 9, 1); }, "exceeds the 8 interior planes");
  neighbour_faces faces;
  faces.open[1][0] = true;
  expect_invalid([&] { chunk_plan(f, 1, 2, 1, faces); }, "halo must be >= k*h");
  expect_invalid(
      [&] {
        chunk_plan(field_layout{{8, 8, 1}, 1}, 1, 1, 1, [] {
          neighbour_faces z;
          z.open[2][1] = true;
          return z;
        }());
      },
      "no halo there");
  expect_invalid([&] { chunk_plan(field_layout{{1, 1, 1}, 1}, 1, 1, 1); }, "single interior cell");
  EXPECT_EQ(chunk_plan::max_chunks(f, 1, 3), 2);
}

}  // namespace
