// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel::halo_exchange across real ranks: after an exchange every ghost cell (faces, edges,
// corners) holds the value of the cell it mirrors, on the rank that owns it (periodic axes
// wrap), and ghosts on a non-periodic global boundary keep what the caller put there.
//
// Compiled for the host backend (halo_mpi_*) and, with HALO_TEST_CUDA=1, the CUDA backend
// (halo_gpu). Fields live in the backend's pool and are filled/read through copy_async.
#include "funnel/halo/halo_exchange.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/error.hpp"
#include "funnel/halo/box_copy.hpp"
#include "funnel/halo/halo_options.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/graph.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"

#ifndef HALO_TEST_CUDA
#define HALO_TEST_CUDA 0
#endif

namespace {

using funnel::box;
using funnel::field_layout;
using funnel::halo_method;
using funnel::index3;

constexpr funnel::backend_kind test_backend =
    HALO_TEST_CUDA ? funnel::backend_kind::cuda : funnel::backend_kind::host;

int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// A random offset shared by all ranks, so values differ from run to run.
double shared_random_offset() {
  static std::mt19937 rng(std::random_device{}());
  double offset = std::uniform_int_distribution<int>(1, 1000)(rng);
  MPI_Bcast(&offset, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return offset;
}

struct scenario {
  std::string name;
  index3 cells;
  int halo;
  std::array<int, 3> dims;
  std::array<bool, 3> periodic;
  int row_align = 1;      ///< field_layout::row_align of every rank's field
  bool reversed = false;  ///< ranks take the boxes in reverse order (a placement)
};

// The scenario's split: with `reversed`, rank p - 1 - r takes the r-th box (x fastest).
funnel::cartesian_decomposition split(const scenario& s) {
  std::vector<int> placement;
  if (s.reversed) {
    for (int r = world_size() - 1; r >= 0; --r) placement.push_back(r);
  }
  return {MPI_COMM_WORLD, s.cells, s.halo, s.dims, s.periodic, placement};
}

std::vector<scenario> scenarios() {
  const int p = world_size();
  return {
      {"3d-auto-split", {10, 9, 8}, 1, {0, 0, 0}, {false, false, false}},
      {"3d-split-along-z-x-periodic-on-one-rank",
       {7, 6, 4 * p + 1},
       2,
       {1, 1, p},
       {true, false, false}},
      {"2d-y-periodic", {13, 11, 1}, 1, {0, 0, 1}, {false, true, false}},
      {"1d-x-periodic-halo-2", {4 * p + 3, 5, 1}, 2, {p, 1, 1}, {true, false, false}},
      {"3d-all-periodic", {8, 8, 8}, 1, {0, 0, 0}, {true, true, true}},
      // Padded rows: every rank's row interiors on 4 cells (8 with halo 2); IPC writers use
      // the neighbour's padded strides.
      {"3d-auto-split-rows-padded-to-4", {10, 9, 8}, 1, {0, 0, 0}, {false, false, false}, 4},
      {"1d-x-periodic-halo-2-padded-to-8",
       {4 * p + 3, 5, 1},
       2,
       {p, 1, 1},
       {true, false, false},
       8},
      // Ranks placed in reverse: the neighbours come from the placement, not MPI_Cart.
      {"3d-auto-split-placed", {10, 9, 8}, 1, {0, 0, 0}, {false, false, false}, 1, true},
      {"3d-all-periodic-placed", {8, 8, 8}, 1, {0, 0, 0}, {true, true, true}, 1, true},
  };
}

// What the exchange must leave in every allocated cell. Cells are labelled by global index:
// interior cells hold `offset + step + linear index`; ghosts on a non-periodic global boundary
// hold a negative label of their (outside) position; every other ghost starts as `poison`.
struct labeller {
  const funnel::cartesian_decomposition& d;
  field_layout layout;
  double offset;
  static constexpr double poison = -9.0e6;

  [[nodiscard]] index3 global_of(std::int64_t i, std::int64_t j, std::int64_t k) const {
    const index3 local{i, j, k};
    index3 g{};
    for (int a = 0; a < 3; ++a) g[a] = d.local_box().lo[a] + local[a] - layout.halo_along(a);
    return g;
  }
  [[nodiscard]] double interior_value(const index3& g, int step) const {
    const index3& n = d.global_cells();
    return offset + step + static_cast<double>(g[0] + n[0] * (g[1] + n[1] * g[2]));
  }
  [[nodiscard]] double boundary_value(const index3& g) const {
    const index3& n = d.global_cells();
    const std::int64_t h = d.halo();
    return -1.0e6 - static_cast<double>(
                        (g[0] + h) + (n[0] + 2 * h) * ((g[1] + h) + (n[1] + 2 * h) * (g[2] + h)));
  }
  // expected == true: the value after the exchange; false: the value before it.
  [[nodiscard]] double value(std::int64_t i, std::int64_t j, std::int64_t k, int step,
                             bool expected) const {
    const index3 local{i, j, k};
    index3 g = global_of(i, j, k);
    const index3& n = d.global_cells();
    bool ghost = false;
    bool outside = false;  // beyond a non-periodic global boundary
    for (int a = 0; a < 3; ++a) {
      const std::int64_t h = layout.halo_along(a);
      ghost = ghost || local[a] < h || local[a] >= h + layout.interior[a];
      if (g[a] >= 0 && g[a] < n[a]) continue;
      if (d.periodic()[a]) {
        g[a] = (g[a] + n[a]) % n[a];
      } else {
        outside = true;
      }
    }
    // Nobody may change a boundary ghost; a diagonal neighbour's copy of it has the same label.
    if (outside) return boundary_value(g);
    if (!ghost || expected) return interior_value(g, step);
    return poison;
  }
};

template <class T>
std::vector<T> fill(const labeller& l, int step, bool expected) {
  const field_layout& lay = l.layout;
  std::vector<T> v(static_cast<std::size_t>(lay.allocated_cells()));
  for (std::int64_t k = 0; k < lay.allocated(2); ++k) {
    for (std::int64_t j = 0; j < lay.allocated(1); ++j) {
      for (std::int64_t i = 0; i < lay.allocated(0); ++i) {
        v[static_cast<std::size_t>(lay.index(i, j, k))] =
            static_cast<T>(l.value(i, j, k, step, expected));
      }
    }
  }
  return v;
}

template <class T>
void expect_equal_fields(const labeller& l, const std::vector<T>& want, const std::vector<T>& got,
                         const std::string& what, bool faces_only = false) {
  const field_layout& lay = l.layout;
  const funnel::box interior = lay.interior_box();
  int reported = 0;
  for (std::int64_t k = 0; k < lay.allocated(2); ++k) {
    for (std::int64_t j = 0; j < lay.allocated(1); ++j) {
      for (std::int64_t i = 0; i < lay.allocated(0); ++i) {
        const std::int64_t at_cell[3] = {i, j, k};
        int outside = 0;
        for (int a = 0; a < 3; ++a) {
          outside += at_cell[a] < interior.lo[a] || at_cell[a] >= interior.hi[a] ? 1 : 0;
        }
        if (faces_only && outside > 1) continue;  // an edge or corner ghost: not exchanged
        const auto at = static_cast<std::size_t>(lay.index(i, j, k));
        if (want[at] != got[at] && reported++ < 5) {
          ADD_FAILURE() << what << " rank " << l.d.rank() << " cell (" << i << ", " << j << ", "
                        << k << "): want " << want[at] << " got " << got[at];
        }
      }
    }
  }
  // The padding of padded rows (an element at column c of its row's slot, c outside
  // [lead, lead + nx)) is never written.
  for (std::size_t n = 0; n < got.size(); ++n) {
    const auto column = static_cast<std::int64_t>(n) % lay.row_pitch();
    if (column >= lay.lead() && column < lay.lead() + lay.allocated(0)) continue;
    if (want[n] != got[n] && reported++ < 5) {
      ADD_FAILURE() << what << " rank " << l.d.rank() << " padding element " << n << " written";
    }
  }
  EXPECT_EQ(reported, 0) << what << ": cells differ on rank " << l.d.rank();
}

// Runs three steps on two alternating fields (as a solver swapping buffers does), the second
// step split into begin/finish, and checks every cell after each.
// A pool for the exchange's fields: exportable (with room for host IPC) unless `exportable` is
// false (the mpi method).
funnel::memory_pool halo_pool(const std::string& name, bool exportable = true) {
  funnel::memory_pool_options options;
  options.name = name;
  options.ipc_exportable = exportable;
  options.host_ipc_capacity = std::size_t{16} << 20;
  return funnel::memory_pool(test_backend, options);
}

// `mpi_chunk`: halo_options::mpi_chunk (unset: the default).
template <class T>
void run_scenario(const scenario& s, halo_method method,
                  std::optional<std::size_t> mpi_chunk = std::nullopt) {
  const std::string what = s.name + " " + funnel::to_string(method) + " " +
                           (sizeof(T) == 4 ? "float" : "double") +
                           (mpi_chunk ? " chunk " + std::to_string(*mpi_chunk) : "");
  SCOPED_TRACE(what);
  funnel::cartesian_decomposition d = split(s);
  d.set_row_align(s.row_align);
  funnel::memory_pool pool = halo_pool("halo test", method != halo_method::mpi);
  funnel::stream stream(test_backend);
  const labeller l{d, d.layout(), shared_random_offset()};
  const std::size_t bytes = static_cast<std::size_t>(l.layout.allocated_cells()) * sizeof(T);
  std::array<void*, 2> fields{pool.allocate(stream, bytes), pool.allocate(stream, bytes)};
  {
    funnel::halo_options o;
    o.method = method;
    o.mpi_chunk = mpi_chunk;
    funnel::halo_exchange exchange(d, test_backend, pool, sizeof(T), o);
    for (const auto& p : exchange.paths()) {
      EXPECT_EQ(p.rank, d.neighbor(p.axis, p.where));
      if (p.rank == d.rank()) {
        EXPECT_EQ(p.transport, funnel::halo_transport::local);
      } else if (method == halo_method::ipc) {
        EXPECT_EQ(p.transport, funnel::halo_transport::ipc) << funnel::to_string(p);
      } else if (method == halo_method::mpi) {
        EXPECT_NE(p.transport, funnel::halo_transport::ipc) << funnel::to_string(p);
      }
    }
    for (int step = 0; step < 3; ++step) {
      void* field = fields[static_cast<std::size_t>(step % 2)];
      const std::vector<T> before = fill<T>(l, step, false);
      funnel::copy_async(stream, field, before.data(), bytes);
      if (step == 1) {
        exchange.begin(stream, field);
        exchange.finish(stream);
      } else {
        exchange.exchange(stream, field);
      }
      std::vector<T> after(before.size());
      funnel::copy_async(stream, after.data(), field, bytes);
      stream.synchronize();
      expect_equal_fields(l, fill<T>(l, step, true), after, what + " step " + std::to_string(step));
    }
    stream.synchronize();
  }
  pool.deallocate(stream, fields[0], bytes);
  pool.deallocate(stream, fields[1], bytes);
  stream.synchronize();
}

// The same with the fields bound as the exchange's field cycle (the GPU-ordered IPC path): six
// exchanges, so that every field is exchanged again after its neighbours read it. After the
// first exchange the ghosts belong to the exchange (a neighbour may already be filling those of
// the other field), so each step writes only the interior. `linger`: odd ranks read their
// ghosts late, so a neighbour that wrote the next exchange's ghosts too early would be seen.
template <class T>
void run_cycle_scenario(const scenario& s, halo_method method, std::size_t cycle_length = 2,
                        std::chrono::milliseconds linger = std::chrono::milliseconds(0),
                        bool faces_only = false, bool kernel_signals = false) {
  const std::string what = s.name + " cycle of " + std::to_string(cycle_length) + " " +
                           funnel::to_string(method) + " " + (sizeof(T) == 4 ? "float" : "double");
  SCOPED_TRACE(what);
  funnel::cartesian_decomposition d = split(s);
  d.set_row_align(s.row_align);
  funnel::memory_pool pool = halo_pool("halo cycle test", method != halo_method::mpi);
  funnel::stream stream(test_backend);
  const labeller l{d, d.layout(), shared_random_offset()};
  const std::size_t bytes = static_cast<std::size_t>(l.layout.allocated_cells()) * sizeof(T);
  std::array<T*, 2> fields{static_cast<T*>(pool.allocate(stream, bytes)),
                           static_cast<T*>(pool.allocate(stream, bytes))};
  T* staging = static_cast<T*>(pool.allocate(stream, bytes));
  const std::vector<T> initial = fill<T>(l, -1, false);  // poison ghosts, boundary labels
  for (T* f : fields) funnel::copy_async(stream, f, initial.data(), bytes);
  stream.synchronize();
  {
    funnel::halo_options o;
    o.method = method;
    o.field_cycle.assign(fields.begin(),
                         fields.begin() + static_cast<std::ptrdiff_t>(cycle_length));
    o.faces_only = faces_only;
    if (kernel_signals) o.signals = funnel::halo_signals::kernel;
    funnel::halo_exchange exchange(d, test_backend, pool, sizeof(T), o);
    for (const auto& p : exchange.paths()) {
      if (p.rank == d.rank()) continue;
      if (method == halo_method::mpi) {
        EXPECT_NE(p.transport, funnel::halo_transport::ipc_ordered) << funnel::to_string(p);
      } else {
        // One node; on the host backend every rank counts as one device.
        EXPECT_EQ(p.transport, funnel::halo_transport::ipc_ordered) << funnel::to_string(p);
      }
    }
    const funnel::box interior = l.layout.interior_box();
    for (int step = 0; step < 6; ++step) {
      T* field = fields[static_cast<std::size_t>(step) % cycle_length];
      const std::vector<T> before = fill<T>(l, step, false);
      funnel::copy_async(stream, staging, before.data(), bytes);
      funnel::copy_box(stream, field, l.layout, interior, staging, l.layout, interior);
      if (step % 2 == 1) {
        exchange.begin(stream, field);
        exchange.finish(stream);
      } else {
        exchange.exchange(stream, field);
      }
      exchange.wait(stream);
      if (d.rank() % 2 == 1) std::this_thread::sleep_for(linger);
      std::vector<T> after(before.size());
      funnel::copy_async(stream, after.data(), field, bytes);
      exchange.wait(stream);
      expect_equal_fields(l, fill<T>(l, step, true), after, what + " step " + std::to_string(step),
                          faces_only);
    }
    exchange.close();
  }
  for (T* f : {fields[0], fields[1], staging}) pool.deallocate(stream, f, bytes);
  stream.synchronize();
}

// The parameters of the method-parameterised suites, and their names.
auto every_method() {
  return ::testing::Values(halo_method::mpi, halo_method::ipc, halo_method::automatic);
}

std::string method_name(const ::testing::TestParamInfo<halo_method>& param_info) {
  return param_info.param == halo_method::automatic ? std::string("automatic")
                                                    : funnel::to_string(param_info.param);
}

class HaloExchangeCycle : public ::testing::TestWithParam<halo_method> {};

TEST_P(HaloExchangeCycle, EveryGhostHoldsItsNeighboursValueFloat) {
  for (const auto& s : scenarios()) run_cycle_scenario<float>(s, GetParam());
}

TEST_P(HaloExchangeCycle, EveryGhostHoldsItsNeighboursValueDouble) {
  for (const auto& s : scenarios()) run_cycle_scenario<double>(s, GetParam());
}

// One field: a neighbour may refill these ghosts only once this rank is done reading them (the
// consumed signal); the odd ranks read late to make an early writer visible.
TEST(HaloExchangeCycleOfOne, NeighboursWaitUntilTheGhostsAreRead) {
  for (const auto& s : scenarios()) {
    run_cycle_scenario<double>(s, halo_method::ipc, 1, std::chrono::milliseconds(20));
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, HaloExchangeCycle, every_method(), method_name);

// A caller that reads face ghosts only (halo_options::faces_only): on CUDA with kernel signals
// (forced here) one kernel exchanges every axis, copying each face's interior cells; every face
// ghost must hold its neighbour's value, and odd ranks read late (a neighbour that wrote the
// next exchange's ghosts too early would be seen). Elsewhere the option changes nothing.
TEST(HaloExchangeFacesOnly, EveryFaceGhostHoldsItsNeighboursValue) {
  const bool kernel = test_backend == funnel::backend_kind::cuda;
  for (const auto& s : scenarios()) {
    run_cycle_scenario<float>(s, halo_method::automatic, 2, std::chrono::milliseconds(2), true,
                              kernel);
    run_cycle_scenario<double>(s, halo_method::automatic, 2, std::chrono::milliseconds(0), true,
                               kernel);
  }
}

// A CUDA graph of two exchanges (one per field of the cycle), captured once and launched three
// times with new interior values each time, gives the right ghosts every time: the exchanges
// read their count from the GPU (kernel signals, forced here where MPS may be absent). The graph
// copies each field right after its exchange (the ghosts are the exchange's until the next one
// of this rank, so they are read in stream order, as a stencil would). On the host backend
// nothing can be replayed, and replayed() says so.
TEST(HaloExchangeReplay, GraphOfExchangesGivesTheGhostsAgain) {
  const scenario s = scenarios().front();
  funnel::cartesian_decomposition d = split(s);
  d.set_row_align(s.row_align);
  funnel::memory_pool pool = halo_pool("halo replay test", true);
  funnel::stream stream(test_backend);
  const labeller l{d, d.layout(), shared_random_offset()};
  const std::size_t bytes = static_cast<std::size_t>(l.layout.allocated_cells()) * sizeof(double);
  std::array<double*, 4> buffers{};  // the two fields, then a copy of each
  for (auto& b : buffers) b = static_cast<double*>(pool.allocate(stream, bytes));
  double* staging = static_cast<double*>(pool.allocate(stream, bytes));
  const std::vector<double> poison = fill<double>(l, -1, false);
  for (double* b : buffers) funnel::copy_async(stream, b, poison.data(), bytes);
  stream.synchronize();
  {
    funnel::halo_options o;
    o.field_cycle = {buffers[0], buffers[1]};
    o.signals = funnel::halo_signals::kernel;
    funnel::halo_exchange exchange(d, test_backend, pool, sizeof(double), o);
    if (test_backend == funnel::backend_kind::host) {
      EXPECT_FALSE(exchange.replayable());
      EXPECT_THROW(exchange.replayed(2), funnel::invalid_argument);
    } else {
      ASSERT_TRUE(exchange.replayable());
      const funnel::box interior = l.layout.interior_box();
      funnel::graph g;
      for (int launch = 0; launch < 3; ++launch) {
        for (std::size_t f = 0; f < 2; ++f) {  // the interiors only: the ghosts are the exchange's
          const std::vector<double> values =
              fill<double>(l, 10 * launch + static_cast<int>(f), false);
          funnel::copy_async(stream, staging, values.data(), bytes);
          funnel::copy_box(stream, buffers[f], l.layout, interior, staging, l.layout, interior);
        }
        if (launch == 0) {
          g = funnel::graph::capture(stream, [&] {
            for (std::size_t f = 0; f < 2; ++f) {
              exchange.exchange(stream, buffers[f]);
              funnel::copy_async(stream, buffers[2 + f], buffers[f], bytes);
            }
          });
        } else {
          exchange.replayed(2);
        }
        g.launch(stream);
        exchange.wait(stream);
        for (std::size_t f = 0; f < 2; ++f) {
          std::vector<double> after(poison.size());
          funnel::copy_async(stream, after.data(), buffers[2 + f], bytes);
          exchange.wait(stream);
          expect_equal_fields(l, fill<double>(l, 10 * launch + static_cast<int>(f), true), after,
                              "launch " + std::to_string(launch) + " field " + std::to_string(f));
        }
      }
      EXPECT_THROW(exchange.replayed(3), funnel::invalid_argument);  // not a whole cycle
    }
    exchange.close();
  }
  for (double* b : buffers) pool.deallocate(stream, b, bytes);
  pool.deallocate(stream, staging, bytes);
  stream.synchronize();
}

// Two float fields of `d`'s layout from an exportable pool, for the tests of a field cycle; freed
// (stream-ordered) at the end of the scope.
struct two_fields {
  two_fields(const funnel::cartesian_decomposition& d, const std::string& name)
      : pool(halo_pool(name, true)),
        stream(test_backend),
        bytes(static_cast<std::size_t>(d.layout().allocated_cells()) * sizeof(float)),
        a(pool.allocate(stream, bytes)),
        b(pool.allocate(stream, bytes)) {}
  ~two_fields() {
    pool.deallocate(stream, a, bytes);
    pool.deallocate(stream, b, bytes);
    stream.synchronize();
  }
  two_fields(const two_fields&) = delete;
  two_fields& operator=(const two_fields&) = delete;
  funnel::memory_pool pool;
  funnel::stream stream;
  std::size_t bytes;
  void* a;
  void* b;
};

// Pushed exchanges (halo_exchange::push_next): on CUDA with kernel signals and a two-field cycle
// the next exchange is handed out in cycle order, one face per neighbour, counted as enqueued;
// push off (the default) and the host backend never push.
// (The kernels that push run in the app's GPU tests: stencil_gpu_heat3d_kernel_signals.)
TEST(HaloExchangePush, NextExchangeIsHandedOutInCycleOrder) {
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {24, 20, 1}, 1);
  two_fields fields(d, "halo push test");
  funnel::memory_pool& pool = fields.pool;
  void* a = fields.a;
  void* b = fields.b;
  funnel::halo_options o;
  o.field_cycle = {a, b};
  o.signals = funnel::halo_signals::kernel;
  for (const bool push : {false, true}) {
    o.push = push;
    funnel::halo_exchange exchange(d, test_backend, pool, sizeof(float), o);
    const bool expected =
        test_backend == funnel::backend_kind::cuda && push && !exchange.paths().empty();
    EXPECT_EQ(exchange.pushable(), expected) << "push " << push;
    if (!expected) {
      EXPECT_THROW((void)exchange.push_next(fields.stream, a), funnel::invalid_argument);
    } else {
      EXPECT_THROW((void)exchange.push_next(fields.stream, b),
                   funnel::invalid_argument);  // a comes first
      const funnel::pushed_exchange first = exchange.push_next(fields.stream, a);
      EXPECT_EQ(first.count, static_cast<int>(exchange.paths().size()));
      const funnel::pushed_exchange second = exchange.push_next(fields.stream, b);
      for (int f = 0; f < first.count; ++f) {
        EXPECT_NE(first.faces[f].dst, second.faces[f].dst) << "face " << f;  // other field
        EXPECT_EQ(first.faces[f].signal, second.faces[f].signal) << "face " << f;
        EXPECT_EQ(first.faces[f].hi[0] - first.faces[f].lo[0] == 1 ||
                      first.faces[f].hi[1] - first.faces[f].lo[1] == 1,
                  true)
            << "face " << f << " is not one cell thick";
      }
      // Two exchanges are counted: the next one of the cycle is a's again.
      EXPECT_THROW((void)exchange.push_next(fields.stream, b), funnel::invalid_argument);
    }
    exchange.close();
  }
}

// Fields of a bound cycle must come in cycle order: another order would make the neighbours
// write into the buffer this rank is not exchanging.
TEST(HaloExchangeErrors, CycleOrderIsEnforced) {
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {16, 16, 1}, 1);
  two_fields fields(d, "halo test");
  funnel::memory_pool& pool = fields.pool;
  funnel::stream& stream = fields.stream;
  void* a = fields.a;
  void* b = fields.b;
  {
    funnel::halo_options o;
    o.field_cycle = {a, b};
    funnel::halo_exchange exchange(d, test_backend, pool, sizeof(float), o);
    try {
      exchange.exchange(stream, b);
      ADD_FAILURE() << "the second field of the cycle was accepted first";
    } catch (const funnel::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("cycle order"), std::string::npos) << e.what();
    }
    exchange.close();
    funnel::halo_options five;
    five.field_cycle = {a, b, a, b, a};
    EXPECT_THROW(funnel::halo_exchange(d, test_backend, pool, sizeof(float), five),
                 funnel::invalid_argument);
  }
}

