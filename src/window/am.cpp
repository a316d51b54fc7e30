// SPDX-License-Identifier: BSD-3-Clause
// Accumulate by active message: the path of accumulates whose element type has no NIC atomic
// (everything but 8-byte integers) on windows that use it (Context::accumulateByMessage: by
// default those whose group spans nodes), and in the local message mode (Window::amInts_:
// one-node create windows with partial pages) of every accumulate and atomic, and of puts and
// gets into a peer's partial pages, written with stores into the mapped inbox (directSlot,
// directSend, directReply below) instead of through the transport.
//
// Each rank's control region holds an inbox of kSlotCount slots of kSlotBytes, and the target
// applies what arrives there with its own CPU: the origin moves the data once (instead of
// reading and writing it back under a lock) and the element updates of concurrent origins are
// serialised by the one lock of the target's inbox service, whoever runs it (the progress
// thread, or the rank when it drives progress). Origins never touch the elements on this path,
// so a window never lets a CPU update and a NIC atomic meet on one element: 8-byte integers
// always take the NIC path, every other type always this one.
//
// One message, from origin O to target T:
//   1. O takes tickets with one remote fetch-add on T's ticket word (one per slot it needs).
//   2. Slot = ticket mod kSlotCount. O may write it once T has released the slot's previous
//      message: ticket < released + kSlotCount. O keeps the released count it last read and
//      reads it again (an 8-byte get) only when that is not enough.
//   3. O writes the message except its first word (segments {target offset, bytes}, packed
//      values), fences (Endpoint::fence: the transport orders the writes, or completes the
//      first), then writes the stamp (ticket + 1) alone; or, where the transport orders a
//      remote atomic after earlier writes (verbs), adds the stamp to the released slot's 0 with
//      no fence (Endpoint::postAdd). An 8-byte aligned write lands whole,
//      so once T sees the stamp the rest is there, whatever order the transport placed the
//      bytes of the first write in.
//   4. T applies messages in ticket order: it waits at the slot of `applied` until its stamp is
//      applied + 1, checks every segment against its window (a corrupted message changes
//      nothing), updates the elements, and publishes applied + 1. Replies (get_accumulate,
//      fetch_and_op, compare_and_swap) replace the values in the slot and set the header's
//      `replied` word. Where the rank's own thread applied the message (it waits in MPI, the
//      usual case), it also pushes the reply into O's control region (values, fence, token:
//      pushReplies) and marks `replied` with kRepliedPushed; O waits on its own memory and
//      reads T's `replied` word only now and then (awaitReply), and only when that says the
//      progress thread applied it (which must not use the transport, so never pushes) does it
//      read the values from the slot. Either way O then acknowledges by clearing the stamp;
//      only then is the slot released. Other slots are released at once.
//      In the local message mode a single fetch (fetch_and_op, compare_and_swap, a get from a
//      partial page) asks for its reply the same way (kAmPush), and T, from either thread,
//      stores the values and then a token (directToken) into O's mapped control region, and
//      releases the slot at once (directAwait); pipelined fetches keep the slot reply.
// Completion: MPI_Win_flush / unlock / fence / complete wait until T's applied count reaches
// the tickets O holds (amWait), so the accumulate is complete at the target as MPI requires.
// Through the transport, T's own thread pushes that count into O's control region after
// applying O's messages (kInboxAppliedPush), and O reads T's count only now and then;
// the call itself returns once the message is written. Messages from one origin are applied in
// the order issued, which keeps the default accumulate_ordering (rar, raw, war, waw).
#include "window/am.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "copy.hpp"
#include "counters.hpp"
#include "log.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/window.hpp"
#include "transport/transport.hpp"

namespace onesided {
namespace detail {

Inboxes::~Inboxes() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Inboxes::add(Window* w) {
  std::lock_guard<std::mutex> l(mu_);
  windows_.push_back(w);
  any_.store(true, std::memory_order_relaxed);
  if (wantThread_ && !thread_.joinable()) thread_ = std::thread([this] { run(); });
  cv_.notify_all();
}

void Inboxes::remove(Window* w) noexcept {
  std::lock_guard<std::mutex> l(mu_);
  std::erase(windows_, w);
  any_.store(!windows_.empty(), std::memory_order_relaxed);
}

bool Inboxes::serviceFromOwner() {
  if (!any_.load(std::memory_order_relaxed)) return false;
  // Messages the thread applied count too: a rank waiting in MPI whose peers' messages the
  // thread happened to take stays as quick to answer as one that took them itself, instead of
  // backing off to sleep while the thread, seeing it gone, answers by yielding.
  const std::uint64_t byThread = threadWorked_.load(std::memory_order_relaxed);
  const bool threadWorked = byThread != threadWorkedSeen_.load(std::memory_order_relaxed);
  if (threadWorked) threadWorkedSeen_.store(byThread, std::memory_order_relaxed);
  bool worked = threadWorked;
  // The owner is polling: the thread stands down (run()).
  ownerPasses_.store(ownerPasses_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // Without the lock first: a poll that finds nothing costs a few loads, not a lock and an
  // unlock (two locked instructions per poll, on the path of every reply a wait looks for).
  // windows_ changes only in add() / remove(), on this same thread.
  if (std::none_of(windows_.begin(), windows_.end(),
                   [](const Window* w) { return w->inboxPending(); })) {
    return worked;
  }
  {
    std::unique_lock<std::mutex> l(mu_, std::try_to_lock);
    if (!l.owns_lock()) return threadWorked;  // the progress thread is at it
    for (Window* w : windows_) {
      worked = w->serviceInbox(true) || worked;
      if (w->repliesQueued()) pushers_.push_back(w);
    }
  }
  // Replies go out without the lock: the transport may wait, and its waits drive progress,
  // which comes back here (and then only applies: this loop pushes what that queues).
  if (pushing_ || pushers_.empty()) return worked;
  pushing_ = true;
  struct Done {
    Inboxes& in;
    ~Done() {
      in.pushers_.clear();
      in.pushing_ = false;
    }
  } done{*this};
  for (std::size_t i = 0; i < pushers_.size(); ++i) pushers_[i]->pushReplies();
  return worked;
}

void Inboxes::run() {
  // While the rank's own thread polls its inboxes (it waits in MPI), the thread stands down:
  // it sleeps instead of yielding, so it takes no core from the two ranks of a round trip (a
  // fetch_and_op on a create window at 2 ranks on 2 cores took 0.7-0.85 us in half the runs
  // with the thread yielding beside the target's wait, 0.3-0.4 us in the others; 0.3-0.4 us
  // in every run standing down). The stand-down grows from 50 us to 800 us while the rank
  // keeps polling: every wake-up is a context switch on a core a round trip needs. With that
  // and the owner counting the thread's work (serviceFromOwner), the same fetch_and_op, 2000
  // per batch, interleaved runs: 0.85-0.91 us against 1.06-1.33 in this machine's slow phases,
  // 0.30-0.32 against 0.30-0.33 in its fast ones. It comes back within one stand-down of the
  // rank's leaving MPI, as soon as from its idle sleeps below (20 us growing to 1 ms).
  constexpr unsigned kYields = 256;
  constexpr auto kStandDown = std::chrono::microseconds(50);
  constexpr unsigned kStandDownSteps = 4;  // 50 us << 4 = 800 us at most
  unsigned idle = 0;
  unsigned standDowns = 0;  // in a row
  std::uint64_t seen = ownerPasses_.load(std::memory_order_relaxed);
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    if (windows_.empty()) {
      cv_.wait(l, [&] { return stop_ || !windows_.empty(); });
      idle = 0;
      continue;
    }
    bool worked = false;
    for (Window* w : windows_) worked = w->serviceInbox(false) || worked;
    if (worked) threadWorked_.fetch_add(1, std::memory_order_relaxed);
    l.unlock();
    const std::uint64_t passes = ownerPasses_.load(std::memory_order_relaxed);
    if (passes != seen) {
      seen = passes;
      std::this_thread::sleep_for(kStandDown * (1U << std::min(standDowns++, kStandDownSteps)));
      l.lock();
      continue;
    }
    standDowns = 0;
    if (worked) {
      idle = 0;
    } else if (++idle < kYields) {
      std::this_thread::yield();
    } else {
      const unsigned step = std::min((idle - kYields) / 64U, 5U);
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000U, 20U << step)));
    }
    l.lock();
  }
}

}  // namespace detail

