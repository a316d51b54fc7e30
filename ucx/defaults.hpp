// SPDX-License-Identifier: BSD-3-Clause
// The UCX settings the runtime chooses itself where the user did not set them (UCX_<NAME> in
// the environment), applied to the ucp configuration it reads (ucp_config_modify: the process
// environment is left alone). Pure functions of what they are given, for the unit tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace onesided::transport::ucx {

/// An RDMA device as sysfs describes it (/sys/class/infiniband/<name>).
struct RdmaDevice {
  std::string name;
  bool softRoce = false;  // the kernel's soft-RoCE driver (rdma_rxe)
  bool active = false;    // some port's state is ACTIVE
};

/// The RDMA devices under `root` (normally /sys/class/infiniband); none when it does not exist.
/// A device is soft-RoCE when sysfs shows rxe's `parent` attribute (the Ethernet device it
/// runs over) or its name starts with "rxe" (what `rdma link add rxeN type rxe` names it).
std::vector<RdmaDevice> rdmaDevices(const std::string& root);

/// One UCX variable (without its UCX_ prefix) and the value the runtime gives it.
struct Setting {
  std::string name;
  std::string value;
  std::string why;
};

/// What the runtime sets, given the devices and the environment (`env(name)`: the value of
/// the environment variable, or null), skipping every variable the user set:
///   - TLS=^sysv: UCX makes its System V segments mode 0660 (hard-coded: UCT_MM_SYSV_PERM), so
///     members of the user's group could attach them and read or write window memory; its
///     POSIX segments (0600) and cross-memory attach serve the same purposes.
///   - with an active soft-RoCE port: UD_TIMEOUT=600s. UCX uses ud_verbs there (for the wire-up
///     of rc_verbs lanes, and atomics on the device) and ends the process with "UD endpoint ...
///     unhandled timeout error" when a peer acknowledges nothing for UD_TIMEOUT (30 s by
///     default), which with peers already gone happened at exit; the soft-RoCE VM's suite
///     (tests/rxe/suite.sh) runs with the same value. The launcher's time limit still ends a
///     job whose peer never answers.
///   - with active RDMA ports that are all soft-RoCE: IB_GID_INDEX=0, the GID rxe derives from
///     its Ethernet device's MAC address (link-local), which every rxe port has; UCX's own
///     choice may be an address GID that does not route (as the VM's suite found).
std::vector<Setting> chooseSettings(const std::vector<RdmaDevice>& devices,
                                    const std::function<const char*(const char*)>& env);

}  // namespace onesided::transport::ucx
