// SPDX-License-Identifier: BSD-3-Clause
// Point-to-point communication (MPI-3.1 chapter 3) over the messaging engine (src/p2p/).
//
// Every argument is checked before anything is sent or posted: a bad call leaves no trace.
// MPI_PROC_NULL is a no-op that completes at once (a receive's status: source MPI_PROC_NULL,
// tag MPI_ANY_TAG, count 0). Errors of a message (MPI_ERR_TRUNCATE) are raised on its
// communicator, by the call that completes it.
#include <climits>
#include <string>

#include "capi/state.hpp"
#include "onesided/context.hpp"

namespace onesided::capi {
namespace {

constexpr int kTagUb = INT_MAX;

const Datatype& msgType(MPI_Datatype t) {
  const Datatype& d = datatype(t);
  if (!d.committed()) {
    throw Error(MPI_ERR_TYPE,
                "datatype " + d.describe() + " is not committed (call MPI_Type_commit first)");
  }
  return d;
}

void checkCount(int count) {
  if (count < 0) throw Error(MPI_ERR_COUNT, "count " + std::to_string(count) + " is negative");
}

/// A buffer argument: not MPI_IN_PLACE, and not NULL where the data would be (MPI_BOTTOM with
/// a type of absolute addresses is fine).
void checkBuffer(const void* buf, int count, const Datatype& t, const char* what) {
  requireNotInPlace(buf, what);
  if (buf != nullptr || count == 0 || t.size() == 0) return;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  if (t.footprint(static_cast<std::size_t>(count), lo, hi) && lo < 4096 && hi > 0) {
    throw Error(MPI_ERR_BUFFER, std::string(what) + " is NULL, but " + std::to_string(count) +
                                    " x " + t.describe() + " has data there");
  }
}

std::string sizeNote(const Peers& c) {
  return " (the communicator has " + std::to_string(c.size()) + " ranks)";
}

void checkDest(const Peers& c, int dest) {
  if (dest == MPI_PROC_NULL || (dest >= 0 && dest < c.size())) return;
  throw Error(MPI_ERR_RANK, "dest " + std::to_string(dest) + " is not a rank" + sizeNote(c));
}

void checkSource(const Peers& c, int source) {
  if (source == MPI_ANY_SOURCE || source == MPI_PROC_NULL || (source >= 0 && source < c.size())) {
    return;
  }
  throw Error(MPI_ERR_RANK, "source " + std::to_string(source) +
                                " is not a rank, MPI_ANY_SOURCE or MPI_PROC_NULL" + sizeNote(c));
}

void checkSendTag(int tag) {
  if (tag >= 0 && tag <= kTagUb) return;
  throw Error(MPI_ERR_TAG, "tag " + std::to_string(tag) +
                               " is negative (a send takes a tag from 0 to MPI_TAG_UB, " +
                               std::to_string(kTagUb) + ")");
}

void checkRecvTag(int tag) {
  if (tag == MPI_ANY_TAG || tag >= 0) return;
  throw Error(MPI_ERR_TAG, "tag " + std::to_string(tag) + " is negative and not MPI_ANY_TAG");
}

/// The checked arguments of one side of a message.
struct Side {
  Peers comm;
  const Datatype* type;
};

Side checkSend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const Peers c = capi::peers(comm);
  checkCount(count);
  const Datatype& t = msgType(type);
  checkBuffer(buf, count, t, "buf");
  checkDest(c, dest);
  checkSendTag(tag);
  return {c, &t};
}

Side checkRecv(const void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm) {
  const Peers c = capi::peers(comm);
  checkCount(count);
  const Datatype& t = msgType(type);
  checkBuffer(buf, count, t, "buf");
  checkSource(c, source);
  checkRecvTag(tag);
  return {c, &t};
}

/// A blocking call's request: taken out of the engine if the wait throws.
struct Held {
  p2p::Request r;
  Held() = default;
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() {
    if (!r.complete && state().ctx) engine().forget(r);
  }
};

enum class Mode : std::uint8_t { kStandard, kSync, kReady, kBuffered };

void startSend(p2p::Request& r, Mode mode, const void* buf, int count, const Side& s, int dest,
               int tag) {
  engine().send(r, buf, static_cast<std::size_t>(count), *s.type, s.comm.worldRank(dest),
                s.comm.p2pContext(), s.comm.rank(), tag, mode == Mode::kSync);
}

void startRecv(p2p::Request& r, void* buf, int count, const Side& s, int source, int tag) {
  engine().recv(r, buf, static_cast<std::size_t>(count), *s.type, s.comm.p2pContext(), source, tag);
}

void sweepBufferedSends() {
  auto& st = state();
  // The receivers' answers that arrived since the last call free their messages' space.
  if (!st.bsends.empty()) engine().poll();
  std::erase_if(st.bsends, [&](const std::unique_ptr<BufferedSend>& b) {
    if (!b->req.complete) return false;
    st.bsendUsed -= b->charge;
    return true;
  });
}

/// MPI_Bsend: the data is copied and charged against the attached buffer, then sent from the
/// copy; the call completes at once.
void bufferedSend(const void* buf, int count, const Side& s, int dest, int tag) {
  auto& st = state();
  sweepBufferedSends();
  const std::size_t bytes = static_cast<std::size_t>(count) * s.type->size();
  const std::size_t need = bytes + MPI_BSEND_OVERHEAD;
  if (!st.bsendAttached) {
    throw Error(MPI_ERR_BUFFER, "no buffer is attached (MPI_Buffer_attach) for a message of " +
                                    std::to_string(bytes) + " bytes");
  }
  if (st.bsendUsed + need > static_cast<std::size_t>(st.bsendSize)) {
    throw Error(MPI_ERR_BUFFER,
                "the message needs " + std::to_string(need) + " bytes of the attached buffer (" +
                    std::to_string(bytes) + " + MPI_BSEND_OVERHEAD), but only " +
                    std::to_string(static_cast<std::size_t>(st.bsendSize) - st.bsendUsed) +
                    " of its " + std::to_string(st.bsendSize) + " are free");
  }
  auto b = std::make_unique<BufferedSend>();
  b->data.resize(bytes);
  if (bytes != 0) pack(buf, static_cast<std::size_t>(count), *s.type, b->data.data(), bytes);
  b->charge = need;
  const Datatype& byte = *Datatype::predefined(MPI_BYTE);
  engine().send(b->req, b->data.data(), bytes, byte, s.comm.worldRank(dest), s.comm.p2pContext(),
                s.comm.rank(), tag, false);
  st.bsendUsed += need;
  st.bsends.push_back(std::move(b));
}

void blockingSend(Mode mode, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm) {
  const Side s = checkSend(buf, count, type, dest, tag, comm);
  if (dest == MPI_PROC_NULL) return;
  if (mode == Mode::kBuffered) {
    bufferedSend(buf, count, s, dest, tag);
    return;
  }
  if (mode != Mode::kSync &&
      engine().sendNow(buf, static_cast<std::size_t>(count), *s.type, s.comm.worldRank(dest),
                       s.comm.p2pContext(), s.comm.rank(), tag)) {
    return;
  }
  Held h;
  startSend(h.r, mode, buf, count, s, dest, tag);
  engine().wait(h.r);
}

MPI_Request addMessage(std::unique_ptr<p2p::Request> r, MPI_Comm comm) {
  return state().requests.add([&](RequestEntry& e) {
    e.msg = std::move(r);
    e.comm = comm;
  });
}

MPI_Request addProcNull(MPI_Comm comm) {
  return state().requests.add([&](RequestEntry& e) {
    e.procNull = true;
    e.comm = comm;
  });
}

void nonblockingSend(Mode mode, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  const Side s = checkSend(buf, count, type, dest, tag, comm);
  requireArg(request, "request");
  if (dest == MPI_PROC_NULL) {
    *request = addProcNull(comm);
    return;
  }
  auto r = newMessage();
  if (mode == Mode::kBuffered) {
    bufferedSend(buf, count, s, dest, tag);
    r->kind = p2p::Request::Kind::kSend;
    r->complete = true;
  } else {
    startSend(*r, mode, buf, count, s, dest, tag);
  }
  *request = addMessage(std::move(r), comm);
}

void throwStatus(const p2p::Status& st) {
  if (st.error != 0) throw Error(st.error, p2pError(st));
}

/// MPI_Send_init and its kin: the checked arguments, kept for MPI_Start.
void persistent(PersistentArgs::Op op, const void* buf, int count, MPI_Datatype type, int peer,
                int tag, MPI_Comm comm, MPI_Request* request) {
  const Side s = op == PersistentArgs::Op::kRecv ? checkRecv(buf, count, type, peer, tag, comm)
                                                 : checkSend(buf, count, type, peer, tag, comm);
  requireArg(request, "request");
  auto a = std::make_unique<PersistentArgs>();
  a->op = op;
  a->buf = const_cast<void*>(buf);  // NOLINT(cppcoreguidelines-pro-type-const-cast): sends read
  a->count = count;
  a->type = type;
  a->peer = peer;
  a->tag = tag;
  a->comm = comm;
  a->typeHold = s.type->hold();
  RequestEntry e;
  e.persistent = std::move(a);
  e.active = false;
  e.comm = comm;
  *request = addRequest(std::move(e));
}

void start(MPI_Request h, int index) {
  const std::string where = index >= 0 ? " (index " + std::to_string(index) + ")" : "";
  if (h == MPI_REQUEST_NULL)
    throw Error(MPI_ERR_REQUEST, "request" + where + " is MPI_REQUEST_NULL");
  RequestEntry* found = state().requests.find(h);
  if (found == nullptr) {
    throw Error(MPI_ERR_REQUEST, "request " + std::to_string(h) + where + " is not a live request");
  }
  RequestEntry& e = *found;
  if (!e.persistent) {
    throw Error(MPI_ERR_REQUEST,
                "request " + std::to_string(h) + where +
                    " is not persistent (MPI_Send_init, MPI_Recv_init ... make those)");
  }
  if (e.active) {
    throw Error(MPI_ERR_REQUEST, "request " + std::to_string(h) + where +
                                     " is active already (complete it before starting it again)");
  }
  const PersistentArgs& a = *e.persistent;
  const Side s{peers(a.comm), a.typeHold.get()};
  e.procNull = a.peer == MPI_PROC_NULL;
  if (!e.procNull) {
    if (!e.msg) e.msg = newMessage();
    p2p::Request& r = *e.msg;
    switch (a.op) {
      case PersistentArgs::Op::kRecv:
        startRecv(r, a.buf, a.count, s, a.peer, a.tag);
        break;
      case PersistentArgs::Op::kBsend:
        bufferedSend(a.buf, a.count, s, a.peer, a.tag);
        r.kind = p2p::Request::Kind::kSend;
        r.status = p2p::Status{};
        r.complete = true;
        break;
      case PersistentArgs::Op::kSsend:
        startSend(r, Mode::kSync, a.buf, a.count, s, a.peer, a.tag);
        break;
      case PersistentArgs::Op::kSend:
      case PersistentArgs::Op::kRsend:
        startSend(r, Mode::kStandard, a.buf, a.count, s, a.peer, a.tag);
        break;
    }
  }
  e.active = true;
}

/// The message behind a handle MPI_Mprobe gave, taken out of the table; nullptr for
/// MPI_MESSAGE_NO_PROC.
MatchedMessage takeMessage(MPI_Message* message) {
  requireArg(message, "message");
  if (*message == MPI_MESSAGE_NO_PROC) return {};
  auto& msgs = state().messages;
  auto it = msgs.find(*message);
  if (it == msgs.end()) {
    throw Error(MPI_ERR_REQUEST, "message handle " + std::to_string(*message) +
                                     (*message == MPI_MESSAGE_NULL ? " is MPI_MESSAGE_NULL"
                                                                   : " names no matched message") +
                                     " (MPI_Mprobe / MPI_Improbe give those)");
  }
  MatchedMessage m = std::move(it->second);
  msgs.erase(it);
  return m;
}

/// The checks of a matched receive's buffer (MPI_Mrecv / MPI_Imrecv), before the message is
/// taken.
const Datatype& checkMatchedBuffer(const void* buf, int count, MPI_Datatype type,
                                   const MPI_Message* message) {
  requireArg(message, "message");
  checkCount(count);
  const Datatype& t = msgType(type);
  checkBuffer(buf, count, t, "buf");
  return t;
}

MPI_Comm messageComm(const MPI_Message* message) {
  if (message == nullptr) return MPI_COMM_NULL;
  auto& msgs = state().messages;
  auto it = msgs.find(*message);
  return it == msgs.end() ? MPI_COMM_NULL : it->second.comm;
}

/// MPI_Improbe's part after the checks: a matched message's handle, or false.
bool matchedProbe(int source, int tag, MPI_Comm comm, const Peers& c, MPI_Message* message,
                  MPI_Status* status) {
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    procNullStatus(status);
    return true;
  }
  auto in = engine().takeMatching(c.p2pContext(), source, tag);
  if (!in) return false;
  p2pStatus(status, in->envelope());
  auto& s = state();
  const MPI_Message h = s.nextMessage++;
  s.messages.emplace(h, MatchedMessage{std::move(in), comm});
  *message = h;
  return true;
}

