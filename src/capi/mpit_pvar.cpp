// SPDX-License-Identifier: BSD-3-Clause
// MPI_T's performance variables (MPI-3.1 §14.3.7): the process's counters (counters.hpp), each
// seen through a handle of a session. The counters and the timer are not continuous: a handle
// counts what happens while it is started (from MPI_T_pvar_start to _stop), and may be written
// or reset (the handle's own view; the process's counter goes on). The unexpected queue's
// length is a level: continuous and read-only.
#include <cstring>

#include "capi/mpit.hpp"
#include "counters.hpp"

namespace onesided::capi::mpit {

using settings::Category;

const std::vector<PvarInfo>& pvars() {
  constexpr int kCounter = MPI_T_PVAR_CLASS_COUNTER;
  constexpr int kBasic = MPI_T_VERBOSITY_TUNER_BASIC;
  constexpr int kDetail = MPI_T_VERBOSITY_TUNER_DETAIL;
  static const std::vector<PvarInfo> list = {
      {"rma_puts", kCounter, kBasic, Category::kRma, "MPI_Put and its kin issued by this process",
       false, false, false},
      {"rma_gets", kCounter, kBasic, Category::kRma, "MPI_Get and its kin issued by this process",
       false, false, false},
      {"rma_put_bytes", kCounter, kBasic, Category::kRma, "bytes put by this process", false, false,
       false},
      {"rma_get_bytes", kCounter, kBasic, Category::kRma, "bytes got by this process", false, false,
       false},
      {"rma_acc_direct", kCounter, kDetail, Category::kRma,
       "accumulates and atomics done in place with CPU atomics or under the target's lock on "
       "the load / store path",
       false, false, false},
      {"rma_acc_nic", kCounter, kDetail, Category::kRma,
       "accumulates and atomics done by atomics through the transport (NIC atomics)", false, false,
       false},
      {"rma_acc_message", kCounter, kDetail, Category::kRma,
       "accumulates and atomics sent to the target as a message (active message, local message "
       "mode)",
       false, false, false},
      {"rma_acc_lock", kCounter, kDetail, Category::kRma,
       "accumulates done as a read-modify-write through the transport under the target's lock",
       false, false, false},
      {"p2p_sends_eager", kCounter, kBasic, Category::kP2p,
       "point-to-point messages sent eagerly (through the ring, or to this rank itself)", false,
       false, false},
      {"p2p_sends_rendezvous", kCounter, kBasic, Category::kP2p,
       "point-to-point messages sent by rendezvous (larger than ONESIDED_P2P_EAGER)", false, false,
       false},
      {"p2p_send_bytes", kCounter, kBasic, Category::kP2p, "bytes of point-to-point sends", false,
       false, false},
      {"p2p_recvs", kCounter, kBasic, Category::kP2p, "point-to-point messages received", false,
       false, false},
      {"p2p_recv_bytes", kCounter, kBasic, Category::kP2p,
       "bytes of point-to-point messages received", false, false, false},
      {"p2p_unexpected", MPI_T_PVAR_CLASS_LEVEL, kBasic, Category::kP2p,
       "messages in the unexpected queue (arrived, no receive posted yet)", true, true, false},
      {"wait_sleep_time", MPI_T_PVAR_CLASS_TIMER, kDetail, Category::kRuntime,
       "seconds waits slept (ONESIDED_WAIT=adaptive sleeps once a wait has lasted 2 ms)", false,
       false, true},
  };
  return list;
}

std::uint64_t pvarValue(int i) noexcept {
  counters::Counters& c = counters::get();
  static constexpr counters::Counter counters::Counters::*kCounters[] = {
      &counters::Counters::puts,        &counters::Counters::gets,
      &counters::Counters::putBytes,    &counters::Counters::getBytes,
      &counters::Counters::accDirect,   &counters::Counters::accNic,
      &counters::Counters::accMessage,  &counters::Counters::accLock,
      &counters::Counters::sendsEager,  &counters::Counters::sendsRendezvous,
      &counters::Counters::sendBytes,   &counters::Counters::recvs,
      &counters::Counters::recvBytes,   &counters::Counters::unexpected,
      &counters::Counters::waitSleepNs,
  };
  return (c.*kCounters[i]).get();
}

namespace {

bool liveSession(const Tool& t, MPI_T_pvar_session s) {
  return s > 0 && static_cast<std::size_t>(s) < t.sessions.size() &&
         t.sessions[static_cast<std::size_t>(s)];
}

/// Handle `h` of session `s`, or null.
PvarHandle* handleOf(Tool& t, MPI_T_pvar_session s, MPI_T_pvar_handle h) {
  if (h <= 0 || static_cast<std::size_t>(h) >= t.pvarHandles.size()) return nullptr;
  PvarHandle& p = t.pvarHandles[static_cast<std::size_t>(h)];
  return p.pvar >= 0 && p.session == s ? &p : nullptr;
}

std::uint64_t valueOf(const PvarHandle& h) {
  const std::uint64_t now = pvarValue(h.pvar);
  if (pvars()[static_cast<std::size_t>(h.pvar)].continuous) return now;
  return h.accum + (h.started ? now - h.mark : 0);
}

void store(const PvarHandle& h, void* buf) {
  const std::uint64_t v = valueOf(h);
  if (pvars()[static_cast<std::size_t>(h.pvar)].seconds) {
    const double s = static_cast<double>(v) * 1e-9;
    std::memcpy(buf, &s, sizeof s);
  } else {
    const unsigned long long n = v;
    std::memcpy(buf, &n, sizeof n);
  }
}

void reset(PvarHandle& h) {
  h.accum = 0;
  h.mark = pvarValue(h.pvar);
}

/// Applies `fn` to handle `h` of session `s`, or with MPI_T_PVAR_ALL_HANDLES to each of the
/// session's handles `applies` accepts (MPI-3.1: the others are skipped, not an error).
template <class Applies, class Fn>
int forHandles(Tool& t, MPI_T_pvar_session s, MPI_T_pvar_handle h, Applies applies, Fn fn) {
  if (!liveSession(t, s)) return MPI_T_ERR_INVALID_SESSION;
  if (h == MPI_T_PVAR_ALL_HANDLES) {
    for (PvarHandle& p : t.pvarHandles) {
      if (p.pvar >= 0 && p.session == s &&
          applies(pvars()[static_cast<std::size_t>(p.pvar)]) == MPI_SUCCESS) {
        fn(p);
      }
    }
    return MPI_SUCCESS;
  }
  PvarHandle* p = handleOf(t, s, h);
  if (p == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (const int rc = applies(pvars()[static_cast<std::size_t>(p->pvar)]); rc != MPI_SUCCESS) {
    return rc;
  }
  fn(*p);
  return MPI_SUCCESS;
}

int startStops(const PvarInfo& v) {
  return v.continuous ? MPI_T_ERR_PVAR_NO_STARTSTOP : MPI_SUCCESS;
}
int writable(const PvarInfo& v) { return v.readonly ? MPI_T_ERR_PVAR_NO_WRITE : MPI_SUCCESS; }

}  // namespace
}  // namespace onesided::capi::mpit

namespace mpit = onesided::capi::mpit;

extern "C" {

int MPI_T_pvar_get_num(int* num_pvar) {
  return mpit::call([&](mpit::Tool&) {
    if (num_pvar == nullptr) return MPI_T_ERR_INVALID;
    *num_pvar = static_cast<int>(mpit::pvars().size());
    return MPI_SUCCESS;
  });
}

int MPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* readonly, int* continuous, int* atomic) {
  return mpit::call([&](mpit::Tool&) {
    const auto& list = mpit::pvars();
    if (pvar_index < 0 || static_cast<std::size_t>(pvar_index) >= list.size()) {
      return MPI_T_ERR_INVALID_INDEX;
    }
    const mpit::PvarInfo& v = list[static_cast<std::size_t>(pvar_index)];
    mpit::copyString(v.name, name, name_len);
    if (verbosity != nullptr) *verbosity = v.verbosity;
    if (var_class != nullptr) *var_class = v.varClass;
    if (datatype != nullptr) *datatype = v.seconds ? MPI_DOUBLE : MPI_UNSIGNED_LONG_LONG;
    if (enumtype != nullptr) *enumtype = MPI_T_ENUM_NULL;
    mpit::copyString(v.desc, desc, desc_len);
    if (bind != nullptr) *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly != nullptr) *readonly = v.readonly ? 1 : 0;
    if (continuous != nullptr) *continuous = v.continuous ? 1 : 0;
    // MPI_T_pvar_readreset reads and resets under one mutex, but the counters move on
    // meanwhile: not atomic in the standard's sense.
    if (atomic != nullptr) *atomic = 0;
    return MPI_SUCCESS;
  });
}

int MPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  return mpit::call([&](mpit::Tool&) {
    if (name == nullptr || pvar_index == nullptr) return MPI_T_ERR_INVALID;
    const auto& list = mpit::pvars();
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i].varClass == var_class && std::strcmp(list[i].name, name) == 0) {
        *pvar_index = static_cast<int>(i);
        return MPI_SUCCESS;
      }
    }
    return MPI_T_ERR_INVALID_NAME;
  });
}

int MPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  return mpit::call([&](mpit::Tool& t) {
    if (session == nullptr) return MPI_T_ERR_INVALID;
    t.sessions.push_back(true);
    *session = static_cast<MPI_T_pvar_session>(t.sessions.size() - 1);
    return MPI_SUCCESS;
  });
}

int MPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  return mpit::call([&](mpit::Tool& t) {
    if (session == nullptr) return MPI_T_ERR_INVALID;
    if (!mpit::liveSession(t, *session)) return MPI_T_ERR_INVALID_SESSION;
    for (mpit::PvarHandle& h : t.pvarHandles) {
      if (h.session == *session) h = {};
    }
    t.sessions[static_cast<std::size_t>(*session)] = false;
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
  });
}

int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* /*obj_handle*/,
                            MPI_T_pvar_handle* handle, int* count) {
  return mpit::call([&](mpit::Tool& t) {
    if (!mpit::liveSession(t, session)) return MPI_T_ERR_INVALID_SESSION;
    if (pvar_index < 0 || static_cast<std::size_t>(pvar_index) >= mpit::pvars().size()) {
      return MPI_T_ERR_INVALID_INDEX;
    }
    if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
    // Bound to no object: obj_handle is ignored. A continuous variable's handle is started, a
    // non-continuous one's stopped, at zero (MPI-3.1 §14.3.7.2).
    mpit::PvarHandle h;
    h.session = session;
    h.pvar = pvar_index;
    h.mark = mpit::pvarValue(pvar_index);
    h.started = mpit::pvars()[static_cast<std::size_t>(pvar_index)].continuous;
    t.pvarHandles.push_back(h);
    *handle = static_cast<MPI_T_pvar_handle>(t.pvarHandles.size() - 1);
    *count = 1;
    return MPI_SUCCESS;
  });
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  return mpit::call([&](mpit::Tool& t) {
    if (handle == nullptr) return MPI_T_ERR_INVALID;
    if (!mpit::liveSession(t, session)) return MPI_T_ERR_INVALID_SESSION;
    mpit::PvarHandle* h = mpit::handleOf(t, session, *handle);
    if (h == nullptr) return MPI_T_ERR_INVALID_HANDLE;
    *h = {};
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
  });
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return mpit::call([&](mpit::Tool& t) {
    return mpit::forHandles(t, session, handle, mpit::startStops, [](mpit::PvarHandle& h) {
      if (h.started) return;
      h.started = true;
      h.mark = mpit::pvarValue(h.pvar);
    });
  });
}

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return mpit::call([&](mpit::Tool& t) {
    return mpit::forHandles(t, session, handle, mpit::startStops, [](mpit::PvarHandle& h) {
      if (!h.started) return;
      h.accum += mpit::pvarValue(h.pvar) - h.mark;
      h.started = false;
    });
  });
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  return mpit::call([&](mpit::Tool& t) {
    if (!mpit::liveSession(t, session)) return MPI_T_ERR_INVALID_SESSION;
    mpit::PvarHandle* h = mpit::handleOf(t, session, handle);  // ALL_HANDLES: not for reads
    if (h == nullptr) return MPI_T_ERR_INVALID_HANDLE;
    if (buf == nullptr) return MPI_T_ERR_INVALID;
    mpit::store(*h, buf);
    return MPI_SUCCESS;
  });
}

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf) {
  return mpit::call([&](mpit::Tool& t) {
    if (!mpit::liveSession(t, session)) return MPI_T_ERR_INVALID_SESSION;
    mpit::PvarHandle* h = mpit::handleOf(t, session, handle);
    if (h == nullptr) return MPI_T_ERR_INVALID_HANDLE;
    const mpit::PvarInfo& v = mpit::pvars()[static_cast<std::size_t>(h->pvar)];
    if (v.readonly) return MPI_T_ERR_PVAR_NO_WRITE;
    if (buf == nullptr) return MPI_T_ERR_INVALID;
    std::uint64_t n = 0;
    if (v.seconds) {
      double s = 0;
      std::memcpy(&s, buf, sizeof s);
      n = s > 0 ? static_cast<std::uint64_t>(s * 1e9) : 0;
    } else {
      unsigned long long u = 0;
      std::memcpy(&u, buf, sizeof u);
      n = u;
    }
    h->accum = n;
    h->mark = mpit::pvarValue(h->pvar);
    return MPI_SUCCESS;
  });
}

int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return mpit::call([&](mpit::Tool& t) {
    return mpit::forHandles(t, session, handle, mpit::writable,
                            [](mpit::PvarHandle& h) { mpit::reset(h); });
  });
}

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  return mpit::call([&](mpit::Tool& t) {
    if (!mpit::liveSession(t, session)) return MPI_T_ERR_INVALID_SESSION;
    mpit::PvarHandle* h = mpit::handleOf(t, session, handle);
    if (h == nullptr) return MPI_T_ERR_INVALID_HANDLE;
    if (mpit::pvars()[static_cast<std::size_t>(h->pvar)].readonly) return MPI_T_ERR_PVAR_NO_WRITE;
    if (buf == nullptr) return MPI_T_ERR_INVALID;
    mpit::store(*h, buf);
    mpit::reset(*h);
    return MPI_SUCCESS;
  });
}

}  // extern "C"
