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

/// The entries the attach table holds at creation (it grows), and the longest packed remote key
/// an entry holds.
constexpr std::size_t kInitialAttach = 64;
constexpr std::size_t kAttachKeyMax = 488;

/// The attach table a rank exposes: a header at a fixed address (exchanged at creation), then
/// `count` entries in no particular order, in the array at `entries`. A seqlock: the owner
/// makes `version` odd, rewrites what changed, and makes it even again; readers retry while it
/// is odd or when it changed during their read.
///
/// The array starts in the table's own registration, right after the header, with room for
/// kInitialAttach entries; when it is full, the owner registers one of twice the capacity,
/// copies the entries, and publishes its address and packed key in the header (`generation`
/// counts the arrays, so a reader unpacks a key once per array). Cost: a registration and a
/// copy per doubling (amortised O(1) an attach); the arrays left behind stay registered until
/// the window is freed, since an origin may still be reading one (at most as much memory
/// again as the current array, 520 bytes an entry); an attach or detach rewrites one or two
/// entries, and an origin whose copy is stale reads the whole array again (count x 520 bytes).
struct TableHeader {
  std::uint64_t version;
  std::uint64_t count;
  std::uint64_t entries;     // address of the entry array; 0: right after this header
  std::uint64_t capacity;    // entries the array holds
  std::uint64_t generation;  // changes with `entries`
  std::uint64_t keyLen;      // the array's packed key (generation > 0)
  std::byte key[kAttachKeyMax];
};
/// The bytes of the header a reader reads first (version to keyLen).
constexpr std::size_t kHeaderPrefix = offsetof(TableHeader, key);
struct TableEntry {
  std::uint64_t base;
  std::uint64_t len;
  std::uint64_t id;  // unique per attach at this rank: origins keep unpacked keys by it
  std::uint64_t keyLen;
  std::byte key[kAttachKeyMax];
};
static_assert(sizeof(TableEntry) % 8 == 0 && sizeof(TableHeader) % 8 == 0);
constexpr std::size_t kTableBytes = sizeof(TableHeader) + kInitialAttach * sizeof(TableEntry);

/// A region this rank attached.
struct AttachedRegion {
  std::uint64_t base;
  std::uint64_t len;
  std::uint64_t id;
  std::unique_ptr<transport::MemoryRegion> own;  // our registration (none for MPI_Alloc_mem)
  std::vector<std::byte> key;
  std::size_t slot = 0;  // its entry in the published array
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
  std::vector<CachedRegion> regions;          // sorted by base
  // The entry array of generation > 0 (a grown table) and its key.
  std::uint64_t generation = 0;
  std::unique_ptr<transport::RemoteKey> entriesKey;
};

struct DynamicState {
  std::unique_ptr<transport::MemoryRegion> table;  // kTableBytes, this rank's attach table
  std::unique_ptr<transport::MemoryRegion> grown;  // the entry array once it outgrew the table
  std::vector<std::unique_ptr<transport::MemoryRegion>> retired;  // earlier arrays (see above)
  std::uint64_t capacity = kInitialAttach;
  std::uint64_t generation = 0;
  std::vector<AttachedRegion> attached;  // sorted by base
  std::vector<std::uint64_t> slotBase;   // slot -> the base of the region it holds
  std::uint64_t nextId = 1;
  std::vector<PeerTable> peers;
  std::vector<std::byte> scratch;  // entries read from a peer
};

}  // namespace onesided::detail