void probeArgs(int source, int tag, const Peers& c) {
  checkSource(c, source);
  checkRecvTag(tag);
}

}  // namespace

void drainBufferedSends() {
  // Taken out of the list first: the waits let other threads' calls run (MPI_THREAD_MULTIPLE),
  // whose buffered sends may change it.
  auto& st = state();
  std::vector<std::unique_ptr<BufferedSend>> mine;
  mine.swap(st.bsends);
  for (auto& b : mine) engine().wait(b->req);
  for (auto& b : mine) st.bsendUsed -= b->charge;
}

}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;
using capi::Mode;
using Op = capi::PersistentArgs::Op;

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Send", On::comm(comm),
              [&] { capi::blockingSend(Mode::kStandard, buf, count, datatype, dest, tag, comm); });
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Ssend", On::comm(comm),
              [&] { capi::blockingSend(Mode::kSync, buf, count, datatype, dest, tag, comm); });
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Rsend", On::comm(comm),
              [&] { capi::blockingSend(Mode::kReady, buf, count, datatype, dest, tag, comm); });
}

int MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Bsend", On::comm(comm),
              [&] { capi::blockingSend(Mode::kBuffered, buf, count, datatype, dest, tag, comm); });
}

int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  return call("MPI_Recv", On::comm(comm), [&] {
    const capi::Side s = capi::checkRecv(buf, count, datatype, source, tag, comm);
    if (source == MPI_PROC_NULL) {
      capi::procNullStatus(status);
      return;
    }
    capi::Held h;
    capi::startRecv(h.r, buf, count, s, source, tag);
    capi::engine().wait(h.r);
    capi::p2pStatus(status, h.r.status);
    capi::throwStatus(h.r.status);
  });
}

