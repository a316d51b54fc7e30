// SPDX-License-Identifier: BSD-3-Clause
// Accumulate by active message: the inbox layout shared by origins and targets, and the
// per-rank service (a registry of windows plus the progress thread) that applies messages.
// The protocol is described in am.cpp.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace onesided {
class Window;
}

namespace onesided::detail {

/// Inbox layout, inside a window's control region after its 64 bytes of control words.
constexpr std::size_t kInboxOffset = 64;
constexpr std::size_t kInboxApplied = kInboxOffset;       // messages applied (target writes)
constexpr std::size_t kInboxReleased = kInboxOffset + 8;  // slots free again (target writes)
constexpr std::size_t kInboxSlots = kInboxOffset + 64;    // the first slot
constexpr std::size_t kSlotCount = 32;
constexpr std::size_t kSlotBytes = 4096;
/// Where a target pushes the reply to this rank's message (kAmPush): a word (the token, the
/// target's `replied` value) written after the values, which follow 64 bytes on.
constexpr std::size_t kInboxReply = kInboxSlots + kSlotCount * kSlotBytes;
/// Where a target pushes its applied count after applying this rank's message that wants no
/// reply (kAmPush without kAmFetch): target << kAppliedRankShift | count, written by every
/// target.
constexpr std::size_t kInboxAppliedPush = kInboxReply + 8;
constexpr std::size_t kReplyData = kInboxReply + 64;
/// The local message mode (Window::amInts_) stores a reply straight into its origin's mapped
/// control region: a reply of at most kReplyInlineBytes in the token's cache line from here,
/// a longer one at kReplyData; then the token (directToken) at kInboxReply.
constexpr std::size_t kReplyInline = kInboxReply + 16;
constexpr std::size_t kReplyInlineBytes = 48;
/// Where in the origin's control region that mode puts a reply of `bytes` (both sides ask).
constexpr std::size_t directReplyOffset(std::size_t bytes) {
  return bytes <= kReplyInlineBytes ? kReplyInline : kReplyData;
}
/// The local message mode's fetch box: a fetch_and_op or compare_and_swap that is the only
/// message outstanding from its origin to its target is written by the origin into its own
/// reply line (kInboxReply), and the target, which watches the boxes of every origin, answers in
/// that same line. A line that each side reads and then writes moves as one transfer each way;
/// a message in a slot and a reply in another line took two (a C model of both on the Xeon of
/// stop 32, 2 cores: 0.18-0.24 us per round trip against 0.38-0.40, a ping-pong of one line
/// 0.16-0.22). The box's words (kInboxAppliedPush, which shares the line, serves only the
/// transport's mode):
///   kBoxRequest  (target + 1) << kAppliedRankShift | sequence, stored last (release);
///   kBoxOp       op | kind << 16 | kBoxCompare;
///   kBoxOffset   the element's offset in the target's window;
///   kBoxData     the origin's value, then (compare_and_swap) the compare value, 16 bytes each.
/// The target stores the old value at kReplyInline (over op and offset, read by then) and then
/// boxToken() at kInboxReply.
constexpr std::size_t kBoxRequest = kInboxReply + 8;
constexpr std::size_t kBoxOp = kInboxReply + 16;
constexpr std::size_t kBoxOffset = kInboxReply + 24;
constexpr std::size_t kBoxData = kInboxReply + 32;
constexpr std::size_t kBoxElemMax = 16;
constexpr std::uint64_t kBoxCompare = std::uint64_t{1} << 32;
/// Up to this many ranks: every poll of a waiting rank looks at each origin's box (one load
/// each, of a line that stays in its cache until the origin writes it).
constexpr int kBoxMaxRanks = 16;
constexpr std::size_t kInboxBytes = 64 + kSlotCount * kSlotBytes + 64 + kSlotBytes;
static_assert(kInboxOffset + kInboxBytes == kReplyData + kSlotBytes);

/// A message's first 32 bytes; then `nseg` segments {target offset, bytes} (16 bytes each), then
/// `dataBytes` of packed values (origin values; for compare-and-swap, origin then compare; the
/// old values replace them when a reply is asked for).
struct AmHeader {
  std::uint64_t stamp;  // ticket + 1, written last and alone (the message is complete)
  // Written by the origin: with kAmPush, kReplyTo | its rank. The target sets it to `stamp` when
  // the reply is in place in the slot, or to `stamp | kRepliedPushed` when it pushed it instead.
  std::uint64_t replied;
  std::uint32_t dataBytes;
  std::uint32_t nseg;
  std::uint16_t op;
  std::uint16_t kind;
  std::uint32_t flags;
};
static_assert(sizeof(AmHeader) == 32);
constexpr std::uint32_t kAmFetch = 1;    // the origin waits for the old values
constexpr std::uint32_t kAmCompare = 2;  // compare-and-swap of one element
/// Through the transport: the origin (its rank in `replied`) also watches its own control
/// region, where the target may push the reply (with kAmFetch: kInboxReply) or, for a message
/// that wants none, its applied count (kInboxAppliedPush).
constexpr std::uint32_t kAmPush = 4;
/// A pushed applied count: the target's rank in the bits from kAppliedRankShift, the count below.
constexpr unsigned kAppliedRankShift = 40;
constexpr std::uint64_t kAppliedCountMask = (std::uint64_t{1} << kAppliedRankShift) - 1;
constexpr std::uint64_t kRepliedPushed = std::uint64_t{1} << 63;
/// In a pushed token: the values came too (else they are in the slot).
constexpr std::uint64_t kRepliedValues = std::uint64_t{1} << 61;
/// The origin's `replied` word with kAmPush: kReplyTo | its rank (never a stamp, which stays
/// below 2^62, so an origin that reads it back before the target replied is not misled).
constexpr std::uint64_t kReplyTo = std::uint64_t{1} << 62;
/// The token a target stores in the local message mode after the reply to message `stamp`:
/// unique per (target, stamp) (stamps compared modulo 2^40, and an origin waits for each reply
/// before its next message to that window), so the origin never clears the word between
/// messages (a store to a line the target just wrote, which would hold up its next message).
constexpr std::uint64_t directToken(int target, std::uint64_t stamp) {
  return kRepliedPushed | (static_cast<std::uint64_t>(target) << kAppliedRankShift) |
         (stamp & kAppliedCountMask);
}
/// The token after a fetch box's reply: kRepliedValues (which means nothing else in this mode)
/// keeps it apart from a slot reply's token for the same number.
constexpr std::uint64_t boxToken(int target, std::uint64_t sequence) {
  return directToken(target, sequence) | kRepliedValues;
}

/// The windows whose inboxes this rank serves. Messages are applied by whichever comes first:
/// the progress thread, or the rank itself whenever it drives progress (Context::progress). One
/// lock serialises them, which is what makes the messages atomic with each other.
///
/// The thread sleeps on a condition variable while no window uses messages (no cost at all),
/// and otherwise polls: a few hundred yields after the last message (a reply arrives within
/// microseconds), then sleeps growing from 20 us to 1 ms, so an idle rank wakes at most about a
/// thousand times a second and a busy one loses no more than that to it.
class Inboxes {
 public:
  explicit Inboxes(bool thread) : wantThread_(thread) {}
  ~Inboxes();
  Inboxes(const Inboxes&) = delete;
  Inboxes& operator=(const Inboxes&) = delete;

  void add(Window* w);
  /// After it returns, `w` is not being serviced and never will be again.
  void remove(Window* w) noexcept;
  /// From the rank's own thread: services every inbox unless the progress thread is at it.
  /// True when a message was applied or a slot released, by this call or by the thread since
  /// the last call.
  bool serviceFromOwner();
  /// The lock the rank holds while it applies an accumulate to its own window directly.
  std::mutex& lock() { return mu_; }

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Window*> windows_;
  std::atomic<bool> any_{false};
  /// serviceFromOwner() calls that got the lock: the thread stands down while this moves.
  std::atomic<std::uint64_t> ownerPasses_{0};
  /// Passes of the thread that applied a message or released a slot, and the count the rank's
  /// own thread saw last: work the thread did counts as the rank's for its waits' back-off.
  std::atomic<std::uint64_t> threadWorked_{0};
  std::atomic<std::uint64_t> threadWorkedSeen_{0};
  /// Windows whose serviceInbox() queued replies to push, and whether a push is under way (a
  /// wait inside it that drives progress leaves new ones to the loop already running).
  std::vector<Window*> pushers_;
  bool pushing_ = false;
  bool stop_ = false;
  bool wantThread_;
  std::thread thread_;
};

}  // namespace onesided::detail