namespace {

/// One segment of a message applied at `tp` (len bytes of `kind` elements): the old bytes into
/// `old` first when it is not null (a fetch), then a compare-and-swap of one element against
/// `compare` when that is not null, else `op` with `data`. Slots and the fetch box both apply
/// through here.
void applySegment(std::byte* tp, std::size_t len, Op op, int kind, std::size_t elem,
                  const std::byte* data, const std::byte* compare, std::byte* old) {
  const SpreadPair sp = spreadPair(kind);
  if (sp.intOffset != 0) {
    // A pair kind with padding in its struct (MPI_SHORT_INT): len / elem elements one struct
    // after the other at tp, each gathered into its packed form, updated and put back.
    // (Compare-and-swap takes no pair kind.)
    for (std::size_t i = 0; i * elem < len; ++i) {
      std::byte* e = tp + i * sp.extent;
      std::byte packed[32];
      std::memcpy(packed, e, sp.valueBytes);
      std::memcpy(packed + sp.valueBytes, e + sp.intOffset, sizeof(int));
      if (old != nullptr) std::memcpy(old + i * elem, packed, elem);
      if (op == Op::kNoOp) continue;
      applyOp(op, kind, packed, data + i * elem, 1);
      std::memcpy(e, packed, sp.valueBytes);
      std::memcpy(e + sp.intOffset, packed + sp.valueBytes, sizeof(int));
    }
    return;
  }
  if (old != nullptr) detail::copyBytes(old, tp, len);
  if (compare != nullptr) {
    if (std::memcmp(tp, compare, elem) == 0) std::memcpy(tp, data, elem);
  } else if (op != Op::kNoOp) {
    applyOp(op, kind, tp, data, len / elem);
  }
}

struct Seg {
  std::uint64_t toff;  // offset in the target's window
  std::uint64_t len;
  std::size_t pos;  // offset in the packed stream
};

std::size_t slotOffset(std::uint64_t ticket) {
  return detail::kInboxSlots +
         static_cast<std::size_t>(ticket % detail::kSlotCount) * detail::kSlotBytes;
}

/// Waits until `local()` (a check of this rank's memory, where a target pushes) holds, or
/// `remote()` does (a read of the target: a round trip, so only after 20 us, then at doubling
/// gaps up to `maxGap`).
template <class Local, class Remote>
void awaitPushed(Context& ctx, Local&& local, Remote&& remote, std::chrono::microseconds maxGap) {
  using Clock = std::chrono::steady_clock;
  auto gap = std::chrono::microseconds(20);
  auto next = Clock::now() + gap;
  unsigned polls = 0;
  ctx.waitUntil([&] {
    if (local()) return true;
    if ((++polls & 63U) != 0 || Clock::now() < next) return false;
    if (remote()) return true;
    gap = std::min(gap * 2, maxGap);
    next = Clock::now() + gap;
    return false;
  });
}

}  // namespace

void Window::pollPause(unsigned attempt) {
  // A remote counter usually moves within a few polls; only then back off (retryPause).
  if (attempt < 8) {
    comm_.context().progress();
  } else {
    retryPause(attempt - 8);
  }
}

std::uint64_t Window::readControl(int target, std::size_t byteOffset) {
  Target& t = describe(target);
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  transport::RemoteKey& key = controlKey(t, ep);
  std::uint64_t v = 0;
  transport::Iov iov{&v, sizeof v};
  (void)ep.get({&iov, 1}, t.ctlBase + byteOffset, key);
  ep.flush();
  return v;
}

