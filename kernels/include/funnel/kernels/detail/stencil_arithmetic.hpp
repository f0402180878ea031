// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file stencil_arithmetic.hpp
 * @brief The per-cell arithmetic of every stencil, written once for CUDA, host and Kokkos.
 *
 * Why it is here: the issue asks for identical results across implementations. Each cell's
 * value is computed by the same sequence of IEEE-754 additions and multiplications, each
 * rounded to nearest, with no contraction into FMA:
 * - device code uses the __f{add,sub,mul}_rn / __d{add,sub,mul}_rn intrinsics, which nvcc never
 *   merges into an FMA, whatever -fmad says;
 * - host code is compiled with -ffp-contract=off (kernels/src/host/CMakeLists.txt), so GCC and
 *   Clang do not contract even with -mfma / -march=native.
 * We chose this over building the CUDA sources with -fmad=false because it pins only these few
 * expressions (the rest of the CUDA code keeps FMA) and it holds for Kokkos lambdas compiled by
 * whichever flags Kokkos imposes. The cost is nil for these memory-bound kernels (a handful of
 * extra FP instructions per cell, far below the bandwidth limit).
 * Consequence: the stencil updates of cuda, host and kokkos are bitwise identical (tolerance 0
 * ulp), and so is any split of a region. Only the Jacobi norm (summation order, atomics) and the
 * initial conditions (sin() of each math library) differ, by float/double rounding.
 *
 * Internal (funnel::kernels::detail): installed with the public headers, but not part of
 * funnel's API.
 */
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
/// @brief Marks a function usable from host and device code.
#define FUNNEL_KERNELS_HD __host__ __device__
#else
/// @brief Marks a function usable from host and device code (nothing outside CUDA/HIP sources).
#define FUNNEL_KERNELS_HD
#endif

namespace funnel::kernels::detail {

/**
 * @brief a + b, rounded to nearest, never contracted into an FMA.
 * @param a left operand
 * @param b right operand
 * @return the rounded sum
 */
FUNNEL_KERNELS_HD inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
/**
 * @brief a + b, rounded to nearest, never contracted into an FMA.
 * @param a left operand
 * @param b right operand
 * @return the rounded sum
 */
FUNNEL_KERNELS_HD inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
/**
 * @brief a - b, rounded to nearest, never contracted into an FMA.
 * @param a left operand
 * @param b right operand
 * @return the rounded difference
 */
FUNNEL_KERNELS_HD inline float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
/**
 * @brief a - b, rounded to nearest, never contracted into an FMA.
 * @param a left operand
 * @param b right operand
 * @return the rounded difference
 */
FUNNEL_KERNELS_HD inline double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
/**
 * @brief a * b, rounded to nearest, never contracted into an FMA.
 * @param a left operand
 * @param b right operand
 * @return the rounded product
 */
FUNNEL_KERNELS_HD inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
/**
 * @brief a * b, rounded to nearest, never contracted into an FMA.
 * @param a left operand
 * @param b right operand
 * @return the rounded product
 */
FUNNEL_KERNELS_HD inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

/**
 * @brief Explicit Euler heat update from the neighbour sum: center + c * (sum - n * center).
 * @param center the cell's current value
 * @param neighbour_sum its neighbours, summed as heat_update_{1,2,3}d do
 * @param neighbours n, the number of neighbours (2, 4 or 6)
 * @param c alpha * dt / h^2
 * @return the cell's next value
 */
template <class T>
FUNNEL_KERNELS_HD inline T heat_update(T center, T neighbour_sum, T neighbours, T c) {
  return add_rn(center, mul_rn(c, sub_rn(neighbour_sum, mul_rn(neighbours, center))));
}

/**
 * @brief 1D heat update: neighbours summed as x- + x+.
 * @param center the cell's current value
 * @param xm its neighbour towards lower x
 * @param xp its neighbour towards higher x
 * @param c alpha * dt / h^2
 * @return the cell's next value
 */
template <class T>
FUNNEL_KERNELS_HD inline T heat_update_1d(T center, T xm, T xp, T c) {
  return heat_update(center, add_rn(xm, xp), T(2), c);
}

/**
 * @brief 2D heat update: neighbours summed as ((x- + x+) + y-) + y+.
 * @param center the cell's current value
 * @param xm its neighbour towards lower x
 * @param xp towards higher x
 * @param ym towards lower y
 * @param yp towards higher y
 * @param c alpha * dt / h^2
 * @return the cell's next value
 */
template <class T>
FUNNEL_KERNELS_HD inline T heat_update_2d(T center, T xm, T xp, T ym, T yp, T c) {
  return heat_update(center, add_rn(add_rn(add_rn(xm, xp), ym), yp), T(4), c);
}

/**
 * @brief 3D heat update: neighbours summed as ((((x- + x+) + y-) + y+) + z-) + z+.
 * @param center the cell's current value
 * @param xm its neighbour towards lower x
 * @param xp towards higher x
 * @param ym towards lower y
 * @param yp towards higher y
 * @param zm towards lower z
 * @param zp towards higher z
 * @param c alpha * dt / h^2
 * @return the cell's next value
 */
template <class T>
FUNNEL_KERNELS_HD inline T heat_update_3d(T center, T xm, T xp, T ym, T yp, T zm, T zp, T c) {
  return heat_update(center, add_rn(add_rn(add_rn(add_rn(add_rn(xm, xp), ym), yp), zm), zp), T(6),
                     c);
}

/**
 * @brief The reference Jacobi update 0.25 * (right + left + below + above), summed left to
 * right in float; multiplying by 0.25 is exact, so this equals the reference code's
 * double-precision product rounded to float.
 * @param right the cell's neighbour towards higher x
 * @param left towards lower x
 * @param below towards higher y (the reference's next row)
 * @param above towards lower y
 * @return the cell's next value
 */
FUNNEL_KERNELS_HD inline float jacobi_update(float right, float left, float below, float above) {
  return mul_rn(0.25F, add_rn(add_rn(add_rn(right, left), below), above));
}

/**
 * @brief The reference code's norm term for one cell.
 * @param new_value the cell's updated value
 * @param old_value its value before the update
 * @return (new - old)^2
 */
FUNNEL_KERNELS_HD inline float squared_update(float new_value, float old_value) {
  const float residue = sub_rn(new_value, old_value);
  return mul_rn(residue, residue);
}

}  // namespace funnel::kernels::detail
