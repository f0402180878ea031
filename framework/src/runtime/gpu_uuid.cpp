// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/detail/gpu_uuid.hpp"

#include <cstddef>

namespace funnel::detail {

std::string format_gpu_uuid(const unsigned char (&bytes)[16]) {
  constexpr char digits[] = "0123456789abcdef";
  std::string out = "GPU-";
  for (std::size_t i = 0; i < 16; ++i) {
    // Dashes after the 4th, 6th, 8th and 10th byte give the 8-4-4-4-12 grouping.
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += digits[bytes[i] >> 4U];
    out += digits[bytes[i] & 0x0FU];
  }
  return out;
}

}  // namespace funnel::detail
