// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file record_format.hpp
 * @brief Internal: the record's byte layout, shared by record_writer and read_record
 * (docs/report.md describes it for other readers).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "funnel/report/rank_identity.hpp"
#include "funnel/report/record_device.hpp"

namespace funnel::report::detail {

/// "FNRC" as bytes: the first 4 bytes of every chunk.
inline constexpr char chunk_magic[4] = {'F', 'N', 'R', 'C'};
/// The format version every chunk header carries; a reader refuses others.
inline constexpr std::uint16_t format_version = 1;
/// Bytes of a chunk header: magic, version u16, type u16, payload bytes u32, sequence u32,
/// checksum u64 (FNV-1a 64 over header bytes 0-15, then the payload).
inline constexpr std::size_t chunk_header_bytes = 24;
/// A payload larger than this is taken as damage (a writer never stages so much in one chunk).
inline constexpr std::uint32_t max_payload_bytes = 256u << 20;
/// Spans per interval chunk at most, so a chunk stays below max_payload_bytes.
inline constexpr std::size_t max_spans_per_chunk = 1u << 20;

/// Chunk types.
enum chunk_type : std::uint16_t {
  chunk_identity = 1,   ///< key=value lines: rank_identity (always the first chunk)
  chunk_device = 2,     ///< key=value lines: record_device
  chunk_intervals = 3,  ///< u32 slot, u32 kind, 3 x i64 clock sample, u64 n, n x (i64, i64)
  chunk_alive = 4,      ///< 3 x i64 clock sample
  chunk_note = 5,       ///< one line of UTF-8 text
  chunk_end = 6,        ///< 3 x i64 clock sample, u64 dropped records: the clean end marker
  chunk_counts = 7,     ///< u32 slot, u32 kind, u64 activity records traced since the last one
};

/// FNV-1a 64 offset basis.
inline constexpr std::uint64_t fnv1a_basis = 14695981039346656037ULL;

/// Continues an FNV-1a 64 hash over `bytes` bytes.
[[nodiscard]] std::uint64_t fnv1a(const void* data, std::size_t bytes,
                                  std::uint64_t state = fnv1a_basis) noexcept;

/// Appends `value` little-endian.
void put_u16(std::string& out, std::uint16_t value);
/// Appends `value` little-endian.
void put_u32(std::string& out, std::uint32_t value);
/// Appends `value` little-endian.
void put_u64(std::string& out, std::uint64_t value);
/// Appends `value` little-endian (two's complement).
void put_i64(std::string& out, std::int64_t value);

/// Reads a little-endian u16 at `p`.
[[nodiscard]] std::uint16_t get_u16(const unsigned char* p) noexcept;
/// Reads a little-endian u32 at `p`.
[[nodiscard]] std::uint32_t get_u32(const unsigned char* p) noexcept;
/// Reads a little-endian u64 at `p`.
[[nodiscard]] std::uint64_t get_u64(const unsigned char* p) noexcept;
/// Reads a little-endian i64 at `p`.
[[nodiscard]] std::int64_t get_i64(const unsigned char* p) noexcept;

/// The identity chunk's payload: "key=value" lines (text, so the format can grow).
[[nodiscard]] std::string encode_identity(const rank_identity& who);
/// Reads an identity payload; unknown keys are skipped. False when a required key is missing.
[[nodiscard]] bool decode_identity(const std::string& payload, rank_identity& who);
/// The device chunk's payload: "key=value" lines.
[[nodiscard]] std::string encode_device(const record_device& device);
/// Reads a device payload. False when the slot is missing or not a number.
[[nodiscard]] bool decode_device(const std::string& payload, record_device& device);

}  // namespace funnel::report::detail
