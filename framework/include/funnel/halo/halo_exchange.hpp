/**
 * @file halo_exchange.hpp
 * @brief Fills the ghost cells of a decomposed field with its neighbours' boundary values.
 */
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/halo/halo_method.hpp"
#include "funnel/halo/neighbor_path.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

/**
 * @brief The halo exchange of one field layout, built once and run every step.
 *
 * Axis by axis (x, then y over the x ghosts too, then z over both), so edge and corner ghosts
 * end up holding the diagonal neighbours' values, exactly as on one rank. Ghosts on a
 * non-periodic global boundary are never written. Per neighbour (see paths()):
 * - MPI: faces are packed into buffers from `pool`, sent with MPI_Isend/MPI_Irecv and unpacked.
 *   On the CUDA backend the buffers are handed to MPI directly when MPIX_Query_cuda_support()
 *   says the library is CUDA-aware and `pool` is IPC-exportable (UCX and others fail on
 *   non-exportable stream-ordered memory); otherwise they are staged through pinned host
 *   buffers, each face's copies overlapping the other faces' messages.
 * - IPC (neighbours on this node): every rank of the node exports `pool`; each rank writes its
 *   boundary slabs straight into the neighbour's ghosts with copy_box (device to device on
 *   CUDA). A handshake keeps it stream-ordered: at begin() each rank records "my ghosts are
 *   free" (an interprocess event on CUDA) and tells its neighbours over MPI, with the address
 *   of its current field; the writer waits for that event before writing, records "written"
 *   after, and tells the reader, whose stream waits for it before reading its ghosts.
 *
 * The constructor and the destructor are collective over the decomposition's communicator.
 * Fields passed to begin()/exchange() must be allocations of `pool` (as returned by
 * allocate()) with the decomposition's layout, and must stay allocated while this object
 * exists (neighbours keep them mapped). Destroy it only after the streams it ran on have
 * completed its work. Move-only.
 */
class halo_exchange {
 public:
  /**
   * @brief Plans the exchange and sets up its buffers and IPC mappings (collective).
   * @param decomposition the split of the grid (its communicator is duplicated; the object
   * need not outlive this one)
   * @param backend backend of the fields and of the streams passed later
   * @param pool pool of the fields; message buffers are taken from it
   * @param element_size bytes per cell value: 4 (float) or 8 (double)
   * @param method automatic, ipc or mpi
   * @throw funnel::invalid_argument for an element size other than 4 or 8, or a pool of
   * another backend
   * @throw funnel::unsupported for `ipc` when a neighbour is on another node or a pool of the
   * node cannot be exported (thrown on every rank)
   * @throw funnel::mpi_error / funnel::cuda_error / funnel::system_error when setting up fails
   */
  halo_exchange(const cartesian_decomposition& decomposition, backend_kind backend,
                memory_pool& pool, std::size_t element_size,
                halo_method method = halo_method::automatic);
  /// @brief Releases buffers and IPC mappings; waits for the node's ranks to do the same.
  ~halo_exchange();
  halo_exchange(const halo_exchange&) = delete;
  halo_exchange& operator=(const halo_exchange&) = delete;
  /// @brief Takes over `other`, which may then only be destroyed or assigned.
  halo_exchange(halo_exchange&& other) noexcept;
  /// @brief Releases this exchange, then takes over `other`.
  halo_exchange& operator=(halo_exchange&& other) noexcept;

  /**
   * @brief begin() then finish(): when `stream` reaches the end of the work this enqueues,
   * every ghost cell of `field` holds its neighbour's current value.
   * @param stream stream of the exchange's backend, ordered after the work that wrote the
   * field's interior and read its ghosts
   * @param field the rank's field (an allocation of the pool)
   * @throw funnel::invalid_argument for a null field, a stream of another backend, or an
   * exchange already begun
   * @throw funnel::mpi_error / funnel::cuda_error when a transfer fails
   */
  void exchange(stream_view stream, void* field);
  /**
   * @brief Starts the exchange: the IPC handshake and the first axis's transfers.
   *
   * Only the first axis starts here: the later axes carry the earlier axes' ghosts (edges,
   * corners), so they run in finish(). Work that neither writes the field's boundary layer nor
   * reads its ghosts (the interior update) may run between begin() and finish().
   * @param stream as for exchange()
   * @param field as for exchange()
   * @throw as exchange()
   */
  void begin(stream_view stream, void* field);
  /**
   * @brief Completes the exchange begun on `stream`.
   * @param stream the stream given to begin()
   * @throw funnel::invalid_argument when no exchange was begun or `stream` is another one
   * @throw funnel::mpi_error / funnel::cuda_error when a transfer fails
   */
  void finish(stream_view stream);

  /// @brief Every neighbour and its path, in axis then side order.
  [[nodiscard]] const std::vector<neighbor_path>& paths() const noexcept;

 private:
  class impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace funnel
