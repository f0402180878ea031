// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/pipeline/detail/pipeline_engine.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "../halo/strided_copy.hpp"
#include "funnel/config.hpp"
#include "funnel/decomposition/detail/box_difference.hpp"
#include "funnel/error.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "funnel/runtime/stream.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "funnel/trace/nvtx_range.hpp"
#include "funnel/trace/trace_recorder.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel::detail {
namespace {

// The kinds of work of a pass; each has its own stream (except in serial mode) and trace track.
enum phase : int { stage_in = 0, h2d, compute, d2h, stage_out, phase_count };
constexpr std::array<const char*, phase_count> phase_tracks = {"stage in", "h2d", "kernel", "d2h",
                                                               "stage out"};
constexpr std::array<const char*, phase_count> phase_nvtx = {
    "funnel::pipeline::stage_in", "funnel::pipeline::h2d", "funnel::pipeline::kernel",
    "funnel::pipeline::d2h", "funnel::pipeline::stage_out"};

// A host-side memcpy run as a stream callback, so it is ordered with the copies it feeds.
struct host_copy {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  const char* label = nullptr;
};

void run_host_copy(void* task) noexcept {
  const auto* copy = static_cast<const host_copy*>(task);
  const nvtx_range range(copy->label);
  std::memcpy(copy->dst, copy->src, copy->bytes);
}

// True when the CUDA runtime can copy `ptr` asynchronously at link speed: pinned, registered,
// device or managed memory. Pageable memory is reported as unregistered.
bool pinned_or_device(backend_kind backend, [[maybe_unused]] const void* ptr) {
  if (backend != backend_kind::cuda) return true;
#if FUNNEL_HAS_CUDA
  cudaPointerAttributes attributes{};
  FUNNEL_CUDA_TRY(cudaPointerGetAttributes(&attributes, ptr),
                  "funnel::pipeline_executor: checking whether host data is pinned");
  return attributes.type != cudaMemoryTypeUnregistered;
#else
  return true;
#endif
}

// Which phases a mode runs, and whether they wait on each other (data flows chunk by chunk).
struct mode_phases {
  std::array<bool, phase_count> active{};
  bool linked = false;
  bool computes = false;
  bool staged_in = false;   // host side of H2D copies is a staging buffer
  bool staged_out = false;  // host side of D2H copies is a staging buffer
};

mode_phases phases_of(pass_mode mode, bool stage_input, bool stage_output) {
  mode_phases m;
  // Baselines time the link alone: with staging they copy from/to the staging buffers (as the
  // pipeline's copies do) but skip the host memcpys.
  m.staged_in = stage_input;
  m.staged_out = stage_output;
  switch (mode) {
    case pass_mode::pipelined:
    case pass_mode::serial:
      m.active = {stage_input, true, true, true, stage_output};
      m.linked = true;
      m.computes = true;
      break;
    case pass_mode::h2d_only:
      m.active[h2d] = true;
      break;
    case pass_mode::d2h_only:
      m.active[d2h] = true;
      break;
    case pass_mode::compute_only:
      m.active[compute] = true;
      m.computes = true;
      break;
    case pass_mode::copies_only:
      m.active[h2d] = m.active[d2h] = true;
      break;
  }
  return m;
}

// True when `b` is one contiguous range of an array of `layout` (x fastest): past the first axis
// it does not span whole, it has one cell.
bool contiguous_in(const box& b, const field_layout& layout) noexcept {
  bool partial = false;
  for (int axis = 0; axis < 3; ++axis) {
    if (partial && b.extent(axis) > 1) return false;
    partial = partial || b.extent(axis) != layout.allocated(axis);
  }
  return true;
}

// What a chunk's second buffer gets before step 1: the input cells step 1 does not write. Later
// steps write inside regions[0] and no step writes outside it, so with this frame both buffers
// hold every cell no step writes (physical halo, planes beyond the shrinking region), and the
// buffer of the last step holds every cell of the output.
struct chunk_frame {
  struct range {
    std::int64_t first = 0;  // cell index in the buffer
    std::int64_t cells = 0;
  };
  std::vector<range> ranges;  // whole planes (or rows): one contiguous copy each
  std::vector<box> boxes;     // the rest, strided: one batched copy (at most max_batch)
};

chunk_frame frame_of(const chunk& ch) {
  // The input in device-buffer coordinates: plane 0 is input.lo along the chunk axis, and the
  // other axes span the allocated field, as the buffer's layout does.
  box input;
  for (int axis = 0; axis < 3; ++axis) input.hi[axis] = ch.input.extent(axis);
  chunk_frame frame;
  for (const box& part : box_difference(input, ch.regions.front())) {
    if (contiguous_in(part, ch.layout)) {
      frame.ranges.push_back({ch.layout.index(part.lo[0], part.lo[1], part.lo[2]), part.cells()});
    } else {
      frame.boxes.push_back(part);
    }
  }
  return frame;
}

}  // namespace

