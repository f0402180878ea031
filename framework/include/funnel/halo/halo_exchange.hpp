// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file halo_exchange.hpp
 * @brief Fills the ghost cells of a decomposed field with its neighbours' boundary values.
 */
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/halo/halo_method.hpp"
#include "funnel/halo/halo_options.hpp"
#include "funnel/halo/neighbor_path.hpp"
#include "funnel/halo/pushed_exchange.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

/**
 * @brief The halo exchange of one field layout, built once and run every step.
 *
 * Axis by axis (x, then y over the x ghosts too, then z over both), so edge and corner ghosts
 * end up holding the diagonal neighbours' values, exactly as on one rank (unless
 * halo_options::faces_only lets neighbours on this GPU under MPS take every face in one kernel
 * and leave edges and corners unfilled). Ghosts on a
 * non-periodic global boundary are never written. Each neighbour is served by one transport
 * (see paths()):
 * - `ipc-ordered` (neighbours on this node and, on CUDA, on this GPU, when the options bind a
 *   field cycle): each rank copies its boundary slabs straight into the neighbour's ghosts and
 *   the GPU orders it: signal words in IPC-shared memory, written and waited on by stream
 *   memory operations, or, when the GPU is shared through MPS, by the exchange's own kernels
 *   (one per axis, and an arrival kernel for deep halos or a one-field cycle), which read the
 *   exchange count from device memory. The host only enqueues, so it may run ahead of the GPU; no
 * MPI message and no host wait per exchange. wait() bounds the host's waits on such work.
 * - `peer-ordered` (neighbours on another GPU of this node, with a field cycle): the same, through
 *   peer access to the neighbour's pool, with signal words at system scope.
 * - `ipc` (neighbours on this node when the options bind no field cycle): the same copies,
 *   ordered by a host handshake per exchange (MPI messages and interprocess events).
 * - MPI (`mpi-host`, `mpi-staged`, `mpi-cuda-aware`; neighbours on other nodes, on-node
 *   neighbours whose pool could not be mapped (see fallback()), and all of them with `mpi`):
 *   faces packed into buffers from the pool, sent with MPI_Isend/MPI_Irecv, unpacked; on CUDA
 *   staged through pinned buffers unless the MPI library is CUDA-aware and the pool exportable.
 * - `local`: a periodic axis of one rank, a copy within the field.
 *
 * The constructor and close() are collective over the decomposition's communicator; the
 * destructor is not, so a run that goes on after an error thrown by an exchange (rather than
 * ending the job) must call close() on every rank first: CUDA forbids freeing memory that
 * another process still maps. Fields must be allocations of `pool` with the decomposition's layout
 * and stay allocated until close(). The ghosts of the field given to begin() may be overwritten by
 * the neighbours once the stream given to the *next* begin() reaches that call, so work that
 * reads the ghosts must be ordered before it on that stream. With deep halos
 * (halo_options::steps_per_exchange > 1) the steps between two exchanges may also write the
 * ghosts of every field: the same rule holds for those writes. Move-only.
 */
class halo_exchange {
 public:
  /**
   * @brief Plans the exchange and sets up its buffers and IPC mappings (collective).
   * @param decomposition the split of the grid (its communicator is duplicated; the object
   * need not outlive this one)
   * @param backend backend of the fields and of the streams passed later
   * @param pool pool of the fields; message buffers and signal words are taken from it
   * @param element_size bytes per cell value: 4 (float) or 8 (double)
   * @param options the method, the field cycle and the stall timeout
   * @throw funnel::invalid_argument for an element size other than 4 or 8, a pool of another
   * backend, a cycle longer than 4, or neighbours that disagree about the layout (on every rank)
   * @throw funnel::unsupported for `ipc` when a neighbour is on another node or a pool of the
   * node cannot be exported or mapped (thrown on every rank)
   * @throw funnel::mpi_error / funnel::cuda_error / funnel::system_error when setting up fails
   */
  halo_exchange(const cartesian_decomposition& decomposition, backend_kind backend,
                memory_pool& pool, std::size_t element_size, const halo_options& options);
  /**
   * @brief The same with only a method (no field cycle: IPC uses the host handshake).
   * @param decomposition as above
   * @param backend as above
   * @param pool as above
   * @param element_size as above
   * @param method automatic, ipc or mpi
   * @throw as above
   */
  halo_exchange(const cartesian_decomposition& decomposition, backend_kind backend,
                memory_pool& pool, std::size_t element_size,
                halo_method method = halo_method::automatic);
  /**
   * @brief Unmaps the neighbours' memory. Not collective: without close() (an error unwinds)
   * the job is expected to end; a normal end calls close() first.
   */
  ~halo_exchange();
  halo_exchange(const halo_exchange&) = delete;
  halo_exchange& operator=(const halo_exchange&) = delete;
  /**
   * @brief Takes over `other`.
   * @param other the exchange to take; may then only be destroyed or assigned to
   */
  halo_exchange(halo_exchange&& other) noexcept;
  /**
   * @brief Releases this exchange (as the destructor), then takes over `other`.
   * @param other the exchange to take; may then only be destroyed or assigned to
   * @return this exchange
   */
  halo_exchange& operator=(halo_exchange&& other) noexcept;

