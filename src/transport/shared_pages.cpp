// SPDX-License-Identifier: BSD-3-Clause
// Shared pages for user memory (see shared_pages.hpp for the why and the limits).
#include "transport/shared_pages.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "log.hpp"
#include "settings.hpp"

#ifdef ONESIDED_HAVE_UCX
#include <ucm/api/ucm.h>
#endif

namespace onesided::transport {
namespace {

constexpr const char* kMemfdName = "onesided-window";

std::uint64_t pageSize() {
  static const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

bool enabled() {
  const char* env = settings::raw(settings::Id::kSharePages);
  return env == nullptr || std::strcmp(env, "0") != 0;
}

/// Memfds this process may hold for shared ranges (one each): a quarter of its descriptor limit,
/// so that a program with many windows never runs out of descriptors for its own files.
std::size_t memfdBudget() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 1024;
  return std::max<std::size_t>(4, static_cast<std::size_t>(r.rlim_cur / 4));
}

/// ONESIDED_SHARE_PAGES=whole: never the partial pages at a range's ends.
bool partialEndsEnabled() {
  const char* env = settings::raw(settings::Id::kSharePages);
  return env == nullptr || std::strcmp(env, "whole") != 0;
}

/// Whether [lo, hi) overlaps the calling thread's stack. The main thread's is never shared
/// (privateAnonymous: its mapping is "[stack]"), and asking glibc for it would read
/// /proc/self/maps again (a fifth of a small window's MPI_Win_create + MPI_Win_free).
bool onOwnStack(std::uint64_t lo, std::uint64_t hi) {
  if (syscall(SYS_gettid) == getpid()) return false;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return true;
  void* addr = nullptr;
  std::size_t size = 0;
  const int r = pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  const auto a = reinterpret_cast<std::uint64_t>(addr);
  return r != 0 || (lo < a + size && a < hi);
}

/// One line of /proc/self/maps.
struct Mapping {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::string perms;
  std::uint64_t offset = 0;  ///< in the mapped file
  std::uint64_t inode = 0;
  std::string path;
};

std::vector<Mapping> readMaps() {
  std::vector<Mapping> maps;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    Mapping m;
    char perms[8] = {};
    unsigned long long start = 0;
    unsigned long long end = 0;
    unsigned long long offset = 0;
    unsigned long long inode = 0;
    char dev[32] = {};
    int pathAt = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %31s %llu %n", &start, &end, perms, &offset,
                    dev, &inode, &pathAt) < 6) {
      continue;
    }
    m.start = start;
    m.end = end;
    m.perms = perms;
    m.offset = offset;
    m.inode = inode;
    if (pathAt > 0 && static_cast<std::size_t>(pathAt) <= line.size()) m.path = line.substr(pathAt);
    maps.push_back(std::move(m));
  }
  return maps;
}

/// PROCMAP_QUERY (Linux 6.11, <linux/fs.h>): the mapping that holds one address, asked of a
/// descriptor of /proc/self/maps, instead of the kernel printing every mapping and this process
/// parsing them (a tenth of a 4 KiB window's MPI_Win_create + MPI_Win_free with UCX loaded).
struct ProcmapQuery {
  std::uint64_t size;
  std::uint64_t queryFlags;
  std::uint64_t queryAddr;
  std::uint64_t vmaStart;
  std::uint64_t vmaEnd;
  std::uint64_t vmaFlags;  // 1 readable, 2 writable, 4 executable, 8 shared
  std::uint64_t vmaPageSize;
  std::uint64_t vmaOffset;
  std::uint64_t inode;
  std::uint32_t devMajor;
  std::uint32_t devMinor;
  std::uint32_t vmaNameSize;
  std::uint32_t buildIdSize;
  std::uint64_t vmaNameAddr;
  std::uint64_t buildIdAddr;
};
constexpr unsigned long kProcmapQuery = _IOWR('f', 17, ProcmapQuery);  // NOLINT

/// Whether this kernel answers PROCMAP_QUERY (process-wide: it is the kernel's).
std::atomic<bool> procmapQueryWorks{true};

/// covered() by PROCMAP_QUERY: 1 yes, 0 no, -1 the kernel cannot tell (read the maps instead).
template <class Ok>
int coveredByQuery(std::uint64_t lo, std::uint64_t hi, Ok& ok) {
  if (!procmapQueryWorks.load(std::memory_order_relaxed)) return -1;
  // Opened for each question: a descriptor kept across fork() would still describe the parent.
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::array<char, 4096> name{};
  int verdict = -1;
  for (std::uint64_t at = lo;;) {
    ProcmapQuery q{};
    q.size = sizeof q;
    q.queryAddr = at;
    q.vmaNameSize = static_cast<std::uint32_t>(name.size());
    q.vmaNameAddr = reinterpret_cast<std::uint64_t>(name.data());
    if (ioctl(fd, kProcmapQuery, &q) != 0) {
      if (errno == ENOENT) verdict = 0;  // nothing mapped at `at`: a gap
      if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP) {
        procmapQueryWorks.store(false, std::memory_order_relaxed);
      }
      break;
    }
    Mapping m;
    m.start = q.vmaStart;
    m.end = q.vmaEnd;
    m.perms = {(q.vmaFlags & 1U) != 0 ? 'r' : '-', (q.vmaFlags & 2U) != 0 ? 'w' : '-',
               (q.vmaFlags & 4U) != 0 ? 'x' : '-', (q.vmaFlags & 8U) != 0 ? 's' : 'p'};
    m.offset = q.vmaOffset;
    m.inode = q.inode;
    if (q.vmaNameSize > 0) m.path.assign(name.data(), strnlen(name.data(), q.vmaNameSize));
    if (!ok(m)) {
      verdict = 0;
      break;
    }
    at = m.end;
    if (at >= hi) {
      verdict = 1;
      break;
    }
  }
  close(fd);
  return verdict;
}

