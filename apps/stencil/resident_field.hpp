// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file resident_field.hpp
 * @brief A field kept in device memory: two buffers from the pool, the compute and halo
 * streams, and the overlapped step (halo begin, inner update, halo finish, boundary update).
 */
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/error.hpp"
#include "funnel/halo/halo_exchange.hpp"
#include "funnel/halo/halo_method.hpp"
#include "funnel/halo/halo_options.hpp"
#include "funnel/halo/pushed_exchange.hpp"
#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/device.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/event_flags.hpp"
#include "funnel/runtime/graph.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "regions.hpp"

namespace funnel::stencil {

/// @brief Which of the two streams an update runs on (a problem may keep one accumulator each).
enum class lane { compute = 0, halo = 1 };

/**
 * @brief The resident-mode field of one rank.
 *
 * Per step (see step()): the halo stream starts the exchange of the current buffer while the
 * compute stream updates the inner cells into the next buffer; once the ghosts are in (and the
 * previous inner update, which read the next buffer, is done), the halo stream (high priority,
 * so the critical path goes first) updates the boundary layer; then the buffers swap. Each cell's
 * update is the same whatever the split, so any decomposition gives the field of one rank bitwise.
 *
 * The two buffers are the exchange's field cycle, so neighbours on this GPU are reached by the
 * GPU-ordered path: a step only enqueues work, and the host runs ahead of the GPU by at most
 * `run_ahead` steps (or `run_ahead` graphs). Every host wait on the streams goes through the
 * exchange's watchdog, so a neighbour that stops makes this rank fail with a clear line instead
 * of hanging.
 *
 * Graphs: when the exchange can be replayed (halo_exchange::replayable: cuda, every neighbour
 * on this GPU under MPS, or none) and the caller allows it, advance() runs blocks of
 * steps_per_graph() steps as one CUDA graph, captured once and launched again: each step
 * exchanges, then updates every cell (the order of `overlap` off), or with `graph_overlap` the
 * overlapped order, the halo stream forked from the compute stream inside the graph
 * (capture_overlapped). Many ranks sharing a GPU then cost the GPU one submission per block
 * instead of several per step (docs/halo.md).
 *
 * Deep halos: with a halo `depth` cells deep the field exchanges every `depth` steps; the step
 * `p` steps after an exchange updates the interior grown by `depth - 1 - p` cells into the
 * ghosts of every exchanged face, recomputing what the neighbours compute there with the same
 * arithmetic, so the field stays bitwise that of one rank with `depth` times fewer exchanges
 * (the overlapped order is not used then).
 *
 * Pushed exchanges: where the graphs' exchange can be pushed (halo_exchange::pushable: every
 * neighbour kernel-signalled on this GPU, a halo one cell deep, FUNNEL_HALO_PUSH=on; off by
 * default, as it measured slower), advance() takes a `pushed` update and each step of a graph
 * is one kernel that updates every cell and writes its face cells straight into the neighbours'
 * ghosts of the buffer it writes, then signals them: one launch per step instead of two. Only
 * the block's first step is preceded by an exchange (when the ghosts are not already there);
 * such steps are not timed, so their halo seconds are 0 (docs/halo.md, "Pushed exchanges").
 *
 * Two steps per launch: with a halo two cells deep, each exchange can be followed by one kernel
 * that does both steps (`pair_fn`, e.g. kernels::heat3d_two_steps). It writes the other buffer,
 * as one step does, so the exchanges alternate between the buffers as with an odd depth. Where
 * a caller's count splits a pair, the first step runs alone and the second is both steps again
 * from the field before the first, into the same buffer: the same values, and the buffers keep
 * alternating. Many ranks sharing a GPU pay for every launch (docs/halo.md, "Two steps per
 * launch").
 * @tparam T float or double
 */
template <class T>
class resident_field {
 public:
  /// @brief The stencil update of `region` from `in` to `out` on `stream`.
  using update_fn =
      std::function<void(stream_view stream, lane which, const T* in, T* out, const box& region)>;
  /// @brief Two stencil updates in one launch: `first` from `in`, then `second` from that, into
  /// `out` (see kernels::heat3d_two_steps).
  using pair_fn = std::function<void(stream_view stream, const T* in, T* out, const box& first,
                                     const box& second)>;
  /// @brief The stencil update of `region` from `in` to `out` that also does the exchange
  /// `push` of `out` (e.g. kernels::heat3d_step_pushed).
  using pushed_fn = std::function<void(stream_view stream, const T* in, T* out, const box& region,
                                       const pushed_exchange& push)>;

