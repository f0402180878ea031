// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file choose_pipeline.hpp
 * @brief Auto-tuning: C, S and k from the probe, the device budget and the user's overrides.
 */
#pragma once

#include <cstddef>

#include "funnel/decomposition/field_layout.hpp"
#include "funnel/pipeline/neighbour_faces.hpp"
#include "funnel/pipeline/pipeline_choice.hpp"
#include "funnel/pipeline/pipeline_overrides.hpp"
#include "funnel/pipeline/pipeline_probe.hpp"

namespace funnel {

/**
 * @brief Picks chunks, slots and steps per pass.
 *
 * - S: 3 (one chunk copying in, one computing, one copying out).
 * - k: the largest power of two ≤ max_steps_per_pass (and ≤ halo/h with neighbours) whose k
 *   kernel steps still take under 80% of the slower copy direction, so temporal blocking raises
 *   cell-updates/s until the kernel becomes the bound; 1 without a probe.
 * - C: about 32 chunks (fill and drain cost about one chunk time, so ≈ 97% efficiency), but no
 *   chunk below ~2 ms of copying (per-operation overheads) or below 8·k·h planes (redundant
 *   overlap), and at least as many as the device budget needs: 2·S chunk buffers must fit.
 *
 * @param field the rank's field
 * @param stencil_radius h
 * @param element_bytes sizeof(T)
 * @param device_budget_bytes bytes the pipeline may take from the pool
 * @param probe measured rates (all zero: no probe; only the budget and fixed defaults count)
 * @param overrides user-fixed values, validated and kept
 * @param faces faces with neighbours (limit k to halo/h)
 * @param max_steps_per_pass largest k the caller accepts when k is automatic
 * @return the choice with a reason string for the plan printout
 * @throw funnel::invalid_argument for invalid overrides or when nothing fits the budget
 */
[[nodiscard]] pipeline_choice choose_pipeline(const field_layout& field, int stencil_radius,
                                              std::size_t element_bytes,
                                              std::size_t device_budget_bytes,
                                              const pipeline_probe& probe,
                                              const pipeline_overrides& overrides = {},
                                              neighbour_faces faces = neighbour_faces::none(),
                                              int max_steps_per_pass = 1);

}  // namespace funnel