struct pipeline_engine::state {
  backend_kind backend;
  memory_pool* pool;
  chunk_plan plan;
  std::size_t element_bytes;
  pipeline_options options;
  std::array<stream, phase_count> streams;
  std::size_t buffer_bytes = 0;
  std::vector<void*> buffers;  // slot s uses buffers[2s] (H2D target) and buffers[2s+1]
  std::size_t max_input_bytes = 0;
  std::size_t max_output_bytes = 0;
  std::vector<chunk_frame> frames;  // per chunk
  std::optional<pinned_buffer> staging_in;
  std::optional<pinned_buffer> staging_out;
  event start;
  // Begin and end event of every chunk and phase: events[(chunk * phase_count + phase) * 2 + end].
  std::vector<event> events;
  std::vector<host_copy> copies_in;
  std::vector<host_copy> copies_out;
  long passes = 0;

  state(backend_kind b, memory_pool& p, chunk_plan pl, std::size_t elem, pipeline_options o)
      : backend(b),
        pool(&p),
        plan(std::move(pl)),
        element_bytes(elem),
        options(o),
        streams{stream(b), stream(b), stream(b), stream(b), stream(b)},
        start(b, event_flags::timing) {}
  // Frees the slots also when construction fails after allocating them.
  ~state() { release_slots(); }
  state(const state&) = delete;
  state& operator=(const state&) = delete;

  [[nodiscard]] int slots() const noexcept { return options.slots; }
  [[nodiscard]] std::size_t bytes(std::int64_t cells) const noexcept {
    return static_cast<std::size_t>(cells) * element_bytes;
  }
  [[nodiscard]] stream_view stream_for(phase p, pass_mode mode) const noexcept {
    return mode == pass_mode::serial ? streams[h2d].view() : streams[p].view();
  }
  event& ev(int chunk, phase p, int end) {
    return events[static_cast<std::size_t>((chunk * phase_count + p) * 2 + end)];
  }
  void* slot_buffer(int chunk, int which) const {
    return buffers[static_cast<std::size_t>(2 * (chunk % slots()) + which)];
  }
  // After k ping-pong steps the result is in the H2D target when k is even.
  [[nodiscard]] int final_buffer() const noexcept { return plan.steps_per_pass() % 2; }

  void synchronize_all() noexcept {
    for (const auto& s : streams) {
      try {
        s.synchronize();
      } catch (const std::exception& e) {
        log_error(std::string{"funnel::pipeline_executor: stream synchronize failed: "} + e.what());
      }
    }
  }

  void allocate_slots() {
    buffer_bytes = bytes(plan.max_buffer_cells());
    const stream_view owner = streams[compute].view();
    buffers.reserve(static_cast<std::size_t>(2 * slots()));
    try {
      for (int b = 0; b < 2 * slots(); ++b) buffers.push_back(pool->allocate(owner, buffer_bytes));
    } catch (const out_of_memory& e) {
      release_slots();  // those allocated before the failure
      throw out_of_memory(
          e.requested_bytes(), pool->name(), e.pool_used_bytes(), e.pool_reserved_bytes(),
          "pipeline slots need " + std::to_string(2 * slots()) + " buffers of " +
              std::to_string(buffer_bytes) + " bytes (S=" + std::to_string(slots()) +
              " slots x 2 for ping-pong); use more " +
              "chunks (chunk_plan::for_chunk_bytes) or fewer slots. " + e.what());
    }
    // Stream-ordered allocations become usable from the other streams once this one is done.
    owner.synchronize();
  }

  void release_slots() noexcept {
    synchronize_all();
    for (void* b : buffers) pool->deallocate(streams[compute].view(), b, buffer_bytes);
    buffers.clear();
  }

  void create_events() {
    const auto count = static_cast<std::size_t>(plan.size()) * phase_count * 2;
    events.reserve(count);
    for (std::size_t e = 0; e < count; ++e) events.emplace_back(backend, event_flags::timing);
  }