  /// @brief Steps the host may enqueue before it waits for the GPU to finish the oldest.
  static constexpr std::size_t run_ahead = 8;
  /// @brief The exchange of one step in this many is timed (four events each; a small step
  /// costs tens of microseconds, so timing every step would be a visible part of it).
  static constexpr std::size_t timing_every = 8;
  // The timed graph is launched once in timing_every blocks, each a ring entry: its previous
  // launch's slot has been collected (and its marks read) before it is launched again.
  static_assert(timing_every >= run_ahead, "the timed graph's marks would be overwritten unread");
  /// @brief Steps per CUDA graph at least (then rounded up to a multiple of 2 and of the
  /// halo depth, so the buffers are where they were and the block starts with an exchange).
  static constexpr std::int64_t graph_steps_at_least = 8;

  /**
   * @param backend where the buffers live
   * @param decomposition the split (outlives this object)
   * @param pool the pool both buffers come from (outlives this object)
   * @param halo_method --halo value
   * @param overlap --halo-overlap: update the inner cells while the faces travel (else the
   *        exchange, then one update of every cell); for steps run alone, when no graphs are used
   * @param graphs advance() may run blocks of steps as CUDA graphs (the update must only
   *        launch work that can be captured, with the same arguments every time)
   * @param depth steps per exchange (>= 1, at most the decomposition's halo: a stencil of
   *        radius 1)
   * @param pairs advance() runs the two steps after each exchange as one launch of its
   *        `pair` function (needs depth 2)
   * @param graph_overlap the graphs' steps take the overlapped order (a halo one cell deep, or
   *        pairs; not with pushed exchanges), and so do the steps run alone beside them (one
   *        cell deep); else they exchange, then update every cell
   * @throw funnel::unsupported when --halo ipc cannot be used (a neighbour on another node)
   */
  resident_field(backend_kind backend, const cartesian_decomposition& decomposition,
                 memory_pool& pool, const std::string& halo_method, bool overlap,
                 bool graphs = false, int depth = 1, bool pairs = false, bool graph_overlap = false)
      : depth_(checked_depth(depth, decomposition)),
        pairs_(pairs),
        overlap_(overlap && (depth_ == 1 || pairs)),
        backend_(backend),
        pool_(&pool),
        layout_(decomposition.layout()),
        compute_(backend),
        halo_stream_(backend, stream_priority::high),
        output_(backend),
        current_(pool, compute_, static_cast<std::size_t>(layout_.allocated_cells())),
        next_(pool, compute_, static_cast<std::size_t>(layout_.allocated_cells())),
        staging_(backend, static_cast<std::size_t>(layout_.allocated_cells()) * sizeof(T)),
        halo_(decomposition, backend, pool, sizeof(T), exchange_options(halo_method)),
        regions_(split_for_overlap(layout_, 1, faces_of(decomposition))),
        pair_regions_(pairs ? overlap_pairs(layout_, faces_of(decomposition))
                            : std::vector<step_pair>{}),
        step_regions_(regions_after_exchange(layout_, faces_of(decomposition), depth_)),
        inner_done_{event(backend), event(backend)},
        stashed_(backend),
        landed_(backend),
        ring_(make_ring(backend)),
        graph_steps_(graph_steps_for(depth_, pairs_)),
        graph_marks_{event(backend, event_flags::timing), event(backend, event_flags::timing)},
        capture_events_{event(backend), event(backend), event(backend), event(backend)} {
    FUNNEL_EXPECTS(!pairs_ || depth_ == 2,
                   "resident_field: two steps per launch need a halo depth of 2, not " +
                       std::to_string(depth_));
    use_graphs_ = graphs && halo_.replayable();
    pushes_ = use_graphs_ && depth_ == 1 && !pairs_ && halo_.pushable();
    graph_overlap_ = use_graphs_ && !pushes_ && graph_overlap && (depth_ == 1 || pairs_);
    // Plain steps take the graphs' order too (pairs outside graphs stay on the compute stream).
    if (use_graphs_) overlap_ = graph_overlap_ && depth_ == 1;
  }

