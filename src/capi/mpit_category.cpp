// SPDX-License-Identifier: BSD-3-Clause
// MPI_T's categories (MPI-3.1 §14.3.8): one per settings::Category, holding its control
// variables (settings.cpp) and performance variables (mpit_pvar.cpp); no subcategories. The
// lists never change: MPI_T_category_changed's stamp stays 0.
#include <cstring>

#include "capi/mpit.hpp"

namespace onesided::capi::mpit {

const std::vector<CategoryInfo>& categories() {
  // In settings::Category's order.
  static const std::vector<CategoryInfo> list = {
      {"transport", "the network transport (verbs, UCX) and the memory it shares on a node"},
      {"rma", "one-sided communication: windows, puts, gets and accumulates"},
      {"p2p", "point-to-point messages"},
      {"collectives", "collective operations"},
      {"runtime", "waiting, logging and the process's placement"},
      {"launcher", "how the ranks find each other (onesided-run, PMIx)"},
  };
  return list;
}

namespace {

std::vector<int> cvarsOf(int cat) {
  std::vector<int> v;
  const auto& list = cvarSettings();
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (static_cast<int>(settings::all()[static_cast<std::size_t>(list[i])].category) == cat) {
      v.push_back(static_cast<int>(i));
    }
  }
  return v;
}

std::vector<int> pvarsOf(int cat) {
  std::vector<int> v;
  for (std::size_t i = 0; i < pvars().size(); ++i) {
    if (static_cast<int>(pvars()[i].category) == cat) v.push_back(static_cast<int>(i));
  }
  return v;
}

bool valid(int cat) { return cat >= 0 && static_cast<std::size_t>(cat) < categories().size(); }

int fill(const std::vector<int>& v, int len, int indices[]) {
  if (len < 0 || (len > 0 && indices == nullptr)) return MPI_T_ERR_INVALID;
  for (std::size_t i = 0; i < v.size() && static_cast<int>(i) < len; ++i) indices[i] = v[i];
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace onesided::capi::mpit

namespace mpit = onesided::capi::mpit;

extern "C" {

int MPI_T_category_get_num(int* num_cat) {
  return mpit::call([&](mpit::Tool&) {
    if (num_cat == nullptr) return MPI_T_ERR_INVALID;
    *num_cat = static_cast<int>(mpit::categories().size());
    return MPI_SUCCESS;
  });
}

int MPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                            int* num_cvars, int* num_pvars, int* num_categories) {
  return mpit::call([&](mpit::Tool&) {
    if (!mpit::valid(cat_index)) return MPI_T_ERR_INVALID_INDEX;
    const mpit::CategoryInfo& c = mpit::categories()[static_cast<std::size_t>(cat_index)];
    mpit::copyString(c.name, name, name_len);
    mpit::copyString(c.desc, desc, desc_len);
    if (num_cvars != nullptr) *num_cvars = static_cast<int>(mpit::cvarsOf(cat_index).size());
    if (num_pvars != nullptr) *num_pvars = static_cast<int>(mpit::pvarsOf(cat_index).size());
    if (num_categories != nullptr) *num_categories = 0;
    return MPI_SUCCESS;
  });
}

int MPI_T_category_get_index(const char* name, int* cat_index) {
  return mpit::call([&](mpit::Tool&) {
    if (name == nullptr || cat_index == nullptr) return MPI_T_ERR_INVALID;
    const auto& list = mpit::categories();
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (std::strcmp(list[i].name, name) == 0) {
        *cat_index = static_cast<int>(i);
        return MPI_SUCCESS;
      }
    }
    return MPI_T_ERR_INVALID_NAME;
  });
}

int MPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  return mpit::call([&](mpit::Tool&) {
    if (!mpit::valid(cat_index)) return MPI_T_ERR_INVALID_INDEX;
    return mpit::fill(mpit::cvarsOf(cat_index), len, indices);
  });
}

int MPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  return mpit::call([&](mpit::Tool&) {
    if (!mpit::valid(cat_index)) return MPI_T_ERR_INVALID_INDEX;
    return mpit::fill(mpit::pvarsOf(cat_index), len, indices);
  });
}

int MPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  return mpit::call([&](mpit::Tool&) {
    if (!mpit::valid(cat_index)) return MPI_T_ERR_INVALID_INDEX;
    return mpit::fill({}, len, indices);
  });
}

int MPI_T_category_changed(int* stamp) {
  return mpit::call([&](mpit::Tool&) {
    if (stamp == nullptr) return MPI_T_ERR_INVALID;
    *stamp = 0;
    return MPI_SUCCESS;
  });
}

}  // extern "C"