/// Whether every byte of [lo, hi) lies in mappings accepted by `ok`, with no gap.
template <class Ok>
bool covered(std::uint64_t lo, std::uint64_t hi, Ok ok) {
  if (const int v = coveredByQuery(lo, hi, ok); v >= 0) return v == 1;
  std::uint64_t at = lo;
  for (const Mapping& m : readMaps()) {
    if (m.end <= at || m.start > at) continue;
    if (!ok(m)) return false;
    at = m.end;
    if (at >= hi) return true;
  }
  return false;
}

bool privateAnonymous(const Mapping& m) {
  return m.perms == "rw-p" && m.inode == 0 && (m.path.empty() || m.path == "[heap]");
}

/// The name of the memfds process `pid` makes ("onesided-window.<pid>"), NUL-terminated.
/// Built without allocating: the fork handler's child uses it before its heap is its own.
struct MemfdName {
  char text[48];
  std::size_t len;
  [[nodiscard]] std::string_view view() const noexcept { return {text, len}; }
};
MemfdName ownMemfdName(pid_t pid) noexcept {
  MemfdName n{};
  const std::size_t base = std::strlen(kMemfdName);
  std::memcpy(n.text, kMemfdName, base);
  n.text[base] = '.';
  const auto r = std::to_chars(n.text + base + 1, n.text + sizeof n.text - 1, pid);
  n.len = static_cast<std::size_t>(r.ptr - n.text);
  n.text[n.len] = '\0';
  return n;
}

/// Whether a /proc/self/maps path shows a memfd named `name` (not one whose pid only starts
/// with the same digits).
bool namesMemfd(std::string_view path, std::string_view name) {
  constexpr std::string_view kPrefix = "/memfd:";
  const std::size_t at = path.find(name);
  if (at == std::string_view::npos || at < kPrefix.size() ||
      path.substr(at - kPrefix.size(), kPrefix.size()) != kPrefix) {
    return false;
  }
  const std::size_t after = at + name.size();
  return after == path.size() || std::isdigit(static_cast<unsigned char>(path[after])) == 0;
}

/// The process's shared ranges. Process-wide by nature: mappings belong to the process, not to
/// a Context, and two windows (of any Context) over the same pages must share one memfd.
struct Entry {
  std::uint64_t lo;
  std::uint64_t hi;
  int fd;
  std::uint64_t inode;
  int refs;             // handles; 0: dormant (kept shared, no handle: the next share() reuses it)
  bool restore;         // every handle asked for private memory back at the end
  bool stale;           // the range no longer maps this memfd: never handed out again
  bool verify = false;  // unmap events were lost (their queue overflowed): check the maps
};

/// Whether [e.lo, e.hi) still maps e's memfd (the program may have unmapped the memory and
/// mapped other memory there since, before whoever holds the entry has heard of it).
bool live(const Entry& e) {
  return covered(e.lo, e.hi, [&](const Mapping& m) {
    return m.inode == e.inode && m.path.find(kMemfdName) != std::string::npos;
  });
}

struct Registry {
  std::mutex mutex;
  std::vector<Entry> entries;
  // The process's unmap events (UCX's memory hooks), from the first share() on: they say which
  // entries lost their memory without reading /proc/self/maps (a fifth of a small window's
  // MPI_Win_create + MPI_Win_free). `heard`: they reach `events`.
  UnmapEvents events;
  bool listened = false;
  bool heard = false;
  bool made = false;           // this process made a memfd (it may be mapped without an entry)
  pid_t forkParent = -1;       // across a fork that has copies to make: the parent's pid
  int forkPipe[2] = {-1, -1};  // across such a fork: the child closes its end when they are made
};

void lockForFork();
void unlockInParent();
void privatizeInChild();

/// Applies the unmap events queued since the last call: an entry that lost any of its range is
/// stale. Except events inside [keepLo, keepHi): this process's own replacement of that range.
void applyUnmaps(Registry& reg, std::uint64_t keepLo = 0, std::uint64_t keepHi = 0) {
  reg.events.drain([&](std::uintptr_t a, std::uintptr_t b) {
    if (keepLo < keepHi && keepLo <= a && b <= keepHi) return;
    const bool lost = a == 0 && b == UINTPTR_MAX;  // the queue overflowed
    for (Entry& e : reg.entries) {
      if (lost) {
        e.verify = true;
      } else if (e.lo < b && a < e.hi) {
        e.stale = true;
      }
    }
  });
}

