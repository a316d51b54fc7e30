// SPDX-License-Identifier: BSD-3-Clause
// General active target synchronisation (MPI_Win_post / start / complete / wait / test) and
// MPI_Win_get_group: the C entry points over onesided::Window.
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capi/state.hpp"

namespace onesided::capi {
namespace {

/// The members of `g` as ranks of the window's group (cached in `last`); MPI_ERR_GROUP naming
/// a member that is not in it.
std::span<const int> windowRanks(const Window& w, MPI_Group g, WinEntry::GroupRanks& last) {
  const Group& group = capi::group(g);  // a freed or invalid handle fails here, cached or not
  if (last.handle == g && g != MPI_GROUP_NULL) return last.ranks;
  std::vector<int> ranks = Group(w.comm().worldRanks()).ranksOf(group.worldRanks());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0) {
      throw Error(MPI_ERR_GROUP, "member " + std::to_string(i) + " of group " + std::to_string(g) +
                                     " (world rank " +
                                     std::to_string(group.worldRank(static_cast<int>(i))) +
                                     ") is not in the window's group");
    }
  }
  last.handle = g;
  last.ranks = std::move(ranks);
  return last.ranks;
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  return call("MPI_Win_post", On::win(win), [&] {
    auto& e = capi::winEntry(win);
    e.win->post(capi::windowRanks(*e.win, group, e.postRanks), assert);
  });
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  return call("MPI_Win_start", On::win(win), [&] {
    auto& e = capi::winEntry(win);
    e.win->start(capi::windowRanks(*e.win, group, e.startRanks), assert);
  });
}

int MPI_Win_complete(MPI_Win win) {
  return call("MPI_Win_complete", On::win(win), [&] { capi::winEntry(win).win->completeAccess(); });
}

int MPI_Win_wait(MPI_Win win) {
  return call("MPI_Win_wait", On::win(win), [&] { capi::winEntry(win).win->wait(); });
}

int MPI_Win_test(MPI_Win win, int* flag) {
  return call("MPI_Win_test", On::win(win), [&] {
    auto& w = *capi::winEntry(win).win;
    capi::requireArg(flag, "flag");
    *flag = w.test() ? 1 : 0;
  });
}

int MPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  return call("MPI_Win_get_group", On::win(win), [&] {
    auto& w = *capi::winEntry(win).win;
    capi::requireArg(group, "group");
    *group = capi::addGroup(w.comm().group());
  });
}

}  // extern "C"
