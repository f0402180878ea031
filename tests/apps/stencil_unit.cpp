// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Unit tests of funnel-stencil's pieces: options and --config, overlap regions, summary JSON,
// plan printout.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "funnel/error.hpp"
#include "module_loading.hpp"
#include "options.hpp"
#include "plan.hpp"
#include "regions.hpp"
#include "run.hpp"
#include "solver.hpp"
#include "summary.hpp"

namespace fs = funnel::stencil;

namespace {

fs::options parse(std::vector<std::string> args) { return fs::parse_options(args); }

/// The message of the invalid_argument `args` raise ("" when none is raised).
std::string parse_error(std::vector<std::string> args) {
  try {
    fs::options o = fs::parse_options(args);
    fs::resolve_defaults(o, false);
  } catch (const funnel::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string temp_file(const std::string& text) {
  const std::string path =
      ::testing::TempDir() + "stencil_unit_" + std::to_string(std::random_device{}()) + ".conf";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(StencilOptions, LongOptionsBothSpellings) {
  const auto o = parse({"--problem", "heat3d", "--n=12,10,8", "--steps", "7", "--dtype=float",
                        "--dims", "2,1,3", "--check-every", "3", "--quiet"});
  EXPECT_EQ(o.problem, fs::problem_kind::heat3d);
  EXPECT_EQ(*o.n, (funnel::index3{12, 10, 8}));
  EXPECT_EQ(*o.steps, 7);
  EXPECT_EQ(*o.dtype, fs::scalar_type::float32);
  EXPECT_EQ(o.dims, (std::array<int, 3>{2, 1, 3}));
  EXPECT_EQ(*o.check_every, 3);
  EXPECT_TRUE(o.quiet);
}

TEST(StencilOptions, JacobiReferenceSpellingSelectsJacobi) {
  const auto o = parse({"-nx", "130", "-ny", "66", "-niter", "50", "-nccheck", "5"});
  EXPECT_EQ(o.problem, fs::problem_kind::jacobi2d);
  EXPECT_EQ(*o.n, (funnel::index3{130, 66, 1}));
  EXPECT_EQ(*o.steps, 50);
  EXPECT_EQ(*o.check_every, 5);
  // A missing -ny takes -nx's value, as the reference's defaults are square.
  EXPECT_EQ(*parse({"-nx", "40"}).n, (funnel::index3{40, 40, 1}));
}

TEST(StencilOptions, DefaultsDependOnBackendAndProblem) {
  auto host = parse({});
  fs::resolve_defaults(host, false);
  auto gpu = parse({});
  fs::resolve_defaults(gpu, true);
  EXPECT_LT((*host.n)[0], (*gpu.n)[0]);
  EXPECT_EQ(*host.dtype, fs::scalar_type::float64);
  auto jacobi = parse({"--problem", "jacobi2d"});
  fs::resolve_defaults(jacobi, false);
  EXPECT_EQ(*jacobi.dtype, fs::scalar_type::float32);
  EXPECT_EQ(*jacobi.check_every, 1);
  EXPECT_EQ((*jacobi.n)[2], 1);
}

TEST(StencilOptions, RestartTakesAnOptionalValue) {
  EXPECT_EQ(*parse({"--restart"}).restart, "");
  EXPECT_EQ(*parse({"--restart", "--quiet"}).restart, "");
  EXPECT_EQ(*parse({"--restart", "ckpt/ckpt-00000010"}).restart, "ckpt/ckpt-00000010");
  EXPECT_FALSE(parse({}).restart.has_value());
}

TEST(StencilOptions, ConfigFileIsOverriddenByCommandLine) {
  const auto path =
      temp_file("# a run\nproblem = heat3d\nn = 8,9,10   # cells\nsteps = 4\nquiet = true\n\n");
  const auto o = parse({"--steps", "11", "--config", path});
  EXPECT_EQ(*o.n, (funnel::index3{8, 9, 10}));
  EXPECT_EQ(*o.steps, 11);
  EXPECT_TRUE(o.quiet);
  std::remove(path.c_str());
}

TEST(StencilOptions, ConfigTextRoundTrips) {
  auto o = parse(
      {"--n", "6,7,8", "--steps", "9", "--dtype", "float", "--dims", "1,2,1", "--graphs", "off"});
  fs::resolve_defaults(o, false);
  const auto path = temp_file(fs::to_config_text(o));
  auto back = parse({"--config", path});
  fs::resolve_defaults(back, false);
  EXPECT_EQ(*back.n, *o.n);
  EXPECT_EQ(*back.steps, *o.steps);
  EXPECT_EQ(*back.dtype, *o.dtype);
  EXPECT_EQ(back.dims, o.dims);
  EXPECT_FALSE(back.graphs);
  std::remove(path.c_str());
}

// --row-align: none keeps rows of n + 2 cells; 16 puts each row's interior on 16 bytes (4
// floats, 2 doubles), resident mode only. The value survives the config text.
TEST(StencilOptions, RowAlignPadsRowsToSixteenBytes) {
  const std::vector<fs::row_shape> odd_rows{{8193, 20'000'000}};
  const std::vector<fs::row_shape> even_rows{{16384, 20'000'000}};
  auto o = parse({"--problem", "jacobi2d", "--row-align", "none"});
  fs::resolve_defaults(o, false);
  EXPECT_EQ(fs::row_align_of(o, "cuda", odd_rows), 1);
  auto padded = parse({"--dtype", "float", "--row-align", "16"});
  fs::resolve_defaults(padded, false);
  EXPECT_EQ(fs::row_align_of(padded, "host", even_rows), 4);
  EXPECT_EQ(fs::auto_padded_row(padded, "cuda", odd_rows), 0);  // asked for, not chosen
  auto d = parse({"--dtype", "double", "--row-align", "16"});
  fs::resolve_defaults(d, false);
  EXPECT_EQ(fs::row_align_of(d, "cuda", even_rows), 2);
  auto jacobi = parse({"--problem", "jacobi2d", "--row-align", "16"});
  fs::resolve_defaults(jacobi, false);
  EXPECT_EQ(fs::row_align_of(jacobi, "kokkos", even_rows), 4);
  EXPECT_NE(parse_error({"--mode", "streamed", "--row-align", "16"})
                .find("--row-align 16: applies to --mode resident only"),
            std::string::npos);
  const auto path = temp_file(fs::to_config_text(padded));
  auto back = parse({"--config", path});
  EXPECT_EQ(back.row_align, "16");
  std::remove(path.c_str());
}

// --row-align auto (the default) pads jacobi2d's rows for funnel's cuda kernel where some rank's
// row of n + 2 floats is not a multiple of 16 bytes (that kernel then loads 1 or 2 floats at a
// time) and its box holds at least 10^7 cells, and nowhere else: measured faster padded on such
// boxes, slower on smaller ones.
TEST(StencilOptions, RowAlignAutoPadsLargeJacobiBoxesWithRowsTheCudaKernelCannotLoadFourWide) {
  using rows = std::vector<fs::row_shape>;
  auto jacobi = parse({"--problem", "jacobi2d"});
  fs::resolve_defaults(jacobi, true);
  EXPECT_EQ(jacobi.row_align, "auto");
  // 16384^2 (16382^2 interior cells) split 2 x 8 and 3 x 8: padded, measured faster.
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{8193, 8191 * 2048}}), 4);
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{5463, 5461 * 2048}, {5462, 5460 * 2048}}), 4);
  // 4 x 8 and 6 x 8: boxes under 10^7 cells, measured slower padded.
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{4098, 4096 * 2048}, {4097, 4095 * 2048}}), 1);
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{2733, 2731 * 2048}}), 1);
  // The same rows in larger boxes (16384 x 65538 split 4 x 8 and 6 x 8): padded.
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{4098, 4096 * 8192}, {4097, 4095 * 8192}}), 4);
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{2733, 2731 * 8192}}), 4);
  // Long rows in small boxes (16384 x 2050 split 2 x 8): not.
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{8193, 8191 * 256}}), 1);
  // A prime rank count: 16384^2 split 17 x 1, boxes of 963-964 x 16382 cells: padded.
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{966, 964 * 16382}, {965, 963 * 16382}}), 4);
  // A grid one interior row high, boxes one cell thick along y: padded only past the bound.
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{10'000'003, 10'000'001}}), 4);
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{9'000'003, 9'000'001}}), 1);
  // Rows of a multiple of 4 floats never (1 x 16), and the bound itself.
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{16384, 16382 * 1024}}), 1);
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{8193, 10'000'000}}), 4);
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", rows{{8193, 9'999'999}}), 1);
  // One rank's row pads every rank's (one layout a job); the plan line names that row.
  const rows mixed{{16384, 20'000'000}, {16386, 20'000'000}};
  EXPECT_EQ(fs::row_align_of(jacobi, "cuda", mixed), 4);
  EXPECT_EQ(fs::auto_padded_row(jacobi, "cuda", mixed), 16386);
  EXPECT_EQ(fs::auto_padded_row(jacobi, "cuda", rows{{16384, 20'000'000}}), 0);
  const rows odd{{8193, 20'000'000}};
  EXPECT_EQ(fs::row_align_of(jacobi, "host", odd), 1);
  EXPECT_EQ(fs::row_align_of(jacobi, "kokkos", odd), 1);
  auto heat = parse({"--dtype", "float"});
  fs::resolve_defaults(heat, true);
  EXPECT_EQ(heat.row_align, "auto");
  EXPECT_EQ(fs::row_align_of(heat, "cuda", odd), 1);
  auto streamed = parse({"--mode", "streamed", "--dtype", "float"});
  fs::resolve_defaults(streamed, true);
  EXPECT_EQ(fs::row_align_of(streamed, "cuda", odd), 1);
  const auto path = temp_file(fs::to_config_text(jacobi));
  auto back = parse({"--config", path});
  EXPECT_EQ(back.row_align, "auto");
  std::remove(path.c_str());
}