/// Whether e's range still maps its memfd: as the unmap events say where they are heard (after
/// applyUnmaps), else as /proc/self/maps says.
bool stillMapped(const Registry& reg, Entry& e) {
  if (e.stale) return false;
  if (reg.heard && !e.verify) return true;
  e.verify = false;
  e.stale = !live(e);
  return !e.stale;
}

Registry& registry() {
  static auto* r = [] {
    auto* made = new Registry;  // never destroyed: windows may outlive static destructors
    // A fork()ed child gets private copies of the shared ranges (see privatizeInChild); should
    // this fail, a child shares them with its parent.
    if (pthread_atfork(lockForFork, unlockInParent, privatizeInChild) != 0) {
      log::core().warn("shared pages: pthread_atfork failed; a fork()ed child shares them");
    }
    return made;
  }();
  return *r;
}

// Made when the library loads, so the fork handlers are in place before the program registers
// its own (child handlers run in the order registered, and a program's may allocate).
[[maybe_unused]] const bool kRegistryAtLoad = (registry(), true);

// fork(): the child of a process with shared ranges would inherit them as MAP_SHARED, so its
// stores (the program's, or malloc's own bookkeeping in a freed block) would land in the
// parent's memory. The child instead gets private anonymous memory holding what the pages held
// at the fork, which is what fork() promises for memory the program thinks private. The
// registry is locked across the fork, so no range is half moved when the child is made, and
// the parent's fork() returns only once the child has its copies, so nothing the parent stores
// after fork() returns shows in the child. That wait is the cost: a copy of the shared bytes
// per fork (none when nothing is shared). posix_spawn, and system() which uses it, share the
// address space until exec and run no fork handlers: nothing to do there.

constexpr int kForkWaitMs = 10000;

void lockForFork() {
  Registry& reg = registry();
  reg.mutex.lock();
  if (!reg.made) return;
  reg.forkParent = getpid();
  if (pipe2(reg.forkPipe, O_CLOEXEC) != 0) reg.forkPipe[0] = reg.forkPipe[1] = -1;
}

void unlockInParent() {
  Registry& reg = registry();
  if (reg.forkPipe[0] >= 0) {
    close(reg.forkPipe[1]);
    // End of file: the child has its copies (or is gone). Bounded, so a child stopped before
    // its handlers run (a debugger holding it) does not hold the parent for ever.
    pollfd p{reg.forkPipe[0], POLLIN, 0};
    int ready = 0;
    while ((ready = poll(&p, 1, kForkWaitMs)) < 0 && errno == EINTR) {
    }
    if (ready == 0) {
      log::core().warn(
          "fork: the child has not made its copies of shared pages after {} s; going on (it may "
          "see stores made from now on)",
          kForkWaitMs / 1000);
    }
    close(reg.forkPipe[0]);
  }
  reg.forkPipe[0] = reg.forkPipe[1] = -1;
  reg.forkParent = -1;
  reg.mutex.unlock();
}

// The child handler runs before anything in the child but glibc and fork handlers registered
// before this one, and until its copies are made it must not write memory that may be shared:
// part of the main heap may be (a freed send buffer's pages stay shared), so it allocates
// nothing (no std::string, no ifstream) and maps and unmaps with raw system calls (a lock
// another thread of the parent held at the fork, such as one of UCX's memory hooks, which
// intercept mmap and mremap, stays held in the child for ever; ucm also drops mremap's fifth
// argument).

/// Copies `len` bytes of this process from `from` to `to` in the kernel (process_vm_readv): a
/// partial page holds other data, which a sanitizer's memcpy would check (its redzones).
bool copyInKernel(void* to, std::uintptr_t from, std::size_t len) {
  const long self = syscall(SYS_getpid);
  for (std::size_t done = 0; done < len;) {  // in steps: one call copies at most about 2 GiB
    const std::size_t step = std::min<std::size_t>(len - done, std::size_t{1} << 30);
    const iovec t{static_cast<std::byte*>(to) + done, step};
    const iovec f{reinterpret_cast<void*>(from + done), step};  // NOLINT
    const long got = syscall(SYS_process_vm_readv, self, &t, 1, &f, 1, 0);
    if (got <= 0) return false;
    done += static_cast<std::size_t>(got);
  }
  return true;
}