// A rank that stops taking part: its neighbours' waits (host waits on the host backend, the
// streams' waits seen by wait() on CUDA) end after the stall timeout with a stall_error that
// names it. It then catches up, and every rank finishes and closes the exchange.
TEST(HaloExchangeStall, NeighbourThatStopsIsNamed) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int p = world_size();
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {4 * p, 6, 5}, 1, {p, 1, 1},
                                          {false, false, false});
  funnel::memory_pool pool = halo_pool("halo test");
  funnel::stream stream(test_backend);
  const std::size_t bytes = static_cast<std::size_t>(d.layout().allocated_cells()) * sizeof(float);
  void* a = pool.allocate(stream, bytes);
  void* b = pool.allocate(stream, bytes);
  funnel::memset_async(stream, a, 0, bytes);
  funnel::memset_async(stream, b, 0, bytes);
  stream.synchronize();
  {
    funnel::halo_options o;
    o.method = halo_method::ipc;
    o.field_cycle = {a, b};
    o.stall_timeout = std::chrono::milliseconds(1000);
    funnel::halo_exchange exchange(d, test_backend, pool, sizeof(float), o);
    std::string stalled;
    if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    try {
      exchange.exchange(stream, a);
      exchange.wait(stream);
    } catch (const funnel::stall_error& e) {
      stalled = e.what();
    }
    if (rank == 0 || rank == 2) {
      EXPECT_NE(stalled.find("neighbour rank 1 (pid"), std::string::npos) << "got: " << stalled;
      EXPECT_NE(stalled.find("no progress for 1 s"), std::string::npos) << "got: " << stalled;
    }
    if (rank == 1) {
      EXPECT_EQ(stalled, "");
    }
    // Rank 1 has caught up once every rank is here: the streams' waits are satisfied now.
    MPI_Barrier(MPI_COMM_WORLD);
    exchange.wait(stream);
    exchange.close();
  }
  pool.deallocate(stream, a, bytes);
  pool.deallocate(stream, b, bytes);
  stream.synchronize();
}

