// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: FNV-1a (64-bit) checksums of field blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "funnel/decomposition/field_layout.hpp"
#include "funnel/io/dtype.hpp"

namespace funnel::io::detail {

/// FNV-1a 64 offset basis: the checksum of no bytes.
inline constexpr std::uint64_t fnv1a_basis = 14695981039346656037ULL;

/// Continues an FNV-1a 64 hash `state` over `bytes` bytes.
std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t state = fnv1a_basis);

/// FNV-1a 64 of the interior cells of an array in `layout`, rows in x-fastest order: the same
/// value as fnv1a() over the block stored contiguously, as a reader sees it in the file.
std::uint64_t interior_checksum(const void* data, const field_layout& layout, dtype type);

}  // namespace funnel::io::detail