  /// @brief The rank's layout.
  [[nodiscard]] const field_layout& layout() const noexcept { return layout_; }
  /// @brief The field at the current step (device memory).
  [[nodiscard]] T* current() const noexcept { return current_.data(); }
  /// @brief The other buffer (written by the next step).
  [[nodiscard]] T* next() const noexcept { return next_.data(); }
  /// @brief The compute stream (initialisation and downloads run here too).
  [[nodiscard]] stream_view compute_stream() const noexcept { return compute_; }
  /// @brief The stream the last work of every step runs on (the halo stream, or the compute
  /// stream when the steps do not overlap).
  [[nodiscard]] stream_view halo_stream() const noexcept {
    return overlap_ ? stream_view(halo_stream_) : stream_view(compute_);
  }
  /// @brief Per-neighbour halo paths for the plan.
  /// @brief halo_exchange::fallback() of the field's exchange.
  [[nodiscard]] std::string halo_fallback() const { return halo_.fallback(); }
  [[nodiscard]] std::vector<std::string> halo_paths() const {
    std::vector<std::string> lines;
    for (const auto& path : halo_.paths()) lines.push_back(to_string(path));
    return lines;
  }
  /// @brief Steps per graph advance() runs (0: every step is enqueued on its own).
  [[nodiscard]] std::int64_t steps_per_graph() const noexcept {
    return use_graphs_ ? graph_steps_ : 0;
  }
  /// @brief Whether the steps overlap the exchange with the inner update: steps alone
  /// (--halo-overlap, a halo one cell deep) or the graphs' steps (`graph_overlap`).
  [[nodiscard]] bool overlapped() const noexcept { return overlap_ || graph_overlap_; }
  /// @brief Steps per halo exchange (the halo depth the field uses).
  [[nodiscard]] int steps_per_exchange() const noexcept { return depth_; }
  /// @brief Whether the graphs' steps push their exchange from the update kernel (see the class
  /// comment; advance() then needs a `pushed` update).
  [[nodiscard]] bool pushes_exchange() const noexcept { return pushes_; }
  /// @brief Steps per kernel launch: 2 when the steps after an exchange run as one pair.
  [[nodiscard]] int steps_per_launch() const noexcept { return pairs_ ? 2 : 1; }
  /// @brief Bytes of device memory held for the two buffers.
  [[nodiscard]] std::size_t bytes() const noexcept {
    return 2 * static_cast<std::size_t>(layout_.allocated_cells()) * sizeof(T);
  }

  /**
   * @brief Enqueues one step with overlap, then swaps the buffers.
   *
   * Every `timing_every`-th exchange is timed on the halo stream (events before and after
   * begin() and finish()), so on CUDA the figure is the time the exchange's stream work took,
   * not the host time of enqueueing it; it counts for the exchanges since the previous timed
   * one. A step's figure is collected when its ring slot is reused, `run_ahead` steps later, which
   * is also where the host waits for the GPU; halo_seconds_pending() collects the rest.
   * @param update the stencil
   * @return halo exchange seconds (estimated as above) of the step `run_ahead` before this one
   * @throw funnel::stall_error when a neighbour stops (see halo_exchange::wait)
   */
  double step(const update_fn& update) {
    FUNNEL_EXPECTS(!discarded_, "resident_field: a step after discard_last_step()");
    FUNNEL_EXPECTS(!pairs_, "resident_field: a field of two-step launches steps by advance()");
    if (!overlap_) return exchange_then_update(update);
    return overlapped(
        1, [&] { update(compute_, lane::compute, current_.data(), next_.data(), regions_.inner); },
        [&] {
          for (const box& slab : regions_.boundary) {
            update(halo_stream_, lane::halo, current_.data(), next_.data(), slab);
          }
        });
  }

  /**
   * @brief Enqueues `count` steps: blocks of graph_steps as CUDA graphs where they are used
   * (the first block is captured, then launched; later ones launch it again), the rest with
   * step(). One block in timing_every launches a second graph of the same steps whose first
   * exchange records two timing events (graph nodes); that exchange stands for the exchanges
   * since the previous timed one.
   * @param update the stencil (the same every call while graphs are used)
   * @param count steps to enqueue (>= 1)
   * @param pair both steps after an exchange in one launch (needed when the field was built
   *        with `pairs`; the same every call while graphs are used)
   * @param pushed the update that pushes the exchange (needed when pushes_exchange(); the same
   *        every call)
   * @return halo seconds collected meanwhile (see step())
   * @throw funnel::stall_error when a neighbour stops; funnel::cuda_error when capturing fails
   */
  double advance(const update_fn& update, std::int64_t count, const pair_fn& pair = {},
                 const pushed_fn& pushed = {}) {
    FUNNEL_EXPECTS(!pairs_ || pair, "resident_field: two steps per launch need a pair update");
    FUNNEL_EXPECTS(!pushes_ || pushed, "resident_field: pushed exchanges need a pushed update");
    double collected = 0.0;
    while (count > 0) {
      if (use_graphs_ && count >= graph_steps_ && phase_of(steps_) == 0 &&
          (graph_.empty() || current_.data() == graph_first_)) {
        const bool timed = !pushes_ && !graph_.empty() && ++blocks_ % timing_every == 0;
        collected += pushes_ ? launch_pushed_graph(pushed) : launch_graph(update, pair, timed);
        count -= graph_steps_;
      } else if (pairs_) {
        collected += pair_step(update, pair, count);
      } else {
        collected += step(update);
        --count;
      }
    }
    return collected;
  }

