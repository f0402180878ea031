// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file halo_options.hpp
 * @brief How a halo exchange is built: the path it may take, the fields it exchanges, and how
 * long it waits for a neighbour that makes no progress.
 */
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "funnel/halo/halo_method.hpp"
#include "funnel/halo/halo_signals.hpp"

namespace funnel {

/**
 * @brief Options of a funnel::halo_exchange.
 *
 * The three settings a job may also give in the environment (stall_timeout, signals, push) are
 * optional here: a value the caller sets wins; an unset one takes the environment variable, read
 * once per process, else the default. So a library call means what it says, and a job script can
 * still tune what the code leaves open.
 */
struct halo_options {
  /// @brief automatic, ipc or mpi (see halo_method).
  halo_method method = halo_method::automatic;
  /**
   * @brief The fields the caller exchanges, in the order it uses them: exchange c (counting
   * from 0) must be given `field_cycle[c % field_cycle.size()]`, e.g. {a, b} for a field
   * kept in two buffers that swap every step. All must be allocations of the exchange's pool
   * with the decomposition's layout. With a cycle, neighbours on this node (and GPU) are
   * reached by the GPU-ordered IPC path: the host only enqueues, and a step never waits for
   * another rank's host. Every rank must give a cycle of the same length, or none (then IPC
   * uses a host handshake per exchange). At most 4 fields.
   */
  std::vector<void*> field_cycle;
  /**
   * @brief Steps the caller runs per exchange (deep halos: the halo is at least this many cells
   * deep times the stencil radius, and the steps after an exchange recompute the ghosts they
   * need, reading and writing ghost cells of every field). Above 1, or with a cycle of one
   * field, every exchange first waits until each neighbour on this node is done with its ghosts
   * of the exchange before (its *arrival* at this exchange), so no copy overwrites ghosts a
   * neighbour still uses. With two buffers swapped every step and an even count, every exchange
   * is of the same buffer: bind a cycle of that one field. Every rank must give the same value.
   */
  int steps_per_exchange = 1;
  /**
   * @brief True when the steps between two exchanges write no ghost cell and read only the
   * ghosts of the field just exchanged, as two steps in one launch do (kernels::heat3d_two_steps
   * after each exchange of a halo two cells deep keeps the first step's values in the kernel and
   * writes the other field's interior). With a cycle of two or more fields that is the order of
   * one step per exchange, so the exchanges need no arrival whatever steps_per_exchange says.
   * Every rank must give the same value.
   */
  bool ghosts_read_only = false;
  /**
   * @brief True when the caller reads only face ghosts, never an edge or corner ghost (a 7- or
   * 5-point stencil), and exchanges once per step. Neighbours on this GPU under MPS (kernel
   * signals) are then reached by one kernel for every axis, which copies each face's interior
   * cells, signals and waits once, instead of one kernel and one wait per axis; edge and corner
   * ghosts are not filled. Ignored with steps_per_exchange above 1 (those steps read edges).
   * Ranks may differ in it.
   */
  bool faces_only = false;
  /**
   * @brief How long halo_exchange::wait(), and a wait for a neighbour's signal (on the GPU
   * too), may see no progress before funnel::stall_error is thrown. Unset: FUNNEL_HALO_TIMEOUT
   * (whole seconds, 1 to 9999999), else 60 s.
   */
  std::optional<std::chrono::milliseconds> stall_timeout;
  /**
   * @brief How GPU-ordered exchanges signal (see halo_signals). Unset: FUNNEL_HALO_SIGNALS
   * (auto, kernel or stream), else automatic. Every rank of a node must resolve to the same.
   */
  std::optional<halo_signals> signals;
  /**
   * @brief Whether halo_exchange::pushable() may say yes (see push_next()). Unset:
   * FUNNEL_HALO_PUSH (on or off), else off: pushed steps measured slower (docs/halo.md,
   * "Pushed exchanges").
   */
  std::optional<bool> push;
  /**
   * @brief The largest MPI message of a face, in bytes; 0: each face in one message (up to
   * 1 GiB). A face sent through MPI goes in pieces of this size, larger where the face would
   * take more than 1024. On the staged path each piece
   * is copied to the host, sent, and copied back to the neighbour's GPU while the next pieces
   * travel, so the copies across PCIe overlap the messages. Ranks may differ in it: each tells
   * its neighbours when the exchange is set up. Unset: FUNNEL_HALO_MPI_CHUNK (bytes with an
   * optional K, M or G suffix; 0 for whole faces), else 1 MiB (docs/halo.md, "Staged faces in
   * pieces").
   */
  std::optional<std::size_t> mpi_chunk;
};

}  // namespace funnel
