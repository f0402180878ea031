// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/pipeline/choose_pipeline.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "funnel/error.hpp"
#include "funnel/pipeline/chunk_plan.hpp"

namespace funnel {
namespace {

constexpr int default_slots = 3;
constexpr int target_chunks = 32;
constexpr double kernel_share_of_copy = 0.8;  // leave the copies the bound, with some margin
constexpr double min_chunk_copy_seconds = 2e-3;
constexpr int min_planes_per_kh = 8;  // redundant overlap of inputs stays ≤ 2/8 = 25%

bool has_rates(const pipeline_probe& p) {
  return p.h2d_gb_per_s > 0.0 && p.d2h_gb_per_s > 0.0 && p.cell_updates_per_s > 0.0;
}

int largest_power_of_two_at_most(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

void expect_positive(const std::optional<int>& value, const char* name) {
  FUNNEL_EXPECTS(!value || *value >= 1,
                 std::string{name} + "=" + std::to_string(value.value_or(0)) +
                     " is invalid: it must be >= 1 (leave it unset to choose automatically)");
}

}  // namespace

std::string pipeline_probe::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "H2D %.1f GB/s, D2H %.1f GB/s, kernel %.3g cell updates/s",
                h2d_gb_per_s, d2h_gb_per_s, cell_updates_per_s);
  return text;
}

std::string pipeline_choice::describe() const {
  return "chunks=" + std::to_string(chunks) + " streams=" + std::to_string(slots) +
         " steps-per-pass=" + std::to_string(steps_per_pass) + " (" + reason + ")";
}

pipeline_choice choose_pipeline(const field_layout& field, int stencil_radius,
                                std::size_t element_bytes, std::size_t device_budget_bytes,
                                const pipeline_probe& probe, const pipeline_overrides& overrides,
                                neighbour_faces faces, int max_steps_per_pass) {
  expect_positive(overrides.chunks, "chunks");
  expect_positive(overrides.slots, "streams");
  expect_positive(overrides.steps_per_pass, "steps-per-pass");
  FUNNEL_EXPECTS(stencil_radius >= 1, "stencil_radius=" + std::to_string(stencil_radius) +
                                          " is invalid: it must be >= 1");
  FUNNEL_EXPECTS(element_bytes > 0, "element_bytes=0 is invalid: it must be sizeof(T)");
  std::ostringstream why;
  pipeline_choice choice;

  choice.slots = overrides.slots.value_or(default_slots);
  why << "S=" << choice.slots << (overrides.slots ? " set" : " auto");

  const int axis = chunk_plan::chunk_axis_of(field);
  const std::int64_t planes = field.interior[axis];
  int k_limit = std::max(1, max_steps_per_pass);
  if (faces.any()) k_limit = std::min(k_limit, std::max(1, field.halo / stencil_radius));
  k_limit = std::min<std::int64_t>(k_limit, std::max<std::int64_t>(1, planes / stencil_radius));
  const double slower_link = std::min(probe.h2d_gb_per_s, probe.d2h_gb_per_s) * 1e9;
  if (overrides.steps_per_pass) {
    choice.steps_per_pass = *overrides.steps_per_pass;
    why << ", k set";
  } else if (has_rates(probe)) {
    const double copy_per_cell = static_cast<double>(element_bytes) / slower_link;
    const double step_per_cell = 1.0 / probe.cell_updates_per_s;
    const int k_fit =
        std::max(1, static_cast<int>(kernel_share_of_copy * copy_per_cell / step_per_cell));
    choice.steps_per_pass = largest_power_of_two_at_most(std::min(k_fit, k_limit));
    why << ", k auto (kernels fit " << k_fit << " steps per copy, limit " << k_limit << ")";
  } else {
    why << ", k auto (no probe)";
  }
  const int k = choice.steps_per_pass;

  const std::size_t per_buffer = device_budget_bytes / (2 * static_cast<std::size_t>(choice.slots));
  if (overrides.chunks) {
    choice.chunks = *overrides.chunks;
    const chunk_plan plan(field, stencil_radius, k, choice.chunks, faces);
    const std::size_t need = static_cast<std::size_t>(plan.max_buffer_cells()) * element_bytes;
    FUNNEL_EXPECTS(need <= per_buffer, "chunks=" + std::to_string(choice.chunks) + " needs 2 x " +
                                           std::to_string(choice.slots) + " buffers of " +
                                           std::to_string(need) +
                                           " bytes, more than the device budget of " +
                                           std::to_string(device_budget_bytes) +
                                           " bytes: use more chunks or fewer "
                                           "streams");
    why << ", C set";
  } else {
    const chunk_plan fitting =
        chunk_plan::for_chunk_bytes(field, stencil_radius, k, per_buffer, element_bytes, faces);
    std::int64_t wanted = target_chunks;
    const std::int64_t field_bytes =
        field.allocated_cells() * static_cast<std::int64_t>(element_bytes);
    if (has_rates(probe)) {
      const auto min_chunk_bytes =
          static_cast<std::int64_t>(std::max(1.0, min_chunk_copy_seconds * slower_link));
      wanted = std::min(wanted, std::max<std::int64_t>(1, field_bytes / min_chunk_bytes));
    }
    wanted = std::min<std::int64_t>(
        wanted,
        std::max<std::int64_t>(1, planes / (std::int64_t{min_planes_per_kh} * k * stencil_radius)));
    wanted = std::min<std::int64_t>(wanted, chunk_plan::max_chunks(field, stencil_radius, k));
    choice.chunks = std::max(static_cast<int>(wanted), fitting.size());
    why << ", C auto (" << fitting.size() << " needed for the device budget of "
        << device_budget_bytes << " bytes, " << wanted << " wanted for overlap)";
  }

  if (has_rates(probe)) {
    const chunk_plan plan(field, stencil_radius, k, choice.chunks, faces);
    const double t_h2d = static_cast<double>(plan.input_cells_total()) *
                         static_cast<double>(element_bytes) / (probe.h2d_gb_per_s * 1e9);
    const double t_d2h = static_cast<double>(plan.output_cells_total()) *
                         static_cast<double>(element_bytes) / (probe.d2h_gb_per_s * 1e9);
    const double t_kernel =
        static_cast<double>(plan.interior_cell_updates()) / probe.cell_updates_per_s;
    const double t_max = std::max({t_h2d, t_d2h, t_kernel});
    // Filling and draining the pipeline costs about one chunk of each of the other parts.
    const double fill = (t_h2d + t_d2h + t_kernel - t_max) / choice.chunks;
    choice.predicted_efficiency = t_max / (t_max + fill);
    choice.bound = t_max == t_kernel ? "kernel" : (t_max == t_h2d ? "h2d" : "d2h");
    why << "; probe " << probe.describe();
  }
  choice.reason = why.str();
  return choice;
}

}  // namespace funnel
