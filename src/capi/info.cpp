// SPDX-License-Identifier: BSD-3-Clause
// MPI_Info objects, the window hints read from them (MPI_Win_create / allocate / set_info), and
// window names.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "capi/state.hpp"

namespace onesided::capi {
namespace {

std::string quoted(std::string_view s) {
  constexpr std::size_t kShown = 64;
  if (s.size() <= kShown) return "\"" + std::string(s) + "\"";
  return "\"" + std::string(s.substr(0, kShown)) + "...\" (" + std::to_string(s.size()) +
         " characters)";
}

/// A key argument: not NULL, not empty, shorter than MPI_MAX_INFO_KEY.
std::string_view checkKey(const char* key) {
  if (key == nullptr) throw Error(MPI_ERR_INFO_KEY, "key is NULL");
  const std::size_t n = std::strlen(key);
  if (n == 0) throw Error(MPI_ERR_INFO_KEY, "key is empty");
  if (n >= MPI_MAX_INFO_KEY) {
    throw Error(MPI_ERR_INFO_KEY, "key " + quoted(key) + " is longer than MPI_MAX_INFO_KEY - 1 (" +
                                      std::to_string(MPI_MAX_INFO_KEY - 1) + ") characters");
  }
  return {key, n};
}

auto findKey(InfoEntry& e, std::string_view key) {
  return std::find_if(e.pairs.begin(), e.pairs.end(),
                      [&](const auto& kv) { return kv.first == key; });
}

std::string lower(std::string_view v) {
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool parseBool(const std::string& key, const std::string& value) {
  const std::string v = lower(value);
  if (v == "true") return true;
  if (v == "false") return false;
  throw Error(MPI_ERR_INFO_VALUE,
              "info " + key + " is " + quoted(value) + ", neither \"true\" nor \"false\"");
}

/// accumulate_ordering: "none" or a comma list of rar, raw, war, waw (each at most once).
std::string parseOrdering(const std::string& value) {
  const std::string v = lower(value);
  if (v == "none") return v;
  std::string_view rest = v;
  unsigned seen = 0;
  constexpr std::string_view kNames[] = {"rar", "raw", "war", "waw"};
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const auto* it = std::find(std::begin(kNames), std::end(kNames), item);
    const auto bit = 1U << static_cast<unsigned>(it - std::begin(kNames));
    if (it == std::end(kNames) || (seen & bit) != 0) {
      throw Error(MPI_ERR_INFO_VALUE, "info accumulate_ordering is " + quoted(value) +
                                          ": expected \"none\" or a comma list of rar, raw, "
                                          "war, waw (each once)");
    }
    seen |= bit;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return v;
}

}  // namespace

void makeInfoEnv(int threadLevel) {
  // MPI-3.1 §8.7.2: how the process was started, as mpiexec's keys would have said it.
  auto e = std::make_unique<InfoEntry>();
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string a; std::getline(cmdline, a, '\0');) args.push_back(a);
  if (!args.empty()) {
    e->pairs.emplace_back("command", args.front());
    std::string rest;
    for (std::size_t i = 1; i < args.size(); ++i) rest += (i > 1 ? " " : "") + args[i];
    e->pairs.emplace_back("argv", rest);
  }
  e->pairs.emplace_back("maxprocs", std::to_string(state().ctx->size()));  // (before MPI_Init ends)
  struct utsname u {};
  if (uname(&u) == 0) {
    e->pairs.emplace_back("host", u.nodename);
    e->pairs.emplace_back("arch", u.machine);
  }
  if (char* cwd = getcwd(nullptr, 0); cwd != nullptr) {
    e->pairs.emplace_back("wdir", cwd);
    std::free(cwd);  // NOLINT(cppcoreguidelines-no-malloc): getcwd's buffer
  }
  constexpr const char* kLevels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                     "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
  e->pairs.emplace_back("thread_level", kLevels[threadLevel]);
  state().infos[MPI_INFO_ENV] = std::move(e);
}

MPI_Info addInfo(std::unique_ptr<InfoEntry> e) {
  auto& infos = state().infos;
  infos.push_back(std::move(e));
  return static_cast<MPI_Info>(infos.size() - 1);
}

InfoEntry& infoEntry(MPI_Info info) {
  requireInit();
  auto& infos = state().infos;
  if (info == MPI_INFO_NULL) throw Error(MPI_ERR_INFO, "info is MPI_INFO_NULL");
  if (info < 0 || static_cast<std::size_t>(info) >= infos.size()) {
    throw Error(MPI_ERR_INFO, "invalid info handle " + std::to_string(info));
  }
  auto& e = infos[static_cast<std::size_t>(info)];
  if (!e) throw Error(MPI_ERR_INFO, "info handle " + std::to_string(info) + " was freed");
  return *e;
}

WindowHints windowHints(MPI_Info info, const WindowHints& base) {
  WindowHints h = base;
  if (info == MPI_INFO_NULL) return h;
  for (const auto& [key, value] : infoEntry(info).pairs) {
    if (key == "no_locks") {
      h.noLocks = parseBool(key, value);
    } else if (key == "same_size") {
      h.sameSize = parseBool(key, value);
    } else if (key == "same_disp_unit") {
      h.sameDispUnit = parseBool(key, value);
    } else if (key == "alloc_shared_noncontig") {
      h.allocSharedNoncontig = parseBool(key, value);
    } else if (key == "accumulate_ops") {
      const std::string v = lower(value);
      if (v != "same_op" && v != "same_op_no_op") {
        throw Error(MPI_ERR_INFO_VALUE, "info accumulate_ops is " + quoted(value) +
                                            ", neither \"same_op\" nor \"same_op_no_op\"");
      }
      h.accumulateOps = v;
    } else if (key == "accumulate_ordering") {
      h.accumulateOrdering = parseOrdering(value);
    }
    // Other keys are hints for someone else (MPI-3.1 §9: ignore what is not recognised).
  }
  return h;
}

}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Info_create(MPI_Info* info) {
  return call("MPI_Info_create", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(info, "info");
    *info = capi::addInfo(std::make_unique<capi::InfoEntry>());
  });
}