/// Replaces the mapping [start, end) with private memory holding the same bytes.
bool privatize(std::uint64_t start, std::uint64_t end) {
  const std::size_t len = end - start;
  // Both sides' page tables filled in one call each (the child has none for shared mappings,
  // which fork() does not copy): a fault per page took 3x as long (256 KiB: 2.0 against 0.6 ms
  // on the 2-core development VMs).
  const long temp = syscall(SYS_mmap, nullptr, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (temp == -1) return false;
  syscall(SYS_madvise, start, len, MADV_POPULATE_READ);  // a hint: older kernels say EINVAL
  auto* copy = reinterpret_cast<void*>(temp);            // NOLINT(performance-no-int-to-ptr)
  // The kernel copies: a sanitizer's memcpy would check the bytes, and a range left shared
  // after the program freed it holds its allocator's poisoned redzones.
  if (!copyInKernel(copy, start, len)) {
    syscall(SYS_munmap, copy, len);
    return false;
  }
  if (syscall(SYS_mremap, copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, start) == -1) {
    syscall(SYS_munmap, copy, len);
    return false;
  }
  return true;
}

/// Up to `max` mappings of memfds made by process `pid`, from /proc/self/maps read with a
/// buffer on the stack; -1 when the file cannot be read.
int ownMappings(pid_t pid, std::uint64_t (*found)[2], int max) {
  const MemfdName want = ownMemfdName(pid);  // the path shows as "/memfd:<it> (deleted)"

  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[8192];
  std::size_t have = 0;
  bool skipping = false;  // inside a line longer than the buffer
  int n = 0;
  for (;;) {
    const ssize_t got = read(fd, buf + have, sizeof buf - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    have += static_cast<std::size_t>(got);
    std::size_t at = 0;
    while (const auto* nl = static_cast<const char*>(std::memchr(buf + at, '\n', have - at))) {
      const std::string_view line(buf + at, static_cast<std::size_t>(nl - (buf + at)));
      at = static_cast<std::size_t>(nl - buf) + 1;
      if (skipping) {
        skipping = false;
        continue;
      }
      if (!namesMemfd(line, want.view())) continue;
      std::uint64_t range[2] = {0, 0};
      std::size_t i = 0;
      for (std::uint64_t& v : range) {
        for (; i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i])) != 0; ++i) {
          const char c = line[i];
          v = v * 16 + static_cast<std::uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        ++i;  // the '-'
      }
      if (n < max && range[0] < range[1]) {
        found[n][0] = range[0];
        found[n][1] = range[1];
        ++n;
      }
    }
    if (at == 0 && have == sizeof buf) {  // a line longer than the buffer: not one of ours
      skipping = true;
      have = 0;
      continue;
    }
    std::memmove(buf, buf + at, have - at);
    have -= at;
  }
  close(fd);
  return n;
}

void privatizeInChild() {
  Registry& reg = registry();
  const int saved = errno;
  if (reg.forkParent >= 0) {
    // Every mapping of a memfd the parent made: the registry's, and those it dropped whose
    // pages are still mapped (a range the program freed in part: no entry, still shared).
    // Peers' memfds mapped here were made by other processes and are left alone. In rounds of
    // a bounded array, the maps file read again after each (the copies change it).
    constexpr int kRound = 64;
    std::uint64_t found[kRound][2];
    bool failed = false;
    // (Reading the maps file of an MPI process takes about 0.2 ms: again only when the array
    // was full.)
    for (int n = kRound; n == kRound && !failed;) {
      n = ownMappings(reg.forkParent, found, kRound);
      failed = n < 0;
      for (int i = 0; i < n; ++i) failed = !privatize(found[i][0], found[i][1]) || failed;
    }
    if (failed) {
      static constexpr char kMsg[] =
          "onesided: fork: could not give the child a private copy of shared pages; "
          "its stores there reach the parent\n";
      [[maybe_unused]] const ssize_t w = write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
    }
    for (const Entry& e : reg.entries) close(e.fd);
    reg.entries.clear();  // nothing is shared in the child: handles it inherited find no entry
    reg.made = false;
    if (reg.forkPipe[0] >= 0) {
      close(reg.forkPipe[0]);
      close(reg.forkPipe[1]);  // the parent's fork() returns
    }
    reg.forkPipe[0] = reg.forkPipe[1] = -1;
    reg.forkParent = -1;
  }
  errno = saved;
  reg.mutex.unlock();
}

// Moving pages while other threads run. A range's pages are replaced by others holding the same
// bytes; a store another thread made to them after the copy and before the replacement would be
// lost (and, moving back, a load in between would read zeros). So the range is read-only while
// it moves: such a store faults, and onMoveFault waits until the new pages are in place, then
// returns, so that the store is made again, there. Loads go on as before; faults anywhere else
// go to the handler the program had. Stores the kernel makes for a system call (read() into a
// buffer in those pages) fail with EFAULT meanwhile, which is why the partial pages at a
// window's ends, which also hold other data of the process, move only in a single-threaded
// program (see share()). The pages are replaced with raw system calls, and never with libc's
// mmap / mremap: UCX's memory hooks intercept those and take locks that a thread waiting in
// onMoveFault may hold (ucm also drops mremap's fifth argument). The hooks hear of the
// replacement once the range is writable again (reportReplaced), so that registration caches
// that knew the old pages forget them.
namespace move {
std::atomic<std::uintptr_t> lo{0};
std::atomic<std::uintptr_t> hi{0};
std::atomic<bool> moving{false};
std::atomic<int> inHandler{0};
std::atomic<std::uint64_t> ended{0};  // moves ended so far
struct sigaction previous {};         // the handler the program had before onMoveFault
// The address this thread last retried a store at after a move had ended, and how many moves
// had ended then (initial-exec: a signal handler must not allocate, which a shared library's
// other TLS models may).
thread_local std::uintptr_t retried [[gnu::tls_model("initial-exec")]] = 0;
thread_local std::uint64_t retriedAfter [[gnu::tls_model("initial-exec")]] = 0;

void chain(int sig, siginfo_t* info, void* context) {
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
    // A real fault: the default action, when the faulting instruction runs again.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
  } else {
    previous.sa_handler(sig);
  }
}