  /// @brief Makes `stream` wait for all work of the steps so far, on both streams (e.g. to
  /// read what both lanes accumulated in the last step).
  void join(stream_view stream) const {
    if (steps_ == 0) return;
    wait_event(stream, last_entry().done.view());
    wait_event(stream, inner_done_[(entries_ - 1) % 2].view());
  }

  /**
   * @brief Undoes the swap of the last step: its result is dropped and the field is the one
   * before it again (jacobi2d ran one step past a convergence check it had not read yet). No
   * step may follow; the neighbours must discard theirs too.
   */
  void discard_last_step() {
    FUNNEL_EXPECTS(steps_ > 0 && !discarded_, "resident_field: no step to discard");
    std::swap(current_, next_);
    discarded_ = true;
  }

  /// @brief Waits for the steps not yet collected by step() and returns their halo seconds.
  double halo_seconds_pending() {
    double seconds = 0.0;
    for (auto& slot : ring_) seconds += collect(slot);
    return seconds;
  }

  /**
   * @brief Copies the current field (halo included) to the host staging buffer.
   * @return the staging buffer, valid until the next download()
   */
  [[nodiscard]] T* download() {
    synchronize();
    copy_async(compute_, staging_.data(), current_.data(), staging_.size());
    halo_.wait(compute_);
    return static_cast<T*>(staging_.data());
  }

  /**
   * @brief Starts copying the current field (halo included) into `destination` and returns
   * without waiting for it.
   *
   * On the cuda backend the field is first copied within device memory into a buffer from the
   * pool (the next step's streams wait only for that copy, a fraction of a step), then
   * downloaded on the output stream while the next steps run. When the pool cannot hold that
   * buffer (a --pool-limit), the download goes straight from the field and the next step waits
   * for it. On the host backend the copy is done when this returns.
   * @param destination host memory of layout().allocated_cells() values, pinned for an
   * asynchronous download; nothing else may use it until the copy is done
   * @return waits for the copy; callable from another thread (it makes this thread's device
   * current there); valid until the next download_async()
   */
  [[nodiscard]] std::function<void()> download_async(T* destination) {
    const std::size_t bytes = staging_.size();
    if (backend_ == backend_kind::host) {
      synchronize();
      copy_async(compute_, destination, current_.data(), bytes);
      return {};
    }
    // The last step's boundary update (halo stream) is part of the field.
    join(compute_);
    device_buffer<T> stash;
    try {
      stash =
          device_buffer<T>(*pool_, compute_, static_cast<std::size_t>(layout_.allocated_cells()));
    } catch (const out_of_memory& e) {
      if (!told_no_stash_) {
        funnel::detail::log_error(
            std::string("snapshot downloads not overlapped with the next steps: ") + e.what());
        told_no_stash_ = true;
      }
    }
    // The next exchange (halo stream) lets the neighbours overwrite the ghosts the copy reads.
    if (stash.empty()) {
      copy_async(compute_, destination, current_.data(), bytes);
      landed_.record(compute_);
      wait_event(halo_stream_, landed_.view());
    } else {
      copy_async(compute_, stash.data(), current_.data(), bytes);
      stashed_.record(compute_);
      wait_event(halo_stream_, stashed_.view());
      wait_event(output_, stashed_.view());
      copy_async(output_, destination, stash.data(), bytes);
      landed_.record(output_);
      stash.set_stream(output_);  // back to the pool once the download is done
    }
    return [halo = &halo_, landed = &landed_, gpu = device::current()] {
      gpu.make_current();
      halo->wait(*landed);
    };
  }

  /// @brief The host staging buffer (fill it, then upload()).
  [[nodiscard]] T* staging() const noexcept { return static_cast<T*>(staging_.data()); }

  /// @brief Copies the staging buffer into the current field.
  void upload() {
    synchronize();
    copy_async(compute_, current_.data(), staging_.data(), staging_.size());
    halo_.wait(compute_);
  }

  /// @brief Waits for `done` (bounded by the exchange's watchdog).
  void wait(const event& done) const { halo_.wait(done); }
  /// @brief Completes a non-blocking collective (bounded by the exchange's watchdog).
  void wait(MPI_Request& request) const { halo_.wait(request); }

  /// @brief Waits for all work of both streams (bounded by the exchange's watchdog).
  void synchronize() {
    halo_.wait(compute_);
    halo_.wait(halo_stream_);
  }

  /**
   * @brief Ends the run of this field (collective): waits for its work and closes the halo
   * exchange, so that no neighbour still writes to or maps these buffers when they are freed.
   */
  void close() {
    synchronize();
    halo_.close();
  }