TEST(StencilOptions, BadValuesNameTheValueAndWhatIsAllowed) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--steps", "abc"}, {"--steps 'abc'", "integer >= 0"}},
      {{"--steps", "-3"}, {"--steps '-3'"}},
      {{"--n", "0,4,4"}, {"--n '0,4,4'", "positive"}},
      {{"--n", "4"}, {"--n '4'", "NX,NY"}},
      {{"--problem", "heat2d"}, {"--problem 'heat2d'", "heat3d|jacobi2d"}},
      {{"--dtype", "half"}, {"--dtype 'half'", "float|double"}},
      {{"--backend", "gpu"}, {"--backend 'gpu'", "auto|"}},
      {{"--kernel", "opencl"}, {"--kernel 'opencl'", "host"}},
      {{"--mode", "fast"}, {"--mode 'fast'", "resident|streamed"}},
      {{"--halo", "nccl"}, {"--halo 'nccl'", "auto|ipc|mpi"}},
      {{"--dims", "2,x"}, {"--dims '2,x'"}},
      {{"--keep", "0"}, {"--keep '0'", "an integer in [1, "}},
      {{"--frobnicate"}, {"unknown option '--frobnicate'"}},
      {{"stray"}, {"unexpected argument 'stray'"}},
      {{"--steps"}, {"--steps", "a value"}},
      {{"--quiet=maybe"}, {"--quiet 'maybe'"}},
      {{"--problem", "jacobi2d", "--dtype", "double"}, {"--dtype 'double'", "float"}},
      {{"--problem", "heat3d", "-nx", "10"}, {"-nx/-ny", "--n"}},
      {{"-nx", "3"}, {"-nx '3'", ">= 4"}},
      {{"--problem", "jacobi2d", "--n", "64,3"}, {"--n '64,3'", ">= 4"}},
      {{"--n", "1,64,64"}, {"--n '1,64,64'", "axes of one cell last"}},
      {{"--n", "64,1,64"}, {"--n '64,1,64'", "axes of one cell last"}},
      {{"--n", "1,1,1"}, {"--n '1,1,1'", "more than one cell"}},
      {{"--chunks", "4"}, {"--chunks", "--mode streamed"}},
      {{"--graphs", "on"}, {"--graphs 'on'", "auto|off"}},
      {{"--mode", "streamed", "--graphs", "off"}, {"--graphs off", "--mode resident"}},
      {{"--config", "/nonexistent/funnel.conf"}, {"--config '/nonexistent/funnel.conf'"}},
  };
  for (const auto& [args, fragments] : cases) {
    const std::string message = parse_error(args);
    ASSERT_FALSE(message.empty()) << "accepted: " << args.front();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const auto& fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "'" << message << "' lacks '" << fragment << "'";
    }
  }
}