void Window::amUpdate(int target, const std::byte* src, const void* compare, std::byte* old,
                      std::uint64_t offset, std::size_t tcount, const Datatype& ttype, Op op,
                      int kind, const Datatype& packed) {
  using detail::AmHeader;
  const std::size_t elem = packedSize(kind);
  const bool fetch = old != nullptr;
  const bool noOp = op == Op::kNoOp;
  // The target's pieces, in the order of the packed stream.
  std::byte* stream = fetch ? old : const_cast<std::byte*>(src);
  std::vector<Seg> segs;
  const SpreadPair sp = spreadPair(kind);
  if (sp.intOffset == 0) {
    walk(stream, 1, packed, offset, tcount, ttype,
         [&](std::byte* p, std::uint64_t toff, std::size_t len) {
           segs.push_back({toff, len, static_cast<std::size_t>(p - stream)});
         });
  } else {
    // A pair kind with padding in its struct (MPI_SHORT_INT): the walk's runs are parts of
    // elements (value, int), even a int and the next value together. Segments of whole
    // elements instead, by where each element starts (its value's first byte, inside some
    // run), consecutive elements one struct apart merged; the target applies them as structs
    // (applySegment).
    walk(stream, 1, packed, offset, tcount, ttype,
         [&](std::byte* p, std::uint64_t toff, std::size_t len) {
           const auto pos = static_cast<std::size_t>(p - stream);
           for (std::size_t e = (pos + elem - 1) / elem * elem; e < pos + len; e += elem) {
             const std::uint64_t at = toff + (e - pos);
             if (!segs.empty()) {
               Seg& last = segs.back();
               if (last.pos + last.len == e && last.toff + last.len / elem * sp.extent == at) {
                 last.len += elem;
                 continue;
               }
             }
             segs.push_back({at, elem, e});
           }
         });
  }

  if (target == comm_.rank()) {
    // Our own window: apply here, under the lock the inbox service holds. Progress first (the
    // transport, then the inbox): without a progress thread a rank spinning on its own window
    // (a compare-and-swap mutex) would otherwise never apply the messages others wait on, nor,
    // where puts run at the target (UCX over tcp), even let them reach the inbox.
    comm_.context().progress();
    std::lock_guard<std::mutex> l(comm_.context().inboxes().lock());
    auto* mem = static_cast<std::byte*>(base_);
    for (const Seg& s : segs) {
      auto* tp = reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(mem) + s.toff);
      const std::byte* data = compare != nullptr ? src : noOp ? nullptr : src + s.pos;
      applySegment(tp, s.len, op, kind, elem, data, static_cast<const std::byte*>(compare),
                   fetch ? old + s.pos : nullptr);
    }
    return;
  }

  // Messages: runs of whole segments (a segment longer than a slot is split at elements).
  constexpr std::size_t kRoom = detail::kSlotBytes - sizeof(AmHeader);
  const std::size_t maxData = (kRoom - 16) / elem * elem;
  std::vector<Seg> split;
  split.reserve(segs.size());
  for (const Seg& s : segs) {
    for (std::uint64_t done = 0; done < s.len;) {
      const std::uint64_t n = std::min<std::uint64_t>(s.len - done, maxData);
      const std::uint64_t at = sp.intOffset == 0 ? done : done / elem * sp.extent;
      split.push_back({s.toff + at, n, s.pos + static_cast<std::size_t>(done)});
      done += n;
    }
  }
  struct Msg {
    std::size_t first;
    std::size_t nseg;
    std::size_t dataBytes;
  };
  std::vector<Msg> msgs;
  const std::size_t casData = compare != nullptr ? 2 * elem : 0;
  for (std::size_t i = 0; i < split.size(); ++i) {
    const std::size_t len = compare != nullptr ? casData : split[i].len;
    if (msgs.empty() || 16 * (msgs.back().nseg + 1) + msgs.back().dataBytes + len > kRoom) {
      msgs.push_back({i, 0, 0});
    }
    ++msgs.back().nseg;
    msgs.back().dataBytes += len;
  }

  // A message's body at p, all but its first word (the stamp, written last and alone):
  // header, segments {target offset, bytes} and, unless the values only come back, the data.
  // Through the transport, a reply may be pushed into this rank's control region.
  const bool push = !amInts_;
  auto writeBody = [&](std::byte* p, const Msg& msg) {
    const AmHeader h{0,
                     push ? detail::kReplyTo | static_cast<std::uint64_t>(comm_.rank()) : 0,
                     static_cast<std::uint32_t>(msg.dataBytes),
                     static_cast<std::uint32_t>(msg.nseg),
                     static_cast<std::uint16_t>(op),
                     static_cast<std::uint16_t>(kind),
                     (fetch ? detail::kAmFetch : 0U) |
                         (compare != nullptr ? detail::kAmCompare : 0U) |
                         (push ? detail::kAmPush : 0U)};
    std::memcpy(p + 8, reinterpret_cast<const std::byte*>(&h) + 8, sizeof h - 8);
    std::byte* segOut = p + sizeof h;
    std::byte* dataOut = segOut + 16 * msg.nseg;
    for (std::size_t k = 0; k < msg.nseg; ++k) {
      const Seg& sg = split[msg.first + k];
      const std::uint64_t pair[2] = {sg.toff, sg.len};
      std::memcpy(segOut + 16 * k, pair, 16);
      if (compare != nullptr) {
        std::memcpy(dataOut, src, elem);
        std::memcpy(dataOut + elem, compare, elem);
      } else if (!noOp) {
        detail::copyBytes(dataOut, src + sg.pos, sg.len);
        dataOut += sg.len;
      }
    }
  };

  Target& t = describe(target);
  const std::uint64_t first = amTickets(target, t, msgs.size());

  if (amInts_) {
    // The local message mode: the target's inbox is mapped here (t.ctlDirect), so the same
    // protocol runs on loads and stores, written in place (no bounce buffer, no transport).
    // Fetches are pipelined: their replies are collected once the slots run out and at the
    // end (one at a time, a 1 MiB get_accumulate waited 256 round trips: 366 us).
    struct Reply {
      std::uint64_t ticket;
      std::byte* to;
      std::size_t at;
      std::size_t bytes;
    };
    std::vector<Reply> replies;
    auto collect = [&] {
      for (const Reply& r : replies) directReply(t, r.ticket, r.to, r.at, r.bytes);
      replies.clear();
    };
    for (std::size_t m = 0; m < msgs.size(); ++m) {
      const Msg& msg = msgs[m];
      const std::uint64_t ticket = first + m;
      // Our own unacknowledged slots may be what keeps this one from being released.
      if (ticket >= t.amReleased + detail::kSlotCount) collect();
      std::byte* p = directSlot(t, ticket);
      writeBody(p, msg);
      directSend(t, ticket);
      if (fetch) {
        replies.push_back({ticket, old + split[msg.first].pos, sizeof(AmHeader) + 16 * msg.nseg,
                           compare != nullptr ? elem : msg.dataBytes});
      }
    }
    collect();
    return;
  }

  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  transport::RemoteKey& ctlKey = controlKey(t, ep);

  // 8-byte aligned space in the bounce buffer: a stamp or an acknowledgement must land as one
  // word (the self transport, like a NIC, writes an aligned word whole only from an aligned one).
  auto space = [&](std::size_t n) {
    const std::size_t want = n + 7;
    std::size_t got = 0;
    std::size_t off = 0;
    std::byte* p = bounceSpace(want, got, off);
    if (got < want) {
      completeIssued();
      p = bounceSpace(want, got, off);
    }
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return p + ((8 - a % 8) % 8);
  };
  auto put = [&](const std::byte* p, std::size_t n, std::uint64_t raddr) {
    transport::Iov iov{const_cast<std::byte*>(p), n};
    (void)ep.put({&iov, 1}, raddr, ctlKey);
    // Reads the bounce buffer until complete: a full buffer must complete it before reuse.
    markDirty(target);
  };
  std::atomic_ref<std::uint64_t> token(
      *reinterpret_cast<std::uint64_t*>(ctlMem_ + detail::kInboxReply));
  std::vector<std::uint64_t> unstamped;
  auto stampAll = [&] {
    if (unstamped.empty()) return;
    // A remote add to the released slot's 0 where the transport orders it after the bodies
    // (verbs: no wait for the bodies' completion, a round trip); otherwise fence, then put.
    using After = transport::AddAfter;
    if (ep.postAdd(unstamped.front() + 1, t.ctlBase + slotOffset(unstamped.front()), ctlKey,
                   After::kWrites)) {
      for (std::size_t i = 1; i < unstamped.size(); ++i) {
        (void)ep.postAdd(unstamped[i] + 1, t.ctlBase + slotOffset(unstamped[i]), ctlKey,
                         After::kWrites);
      }
      ep.post();
      unstamped.clear();
      return;
    }
    ep.fence();  // the bodies are in place at the target before any stamp
    for (std::uint64_t ticket : unstamped) {
      std::byte* p = space(8);
      const std::uint64_t stamp = ticket + 1;
      std::memcpy(p, &stamp, 8);
      put(p, 8, t.ctlBase + slotOffset(ticket));
    }
    ep.post();
    unstamped.clear();
  };

  for (std::size_t m = 0; m < msgs.size(); ++m) {
    const Msg& msg = msgs[m];
    const std::uint64_t ticket = first + m;
    if (ticket >= t.amReleased + detail::kSlotCount) {
      stampAll();  // our own earlier slots must be able to drain
      for (unsigned attempt = 0;; ++attempt) {
        t.amReleased = std::max(t.amReleased, readControl(target, detail::kInboxReleased));
        if (ticket < t.amReleased + detail::kSlotCount) break;
        pollPause(attempt);
      }
    }
    // The body: header, segments and, unless the values only come back, the data.
    const std::size_t body = sizeof(AmHeader) + 16 * msg.nseg + (noOp ? 0 : msg.dataBytes);
    std::byte* p = space(body);
    writeBody(p, msg);
    const std::uint64_t slot = t.ctlBase + slotOffset(ticket);
    put(p + 8, body - 8, slot + 8);  // all but the stamp
    unstamped.push_back(ticket);
    if (!fetch) continue;
    token.store(0, std::memory_order_relaxed);  // no push in flight: the last one was seen
    stampAll();
    // The old values: pushed here by the target's own thread, or left in the slot by its
    // progress thread. Then the slot is ours to release.
    const std::uint64_t stamp = ticket + 1;
    const std::size_t replyBytes = compare != nullptr ? elem : msg.dataBytes;
    std::byte* const replyTo = old + split[msg.first].pos;  // consecutive segments' values
    if (awaitReply(target, slotOffset(ticket), stamp) == Reply::kValuesHere) {
      detail::copyBytes(replyTo, ctlMem_ + detail::kReplyData, replyBytes);
    } else {
      transport::Iov iov{replyTo, replyBytes};
      (void)ep.get({&iov, 1}, slot + sizeof(AmHeader) + 16 * msg.nseg, ctlKey);
      ep.flush();
    }
    noteApplied(t, stamp);
    std::byte* zero = space(8);
    std::memset(zero, 0, 8);
    put(zero, 8, slot);  // acknowledged: the target may release the slot
    ep.post();
  }
  stampAll();
}