void onMoveFault(int sig, siginfo_t* info, void* context) {
  inHandler.fetch_add(1);
  const auto a = reinterpret_cast<std::uintptr_t>(info->si_addr);
  if (a >= lo.load() && a < hi.load()) {
    if (moving.load(std::memory_order_acquire)) {
      while (moving.load(std::memory_order_acquire)) syscall(SYS_sched_yield);
      retried = 0;
      inHandler.fetch_sub(1);
      return;  // the store is made again, in the new pages
    }
    // A fault during a move that reached here after its end: once more. The thread may have
    // been descheduled between the fault and here for a whole move, so the same address faults
    // again only after another move ended: a fault that repeats with no move ended in between is
    // real.
    const std::uint64_t e = ended.load();
    if (retried != a || retriedAfter != e) {
      retried = a;
      retriedAfter = e;
      inHandler.fetch_sub(1);
      return;
    }
  }
  retried = 0;
  inHandler.fetch_sub(1);
  chain(sig, info, context);
}

/// Runs `replace` with [lo, hi) read-only and stores into it held until `replace` returns.
/// `replace` makes raw system calls only: no lock, no allocation. onMoveFault stays installed
/// after the first move (a fault in flight when it was taken down would reach the program's
/// handler, or the default action, and a sanitizer's signal wrapper looks the handler up late);
/// should the program install its own later, the next move puts onMoveFault back in front.
template <class F>
bool guarded(std::uintptr_t first, std::uintptr_t end, F&& replace) {
  // This thread's own signal handlers wait (one storing into the range would wait for itself).
  sigset_t async{};
  sigset_t saved{};
  sigfillset(&async);
  for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP}) sigdelset(&async, s);
  pthread_sigmask(SIG_BLOCK, &async, &saved);
  lo.store(first);
  hi.store(end);
  moving.store(true);
  struct sigaction now {};
  bool installed = sigaction(SIGSEGV, nullptr, &now) == 0;
  if (installed && ((now.sa_flags & SA_SIGINFO) == 0 || now.sa_sigaction != onMoveFault)) {
    previous = now;
    struct sigaction mine {};
    mine.sa_sigaction = onMoveFault;
    mine.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&mine.sa_mask);
    installed = sigaction(SIGSEGV, &mine, nullptr) == 0;
  }
  bool ok = false;
  if (installed && syscall(SYS_mprotect, first, end - first, PROT_READ) == 0) {
    ok = replace();
    if (!ok) syscall(SYS_mprotect, first, end - first, PROT_READ | PROT_WRITE);
  }
  ended.fetch_add(1);
  moving.store(false, std::memory_order_release);
  while (inHandler.load() != 0) syscall(SYS_sched_yield);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  return ok;
}

/// Tells UCX's memory hooks (and through them every registration cache, ours included) that the
/// pages of [lo, lo + len) were replaced.
void reportReplaced(std::uintptr_t first, std::size_t len) {
#ifdef ONESIDED_HAVE_UCX
  ucm_vm_munmap(reinterpret_cast<void*>(first), len);  // NOLINT(performance-no-int-to-ptr)
#else
  (void)first;
  (void)len;
#endif
}
}  // namespace move

/// Writes `len` bytes of this process at `from` into `fd` from its start, in the kernel (the
/// system call itself: a sanitizer's pwrite would check the bytes, and partial pages hold other
/// data, its redzones among them).
bool writeInKernel(int fd, std::uintptr_t from, std::size_t len) {
  for (std::size_t done = 0; done < len;) {
    const long got = syscall(SYS_pwrite64, fd, from + done, len - done, static_cast<off_t>(done));
    if (got <= 0) return false;
    done += static_cast<std::size_t>(got);
  }
  return true;
}

/// Puts the memfd `fd` at [lo, hi) with the range's current content. Written into the memfd
/// directly, not through a mapping of it made for the copy: its mmap and munmap (a TLB
/// shootdown, and an unmap event through UCX's hooks) were a third of the move.
bool shareRange(std::uint64_t lo, std::uint64_t hi, int fd) {
  const std::size_t len = hi - lo;
  const bool ok = move::guarded(lo, hi, [&] {
    return writeInKernel(fd, lo, len) &&
           syscall(SYS_mmap, lo, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
                   fd, 0) == static_cast<long>(lo);
  });
  if (ok) move::reportReplaced(lo, len);
  return ok;
}

