// SPDX-License-Identifier: BSD-3-Clause
// Point-to-point messaging on one-sided writes and reads (MPI-3.1 chapter 3).
//
// Small messages are written by the sender into its ring in the receiver's region (wire.hpp)
// and matched by the receiver, in the order they arrived, against its posted receives; a
// message no receive wants yet is copied into the unexpected queue. A message larger than the
// eager limit (ONESIDED_P2P_EAGER, 8 KiB) sends only a ready-to-send record naming its data: the
// receiver, once a receive matches it, reads the data straight into the receive buffer (a copy
// between ranks of one process, cross-memory attach on one node, an RDMA read otherwise) and
// answers kFin, which completes the send. The data moves once, and a sender that computes does
// not hold up the read.
//
// Order: messages from one sender travel through one ring and are matched in that order, so
// MPI's non-overtaking rule per (communicator, source, tag) holds. Communicators never mix:
// every message carries its communicator's context (Comm::p2pContext).
//
// Progress: the rings are read whenever the rank drives progress (Context::progress), so a rank
// waiting anywhere in the runtime (a receive, a fence, a collective) drains them.
//
// Not thread-safe: the C API serialises calls into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "onesided/datatype.hpp"
#include "p2p/wire.hpp"
#include "transport/transport.hpp"

namespace onesided {
class Context;
}  // namespace onesided

namespace onesided::p2p {

/// Wildcards, as <mpi.h> has them.
constexpr int kAnySource = -1;
constexpr int kAnyTag = -1;

/// What a completed request reports (MPI_Status).
struct Status {
  int source = kAnySource;
  int tag = kAnyTag;
  int error = 0;            ///< an MPI error class (kErrTruncate), 0 when it went well
  std::uint64_t bytes = 0;  ///< packed bytes delivered
  std::uint64_t sent = 0;   ///< the message's packed bytes (more than `bytes` when truncated)
  bool cancelled = false;
};

/// A message the receiver has seen but no receive has taken yet (the unexpected queue, or an
/// MPI_Mprobe's message handle).
struct Incoming {
  std::uint64_t context = 0;
  int source = 0;  ///< the sender's rank in the communicator
  int tag = 0;
  int world = 0;  ///< the sender's world rank
  std::uint64_t bytes = 0;
  std::uint64_t sendId = 0;
  bool sync = false;  ///< a synchronous send: acknowledge once received
  bool rts = false;   ///< the data is in the sender's memory: `data` holds the Rts record
  std::vector<std::byte> data;
  struct Request* selfSend = nullptr;  ///< a send from this rank still holding its data
  /// What a probe reports of it (MPI_Iprobe, MPI_Improbe).
  [[nodiscard]] Status envelope() const {
    Status st;
    st.source = source;
    st.tag = tag;
    st.bytes = bytes;
    return st;
  }
};

struct Request {
  enum class Kind : std::uint8_t { kSend, kRecv };
  Kind kind = Kind::kRecv;
  bool complete = false;
  Status status;
  // The buffer (a receive's destination, a send's source).
  void* buf = nullptr;
  std::size_t count = 0;
  Datatype::Ptr type;
  // A receive's envelope.
  std::uint64_t context = 0;
  int source = kAnySource;
  int tag = kAnyTag;
  // A send's state.
  int world = 0;  ///< destination world rank
  std::uint64_t sendId = 0;
  bool sync = false;
  bool waitsReply = false;        ///< written, and a kAck or kFin is still to come
  bool cancelAsked = false;       ///< MPI_Cancel sent its receiver a kCancel
  std::vector<std::byte> packed;  ///< a non-contiguous rendezvous send's data, packed
  std::unique_ptr<transport::MemoryRegion> exposed;  ///< the rendezvous data's registration
  // The posted receives, in the order posted (a list through the requests themselves: posting
  // allocates nothing).
  Request* prevPosted = nullptr;
  Request* nextPosted = nullptr;
  bool posted = false;
  ~Request();
};

/// Ring and protocol settings (ONESIDED_P2P_RING, ONESIDED_P2P_EAGER).
struct Settings {
  std::size_t ringBytes = 0;   ///< per pair
  std::size_t eagerBytes = 0;  ///< the largest message sent eagerly
};

class Engine {
 public:
  explicit Engine(Context& ctx);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// What peers need to reach this rank's region (the start-up blob carries it).
  [[nodiscard]] std::vector<std::byte> localInfo() const;
  [[nodiscard]] const Settings& settings() const noexcept { return settings_; }

  /// Starts a send of `count` elements of `type` at `buf` to world rank `world`, whose rank in
  /// the communicator of `context` is irrelevant here: `source` is this rank's. The request is
  /// complete when the buffer may be reused (sync: once a receive matched it). `r` must live
  /// until it is complete (or cancelled).
  void send(Request& r, const void* buf, std::size_t count, const Datatype& type, int world,
            std::uint64_t context, int source, int tag, bool sync);
  /// MPI_Send's fast case: a standard send of at most the eager limit to a peer whose ring
  /// this rank stores into, with nothing queued before it, written now with no request. False:
  /// nothing was done (send() takes it).
  bool sendNow(const void* buf, std::size_t count, const Datatype& type, int world,
               std::uint64_t context, int source, int tag);
  /// Starts a receive (source and tag may be wildcards).
  void recv(Request& r, void* buf, std::size_t count, const Datatype& type, std::uint64_t context,
            int source, int tag);
  /// Receives the message an improbe() took (MPI_Mrecv / MPI_Imrecv).
  void recvMessage(Request& r, void* buf, std::size_t count, const Datatype& type,
                   std::unique_ptr<Incoming> msg);
  /// MPI_Iprobe: the envelope of the first matching message, if one has arrived.
  bool probe(std::uint64_t context, int source, int tag, Status& st);
  /// MPI_Improbe: takes the first matching message out of the queue.
  std::unique_ptr<Incoming> takeMatching(std::uint64_t context, int source, int tag);
  /// MPI_Cancel: a receive not yet matched, a send not yet written or a send to this rank
  /// itself not yet received is completed as cancelled now (true). A written send that waits
  /// for its receiver (rendezvous, synchronous) asks the receiver to drop it: it completes,
  /// cancelled or not, once the answer (or its kFin / kAck) is read.
  bool cancel(Request& r);
  /// Takes `r` out of every queue (a blocking call's request, when its wait threw): nothing
  /// refers to it afterwards. Its message may be lost.
  void forget(Request& r) noexcept;
  /// Forgets a request the program freed while it was active (MPI_Request_free): the engine
  /// owns it from now on and deletes it once complete.
  void orphan(std::unique_ptr<Request> r);