  void ensure_staging(bool input, bool output) {
    const auto ring = static_cast<std::size_t>(slots());
    if (input && !staging_in) staging_in.emplace(backend, ring * max_input_bytes);
    if (output && !staging_out) staging_out.emplace(backend, ring * max_output_bytes);
  }
  [[nodiscard]] char* staging_slot(const std::optional<pinned_buffer>& buffer, int chunk,
                                   std::size_t stride) const {
    return static_cast<char*>(buffer->data()) + static_cast<std::size_t>(chunk % slots()) * stride;
  }

  bool decide_staging(const void* ptr) const {
    switch (options.staging) {
      case host_staging::always:
        return true;
      case host_staging::never:
        return false;
      case host_staging::automatic:
        break;
    }
    return !pinned_or_device(backend, ptr);
  }

  // Copies chunk c's frame from `a` to `b` on `s`: whole planes as contiguous copies, the
  // strided rest (rows and columns beside regions[0]) in one batched copy.
  void enqueue_frame(stream_view s, int c, const void* a, void* b) {
    const chunk& ch = plan[c];
    const chunk_frame& frame = frames[static_cast<std::size_t>(c)];
    for (const chunk_frame::range& r : frame.ranges) {
      copy_async(s, static_cast<char*>(b) + bytes(r.first),
                 static_cast<const char*>(a) + bytes(r.first), bytes(r.cells));
    }
    std::array<strided_copy, max_batch> copies{};
    int count = 0;
    for (const box& part : frame.boxes) {
      copies[static_cast<std::size_t>(count++)] = {
          field_block(b, ch.layout, part, element_bytes),
          field_block(const_cast<void*>(a), ch.layout, part, element_bytes), part.extents()};
    }
    copy_strided_batch(s, element_bytes, copies.data(), count);
  }

  // Runs the k steps of one chunk on `s`: the second buffer first gets the frame (the input
  // cells step 1 does not write) so the cells no step writes are valid in both buffers, then
  // steps alternate between them.
  void enqueue_compute(stream_view s, int c, const untyped_compute& fn) {
    const chunk& ch = plan[c];
    void* a = slot_buffer(c, 0);
    void* b = slot_buffer(c, 1);
    enqueue_frame(s, c, a, b);
    for (int step = 1; step <= plan.steps_per_pass(); ++step) {
      fn(s, ch.layout, a, b, ch.regions[static_cast<std::size_t>(step - 1)], step);
      std::swap(a, b);
    }
  }

  void prefill_slots(const void* in, bool staged) {
    // compute_only times kernels alone, on real data: copy the first S chunks in untimed.
    const int n = std::min(slots(), plan.size());
    for (int c = 0; c < n; ++c) {
      const chunk& ch = plan[c];
      const char* src = static_cast<const char*>(in) + bytes(ch.input_offset);
      if (staged) {
        char* stage = staging_slot(staging_in, c, max_input_bytes);
        std::memcpy(stage, src, bytes(ch.input_cells));
        src = stage;
      }
      copy_async(streams[h2d], slot_buffer(c, 0), src, bytes(ch.input_cells));
    }
    streams[h2d].synchronize();
  }

