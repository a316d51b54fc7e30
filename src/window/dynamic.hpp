// SPDX-License-Identifier: BSD-3-Clause
// Dynamic windows' state (MPI_Win_create_dynamic, src/window/dynamic.cpp): this rank's attach
// table, exposed for one-sided reads, and the origin's cache of every target's table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transport/transport.hpp"

namespace onesided::detail {

/// Regions one rank can have attached at once, and the longest packed remote key an entry holds.
constexpr std::size_t kMaxAttach = 64;
constexpr std::size_t kAttachKeyMax = 488;

/// The attach table a rank exposes: a header, then `count` entries. A seqlock: the owner makes
/// `version` odd, rewrites the entries and the count, and makes it even again; readers retry
/// while it is odd or when it changed during their read.
struct TableHeader {
  std::uint64_t version;
  std::uint64_t count;
};
struct TableEntry {
  std::uint64_t base;
  std::uint64_t len;
  std::uint64_t id;  // unique per attach at this rank: origins keep unpacked keys by it
  std::uint64_t keyLen;
  std::byte key[kAttachKeyMax];
};
static_assert(sizeof(TableEntry) % 8 == 0 && sizeof(TableHeader) % 8 == 0);
constexpr std::size_t kTableBytes = sizeof(TableHeader) + kMaxAttach * sizeof(TableEntry);

/// A region this rank attached.
struct AttachedRegion {
  std::uint64_t base;
  std::uint64_t len;
  std::uint64_t id;
  std::unique_ptr<transport::MemoryRegion> own;  // our registration (none for MPI_Alloc_mem)
  std::vector<std::byte> key;
};

/// A target's region as the origin last read it.
struct CachedRegion {
  std::uint64_t base;
  std::uint64_t len;
  std::uint64_t id;
  std::unique_ptr<transport::RemoteKey> key;
};

/// The origin's view of one target's table.
struct PeerTable {
  std::uint64_t tableBase = 0;
  std::vector<std::byte> packedKey;
  std::unique_ptr<transport::RemoteKey> key;
  std::uint64_t version = ~std::uint64_t{0};  // of the cached copy (never a real, even one)
  std::uint64_t epoch = ~std::uint64_t{0};    // the window epoch in which it was last checked
  std::vector<CachedRegion> regions;
};

struct DynamicState {
  std::unique_ptr<transport::MemoryRegion> table;  // kTableBytes, this rank's attach table
  std::vector<AttachedRegion> attached;
  std::uint64_t nextId = 1;
  std::vector<PeerTable> peers;
  std::vector<std::byte> scratch;  // entries read from a peer
};

}  // namespace onesided::detail