TEST(StencilOptions, BadConfigLinesNameFileAndLine) {
  const auto path = temp_file("steps = 3\nthis line has no equals\n");
  const std::string message = parse_error({"--config", path});
  EXPECT_NE(message.find(path + ":2"), std::string::npos) << message;
  const auto unknown = temp_file("speed = 11\n");
  EXPECT_NE(parse_error({"--config", unknown}).find("unknown key 'speed'"), std::string::npos);
  // Two names of one option are one setting: the second is refused, not silently preferred.
  const auto aliases = temp_file("steps = 2\nniter = 3\n");
  const std::string twice = parse_error({"--config", aliases});
  EXPECT_NE(twice.find(aliases + ":2: 'niter' sets what 'steps' on line 1"), std::string::npos)
      << twice;
  std::remove(path.c_str());
  std::remove(unknown.c_str());
  std::remove(aliases.c_str());
}

namespace {

/// Counts how often each interior cell is covered by the inner box and the slabs.
void expect_exact_tiling(const funnel::field_layout& layout,
                         const funnel::neighbour_faces& exchanged = fs::all_faces) {
  const auto regions = fs::split_for_overlap(layout, 1, exchanged);
  std::vector<int> hits(static_cast<std::size_t>(layout.allocated_cells()), 0);
  std::vector<funnel::box> all = regions.boundary;
  all.push_back(regions.inner);
  for (const auto& b : all) {
    for (auto k = b.lo[2]; k < b.hi[2]; ++k)
      for (auto j = b.lo[1]; j < b.hi[1]; ++j)
        for (auto i = b.lo[0]; i < b.hi[0]; ++i) ++hits[layout.index(i, j, k)];
  }
  const auto interior = layout.interior_box();
  for (std::int64_t k = 0; k < layout.allocated(2); ++k)
    for (std::int64_t j = 0; j < layout.allocated(1); ++j)
      for (std::int64_t i = 0; i < layout.allocated(0); ++i) {
        const bool inside = i >= interior.lo[0] && i < interior.hi[0] && j >= interior.lo[1] &&
                            j < interior.hi[1] && k >= interior.lo[2] && k < interior.hi[2];
        ASSERT_EQ(hits[layout.index(i, j, k)], inside ? 1 : 0) << i << "," << j << "," << k;
      }
  // The inner box needs no exchanged ghost: it keeps one cell off every exchanged face with
  // ghosts, and reaches the faces that are not exchanged.
  if (!regions.inner.empty()) {
    for (int a = 0; a < 3; ++a) {
      if (layout.halo_along(a) == 0) continue;
      EXPECT_EQ(regions.inner.lo[a], interior.lo[a] + (exchanged.has(a, 0) ? 1 : 0));
      EXPECT_EQ(regions.inner.hi[a], interior.hi[a] - (exchanged.has(a, 1) ? 1 : 0));
    }
  }
}

}  // namespace