int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return call("MPI_Isend", On::comm(comm), [&] {
    capi::nonblockingSend(Mode::kStandard, buf, count, datatype, dest, tag, comm, request);
  });
}

int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return call("MPI_Issend", On::comm(comm), [&] {
    capi::nonblockingSend(Mode::kSync, buf, count, datatype, dest, tag, comm, request);
  });
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return call("MPI_Irsend", On::comm(comm), [&] {
    capi::nonblockingSend(Mode::kReady, buf, count, datatype, dest, tag, comm, request);
  });
}

int MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return call("MPI_Ibsend", On::comm(comm), [&] {
    capi::nonblockingSend(Mode::kBuffered, buf, count, datatype, dest, tag, comm, request);
  });
}

int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return call("MPI_Irecv", On::comm(comm), [&] {
    const capi::Side s = capi::checkRecv(buf, count, datatype, source, tag, comm);
    capi::requireArg(request, "request");
    if (source == MPI_PROC_NULL) {
      *request = capi::addProcNull(comm);
      return;
    }
    auto r = capi::newMessage();
    capi::startRecv(*r, buf, count, s, source, tag);
    *request = capi::addMessage(std::move(r), comm);
  });
}

int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Send_init", On::comm(comm),
              [&] { capi::persistent(Op::kSend, buf, count, datatype, dest, tag, comm, request); });
}