/// Puts private anonymous memory back at [lo, hi), with the content of the memfd pages there.
bool unshareRange(std::uint64_t lo, std::uint64_t hi) {
  const std::size_t len = hi - lo;
  const long made = syscall(SYS_mmap, nullptr, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (made == -1) return false;
  auto* temp = reinterpret_cast<void*>(made);  // NOLINT(performance-no-int-to-ptr)
  // Filled, then moved in whole: no thread sees the new pages before they hold the bytes.
  const bool ok = move::guarded(lo, hi, [&] {
    return copyInKernel(temp, lo, len) &&
           syscall(SYS_mremap, temp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, lo) != -1;
  });
  if (!ok) {
    syscall(SYS_munmap, temp, len);
    return false;
  }
  move::reportReplaced(lo, len);
  return true;
}

std::unique_ptr<SharedPages> nothing(const char* why, std::uint64_t lo, std::uint64_t hi) {
  SPDLOG_LOGGER_DEBUG(&log::core(), "shared pages: [{:#x}, {:#x}) not shared: {}", lo, hi, why);
  (void)why;
  (void)lo;
  (void)hi;
  return nullptr;
}

}  // namespace

std::unique_ptr<SharedPages> SharedPages::share(void* base, std::size_t len, bool restore,
                                                bool partialEnds) {
  const std::uint64_t page = pageSize();
  const auto b = reinterpret_cast<std::uint64_t>(base);
  const std::uint64_t lo = (b + page - 1) & ~(page - 1);
  const std::uint64_t hi = (b + len) & ~(page - 1);
  if (!enabled()) return nothing("ONESIDED_SHARE_PAGES=0", lo, hi);
  if (base == nullptr || len == 0) return nothing("no memory", lo, hi);
  const std::uint64_t first = b & ~(page - 1);
  const std::uint64_t end = (b + len + page - 1) & ~(page - 1);
  if (partialEnds && (first != lo || end != hi)) {
    if (!partialEndsEnabled()) {
      nothing("ONESIDED_SHARE_PAGES=whole", first, end);
    } else if (onOwnStack(first, end)) {
      // Read-only while it moved, the stack would fault under this very thread.
      nothing("partial pages on the calling thread's stack", first, end);
    } else if (auto whole = shareExactly(first, end, restore)) {
      return whole;
    }
  }
  if (hi <= lo) return nothing("no whole page", lo, hi);
  return shareExactly(lo, hi, restore);
}

std::unique_ptr<SharedPages> SharedPages::shareExactly(std::uint64_t lo, std::uint64_t hi,
                                                       bool restore) {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (!reg.listened) {
    reg.listened = true;
    reg.heard = reg.events.listen("shared pages (liveness read from /proc/self/maps)");
  }
  applyUnmaps(reg);
  std::vector<std::uint64_t> absorbed;  // dormant entries inside [lo, hi), by inode
  for (auto it = reg.entries.begin(); it != reg.entries.end();) {
    Entry& e = *it;
    if (e.stale || hi <= e.lo || e.hi <= lo) {
      ++it;
      continue;
    }
    if (!stillMapped(reg, e)) {  // replaced under its holders: they drop it in their own time
      if (e.refs == 0) {
        close(e.fd);
        it = reg.entries.erase(it);
      }
      continue;
    }
    if (e.lo <= lo && hi <= e.hi) {
      ++e.refs;
      e.restore = e.restore && restore;
      return std::unique_ptr<SharedPages>(new SharedPages({lo, hi, lo - e.lo, e.inode, e.fd}));
    }
    if (e.refs == 0) {
      // Dormant (no window, no collective holds it) and inside or partly overlapping: the new
      // memfd takes the pages in [lo, hi) over (shareRange copies them). Pages of it outside
      // stay mapped from its memfd, which no entry tracks from then on: nobody reads them
      // (receivers drop their mappings of a sender's ranges once its cache counts a drop),
      // and a later range may take them over in turn (an orphan, below).
      absorbed.push_back(e.inode);
      ++it;
      continue;
    }
    return nothing("partly overlaps another shared range in use", lo, hi);
  }
  if (reg.entries.size() - absorbed.size() >= memfdBudget()) {
    return nothing("a quarter of the descriptor limit held in memfds already", lo, hi);
  }
  const MemfdName mine = ownMemfdName(getpid());
  const bool ok = covered(lo, hi, [&](const Mapping& m) {
    if (privateAnonymous(m)) return true;
    if (!namesMemfd(m.path, mine.view())) return false;
    if (std::find(absorbed.begin(), absorbed.end(), m.inode) != absorbed.end()) return true;
    // An orphan: pages of a memfd of this process that no entry tracks any more.
    return std::none_of(reg.entries.begin(), reg.entries.end(),
                        [&](const Entry& x) { return x.inode == m.inode; });
  });
  if (!ok) return nothing("not private anonymous memory", lo, hi);

  // Named after this process, so that a fork()ed child finds every mapping of it (see
  // privatizeInChild) and tells them from peers' memfds mapped here.
  const int fd = memfd_create(mine.text, MFD_CLOEXEC);
  if (fd < 0) return nothing("memfd_create failed", lo, hi);
  struct stat st {};
  if (ftruncate(fd, static_cast<off_t>(hi - lo)) != 0 || fstat(fd, &st) != 0 ||
      !shareRange(lo, hi, fd)) {
    log::core().debug("shared pages: sharing [{:#x}, {:#x}): {}", lo, hi, std::strerror(errno));
    close(fd);
    return nothing("a system call failed", lo, hi);
  }
  std::erase_if(reg.entries, [&](const Entry& e) {
    if (std::find(absorbed.begin(), absorbed.end(), e.inode) == absorbed.end()) return false;
    close(e.fd);  // its pages are the new memfd's now
    return true;
  });
  reg.entries.push_back({lo, hi, fd, static_cast<std::uint64_t>(st.st_ino), 1, restore, false});
  reg.made = true;
  applyUnmaps(reg, lo, hi);  // the replacement's own event
  SPDLOG_LOGGER_DEBUG(&log::core(), "shared pages: [{:#x}, {:#x}) now in memfd fd {}", lo, hi, fd);
  return std::unique_ptr<SharedPages>(
      new SharedPages({lo, hi, 0, static_cast<std::uint64_t>(st.st_ino), fd}));
}

