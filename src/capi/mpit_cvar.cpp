// SPDX-License-Identifier: BSD-3-Clause
// MPI_T's control variables (MPI-3.1 §14.3.6): the ONESIDED_* settings table (settings.cpp),
// launcher-internal variables left out. Each is read once (at MPI_Init, or when its part of the
// runtime starts), so none can change while the program runs: MPI_T_cvar_write is always
// MPI_T_ERR_CVAR_SET_NEVER, and the scope says so too (MPI_T_SCOPE_READONLY for the settings
// each rank may set alike or not, MPI_T_SCOPE_ALL_EQ for those every rank must set alike).
#include <algorithm>
#include <cstring>
#include <string_view>

#include "capi/mpit.hpp"

namespace onesided::capi::mpit {

const std::vector<int>& cvarSettings() {
  static const std::vector<int> list = [] {
    std::vector<int> v;
    const auto all = settings::all();
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!all[i].internal) v.push_back(static_cast<int>(i));
    }
    return v;
  }();
  return list;
}

namespace {

/// A text variable's count: the buffer MPI_T_cvar_read fills (null included; longer values are
/// cut short).
constexpr int kTextCount = 1024;

const settings::Setting* cvar(int index) {
  const auto& list = cvarSettings();
  if (index < 0 || static_cast<std::size_t>(index) >= list.size()) return nullptr;
  return &settings::all()[static_cast<std::size_t>(list[static_cast<std::size_t>(index)])];
}

MPI_Datatype typeOf(const settings::Setting& s) {
  switch (s.type) {
    case settings::Type::kCount:
      return MPI_UNSIGNED_LONG_LONG;
    case settings::Type::kChoice:
      return MPI_INT;
    case settings::Type::kText:
      break;
  }
  return MPI_CHAR;
}

}  // namespace
}  // namespace onesided::capi::mpit

namespace mpit = onesided::capi::mpit;
namespace settings = onesided::settings;

extern "C" {

int MPI_T_cvar_get_num(int* num_cvar) {
  return mpit::call([&](mpit::Tool&) {
    if (num_cvar == nullptr) return MPI_T_ERR_INVALID;
    *num_cvar = static_cast<int>(mpit::cvarSettings().size());
    return MPI_SUCCESS;
  });
}

int MPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* scope) {
  return mpit::call([&](mpit::Tool&) {
    const settings::Setting* s = mpit::cvar(cvar_index);
    if (s == nullptr) return MPI_T_ERR_INVALID_INDEX;
    mpit::copyString(s->name, name, name_len);
    if (verbosity != nullptr)
      *verbosity = MPI_T_VERBOSITY_USER_BASIC + static_cast<int>(s->verbosity);
    if (datatype != nullptr) *datatype = mpit::typeOf(*s);
    if (enumtype != nullptr) {
      // MPI_T_enum handles are 1 + the setting's index in the table (mpit_init.cpp).
      *enumtype = s->type == settings::Type::kChoice
                      ? static_cast<MPI_T_enum>(s - settings::all().data()) + 1
                      : MPI_T_ENUM_NULL;
    }
    mpit::copyString(s->meaning, desc, desc_len);
    if (bind != nullptr) *bind = MPI_T_BIND_NO_OBJECT;
    if (scope != nullptr) {
      *scope = s->scope == settings::Scope::kAllEq ? MPI_T_SCOPE_ALL_EQ : MPI_T_SCOPE_READONLY;
    }
    return MPI_SUCCESS;
  });
}

int MPI_T_cvar_get_index(const char* name, int* cvar_index) {
  return mpit::call([&](mpit::Tool&) {
    if (name == nullptr || cvar_index == nullptr) return MPI_T_ERR_INVALID;
    const auto& list = mpit::cvarSettings();
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (std::strcmp(settings::all()[static_cast<std::size_t>(list[i])].name, name) == 0) {
        *cvar_index = static_cast<int>(i);
        return MPI_SUCCESS;
      }
    }
    return MPI_T_ERR_INVALID_NAME;
  });
}

int MPI_T_cvar_handle_alloc(int cvar_index, void* /*obj_handle*/, MPI_T_cvar_handle* handle,
                            int* count) {
  return mpit::call([&](mpit::Tool& t) {
    const settings::Setting* s = mpit::cvar(cvar_index);
    if (s == nullptr) return MPI_T_ERR_INVALID_INDEX;
    if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
    // Bound to no object: obj_handle is ignored (MPI-3.1 §14.3.6.2).
    t.cvarHandles.push_back(cvar_index);
    *handle = static_cast<MPI_T_cvar_handle>(t.cvarHandles.size() - 1);
    *count = s->type == settings::Type::kText ? mpit::kTextCount : 1;
    return MPI_SUCCESS;
  });
}

int MPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  return mpit::call([&](mpit::Tool& t) {
    if (handle == nullptr) return MPI_T_ERR_INVALID;
    if (*handle <= 0 || static_cast<std::size_t>(*handle) >= t.cvarHandles.size() ||
        t.cvarHandles[static_cast<std::size_t>(*handle)] < 0) {
      return MPI_T_ERR_INVALID_HANDLE;
    }
    t.cvarHandles[static_cast<std::size_t>(*handle)] = -1;
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
  });
}

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  return mpit::call([&](mpit::Tool& t) {
    if (handle <= 0 || static_cast<std::size_t>(handle) >= t.cvarHandles.size() ||
        t.cvarHandles[static_cast<std::size_t>(handle)] < 0) {
      return MPI_T_ERR_INVALID_HANDLE;
    }
    if (buf == nullptr) return MPI_T_ERR_INVALID;
    const settings::Setting& s = *mpit::cvar(t.cvarHandles[static_cast<std::size_t>(handle)]);
    // An environment value the setting's reader refuses (MPI_Init fails with it) reads as the
    // default.
    auto v = settings::current(s);
    if (!v) v = settings::parse(s, nullptr);
    switch (s.type) {
      case settings::Type::kCount: {
        const unsigned long long n = v->number;
        std::memcpy(buf, &n, sizeof n);
        break;
      }
      case settings::Type::kChoice:
        std::memcpy(buf, &v->choice, sizeof v->choice);
        break;
      case settings::Type::kText: {
        int len = mpit::kTextCount;
        mpit::copyString(v->text, static_cast<char*>(buf), &len);
        break;
      }
    }
    return MPI_SUCCESS;
  });
}

int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void* /*buf*/) {
  return mpit::call([&](mpit::Tool& t) {
    if (handle <= 0 || static_cast<std::size_t>(handle) >= t.cvarHandles.size() ||
        t.cvarHandles[static_cast<std::size_t>(handle)] < 0) {
      return MPI_T_ERR_INVALID_HANDLE;
    }
    return MPI_T_ERR_CVAR_SET_NEVER;  // read once by the runtime (the file's comment)
  });
}

}  // extern "C"