// --steps-per-launch auto: 2 only for the CUDA kernel on resident heat3d whose rank's field is
// at least the L2 cache, on a box a 2-deep halo fits, with --halo-depth auto or 2.
TEST(StencilOptions, AutoStepsPerLaunchFollowsTheFieldAgainstL2) {
  const std::size_t l2 = std::size_t{50} << 20;
  const auto layout = [](funnel::index3 interior) {
    funnel::field_layout l;
    l.interior = interior;
    return l;
  };
  const auto choice = [&](std::vector<std::string> args, const std::string& kernel,
                          funnel::index3 box, std::size_t cache) {
    fs::options o = parse(std::move(args));
    fs::resolve_defaults(o, true);
    return fs::auto_steps_per_launch(o, kernel, layout(box), cache);
  };
  // float: 64 x 512 x 512 is 64 MiB (>= 50 MiB), 768 x 96 x 96 is 27 MiB.
  EXPECT_EQ(choice({"--dtype", "float"}, "cuda", {64, 512, 512}, l2), 2);
  EXPECT_EQ(choice({"--dtype", "float"}, "cuda", {768, 96, 96}, l2), 1);
  // The boundary: exactly the cache takes 2, one plane of cells less 1.
  EXPECT_EQ(
      choice({"--dtype", "double"}, "cuda", {128, 128, 400}, std::size_t{128} * 128 * 400 * 8), 2);
  EXPECT_EQ(
      choice({"--dtype", "double"}, "cuda", {128, 128, 399}, std::size_t{128} * 128 * 400 * 8), 1);
  EXPECT_EQ(choice({"--dtype", "float"}, "host", {64, 512, 512}, l2), 1);
  EXPECT_EQ(choice({"--dtype", "float"}, "kokkos", {64, 512, 512}, l2), 1);
  EXPECT_EQ(choice({"--dtype", "float"}, "cuda", {64, 512, 512}, 0), 1);  // no GPU
  EXPECT_EQ(choice({"--dtype", "float", "--halo-depth", "3"}, "cuda", {64, 512, 512}, l2), 1);
  EXPECT_EQ(choice({"--dtype", "float", "--halo-depth", "2"}, "cuda", {64, 512, 512}, l2), 2);
  EXPECT_EQ(choice({"--dtype", "float"}, "cuda", {1, 8192, 8192}, l2), 1);  // 1-cell box
  EXPECT_EQ(choice({"--problem", "jacobi2d", "--n", "16384,16384"}, "cuda", {16384, 16384, 1}, l2),
            1);
  EXPECT_EQ(choice({"--dtype", "float", "--mode", "streamed"}, "cuda", {64, 512, 512}, l2), 1);
}

// --steps-per-launch auto also takes 2 where 4 or more ranks share the GPU under MPS and each
// box is at least 96 cells along x and 2^19 cells (launch- and exchange-bound), whatever the
// cache.
TEST(StencilOptions, AutoStepsPerLaunchPairsRanksSharingAGpu) {
  const std::size_t l2 = std::size_t{50} << 20;
  const auto choice = [&](std::vector<std::string> args, const std::string& kernel,
                          funnel::index3 box, std::size_t cache, int sharing) {
    fs::options o = parse(std::move(args));
    fs::resolve_defaults(o, true);
    funnel::field_layout l;
    l.interior = box;
    return fs::auto_steps_per_launch(o, kernel, l, cache, sharing);
  };
  const std::vector<std::string> f{"--dtype", "float"};
  EXPECT_EQ(choice(f, "cuda", {96, 96, 96}, l2, 8), 2);   // 768x96x96 on 8 ranks
  EXPECT_EQ(choice(f, "cuda", {192, 96, 96}, l2, 4), 2);  // on 4
  EXPECT_EQ(choice(f, "cuda", {256, 96, 96}, l2, 3), 1);  // 3 ranks: no gain measured
  EXPECT_EQ(choice(f, "cuda", {48, 96, 96}, l2, 16), 1);  // boxes too narrow
  EXPECT_EQ(choice(f, "cuda", {96, 96, 48}, l2, 16), 1);  // too small: 16 ranks of that grid
  EXPECT_EQ(choice(f, "cuda", {96, 48, 48}, l2, 32), 1);
  EXPECT_EQ(choice(f, "cuda", {128, 64, 64}, l2, 8), 2);  // 2^19 cells
  EXPECT_EQ(choice(f, "cuda", {128, 64, 63}, l2, 8), 1);
  EXPECT_EQ(choice({"--dtype", "double"}, "cuda", {256, 128, 128}, l2, 4), 2);  // 256^3 on 4
  EXPECT_EQ(choice(f, "cuda", {95, 96, 96}, l2, 8), 1);
  EXPECT_EQ(choice(f, "cuda", {96, 96, 96}, l2, 0), 1);  // time-sliced or alone
  EXPECT_EQ(choice(f, "cuda", {96, 96, 96}, l2, 1), 1);
  EXPECT_EQ(choice(f, "cuda", {96, 96, 96}, 0, 8), 1);   // no GPU
  EXPECT_EQ(choice(f, "host", {96, 96, 96}, l2, 8), 1);  // not the CUDA kernel
  EXPECT_EQ(choice(f, "cuda", {96, 96, 1}, l2, 8), 1);   // not 3D
  EXPECT_EQ(choice({"--dtype", "float", "--halo-depth", "1"}, "cuda", {96, 96, 96}, l2, 8), 1);
}