 private:
  /// One step's events: around begin() and finish() on the halo stream, and its end. On the
  /// host backend the inner update runs between them on the calling thread, so only the two
  /// halo intervals are summed, never marks[0] to marks[3].
  struct step_slot {
    explicit step_slot(backend_kind backend)
        : marks{event(backend, event_flags::timing), event(backend, event_flags::timing),
                event(backend, event_flags::timing), event(backend, event_flags::timing)},
          done(backend) {}
    std::array<event, 4> marks;
    event done;
    bool pending = false;
    bool timed = false;
    bool graph_timed = false;  // timed by the timed graph's marks (graph_marks_)
    bool split = false;        // marks[2..3] time finish() (an overlapped step or pair)
    std::int64_t weight = 0;   // steps the timed exchange stands for
  };

  [[nodiscard]] const step_slot& last_entry() const { return ring_[(entries_ - 1) % run_ahead]; }

  // The ring entry of the step, pair or graph block that starts at steps_: waits for and
  // collects what it held (into `collected`), and marks it `timed` (its first exchange then
  // stands for every exchange since the previous timed one).
  step_slot& open_entry(double& collected, bool timed) {
    step_slot& slot = ring_[entries_ % run_ahead];
    collected = collect(slot);
    slot.timed = timed;
    slot.graph_timed = false;
    slot.split = false;
    if (timed) {
      const std::size_t exchanges = exchanges_before(steps_);
      slot.weight = static_cast<std::int64_t>(exchanges + 1 - covered_);
      covered_ = exchanges + 1;
    }
    return slot;
  }

  // Whether the step (or pair) that starts at steps_ times its exchange: one in timing_every.
  [[nodiscard]] bool exchange_timed() const noexcept {
    return phase_of(steps_) == 0 && exchanges_before(steps_) % timing_every == 0;
  }

  // Marks the entry's step (or steps) enqueued on `stream`.
  void close_entry(step_slot& slot, stream_view stream, std::size_t steps) {
    slot.done.record(stream);
    slot.pending = true;
    steps_ += steps;
    ++entries_;
  }

  // One step on the compute stream: the exchange (every depth_ steps), then the whole box in
  // one kernel (the step's region after the exchange, or `region`).
  double exchange_then_update(const update_fn& update, const box* region = nullptr) {
    double collected = 0.0;
    step_slot& slot = open_entry(collected, exchange_timed());
    const std::size_t phase = phase_of(steps_);
    // After an overlapped pair, whose last work ran on the halo stream.
    if (pairs_ && overlap_ && steps_ > 0) wait_event(compute_, last_entry().done.view());
    mark(slot, 0, compute_);
    if (phase == 0 && !fresh_) halo_.exchange(compute_, current_.data());
    mark(slot, 1, compute_);
    update(compute_, lane::compute, current_.data(), next_.data(),
           region != nullptr ? *region : step_regions_[phase]);
    close_entry(slot, compute_, 1);
    last_on_compute_ = true;
    std::swap(current_, next_);
    fresh_ = false;
    return collected;
  }

  // Enqueues the steps after an exchange as a pair (see the class comment): 2 steps of `count`
  // when it has them, else the first alone; after a first step alone, the second.
  double pair_step(const update_fn& update, const pair_fn& pair, std::int64_t& count) {
    FUNNEL_EXPECTS(!discarded_, "resident_field: a step after discard_last_step()");
    const bool exchanges = phase_of(steps_) == 0;
    if (exchanges && count == 1) {
      // Only the interior: the second step is both again from the field before this one, so no
      // ghost of this step is ever read (and writing none keeps the exchange's order, see
      // exchange_options).
      --count;
      return exchange_then_update(update, &step_regions_.back());
    }
    if (exchanges && overlap_) {
      count -= 2;
      return overlapped_pair(pair);
    }
    double collected = 0.0;
    step_slot& slot = open_entry(collected, exchange_timed());
    // After an overlapped pair, whose last work ran on the halo stream.
    if (steps_ > 0) wait_event(compute_, last_entry().done.view());
    mark(slot, 0, compute_);
    if (exchanges) halo_.exchange(compute_, current_.data());
    mark(slot, 1, compute_);
    if (exchanges) {
      pair(compute_, current_.data(), next_.data(), step_regions_[0], step_regions_[1]);
      std::swap(current_, next_);
    } else {
      // The pair's second step after the first ran alone: both again from the field before the
      // first (still in next_: no exchange writes it before the one after this step), into
      // current_, so the next exchange takes the other buffer than the last one.
      pair(compute_, next_.data(), current_.data(), step_regions_[0], step_regions_[1]);
    }
    const std::size_t taken = exchanges ? 2 : 1;
    close_entry(slot, compute_, taken);
    last_on_compute_ = true;
    count -= static_cast<std::int64_t>(taken);
    return collected;
  }

