// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Streamed passes across ranks (host backend) equal single steps of the whole field on one
// rank, bitwise: halo exchange (k deep) between passes, faces with neighbours recomputed in
// the halo, k = 1, 2, 3, several chunk counts.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <random>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/halo/halo_exchange.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/pipeline/pipeline_executor.hpp"
#include "stencil_reference.hpp"

namespace {

using funnel::backend_kind;
using funnel::box;
using funnel::chunk_plan;
using funnel::field_layout;
using funnel::stream_view;

constexpr double coefficient = 0.1;

std::uint64_t shared_seed() {
  std::uint64_t seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

funnel::neighbour_faces faces_of(const funnel::cartesian_decomposition& d) {
  funnel::neighbour_faces faces;
  for (int a = 0; a < 3; ++a) {
    faces.open[a][0] = d.neighbor(a, funnel::side::lower) != MPI_PROC_NULL;
    faces.open[a][1] = d.neighbor(a, funnel::side::upper) != MPI_PROC_NULL;
  }
  return faces;
}

// Copies the rank's allocated box (interior + halo) out of the global field (same halo depth).
std::vector<double> local_part(const field_layout& global, const std::vector<double>& field,
                               const field_layout& local, const box& local_box) {
  std::vector<double> part(static_cast<std::size_t>(local.allocated_cells()));
  for (std::int64_t z = 0; z < local.allocated(2); ++z) {
    for (std::int64_t y = 0; y < local.allocated(1); ++y) {
      for (std::int64_t x = 0; x < local.allocated(0); ++x) {
        part[static_cast<std::size_t>(local.index(x, y, z))] = field[static_cast<std::size_t>(
            global.index(x + local_box.lo[0], y + local_box.lo[1], z + local_box.lo[2]))];
      }
    }
  }
  return part;
}

void check_streamed_equals_resident(const funnel::index3& cells, int k, int chunks, int slots,
                                    funnel::host_staging staging) {
  const int passes = 2;
  funnel::cartesian_decomposition decomposition(MPI_COMM_WORLD, cells, k);
  const field_layout global{cells, k};
  const auto initial = funnel::test::random_field<double>(global, shared_seed());
  const auto expected = funnel::test::reference_steps(global, initial, passes * k, coefficient);

  const field_layout local = decomposition.layout();
  const box& mine = decomposition.local_box();
  std::vector<double> in = local_part(global, initial, local, mine);
  std::vector<double> out = in;
  const int most = chunk_plan::max_chunks(local, 1, k);
  const chunk_plan plan(local, 1, k, std::min(chunks, most), faces_of(decomposition));
  funnel::memory_pool pool(backend_kind::host);
  funnel::memory_pool halo_pool(backend_kind::host);
  funnel::halo_exchange halo(decomposition, backend_kind::host, halo_pool, sizeof(double));
  funnel::pipeline_executor<double> executor(backend_kind::host, pool, plan, {slots, staging});
  for (int p = 0; p < passes; ++p) {
    halo.exchange(stream_view::host(), in.data());
    (void)executor.run(
        in.data(), out.data(),
        [](stream_view, const field_layout& layout, const double* a, double* b, const box& region,
           int) { funnel::test::heat_step(layout, a, b, region, coefficient); });
    in.swap(out);
  }
  const std::vector<double> want = local_part(global, expected, local, mine);
  const box interior = local.interior_box();
  int mismatches = 0;
  for (std::int64_t z = interior.lo[2]; z < interior.hi[2]; ++z) {
    for (std::int64_t y = interior.lo[1]; y < interior.hi[1]; ++y) {
      for (std::int64_t x = interior.lo[0]; x < interior.hi[0]; ++x) {
        const auto i = static_cast<std::size_t>(local.index(x, y, z));
        if (std::memcmp(&in[i], &want[i], sizeof(double)) != 0) ++mismatches;
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << "rank " << decomposition.rank() << " k=" << k << " chunks=" << chunks
                           << " (" << plan.describe() << ")";
}

TEST(PipelineMpi, StreamedEqualsResidentAcrossRanks3D) {
  for (const int k : {1, 2, 3}) {
    for (const int chunks : {1, 2, 4}) {
      check_streamed_equals_resident({12, 10, 16}, k, chunks, 2, funnel::host_staging::never);
    }
  }
}

TEST(PipelineMpi, StreamedEqualsResidentAcrossRanks2DWithStaging) {
  for (const int k : {1, 2, 3}) {
    check_streamed_equals_resident({14, 24, 1}, k, 3, 3, funnel::host_staging::always);
  }
}

}  // namespace