int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Ssend_init", On::comm(comm), [&] {
    capi::persistent(Op::kSsend, buf, count, datatype, dest, tag, comm, request);
  });
}

int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Rsend_init", On::comm(comm), [&] {
    capi::persistent(Op::kRsend, buf, count, datatype, dest, tag, comm, request);
  });
}

int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Bsend_init", On::comm(comm), [&] {
    capi::persistent(Op::kBsend, buf, count, datatype, dest, tag, comm, request);
  });
}

int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return call("MPI_Recv_init", On::comm(comm), [&] {
    capi::persistent(Op::kRecv, buf, count, datatype, source, tag, comm, request);
  });
}

int MPI_Start(MPI_Request* request) {
  return call("MPI_Start", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(request, "request");
    capi::start(*request, -1);
  });
}

int MPI_Startall(int count, MPI_Request array_of_requests[]) {
  return call("MPI_Startall", On::none(), [&] {
    capi::requireInit();
    capi::checkCount(count);
    if (count > 0) capi::requireArg(array_of_requests, "array_of_requests");
    for (int i = 0; i < count; ++i) capi::start(array_of_requests[i], i);
  });
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv", On::comm(comm), [&] {
    const capi::Side ss = capi::checkSend(sendbuf, sendcount, sendtype, dest, sendtag, comm);
    const capi::Side rs = capi::checkRecv(recvbuf, recvcount, recvtype, source, recvtag, comm);
    capi::Held recv;
    capi::Held send;
    if (source != MPI_PROC_NULL) capi::startRecv(recv.r, recvbuf, recvcount, rs, source, recvtag);
    if (dest != MPI_PROC_NULL) {
      capi::startSend(send.r, Mode::kStandard, sendbuf, sendcount, ss, dest, sendtag);
      capi::engine().wait(send.r);
    }
    if (source == MPI_PROC_NULL) {
      capi::procNullStatus(status);
      return;
    }
    capi::engine().wait(recv.r);
    capi::p2pStatus(status, recv.r.status);
    capi::throwStatus(recv.r.status);
  });
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv_replace", On::comm(comm), [&] {
    const capi::Side ss = capi::checkSend(buf, count, datatype, dest, sendtag, comm);
    const capi::Side rs = capi::checkRecv(buf, count, datatype, source, recvtag, comm);
    // The outgoing data is packed first: the receive lands in the same buffer.
    const std::size_t bytes = static_cast<std::size_t>(count) * ss.type->size();
    std::vector<std::byte> out(bytes);
    if (dest != MPI_PROC_NULL && bytes != 0) {
      onesided::pack(buf, static_cast<std::size_t>(count), *ss.type, out.data(), bytes);
    }
    capi::Held recv;
    capi::Held send;
    if (source != MPI_PROC_NULL) capi::startRecv(recv.r, buf, count, rs, source, recvtag);
    if (dest != MPI_PROC_NULL) {
      const capi::Side bs{ss.comm, onesided::Datatype::predefined(MPI_BYTE)};
      capi::engine().send(send.r, out.data(), bytes, *bs.type, ss.comm.worldRank(dest),
                          ss.comm.p2pContext(), ss.comm.rank(), sendtag, false);
      capi::engine().wait(send.r);
    }
    if (source == MPI_PROC_NULL) {
      capi::procNullStatus(status);
      return;
    }
    capi::engine().wait(recv.r);
    capi::p2pStatus(status, recv.r.status);
    capi::throwStatus(recv.r.status);
  });
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return call("MPI_Iprobe", On::comm(comm), [&] {
    const capi::Peers c = capi::peers(comm);
    capi::probeArgs(source, tag, c);
    capi::requireArg(flag, "flag");
    if (source == MPI_PROC_NULL) {
      *flag = 1;
      capi::procNullStatus(status);
      return;
    }
    onesided::p2p::Status st;
    *flag = capi::engine().probe(c.p2pContext(), source, tag, st) ? 1 : 0;
    if (*flag != 0) capi::p2pStatus(status, st);
  });
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Probe", On::comm(comm), [&] {
    const capi::Peers c = capi::peers(comm);
    capi::probeArgs(source, tag, c);
    if (source == MPI_PROC_NULL) {
      capi::procNullStatus(status);
      return;
    }
    onesided::p2p::Status st;
    auto& e = capi::engine();
    capi::context().waitUntil([&] { return e.probe(c.p2pContext(), source, tag, st); });
    capi::p2pStatus(status, st);
  });
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                MPI_Status* status) {
  return call("MPI_Improbe", On::comm(comm), [&] {
    const capi::Peers c = capi::peers(comm);
    capi::probeArgs(source, tag, c);
    capi::requireArg(flag, "flag");
    capi::requireArg(message, "message");
    *flag = capi::matchedProbe(source, tag, comm, c, message, status) ? 1 : 0;
  });
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return call("MPI_Mprobe", On::comm(comm), [&] {
    const capi::Peers c = capi::peers(comm);
    capi::probeArgs(source, tag, c);
    capi::requireArg(message, "message");
    capi::context().waitUntil(
        [&] { return capi::matchedProbe(source, tag, comm, c, message, status); });
  });
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
              MPI_Status* status) {
  return call("MPI_Mrecv", On::comm(capi::messageComm(message)), [&] {
    capi::requireInit();
    const onesided::Datatype& t = capi::checkMatchedBuffer(buf, count, datatype, message);
    capi::MatchedMessage m = capi::takeMessage(message);
    *message = MPI_MESSAGE_NULL;
    if (!m.in) {
      capi::procNullStatus(status);
      return;
    }
    capi::Held h;
    capi::engine().recvMessage(h.r, buf, static_cast<std::size_t>(count), t, std::move(m.in));
    capi::engine().wait(h.r);
    capi::p2pStatus(status, h.r.status);
    capi::throwStatus(h.r.status);
  });
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
               MPI_Request* request) {
  return call("MPI_Imrecv", On::comm(capi::messageComm(message)), [&] {
    capi::requireInit();
    const onesided::Datatype& t = capi::checkMatchedBuffer(buf, count, datatype, message);
    capi::requireArg(request, "request");
    capi::MatchedMessage m = capi::takeMessage(message);
    *message = MPI_MESSAGE_NULL;
    if (!m.in) {
      *request = capi::addProcNull(MPI_COMM_NULL);
      return;
    }
    auto r = capi::newMessage();
    capi::engine().recvMessage(*r, buf, static_cast<std::size_t>(count), t, std::move(m.in));
    *request = capi::addMessage(std::move(r), m.comm);
  });
}

