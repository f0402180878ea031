// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// A GoogleTest environment holding a funnel::kokkos::scope_guard for the whole test program, so
// Kokkos is initialised once before the first test and finalised after the last.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "funnel/kokkos/scope_guard.hpp"

namespace funnel::kernels::testing {

class kokkos_environment : public ::testing::Environment {
 public:
  void SetUp() override { guard_ = std::make_unique<funnel::kokkos::scope_guard>(); }
  void TearDown() override { guard_.reset(); }

 private:
  std::unique_ptr<funnel::kokkos::scope_guard> guard_;
};

// Registered at static initialisation, before the shared test main calls RUN_ALL_TESTS.
inline ::testing::Environment* const kokkos_environment_registration =
    ::testing::AddGlobalTestEnvironment(new kokkos_environment);

}  // namespace funnel::kernels::testing
