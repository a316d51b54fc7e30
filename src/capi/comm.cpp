// SPDX-License-Identifier: BSD-3-Clause
// Communicators and groups (MPI-3.1 chapter 6). Handles index growable tables and are never
// reused, so a freed handle stays an error of its class.
#include <algorithm>
#include <cstring>

#include "capi/attr.hpp"
#include "capi/state.hpp"
#include "collectives/channel.hpp"

namespace onesided::capi {

MPI_Group addGroup(Group g) {
  auto& groups = state().groups;
  groups.push_back(std::make_unique<Group>(std::move(g)));
  return static_cast<MPI_Group>(groups.size() - 1);
}

MPI_Comm addInter(std::unique_ptr<coll::Inter> ic, MPI_Errhandler eh) {
  if (!ic) return MPI_COMM_NULL;
  auto& comms = state().comms;
  CommEntry e;
  e.comm = &ic->local();
  e.inter = std::move(ic);
  e.errhandler = eh;
  comms.push_back(std::move(e));
  return static_cast<MPI_Comm>(comms.size() - 1);
}

MPI_Comm addComm(std::unique_ptr<Comm> c, MPI_Errhandler eh) {
  if (!c) return MPI_COMM_NULL;
  auto& comms = state().comms;
  CommEntry e;
  e.comm = c.get();
  e.owned = std::move(c);
  e.errhandler = eh;  // MPI-3.1 §8.3.1: a new communicator inherits its parent's handler
  comms.push_back(std::move(e));
  return static_cast<MPI_Comm>(comms.size() - 1);
}

namespace {

void checkCountArg(int n, const char* what) {
  if (n < 0) throw Error(MPI_ERR_ARG, std::string(what) + " " + std::to_string(n) + " is negative");
}

std::span<const int> ints(const int* p, int n, const char* what) {
  checkCountArg(n, "n");
  if (n > 0) requireArg(p, what);
  return {p, static_cast<std::size_t>(n)};
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;
using onesided::Group;

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return call("MPI_Comm_dup", On::comm(comm), [&] {
    capi::collComm(comm);  // its nonblocking collectives first
    auto& e = capi::commEntry(comm);
    const onesided::detail::Entry entry(e.comm->channel());  // counts the call if a check fails
    capi::requireArg(newcomm, "newcomm");
    const MPI_Comm c = e.inter ? capi::addInter(onesided::coll::interDup(*e.inter), e.errhandler)
                               : capi::addComm(e.comm->dup(), e.errhandler);
    capi::state().comms[static_cast<std::size_t>(c)].topo =
        capi::commEntry(comm).topo;  // MPI-3.1 §7.4: a duplicate keeps the topology
    // MPI-3.1 §6.7.2: the attributes' copy callbacks. When one fails the call does, and the new
    // communicator is dropped unseen (freeing it would take the other ranks).
    *newcomm = MPI_COMM_NULL;
    capi::copyAttrs(capi::AttrKind::kComm, comm, c);
    capi::commEntry(c).hints = capi::commEntry(comm).hints;  // §6.4.2: hints are duplicated
    *newcomm = c;
  });
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  return call("MPI_Comm_idup", On::comm(comm), [&] {
    auto& e = capi::commEntry(comm);
    capi::requireArg(newcomm, "newcomm");
    capi::requireArg(request, "request");
    // The handle now, the communicator when the operation completes (MPI-3.1 §6.4.2).
    onesided::Comm& parent = *e.comm;  // (`e` moves with the table below)
    auto& comms = capi::state().comms;
    capi::CommEntry pending;
    pending.errhandler = e.errhandler;
    pending.pending = true;
    comms.push_back(std::move(pending));
    const auto made = static_cast<MPI_Comm>(comms.size() - 1);
    std::shared_ptr<onesided::coll::AsyncOp> op =
        capi::asyncQueue(comm).post([&parent, comm, made] {
          const onesided::detail::Entry entry(parent.channel());
          std::unique_ptr<onesided::Comm> dup = parent.dup();
          capi::CommEntry& out = capi::state().comms[static_cast<std::size_t>(made)];
          out.comm = dup.get();
          out.owned = std::move(dup);
          out.pending = false;
          capi::copyAttrs(capi::AttrKind::kComm, comm, made);
        });
    *newcomm = made;
    *request = capi::addCollRequest(comm, std::move(op));
  });
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return call("MPI_Comm_split", On::comm(comm), [&] {
    capi::collComm(comm);  // its nonblocking collectives first
    auto& e = capi::commEntry(comm);
    const onesided::detail::Entry entry(e.comm->channel());  // counts the call if a check fails
    capi::requireArg(newcomm, "newcomm");
    if (e.inter) {
      *newcomm = capi::addInter(onesided::coll::interSplit(*e.inter, color, key), e.errhandler);
      return;
    }
    *newcomm = capi::addComm(e.comm->split(color, key), e.errhandler);
  });
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return call("MPI_Comm_split_type", On::comm(comm), [&] {
    capi::requireIntra(comm, "MPI_Comm_split_type");
    capi::collComm(comm);  // its nonblocking collectives first
    auto& e = capi::commEntry(comm);
    const onesided::detail::Entry entry(e.comm->channel());  // counts the call if a check fails
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) {
      throw onesided::Error(MPI_ERR_ARG, "split_type " + std::to_string(split_type) +
                                             " is neither MPI_COMM_TYPE_SHARED (" +
                                             std::to_string(MPI_COMM_TYPE_SHARED) +
                                             ") nor MPI_UNDEFINED");
    }
    if (info != MPI_INFO_NULL) capi::infoEntry(info);  // no key of it is used
    capi::requireArg(newcomm, "newcomm");
    *newcomm = capi::addComm(
        split_type == MPI_UNDEFINED ? e.comm->split(MPI_UNDEFINED, key) : e.comm->splitShared(key),
        e.errhandler);
  });
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return call("MPI_Comm_create", On::comm(comm), [&] {
    capi::requireIntra(comm,
                       "MPI_Comm_create here (onesided does not create from an intercommunicator)");
    capi::collComm(comm);  // its nonblocking collectives first
    auto& e = capi::commEntry(comm);
    const onesided::detail::Entry entry(e.comm->channel());  // counts the call if a check fails
    const Group& g = capi::group(group);
    capi::requireArg(newcomm, "newcomm");
    *newcomm = capi::addComm(e.comm->create(g), e.errhandler);
  });
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return call("MPI_Comm_create_group", On::comm(comm), [&] {
    capi::requireIntra(comm, "MPI_Comm_create_group");
    auto& e = capi::commEntry(comm);
    const Group& g = capi::group(group);
    capi::requireArg(newcomm, "newcomm");
    if (tag < 0) throw onesided::Error(MPI_ERR_TAG, "tag " + std::to_string(tag) + " is negative");
    // Only the group's members call it: the parent's channel is not used, so nothing waits
    // for its nonblocking collectives.
    *newcomm = capi::addComm(e.comm->createGroup(g, tag), e.errhandler);
  });
}

int MPI_Comm_free(MPI_Comm* comm) {
  return call("MPI_Comm_free", On::comm(comm != nullptr ? *comm : MPI_COMM_NULL), [&] {
    capi::requireArg(comm, "comm");
    capi::collComm(*comm);  // MPI-3.1 §6.4.3: its pending operations complete first
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
      throw onesided::Error(
          MPI_ERR_COMM, std::string(*comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF") +
                            " cannot be freed");
    }
    // MPI-3.1 §6.7.2: the attributes' delete callbacks run first; one that fails fails the call.
    capi::deleteAttrs(capi::AttrKind::kComm, *comm);
    auto& e = capi::commEntry(*comm);
    // A window created over it still uses it (MPI-3.1 §6.4.3: freeing marks it for deallocation).
    auto& s = capi::state();
    bool used = false;
    for (auto& w : s.wins) {
      if (w && w->win && &w->win->comm() == e.comm) used = true;
    }
    e.async.reset();
    e.comm->free(!used);
    if (used) s.retiredComms.push_back(std::move(e.owned));
    e.owned.reset();
    e.inter.reset();
    e.topo.reset();
    e.comm = nullptr;
    *comm = MPI_COMM_NULL;
  });
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  return call("MPI_Comm_compare", On::comm(comm1), [&] {
    auto& a = capi::comm(comm1);
    auto& b = capi::comm(comm2);
    capi::requireArg(result, "result");
    if (comm1 == comm2) {
      *result = MPI_IDENT;
      return;
    }
    const onesided::coll::Inter* ia = capi::interOf(comm1);
    const onesided::coll::Inter* ib = capi::interOf(comm2);
    if ((ia == nullptr) != (ib == nullptr)) {
      *result = MPI_UNEQUAL;
      return;
    }
    auto c = Group::compare(a.group(), b.group());
    if (ia != nullptr) {  // MPI-3.1 §6.4.1: both groups count, the less alike decides
      const auto r = Group::compare(Group(ia->remote()), Group(ib->remote()));
      c = std::max(c, r);
    }
    *result = c == onesided::Compare::kIdent ? MPI_CONGRUENT : static_cast<int>(c);
  });
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  return call("MPI_Comm_group", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    capi::requireArg(group, "group");
    *group = capi::addGroup(c.group());
  });
}