int MPI_Cancel(MPI_Request* request) {
  return call("MPI_Cancel", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(request, "request");
    capi::RequestEntry* found = capi::state().requests.find(*request);
    if (found == nullptr) {
      throw onesided::Error(MPI_ERR_REQUEST,
                            "request " + std::to_string(*request) + " is not a live request");
    }
    capi::RequestEntry& e = *found;
    if (e.isColl()) {
      throw onesided::Error(MPI_ERR_REQUEST,
                            "request " + std::to_string(*request) +
                                " is a nonblocking collective's, which cannot be cancelled");
    }
    if (e.isGreq()) {
      // MPI-3.1 §12.2: cancel_fn, told whether MPI_Grequest_complete was called.
      const std::shared_ptr<capi::Grequest> g = e.greq;
      const int rc = g->cancel != nullptr ? g->cancel(g->extraState, g->complete.load()) : 0;
      if (rc != MPI_SUCCESS) {
        throw onesided::Error(MPI_ERR_OTHER, "the cancel_fn of generalized request " +
                                                 std::to_string(*request) +
                                                 " returned error code " + std::to_string(rc));
      }
      return;
    }
    if (!e.isP2p()) {
      throw onesided::Error(MPI_ERR_REQUEST, "request " + std::to_string(*request) +
                                                 " is an RMA request, which cannot be cancelled");
    }
    if (!e.active) {
      throw onesided::Error(MPI_ERR_REQUEST, "request " + std::to_string(*request) +
                                                 " is a persistent request that is not started");
    }
    if (e.msg) capi::engine().cancel(*e.msg);
  });
}

