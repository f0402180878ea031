// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// A plain CUDA version of the test's reference heat step (stencil_reference.hpp), rounded the
// same way, for the pipeline's GPU test.
#pragma once

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::test {

// Enqueues one heat step over `region` on `stream` (a CUDA stream); in and out are device
// pointers laid out as `layout`.
void launch_heat_step(stream_view stream, const field_layout& layout, const double* in, double* out,
                      const box& region, double coefficient);

}  // namespace funnel::test
