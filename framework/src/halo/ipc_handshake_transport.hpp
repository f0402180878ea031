// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: IPC with a host handshake, for links where the GPU-ordered path cannot be used (no
// bound field cycle, or no stream memory operations): every rank of the node exports its pool;
// each rank writes its boundary slabs straight into the neighbour's ghosts with copy_box. Per
// exchange, each rank records "my ghosts are free" (an interprocess event on CUDA) and tells
// its neighbours over MPI, with the address of its current field; the writer waits for that
// event before writing, records "written" after, and tells the reader, whose stream waits for
// it before reading its ghosts. The host therefore waits for its neighbours every exchange.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "funnel/memory/ipc_pointer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/event.hpp"
#include "halo_link.hpp"
#include "pending_sends.hpp"

namespace funnel::detail {

/// The bytes of an ipc_pointer, usable as a map key and inside MPI messages.
using export_bytes = std::array<unsigned char, sizeof(ipc_pointer::bytes)>;

/// @brief Maps a neighbour's export data to a pointer here, importing it on first use.
class imported_fields {
 public:
  imported_fields() = default;
  explicit imported_fields(memory_pool pool) : pool_(std::move(pool)) {}
  imported_fields(imported_fields&&) noexcept = default;
  imported_fields& operator=(imported_fields&&) noexcept = default;
  imported_fields(const imported_fields&) = delete;
  imported_fields& operator=(const imported_fields&) = delete;
  ~imported_fields() { release(); }

  /// @brief The neighbour's allocation described by `bytes`, mapped here.
  [[nodiscard]] void* map(const export_bytes& bytes);
  /// @brief Unmaps every pointer (the pool stays imported until destruction).
  void release() noexcept;

 private:
  std::optional<memory_pool> pool_;
  std::map<export_bytes, void*> mapped_;
};

class ipc_handshake_transport final : public link_transport {
 public:
  /**
   * @param links the IPC links
   * @param comm the exchange's private communicator
   * @param backend backend of the fields
   * @param pool this rank's (exportable) pool
   * @param peers each IPC neighbour's pool, imported
   */
  ipc_handshake_transport(std::vector<halo_link> links, MPI_Comm comm, backend_kind backend,
                          memory_pool& pool, std::map<int, imported_fields> peers);

  [[nodiscard]] const std::vector<halo_link>& links() const noexcept override { return links_; }
  void begin(const exchange_step& step) override;
  void post(const exchange_step& step, int axis) override;
  void complete(const exchange_step& step, int axis) override;
  void finish(const exchange_step& step) override;
  void release() noexcept override;

  /// The "ghosts free" message: the sender's current field, and the layout and element size it
  /// gives it, so that the writer can check its strides are the owner's (ranks that disagree
  /// about the decomposition would otherwise write out of bounds of the imported allocation).
  struct field_message {
    export_bytes field{};
    std::int64_t interior[3] = {0, 0, 0};
    std::int64_t halo = 0;
    std::int64_t row_align = 0;
    std::int64_t element_size = 0;
  };

 private:
  struct peer_events {
    std::optional<event> free;
    std::array<std::optional<event>, 3> written;
  };
  struct link_state {
    field_message peer_field{};  // the neighbour's current field, as it exported it
    void* remote_field = nullptr;
    MPI_Request recv_request = MPI_REQUEST_NULL;
    unsigned char flag = 0;  // payload of the zero-information "written" messages
  };

  void exchange_events();
  void check_peer_fields(const exchange_step& step);

  std::vector<halo_link> links_;
  std::vector<link_state> state_;  // one per link
  MPI_Comm comm_;
  backend_kind backend_;
  memory_pool* pool_;
  std::map<int, imported_fields> peers_;
  std::map<int, peer_events> peer_events_;
  std::optional<event> free_event_;
  std::array<std::optional<event>, 3> written_events_;
  void* exported_field_ = nullptr;
  field_message my_export_{};
  pending_sends sends_;
};

}  // namespace funnel::detail
