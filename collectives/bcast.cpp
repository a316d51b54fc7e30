// SPDX-License-Identifier: BSD-3-Clause
// MPI_Barrier and MPI_Bcast. The barrier is the communicator's dissemination barrier (one-sided
// writes of an epoch counter, window/sync). Bcast: the root writes the packed buffer into every
// member's scratch (linear), or down a binomial tree (each member forwards what it received to
// its children), which is the default beyond two ranks since the root's work drops from p - 1
// copies to log2 p; except for large buffers on one node, where linear lets every member copy
// straight out of the root's buffer (shared pages, cross-memory attach) at once.
#include "collectives/common.hpp"

namespace onesided::coll {
using namespace detail;

namespace {
/// Linear from this size on one node of up to kLinearUpTo ranks: the members read the root's
/// buffer by rendezvous, each one copy and all at the same time, where the tree's inner members
/// copy what they forward once more. 4 ranks on 2 cores, us, tree / linear: 8 KiB 2.1 / 2.4,
/// 32 KiB 5.5-11.9 / 7.2-8.7, 128 KiB 27-29 / 11.3-12.9, 512 KiB 87-88 / 39-48; 8 ranks
/// 128 KiB 48-61 / 33-46, 512 KiB 168-288 / 136-197. (A root that cannot expose its buffer,
/// ONESIDED_COLL_SHARE=never, copies into every member's ring: 4 ranks 128 KiB 23-50 / 30-37,
/// 512 KiB 101-154 / 158-178.)
constexpr std::size_t kBcastLinearFrom = std::size_t{32} << 10;

bool bcastTree(Comm& comm, std::size_t bytes) {
  const int p = comm.size();
  const bool linearLarge = p <= kLinearUpTo && comm.channel().oneNode();
  return useTree(forcedAlg(comm), p, bytes, linearLarge ? kBcastLinearFrom : SIZE_MAX);
}
}  // namespace

void barrier(Comm& comm) { comm.barrier(); }

void bcast(Comm& comm, void* buf, int count, const Datatype* type, int root) {
  onesided::detail::Collective guard(comm.channel());
  checkRoot(comm, root);
  checkNotInPlace(buf, "buffer", nullptr);
  checkCount(count, "count");
  const Datatype& t = checkType(type, "datatype");
  const int p = comm.size();
  if (p == 1) return;
  const Stream s{buf, static_cast<std::size_t>(count), &t};
  Failure f;
  if (bcastTree(comm, bytesOf(s.count, t))) {
    bcastStream(comm, s, root, f);
  } else if (comm.rank() == root) {
    SendList sends;
    for (int d = 1; d < p; ++d) sends.emplace_back((root + d) % p, s, 0);
    // Every byte of the buffer is send data: the pages at its ends may be shared too.
    f.run(comm.channel(), sends, {}, {}, wholeOf(s));
  } else {
    RecvOp r{root, s, nullptr};
    f.run(comm.channel(), {}, {&r, 1});
  }
  f.rethrow();
}

}  // namespace onesided::coll