  /// Reads the rings and writes pending messages; true when it did any work.
  bool poll();
  /// Waits for `r` (driving progress).
  void wait(Request& r);
  /// Completes every send written into rings (MPI_Finalize: nothing is left queued here).
  void drain();
  /// Messages waiting in the unexpected queue (for tests).
  [[nodiscard]] std::size_t unexpected() const noexcept { return unexpected_.size(); }

 private:
  struct Peer;
  /// A message to write into a peer's ring (in order, once there is room).
  struct Out {
    wire::Header h{};
    Request* req = nullptr;          ///< kEager: the send packed from its buffer; kRts: the send
    std::vector<std::byte> payload;  ///< kRts's record
  };

  Peer& peer(int world);
  Peer& resolve(int world);
  [[nodiscard]] std::byte* ringOf(int world) const;
  [[nodiscard]] std::uint64_t cellsFor(std::size_t bytes) const;
  /// Writes `o` into the peer's ring if there is room (a pad first at the ring's end).
  bool tryWrite(Peer& p, Out& o);
  /// What a message carries after its header: a kEager's data (`count` of `type` at `buf`,
  /// packed as it is written), or the bytes of another kind's record.
  struct Body {
    const void* buf;
    std::size_t count;
    const Datatype* type;
    std::span<const std::byte> bytes;
  };
  bool tryWrite(Peer& p, wire::Header& h, const Body& body);
  /// Writes one message (header with its stamp last) at cell `pos` of the peer's ring.
  void writeAt(Peer& p, std::uint64_t pos, wire::Header& h, const Body* o);
  void enqueue(Peer& p, Out o);
  bool writePending(Peer& p);
  /// Takes the next message from `p`'s ring, if it arrived.
  bool readOne(Peer& p);
  void consume(Peer& p, std::uint64_t cells);
  /// A message that arrived (from a ring or this rank itself): matched or queued.
  void arrive(Incoming& in, const std::byte* eagerData);
  /// Delivers the message into a receive; completes it and tells the sender what it must hear.
  void deliver(Request& r, Incoming& in, const std::byte* eagerData);
  /// Reads a rendezvous message's first `len` bytes into `dst`.
  void readRemote(const Incoming& in, std::byte* dst, std::size_t len);
  /// Sends a kFin or kAck for `in`'s send.
  void reply(const Incoming& in, wire::Kind kind);
  void completeSend(std::uint64_t sendId, bool cancelled);
  void sweepOrphans();
  /// Whether a receive for (context, source, tag), wildcards allowed, takes `in`.
  static bool matches(std::uint64_t context, int source, int tag, const Incoming& in) noexcept;
  std::deque<std::unique_ptr<Incoming>>::iterator findUnexpected(std::uint64_t context, int source,
                                                                 int tag);
  /// The first message of the unexpected queue `want` matches, taken out of it, or null.
  std::unique_ptr<Incoming> takeUnexpected(std::uint64_t context, int source, int tag);
  /// Whether this rank can read `p`'s memory with cross-memory attach (checked once).
  bool attaches(Peer& p);

  Context& ctx_;
  Settings settings_;
  int me_ = 0;
  int size_ = 1;
  std::uint64_t nonce_ = 0;
  std::unique_ptr<transport::MemoryRegion> region_;
  std::byte* local_ = nullptr;
  std::size_t ringsOff_ = 0;
  std::uint64_t ringCells_ = 0;
  std::uint64_t ringMask_ = 0;
  std::vector<std::unique_ptr<Peer>> peers_;  // by world rank, made on first use
  std::vector<int> active_;  // world ranks with a resolved peer (whose rings are read)
  Request* postedHead_ = nullptr;
  Request* postedTail_ = nullptr;
  void post(Request& r) noexcept;
  void unpost(Request& r) noexcept;
  std::deque<std::unique_ptr<Incoming>> unexpected_;
  std::unordered_map<std::uint64_t, Request*> awaiting_;  // sends waiting for kAck / kFin
  std::vector<std::unique_ptr<Request>> orphans_;
  std::uint64_t nextSendId_ = 1;
  std::vector<std::byte> staging_;  // a message built for a put
  bool attachAllowed_ = true;  // ONESIDED_P2P_ATTACH: rendezvous by copy / attach where possible
  bool polling_ = false;
  bool closed_ = false;           // drain() done: nothing is read or written any more
  std::size_t pendingPeers_ = 0;  // peers with messages queued to write
};

/// Unpacks the first `len` bytes of a packed stream of `count` elements of `type` into `buf`
/// (a message shorter than the receive, or truncated to it).
void unpackPrefix(const std::byte* in, std::size_t len, void* buf, std::size_t count,
                  const Datatype& type);

}  // namespace onesided::p2p
