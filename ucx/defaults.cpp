// SPDX-License-Identifier: BSD-3-Clause
// The UCX settings the runtime chooses (defaults.hpp).
#include "ucx/defaults.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace onesided::transport::ucx {

std::vector<RdmaDevice> rdmaDevices(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<RdmaDevice> out;
  std::error_code ec;
  for (const auto& dev : fs::directory_iterator(root, ec)) {
    RdmaDevice d;
    d.name = dev.path().filename().string();
    d.softRoce = d.name.rfind("rxe", 0) == 0 || fs::exists(dev.path() / "parent", ec);
    for (const auto& port : fs::directory_iterator(dev.path() / "ports", ec)) {
      std::ifstream f(port.path() / "state");
      std::string state;
      std::getline(f, state);
      if (state.find("ACTIVE") != std::string::npos) d.active = true;
    }
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(),
            [](const RdmaDevice& a, const RdmaDevice& b) { return a.name < b.name; });
  return out;
}

std::vector<Setting> chooseSettings(const std::vector<RdmaDevice>& devices,
                                    const std::function<const char*(const char*)>& env) {
  std::vector<Setting> out;
  auto unset = [&](const char* var) {
    const char* v = env(var);
    return v == nullptr;
  };
  // Not UCX_TLS=^sysv, although UCX 1.13 makes its System V segments mode 0660: without them its
  // POSIX segments are reached through /proc/<pid>/fd, and unpacking the key of a peer killed
  // meanwhile then crashes inside UCX (ucp_ep_rkey_unpack's cleanup, uct_posix_rkey_release on a
  // null segment), where a System V segment is still attachable and the job ends with the line
  // naming the killed rank (tests/cluster's "mpirun -np 4: rank 1 killed" step).
  (void)unset;
  bool softActive = false;
  bool hardActive = false;
  for (const RdmaDevice& d : devices) {
    if (!d.active) continue;
    (d.softRoce ? softActive : hardActive) = true;
  }
  if (softActive && unset("UCX_UD_TIMEOUT")) {
    out.push_back({"UD_TIMEOUT", "600s",
                   "soft-RoCE: UD endpoints otherwise end the process after 30 s without an "
                   "acknowledgement (at exit, when peers are gone)"});
  }
  if (softActive && !hardActive && unset("UCX_IB_GID_INDEX")) {
    out.push_back({"IB_GID_INDEX", "0", "soft-RoCE: the link-local GID every rxe port has"});
  }
  return out;
}

}  // namespace onesided::transport::ucx
