// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "collective.hpp"

#include <array>
#include <vector>

#include "funnel/error.hpp"

namespace funnel::io::detail {
namespace {

enum kind : int { k_error = 1, k_invalid_argument, k_unsupported, k_system_error, k_mpi_error };

struct described {
  int kind = k_error;
  int code = 0;
  std::string what;
};

described describe(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const invalid_argument& e) {
    return {k_invalid_argument, 0, e.what()};
  } catch (const unsupported& e) {
    return {k_unsupported, 0, e.what()};
  } catch (const system_error& e) {
    return {k_system_error, e.errnum(), e.what()};
  } catch (const mpi_error& e) {
    return {k_mpi_error, e.code(), e.what()};
  } catch (const std::exception& e) {
    return {k_error, 0, e.what()};
  } catch (...) {
    return {k_error, 0, "unknown exception"};
  }
}

[[noreturn]] void throw_described(const described& d) {
  switch (d.kind) {
    case k_invalid_argument:
      throw invalid_argument(d.what);
    case k_unsupported:
      throw unsupported(d.what);
    case k_system_error:
      throw system_error(d.what, d.code);
    case k_mpi_error:
      throw mpi_error(d.what, d.code);
    default:
      throw error(d.what);
  }
}

// The lowest rank that passes an exception; the communicator's size when none does.
int first_failure(MPI_Comm comm, const std::exception_ptr& local) {
  const int size = size_of(comm);
  int first = local ? rank_of(comm) : size;
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm),
                 "agreeing on errors");
  return first;
}

}  // namespace

int rank_of(MPI_Comm comm) {
  int rank = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "io");
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 0;
  FUNNEL_MPI_TRY(MPI_Comm_size(comm, &size), "io");
  return size;
}

std::string broadcast(MPI_Comm comm, std::string text, int root) {
  long long length = static_cast<long long>(text.size());
  FUNNEL_MPI_TRY(MPI_Bcast(&length, 1, MPI_LONG_LONG, root, comm), "broadcast");
  text.resize(static_cast<std::size_t>(length));
  if (length > 0) {
    FUNNEL_MPI_TRY(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, root, comm),
                   "broadcast");
  }
  return text;
}

bool none_failed(MPI_Comm comm, const std::exception_ptr& local) {
  return first_failure(comm, local) == size_of(comm);
}

void agree(MPI_Comm comm, std::exception_ptr local) {
  const int first = first_failure(comm, local);
  if (first == size_of(comm)) return;
  const int rank = rank_of(comm);
  described d;
  if (rank == first) d = describe(local);
  std::array<int, 2> header{d.kind, d.code};
  FUNNEL_MPI_TRY(MPI_Bcast(header.data(), 2, MPI_INT, first, comm), "agreeing on errors");
  d.what = broadcast(comm, d.what, first);
  d.kind = header[0];
  d.code = header[1];
  if (rank == first) std::rethrow_exception(local);
  throw_described(d);
}

MPI_Comm duplicate(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return MPI_COMM_NULL;
  MPI_Comm copy = MPI_COMM_NULL;
  FUNNEL_MPI_TRY(MPI_Comm_dup(comm, &copy), "io");
  return copy;
}

void release(MPI_Comm& comm) noexcept {
  if (comm == MPI_COMM_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
}

}  // namespace funnel::io::detail