int MPI_Info_set(MPI_Info info, const char* key, const char* value) {
  return call("MPI_Info_set", On::none(), [&] {
    auto& e = capi::infoEntry(info);
    const auto k = capi::checkKey(key);
    if (value == nullptr) throw onesided::Error(MPI_ERR_INFO_VALUE, "value is NULL");
    const std::size_t n = std::strlen(value);
    if (n == 0)
      throw onesided::Error(MPI_ERR_INFO_VALUE, "value of key " + std::string(k) + " is empty");
    if (n > MPI_MAX_INFO_VAL) {
      throw onesided::Error(MPI_ERR_INFO_VALUE, "value of key " + std::string(k) + " has " +
                                                    std::to_string(n) +
                                                    " characters, more than MPI_MAX_INFO_VAL (" +
                                                    std::to_string(MPI_MAX_INFO_VAL) + ")");
    }
    if (auto it = capi::findKey(e, k); it != e.pairs.end()) {
      it->second.assign(value, n);
    } else {
      e.pairs.emplace_back(std::string(k), std::string(value, n));
    }
  });
}

int MPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  return call("MPI_Info_get", On::none(), [&] {
    auto& e = capi::infoEntry(info);
    const auto k = capi::checkKey(key);
    if (valuelen < 0) {
      throw onesided::Error(MPI_ERR_ARG, "valuelen " + std::to_string(valuelen) + " is negative");
    }
    capi::requireArg(value, "value");
    capi::requireArg(flag, "flag");
    auto it = capi::findKey(e, k);
    *flag = it != e.pairs.end() ? 1 : 0;
    if (it == e.pairs.end()) return;
    // MPI-3.1 §9: at most valuelen characters, then the terminator (value holds valuelen + 1).
    const std::size_t n = std::min(it->second.size(), static_cast<std::size_t>(valuelen));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  });
}

int MPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  return call("MPI_Info_get_valuelen", On::none(), [&] {
    auto& e = capi::infoEntry(info);
    const auto k = capi::checkKey(key);
    capi::requireArg(valuelen, "valuelen");
    capi::requireArg(flag, "flag");
    auto it = capi::findKey(e, k);
    *flag = it != e.pairs.end() ? 1 : 0;
    if (it != e.pairs.end()) *valuelen = static_cast<int>(it->second.size());
  });
}

