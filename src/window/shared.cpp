// SPDX-License-Identifier: BSD-3-Clause
// Shared-memory windows: MPI_Win_allocate_shared and MPI_Win_shared_query.
//
// Rank 0 makes one segment for everybody: a memfd, mapped shared. Every other rank opens it
// through /proc/<rank 0's pid>/fd/<fd> (the permission cross-memory attach needs too), checks it
// is the same file (inode) on the same machine (boot id), and maps it: the same bytes, at an
// address of its own. This works whatever the transport (UCX, verbs, threads as ranks). Rank
// i's part starts at the sum of the sizes before it (contiguous, MPI-3.1 §11.2.3), or with
// alloc_shared_noncontig=true at a page boundary of its own (no false sharing between ranks'
// parts, and each part's pages are first touched by its owner). Each rank then registers its
// part like a create window and the usual creation allgather follows, so the transport path
// (atomics, which always go through the transport) works as for other windows; and every
// target is on the load / store path, at its part of the mapped segment.
// Before that allgather: the sizes (rank 0 needs the total), rank 0's segment (or its failure),
// and whether every rank could map it: one that cannot (another node, no permission) fails the
// creation with kErrRmaShared on every rank.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "log.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/window.hpp"
#include "transport/transport.hpp"

namespace onesided {
namespace {

constexpr std::uint64_t kPage = 4096;

struct SizeInfo {
  std::int64_t size;
  std::int64_t failClass;
};

struct SegmentInfo {
  std::uint64_t len;
  std::int64_t failClass;
  std::int64_t pid;
  std::int64_t fd;
  std::uint64_t inode;
  char bootId[40];
};

void bootId(char (&out)[40]) {
  std::memset(out, 0, sizeof out);
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(f, id);
  std::memcpy(out, id.data(), std::min(id.size(), sizeof out - 1));
}

std::string sysError(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

template <class T>
std::vector<std::byte> bytesOf(const T& v) {
  std::vector<std::byte> b(sizeof v);
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}

template <class T>
T fromBytes(const std::vector<std::byte>& b) {
  T v{};
  std::memcpy(&v, b.data(), sizeof v);
  return v;
}

}  // namespace

std::unique_ptr<Window> Window::allocateShared(Comm& comm, std::int64_t size, int dispUnit,
                                               const Error* argError, const WindowHints& hints) {
  int cls = kSuccess;
  std::string msg;
  if (argError != nullptr) {
    cls = argError->errorClass();
    msg = argError->what();
  } else if (size < 0) {
    cls = kErrSize;
    msg = "size " + std::to_string(size) + " is negative";
  } else if (dispUnit <= 0) {
    cls = kErrDisp;
    msg = "disp_unit " + std::to_string(dispUnit) + " is not positive";
  }
  std::unique_ptr<Window> w(new Window(comm, Flavor::kShared, dispUnit));
  w->hints_ = hints;
  const int me = comm.rank();
  const auto p = static_cast<std::size_t>(comm.size());

  // The layout: every rank's offset in the segment.
  auto sizes = comm.allgather(bytesOf(SizeInfo{cls == kSuccess ? size : 0, cls}));
  std::vector<std::uint64_t> offsets(p);
  std::uint64_t total = 0;
  bool anyFailed = false;
  for (std::size_t i = 0; i < p; ++i) {
    const auto s = fromBytes<SizeInfo>(sizes[i]);
    anyFailed = anyFailed || s.failClass != kSuccess;
    if (hints.allocSharedNoncontig) total = (total + kPage - 1) / kPage * kPage;
    offsets[i] = total;
    total += static_cast<std::uint64_t>(s.size);
  }
  if (cls == kSuccess && anyFailed) {
    cls = kErrOther;  // the failed rank says why, in the creation allgather
    msg = "another rank failed";
  }

  // Rank 0's segment.
  const std::uint64_t len = std::max<std::uint64_t>((total + kPage - 1) / kPage * kPage, kPage);
  SegmentInfo mine{};
  mine.failClass = anyFailed ? kErrOther : kSuccess;
  std::byte* mapped = nullptr;
  if (me == 0 && !anyFailed) {
    const int fd = memfd_create("onesided-shared-window", MFD_CLOEXEC);
    void* map = MAP_FAILED;
    if (fd < 0) {
      msg = sysError("memfd_create");
    } else if (ftruncate(fd, static_cast<off_t>(len)) != 0) {
      msg = sysError("ftruncate of the shared segment");
    } else {
      map = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (map == MAP_FAILED) msg = sysError("mmap of the shared segment");
    }
    struct stat st {};
    if (map != MAP_FAILED && fstat(fd, &st) == 0) {
      mapped = static_cast<std::byte*>(map);
      // The descriptor stays open while the window lives: peers open it through /proc.
      w->segment_ = std::shared_ptr<void>(map, [len, fd](void* m) {
        munmap(m, len);
        close(fd);
      });
      mine = {len, kSuccess, getpid(), fd, static_cast<std::uint64_t>(st.st_ino), {}};
      bootId(mine.bootId);
    } else {
      if (map != MAP_FAILED) munmap(map, len);
      if (fd >= 0) close(fd);
      cls = kErrNoMem;
      mine.failClass = cls;
    }
  }
  auto segs = comm.allgather(bytesOf(mine));
  const auto info0 = fromBytes<SegmentInfo>(segs[0]);
  if (cls == kSuccess && info0.failClass != kSuccess) {
    cls = kErrOther;
    msg = "rank 0 could not make the shared segment";
  }
  if (cls == kSuccess && me != 0) {
    char here[40];
    bootId(here);
    const std::string path =
        "/proc/" + std::to_string(info0.pid) + "/fd/" + std::to_string(info0.fd);
    const int fd = std::memcmp(here, info0.bootId, sizeof here) == 0
                       ? open(path.c_str(), O_RDWR | O_CLOEXEC)
                       : -1;
    struct stat st {};
    void* map = MAP_FAILED;
    if (fd >= 0 && fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_ino) == info0.inode) {
      map = mmap(nullptr, info0.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    if (fd >= 0) close(fd);
    if (map != MAP_FAILED) {
      mapped = static_cast<std::byte*>(map);
      w->segment_ = std::shared_ptr<void>(map, [n = info0.len](void* m) { munmap(m, n); });
    } else {
      cls = kErrRmaShared;
      msg = "rank " + std::to_string(me) + " cannot map rank 0's segment (" + path +
            "): MPI_Win_allocate_shared needs every rank on one node, allowed to open each "
            "other's files (as for ptrace)";
    }
  }
  // Every rank fails with kErrRmaShared if one could not map the segment.
  auto verdicts = comm.allgather(bytesOf(std::int64_t{cls == kErrRmaShared ? 1 : 0}));
  for (std::size_t i = 0; i < p && cls == kSuccess; ++i) {
    if (fromBytes<std::int64_t>(verdicts[i]) != 0) {
      cls = kErrRmaShared;
      msg = "rank " + std::to_string(i) +
            " cannot map rank 0's segment: MPI_Win_allocate_shared needs every rank on one node";
    }
  }
  if (cls == kSuccess) {
    try {
      w->region_ = comm.context().transport().registerMemory(
          mapped + offsets[static_cast<std::size_t>(me)], static_cast<std::size_t>(size),
          transport::Placement::kRegister, transport::Access::kRemoteAll);
      w->exposed_ = w->region_.get();
    } catch (const Error& e) {
      cls = e.errorClass();
      msg = e.what();
    }
  }
  const auto bytes = cls == kSuccess ? static_cast<std::size_t>(size) : 0;
  // A part of size 0 has no address with alloc_shared_noncontig: its base is NULL, from
  // MPI_Win_allocate_shared and MPI_Win_shared_query alike (as MPICH and Open MPI give, and
  // programs test). Contiguous, it is where it would start, so that every part still starts
  // where the previous one ends (Open MPI does the same).
  auto partBase = [&](std::size_t i, std::uint64_t partSize) -> std::byte* {
    if (mapped == nullptr || (partSize == 0 && hints.allocSharedNoncontig)) return nullptr;
    return mapped + offsets[i];
  };
  w->setUp(cls == kSuccess ? partBase(static_cast<std::size_t>(me), bytes) : nullptr, bytes, cls,
           msg);
  // Every part is in the mapped segment: loads and stores for all of them.
  for (std::size_t i = 0; i < p; ++i) {
    Target& t = w->targets_[i];
    t.direct = partBase(i, t.size);
    t.directLo = 0;
    t.directHi = t.size;
    t.settle();
  }
  SPDLOG_LOGGER_DEBUG(&log::core(), "shared window: {} bytes in all, this rank's part at {}", total,
                      static_cast<void*>(mapped + offsets[static_cast<std::size_t>(me)]));
  return w;
}

void Window::sharedQuery(int target, std::size_t& size, int& dispUnit, void*& base) const {
  requireLive();
  if (flavor_ != Flavor::kShared) {
    throw Error(kErrRmaFlavor, "the window was not made by MPI_Win_allocate_shared (flavor " +
                                   std::to_string(static_cast<int>(flavor_)) + ")");
  }
  checkRank(target);
  std::size_t i = 0;
  if (target == kProcNull) {
    // MPI-3.1 §11.2.3: the lowest rank with a size greater than 0.
    while (i < targets_.size() && targets_[i].size == 0) ++i;
    if (i == targets_.size()) i = 0;  // every size is 0: rank 0's (empty) part
  } else {
    i = static_cast<std::size_t>(target);
  }
  const Target& t = targets_[i];
  size = t.size;
  dispUnit = t.dispUnit;
  base = t.direct;
}

}  // namespace onesided