  // Both steps after an exchange, overlapped as step() overlaps one: the halo stream exchanges
  // while the compute stream runs the pair on the cells whose two steps read no ghost; the halo
  // stream then runs the pair on the rest (the regions of capture_overlapped). Without it a path
  // whose exchange waits on the host (staged MPI) leaves the GPU idle for the whole exchange.
  double overlapped_pair(const pair_fn& pair) {
    return overlapped(
        2,
        [&] {
          const step_pair& inner = pair_regions_.front();
          if (!inner.second.empty()) {
            pair(compute_, current_.data(), next_.data(), inner.first, inner.second);
          }
        },
        [&] {
          for (std::size_t r = 1; r < pair_regions_.size(); ++r) {
            pair(halo_stream_, current_.data(), next_.data(), pair_regions_[r].first,
                 pair_regions_[r].second);
          }
        });
  }

  // One ring entry of `steps` steps in the overlapped order, for step() and overlapped_pair():
  // the halo stream exchanges while `inner` runs on the compute stream the cells that read no
  // ghost; after the exchange `boundary` runs the rest on the halo stream.
  template <class Inner, class Boundary>
  double overlapped(std::size_t steps, const Inner& inner, const Boundary& boundary) {
    double collected = 0.0;
    step_slot& slot = open_entry(collected, exchange_timed());
    // The inner update reads the boundary layer the previous boundary update wrote.
    if (steps_ > 0) wait_event(compute_, last_entry().done.view());
    // After a graph or a step on the compute stream alone, the exchange reads what it wrote.
    if (last_was_graph_ || last_on_compute_) wait_event(halo_stream_, last_entry().done.view());
    last_was_graph_ = false;
    last_on_compute_ = false;
    slot.split = true;
    // The exchange only reads the boundary layer (written on this stream): it starts at once,
    // so the neighbours get their ghosts while the previous inner update may still run.
    mark(slot, 0, halo_stream_);
    halo_.begin(halo_stream_, current_.data());
    mark(slot, 1, halo_stream_);
    inner();
    inner_done_[entries_ % 2].record(compute_);
    mark(slot, 2, halo_stream_);
    halo_.finish(halo_stream_);
    mark(slot, 3, halo_stream_);
    // The boundary update writes `next`, which the previous inner update read as `current`.
    if (steps_ > 0) wait_event(halo_stream_, inner_done_[(entries_ - 1) % 2].view());
    boundary();
    close_entry(slot, halo_stream_, steps);
    std::swap(current_, next_);
    return collected;
  }

  // One block of graph_steps_ steps as a graph (captured on the first call), starting with an
  // exchange; `timed`: the graph whose first exchange records graph_marks_ (read when its ring
  // slot is collected).
  double launch_graph(const update_fn& update, const pair_fn& pair, bool timed) {
    FUNNEL_EXPECTS(!discarded_, "resident_field: a step after discard_last_step()");
    double collected = 0.0;
    step_slot& slot = open_entry(collected, timed);
    slot.graph_timed = timed;
    graph& block = timed ? timed_graph_ : graph_;
    if (block.empty()) {
      // Capturing runs nothing, but it makes the exchange count the block's exchanges and
      // swaps the buffers graph_steps_ times (back where they were): the launch below is the
      // block those calls stand for.
      graph_first_ = current_.data();
      block = graph::capture(compute_, [&] {
        if (graph_overlap_) {
          capture_overlapped(update, pair, timed);
          return;
        }
        for (std::int64_t s = 0; s < graph_steps_; s += steps_per_launch()) {
          const std::size_t phase = phase_of(static_cast<std::size_t>(s));
          if (timed && s == 0) graph_marks_[0].record_in_graph(compute_);
          if (phase == 0) halo_.exchange(compute_, current_.data());
          if (timed && s == 0) graph_marks_[1].record_in_graph(compute_);
          if (pairs_) {
            pair(compute_, current_.data(), next_.data(), step_regions_[0], step_regions_[1]);
          } else {
            update(compute_, lane::compute, current_.data(), next_.data(), step_regions_[phase]);
          }
          std::swap(current_, next_);
        }
      });
    } else {
      halo_.replayed(static_cast<std::size_t>(graph_steps_ / depth_));
    }
    // An overlapped plain step before it ended on the halo stream.
    if (overlap_ && steps_ > 0 && !last_was_graph_) wait_event(compute_, last_entry().done.view());
    block.launch(compute_);
    close_entry(slot, compute_, static_cast<std::size_t>(graph_steps_));
    last_was_graph_ = true;
    return collected;
  }

