// SPDX-License-Identifier: BSD-3-Clause
#include "datatype/loop.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "onesided/errors.hpp"

namespace onesided::detail {
namespace {

std::ptrdiff_t span(const Loop& l) { return l.hi - l.lo; }

/// Bounds of `count` copies of [lo, hi) at offset + i * stride.
void stridedBounds(std::size_t count, std::ptrdiff_t stride, std::ptrdiff_t offset,
                   std::ptrdiff_t lo, std::ptrdiff_t hi, std::ptrdiff_t& outLo,
                   std::ptrdiff_t& outHi) {
  const std::ptrdiff_t last = static_cast<std::ptrdiff_t>(count - 1) * stride;
  outLo = offset + lo + std::min<std::ptrdiff_t>(0, last);
  outHi = offset + hi + std::max<std::ptrdiff_t>(0, last);
}

}  // namespace

std::shared_ptr<const Loop> makeRun(std::ptrdiff_t offset, std::size_t len) {
  if (len == 0) return nullptr;
  auto l = std::make_shared<Loop>();
  l->kind = Loop::kVector;
  l->count = 1;
  l->blocklen = len;
  l->offset = offset;
  l->size = len;
  l->lo = offset;
  l->hi = offset + static_cast<std::ptrdiff_t>(len);
  l->runs = 1;
  return l;
}

std::shared_ptr<const Loop> makeStrided(std::size_t count, std::ptrdiff_t stride,
                                        std::ptrdiff_t offset, std::shared_ptr<const Loop> unit) {
  if (count == 0 || !unit || unit->size == 0) return nullptr;
  if (count == 1 && offset == 0) return unit;
  if (count == 1) {  // the same layout, shifted
    auto l = std::make_shared<Loop>(*unit);
    l->offset += offset;
    l->lo += offset;
    l->hi += offset;
    return l;
  }
  auto l = std::make_shared<Loop>();
  if (unit->isRun()) {
    const auto len = static_cast<std::ptrdiff_t>(unit->blocklen);
    if (stride == len || count == 1) return makeRun(offset + unit->offset, unit->blocklen * count);
    // A strided descriptor: count runs of blocklen bytes.
    l->kind = Loop::kVector;
    l->count = count;
    l->blocklen = unit->blocklen;
    l->stride = stride;
    l->offset = offset + unit->offset;
    l->size = unit->blocklen * count;
    stridedBounds(count, stride, l->offset, 0, len, l->lo, l->hi);
    l->runs = static_cast<double>(count);
    l->disjoint = std::abs(stride) >= len;
    l->monotone = stride >= len;
    return l;
  }
  if (unit->isByteVector() && stride == static_cast<std::ptrdiff_t>(unit->count) * unit->stride) {
    // Copies of a strided descriptor that continue its stride: one longer descriptor.
    *l = *unit;
    l->count = unit->count * count;
    l->offset = offset + unit->offset;
    l->size = unit->size * count;
    stridedBounds(l->count, l->stride, l->offset, 0, static_cast<std::ptrdiff_t>(l->blocklen),
                  l->lo, l->hi);
    l->runs = static_cast<double>(l->count);
    return l;
  }
  l->kind = Loop::kVector;
  l->count = count;
  l->stride = stride;
  l->offset = offset;
  l->child = std::move(unit);
  const Loop& c = *l->child;
  l->size = c.size * count;
  stridedBounds(count, stride, offset, c.lo, c.hi, l->lo, l->hi);
  l->runs = c.runs * static_cast<double>(count);
  l->depth = c.depth + 1;
  l->disjoint = c.disjoint && (count == 1 || std::abs(stride) >= span(c));
  l->monotone = c.monotone && (count == 1 || stride >= span(c));
  return l;
}

std::shared_ptr<const Loop> makeBlocks(const std::vector<BlockSpec>& specs) {
  // Entries of plain runs whose copies abut become one run; adjacent runs merge.
  std::vector<Loop::Block> blocks;
  std::vector<Loop::Child> children;
  blocks.reserve(specs.size());
  for (const auto& s : specs) {
    if (s.n == 0 || !s.child || s.child->size == 0) continue;
    const Loop& c = *s.child;
    if (c.isRun() && (s.n == 1 || s.extent == static_cast<std::ptrdiff_t>(c.blocklen))) {
      const std::ptrdiff_t off = s.offset + c.offset;
      const std::size_t len = c.blocklen * s.n;
      if (!blocks.empty() && blocks.back().child < 0 &&
          blocks.back().offset + static_cast<std::ptrdiff_t>(blocks.back().n) == off) {
        blocks.back().n += len;
      } else {
        blocks.push_back({off, len, 0, -1});
      }
      continue;
    }
    // Children are deduplicated by identity (indexed types repeat one child).
    std::int32_t idx = -1;
    for (std::size_t k = children.size(); k-- > 0;) {
      if (children[k].loop == s.child && children[k].extent == s.extent) {
        idx = static_cast<std::int32_t>(k);
        break;
      }
    }
    if (idx < 0) {
      idx = static_cast<std::int32_t>(children.size());
      children.push_back({s.child, s.extent});
    }
    blocks.push_back({s.offset, s.n, 0, idx});
  }
  if (blocks.empty()) return nullptr;
  if (blocks.size() == 1) {
    const auto& b = blocks[0];
    if (b.child < 0) return makeRun(b.offset, b.n);
    const auto& c = children[static_cast<std::size_t>(b.child)];
    return makeStrided(b.n, c.extent, b.offset, c.loop);
  }
  // A regular list of equal runs at a constant stride is a strided descriptor.
  if (std::all_of(blocks.begin(), blocks.end(),
                  [&](const Loop::Block& b) { return b.child < 0 && b.n == blocks[0].n; })) {
    const std::ptrdiff_t stride = blocks[1].offset - blocks[0].offset;
    bool regular = true;
    for (std::size_t i = 2; i < blocks.size() && regular; ++i) {
      regular = blocks[i].offset - blocks[i - 1].offset == stride;
    }
    if (regular) {
      return makeStrided(blocks.size(), stride, blocks[0].offset, makeRun(0, blocks[0].n));
    }
  }
  auto l = std::make_shared<Loop>();
  l->kind = Loop::kBlocks;
  std::size_t prefix = 0;
  bool first = true;
  int depth = 1;
  // Bounds and the overlap facts: blocks sorted by address must not overlap one another, and
  // within a block the copies must not overlap.
  struct Extent {
    std::ptrdiff_t lo, hi;
  };
  std::vector<Extent> spans;
  spans.reserve(blocks.size());
  bool disjoint = true;
  bool monotone = true;
  double runs = 0;
  for (auto& b : blocks) {
    b.prefix = prefix;
    std::ptrdiff_t lo = 0;
    std::ptrdiff_t hi = 0;
    if (b.child < 0) {
      lo = b.offset;
      hi = b.offset + static_cast<std::ptrdiff_t>(b.n);
      prefix += b.n;
      runs += 1;
    } else {
      const auto& c = children[static_cast<std::size_t>(b.child)];
      stridedBounds(b.n, c.extent, b.offset, c.loop->lo, c.loop->hi, lo, hi);
      prefix += c.loop->size * b.n;
      runs += c.loop->runs * static_cast<double>(b.n);
      depth = std::max(depth, c.loop->depth + 1);
      const bool inner = c.loop->disjoint && (b.n == 1 || std::abs(c.extent) >= span(*c.loop));
      disjoint = disjoint && inner;
      monotone = monotone && c.loop->monotone && (b.n == 1 || c.extent >= span(*c.loop));
    }
    if (!spans.empty() && lo < spans.back().hi) monotone = false;
    spans.push_back({lo, hi});
    l->lo = first ? lo : std::min(l->lo, lo);
    l->hi = first ? hi : std::max(l->hi, hi);
    first = false;
  }
  if (disjoint) {
    std::sort(spans.begin(), spans.end(),
              [](const Extent& a, const Extent& b) { return a.lo < b.lo; });
    for (std::size_t i = 1; i < spans.size() && disjoint; ++i) {
      disjoint = spans[i].lo >= spans[i - 1].hi;
    }
  }
  l->size = prefix;
  l->runs = runs;
  l->depth = depth;
  l->disjoint = disjoint;
  l->monotone = monotone && disjoint;
  l->blocks = std::make_shared<const std::vector<Loop::Block>>(std::move(blocks));
  l->children = std::move(children);
  return l;
}

bool asStrided(const Datatype& t, std::size_t count, Strided& out) {
  const Loop* root = t.loop();
  if (root == nullptr || count == 0 || root->size == 0 || !root->isByteVector()) return false;
  const std::ptrdiff_t extent = t.extent();
  if (root->isRun() && (count == 1 || extent == static_cast<std::ptrdiff_t>(root->blocklen))) {
    out = {root->offset, root->blocklen * count, 0, 1};
  } else if (root->isRun()) {
    out = {root->offset, root->blocklen, extent, count};
  } else if (count == 1 || extent == static_cast<std::ptrdiff_t>(root->count) * root->stride) {
    out = {root->offset, root->blocklen, root->stride, root->count * count};
  } else {
    return false;
  }
  return true;
}

// ---- Cursor ---------------------------------------------------------------------------------

Cursor::Cursor(const Datatype& t, std::size_t count) {
  const Loop* root = t.loop();
  if (root == nullptr || count == 0 || root->size == 0) return;
  total_ = root->size * count;
  const std::ptrdiff_t extent = t.extent();
  // The whole stream as one node, merged as makeStrided would, without allocating.
  top_.kind = Loop::kVector;
  if (root->isRun() && (count == 1 || extent == static_cast<std::ptrdiff_t>(root->blocklen))) {
    top_.count = 1;
    top_.blocklen = total_;
    top_.offset = root->offset;
  } else if (root->isRun()) {
    top_.count = count;
    top_.blocklen = root->blocklen;
    top_.stride = extent;
    top_.offset = root->offset;
  } else if (root->isByteVector() &&
             extent == static_cast<std::ptrdiff_t>(root->count) * root->stride) {
    top_.count = root->count * count;
    top_.blocklen = root->blocklen;
    top_.stride = root->stride;
    top_.offset = root->offset;
  } else {
    top_.count = count;
    top_.stride = extent;
    top_.child = std::shared_ptr<const Loop>(std::shared_ptr<const Loop>(), root);  // borrowed
  }
  const int need = (top_.child ? root->depth : 0) + 1;
  if (need > kInlineFrames) {
    heap_ = std::make_unique<Frame[]>(static_cast<std::size_t>(need));
    frames_ = heap_.get();
  }
  push(&top_, 0);
}

Cursor::~Cursor() = default;

void Cursor::seek(std::size_t pos) {
  if (pos > total_) {
    throw Error(kErrIntern, "cursor seek to " + std::to_string(pos) + " past the end (" +
                                std::to_string(total_) + ")");
  }
  pos_ = pos;
  runLeft_ = 0;
  depth_ = 0;
  if (pos == total_) return;
  push(&top_, 0);
  std::size_t rem = pos;
  // Descend: at each level find the copy / block that holds packed byte `rem`, leave the frame
  // pointing after it, and continue inside it.
  for (;;) {
    Frame& f = frames_[depth_ - 1];
    const Loop& n = *f.n;
    if (n.kind == Loop::kVector) {
      const std::size_t unit = n.child ? n.child->size : n.blocklen;
      const std::size_t i = rem / unit;
      rem %= unit;
      const std::ptrdiff_t at = f.base + n.offset + static_cast<std::ptrdiff_t>(i) * n.stride;
      f.i = i + 1;
      if (!n.child) {
        runOff_ = at + static_cast<std::ptrdiff_t>(rem);
        runLeft_ = n.blocklen - rem;
        return;
      }
      push(n.child.get(), at);
      continue;
    }
    const auto& blocks = *n.blocks;
    auto it = std::upper_bound(blocks.begin(), blocks.end(), rem,
                               [](std::size_t v, const Loop::Block& b) { return v < b.prefix; });
    const std::size_t bi = static_cast<std::size_t>(it - blocks.begin()) - 1;
    const Loop::Block& b = blocks[bi];
    rem -= b.prefix;
    if (b.child < 0) {
      f.i = bi + 1;
      f.j = 0;
      runOff_ = f.base + n.offset + b.offset + static_cast<std::ptrdiff_t>(rem);
      runLeft_ = b.n - rem;
      return;
    }
    const Loop::Child& c = n.children[static_cast<std::size_t>(b.child)];
    const std::size_t j = rem / c.loop->size;
    rem %= c.loop->size;
    const std::ptrdiff_t at =
        f.base + n.offset + b.offset + static_cast<std::ptrdiff_t>(j) * c.extent;
    if (j + 1 == b.n) {
      f.i = bi + 1;
      f.j = 0;
    } else {
      f.i = bi;
      f.j = j + 1;
    }
    push(c.loop.get(), at);
  }
}

std::vector<Datatype::Segment> segments(const Datatype& t, std::size_t count) {
  std::vector<Datatype::Segment> out;
  Cursor c(t, count);
  Datatype::Segment s{};
  while (c.next(SIZE_MAX, s)) out.push_back(s);
  return out;
}

}  // namespace onesided::detail