  /**
   * @brief begin() then finish(): when `stream` reaches the end of the work this enqueues,
   * every ghost cell of `field` holds its neighbour's current value.
   * @param stream stream of the exchange's backend, ordered after the work that wrote the
   * field's interior and read its ghosts
   * @param field the rank's field (an allocation of the pool; the next of the cycle if bound)
   * @throw funnel::invalid_argument for a null field, a field out of cycle order, a stream of
   * another backend, or an exchange already begun
   * @throw funnel::mpi_error / funnel::cuda_error when a transfer fails
   * @throw funnel::stall_error (host backend) when a neighbour stops signalling
   */
  void exchange(stream_view stream, void* field);
  /**
   * @brief Starts the exchange: the first axis's transfers (and the IPC handshake).
   *
   * Only the first axis with remote neighbours starts here: later axes carry the earlier axes'
   * ghosts (edges, corners), so they run in finish(). Work that neither writes the field's
   * boundary layer nor reads its ghosts (the interior update) may run between begin() and
   * finish(). Staged and CUDA-aware MPI faces are packed (and copied to the host) here, and
   * sent in finish() once the stream has them: begin() does not wait for the GPU.
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

  /**
   * @brief Waits until `done` has completed without waiting forever on a neighbour: when it
   * makes no progress for the stall timeout, throws funnel::stall_error naming the neighbours
   * and what became of their processes. Safe to call from another thread.
   * @param done an event recorded after work that may wait on this exchange's neighbours
   * @throw funnel::stall_error after the timeout
   * @throw funnel::cuda_error when querying fails
   */
  void wait(const event& done) const;
  /**
   * @brief The same for all work submitted to `stream` so far.
   * @param stream a stream of the exchange's backend
   * @throw as wait(const event&)
   */
  void wait(stream_view stream) const;

  /**
   * @brief Completes a non-blocking MPI request under the same watchdog, so that a collective
   * a stopped rank never joins ends the job with a clear line instead of hanging it.
   * @param request e.g. from MPI_Iallreduce; MPI_REQUEST_NULL once completed
   * @throw funnel::stall_error after the timeout
   * @throw funnel::mpi_error when MPI_Test fails
   */
  void wait(MPI_Request& request) const;

  /**
   * @brief Ends the exchange (collective): waits (as wait()) for the stream of the last
   * exchange, meets the other ranks, unmaps the neighbours' memory, and meets them again, so
   * that no rank frees a field another still writes to or maps. Later calls do nothing.
   * @throw funnel::stall_error / funnel::mpi_error
   */
  void close();

  /**
   * @brief True when the work exchange() enqueues may be captured into a CUDA graph and the
   * graph launched again for later exchanges: every transfer is ordered on the GPU and reads
   * nothing from the host call (cuda backend; `local` links and kernel-signalled `ipc-ordered`
   * links only, so the ranks sharing this GPU run under MPS or with halo_signals::kernel).
   * Each rank decides alone; a graph and the exchanges it holds give the same ghosts.
   * @return true when a graph of its exchanges may be launched again; false after close()
   */
  [[nodiscard]] bool replayable() const noexcept;
  /**
   * @brief Says that a graph holding `exchanges` consecutive exchanges, captured from this
   * exchange's calls, was launched again: the exchange counts them as done in order (the next
   * begin() expects the field that follows them in the cycle).
   * @param exchanges a multiple of the field cycle's length (so the captured fields repeat)
   * @throw funnel::invalid_argument when not replayable(), during an exchange, or for a count
   * that is not such a multiple
   */
  void replayed(std::size_t exchanges);

  /**
   * @brief True when push_next() can hand the next exchanges to the update kernel: replayable(),
   * a cycle of two fields, one step per exchange, and every neighbour an `ipc-ordered` one
   * (so at least one), and halo_options::push on (unset: FUNNEL_HALO_PUSH; off by default, as
   * pushed steps measured slower, docs/halo.md, "Pushed exchanges").
   * @return whether push_next() may be called
   */
  [[nodiscard]] bool pushable() const noexcept;
  /**
   * @brief The next exchange, of `field`, as the update kernel that writes `field` does it: that
   * kernel pushes its face cells into the neighbours' ghosts as it computes them and signals when
   * done (pushed_exchange.hpp; kernels::heat3d_step_pushed). Counts the exchange as enqueued, as
   * exchange() would; the caller must launch exactly one such kernel for it, on the stream of the
   * exchanges, after every read of `field`'s ghosts of the exchange before in the cycle and before
   * any read of the ghosts this one fills. Enqueues nothing. Only faces are filled, not edge or
   * corner ghosts.
   * @param stream the stream the kernel will run on (close() waits for it, as for begin()'s)
   * @param field the field that follows the last exchanged one in the cycle
   * @return what the kernel needs to push (kernels::heat3d_step_pushed takes it)
   * @throw funnel::invalid_argument when not pushable(), during an exchange, or for another field
   * or another backend's stream
   */
  [[nodiscard]] pushed_exchange push_next(stream_view stream, void* field);

  /**
   * @brief Every neighbour and its path, e.g. for a plan line.
   * @return the paths, in axis then side order
   */
  [[nodiscard]] const std::vector<neighbor_path>& paths() const noexcept;
  /**
   * @brief Why a neighbour on this node is reached over MPI although IPC was allowed (`auto`).
   * @return the first such reason, e.g. "no peer access to rank 3's GPU: ..." when the two GPUs
   * cannot map each other's pools; empty when no neighbour fell back
   */
  [[nodiscard]] const std::string& fallback() const noexcept;

 private:
  class impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace funnel
