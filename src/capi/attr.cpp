// SPDX-License-Identifier: BSD-3-Clause
// Attribute caching (MPI-3.1 §6.7): keyvals, the attributes cached on communicators, windows and
// datatypes, their copy and delete callbacks, and the predefined keys (MPI_TAG_UB ... on every
// communicator, MPI_WIN_BASE ... on windows).
//
// Keyvals are handles counting up from MPI_KEYVAL_INVALID + 1, never reused, each of one kind.
// A keyval freed while attributes use it loses its handle (MPI_ERR_KEYVAL) but stays, with its
// callbacks, until the last of them is deleted. Attributes are kept per object handle, in the
// order they were set (communicator, window and derived-type handles are never reused either).
// Callbacks may call MPI: nothing here holds a reference into the tables across one.
#include "capi/attr.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "capi/state.hpp"

namespace onesided::capi {
namespace {

// Handles are ints, so the callbacks of the three kinds (and MPI-1's) have one C type.
using CopyFn = MPI_Comm_copy_attr_function;
using DeleteFn = MPI_Comm_delete_attr_function;
static_assert(std::is_same_v<CopyFn, MPI_Win_copy_attr_function> &&
              std::is_same_v<CopyFn, MPI_Type_copy_attr_function> &&
              std::is_same_v<CopyFn, MPI_Copy_function>);
static_assert(std::is_same_v<DeleteFn, MPI_Win_delete_attr_function> &&
              std::is_same_v<DeleteFn, MPI_Type_delete_attr_function> &&
              std::is_same_v<DeleteFn, MPI_Delete_function>);

constexpr int kTagUb = INT_MAX;  // the largest tag (p2p.cpp checks tags against it)
constexpr int kClassSpan = 64;   // an error code is its class + 64 * n (errors.cpp)

struct Keyval {
  AttrKind kind = AttrKind::kComm;
  CopyFn* copy = nullptr;   // nullptr: copies nothing
  DeleteFn* del = nullptr;  // nullptr: does nothing
  void* extra = nullptr;
  bool freed = false;  // MPI_*_free_keyval: the handle is gone, the callbacks stay while used
  int uses = 0;        // attributes cached with it
};

struct Attr {
  int keyval = 0;
  void* value = nullptr;
};

struct Attrs {
  std::unordered_map<int, Keyval> keyvals;
  int nextKeyval = MPI_KEYVAL_INVALID + 1;
  // By kind, then by object handle: the object's attributes in the order they were set.
  std::array<std::unordered_map<int, std::vector<Attr>>, 3> objects;
};

// Made when the library loads and never destroyed, like State (callbacks must not run from a
// static destructor).
Attrs* const gAttrs = new Attrs;

std::unordered_map<int, std::vector<Attr>>& objects(AttrKind kind) {
  return gAttrs->objects[static_cast<std::size_t>(kind)];
}

const char* kindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kComm:
      return "communicator";
    case AttrKind::kWin:
      return "window";
    case AttrKind::kType:
      return "datatype";
  }
  return "?";
}

bool predefinedCommKey(int keyval) {
  return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
         keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_UNIVERSE_SIZE ||
         keyval == MPI_LASTUSEDCODE || keyval == MPI_APPNUM;
}