Window::Reply Window::awaitReply(int target, std::size_t slot, std::uint64_t stamp) {
  // The push lands here (its token after its values). Reading the target's `replied` word
  // costs a round trip, so only now and then: after 20 us, then at doubling gaps up to 1 ms.
  // It tells whether to wait on (pushed, or not yet applied) or to read the slot (applied by
  // the target's progress thread, which leaves replies there).
  std::atomic_ref<std::uint64_t> token(
      *reinterpret_cast<std::uint64_t*>(ctlMem_ + detail::kInboxReply));
  const std::uint64_t pushed = stamp | detail::kRepliedPushed;
  Reply got = Reply::kInSlot;
  awaitPushed(
      comm_.context(),
      [&] {
        const std::uint64_t v = token.load(std::memory_order_acquire);
        if ((v & ~detail::kRepliedValues) != pushed) return false;
        got = (v & detail::kRepliedValues) != 0 ? Reply::kValuesHere : Reply::kInSlot;
        return true;
      },
      [&] { return readControl(target, slot + offsetof(detail::AmHeader, replied)) == stamp; },
      std::chrono::milliseconds(1));
  return got;
}

void Window::awaitApplied(int target, Target& t) {
  // The owner thread of the target pushes its applied count once it applied our message; its
  // progress thread does not (it must not use the transport), so the count is also read, at
  // gaps up to 200 us (a target computing outside MPI answers from that thread).
  std::atomic_ref<std::uint64_t> pushed(
      *reinterpret_cast<std::uint64_t*>(ctlMem_ + detail::kInboxAppliedPush));
  const auto from = static_cast<std::uint64_t>(target);
  awaitPushed(
      comm_.context(),
      [&] {
        const std::uint64_t v = pushed.load(std::memory_order_acquire);
        if ((v >> detail::kAppliedRankShift) != from) return false;
        t.amApplied = std::max(t.amApplied, v & detail::kAppliedCountMask);
        return t.amApplied >= t.amSent;
      },
      [&] {
        t.amApplied = std::max(t.amApplied, readControl(target, detail::kInboxApplied));
        return t.amApplied >= t.amSent;
      },
      std::chrono::microseconds(200));
}

