// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Rows of P consecutive values loaded and stored as one vector of P * sizeof(T) bytes (at most
// 16), and the widest such vector a region's rows allow. Shared by the CUDA stencil kernels.
// The kernels keep their column masks and masked stores inline: a shared helper for them moved
// ptxas's register allocation (jacobi2d with P = 2 from 32 to 40 registers, heat3d's swizzled
// float kernel from 40 to 44), which costs occupancy on these load-bound kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "launch_geometry.cuh"

namespace funnel::kernels::detail::cuda {

template <class T, int P>
struct vector_of;
template <>
struct vector_of<float, 2> {
  using type = float2;
};
template <>
struct vector_of<float, 4> {
  using type = float4;
};
template <>
struct vector_of<double, 2> {
  using type = double2;
};

/// P values at p (aligned for P values when P > 1), read through the read-only path.
template <int P, class T>
__device__ inline void load_row(const T* p, T (&v)[P]) {
  if constexpr (P == 1) {
    v[0] = __ldg(p);
  } else {
    const auto loaded = __ldg(reinterpret_cast<const typename vector_of<T, P>::type*>(p));
    v[0] = loaded.x;
    v[1] = loaded.y;
    if constexpr (P == 4) {
      v[2] = loaded.z;
      v[3] = loaded.w;
    }
  }
}

/// P values stored at p (aligned for P values when P > 1).
template <int P, class T>
__device__ inline void store_row(T* p, const T (&v)[P]) {
  if constexpr (P == 1) {
    *p = v[0];
  } else if constexpr (P == 2) {
    *reinterpret_cast<typename vector_of<T, 2>::type*>(p) = {v[0], v[1]};
  } else {
    *reinterpret_cast<typename vector_of<T, 4>::type*>(p) = {v[0], v[1], v[2], v[3]};
  }
}

/// The widest vector (values per thread along x, at most 16 bytes) that every row of both
/// arrays starts aligned for: the row and plane strides are multiples of it and both arrays
/// start on it. Rows padded to 16 bytes give float 4 and double 2; the unpadded n + 2 rows of an
/// even n give 2; odd strides 1. A thread's first cell is then a multiple of the width
/// (the region's start rounded down), which the kernels' index arithmetic relies on: passing
/// that start as a parameter instead cost the float kernel 16 registers (32 -> 48) and much of
/// its bandwidth.
template <class T>
int vector_width(const region_geometry& g, const T* in, const T* out) {
  for (int p = static_cast<int>(16 / sizeof(T)); p > 1; p /= 2) {
    const auto bytes = static_cast<std::uintptr_t>(p) * sizeof(T);
    if (g.sy % p == 0 && g.sz % p == 0 && reinterpret_cast<std::uintptr_t>(in) % bytes == 0 &&
        reinterpret_cast<std::uintptr_t>(out) % bytes == 0) {
      return p;
    }
  }
  return 1;
}

}  // namespace funnel::kernels::detail::cuda