int MPI_Group_size(MPI_Group group, int* size) {
  return call("MPI_Group_size", On::none(), [&] {
    auto& g = capi::group(group);
    capi::requireArg(size, "size");
    *size = g.size();
  });
}

int MPI_Group_rank(MPI_Group group, int* rank) {
  return call("MPI_Group_rank", On::none(), [&] {
    auto& g = capi::group(group);
    capi::requireArg(rank, "rank");
    const int r = g.rankOf(capi::context().rank());
    *rank = r < 0 ? MPI_UNDEFINED : r;
  });
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return call("MPI_Group_incl", On::none(), [&] {
    auto& g = capi::group(group);
    auto r = capi::ints(ranks, n, "ranks");
    capi::requireArg(newgroup, "newgroup");
    *newgroup = capi::addGroup(g.incl(r));
  });
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return call("MPI_Group_excl", On::none(), [&] {
    auto& g = capi::group(group);
    auto r = capi::ints(ranks, n, "ranks");
    capi::requireArg(newgroup, "newgroup");
    *newgroup = capi::addGroup(g.excl(r));
  });
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return call("MPI_Group_range_incl", On::none(), [&] {
    auto& g = capi::group(group);
    capi::checkCountArg(n, "n");
    if (n > 0) capi::requireArg(ranges, "ranges");
    capi::requireArg(newgroup, "newgroup");
    std::span<const int> t(n > 0 ? &ranges[0][0] : nullptr, static_cast<std::size_t>(n) * 3);
    *newgroup = capi::addGroup(g.rangeIncl(t));
  });
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return call("MPI_Group_range_excl", On::none(), [&] {
    auto& g = capi::group(group);
    capi::checkCountArg(n, "n");
    if (n > 0) capi::requireArg(ranges, "ranges");
    capi::requireArg(newgroup, "newgroup");
    std::span<const int> t(n > 0 ? &ranges[0][0] : nullptr, static_cast<std::size_t>(n) * 3);
    *newgroup = capi::addGroup(g.rangeExcl(t));
  });
}