std::byte* Window::directSlot(Target& t, std::uint64_t ticket) {
  if (ticket >= t.amReleased + detail::kSlotCount) {
    std::atomic_ref<std::uint64_t> released(
        *reinterpret_cast<std::uint64_t*>(t.ctlDirect + detail::kInboxReleased));
    comm_.context().waitUntil([&] {
      t.amReleased = std::max(t.amReleased, released.load(std::memory_order_acquire));
      return ticket < t.amReleased + detail::kSlotCount;
    });
  }
  return t.ctlDirect + slotOffset(ticket);
}

void Window::directSend(Target& t, std::uint64_t ticket) {
  std::atomic_ref<std::uint64_t> stamp(
      *reinterpret_cast<std::uint64_t*>(t.ctlDirect + slotOffset(ticket)));
  stamp.store(ticket + 1, std::memory_order_release);  // the message is complete
}

void Window::directAwait(int target, Target& t, std::uint64_t ticket, std::byte* reply,
                         std::size_t bytes) {
  // The target stores the values and then the token into this rank's control region: one
  // cache line each way (the message, the reply) and nothing to acknowledge, where a reply in
  // the slot crossed one line three times (a fetch_and_op + flush on a create window, 2 ranks
  // on 2 cores: 0.19-0.29 us, against 0.26-0.39 us with the slot reply).
  std::atomic_ref<std::uint64_t> token(
      *reinterpret_cast<std::uint64_t*>(ctlMem_ + detail::kInboxReply));
  const std::uint64_t want = detail::directToken(target, ticket + 1);
  comm_.context().waitUntil([&] { return token.load(std::memory_order_acquire) == want; });
  detail::copyBytes(reply, ctlMem_ + detail::directReplyOffset(bytes), bytes);
  noteApplied(t, ticket + 1);
}

void Window::directReply(Target& t, std::uint64_t ticket, std::byte* reply, std::size_t replyAt,
                         std::size_t replyBytes) {
  std::byte* p = t.ctlDirect + slotOffset(ticket);
  auto word = [&](std::size_t off) {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p + off));
  };
  comm_.context().waitUntil([&] {
    return word(offsetof(detail::AmHeader, replied)).load(std::memory_order_acquire) == ticket + 1;
  });
  detail::copyBytes(reply, p + replyAt, replyBytes);
  word(0).store(0, std::memory_order_release);  // acknowledged: the slot may be released
  noteApplied(t, ticket + 1);
}

void Window::noteApplied(Target& t, std::uint64_t applied) noexcept {
  // The target applies in ticket order and replies once a message is applied: so is every
  // ticket before it. When that covers every ticket sent, nothing is outstanding there, and a
  // flush after a fetch_and_op takes the fast path instead of reading the target's applied
  // count (a cache line the target writes at every message: 0.05-0.1 us here).
  t.amApplied = std::max(t.amApplied, applied);
  if (t.amPending && t.amApplied >= t.amSent) {
    t.amPending = false;
    --amOutstanding_;
  }
}

std::uint64_t Window::amTickets(int target, Target& t, std::size_t n) {
  const std::uint64_t first =
      control(target, kAmTicketWord, static_cast<int>(transport::AtomicOp::kFetchAdd), n);
  if (!t.amPending) {
    t.amPending = true;
    ++amOutstanding_;
  }
  t.amSent = std::max(t.amSent, first + n);
  return first;
}

std::byte* Window::directOpen(int target, Target& t, std::uint64_t& ticket, std::uint32_t dataBytes,
                              Op op, int kind, std::uint32_t flags, std::uint64_t toff,
                              std::uint64_t len) {
  static_assert(kDirectData == sizeof(detail::AmHeader) + 16);
  ticket = amTickets(target, t, 1);
  std::byte* p = directSlot(t, ticket);
  // A fetch asks for its reply in this rank's control region (directAwait).
  const bool fetch = (flags & detail::kAmFetch) != 0;
  const detail::AmHeader h{0,
                           fetch ? detail::kReplyTo | static_cast<std::uint64_t>(comm_.rank()) : 0,
                           dataBytes,
                           1,
                           static_cast<std::uint16_t>(op),
                           static_cast<std::uint16_t>(kind),
                           flags | (fetch ? detail::kAmPush : 0U)};
  // Everything but the stamp (word 0), which directSend() writes last.
  std::memcpy(p + 8, reinterpret_cast<const std::byte*>(&h) + 8, sizeof h - 8);
  const std::uint64_t seg[2] = {toff, len};
  std::memcpy(p + sizeof h, seg, 16);
  return p + kDirectData;
}

void Window::messageTransfer(bool put, int target, Target& t, std::byte* origin, std::uint64_t toff,
                             std::size_t n) {
  // A put is a REPLACE of bytes, a get a NO_OP with the old bytes as the reply: applied by the
  // target as accumulates are (so a flush waits for the put as for them), checked by it
  // against its window like them.
  std::uint64_t ticket = 0;
  std::byte* data =
      directOpen(target, t, ticket, static_cast<std::uint32_t>(n), put ? Op::kReplace : Op::kNoOp,
                 MPI_BYTE, put ? 0U : detail::kAmFetch, toff, n);
  if (put) detail::copyBytes(data, origin, n);
  directSend(t, ticket);
  if (!put) directAwait(target, t, ticket, origin, n);
}

std::int64_t Window::messageOffset(const void* origin, const void* compare, const void* result,
                                   const Datatype& type, int target, std::int64_t disp,
                                   Op op) const noexcept {
  if (!amInts_ || freed_ || result == nullptr || disp < 0 ||
      static_cast<unsigned>(target) >= targets_.size() || target == comm_.rank() ||
      !type.isPredefined() || (op != Op::kNoOp && origin == nullptr)) {
    return -1;
  }
  const int kind = type.id();
  const std::size_t elem = packedSize(kind);
  if (elem == 0 || elem != type.size() || elem > detail::kBoxElemMax ||
      (compare != nullptr ? !casAccepts(kind) : !opAccepts(op, kind))) {
    return -1;
  }
  const Target* t = targets_.touched(static_cast<std::size_t>(target));
  std::int64_t offset = 0;
  if (t == nullptr || !t->resolved || !isOpen(*t) ||
      __builtin_mul_overflow(disp, static_cast<std::int64_t>(t->dispUnit), &offset) ||
      static_cast<std::uint64_t>(offset) + spanOf(kind, elem) > t->size) {
    return -1;
  }
  return offset;
}