  void enqueue_chunk(int c, const void* in, void* out, const untyped_compute& fn,
                     const mode_phases& m, pass_mode mode) {
    const chunk& ch = plan[c];
    const int s = slots();
    const int previous = c - s;  // the chunk that last used this slot and staging buffers
    const std::size_t in_bytes = bytes(ch.input_cells);
    const std::size_t out_bytes = bytes(ch.output_cells);
    const char* host_in = static_cast<const char*>(in) + bytes(ch.input_offset);
    char* host_out = static_cast<char*>(out) + bytes(ch.output_offset);
    const char* h2d_src = m.staged_in ? staging_slot(staging_in, c, max_input_bytes) : host_in;
    char* d2h_dst = m.staged_out ? staging_slot(staging_out, c, max_output_bytes) : host_out;
    const char* d2h_src = static_cast<const char*>(slot_buffer(c, final_buffer())) +
                          bytes(ch.output_offset_in_buffer());

    const auto begin = [&](phase p) {
      const stream_view st = stream_for(p, mode);
      ev(c, p, 0).record(st);
      return st;
    };
    const auto end = [&](phase p) { ev(c, p, 1).record(stream_for(p, mode)); };
    const auto wait = [&](phase p, int chunk_index, phase on) {
      if (chunk_index >= 0) wait_event(stream_for(p, mode), ev(chunk_index, on, 1).view());
    };

    if (m.active[stage_in]) {
      wait(stage_in, previous, h2d);  // the staging buffer's last H2D has read it
      const stream_view st = begin(stage_in);
      copies_in[static_cast<std::size_t>(c)] =
          host_copy{const_cast<char*>(h2d_src), host_in, in_bytes, phase_nvtx[stage_in]};
      launch_host_func(st, run_host_copy, &copies_in[static_cast<std::size_t>(c)]);
      end(stage_in);
    }
    if (m.active[h2d]) {
      if (m.active[stage_in]) wait(h2d, c, stage_in);
      if (m.linked) wait(h2d, previous, d2h);  // the slot's last chunk has been copied out
      copy_async(begin(h2d), slot_buffer(c, 0), h2d_src, in_bytes);
      end(h2d);
    }
    if (m.active[compute]) {
      if (m.linked) wait(compute, c, h2d);
      enqueue_compute(begin(compute), c, fn);
      end(compute);
    }
    if (m.active[d2h]) {
      if (m.linked) wait(d2h, c, compute);
      if (m.active[stage_out]) wait(d2h, previous, stage_out);  // staging buffer drained
      copy_async(begin(d2h), d2h_dst, d2h_src, out_bytes);
      end(d2h);
    }
    if (m.active[stage_out]) {
      wait(stage_out, c, d2h);
      const stream_view st = begin(stage_out);
      copies_out[static_cast<std::size_t>(c)] =
          host_copy{host_out, d2h_dst, out_bytes, phase_nvtx[stage_out]};
      launch_host_func(st, run_host_copy, &copies_out[static_cast<std::size_t>(c)]);
      end(stage_out);
    }
  }

  std::size_t phase_bytes(int c, phase p) const {
    const chunk& ch = plan[c];
    return p == d2h || p == stage_out ? bytes(ch.output_cells) : bytes(ch.input_cells);
  }

  pass_statistics collect(const mode_phases& m, pass_mode mode, double start_us,
                          trace_recorder* trace) {
    pass_statistics st;
    st.mode = mode;
    st.chunks = plan.size();
    st.slots = slots();
    st.steps_per_pass = plan.steps_per_pass();
    st.staged_input = m.active[stage_in];
    st.staged_output = m.active[stage_out];
    std::array<double, phase_count> seconds{};
    std::array<int, phase_count> tracks{};
    if (trace != nullptr) {
      for (int p = 0; p < phase_count; ++p) {
        if (m.active[static_cast<std::size_t>(p)]) {
          tracks[static_cast<std::size_t>(p)] =
              trace->track(phase_tracks[static_cast<std::size_t>(p)]);
        }
      }
    }
    double last_ms = 0.0;
    for (int c = 0; c < plan.size(); ++c) {
      for (int p = 0; p < phase_count; ++p) {
        if (!m.active[static_cast<std::size_t>(p)]) continue;
        const auto ph = static_cast<phase>(p);
        const double from_ms = event::elapsed_ms(start, ev(c, ph, 0));
        const double to_ms = event::elapsed_ms(start, ev(c, ph, 1));
        const double span_ms = std::max(0.0, to_ms - from_ms);
        seconds[static_cast<std::size_t>(p)] += span_ms * 1e-3;
        last_ms = std::max(last_ms, to_ms);
        if (trace != nullptr) {
          std::vector<trace_arg> args{{"chunk", c},
                                      {"bytes", static_cast<std::int64_t>(phase_bytes(c, ph))},
                                      {"slot", c % slots()},
                                      {"pass", passes}};
          if (ph == compute) args.push_back({"steps", plan.steps_per_pass()});
          trace->add_span(tracks[static_cast<std::size_t>(p)],
                          phase_tracks[static_cast<std::size_t>(p)], start_us + from_ms * 1e3,
                          span_ms * 1e3, std::move(args));
        }
      }
    }
    st.pass_seconds = last_ms * 1e-3;
    st.stage_in_seconds = seconds[stage_in];
    st.h2d_seconds = seconds[h2d];
    st.kernel_seconds = seconds[compute];
    st.d2h_seconds = seconds[d2h];
    st.stage_out_seconds = seconds[stage_out];
    if (m.active[h2d]) st.h2d_bytes = bytes(plan.input_cells_total());
    if (m.active[d2h]) st.d2h_bytes = bytes(plan.output_cells_total());
    if (m.computes) st.cell_updates = plan.interior_cell_updates();
    return st;
  }
};