  // The steps of one graph in the overlapped order (graph_overlap_): per exchange, the halo
  // stream runs the exchange while the compute stream updates the cells that read no ghost; the
  // halo stream then updates the rest. The two streams fork from the compute stream at the
  // block's start and join it at its end, so a launch on the compute stream orders the whole
  // block. Orders within the block (the steps' buffers alternate): the inner update of a step
  // waits for the boundary update before it (it reads the boundary layer that wrote, and writes
  // the buffer that read); the boundary update waits for the inner update before it (likewise);
  // the exchange follows the boundary update on its stream.
  void capture_overlapped(const update_fn& update, const pair_fn& pair, bool timed) {
    event& fork = capture_events_[0];
    event& boundary_done = capture_events_[1];
    fork.record(compute_);
    wait_event(halo_stream_, fork.view());
    for (std::int64_t s = 0; s < graph_steps_; s += steps_per_launch()) {
      const std::int64_t launch = s / steps_per_launch();
      event& inner_done = capture_events_[2 + launch % 2];
      if (timed && s == 0) graph_marks_[0].record_in_graph(halo_stream_);
      halo_.begin(halo_stream_, current_.data());
      if (pairs_) {
        const step_pair& inner = pair_regions_.front();
        if (!inner.second.empty()) {
          pair(compute_, current_.data(), next_.data(), inner.first, inner.second);
        }
      } else {
        update(compute_, lane::compute, current_.data(), next_.data(), regions_.inner);
      }
      inner_done.record(compute_);
      halo_.finish(halo_stream_);
      if (timed && s == 0) graph_marks_[1].record_in_graph(halo_stream_);
      if (s > 0) wait_event(halo_stream_, capture_events_[2 + (launch + 1) % 2].view());
      if (pairs_) {
        for (std::size_t r = 1; r < pair_regions_.size(); ++r) {
          pair(halo_stream_, current_.data(), next_.data(), pair_regions_[r].first,
               pair_regions_[r].second);
        }
      } else {
        for (const box& slab : regions_.boundary) {
          update(halo_stream_, lane::halo, current_.data(), next_.data(), slab);
        }
      }
      boundary_done.record(halo_stream_);
      wait_event(compute_, boundary_done.view());
      std::swap(current_, next_);
    }
    // The compute stream has waited for the last boundary update: both streams are joined.
  }

  // One block of graph_steps_ pushed steps as a graph (captured on the first call): each step
  // updates every cell and pushes the exchange of the buffer it writes. The block's first step
  // needs the current buffer's ghosts: the exchange before it when the step before did not push.
  double launch_pushed_graph(const pushed_fn& pushed) {
    FUNNEL_EXPECTS(!discarded_, "resident_field: a step after discard_last_step()");
    double collected = 0.0;
    step_slot& slot = open_entry(collected, false);
    if (!fresh_) halo_.exchange(compute_, current_.data());
    if (graph_.empty()) {
      // As in launch_graph: the capture counts the block's exchanges and swaps the buffers back.
      graph_first_ = current_.data();
      graph_ = graph::capture(compute_, [&] {
        for (std::int64_t s = 0; s < graph_steps_; ++s) {
          pushed(compute_, current_.data(), next_.data(), step_regions_[0],
                 halo_.push_next(compute_, next_.data()));
          std::swap(current_, next_);
        }
      });
    } else {
      halo_.replayed(static_cast<std::size_t>(graph_steps_));
    }
    graph_.launch(compute_);
    close_entry(slot, compute_, static_cast<std::size_t>(graph_steps_));
    fresh_ = true;
    // Its exchanges are not timed (they are part of the update): the next timed exchange stands
    // only for the exchanges after them.
    covered_ = exchanges_before(steps_);
    return collected;
  }

  // Steps since the last exchange at step `step` (0: the step exchanges first).
  [[nodiscard]] std::size_t phase_of(std::size_t step) const noexcept {
    return step % static_cast<std::size_t>(depth_);
  }
  // Exchanges enqueued before step `step`: one at the start of every depth_ steps.
  [[nodiscard]] std::size_t exchanges_before(std::size_t step) const noexcept {
    return (step + static_cast<std::size_t>(depth_) - 1) / static_cast<std::size_t>(depth_);
  }
  // Steps per graph: at least graph_steps_at_least, a multiple of the depth (the block starts
  // with an exchange) and such that the buffers are where they were: an even number of swaps,
  // one per step or one per pair of steps.
  static std::int64_t graph_steps_for(int depth, bool pairs) {
    // A pair swaps once: 2 pairs. Steps swap once each: lcm(2, depth).
    const std::int64_t unit = pairs ? 4 : depth % 2 == 0 ? depth : 2 * depth;
    return (graph_steps_at_least + unit - 1) / unit * unit;
  }