bool Window::fastMessage(const void* origin, const void* compare, void* result,
                         const Datatype& type, int target, std::int64_t disp, Op op) {
  // MPI_Fetch_and_op / MPI_Compare_and_swap in the local message mode: one element, one
  // message, written in place. Anything else, errors included, takes atomicUpdate().
  const std::int64_t offset = messageOffset(origin, compare, result, type, target, disp, op);
  if (offset < 0) return false;
  const int kind = type.id();
  const std::size_t elem = type.size();
  Target& t = targets_[static_cast<std::size_t>(target)];
  // No needFence_: the message went out with a release store and came back applied, so a
  // flush has nothing to order (its full barrier would also wait for the acknowledgement's
  // store to reach a line the target holds: a cache-line round trip).
  ++pendingOps_;
  counters::get().accMessage.add();
  if (!boxSeen_.empty() && !t.amPending) {  // nothing of ours in its inbox that this could overtake
    boxPost(target, kind, elem, op, static_cast<std::uint64_t>(offset), origin, compare, result);
    if (!boxSpin()) awaitBox();
    return true;
  }
  std::uint64_t ticket = 0;
  std::byte* data = directOpen(
      target, t, ticket, static_cast<std::uint32_t>(compare != nullptr ? 2 * elem : elem), op, kind,
      detail::kAmFetch | (compare != nullptr ? detail::kAmCompare : 0U),
      static_cast<std::uint64_t>(offset), elem);
  if (op != Op::kNoOp) std::memcpy(data, origin, elem);
  if (compare != nullptr) std::memcpy(data + elem, compare, elem);
  directSend(t, ticket);
  directAwait(target, t, ticket, static_cast<std::byte*>(result), elem);
  return true;
}

Window::BoxFetch Window::fastBox(const void* origin, const void* compare, void* result,
                                 const Datatype& type, int target, std::int64_t disp,
                                 Op op) noexcept {
  // fastMessage's box case, without the calls before it (the binding's error handling,
  // fetchAndOp's CPU-atomic and lock cases, which this window's mode rules out).
  if (boxSeen_.empty()) return BoxFetch::kDeclined;
  const std::int64_t offset = messageOffset(origin, compare, result, type, target, disp, op);
  if (offset < 0 || targets_.touched(static_cast<std::size_t>(target))->amPending) {
    return BoxFetch::kDeclined;
  }
  ++pendingOps_;
  counters::get().accMessage.add();
  boxPost(target, type.id(), type.size(), op, static_cast<std::uint64_t>(offset), origin, compare,
          result);
  return boxSpin() ? BoxFetch::kDone : BoxFetch::kPosted;
}

void Window::boxPost(int target, int kind, std::size_t elem, Op op, std::uint64_t offset,
                     const void* origin, const void* compare, void* result) noexcept {
  static_assert(detail::kBoxElemMax <= detail::kReplyInlineBytes);
  auto word = [&](std::size_t off) {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(ctlMem_ + off));
  };
  const std::uint64_t seq = ++boxSeq_ & detail::kAppliedCountMask;
  word(detail::kBoxOp)
      .store(static_cast<std::uint64_t>(op) | static_cast<std::uint64_t>(kind) << 16 |
                 (compare != nullptr ? detail::kBoxCompare : 0),
             std::memory_order_relaxed);
  word(detail::kBoxOffset).store(offset, std::memory_order_relaxed);
  if (op != Op::kNoOp || compare != nullptr) {
    std::memcpy(ctlMem_ + detail::kBoxData, origin, elem);
  }
  if (compare != nullptr) {
    std::memcpy(ctlMem_ + detail::kBoxData + detail::kBoxElemMax, compare, elem);
  }
  word(detail::kBoxRequest)
      .store(static_cast<std::uint64_t>(target + 1) << detail::kAppliedRankShift | seq,
             std::memory_order_release);
  boxWant_ = detail::boxToken(target, seq);
  boxResult_ = result;
  boxElem_ = elem;
}

bool Window::boxReplied() const noexcept {
  return std::atomic_ref<std::uint64_t>(
             *reinterpret_cast<std::uint64_t*>(ctlMem_ + detail::kInboxReply))
             .load(std::memory_order_acquire) == boxWant_;
}

bool Window::boxSpin() noexcept {
  // With a pause between polls, unlike a wait's tight loop: the reply is one line the target
  // writes, and polling it back to back left the line's transfer a few percent slower (an
  // interleaved A/B in one process, 500 rounds of 2000: fetch_and_op 0.420 us against 0.453
  // in one run and 0.410 against 0.418 in another; two ranks fetching from each other at once
  // 0.664 against 0.738). As many polls as last about as long as the tight loop's.
  const unsigned polls = comm_.context().tightSpins() / 8;
  for (unsigned spins = 0; spins < polls; ++spins) {
    if (boxReplied()) {
      std::memcpy(boxResult_, ctlMem_ + detail::kReplyInline, boxElem_);
      return true;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  return false;
}

void Window::awaitBox() {
  comm_.context().waitPastTight([&] { return boxReplied(); });
  std::memcpy(boxResult_, ctlMem_ + detail::kReplyInline, boxElem_);
}

std::uint64_t Window::newBoxRequest(std::size_t r) const noexcept {
  if (replyTo_[r] == nullptr || static_cast<int>(r) == comm_.rank()) return 0;
  const std::uint64_t req = std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(
                                                               replyTo_[r] + detail::kBoxRequest))
                                .load(std::memory_order_acquire);
  const std::uint64_t mine = static_cast<std::uint64_t>(comm_.rank() + 1)
                             << detail::kAppliedRankShift;
  // boxSeen_ is written by whichever thread serves, and read here unlocked too (inboxPending):
  // a stale value there only makes a poll take the lock.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): atomic_ref wants a mutable word
  std::atomic_ref<std::uint64_t> seen(const_cast<std::uint64_t&>(boxSeen_[r]));
  const bool fresh =
      (req & ~detail::kAppliedCountMask) == mine && req != seen.load(std::memory_order_relaxed);
  return fresh ? req : 0;
}

bool Window::serviceBoxes() {
  // Called under the inboxes' lock (serviceInbox), like the slots: messages stay atomic with
  // each other whichever way they came.
  bool worked = false;
  const int me = comm_.rank();
  auto* mem = static_cast<std::byte*>(base_);
  for (std::size_t r = 0; r < boxSeen_.size(); ++r) {
    const std::uint64_t req = newBoxRequest(r);
    if (req == 0) continue;
    std::atomic_ref<std::uint64_t>(boxSeen_[r]).store(req, std::memory_order_relaxed);
    std::byte* octl = replyTo_[r];  // origin r's control region, its box at kInboxReply
    auto word = [&](std::size_t off) {
      return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(octl + off));
    };
    const std::uint64_t opw = word(detail::kBoxOp).load(std::memory_order_relaxed);
    const std::uint64_t offset = word(detail::kBoxOffset).load(std::memory_order_relaxed);
    const auto op = static_cast<Op>(opw & 0xffff);
    const int kind = static_cast<int>((opw >> 16) & 0xffff);
    const bool cas = (opw & detail::kBoxCompare) != 0;
    const std::size_t elem = kind > 0 ? packedSize(kind) : 0;
    const bool valid = elem > 0 && elem <= detail::kBoxElemMax && static_cast<unsigned>(op) > 0 &&
                       static_cast<unsigned>(op) < kNumOps &&
                       (cas ? casAccepts(kind) : opAccepts(op, kind)) &&
                       exposes(offset, spanOf(kind, elem));
    if (valid) {
      // (A dynamic window's base is MPI_BOTTOM: offsets are addresses.) The old value goes over
      // op and offset, read above; the data after them is untouched.
      auto* tp = reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(mem) + offset);
      const std::byte* data = octl + detail::kBoxData;
      applySegment(tp, elem, op, kind, elem, data, cas ? data + detail::kBoxElemMax : nullptr,
                   octl + detail::kReplyInline);
    } else {
      log::core().error("fetch box request {:#x} from rank {} is malformed: ignored", req, r);
    }
    // A reply even for a malformed request: its origin must not wait forever.
    word(detail::kInboxReply)
        .store(detail::boxToken(me, req & detail::kAppliedCountMask), std::memory_order_release);
    worked = true;
  }
  return worked;
}

