// SPDX-License-Identifier: BSD-3-Clause
// The committed form of a datatype ("dataloop", after MPICH's): a small tree that describes the
// bytes of one element in type-map order, with adjacent runs merged and regular strides kept as
// one descriptor, never one entry per element. A Cursor walks count elements of it and yields
// contiguous segments lazily, from and to any byte position of the packed stream, so origin and
// target layouts can be walked in step and a transfer can be cut into pieces anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "copy.hpp"
#include "onesided/datatype.hpp"

namespace onesided::detail {

struct Loop {
  enum Kind : std::uint8_t {
    /// `count` copies of `child` at offset + i * stride; with no child, each copy is a run of
    /// `blocklen` bytes (a strided descriptor; count 1 is a single run).
    kVector,
    /// blocks[i]: at offset + blocks[i].offset, either a run of n bytes (child < 0) or n copies
    /// of children[child] spaced by its extent (indexed and struct layouts).
    kBlocks,
  };
  struct Block {
    std::ptrdiff_t offset;
    std::size_t n;
    std::size_t prefix;  // packed bytes of the blocks before this one
    std::int32_t child;  // index into children, or -1 for a run of n bytes
  };
  struct Child {
    std::shared_ptr<const Loop> loop;
    std::ptrdiff_t extent;
  };

  Kind kind = kVector;
  std::size_t size = 0;   // packed bytes of one instance
  std::ptrdiff_t lo = 0;  // true lower bound of one instance (relative to its origin)
  std::ptrdiff_t hi = 0;  // true upper bound
  double runs = 0;        // contiguous runs of one instance (upper bound; merged runs count 1)
  int depth = 1;          // frames a cursor needs for this subtree
  bool disjoint = true;   // no byte of one instance is written twice (false: maybe)
  bool monotone = true;   // runs come in increasing address order without overlap
  std::ptrdiff_t offset = 0;
  // kVector
  std::size_t count = 0;
  std::size_t blocklen = 0;  // bytes per copy when child is null
  std::ptrdiff_t stride = 0;
  std::shared_ptr<const Loop> child;
  // kBlocks
  std::shared_ptr<const std::vector<Block>> blocks;
  std::vector<Child> children;

  [[nodiscard]] bool isRun() const noexcept { return kind == kVector && count == 1 && !child; }
  [[nodiscard]] bool isByteVector() const noexcept { return kind == kVector && !child; }
};

/// Layout builders (datatype.cpp uses them; exposed for the unit tests).
std::shared_ptr<const Loop> makeRun(std::ptrdiff_t offset, std::size_t len);
/// `count` copies of `unit` at offset + i * stride (merged into a run or a byte vector when the
/// copies abut or are plain runs). Null when empty.
std::shared_ptr<const Loop> makeStrided(std::size_t count, std::ptrdiff_t stride,
                                        std::ptrdiff_t offset, std::shared_ptr<const Loop> unit);
/// One block list: entries (offset, n copies of child spaced by extent); child null entries are
/// skipped. Merges adjacent runs and turns regular lists into vectors.
struct BlockSpec {
  std::ptrdiff_t offset;
  std::size_t n;
  std::shared_ptr<const Loop> child;
  std::ptrdiff_t extent;
};
std::shared_ptr<const Loop> makeBlocks(const std::vector<BlockSpec>& specs);

/// The whole stream of `count` elements of a committed type as one strided descriptor, when it
/// is one: `count` runs of `blocklen` bytes, the first at `offset`, each `stride` after the
/// previous (a contiguous stream is count 1). The fast paths of transfers and pack use it.
struct Strided {
  std::ptrdiff_t offset = 0;
  std::size_t blocklen = 0;
  std::ptrdiff_t stride = 0;
  std::size_t count = 0;
};
bool asStrided(const Datatype& t, std::size_t count, Strided& out);

/// memcpy of one run, with the element sizes (4, 8, 16 bytes) inline: strided layouts copy
/// millions of small runs, where a library call per run would dominate.
inline void copyRun(std::byte* dst, const std::byte* src, std::size_t n) {
  switch (n) {
    case 4:
      std::memcpy(dst, src, 4);
      return;
    case 8:
      std::memcpy(dst, src, 8);
      return;
    case 16:
      std::memcpy(dst, src, 16);
      return;
    default:
      detail::copyBytes(dst, src, n);
  }
}

/// Walks `count` elements of a committed type, element after element, yielding contiguous
/// segments (offset relative to the buffer, length) of the packed stream in order. Cheap to
/// create (no allocation for layouts up to 12 levels deep); not copyable.
class Cursor {
 public:
  Cursor(const Datatype& t, std::size_t count);
  ~Cursor();
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  /// Packed bytes in the whole stream, and consumed so far.
  [[nodiscard]] std::size_t total() const noexcept { return total_; }
  [[nodiscard]] std::size_t position() const noexcept { return pos_; }
  /// Continues from packed byte `pos` (0 .. total()).
  void seek(std::size_t pos);
  /// The next contiguous segment of at most maxLen bytes (adjacent runs coalesced), consumed;
  /// false at the end of the stream.
  bool next(std::size_t maxLen, Datatype::Segment& out) {
    if (runLeft_ == 0 && !fetch()) return false;
    out.offset = runOff_;
    std::size_t n = runLeft_ < maxLen ? runLeft_ : maxLen;
    out.len = n;
    runOff_ += static_cast<std::ptrdiff_t>(n);
    runLeft_ -= n;
    pos_ += n;
    // Coalesce the following runs that continue this one.
    while (runLeft_ == 0 && out.len < maxLen && fetch()) {
      if (runOff_ != out.offset + static_cast<std::ptrdiff_t>(out.len)) break;
      n = runLeft_ < maxLen - out.len ? runLeft_ : maxLen - out.len;
      out.len += n;
      runOff_ += static_cast<std::ptrdiff_t>(n);
      runLeft_ -= n;
      pos_ += n;
    }
    return true;
  }

