// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/regular_file.hpp"

#include <fcntl.h>

#include "file_system.hpp"

namespace funnel::io {

std::string read_regular_file(const std::string& path, std::size_t max_bytes,
                              const std::string& what) {
  return detail::read_regular_at(AT_FDCWD, path, path, max_bytes, /*follow_links=*/true, what);
}

}  // namespace funnel::io