  static int checked_depth(int depth, const cartesian_decomposition& decomposition) {
    FUNNEL_EXPECTS(depth >= 1 && depth <= decomposition.halo(),
                   "resident_field: a halo depth of " + std::to_string(depth) +
                       " steps needs a halo of that many cells; the decomposition's is " +
                       std::to_string(decomposition.halo()));
    return depth;
  }

  // Exchanges every depth_ steps take the same buffer when depth_ is even, so the cycle is
  // that one buffer; when odd, or with a launch per pair of steps, the two alternate.
  halo_options exchange_options(const std::string& method) const {
    halo_options o;
    o.method = parse_halo_method(method);
    o.field_cycle = {current_.data()};
    if (depth_ % 2 == 1 || pairs_) o.field_cycle.push_back(next_.data());
    o.steps_per_exchange = depth_;
    // A pair writes only the other buffer's interior, and a first step alone only this one's
    // (pair_step): the ghosts are only read, those of the buffer just exchanged.
    o.ghosts_read_only = pairs_;
    // Both stencils (heat3d's 7 points, jacobi2d's 5) read face neighbours only: with kernel
    // signals one kernel exchanges every axis (one wait instead of one per axis).
    o.faces_only = true;
    return o;
  }

  static void mark(step_slot& slot, std::size_t which, stream_view on) {
    if (slot.timed) slot.marks[which].record(on);
  }

  static std::array<step_slot, run_ahead> make_ring(backend_kind backend) {
    return make_ring(backend, std::make_index_sequence<run_ahead>{});
  }
  template <std::size_t... I>
  static std::array<step_slot, run_ahead> make_ring(backend_kind backend,
                                                    std::index_sequence<I...> /*unused*/) {
    return {{(static_cast<void>(I), step_slot(backend))...}};
  }

  // Waits (watchdog) for the slot's step and returns its halo seconds, counted for the
  // exchanges it stands for; 0 when none is pending or the step was not timed.
  double collect(step_slot& slot) {
    if (!slot.pending) return 0.0;
    halo_.wait(slot.done);
    slot.pending = false;
    if (!slot.timed) return 0.0;
    if (slot.graph_timed) {
      return static_cast<double>(slot.weight) * 1e-3 *
             static_cast<double>(event::elapsed_ms(graph_marks_[0], graph_marks_[1]));
    }
    double ms = static_cast<double>(event::elapsed_ms(slot.marks[0], slot.marks[1]));
    if (slot.split) ms += static_cast<double>(event::elapsed_ms(slot.marks[2], slot.marks[3]));
    return static_cast<double>(slot.weight) * 1e-3 * ms;
  }

  int depth_;
  bool pairs_;  // the two steps after each exchange run as one launch
  bool overlap_;
  backend_kind backend_;
  memory_pool* pool_;
  field_layout layout_;
  stream compute_;
  stream halo_stream_;
  stream output_;  // snapshot downloads
  device_buffer<T> current_;
  device_buffer<T> next_;
  pinned_buffer staging_;
  halo_exchange halo_;
  overlap_regions regions_;
  std::vector<step_pair> pair_regions_;  // the overlapped order of two-step launches
  std::vector<box> step_regions_;        // what the step p steps after an exchange updates
  std::array<event, 2> inner_done_;      // after the inner update of even / odd steps
  event stashed_;
  event landed_;
  bool told_no_stash_ = false;
  std::array<step_slot, run_ahead> ring_;
  std::int64_t graph_steps_;
  std::size_t entries_ = 0;  // ring entries used: one per step() or graph launch
  std::size_t steps_ = 0;
  std::size_t covered_ = 0;  // exchanges the timed ones so far stand for
  bool use_graphs_ = false;
  bool pushes_ = false;  // graphs push their exchanges (pushed_fn)
  bool fresh_ = false;   // the last step pushed: the current buffer's ghosts are in
  graph graph_;
  graph timed_graph_;                 // graph_'s steps, its first exchange between graph_marks_
  std::array<event, 2> graph_marks_;  // recorded by every launch of timed_graph_
  // Recorded only inside captures (fork, boundary done, inner done of even / odd steps).
  std::array<event, 4> capture_events_;
  bool graph_overlap_ = false;    // graphs run the overlapped order (capture_overlapped)
  bool last_was_graph_ = false;   // the last ring entry is a graph launch
  bool last_on_compute_ = false;  // the last ring entry ran on the compute stream alone
  T* graph_first_ = nullptr;      // the current buffer when the graph was captured
  std::size_t blocks_ = 0;        // blocks of graph_steps enqueued after the capture
  bool discarded_ = false;
};

}  // namespace funnel::stencil