int MPI_Test_cancelled(const MPI_Status* status, int* flag) {
  return call("MPI_Test_cancelled", On::none(), [&] {
    capi::requireArg(status, "status");
    capi::requireArg(flag, "flag");
    *flag = status->onesided_cancelled != 0 ? 1 : 0;
  });
}

int MPI_Status_set_cancelled(MPI_Status* status, int flag) {
  return call("MPI_Status_set_cancelled", On::none(), [&] {
    capi::requireArg(status, "status");
    status->onesided_cancelled = flag != 0 ? 1 : 0;
  });
}

int MPI_Buffer_attach(void* buffer, int size) {
  return call("MPI_Buffer_attach", On::none(), [&] {
    capi::requireInit();
    auto& s = capi::state();
    if (s.bsendAttached) {
      throw onesided::Error(MPI_ERR_BUFFER, "a buffer of " + std::to_string(s.bsendSize) +
                                                " bytes is attached already (detach it first)");
    }
    if (size < 0)
      throw onesided::Error(MPI_ERR_ARG, "size " + std::to_string(size) + " is negative");
    if (buffer == nullptr && size > 0) throw onesided::Error(MPI_ERR_BUFFER, "buffer is NULL");
    s.bsendBuffer = buffer;
    s.bsendSize = size;
    s.bsendAttached = true;
  });
}

int MPI_Buffer_detach(void* buffer_addr, int* size) {
  return call("MPI_Buffer_detach", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(buffer_addr, "buffer_addr");
    capi::requireArg(size, "size");
    auto& s = capi::state();
    capi::drainBufferedSends();
    *static_cast<void**>(buffer_addr) = s.bsendAttached ? s.bsendBuffer : nullptr;
    *size = s.bsendAttached ? s.bsendSize : 0;
    s.bsendBuffer = nullptr;
    s.bsendSize = 0;
    s.bsendAttached = false;
  });
}

}  // extern "C"
