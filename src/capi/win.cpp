// SPDX-License-Identifier: BSD-3-Clause
// Windows, RMA and memory: the C entry points over onesided::Window.
#include <cstdlib>
#include <cstring>

#include "capi/attr.hpp"
#include "capi/state.hpp"

namespace onesided::capi {
namespace {

/// MPI_INFO_NULL or a live info object (whose keys MPI_Alloc_mem ignores).
void checkInfo(MPI_Info info) {
  if (info != MPI_INFO_NULL) infoEntry(info);
}

MPI_Win addWindow(std::unique_ptr<Window> w) {
  auto& s = state();
  auto e = std::make_unique<WinEntry>();
  e->sizeAttr = static_cast<MPI_Aint>(w->size());
  e->dispUnitAttr = w->dispUnit();
  e->flavorAttr = static_cast<int>(w->flavor());
  e->win = std::move(w);
  // The window inherits nothing: MPI_ERRORS_ARE_FATAL is the default for windows (MPI-3.1 §8.3).
  s.wins.push_back(std::move(e));
  return static_cast<MPI_Win>(s.wins.size() - 1);
}

/// Argument errors found before the collective part; the rank still takes part in it so the
/// others fail with it instead of waiting (Window::create / allocate).
template <class Check>
std::unique_ptr<Error> precheck(Check&& check) {
  try {
    check();
  } catch (const Error& e) {
    return std::make_unique<Error>(e);
  }
  return nullptr;
}

/// MPI_Win_allocate and MPI_Win_allocate_shared: the same arguments, another constructor.
template <class Make>
int allocateWindow(const char* name, Make make, MPI_Aint size, int dispUnit, MPI_Info info,
                   MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return call(name, On::comm(comm), [&] {
    capi::requireIntra(comm, "a window");
    auto& c = capi::collComm(comm);
    WindowHints hints;
    auto err = precheck([&] {
      hints = windowHints(info);
      requireArg(baseptr, "baseptr");
      requireArg(win, "win");
    });
    auto w = make(c, size, dispUnit, err.get(), hints);
    void* base = w->base();
    std::memcpy(baseptr, &base, sizeof base);
    *win = addWindow(std::move(w));
  });
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  return call("MPI_Alloc_mem", On::none(), [&] {
    capi::requireInit();
    if (size < 0)
      throw onesided::Error(MPI_ERR_SIZE, "size " + std::to_string(size) + " is negative");
    capi::checkInfo(info);
    capi::requireArg(baseptr, "baseptr");
    void* p = capi::context().allocMemory(static_cast<std::size_t>(size));
    std::memcpy(baseptr, &p, sizeof p);
  });
}

int MPI_Free_mem(void* base) {
  return call("MPI_Free_mem", On::none(), [&] {
    if (!capi::context().freeMemory(base)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%p", base);
      throw onesided::Error(MPI_ERR_BASE,
                            std::string("pointer ") + buf + " was not returned by MPI_Alloc_mem");
    }
  });
}

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win* win) {
  return call("MPI_Win_create", On::comm(comm), [&] {
    capi::requireIntra(comm, "a window");
    auto& c = capi::collComm(comm);
    onesided::WindowHints hints;
    auto err = capi::precheck([&] {
      hints = capi::windowHints(info);
      capi::requireArg(win, "win");
    });
    auto w = onesided::Window::create(c, base, size, disp_unit, err.get(), hints);
    *win = capi::addWindow(std::move(w));
  });
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                     MPI_Win* win) {
  return capi::allocateWindow("MPI_Win_allocate", &onesided::Window::allocate, size, disp_unit,
                              info, comm, baseptr, win);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void* baseptr, MPI_Win* win) {
  return capi::allocateWindow("MPI_Win_allocate_shared", &onesided::Window::allocateShared, size,
                              disp_unit, info, comm, baseptr, win);
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  return call("MPI_Win_shared_query", On::win(win), [&] {
    auto& w = *capi::winEntry(win).win;
    capi::requireArg(size, "size");
    capi::requireArg(disp_unit, "disp_unit");
    capi::requireArg(baseptr, "baseptr");
    std::size_t bytes = 0;
    int unit = 0;
    void* base = nullptr;
    w.sharedQuery(rank, bytes, unit, base);
    *size = static_cast<MPI_Aint>(bytes);
    *disp_unit = unit;
    std::memcpy(baseptr, &base, sizeof base);
  });
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return call("MPI_Win_create_dynamic", On::comm(comm), [&] {
    capi::requireIntra(comm, "a window");
    auto& c = capi::collComm(comm);
    onesided::WindowHints hints;
    auto err = capi::precheck([&] {
      hints = capi::windowHints(info);
      capi::requireArg(win, "win");
    });
    auto w = onesided::Window::createDynamic(c, err.get(), hints);
    *win = capi::addWindow(std::move(w));
  });
}

int MPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  return call("MPI_Win_attach", On::win(win), [&] { capi::winEntry(win).win->attach(base, size); });
}

int MPI_Win_detach(MPI_Win win, const void* base) {
  return call("MPI_Win_detach", On::win(win), [&] { capi::winEntry(win).win->detach(base); });
}

int MPI_Win_free(MPI_Win* win) {
  return call("MPI_Win_free", On::win(win != nullptr ? *win : MPI_WIN_NULL), [&] {
    capi::requireArg(win, "win");
    capi::winEntry(*win);
    // MPI-3.1 §6.7.3: the attributes' delete callbacks run first; one that fails fails the call.
    capi::deleteAttrs(capi::AttrKind::kWin, *win);
    auto& e = capi::winEntry(*win);
    e.win->free();
    capi::state().wins[static_cast<std::size_t>(*win)].reset();
    *win = MPI_WIN_NULL;
  });
}

int MPI_Win_fence(int assert, MPI_Win win) {
  return call("MPI_Win_fence", On::win(win), [&] { capi::winEntry(win).win->fence(assert); });
}

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win) {
  return call("MPI_Put", On::win(win), [&] {
    capi::requireNotInPlace(origin_addr, "origin_addr");
    auto& w = *capi::winEntry(win).win;
    const auto& ot = capi::datatype(origin_datatype);
    const auto& tt = capi::datatype(target_datatype);
    w.put(origin_addr, origin_count, ot, target_rank, target_disp, target_count, tt);
  });
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return call("MPI_Get", On::win(win), [&] {
    capi::requireNotInPlace(origin_addr, "origin_addr");
    auto& w = *capi::winEntry(win).win;
    const auto& ot = capi::datatype(origin_datatype);
    const auto& tt = capi::datatype(target_datatype);
    w.get(origin_addr, origin_count, ot, target_rank, target_disp, target_count, tt);
  });
}

}  // extern "C"