// --halo-overlap for the steps of CUDA graphs: auto overlaps them up to 4 ranks a GPU under MPS at
// one step per launch; on and off are what they say.
TEST(StencilOptions, GraphOverlapAutoUpToFourRanksAtOneStepPerLaunch) {
  EXPECT_TRUE(fs::graph_overlap("auto", false, 1, 1));
  EXPECT_TRUE(fs::graph_overlap("auto", false, 4, 1));
  EXPECT_FALSE(fs::graph_overlap("auto", false, 5, 1));
  EXPECT_FALSE(fs::graph_overlap("auto", false, 2, 2));  // pairs: measured slower overlapped
  EXPECT_FALSE(fs::graph_overlap("auto", true, 2, 1));   // time-sliced
  EXPECT_TRUE(fs::graph_overlap("on", true, 32, 2));
  EXPECT_FALSE(fs::graph_overlap("off", false, 1, 1));
}

TEST(StencilRegions, InnerAndBoundaryTileTheInterior) {
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> extent(1, 7);
  for (int trial = 0; trial < 50; ++trial) {
    funnel::field_layout layout;
    layout.interior = {extent(random), extent(random), trial % 5 == 0 ? 1 : extent(random)};
    expect_exact_tiling(layout);
  }
  funnel::field_layout jacobi;
  jacobi.interior = {9, 5, 1};
  expect_exact_tiling(jacobi);
  EXPECT_EQ(fs::split_for_overlap(jacobi, 1).boundary.size(), 4U);
}

TEST(StencilRegions, OnlyExchangedFacesGetBoundarySlabs) {
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> extent(1, 7);
  std::bernoulli_distribution coin(0.5);
  for (int trial = 0; trial < 100; ++trial) {
    funnel::field_layout layout;
    layout.interior = {extent(random), extent(random), trial % 5 == 0 ? 1 : extent(random)};
    funnel::neighbour_faces exchanged;
    for (auto& axis : exchanged.open) axis = {coin(random), coin(random)};
    expect_exact_tiling(layout, exchanged);
  }
  // A rank of an x split: only its two x faces wait for the exchange.
  funnel::field_layout box;
  box.interior = {6, 6, 6};
  const funnel::neighbour_faces x_only{{{{true, true}, {false, false}, {false, false}}}};
  const auto regions = fs::split_for_overlap(box, 1, x_only);
  EXPECT_EQ(regions.boundary.size(), 2U);
  EXPECT_EQ(regions.inner.extents(), (funnel::index3{4, 6, 6}));
}

// The overlapped order of two-step launches: the seconds tile the interior; each first holds
// its second and every cell the second step reads, except fixed wall cells; no first leaves the
// region the first step may compute after an exchange; and the inner pair reads no ghost the
// exchange writes (it runs while the exchange does).
TEST(StencilRegions, OverlapPairsTileTheInteriorAndReadNoGhostInside) {
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> extent(1, 9);
  std::bernoulli_distribution coin(0.5);
  const auto inside = [](const funnel::box& b, std::int64_t i, std::int64_t j, std::int64_t k) {
    return i >= b.lo[0] && i < b.hi[0] && j >= b.lo[1] && j < b.hi[1] && k >= b.lo[2] &&
           k < b.hi[2];
  };
  for (int trial = 0; trial < 200; ++trial) {
    funnel::field_layout layout;
    layout.halo = 2;
    layout.interior = {extent(random), extent(random), trial % 7 == 0 ? 1 : extent(random)};
    funnel::neighbour_faces exchanged;
    for (auto& axis : exchanged.open) axis = {coin(random), coin(random)};
    const auto pairs = fs::overlap_pairs(layout, exchanged);
    const funnel::box reach = fs::regions_after_exchange(layout, exchanged, 2).front();
    const funnel::box interior = layout.interior_box();
    ASSERT_FALSE(pairs.empty());
    std::vector<int> hits(static_cast<std::size_t>(layout.allocated_cells()), 0);
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      const auto& [first, second] = pairs[p];
      if (second.empty()) continue;
      for (int a = 0; a < 3; ++a) {
        EXPECT_LE(first.lo[a], second.lo[a]);
        EXPECT_GE(first.hi[a], second.hi[a]);
        EXPECT_GE(first.lo[a], reach.lo[a]);
        EXPECT_LE(first.hi[a], reach.hi[a]);
        if (p == 0 && layout.halo_along(a) > 0) {
          // The first step of the inner pair reads first grown by one: no exchanged ghost.
          if (exchanged.has(a, 0)) {
            EXPECT_GE(first.lo[a] - 1, interior.lo[a]);
          }
          if (exchanged.has(a, 1)) {
            EXPECT_LE(first.hi[a] + 1, interior.hi[a]);
          }
        }
      }
      for (auto k = second.lo[2]; k < second.hi[2]; ++k)
        for (auto j = second.lo[1]; j < second.hi[1]; ++j)
          for (auto i = second.lo[0]; i < second.hi[0]; ++i) {
            ++hits[layout.index(i, j, k)];
            const std::int64_t around[6][3] = {{i - 1, j, k}, {i + 1, j, k}, {i, j - 1, k},
                                               {i, j + 1, k}, {i, j, k - 1}, {i, j, k + 1}};
            for (const auto& n : around) {
              if (!inside(reach, n[0], n[1], n[2])) continue;  // a wall cell or no axis
              EXPECT_TRUE(inside(first, n[0], n[1], n[2]))
                  << "pair " << p << " reads " << n[0] << "," << n[1] << "," << n[2];
            }
          }
    }
    for (auto k = interior.lo[2]; k < interior.hi[2]; ++k)
      for (auto j = interior.lo[1]; j < interior.hi[1]; ++j)
        for (auto i = interior.lo[0]; i < interior.hi[0]; ++i)
          ASSERT_EQ(hits[layout.index(i, j, k)], 1) << i << "," << j << "," << k;
  }
}