SharedPages::~SharedPages() {
  auto& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  applyUnmaps(reg);
  for (auto it = reg.entries.begin(); it != reg.entries.end(); ++it) {
    if (it->inode != info_.inode) continue;
    if (gone_) it->stale = true;
    if (--it->refs > 0) return;
    if (!it->restore && !it->stale) return;  // dormant: the pages stay shared, for reuse
    // Only move the content back if the pages are still ours: a program that unmapped the
    // memory before MPI_Win_free may have something else there now.
    const bool ours = it->restore && stillMapped(reg, *it);
    const Entry e = *it;
    reg.entries.erase(it);
    if (!e.restore) {  // gone already: only the memfd goes
      close(e.fd);
      return;
    }
    if (ours) {
      if (!unshareRange(e.lo, e.hi)) {
        log::core().warn(
            "shared pages: could not restore private memory at {:#x} ({} bytes); "
            "it stays shared",
            e.lo, e.hi - e.lo);
      }
      applyUnmaps(reg, e.lo, e.hi);  // the replacement's own event
    } else {
      log::core().warn(
          "shared pages: the window memory at {:#x} was unmapped or replaced "
          "before MPI_Win_free",
          e.lo);
    }
    close(e.fd);
    return;
  }
}

namespace {
/// Whether malloc is glibc's own (not an allocator put in front of it: jemalloc, tcmalloc,
/// a sanitizer's).
bool mallocIsGlibc() {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libc == nullptr) return false;
  void* theirs = dlsym(libc, "malloc");
  void* used = dlsym(RTLD_DEFAULT, "malloc");
  dlclose(libc);
  return theirs != nullptr && theirs == used;
}
}  // namespace

SharedPagesCache::SharedPagesCache(bool firstUse, bool partialEnds)
    : firstUse_(firstUse), partialEnds_(partialEnds && partialEndsEnabled()) {
  if (!enabled()) return;
  // A shared page keeps its content through madvise(MADV_DONTNEED), where a private one reads
  // back as zeros. Pages stay shared after the program frees the buffer, so an allocator that
  // counts on that zeroing (jemalloc marks purged extents zeroed, and calloc then skips the
  // memset) would hand out old bytes. glibc's does not: its main heap shrinks with brk (the
  // pages go), mmapped chunks are unmapped, and calloc clears whatever a thread arena's heap
  // once had writable (up to its mprotect_size), purged or not. So on second use only under
  // glibc's malloc; ONESIDED_COLL_SHARE=always still shares under any.
  if (!firstUse && !mallocIsGlibc()) {
    log::core().debug("shared send buffers off: malloc is not glibc's");
    return;
  }
  active_ = events_.listen("shared send buffers off");
}

SharedPagesCache::~SharedPagesCache() = default;

void SharedPagesCache::drain(std::uintptr_t keepLo, std::uintptr_t keepHi) {
  events_.drain([&](std::uintptr_t a, std::uintptr_t b) {
    if (keepLo <= a && b <= keepHi) return;
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->lo < b && a < it->hi) {
        if (it->pages) {
          it->pages->forget();
          ++drops_;
        }
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  });
}

std::size_t SharedPagesCache::sharedRanges() const noexcept {
  return static_cast<std::size_t>(std::count_if(entries_.begin(), entries_.end(),
                                                [](const Entry& e) { return e.pages != nullptr; }));
}

std::uint64_t SharedPagesCache::sharedBytes() const noexcept {
  std::uint64_t n = 0;
  for (const Entry& e : entries_) n += e.pages ? e.hi - e.lo : 0;
  return n;
}

