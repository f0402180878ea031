// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/read_record.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "funnel/report/activity_kind.hpp"
#include "funnel/report/detail/record_format.hpp"

namespace funnel::report {
namespace {

clock_sample get_sample(const unsigned char* p) {
  return {detail::get_i64(p), detail::get_i64(p + 8), detail::get_i64(p + 16)};
}

void see(rank_record& record, const clock_sample& at) {
  if (at.monotonic_ns >= record.last_seen.monotonic_ns) record.last_seen = at;
}

// Applies one accepted chunk; returns what is wrong with its payload ("" when nothing).
std::string apply(rank_record& record, std::uint16_t type, const unsigned char* p,
                  std::size_t size) {
  constexpr std::size_t sample_bytes = 24;
  switch (type) {
    case detail::chunk_identity: {
      if (record.has_identity) return "a second identity chunk";
      if (!detail::decode_identity(std::string(reinterpret_cast<const char*>(p), size),
                                   record.identity)) {
        return "identity without its clock sample";
      }
      record.has_identity = true;
      record.last_seen = record.identity.start_clock;
      return {};
    }
    case detail::chunk_device: {
      record_device device;
      if (!detail::decode_device(std::string(reinterpret_cast<const char*>(p), size), device)) {
        return "device chunk without a slot";
      }
      record.devices.push_back(device);
      return {};
    }
    case detail::chunk_intervals: {
      constexpr std::size_t head = 8 + sample_bytes + 8;
      if (size < head) return "interval chunk too short";
      const std::uint32_t slot = detail::get_u32(p);
      const std::uint32_t kind = detail::get_u32(p + 4);
      const std::uint64_t count = detail::get_u64(p + 8 + sample_bytes);
      if (kind > 1) return "interval chunk of unknown kind " + std::to_string(kind);
      if (count > (size - head) / 16 || head + 16 * count != size) {
        return "interval chunk whose count does not match its size";
      }
      see(record, get_sample(p + 8));
      rank_record::slot_activity& slot_spans = record.activity[slot];
      busy_interval_set& into = static_cast<activity_kind>(kind) == activity_kind::kernel
                                    ? slot_spans.kernels
                                    : slot_spans.copies;
      for (std::uint64_t i = 0; i < count; ++i) {
        const unsigned char* span = p + head + 16 * i;
        into.add({detail::get_i64(span), detail::get_i64(span + 8)});
      }
      record.spans += count;
      return {};
    }
    case detail::chunk_counts: {
      if (size != 16) return "count chunk of the wrong size";
      const std::uint32_t kind = detail::get_u32(p + 4);
      if (kind > 1) return "count chunk of unknown kind " + std::to_string(kind);
      rank_record::slot_activity& slot = record.activity[detail::get_u32(p)];
      (static_cast<activity_kind>(kind) == activity_kind::kernel ? slot.kernel_records
                                                                 : slot.copy_records) +=
          detail::get_u64(p + 8);
      return {};
    }
    case detail::chunk_alive:
      if (size != sample_bytes) return "alive chunk of the wrong size";
      see(record, get_sample(p));
      return {};
    case detail::chunk_note:
      record.notes.emplace_back(reinterpret_cast<const char*>(p), size);
      return {};
    case detail::chunk_end:
      if (size != sample_bytes + 8) return "end chunk of the wrong size";
      see(record, get_sample(p));
      record.dropped_records = detail::get_u64(p + sample_bytes);
      record.clean_end = true;
      return {};
    default:
      return {};  // a chunk type of a later version: skipped, the chunks after it still count
  }
}

}  // namespace

rank_record read_record(const std::string& path) {
  rank_record record;
  record.path = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    record.damage = std::string("cannot be read: ") + std::strerror(errno);
    return record;
  }
  const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) {
    record.damage = "cannot be read to its end";
    return record;
  }
  if (data.empty()) {
    record.damage = "empty file";
    record.truncated_tail = true;
    return record;
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t pos = 0;
  std::uint32_t sequence = 0;
  while (pos < data.size()) {
    const std::string where =
        "chunk " + std::to_string(sequence) + " at byte " + std::to_string(pos) + ": ";
    const std::size_t left = data.size() - pos;
    const unsigned char* h = bytes + pos;
    // The magic first: a short file of something else is no record, not a cut-short one.
    if (std::memcmp(h, detail::chunk_magic, std::min(left, sizeof detail::chunk_magic)) != 0) {
      record.damage = pos == 0 ? std::string("not a funnel record (no chunk magic)")
                               : where + "no chunk starts here";
      break;
    }
    if (left < detail::chunk_header_bytes) {
      record.damage = where + "cut short (" + std::to_string(left) + " of " +
                      std::to_string(detail::chunk_header_bytes) + " header bytes)";
      record.truncated_tail = true;
      break;
    }
    const std::uint16_t version = detail::get_u16(h + 4);
    const std::uint16_t type = detail::get_u16(h + 6);
    const std::uint32_t length = detail::get_u32(h + 8);
    const std::uint32_t seq = detail::get_u32(h + 12);
    const std::uint64_t sum = detail::get_u64(h + 16);
    if (version != detail::format_version) {
      record.damage = where + "format version " + std::to_string(version) + " (this reader " +
                      "knows " + std::to_string(detail::format_version) + ")";
      break;
    }
    if (length > detail::max_payload_bytes) {
      record.damage = where + "payload length " + std::to_string(length) + " too large";
      break;
    }
    if (left - detail::chunk_header_bytes < length) {
      record.damage = where + "cut short (" + std::to_string(left - detail::chunk_header_bytes) +
                      " of " + std::to_string(length) + " payload bytes)";
      record.truncated_tail = true;
      break;
    }
    std::uint64_t check = detail::fnv1a(h, 16);
    check = detail::fnv1a(h + detail::chunk_header_bytes, length, check);
    if (check != sum) {
      record.damage = where + "checksum mismatch";
      break;
    }
    if (seq != sequence) {
      record.damage = where + "sequence number " + std::to_string(seq) + " where " +
                      std::to_string(sequence) + " was due";
      break;
    }
    if (sequence == 0 && type != detail::chunk_identity) {
      record.damage = where + "the first chunk is not the identity";
      break;
    }
    const std::string wrong = apply(record, type, h + detail::chunk_header_bytes, length);
    if (!wrong.empty()) {
      record.damage = where + wrong;
      break;
    }
    ++sequence;
    ++record.chunks;
    pos += detail::chunk_header_bytes + length;
    record.bytes = pos;
  }
  for (auto& entry : record.activity) {
    entry.second.kernels.normalize();
    entry.second.copies.normalize();
  }
  return record;
}

bool looks_like_record(const std::string& path) noexcept {
  try {
    std::ifstream in(path, std::ios::binary);
    char head[sizeof detail::chunk_magic] = {};
    if (!in.read(head, sizeof head)) return false;
    return std::memcmp(head, detail::chunk_magic, sizeof head) == 0;
  } catch (...) {
    return false;
  }
}

}  // namespace funnel::report