bool predefinedWinKey(int keyval) {
  return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
         keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

/// Checks the object handle of `kind` (its error class when it is not a live one).
void checkObject(AttrKind kind, int obj) {
  switch (kind) {
    case AttrKind::kComm:
      commEntry(obj);
      break;
    case AttrKind::kWin:
      winEntry(obj);
      break;
    case AttrKind::kType:
      requireInit();
      datatype(obj);
      break;
  }
}

/// A live keyval of `kind` that the program may use (not freed); MPI_ERR_KEYVAL otherwise.
Keyval& userKeyval(AttrKind kind, int keyval, const char* use) {
  if (predefinedCommKey(keyval) || predefinedWinKey(keyval)) {
    const char* owner = predefinedCommKey(keyval) ? "communicator" : "window";
    if (std::strcmp(use, "read") == 0) {
      throw Error(MPI_ERR_KEYVAL, "keyval " + std::to_string(keyval) + " is a predefined " + owner +
                                      " key, not a " + kindName(kind) + " one");
    }
    throw Error(MPI_ERR_KEYVAL, "keyval " + std::to_string(keyval) + " is a predefined " + owner +
                                    " key: it cannot be " + use);
  }
  if (keyval == MPI_KEYVAL_INVALID) throw Error(MPI_ERR_KEYVAL, "keyval is MPI_KEYVAL_INVALID");
  auto it = gAttrs->keyvals.find(keyval);
  if (it == gAttrs->keyvals.end() || it->second.freed) {
    throw Error(MPI_ERR_KEYVAL,
                "keyval " + std::to_string(keyval) + " is not a keyval (never created, or freed)");
  }
  if (it->second.kind != kind) {
    throw Error(MPI_ERR_KEYVAL, "keyval " + std::to_string(keyval) + " is a " +
                                    kindName(it->second.kind) + " keyval, not a " + kindName(kind) +
                                    " one");
  }
  return it->second;
}

/// The error of a callback that returned `rc`: its class when `rc` is a class or a code of one
/// (a callback passing on what an MPI call returned), else MPI_ERR_OTHER.
Error callbackError(const char* which, AttrKind kind, int keyval, int rc) {
  int cls = rc >= 0 ? rc % kClassSpan : MPI_ERR_OTHER;
  if (cls == MPI_SUCCESS || cls > MPI_ERR_LASTCODE ||
      (cls != MPI_ERR_UNKNOWN && std::strcmp(errorClassName(cls), "MPI_ERR_UNKNOWN") == 0)) {
    cls = MPI_ERR_OTHER;
  }
  return {cls, std::string("the ") + which + " callback of " + kindName(kind) + " keyval " +
                   std::to_string(keyval) + " returned error code " + std::to_string(rc)};
}

/// One use of `keyval` ends: a freed keyval goes with its last use.
void release(int keyval) {
  auto it = gAttrs->keyvals.find(keyval);
  if (it != gAttrs->keyvals.end() && --it->second.uses == 0 && it->second.freed) {
    gAttrs->keyvals.erase(it);
  }
}

/// Runs the delete callback of attribute `at` of `obj` (already out of its list); the keyval's
/// use ends when it succeeds.
int runDelete(int obj, const Attr& at) {
  auto it = gAttrs->keyvals.find(at.keyval);
  if (it == gAttrs->keyvals.end()) return MPI_SUCCESS;
  DeleteFn* del = it->second.del;
  void* extra = it->second.extra;
  const int rc = del != nullptr ? del(obj, at.keyval, at.value, extra) : MPI_SUCCESS;
  if (rc == MPI_SUCCESS) release(at.keyval);
  return rc;
}

/// Takes the attribute last set on `obj` out of its list; false when there is none.
bool popLast(AttrKind kind, int obj, Attr& out) {
  auto& objs = objects(kind);
  auto it = objs.find(obj);
  if (it == objs.end()) return false;
  if (it->second.empty()) {
    objs.erase(it);
    return false;
  }
  out = it->second.back();
  it->second.pop_back();
  return true;
}

/// Deletes every attribute of `obj`, last set first, whatever the callbacks return; the first
/// error is kept in `first`.
void deleteAllOf(AttrKind kind, int obj, std::optional<Error>& first) {
  Attr at;
  while (popLast(kind, obj, at)) {
    const int rc = runDelete(obj, at);
    if (rc != MPI_SUCCESS) {
      release(at.keyval);
      if (!first) first = callbackError("delete", kind, at.keyval, rc);
    }
  }
}

std::vector<Attr>::iterator findAttr(std::vector<Attr>& list, int keyval) {
  return std::find_if(list.begin(), list.end(), [&](const Attr& a) { return a.keyval == keyval; });
}

void createKeyval(AttrKind kind, CopyFn* copy, DeleteFn* del, int* keyval, void* extra) {
  requireInit();
  requireArg(keyval, "keyval");
  if (gAttrs->nextKeyval == INT_MAX) throw Error(MPI_ERR_INTERN, "out of keyval handles");
  const int h = gAttrs->nextKeyval++;
  Keyval k;
  k.kind = kind;
  k.copy = copy;
  k.del = del;
  k.extra = extra;
  gAttrs->keyvals.emplace(h, k);
  *keyval = h;
}

void freeKeyval(AttrKind kind, int* keyval) {
  requireInit();
  requireArg(keyval, "keyval");
  Keyval& k = userKeyval(kind, *keyval, "freed");
  k.freed = true;
  if (k.uses == 0) gAttrs->keyvals.erase(*keyval);
  *keyval = MPI_KEYVAL_INVALID;
}

void setAttr(AttrKind kind, int obj, int keyval, void* value) {
  checkObject(kind, obj);
  userKeyval(kind, keyval, "set");
  auto& list = objects(kind)[obj];
  auto old = findAttr(list, keyval);
  if (old == list.end()) {
    list.push_back({keyval, value});
    ++gAttrs->keyvals[keyval].uses;
    return;
  }
  // A value there already: its delete callback runs first, and a failure leaves it in place
  // (MPI-3.1 §6.7.2). The keyval's use carries over to the new value.
  const Attr prev = *old;
  auto it = gAttrs->keyvals.find(keyval);
  const int rc = it->second.del != nullptr
                     ? it->second.del(obj, keyval, prev.value, it->second.extra)
                     : MPI_SUCCESS;
  if (rc != MPI_SUCCESS) throw callbackError("delete", kind, keyval, rc);
  auto& now = objects(kind)[obj];  // the callback may have changed the tables
  if (auto o = findAttr(now, keyval); o != now.end()) now.erase(o);
  now.push_back({keyval, value});
}

void deleteAttr(AttrKind kind, int obj, int keyval) {
  checkObject(kind, obj);
  userKeyval(kind, keyval, "deleted");
  auto& objs = objects(kind);
  auto it = objs.find(obj);
  if (it == objs.end()) return;  // nothing cached: nothing to do (as MPICH)
  auto pos = findAttr(it->second, keyval);
  if (pos == it->second.end()) return;
  const Attr at = *pos;
  it->second.erase(pos);
  const int rc = runDelete(obj, at);
  if (rc != MPI_SUCCESS) {
    // The attribute stays, where it was in the order of setting as far as it matters.
    objects(kind)[obj].push_back(at);
    throw callbackError("delete", kind, keyval, rc);
  }
}

/// Whether the user attribute `keyval` is on `obj`; its value in *value.
void getUserAttr(AttrKind kind, int obj, int keyval, void* value, int* flag) {
  userKeyval(kind, keyval, "read");
  *flag = 0;
  auto& objs = objects(kind);
  auto it = objs.find(obj);
  if (it == objs.end()) return;
  auto pos = findAttr(it->second, keyval);
  if (pos == it->second.end()) return;
  std::memcpy(value, &pos->value, sizeof pos->value);
  *flag = 1;
}

int predefinedCommValue(int keyval) {
  switch (keyval) {
    case MPI_TAG_UB:
      return kTagUb;
    case MPI_HOST:
      return MPI_PROC_NULL;
    case MPI_IO:
      return MPI_ANY_SOURCE;  // every rank can do I/O
    case MPI_WTIME_IS_GLOBAL:
      return 0;
    case MPI_UNIVERSE_SIZE:
      return context().size();
    case MPI_LASTUSEDCODE:
      return lastUsedCode();
    default:  // MPI_APPNUM
      return 0;
  }
}

void getCommAttr(MPI_Comm comm, int keyval, void* value, int* flag) {
  capi::comm(comm);
  requireArg(value, "attribute_val");
  requireArg(flag, "flag");
  if (!predefinedCommKey(keyval)) {
    getUserAttr(AttrKind::kComm, comm, keyval, value, flag);
    return;
  }
  // The values live as long as the process: the standard hands out a pointer to them.
  static int values[7];
  int& slot = values[(keyval - MPI_TAG_UB) / 2];
  slot = predefinedCommValue(keyval);
  int* p = &slot;
  std::memcpy(value, &p, sizeof p);
  *flag = 1;
}

void getWinAttr(MPI_Win win, int keyval, void* attribute_val, int* flag) {
  auto& e = winEntry(win);
  requireArg(attribute_val, "attribute_val");
  requireArg(flag, "flag");
  if (!predefinedWinKey(keyval)) {
    getUserAttr(AttrKind::kWin, win, keyval, attribute_val, flag);
    return;
  }
  // MPI-3.1 §11.2.6: attribute_val receives a pointer to the value (the base itself for
  // MPI_WIN_BASE).
  void* value = nullptr;
  switch (keyval) {
    case MPI_WIN_BASE:
      value = e.win->base();
      break;
    case MPI_WIN_SIZE:
      value = &e.sizeAttr;
      break;
    case MPI_WIN_DISP_UNIT:
      value = &e.dispUnitAttr;
      break;
    case MPI_WIN_CREATE_FLAVOR:
      value = &e.flavorAttr;
      break;
    default:  // MPI_WIN_MODEL
      value = &e.modelAttr;
      break;
  }
  std::memcpy(attribute_val, &value, sizeof value);
  *flag = 1;
}

void getTypeAttr(MPI_Datatype type, int keyval, void* value, int* flag) {
  checkObject(AttrKind::kType, type);
  requireArg(value, "attribute_val");
  requireArg(flag, "flag");
  getUserAttr(AttrKind::kType, type, keyval, value, flag);
}

}  // namespace