void Window::amWait(int target) {
  if (!amMode_ || amOutstanding_ == 0) return;
  auto one = [&](int r) {
    Target& t = targets_[static_cast<std::size_t>(r)];
    if (!t.amPending) return;
    if (amInts_) {  // the target's counter is mapped here
      std::atomic_ref<std::uint64_t> applied(
          *reinterpret_cast<std::uint64_t*>(t.ctlDirect + detail::kInboxApplied));
      comm_.context().waitUntil([&] {
        t.amApplied = std::max(t.amApplied, applied.load(std::memory_order_acquire));
        return t.amApplied >= t.amSent;
      });
    } else if (t.amApplied < t.amSent) {  // (a reply since the last message told us)
      comm_.context().endpoint(comm_.worldRank(r)).flush();
      awaitApplied(r, t);
    }
    t.amPending = false;
    --amOutstanding_;
  };
  if (target >= 0) {
    one(target);
  } else {
    // Targets never touched have nothing outstanding (and no state to make now).
    targets_.forEach([&](std::size_t r, const Target&) {
      if (amOutstanding_ > 0) one(static_cast<int>(r));
    });
  }
}

bool Window::serviceInbox(bool owner) {
  using detail::AmHeader;
  if (!amRegistered_) return false;
  auto* ctl = ctlMem_;
  auto word = [&](std::size_t off) {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(ctl + off));
  };
  bool worked = !boxSeen_.empty() && serviceBoxes();
  auto release = [&] {
    const std::uint64_t before = amReleased_;
    while (amReleased_ < amApplied_) {
      const std::size_t i = static_cast<std::size_t>(amReleased_ % detail::kSlotCount);
      if (amAwaitingAck_[i] != 0) {
        if (word(slotOffset(amReleased_)).load(std::memory_order_acquire) != 0) break;
        amAwaitingAck_[i] = 0;
      } else {
        // A released slot's stamp is 0 (the origin clears a reply's): an origin whose
        // transport stamps by remote fetch-add (Endpoint::postAdd) adds to 0.
        word(slotOffset(amReleased_)).store(0, std::memory_order_relaxed);
      }
      ++amReleased_;
    }
    if (amReleased_ != before) {
      word(detail::kInboxReleased).store(amReleased_, std::memory_order_release);
      worked = true;
    }
  };
  release();
  auto* mem = static_cast<std::byte*>(base_);
  while (amApplied_ < amReleased_ + detail::kSlotCount) {
    const std::size_t so = slotOffset(amApplied_);
    const std::uint64_t stamp = amApplied_ + 1;
    if (word(so).load(std::memory_order_acquire) != stamp) break;
    std::byte* slot = ctl + so;
    AmHeader h{};
    std::memcpy(&h, slot, sizeof h);
    const int kind = h.kind;
    const auto op = static_cast<Op>(h.op);
    const std::size_t elem = kind > 0 ? packedSize(kind) : 0;
    const bool fetch = (h.flags & detail::kAmFetch) != 0;
    const bool cas = (h.flags & detail::kAmCompare) != 0;
    std::byte* segs = slot + sizeof h;
    std::byte* data = segs + 16 * static_cast<std::size_t>(h.nseg);
    bool valid =
        elem > 0 && h.op > 0 && h.op < kNumOps && opAccepts(op, kind) &&
        sizeof h + 16 * static_cast<std::size_t>(h.nseg) + h.dataBytes <= detail::kSlotBytes &&
        (!cas || (h.nseg == 1 && h.dataBytes == 2 * elem));
    std::uint64_t total = 0;
    for (std::uint32_t k = 0; valid && k < h.nseg; ++k) {
      std::uint64_t pair[2];
      std::memcpy(pair, segs + 16 * k, 16);
      valid = pair[1] % elem == 0 && exposes(pair[0], spanOf(kind, pair[1]));
      total += pair[1];
    }
    if (valid && !cas && total != h.dataBytes) valid = false;
    // Where the reply goes. The rank's own thread pushes it through the transport where the
    // origin asked (pushTo: the origin then reads nothing back); the progress thread, which must
    // not use the transport, leaves it in the slot, and the origin, seeing `replied` without
    // kRepliedPushed, reads it from there. In the local message mode either thread stores it
    // straight into the origin's mapped control region (storeTo: the old values land there as
    // they are read, then the token), and the slot is free at once.
    const std::uint64_t from = h.replied & ~detail::kReplyTo;
    const bool toOrigin = (h.flags & detail::kAmPush) != 0 && (h.replied & detail::kReplyTo) != 0 &&
                          from < static_cast<std::uint64_t>(comm_.size()) &&
                          static_cast<int>(from) != comm_.rank();
    const bool pushTo = owner && toOrigin && !amInts_;
    const bool storeTo = fetch && toOrigin && amInts_ && from < replyTo_.size();
    std::byte* const octl = storeTo ? replyTo_[static_cast<std::size_t>(from)] : nullptr;
    if (!valid) {
      log::core().error("accumulate message {} in the inbox is malformed: ignored", stamp);
    } else {
      const std::size_t replyBytes = cas ? elem : std::size_t{h.dataBytes};
      std::byte* old = nullptr;
      if (storeTo) {
        old = octl + detail::directReplyOffset(replyBytes);
      } else if (fetch) {
        amScratch_.resize(replyBytes);
        old = amScratch_.data();
      }
      std::size_t pos = 0;
      for (std::uint32_t k = 0; k < h.nseg; ++k) {
        std::uint64_t pair[2];
        std::memcpy(pair, segs + 16 * k, 16);
        // (A dynamic window's base is MPI_BOTTOM: offsets are addresses.)
        auto* tp = reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(mem) + pair[0]);
        const auto len = static_cast<std::size_t>(pair[1]);
        applySegment(tp, len, op, kind, elem, cas ? data : data + pos, cas ? data + elem : nullptr,
                     fetch ? old + pos : nullptr);
        pos += len;
      }
      if (fetch && !storeTo) detail::copyBytes(data, old, replyBytes);
    }
    // A reply even for a malformed message: its origin must not wait forever.
    if (storeTo) {
      std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(octl + detail::kInboxReply))
          .store(detail::directToken(comm_.rank(), stamp), std::memory_order_release);
    } else if (fetch) {
      std::uint64_t replied = stamp;
      if (pushTo && valid) {
        replied |= detail::kRepliedPushed;
        amPushes_.push_back({static_cast<int>(from), so, sizeof h + 16 * std::size_t{h.nseg},
                             cas ? elem : std::size_t{h.dataBytes}});
      }
      word(so + 8).store(replied, std::memory_order_release);
    } else if (pushTo) {
      // No reply: the applied count, once for a run of this origin's messages.
      const std::uint64_t applied =
          (static_cast<std::uint64_t>(comm_.rank()) << detail::kAppliedRankShift) | stamp;
      if (!amPushes_.empty() && amPushes_.back().applied != 0 &&
          amPushes_.back().origin == static_cast<int>(from)) {
        amPushes_.back().applied = applied;
      } else {
        amPushes_.push_back({static_cast<int>(from), 0, 0, 0, applied});
      }
    }
    amAwaitingAck_[static_cast<std::size_t>(amApplied_ % detail::kSlotCount)] =
        fetch && !storeTo ? 1 : 0;
    ++amApplied_;
    word(detail::kInboxApplied).store(amApplied_, std::memory_order_release);
    worked = true;
  }
  release();
  amPeek_.store(amReleased_ == amApplied_ ? amApplied_ : kPeekBusy, std::memory_order_release);
  return worked;
}

