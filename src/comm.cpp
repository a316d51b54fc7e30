// SPDX-License-Identifier: BSD-3-Clause
#include "onesided/comm.hpp"

#include <algorithm>

#include "bootstrap/bootstrap.hpp"
#include "onesided/context.hpp"
#include "onesided/errors.hpp"
#include "window/sync.hpp"

namespace onesided {

Comm::Comm(Context& ctx, std::vector<int> worldRanks) : ctx_(ctx), ranks_(std::move(worldRanks)) {
  auto it = std::find(ranks_.begin(), ranks_.end(), ctx_.rank());
  if (it == ranks_.end()) throw Error(kErrIntern, "communicator does not contain this rank");
  rank_ = static_cast<int>(it - ranks_.begin());
  sync_ = std::make_unique<detail::SyncRegion>(ctx_, ranks_, rank_);
}

Comm::~Comm() = default;

void Comm::connectSync(const std::vector<std::vector<std::byte>>& infos) { sync_->connect(infos); }

std::vector<std::vector<std::byte>> Comm::allgather(std::span<const std::byte> mine) {
  if (size() == 1) return {std::vector<std::byte>(mine.begin(), mine.end())};
  if (size() == ctx_.size()) return ctx_.bootstrap().allgather(mine);
  // Sub-communicators arrive with the collectives; until then only world and self exist.
  throw Error(kErrUnsupportedOperation, "allgather on a sub-communicator is not supported yet");
}

void Comm::barrier() { sync_->barrier(); }

}  // namespace onesided
