// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "checksum.hpp"

namespace funnel::io::detail {

std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t state) {
  constexpr std::uint64_t prime = 1099511628211ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    state ^= p[i];
    state *= prime;
  }
  return state;
}

std::uint64_t interior_checksum(const void* data, const field_layout& layout, dtype type) {
  const std::size_t element = size_of(type);
  const box inner = layout.interior_box();
  const std::size_t row_bytes = static_cast<std::size_t>(layout.interior[0]) * element;
  const auto* base = static_cast<const unsigned char*>(data);
  std::uint64_t state = fnv1a_basis;
  for (std::int64_t k = inner.lo[2]; k < inner.hi[2]; ++k) {
    for (std::int64_t j = inner.lo[1]; j < inner.hi[1]; ++j) {
      const auto offset = static_cast<std::size_t>(layout.index(inner.lo[0], j, k)) * element;
      state = fnv1a(base + offset, row_bytes, state);
    }
  }
  return state;
}

}  // namespace funnel::io::detail