pipeline_engine::pipeline_engine(backend_kind backend, memory_pool& pool, chunk_plan plan,
                                 std::size_t element_bytes, pipeline_options options) {
  FUNNEL_EXPECTS(options.slots >= 1, "pipeline_options.slots=" + std::to_string(options.slots) +
                                         " is invalid: at least one slot is needed (3 overlaps "
                                         "copies in, kernels and copies out)");
  FUNNEL_EXPECTS(pool.backend() == backend,
                 "the memory pool '" + pool.name() + "' is a " + to_string(pool.backend()) +
                     " pool but the executor runs on the " + to_string(backend) + " backend");
  FUNNEL_EXPECTS(element_bytes > 0, "element size 0 is invalid");
  state_ = std::make_unique<state>(backend, pool, std::move(plan), element_bytes, options);
  state& s = *state_;
  for (const chunk& ch : s.plan.chunks()) {
    s.max_input_bytes = std::max(s.max_input_bytes, s.bytes(ch.input_cells));
    s.max_output_bytes = std::max(s.max_output_bytes, s.bytes(ch.output_cells));
    s.frames.push_back(frame_of(ch));
  }
  for (int p = 0; p < phase_count; ++p) {
    nvtx_range::name_stream(s.streams[static_cast<std::size_t>(p)],
                            phase_nvtx[static_cast<std::size_t>(p)]);
  }
  s.allocate_slots();
  s.create_events();
  s.copies_in.resize(static_cast<std::size_t>(s.plan.size()));
  s.copies_out.resize(static_cast<std::size_t>(s.plan.size()));
}

pipeline_engine::~pipeline_engine() = default;

pass_statistics pipeline_engine::run(const void* in, void* out, const untyped_compute& compute,
                                     trace_recorder* trace, pass_mode mode) {
  state& s = *state_;
  const std::size_t field_bytes = s.bytes(s.plan.field().allocated_cells());
  FUNNEL_EXPECTS(in != nullptr && out != nullptr,
                 "pipeline_executor::run: the input and output arrays must not be null");
  const auto* in_begin = static_cast<const char*>(in);
  const auto* out_begin = static_cast<const char*>(out);
  FUNNEL_EXPECTS(in_begin + field_bytes <= out_begin || out_begin + field_bytes <= in_begin,
                 "pipeline_executor::run: the input and output arrays overlap; chunk inputs "
                 "overlap neighbouring chunks, so use two arrays and swap them after each pass");
  const nvtx_range range("funnel::pipeline::pass");
  const bool stage_input = s.decide_staging(in);
  const bool stage_output = s.decide_staging(out);
  s.ensure_staging(stage_input, stage_output);
  const mode_phases m = phases_of(mode, stage_input, stage_output);
  FUNNEL_EXPECTS(!m.computes || static_cast<bool>(compute),
                 "pipeline_executor::run: the compute function is empty");

  try {
    if (mode == pass_mode::compute_only) s.prefill_slots(in, stage_input);
    // Every stream waits for the start event, so all spans are measured from one origin.
    const double start_us = trace != nullptr ? trace->now_us() : 0.0;
    s.start.record(s.streams[h2d]);
    for (int p = 0; p < phase_count; ++p) {
      if (p != h2d) wait_event(s.streams[static_cast<std::size_t>(p)], s.start.view());
    }
    for (int c = 0; c < s.plan.size(); ++c) s.enqueue_chunk(c, in, out, compute, m, mode);
    for (const auto& st : s.streams) st.synchronize();
    pass_statistics stats = s.collect(m, mode, start_us, trace);
    ++s.passes;
    return stats;
  } catch (...) {
    // Work already enqueued still refers to the slots and the host arrays: let it drain.
    s.synchronize_all();
    throw;
  }
}

const chunk_plan& pipeline_engine::plan() const noexcept { return state_->plan; }
const pipeline_options& pipeline_engine::options() const noexcept { return state_->options; }
backend_kind pipeline_engine::backend() const noexcept { return state_->backend; }
std::size_t pipeline_engine::device_bytes() const noexcept {
  return state_->buffer_bytes * state_->buffers.size();
}
std::size_t pipeline_engine::staging_bytes() const noexcept {
  return (state_->staging_in ? state_->staging_in->size() : 0) +
         (state_->staging_out ? state_->staging_out->size() : 0);
}

}  // namespace funnel::detail
