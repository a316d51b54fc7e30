// SPDX-License-Identifier: BSD-3-Clause
#include "transport/unmap_events.hpp"

#include "log.hpp"

#ifdef ONESIDED_HAVE_UCX
#include <ucm/api/ucm.h>
#endif

namespace onesided::transport {
namespace {

#ifdef ONESIDED_HAVE_UCX
/// ucm calls this before memory leaves the address space, on whatever thread unmaps it.
void onUnmap(ucm_event_type_t type, ucm_event_t* event, void* arg) {
  if (type != UCM_EVENT_VM_UNMAPPED) return;
  const auto lo = reinterpret_cast<std::uintptr_t>(event->vm_unmapped.address);
  static_cast<UnmapEvents*>(arg)->push(lo, lo + event->vm_unmapped.size);
}
#endif

}  // namespace

bool UnmapEvents::listen(const char* what) {
  if (listening_) return true;
#ifdef ONESIDED_HAVE_UCX
  const ucs_status_t s = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 1000, onUnmap, this);
  listening_ = s == UCS_OK;
  if (!listening_) log::core().info("{}: no memory events ({})", what, ucs_status_string(s));
#else
  log::core().debug("{}: no memory events (built without UCX)", what);
#endif
  return listening_;
}

UnmapEvents::~UnmapEvents() {
#ifdef ONESIDED_HAVE_UCX
  if (listening_) ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, onUnmap, this);
#endif
}

}  // namespace onesided::transport