int MPI_Info_delete(MPI_Info info, const char* key) {
  return call("MPI_Info_delete", On::none(), [&] {
    auto& e = capi::infoEntry(info);
    const auto k = capi::checkKey(key);
    auto it = capi::findKey(e, k);
    if (it == e.pairs.end()) {
      throw onesided::Error(MPI_ERR_INFO_NOKEY,
                            "key " + capi::quoted(k) + " is not in info " + std::to_string(info));
    }
    e.pairs.erase(it);
  });
}

int MPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  return call("MPI_Info_dup", On::none(), [&] {
    auto& e = capi::infoEntry(info);
    capi::requireArg(newinfo, "newinfo");
    *newinfo = capi::addInfo(std::make_unique<capi::InfoEntry>(e));
  });
}

int MPI_Info_free(MPI_Info* info) {
  return call("MPI_Info_free", On::none(), [&] {
    capi::requireArg(info, "info");
    capi::infoEntry(*info);
    if (*info == MPI_INFO_ENV) throw onesided::Error(MPI_ERR_INFO, "MPI_INFO_ENV cannot be freed");
    capi::state().infos[static_cast<std::size_t>(*info)].reset();
    *info = MPI_INFO_NULL;
  });
}

int MPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  return call("MPI_Info_get_nkeys", On::none(), [&] {
    auto& e = capi::infoEntry(info);
    capi::requireArg(nkeys, "nkeys");
    *nkeys = static_cast<int>(e.pairs.size());
  });
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  return call("MPI_Info_get_nthkey", On::none(), [&] {
    auto& e = capi::infoEntry(info);
    if (n < 0 || static_cast<std::size_t>(n) >= e.pairs.size()) {
      throw onesided::Error(MPI_ERR_ARG, "n " + std::to_string(n) + " is not in [0, " +
                                             std::to_string(e.pairs.size()) +
                                             ") (the keys of info " + std::to_string(info) + ")");
    }
    capi::requireArg(key, "key");
    const std::string& k = e.pairs[static_cast<std::size_t>(n)].first;
    std::memcpy(key, k.c_str(), k.size() + 1);
  });
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info) {
  return call("MPI_Win_set_info", On::win(win), [&] {
    auto& w = *capi::winEntry(win).win;
    w.setHints(capi::windowHints(info, w.hints()));
  });
}

int MPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  return call("MPI_Win_get_info", On::win(win), [&] {
    auto& w = *capi::winEntry(win).win;
    capi::requireArg(info_used, "info_used");
    const onesided::WindowHints& h = w.hints();
    auto e = std::make_unique<capi::InfoEntry>();
    auto b = [](bool v) { return std::string(v ? "true" : "false"); };
    e->pairs = {{"no_locks", b(h.noLocks)},
                {"accumulate_ordering", h.accumulateOrdering},
                {"accumulate_ops", h.accumulateOps},
                {"same_size", b(h.sameSize)},
                {"same_disp_unit", b(h.sameDispUnit)}};
    if (w.flavor() == onesided::Flavor::kShared) {
      e->pairs.emplace_back("alloc_shared_noncontig", b(h.allocSharedNoncontig));
    }
    *info_used = capi::addInfo(std::move(e));
  });
}

int MPI_Win_set_name(MPI_Win win, const char* win_name) {
  return call("MPI_Win_set_name", On::win(win), [&] {
    auto& e = capi::winEntry(win);
    capi::requireArg(win_name, "win_name");
    // MPI-3.1 §6.8: longer names are truncated to MPI_MAX_OBJECT_NAME - 1 characters.
    e.name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  });
}

int MPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  return call("MPI_Win_get_name", On::win(win), [&] {
    auto& e = capi::winEntry(win);
    capi::requireArg(win_name, "win_name");
    capi::requireArg(resultlen, "resultlen");
    std::memcpy(win_name, e.name.c_str(), e.name.size() + 1);
    *resultlen = static_cast<int>(e.name.size());
  });
}

}  // extern "C"