bool Window::inboxPending() const noexcept {
  if (!amRegistered_) return false;
  const std::uint64_t next = amPeek_.load(std::memory_order_acquire);
  if (next == kPeekBusy) return true;
  std::atomic_ref<std::uint64_t> stamp(
      *reinterpret_cast<std::uint64_t*>(ctlMem_ + slotOffset(next)));
  if (stamp.load(std::memory_order_relaxed) == next + 1) return true;
  for (std::size_t r = 0; r < boxSeen_.size(); ++r) {
    if (newBoxRequest(r) != 0) return true;
  }
  return false;
}

void Window::pushReplies() {
  // Indices, not iterators: a wait below drives progress, which may queue more.
  for (std::size_t i = 0; i < amPushes_.size(); ++i) {
    const AmPush p = amPushes_[i];
    Target& t = describe(p.origin);
    auto& ep = comm_.context().endpoint(comm_.worldRank(p.origin));
    transport::RemoteKey& key = controlKey(t, ep);
    if (p.applied != 0) {
      if (appliedWordNext_ == appliedWords_.size()) {
        comm_.context().transport().flushAll();  // every word's put is complete: reuse them
        appliedWordNext_ = 0;
      }
      std::uint64_t& w = appliedWords_[appliedWordNext_++];
      w = p.applied;
      transport::Iov count{&w, 8};
      (void)ep.put({&count, 1}, t.ctlBase + detail::kInboxAppliedPush, key);
      ep.post();
      continue;
    }
    // Both sources are in the slot, which stays ours until the origin, having the reply,
    // acknowledges it. Where the origin's memory is mapped here (one node), only a short
    // reply's values go with the token: a longer one is cheaper for the origin to copy out of
    // the slot itself than for this rank to copy into the origin's pages and the origin to copy
    // again (4 KiB replies over UCX shared memory: 3.4 us a message pushed, 2.3 read).
    std::byte* replied = ctlMem_ + p.slot + offsetof(detail::AmHeader, replied);
    std::atomic_ref<std::uint64_t> word(*reinterpret_cast<std::uint64_t*>(replied));
    const bool values =
        p.bytes <= kPushMapped || key.directPointer(t.ctlBase + detail::kReplyData) == nullptr;
    if (values) {
      transport::Iov iov{ctlMem_ + p.slot + p.at, p.bytes};
      if (p.bytes > 0) (void)ep.put({&iov, 1}, t.ctlBase + detail::kReplyData, key);
      word.fetch_or(detail::kRepliedValues, std::memory_order_release);
    }
    // The token after the values: added to the origin's 0 (it cleared the word before its
    // message, and no other push to it is in flight) where the transport orders that after
    // the values' put (verbs: no wait here); otherwise a fence, then a put.
    if (!ep.postAdd(word.load(std::memory_order_relaxed), t.ctlBase + detail::kInboxReply, key,
                    transport::AddAfter::kWrites)) {
      if (values) ep.fence();  // the values are in place before the token announces them
      transport::Iov token{replied, 8};
      (void)ep.put({&token, 1}, t.ctlBase + detail::kInboxReply, key);
    }
    ep.post();
  }
  amPushes_.clear();
}

void Window::detachInbox() noexcept {
  if (!amRegistered_) return;
  comm_.context().inboxes().remove(this);
  amRegistered_ = false;
}

}  // namespace onesided