void copyAttrs(AttrKind kind, int from, int to) {
  auto& objs = objects(kind);
  auto it = objs.find(from);
  if (it == objs.end()) return;
  // A copy: the callbacks may change the tables. In the order the keyvals were created (their
  // handles count up).
  std::vector<Attr> src = it->second;
  std::sort(src.begin(), src.end(),
            [](const Attr& a, const Attr& b) { return a.keyval < b.keyval; });
  for (const Attr& at : src) {
    auto k = gAttrs->keyvals.find(at.keyval);
    if (k == gAttrs->keyvals.end() || k->second.copy == nullptr) continue;
    CopyFn* copy = k->second.copy;
    void* out = nullptr;
    int flag = 0;
    const int rc = copy(from, at.keyval, k->second.extra, at.value, &out, &flag);
    if (rc != MPI_SUCCESS) {
      std::optional<Error> ignored;  // the copy's error is the one to report
      deleteAllOf(kind, to, ignored);
      throw callbackError("copy", kind, at.keyval, rc);
    }
    if (flag == 0) continue;
    auto& list = objects(kind)[to];
    if (auto o = findAttr(list, at.keyval); o != list.end()) {
      o->value = out;  // a callback set it meanwhile
    } else {
      list.push_back({at.keyval, out});
      ++gAttrs->keyvals[at.keyval].uses;
    }
  }
}

