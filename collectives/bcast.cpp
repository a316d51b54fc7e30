// SPDX-License-Identifier: BSD-3-Clause
// MPI_Barrier and MPI_Bcast. The barrier is the communicator's dissemination barrier (one-sided
// writes of an epoch counter, window/sync). Bcast: the root writes the packed buffer into every
// member's scratch (linear), or down a binomial tree (each member forwards what it received to
// its children), which is the default beyond two ranks since the root's work drops from p - 1
// copies to log2 p.
#include "collectives/common.hpp"

namespace onesided::coll {
using namespace detail;

void barrier(Comm& comm) { comm.barrier(); }

void bcast(Comm& comm, void* buf, int count, const Datatype* type, int root) {
  onesided::detail::Collective guard(comm.channel());
  checkRoot(comm, root);
  checkCount(count, "count");
  const Datatype& t = checkType(type, "datatype");
  const int p = comm.size();
  if (p == 1) return;
  const Stream s{buf, static_cast<std::size_t>(count), &t};
  Failure f;
  if (useTree(forcedAlg(comm), p, bytesOf(s.count, t), SIZE_MAX)) {
    bcastStream(comm, s, root, f);
  } else if (comm.rank() == root) {
    SendList sends;
    for (int d = 1; d < p; ++d) sends.emplace_back((root + d) % p, s, 0);
    f.run(comm.channel(), sends, {});
  } else {
    RecvOp r{root, s, nullptr};
    f.run(comm.channel(), {}, {&r, 1});
  }
  f.rethrow();
}

}  // namespace onesided::coll