 private:
  struct Frame {
    const Loop* n;
    std::size_t i;
    std::size_t j;
    std::ptrdiff_t base;
  };
  static constexpr int kInlineFrames = 12;

  /// The next raw run of the walk into runOff_ / runLeft_; false at the end. Inline: it runs
  /// once per run of a transfer.
  bool fetch();
  void push(const Loop* n, std::ptrdiff_t base) { frames_[depth_++] = {n, 0, 0, base}; }

  Loop top_;  // count elements of the type's layout, as one node
  Frame inline_[kInlineFrames];
  std::unique_ptr<Frame[]> heap_;
  Frame* frames_ = inline_;
  int depth_ = 0;
  std::ptrdiff_t runOff_ = 0;
  std::size_t runLeft_ = 0;
  std::size_t pos_ = 0;
  std::size_t total_ = 0;
};

inline bool Cursor::fetch() {
  while (depth_ > 0) {
    Frame& f = frames_[depth_ - 1];
    const Loop& n = *f.n;
    if (n.kind == Loop::kVector) {
      if (f.i == n.count) {
        --depth_;
        continue;
      }
      const std::ptrdiff_t at = f.base + n.offset + static_cast<std::ptrdiff_t>(f.i) * n.stride;
      ++f.i;
      if (!n.child) {
        runOff_ = at;
        runLeft_ = n.blocklen;
        return true;
      }
      push(n.child.get(), at);
      continue;
    }
    const auto& blocks = *n.blocks;
    if (f.i == blocks.size()) {
      --depth_;
      continue;
    }
    const Loop::Block& b = blocks[f.i];
    if (b.child < 0) {
      runOff_ = f.base + n.offset + b.offset;
      runLeft_ = b.n;
      ++f.i;
      return true;
    }
    const Loop::Child& c = n.children[static_cast<std::size_t>(b.child)];
    const std::ptrdiff_t at =
        f.base + n.offset + b.offset + static_cast<std::ptrdiff_t>(f.j) * c.extent;
    if (++f.j == b.n) {
      f.j = 0;
      ++f.i;
    }
    push(c.loop.get(), at);
  }
  return false;
}

/// Every segment of count elements in order (tests and the overlap check).
std::vector<Datatype::Segment> segments(const Datatype& t, std::size_t count);

}  // namespace onesided::detail
