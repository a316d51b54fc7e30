// SPDX-License-Identifier: BSD-3-Clause
// User-defined reduction operations (MPI-3.1 §5.9.5: MPI_Op_create, MPI_Op_free,
// MPI_Op_commutative) and MPI_Reduce_local. A user operation is a C function the collectives
// call with the datatype handle the program passed; RMA operations refuse it (§11.3.4 allows
// predefined operations only), naming it as user-defined.
#include <string>
#include <utility>

#include "capi/state.hpp"
#include "onesided/collectives.hpp"

namespace onesided::capi {

coll::Reduction reduction(MPI_Op o, MPI_Datatype datatype) {
  if (o >= MPI_MAX && o <= MPI_MAXLOC) return static_cast<Op>(o);
  if (o == MPI_REPLACE || o == MPI_NO_OP) {
    throw Error(MPI_ERR_OP, std::string(opName(o)) + " is only for accumulate operations");
  }
  const UserOpEntry* e = userOp(o);
  if (e == nullptr) throwBadOp(o);
  coll::UserOp u;
  u.commutative = e->commutative;
  u.combine = [fn = e->fn, datatype](const void* in, void* inout, int count) {
    MPI_Datatype d = datatype;
    fn(const_cast<void*>(in), inout, &count, &d);
  };
  return coll::Reduction(std::move(u));
}

}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return call("MPI_Op_create", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(reinterpret_cast<const void*>(user_fn), "user_fn");
    capi::requireArg(op, "op");
    auto& ops = capi::state().userOps;
    auto e = std::make_unique<capi::UserOpEntry>();
    e->fn = user_fn;
    e->commutative = commute != 0;
    ops.push_back(std::move(e));
    *op = capi::kFirstUserOp + static_cast<MPI_Op>(ops.size() - 1);
  });
}

int MPI_Op_free(MPI_Op* op) {
  return call("MPI_Op_free", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(op, "op");
    if (*op > MPI_OP_NULL && *op < onesided::kNumOps) {
      throw onesided::Error(MPI_ERR_OP, std::string("the predefined operation ") +
                                            onesided::opName(*op) + " cannot be freed");
    }
    if (capi::userOp(*op) == nullptr) capi::throwBadOp(*op);
    capi::state().userOps[static_cast<std::size_t>(*op - capi::kFirstUserOp)].reset();
    *op = MPI_OP_NULL;
  });
}

int MPI_Op_commutative(MPI_Op op, int* commute) {
  return call("MPI_Op_commutative", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(commute, "commute");
    if (op > MPI_OP_NULL && op < onesided::kNumOps) {
      *commute = 1;  // every predefined operation commutes
      return;
    }
    const capi::UserOpEntry* e = capi::userOp(op);
    if (e == nullptr) capi::throwBadOp(op);
    *commute = e->commutative ? 1 : 0;
  });
}

int MPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op) {
  return call("MPI_Reduce_local", On::none(), [&] {
    capi::requireInit();
    onesided::coll::reduceLocal(inbuf, inoutbuf, count, &capi::datatype(datatype),
                                capi::reduction(op, datatype));
  });
}

}  // extern "C"