void deleteAttrs(AttrKind kind, int obj) {
  Attr at;
  while (popLast(kind, obj, at)) {
    const int rc = runDelete(obj, at);
    if (rc != MPI_SUCCESS) {
      objects(kind)[obj].push_back(at);
      throw callbackError("delete", kind, at.keyval, rc);
    }
  }
}

std::optional<Error> finalizeAttrs() {
  std::optional<Error> first;
  deleteAllOf(AttrKind::kComm, MPI_COMM_SELF, first);
  deleteAllOf(AttrKind::kComm, MPI_COMM_WORLD, first);
  // The rest go without their callbacks (MPI asks for none), and the keyvals with them.
  for (auto& o : gAttrs->objects) o.clear();
  gAttrs->keyvals.clear();
  return first;
}

}  // namespace onesided::capi

using onesided::capi::AttrKind;
using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

// ---- the predefined callbacks ----

int onesided_null_copy_fn(MPI_Comm /*oldcomm*/, int /*keyval*/, void* /*extra_state*/,
                          void* /*attribute_val_in*/, void* /*attribute_val_out*/, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

int onesided_dup_fn(MPI_Comm /*oldcomm*/, int /*keyval*/, void* /*extra_state*/,
                    void* attribute_val_in, void* attribute_val_out, int* flag) {
  std::memcpy(attribute_val_out, &attribute_val_in, sizeof attribute_val_in);
  *flag = 1;
  return MPI_SUCCESS;
}

int onesided_null_delete_fn(MPI_Comm /*comm*/, int /*keyval*/, void* /*attribute_val*/,
                            void* /*extra_state*/) {
  return MPI_SUCCESS;
}

int onesided_comm_null_copy_fn(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out,
                               int* flag) {
  return onesided_null_copy_fn(oldcomm, keyval, extra, in, out, flag);
}
int onesided_comm_dup_fn(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out,
                         int* flag) {
  return onesided_dup_fn(oldcomm, keyval, extra, in, out, flag);
}
int onesided_comm_null_delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  return onesided_null_delete_fn(comm, keyval, value, extra);
}
int onesided_win_null_copy_fn(MPI_Win oldwin, int keyval, void* extra, void* in, void* out,
                              int* flag) {
  return onesided_null_copy_fn(oldwin, keyval, extra, in, out, flag);
}
int onesided_win_dup_fn(MPI_Win oldwin, int keyval, void* extra, void* in, void* out, int* flag) {
  return onesided_dup_fn(oldwin, keyval, extra, in, out, flag);
}
int onesided_win_null_delete_fn(MPI_Win win, int keyval, void* value, void* extra) {
  return onesided_null_delete_fn(win, keyval, value, extra);
}
int onesided_type_null_copy_fn(MPI_Datatype oldtype, int keyval, void* extra, void* in, void* out,
                               int* flag) {
  return onesided_null_copy_fn(oldtype, keyval, extra, in, out, flag);
}
int onesided_type_dup_fn(MPI_Datatype oldtype, int keyval, void* extra, void* in, void* out,
                         int* flag) {
  return onesided_dup_fn(oldtype, keyval, extra, in, out, flag);
}
int onesided_type_null_delete_fn(MPI_Datatype type, int keyval, void* value, void* extra) {
  return onesided_null_delete_fn(type, keyval, value, extra);
}