TEST(StencilSummary, JsonHasTheFiguresAndRatesFollowFromThem) {
  fs::run_summary s;
  s.version = "9.9.9";
  s.problem = "heat3d";
  s.dtype = "double";
  s.global_cells = {10, 20, 30};
  s.first_step = 5;
  s.last_step = 15;
  s.seconds = 2.0;
  s.halo_seconds = 0.5;
  s.element_size = 8;
  s.error = fs::error_report{1e-3, 2e-4};
  s.row_align_bytes = 16;
  const auto json = nlohmann::json::parse(fs::to_json(s));
  EXPECT_DOUBLE_EQ(s.cell_updates_per_second(), 6000.0 * 10 / 2.0);
  EXPECT_DOUBLE_EQ(s.effective_bandwidth(), s.cell_updates_per_second() * 16);
  EXPECT_DOUBLE_EQ(s.halo_share(), 0.25);
  EXPECT_EQ(json.at("funnel_version"), "9.9.9");
  EXPECT_EQ(json.at("steps"), 10);
  EXPECT_EQ(json.at("time_s"), 2.0);
  EXPECT_EQ(json.at("halo_time_share"), 0.25);
  EXPECT_EQ(json.at("error").at("max_abs"), 1e-3);
  EXPECT_EQ(json.at("global_cells"), nlohmann::json::array({10, 20, 30}));
  EXPECT_EQ(json.at("row_align_bytes"), 16);
  EXPECT_EQ(json.at("cell_updates_per_s"), 30000.0);
  EXPECT_FALSE(json.contains("final_norm"));
  EXPECT_NE(fs::format_summary(s).find("error vs exact solution"), std::string::npos);
}

