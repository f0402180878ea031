// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "collective.hpp"

#include <algorithm>

namespace funnel::detail {

std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine,
                                           const char* what) {
  int size = 0;
  FUNNEL_MPI_TRY(MPI_Comm_size(comm, &size), what);
  // One width for all, the longest string's, so that none is cut.
  int width = static_cast<int>(mine.size()) + 1;
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &width, 1, MPI_INT, MPI_MAX, comm), what);
  std::vector<char> own(static_cast<std::size_t>(width), '\0');
  std::copy(mine.begin(), mine.end(), own.begin());
  std::vector<char> all(own.size() * static_cast<std::size_t>(size));
  FUNNEL_MPI_TRY(MPI_Allgather(own.data(), width, MPI_CHAR, all.data(), width, MPI_CHAR, comm),
                 what);
  std::vector<std::string> strings;
  strings.reserve(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    strings.emplace_back(all.data() + static_cast<std::size_t>(r) * own.size());
  }
  return strings;
}

}  // namespace funnel::detail