class HaloExchange : public ::testing::TestWithParam<halo_method> {};

TEST_P(HaloExchange, EveryGhostHoldsItsNeighboursValueFloat) {
  for (const auto& s : scenarios()) run_scenario<float>(s, GetParam());
}

TEST_P(HaloExchange, EveryGhostHoldsItsNeighboursValueDouble) {
  for (const auto& s : scenarios()) run_scenario<double>(s, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Methods, HaloExchange, every_method(), method_name);

// Faces through MPI in pieces (on the GPU: staged, each piece copied on its own): each rank cuts
// its faces by its own chunk, 7 + 13 * rank bytes, so pieces end inside a cell and the two sides
// of a link differ; the receiver must post the sender's pieces.
TEST(HaloExchangeMpiPieces, EveryGhostHoldsItsNeighboursValue) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::size_t chunk = 7 + 13 * static_cast<std::size_t>(rank);
  for (const auto& s : scenarios()) {
    run_scenario<float>(s, halo_method::mpi, chunk);
    run_scenario<double>(s, halo_method::mpi, chunk);
  }
}

// Settings may differ between ranks: one rank's setting that is not allowed ends the set-up on
// every rank (none is left waiting in a collective).
TEST(HaloExchangeErrors, OneRanksBadSettingIsRefusedOnEveryRank) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {16, 16, 1}, 1);
  funnel::memory_pool pool(test_backend);
  funnel::halo_options o;
  o.method = halo_method::mpi;
  if (rank == 1) o.mpi_chunk = (std::size_t{1} << 30) + 1;
  try {
    funnel::halo_exchange exchange(d, test_backend, pool, sizeof(float), o);
    ADD_FAILURE() << "no error on rank " << rank;
  } catch (const funnel::invalid_argument& e) {
    EXPECT_NE(e.message().find(rank == 1 ? "an MPI chunk of 1073741825 bytes is not allowed"
                                         : "failed on another rank"),
              std::string::npos)
        << e.message();
  }
}