TEST(StencilPlan, NamesRanksDecompositionAndPaths) {
  fs::plan_info p;
  p.ranks = 4;
  p.dims = {2, 2, 1};
  p.smallest_box = {8, 8, 16};
  p.largest_box = {9, 8, 16};
  p.rank0_paths = {"x+ rank 2 mpi"};
  p.mpi_links = 8;
  p.gpus = 1;
  p.ranks_per_gpu = 4;
  p.mps = "no";
  p.warnings = {"4 ranks share GPU 0 without MPS"};
  const std::string text = fs::format_plan(p);
  for (const char* part : {"ranks 4", "decomposition 2x2x1", "8x8x16 .. 9x8x16", "x+ rank 2 mpi",
                           "ranks per GPU 4", "MPS no", "WARNING: 4 ranks share"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " not in " << text;
  }
}

TEST(StencilPlan, SaysWhenRowsArePadded) {
  fs::plan_info p;
  p.ranks = 1;
  p.dims = {1, 1, 1};
  EXPECT_EQ(fs::format_plan(p).find("rows padded"), std::string::npos);
  p.row_align_bytes = 16;
  const std::string text = fs::format_plan(p);
  EXPECT_NE(text.find("rows padded: interior on 16 B"), std::string::npos) << text;
  EXPECT_EQ(text.find("--row-align auto"), std::string::npos) << text;
  p.auto_padded_row = 16386;  // --row-align auto chose it, for that row
  const std::string chosen = fs::format_plan(p);
  EXPECT_NE(chosen.find("rows padded: interior on 16 B (--row-align auto: rows of 16386 cells)"),
            std::string::npos)
      << chosen;
}

TEST(StencilPlan, SaysWhenStepsRunAsGraphs) {
  fs::plan_info p;
  p.ranks = 8;
  p.dims = {8, 1, 1};
  EXPECT_EQ(fs::format_plan(p).find("CUDA graph"), std::string::npos);
  p.steps_per_graph = 8;
  const std::string text = fs::format_plan(p);
  EXPECT_NE(text.find("steps: 8 per CUDA graph on rank 0"), std::string::npos) << text;
  EXPECT_NE(text.find("exchange, then update every cell"), std::string::npos) << text;
  p.halo_pushed = true;
  const std::string pushed = fs::format_plan(p);
  EXPECT_NE(pushed.find("one kernel a step: it updates every cell and pushes its faces"),
            std::string::npos)
      << pushed;
  EXPECT_EQ(pushed.find("exchange, then"), std::string::npos) << pushed;
  p.halo_pushed = false;
  p.halo_overlapped = true;
  const std::string overlapped = fs::format_plan(p);
  EXPECT_NE(overlapped.find("per CUDA graph on rank 0 (the inner cells update while the faces "
                            "travel)"),
            std::string::npos)
      << overlapped;
}

TEST(StencilPlan, SaysHowCudaLoadsTheKernels) {
  fs::plan_info p;
  p.backend = "host";
  p.module_loading = "EAGER";
  EXPECT_EQ(fs::format_plan(p).find("CUDA kernels"), std::string::npos);
  p.backend = "cuda";
  EXPECT_NE(fs::format_plan(p).find("CUDA kernels: loaded at start (CUDA_MODULE_LOADING=EAGER)"),
            std::string::npos)
      << fs::format_plan(p);
  p.module_loading = "LAZY";
  EXPECT_NE(fs::format_plan(p).find("CUDA_MODULE_LOADING=LAZY (from the environment, kept)"),
            std::string::npos)
      << fs::format_plan(p);
  p.module_loading.clear();  // settle_module_loading could not set it
  EXPECT_NE(fs::format_plan(p).find("CUDA kernels: CUDA's default loading"), std::string::npos)
      << fs::format_plan(p);
}

/// Restores CUDA_MODULE_LOADING as it was when constructed.
class module_loading_env {
 public:
  module_loading_env() {
    const char* v = std::getenv("CUDA_MODULE_LOADING");
    if (v != nullptr) saved_ = v;
    had_ = v != nullptr;
  }
  module_loading_env(const module_loading_env&) = delete;
  module_loading_env& operator=(const module_loading_env&) = delete;
  ~module_loading_env() {
    if (had_) {
      ::setenv("CUDA_MODULE_LOADING", saved_.c_str(), 1);
    } else {
      ::unsetenv("CUDA_MODULE_LOADING");
    }
  }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(StencilModuleLoading, EagerUnlessTheUserChose) {
  const module_loading_env restore;
  ::unsetenv("CUDA_MODULE_LOADING");
  EXPECT_EQ(fs::settle_module_loading(), "EAGER");
  EXPECT_STREQ(std::getenv("CUDA_MODULE_LOADING"), "EAGER");
  ::setenv("CUDA_MODULE_LOADING", "", 1);  // empty: unset for CUDA, so overwritten
  EXPECT_EQ(fs::settle_module_loading(), "EAGER");
  EXPECT_STREQ(std::getenv("CUDA_MODULE_LOADING"), "EAGER");
  ::setenv("CUDA_MODULE_LOADING", "LAZY", 1);  // the user's choice is kept
  EXPECT_EQ(fs::settle_module_loading(), "LAZY");
  EXPECT_STREQ(std::getenv("CUDA_MODULE_LOADING"), "LAZY");
  EXPECT_EQ(fs::module_loading(), "LAZY");  // what the plan line reports
  ::unsetenv("CUDA_MODULE_LOADING");
  EXPECT_EQ(fs::module_loading(), "");
}

TEST(StencilRun, ChunksEndOnWholeGraphsFromTheFirstStep) {
  // No graphs: the chunk as agreed.
  EXPECT_EQ(fs::chunk_end(10, 7, 0, 1), 17);
  // From the first step on the grid: whole graphs.
  EXPECT_EQ(fs::chunk_end(0, 8, 0, 8), 8);
  EXPECT_EQ(fs::chunk_end(16, 32, 0, 8), 48);
  // After a stop off the grid (a check every 10 steps): back on it.
  EXPECT_EQ(fs::chunk_end(10, 16, 0, 8), 24);
  EXPECT_EQ(fs::chunk_end(10, 8, 0, 8), 16);
  // The grid counts from the step the loop started at (a restart at step 5).
  EXPECT_EQ(fs::chunk_end(5, 8, 5, 8), 13);
  EXPECT_EQ(fs::chunk_end(15, 16, 5, 8), 29);
  // No end on the grid beyond the step: the chunk as agreed.
  EXPECT_EQ(fs::chunk_end(10, 4, 0, 8), 14);
}

TEST(StencilSummary, SaysWhetherTheExchangeWasPushed) {
  fs::run_summary s;
  s.seconds = 1.0;
  s.halo_seconds = 0.25;
  for (const bool pushed : {false, true}) {
    s.halo_pushed = pushed;
    EXPECT_EQ(nlohmann::json::parse(fs::to_json(s)).at("halo_pushed").get<bool>(), pushed);
    const std::string text = fs::format_summary(s);
    EXPECT_EQ(text.find("halo share 25.0%") != std::string::npos, !pushed) << text;
    EXPECT_EQ(text.find("halo pushed by the update (not timed)") != std::string::npos, pushed)
        << text;
  }
}

TEST(StencilSummary, OutputTimeOnlyWhenSomethingWasWritten) {
  fs::run_summary s;
  s.seconds = 1.0;
  EXPECT_EQ(fs::format_summary(s).find("output"), std::string::npos) << fs::format_summary(s);
  s.outputs = 3;
  s.output_seconds = 0.25;
  EXPECT_NE(fs::format_summary(s).find("output at 3 step(s) in 0.250 s"), std::string::npos)
      << fs::format_summary(s);
  EXPECT_EQ(nlohmann::json::parse(fs::to_json(s)).at("outputs"), 3);
}

TEST(StencilSummary, StreamedModeReportsThePipeline) {
  fs::run_summary s;
  s.seconds = 1.0;
  EXPECT_FALSE(nlohmann::json::parse(fs::to_json(s)).contains("pipeline"));
  fs::pipeline_report p;
  p.passes = 4;
  p.efficiency = 0.75;
  p.pass_seconds = 2.0;
  p.h2d_seconds = 1.5;
  p.d2h_seconds = 1.25;
  p.kernel_seconds = 0.5;
  p.h2d_bytes_per_s = 3e9;
  p.d2h_bytes_per_s = 4e9;
  p.choice = "chunks=8 streams=3 steps-per-pass=2 (test)";
  s.pipeline = p;
  const std::string text = fs::format_summary(s);
  for (const char* part : {"4 passes", "efficiency 0.75", "T_H2D 1.5 s", "T_D2H 1.25 s",
                           "T_kernel 0.5 s", "H2D 3 GB/s", "D2H 4 GB/s", "chunks=8 streams=3"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " not in " << text;
  }
  const auto pipeline = nlohmann::json::parse(fs::to_json(s)).at("pipeline");
  EXPECT_EQ(pipeline.at("efficiency"), 0.75);
  EXPECT_EQ(pipeline.at("h2d_time_s"), 1.5);
  EXPECT_EQ(pipeline.at("d2h_time_s"), 1.25);
  EXPECT_EQ(pipeline.at("kernel_time_s"), 0.5);
  EXPECT_EQ(pipeline.at("h2d_bytes_per_s"), 3e9);
  EXPECT_EQ(pipeline.at("passes"), 4);
  EXPECT_EQ(pipeline.at("choice"), p.choice);
}

TEST(StencilOptions, StreamedOptionsAndPoolLimit) {
  const fs::options o = fs::parse_options(
      {"--mode", "streamed", "--steps-per-pass", "3", "--chunks", "7", "--pool-limit", "64M"});
  EXPECT_EQ(o.mode, fs::run_mode::streamed);
  EXPECT_EQ(o.steps_per_pass, 3);
  EXPECT_EQ(o.chunks, 7);
  ASSERT_TRUE(o.pool_limit.has_value());
  EXPECT_EQ(*o.pool_limit, std::size_t{64} << 20);
  EXPECT_EQ(*fs::parse_options({"--pool-limit", "4096"}).pool_limit, 4096U);
  for (const char* bad : {"0", "-1", "12Q", "K", "1.5G"}) {
    EXPECT_THROW((void)fs::parse_options({"--pool-limit", bad}), funnel::invalid_argument) << bad;
  }
}

// apps/common: what both programs print about input.
TEST(AppCommon, EchoEscapesAndCuts) {
  EXPECT_EQ(funnel::app::echo("plain 1,2"), "plain 1,2");
  EXPECT_EQ(funnel::app::echo(std::string("a\nb\tc\0d'\\\x1b", 10)), "a\\nb\\tc\\x00d\\'\\\\\\x1b");
  const std::string long_value(100000, 'x');
  const std::string shown = funnel::app::echo(long_value);
  EXPECT_LE(shown.size(), funnel::app::echo_limit + 30);
  EXPECT_NE(shown.find("(100000 bytes)"), std::string::npos) << shown;
  EXPECT_EQ(funnel::app::printable("a\nb\x01"), "a\\nb\\x01");
  // UTF-8 stays, but not the C1 controls (NEL) or the line separators, which end lines too.
  EXPECT_EQ(funnel::app::printable("\xc3\xa9 \xe2\x89\xa5 a\xc2\x85"
                                   "b\xe2\x80\xa8"
                                   "c\xc2"),
            "\xc3\xa9 \xe2\x89\xa5 a\\u0085b\\u2028c\xc2");
}

TEST(AppCommon, ByteCounts) {
  EXPECT_EQ(funnel::app::to_bytes("4096"), 4096U);
  EXPECT_EQ(funnel::app::to_bytes("3k"), 3U << 10);
  EXPECT_EQ(funnel::app::to_bytes("2G"), std::size_t{2} << 30);
  for (const char* bad : {"", "K", "+5", "-1", "0", "1.5G", "99999999999999999999G", "7T"}) {
    EXPECT_THROW((void)funnel::app::to_bytes(bad), funnel::invalid_argument) << bad;
  }
}

TEST(StencilOptions, ConfigFilesAreCheckedLineByLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"steps = 2\nsteps = 3\n", ":2: 'steps' is already set on line 1"},
      {"config = other.conf\n", ":1: 'config' is not valid in a config file"},
      {"steps = 2\nn = 4,x\n", ":2: n '4,x' is not valid"},
      {"dims = \x01\x02\n", ":1: dims '\\x01\\x02' is not valid"},
      {"help = true\n", ":1: 'help' is not valid in a config file"},
  };
  for (const auto& [text, fragment] : cases) {
    const auto path = temp_file(text);
    // The command line gives --n and --steps too: the file's lines are checked all the same.
    const std::string message = parse_error({"--n", "4,4,4", "--steps", "1", "--config", path});
    EXPECT_NE(message.find(path + fragment), std::string::npos)
        << "'" << message << "' lacks '" << path + fragment << "'";
    std::remove(path.c_str());
  }
}

TEST(StencilOptions, ConfigMustBeASmallRegularFile) {
  EXPECT_NE(
      parse_error({"--config", "/dev/null"}).find("--config '/dev/null' is a character device"),
      std::string::npos);
  EXPECT_NE(parse_error({"--config", ::testing::TempDir()}).find("is a directory"),
            std::string::npos);
  const auto big = temp_file(std::string((1 << 20) + 1, '#'));
  EXPECT_NE(parse_error({"--config", big}).find("has 1048577 bytes; at most 1048576"),
            std::string::npos);
  std::remove(big.c_str());
}

TEST(StencilOptions, KokkosOptionsAreKeptForKokkos) {
  const auto o = parse({"--kernel", "host", "--kokkos-threads=2", "--steps", "3"});
  EXPECT_EQ(o.kokkos_args, std::vector<std::string>{"--kokkos-threads=2"});
  EXPECT_EQ(*o.steps, 3);
  EXPECT_NE(parse_error({"--kokkos-threads=2"}).find("without --kernel kokkos"), std::string::npos);
}