// ---- communicators ----

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval,
                           void* extra_state) {
  return call("MPI_Comm_create_keyval", On::none(), [&] {
    capi::createKeyval(AttrKind::kComm, comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval,
                       extra_state);
  });
}

int MPI_Comm_free_keyval(int* comm_keyval) {
  return call("MPI_Comm_free_keyval", On::none(),
              [&] { capi::freeKeyval(AttrKind::kComm, comm_keyval); });
}

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  return call("MPI_Comm_set_attr", On::comm(comm),
              [&] { capi::setAttr(AttrKind::kComm, comm, comm_keyval, attribute_val); });
}

int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  return call("MPI_Comm_get_attr", On::comm(comm),
              [&] { capi::getCommAttr(comm, comm_keyval, attribute_val, flag); });
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  return call("MPI_Comm_delete_attr", On::comm(comm),
              [&] { capi::deleteAttr(AttrKind::kComm, comm, comm_keyval); });
}

// ---- MPI-1's names for the same ----

int MPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                      void* extra_state) {
  return call("MPI_Keyval_create", On::none(), [&] {
    capi::createKeyval(AttrKind::kComm, copy_fn, delete_fn, keyval, extra_state);
  });
}

int MPI_Keyval_free(int* keyval) {
  return call("MPI_Keyval_free", On::none(), [&] { capi::freeKeyval(AttrKind::kComm, keyval); });
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return call("MPI_Attr_put", On::comm(comm),
              [&] { capi::setAttr(AttrKind::kComm, comm, keyval, attribute_val); });
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return call("MPI_Attr_get", On::comm(comm),
              [&] { capi::getCommAttr(comm, keyval, attribute_val, flag); });
}

int MPI_Attr_delete(MPI_Comm comm, int keyval) {
  return call("MPI_Attr_delete", On::comm(comm),
              [&] { capi::deleteAttr(AttrKind::kComm, comm, keyval); });
}

// ---- windows ----

int MPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                          MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval,
                          void* extra_state) {
  return call("MPI_Win_create_keyval", On::none(), [&] {
    capi::createKeyval(AttrKind::kWin, win_copy_attr_fn, win_delete_attr_fn, win_keyval,
                       extra_state);
  });
}

int MPI_Win_free_keyval(int* win_keyval) {
  return call("MPI_Win_free_keyval", On::none(),
              [&] { capi::freeKeyval(AttrKind::kWin, win_keyval); });
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  return call("MPI_Win_set_attr", On::win(win),
              [&] { capi::setAttr(AttrKind::kWin, win, win_keyval, attribute_val); });
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  return call("MPI_Win_get_attr", On::win(win),
              [&] { capi::getWinAttr(win, win_keyval, attribute_val, flag); });
}

int MPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  return call("MPI_Win_delete_attr", On::win(win),
              [&] { capi::deleteAttr(AttrKind::kWin, win, win_keyval); });
}

// ---- datatypes ----

int MPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                           MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval,
                           void* extra_state) {
  return call("MPI_Type_create_keyval", On::none(), [&] {
    capi::createKeyval(AttrKind::kType, type_copy_attr_fn, type_delete_attr_fn, type_keyval,
                       extra_state);
  });
}

int MPI_Type_free_keyval(int* type_keyval) {
  return call("MPI_Type_free_keyval", On::none(),
              [&] { capi::freeKeyval(AttrKind::kType, type_keyval); });
}

int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  return call("MPI_Type_set_attr", On::none(),
              [&] { capi::setAttr(AttrKind::kType, datatype, type_keyval, attribute_val); });
}

int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  return call("MPI_Type_get_attr", On::none(),
              [&] { capi::getTypeAttr(datatype, type_keyval, attribute_val, flag); });
}

int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  return call("MPI_Type_delete_attr", On::none(),
              [&] { capi::deleteAttr(AttrKind::kType, datatype, type_keyval); });
}

}  // extern "C"
