// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace onesided::bootstrap {

/// Out-of-band bootstrap: what a rank knows before any transport is up (rank, size, node peers)
/// and the two collectives needed to bring a transport up (allgather of byte blobs, barrier).
/// Not thread-safe: one rank calls it from one thread at a time. Every collective is called by
/// every rank of the job in the same order.
class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// World ranks that share this rank's node (including this rank), ascending.
  [[nodiscard]] virtual std::vector<int> nodePeers() const = 0;
  /// Every rank contributes one blob (lengths may differ); returns all blobs in rank order.
  /// While it waits it calls the progress hook, so a transport whose RMA needs target progress
  /// (UCX over tcp) keeps moving. Throws onesided::Error on a lost launcher or peer.
  virtual std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) = 0;
  virtual void barrier() = 0;
  /// Start-up data. publish() makes this rank's blob available to every rank (every rank calls
  /// it once, before any lookup); lookup(r) returns rank r's blob. By default publish() is one
  /// allgather. Under PMIx it is a Put and Commit only, and lookup(r) one PMIx_Get of rank r, so
  /// a rank's start-up costs the same whatever the job size and it reads only the peers it
  /// talks to (PMIx's direct modex).
  virtual void publish(std::span<const std::byte> mine) { published_ = allgather(mine); }
  virtual std::vector<std::byte> lookup(int rank) {
    return published_.at(static_cast<std::size_t>(rank));
  }
  /// Tells the launcher that this rank ends normally (MPI_Finalize). No collective after it.
  virtual void finalize() {}
  /// Asks the launcher to end the whole job with `code` (MPI_Abort); may return before the
  /// job is torn down, the caller exits afterwards.
  virtual void abort(int code, std::string_view message) {
    (void)code;
    (void)message;
  }
  /// Set (from any thread) once the launcher reports that a rank of the job died or the
  /// launcher itself is gone: waits outside the bootstrap check it and end with failure()
  /// instead of hanging. nullptr when the bootstrap cannot tell.
  [[nodiscard]] virtual const std::atomic<bool>* failedFlag() const { return nullptr; }
  /// One line saying what failed, once failedFlag() is set.
  [[nodiscard]] virtual std::string failure() const { return {}; }
  /// Human-readable kind, for logs: "tcp", "pmix", "inproc", "singleton".
  [[nodiscard]] virtual std::string kind() const = 0;
  void setProgressHook(std::function<void()> hook) { progress_ = std::move(hook); }

 protected:
  void progress() const {
    if (progress_) progress_();
  }

 private:
  std::function<void()> progress_;
  std::vector<std::vector<std::byte>> published_;
};

/// Chooses the bootstrap from the environment (ONESIDED_BOOTSTRAP=pmix|tcp|singleton forces one):
///  - onesided-run's rendezvous when ONESIDED_RENDEZVOUS is set: onesided-run sets
///    ONESIDED_RANK, ONESIDED_SIZE, ONESIDED_RENDEZVOUS=127.0.0.1:PORT, ONESIDED_JOBID and
///    ONESIDED_SECRET (the job's secret, proved on the connection: wire.hpp) for
///    its own children, so they win over PMIx variables inherited from an outer launcher;
///  - PMIx when PMIX_NAMESPACE or a PMIX_SERVER_URI* variable is set (srun --mpi=pmix,
///    mpirun, prterun); a PMIx environment whose server cannot be reached is an error, and so
///    is one in a build without PMIx;
///  - otherwise a singleton (size 1), as an MPI program started without a launcher is.
std::unique_ptr<Bootstrap> makeFromEnvironment();
/// True when the environment carries a PMIx server's coordinates.
bool pmixEnvironmentPresent();
/// onesided-run's TCP rendezvous, from the ONESIDED_* variables.
std::unique_ptr<Bootstrap> makeTcp();
/// The PMIx client (throws when the build has no PMIx or the server is unreachable).
std::unique_ptr<Bootstrap> makePmix();
/// A one-rank bootstrap.
std::unique_ptr<Bootstrap> makeSingleton();
/// n bootstraps sharing one in-process rendezvous, for tests that run ranks as threads.
/// Each returned object is handed to one thread. ranksPerNode > 0 tells them they sit on nodes
/// of that many ranks (tests of what windows spanning nodes do); 0: all on one node.
std::vector<std::unique_ptr<Bootstrap>> makeInprocGroup(int n, int ranksPerNode = 0);

}  // namespace onesided::bootstrap