SharedPagesInfo SharedPagesCache::find(const void* p, std::size_t len, const void* owner,
                                       std::uint64_t call, const void* whole,
                                       std::size_t wholeLen) {
  if (!active_) return {};
  drain();
  const std::uint64_t page = pageSize();
  auto b = reinterpret_cast<std::uintptr_t>(p);
  bool ends = false;  // the partial pages at the ends too
  if (const auto w = reinterpret_cast<std::uintptr_t>(whole);
      whole != nullptr && w <= b && b + len <= w + wholeLen) {
    b = w;
    len = wholeLen;
    ends = partialEnds_;
  }
  std::uintptr_t lo = (b + page - 1) & ~(page - 1);
  std::uintptr_t hi = (b + len) & ~(page - 1);
  const std::uintptr_t first = b & ~(page - 1);
  const std::uintptr_t end = (b + len + page - 1) & ~(page - 1);
  ends = ends && (first != lo || end != hi);
  if (hi <= lo && !ends) return {};
  for (Entry& e : entries_) {
    // A shared range that holds the stream: all of it (ends), or its whole pages (a range
    // shared so before: with the ends on the caller's stack, say; taken as it is, not shared
    // again with its ends, which would drop it and share anew on every other call).
    if (e.pages &&
        ((ends && e.lo <= first && end <= e.hi) || (hi > lo && e.lo <= lo && hi <= e.hi))) {
      e.owner = owner;
      e.call = call;
      return e.pages->info();
    }
  }
  // Not shared yet: with the ends where they may move (a store to them meanwhile waits for the
  // move, but on this thread's own stack it would wait for itself).
  if (ends && !onOwnStack(first, end)) {
    lo = first;
    hi = end;
  }
  if (hi <= lo) return {};
  Entry* seen = nullptr;
  for (Entry& e : entries_) {
    if (!e.pages && e.lo == lo && e.hi == hi) seen = &e;
  }
  if (seen == nullptr) {
    if (entries_.size() - sharedRanges() >= kMaxSeen) {  // forget the oldest sighting
      entries_.erase(
          std::find_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.pages; }));
    }
    entries_.push_back({lo, hi, nullptr, false, owner, call});
    seen = &entries_.back();
    if (!firstUse_) return {};
  } else if (seen->failed || (!firstUse_ && seen->owner == owner && seen->call == call)) {
    return {};
  }
  seen = nullptr;  // entries are erased below: the sighting is looked up again after
  // Shared ranges of mine that overlap this one are given up for it (a buffer's later
  // collectives send larger or shifted blocks, or a freed buffer's pages came back at another
  // offset): share() moves their pages in [lo, hi) into the new memfd, and receivers drop
  // their mappings of them when they see the drop count. Not one that a stream of this same
  // collective uses: its receiver may not have read it yet (this range waits for a later call).
  const auto overlaps = [&](const Entry& e) { return e.pages && e.lo < hi && lo < e.hi; };
  if (std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
        return overlaps(e) && e.owner == owner && e.call == call;
      })) {
    return {};
  }
  for (auto e = entries_.begin(); e != entries_.end();) {
    if (overlaps(*e)) {
      ++drops_;
      e = entries_.erase(e);
    } else {
      ++e;
    }
  }
  if (sharedRanges() >= kMaxShared || sharedBytes() + (hi - lo) > kMaxBytes) return {};
  // Whole pages: share() takes exactly [lo, hi). Its mmap over the range reports the range as
  // unmapped; that event is the cache's own, not the program's.
  auto pages = SharedPages::share(reinterpret_cast<void*>(lo), hi - lo, false);  // NOLINT
  drain(lo, hi);
  // drain() may have dropped entries (events of other ranges): find the sighting again.
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return !e.pages && e.lo == lo && e.hi == hi; });
  if (it == entries_.end()) {
    entries_.push_back({lo, hi, nullptr, false, owner, call});
    it = entries_.end() - 1;
  }
  if (!pages) {
    it->failed = true;
    return {};
  }
  it->pages = std::move(pages);
  it->owner = owner;
  it->call = call;
  return it->pages->info();
}

std::unique_ptr<PeerPages> PeerPages::attach(pid_t owner, const SharedPagesInfo& info) {
  if (info.hi <= info.lo || info.fd < 0) return nullptr;
  const std::string path = "/proc/" + std::to_string(owner) + "/fd/" + std::to_string(info.fd);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    log::core().debug("shared pages: cannot open {}: {}", path, std::strerror(errno));
    return nullptr;
  }
  struct stat st {};
  void* map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_ino) == info.inode) {
    map = mmap(nullptr, info.hi - info.lo, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
               static_cast<off_t>(info.fileOffset));
  } else {
    log::core().debug("shared pages: {} is not the memfd the key names", path);
  }
  close(fd);
  if (map == MAP_FAILED) return nullptr;
  return std::unique_ptr<PeerPages>(new PeerPages(static_cast<std::byte*>(map), info.hi - info.lo));
}

PeerPages::~PeerPages() {
  if (munmap(map_, len_) != 0) {
    log::core().warn("shared pages: munmap of a peer's window failed: {}", std::strerror(errno));
  }
}

}  // namespace onesided::transport