int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return call("MPI_Group_union", On::none(), [&] {
    auto& a = capi::group(group1);
    auto& b = capi::group(group2);
    capi::requireArg(newgroup, "newgroup");
    *newgroup = capi::addGroup(Group::unite(a, b));
  });
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return call("MPI_Group_intersection", On::none(), [&] {
    auto& a = capi::group(group1);
    auto& b = capi::group(group2);
    capi::requireArg(newgroup, "newgroup");
    *newgroup = capi::addGroup(Group::intersect(a, b));
  });
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return call("MPI_Group_difference", On::none(), [&] {
    auto& a = capi::group(group1);
    auto& b = capi::group(group2);
    capi::requireArg(newgroup, "newgroup");
    *newgroup = capi::addGroup(Group::difference(a, b));
  });
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[]) {
  return call("MPI_Group_translate_ranks", On::none(), [&] {
    auto& a = capi::group(group1);
    auto& b = capi::group(group2);
    auto r = capi::ints(ranks1, n, "ranks1");
    if (n > 0) capi::requireArg(ranks2, "ranks2");
    std::vector<int> world(r.size(), -1);  // -1: MPI_PROC_NULL, never a world rank
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (r[i] == MPI_PROC_NULL) continue;
      if (r[i] < 0 || r[i] >= a.size()) {
        throw onesided::Error(
            MPI_ERR_RANK, "ranks1[" + std::to_string(i) + "] = " + std::to_string(r[i]) +
                              " is not a rank of group1 (size " + std::to_string(a.size()) + ")");
      }
      world[i] = a.worldRank(r[i]);
    }
    std::vector<int> out = b.ranksOf(world);
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (r[i] == MPI_PROC_NULL) {
        out[i] = MPI_PROC_NULL;
      } else if (out[i] < 0) {
        out[i] = MPI_UNDEFINED;
      }
    }
    if (!out.empty()) std::memcpy(ranks2, out.data(), out.size() * sizeof(int));
  });
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  return call("MPI_Group_compare", On::none(), [&] {
    auto& a = capi::group(group1);
    auto& b = capi::group(group2);
    capi::requireArg(result, "result");
    *result = static_cast<int>(Group::compare(a, b));
  });
}

int MPI_Group_free(MPI_Group* group) {
  return call("MPI_Group_free", On::none(), [&] {
    capi::requireArg(group, "group");
    capi::group(*group);
    if (*group == MPI_GROUP_EMPTY) {
      throw onesided::Error(MPI_ERR_GROUP, "MPI_GROUP_EMPTY cannot be freed");
    }
    capi::state().groups[static_cast<std::size_t>(*group)].reset();
    *group = MPI_GROUP_NULL;
  });
}

}  // extern "C"
