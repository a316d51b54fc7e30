// SPDX-License-Identifier: BSD-3-Clause
// Ranks as threads: n bootstraps over one shared, reusable rendezvous (generation counter).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "bootstrap/bootstrap.hpp"
#include "onesided/errors.hpp"

namespace onesided::bootstrap {
namespace {

struct Shared {
  Shared(int n, int perNode) : size(n), perNode(perNode), slots(static_cast<std::size_t>(n)) {}
  std::mutex mu;
  std::condition_variable cv;
  int size;
  int perNode;  // ranks per simulated node (the first perNode ranks are one node, ...)
  int arrived = 0;
  unsigned generation = 0;
  std::vector<std::vector<std::byte>> slots;
  std::vector<std::vector<std::byte>> result;
  std::string aborted;  // non-empty once a member aborted
};

class Inproc final : public Bootstrap {
 public:
  Inproc(std::shared_ptr<Shared> shared, int rank) : shared_(std::move(shared)), rank_(rank) {}
  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return shared_->size; }
  [[nodiscard]] std::vector<int> nodePeers() const override {
    const int per = shared_->perNode;
    const int first = rank_ / per * per;
    std::vector<int> peers;
    for (int i = first; i < std::min(first + per, shared_->size); ++i) peers.push_back(i);
    return peers;
  }
  [[nodiscard]] std::string kind() const override { return "inproc"; }

  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override {
    Shared& s = *shared_;
    std::unique_lock<std::mutex> lock(s.mu);
    throwIfAborted();
    const unsigned gen = s.generation;
    s.slots[static_cast<std::size_t>(rank_)].assign(mine.begin(), mine.end());
    if (++s.arrived == s.size) {
      s.result.swap(s.slots);
      s.slots.assign(static_cast<std::size_t>(s.size), {});
      s.arrived = 0;
      ++s.generation;
      s.cv.notify_all();
      return s.result;
    }
    while (s.generation == gen) {
      throwIfAborted();
      s.cv.wait_for(lock, std::chrono::milliseconds(1));
      if (s.generation != gen) break;
      // Let this rank's transport move while it waits (the lock is not held meanwhile).
      lock.unlock();
      progress();
      lock.lock();
    }
    return s.result;  // valid until the next generation completes, which needs this rank
  }

  void barrier() override { (void)allgather({}); }

  void abort(int code, std::string_view message) override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    if (shared_->aborted.empty()) {
      shared_->aborted = "rank " + std::to_string(rank_) + " aborted (code " +
                         std::to_string(code) + "): " + std::string(message);
    }
    shared_->cv.notify_all();
  }

 private:
  void throwIfAborted() const {
    if (!shared_->aborted.empty()) throw Error(kErrOther, shared_->aborted);
  }
  std::shared_ptr<Shared> shared_;
  int rank_;
};

}  // namespace

std::vector<std::unique_ptr<Bootstrap>> makeInprocGroup(int n, int ranksPerNode) {
  if (n < 1) throw Error(kErrArg, "in-process group of " + std::to_string(n) + " ranks");
  auto shared = std::make_shared<Shared>(n, ranksPerNode > 0 ? ranksPerNode : n);
  std::vector<std::unique_ptr<Bootstrap>> out;
  for (int r = 0; r < n; ++r) out.push_back(std::make_unique<Inproc>(shared, r));
  return out;
}

std::unique_ptr<Bootstrap> makeSingleton() {
  class Singleton final : public Bootstrap {
   public:
    [[nodiscard]] int rank() const override { return 0; }
    [[nodiscard]] int size() const override { return 1; }
    [[nodiscard]] std::vector<int> nodePeers() const override { return {0}; }
    [[nodiscard]] std::string kind() const override { return "singleton"; }
    std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override {
      return {std::vector<std::byte>(mine.begin(), mine.end())};
    }
    void barrier() override {}
  };
  return std::make_unique<Singleton>();
}

}  // namespace onesided::bootstrap
