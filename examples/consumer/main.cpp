// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// A downstream code using funnel through find_package(Funnel): one rank, a 3D heat field in a
// stream-ordered pool, 20 steps of the funnel kernel on whatever backend the machine has, and the
// error against the analytic solution. Exits non-zero if anything is off.
#include <cstdio>
#include <exception>
#include <funnel/kernels/heat3d.hpp>
#include <funnel/memory/device_buffer.hpp>
#include <funnel/memory/memory_pool.hpp>
#include <funnel/runtime/backend_kind.hpp>
#include <funnel/runtime/stream.hpp>
#include <funnel/runtime/stream_operations.hpp>
#include <utility>
#include <vector>

#if FUNNEL_CONSUMER_CUDA
#include <cuda_runtime_api.h>

#include <funnel/halo/pushed_exchange.hpp>
// pushed_face.cu: a kernel of this code's own on funnel's device-side header.
void launch_push_cells(const funnel::pushed_exchange& push, const double* values, long long nx,
                       cudaStream_t stream);
#endif

int main() {
#if FUNNEL_CONSUMER_CUDA
  // Linked, not run: the kernel needs a neighbour to push to.
  void (*volatile linked)(const funnel::pushed_exchange&, const double*, long long, cudaStream_t) =
      &launch_push_cells;
  std::printf("funnel-consumer: own CUDA kernel on funnel's device header linked (%s)\n",
              linked != nullptr ? "yes" : "no");
#endif
  try {
    const funnel::backend_kind backend = funnel::select_backend("auto");
    const funnel::index3 n{32, 32, 32};
    const funnel::field_layout layout{n, 1};
    const auto cells = static_cast<std::size_t>(layout.allocated_cells());
    const double alpha = 1.0;
    const double h = funnel::kernels::heat3d_grid_spacing(n);
    const double dt = 0.9 * h * h / (6.0 * alpha);
    const int steps = 20;

    funnel::stream stream{backend};
    funnel::memory_pool pool{backend};
    funnel::device_buffer<double> a{pool, stream, cells};
    funnel::device_buffer<double> b{pool, stream, cells};
    funnel::kernels::heat3d_initialize<double>(stream, layout, n, {0, 0, 0}, a.data());
    funnel::kernels::heat3d_initialize<double>(stream, layout, n, {0, 0, 0}, b.data());
    const auto impl = funnel::kernels::default_implementation(stream);
    for (int s = 0; s < steps; ++s) {
      funnel::kernels::heat3d_step<double>(stream, impl, layout, a.data(), b.data(),
                                           layout.interior_box(), {alpha * dt / (h * h)});
      std::swap(a, b);
    }
    std::vector<double> host(cells);
    funnel::copy_async(stream, host.data(), a.data(), cells * sizeof(double));
    stream.synchronize();
    const auto err =
        funnel::kernels::heat3d_error<double>(layout, n, {0, 0, 0}, alpha, steps * dt, host.data());
    const auto stats = pool.statistics();
    std::printf(
        "funnel-consumer: backend %s, %d steps of 32^3, max error %.3e, pool high-water %zu B\n",
        funnel::to_string(backend).c_str(), steps, err.max_abs, stats.used_high);
    return err.max_abs < 1e-2 && stats.used_high >= 2 * cells * sizeof(double) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "funnel-consumer: %s\n", e.what());
    return 1;
  }
}