TEST(HaloExchangeErrors, RejectsMisuse) {
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {16, 16, 1}, 1);
  funnel::memory_pool pool(test_backend);
  funnel::stream stream(test_backend);
  EXPECT_THROW(funnel::halo_exchange(d, test_backend, pool, 3), funnel::invalid_argument);
  funnel::halo_exchange exchange(d, test_backend, pool, sizeof(float), halo_method::mpi);
  EXPECT_THROW(exchange.finish(stream), funnel::invalid_argument);
  EXPECT_THROW(exchange.exchange(stream, nullptr), funnel::invalid_argument);
  EXPECT_THROW((void)funnel::parse_halo_method("shm"), funnel::invalid_argument);
  EXPECT_EQ(funnel::parse_halo_method("auto"), halo_method::automatic);
  EXPECT_EQ(funnel::parse_halo_method("ipc"), halo_method::ipc);
}

TEST(HaloExchangeErrors, IpcNeedsExportablePools) {
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {16, 16, 1}, 1);
  funnel::memory_pool pool(test_backend);  // not ipc_exportable
  try {
    funnel::halo_exchange exchange(d, test_backend, pool, sizeof(float), halo_method::ipc);
    ADD_FAILURE() << "ipc accepted a pool that cannot be exported";
  } catch (const funnel::unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("ipc_exportable"), std::string::npos) << e.what();
  }
  // auto falls back to MPI.
  funnel::halo_exchange exchange(d, test_backend, pool, sizeof(float), halo_method::automatic);
  for (const auto& p : exchange.paths()) EXPECT_NE(p.transport, funnel::halo_transport::ipc);
}

