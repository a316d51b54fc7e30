// SPDX-License-Identifier: BSD-3-Clause
// MPI_T_init_thread, MPI_T_finalize (MPI-3.1 §14.3.4) and the enumerations (§14.3.5): one per
// control variable of a few words (settings::Type::kChoice), numbered by that setting's index.
#include <algorithm>
#include <cstring>

#include "capi/mpit.hpp"

namespace onesided::capi::mpit {

Tool& tool() noexcept {
  static Tool t;
  return t;
}

void copyString(std::string_view s, char* out, int* len) noexcept {
  if (len == nullptr) return;
  if (out == nullptr || *len <= 0) {
    *len = static_cast<int>(s.size()) + 1;
    return;
  }
  const std::size_t n = std::min(s.size(), static_cast<std::size_t>(*len - 1));
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
  *len = static_cast<int>(n) + 1;
}

namespace {

/// The setting behind enumeration `e` (MPI_T_enum handles are 1 + a kChoice setting's index).
const settings::Setting* enumSetting(MPI_T_enum e) noexcept {
  const auto all = settings::all();
  if (e <= 0 || static_cast<std::size_t>(e) > all.size()) return nullptr;
  const settings::Setting& s = all[static_cast<std::size_t>(e) - 1];
  return s.type == settings::Type::kChoice && !s.internal ? &s : nullptr;
}

int choiceCount(const settings::Setting& s) noexcept {
  int n = 0;
  while (s.choices[n] != nullptr) ++n;
  return n;
}

}  // namespace
}  // namespace onesided::capi::mpit

using onesided::capi::mpit::call;
using onesided::capi::mpit::Tool;

extern "C" {

int MPI_T_init_thread(int required, int* provided) {
  if (provided == nullptr) return MPI_T_ERR_INVALID;
  try {
    Tool& t = onesided::capi::mpit::tool();
    const std::lock_guard<std::mutex> lock(t.mutex);
    ++t.inits;
  } catch (...) {
    return MPI_T_ERR_CANNOT_INIT;
  }
  // Every level up to MPI_THREAD_MULTIPLE: the calls take the tool's mutex.
  *provided = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
              : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                               : required;
  return MPI_SUCCESS;
}

int MPI_T_finalize(void) {
  return call([](Tool& t) {
    // The last one ends every session and handle (their numbers are not reused).
    if (--t.inits == 0) {
      for (int& h : t.cvarHandles) h = -1;
      for (auto& h : t.pvarHandles) h = {};
      for (std::size_t i = 0; i < t.sessions.size(); ++i) t.sessions[i] = false;
    }
    return MPI_SUCCESS;
  });
}

int MPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
  return call([&](Tool&) {
    const auto* s = onesided::capi::mpit::enumSetting(enumtype);
    if (s == nullptr) return MPI_T_ERR_INVALID_HANDLE;
    if (num != nullptr) *num = onesided::capi::mpit::choiceCount(*s);
    onesided::capi::mpit::copyString(s->name, name, name_len);
    return MPI_SUCCESS;
  });
}

int MPI_T_enum_get_item(MPI_T_enum enumtype, int index, int* value, char* name, int* name_len) {
  return call([&](Tool&) {
    const auto* s = onesided::capi::mpit::enumSetting(enumtype);
    if (s == nullptr) return MPI_T_ERR_INVALID_HANDLE;
    if (index < 0 || index >= onesided::capi::mpit::choiceCount(*s)) {
      return MPI_T_ERR_INVALID_ITEM;
    }
    if (value != nullptr) *value = index;
    onesided::capi::mpit::copyString(s->choices[index], name, name_len);
    return MPI_SUCCESS;
  });
}

}  // extern "C"
