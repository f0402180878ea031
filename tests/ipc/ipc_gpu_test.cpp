// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// A CUDA pool shared between two processes: pool handle over allgather_fds, pointer export data
// over MPI, the other rank reads the data device-side (kernel copy) and copies it back.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <vector>

#include "funnel/error.hpp"
#include "funnel/ipc/fd_exchange.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/device.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "gpu_test_kernels.hpp"

namespace {

using funnel::backend_kind;

TEST(CudaPoolIpc, NeighbourReadsExportedAllocationDeviceSide) {
  MPI_Comm node = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            MPI_SUCCESS);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  ASSERT_GE(size, 2) << "run with 2 ranks on one node";
  const int device = rank % funnel::device::count();
  funnel::device(device).make_current();

  funnel::memory_pool_options options;
  options.name = "ipc-gpu-" + std::to_string(rank);
  options.device = device;
  options.ipc_exportable = true;
  funnel::memory_pool pool(backend_kind::cuda, options);
  funnel::stream s(backend_kind::cuda);

  constexpr std::size_t count = 1 << 18;
  std::vector<std::uint64_t> pattern(count);
  std::mt19937_64 engine{std::random_device{}()};
  for (auto& v : pattern) v = engine();
  std::vector<std::uint64_t> all(count * static_cast<std::size_t>(size));
  MPI_Allgather(pattern.data(), count, MPI_UINT64_T, all.data(), count, MPI_UINT64_T, node);

  funnel::device_buffer<std::uint64_t> mine(pool, s, count);
  funnel::copy_async(s, mine.data(), pattern.data(), count * sizeof(std::uint64_t));
  s.synchronize();

  // Pointer first on purpose: export_pointer must export the pool handle itself beforehand
  // (the driver refuses the other order).
  const funnel::ipc_pointer exported = pool.export_pointer(mine.data());
  funnel::unique_fd handle = pool.export_handle();

  std::uint64_t token = engine();
  MPI_Bcast(&token, 1, MPI_UINT64_T, 0, node);
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("funnel-ipc-gpu-" + std::to_string(token)))
          .string();
  std::vector<funnel::unique_fd> handles = funnel::allgather_fds(node, handle.get(), dir);
  std::vector<funnel::ipc_pointer> pointers(static_cast<std::size_t>(size));
  MPI_Allgather(&exported, sizeof exported, MPI_BYTE, pointers.data(), sizeof exported, MPI_BYTE,
                node);
  MPI_Barrier(node);  // every rank's data is on its device (stream synchronised above)

  const int neighbour = (rank + 1) % size;
  {
    funnel::memory_pool_options peer_options;
    peer_options.name = "imported-from-" + std::to_string(neighbour);
    peer_options.device = device;
    funnel::memory_pool peer = funnel::memory_pool::import_handle(
        backend_kind::cuda, handles[neighbour].get(), peer_options);
    EXPECT_TRUE(peer.is_imported());
    auto* theirs = static_cast<std::uint64_t*>(peer.import_pointer(pointers[neighbour]));
    funnel::device_buffer<std::uint64_t> local(pool, s, count);
    funnel::memset_async(s, local.data(), 0xff, count * sizeof(std::uint64_t));  // poison
    funnel::testing::launch_copy_words(s.view().native_handle(), local.data(), theirs, count);
    std::vector<std::uint64_t> back(count, 0);
    funnel::copy_async(s, back.data(), local.data(), count * sizeof(std::uint64_t));
    s.synchronize();
    EXPECT_TRUE(std::equal(back.begin(), back.end(), all.begin() + count * neighbour))
        << "rank " << rank << " read wrong data from rank " << neighbour;
    peer.close_imported_pointer(theirs);
  }
  MPI_Barrier(node);  // imports closed everywhere before the exporters free
  mine = funnel::device_buffer<std::uint64_t>();
  s.synchronize();
  if (rank == 0) std::filesystem::remove_all(dir);
  MPI_Comm_free(&node);
}

}  // namespace