// An IPC writer uses the strides of the layout it computed for its neighbour; a neighbour whose
// field differs (here: the element size) must be refused before anything is written.
TEST(HaloExchangeErrors, IpcRefusesNeighbourWithAnotherFieldLayout) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (world_size() % 2 != 0) GTEST_SKIP() << "needs an even number of ranks (pairs)";
  MPI_Comm pair = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair), MPI_SUCCESS);
  // One pair at a time: the pairs of a node would share the descriptor-exchange directory.
  for (int turn = 0; turn < world_size() / 2; ++turn) {
    if (turn != rank / 2) {
      MPI_Barrier(MPI_COMM_WORLD);
      continue;
    }
    // Two ranks, periodic along x: both faces of each rank go to the other one. First the
    // element size differs, then the row alignment (padded rows on odd ranks).
    for (const bool rows_differ : {false, true}) {
      SCOPED_TRACE(rows_differ ? "row alignment differs" : "element size differs");
      funnel::cartesian_decomposition d(pair, {8, 4, 1}, 1, {2, 1, 1}, {true, false, false});
      if (rows_differ && rank % 2 == 1) d.set_row_align(4);
      funnel::memory_pool pool = halo_pool("halo layout check");
      funnel::stream stream(test_backend);
      const std::size_t element = rank % 2 == 0 || rows_differ ? sizeof(float) : sizeof(double);
      const std::size_t bytes = static_cast<std::size_t>(d.layout().allocated_cells()) * 8;
      void* field = pool.allocate(stream, bytes);
      {
        funnel::halo_exchange exchange(d, test_backend, pool, element, halo_method::ipc);
        try {
          exchange.exchange(stream, field);
          ADD_FAILURE() << "ipc wrote into a neighbour whose field has another layout";
        } catch (const funnel::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("expects interior"), std::string::npos) << e.what();
          if (rows_differ) {
            EXPECT_NE(std::string(e.what()).find("row alignment"), std::string::npos) << e.what();
          }
        }
        stream.synchronize();
        // Going on after the error: close first (CUDA forbids freeing memory another process
        // still maps).
        exchange.close();
      }
      pool.deallocate(stream, field, bytes);
      stream.synchronize();
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Comm_free(&pair);
}

}  // namespace
