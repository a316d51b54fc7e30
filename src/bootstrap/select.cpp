// SPDX-License-Identifier: BSD-3-Clause
// Which bootstrap a process started by some launcher uses (bootstrap.hpp, makeFromEnvironment).
#include <cstdlib>
#include <cstring>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "log.hpp"
#include "onesided/errors.hpp"
#include "settings.hpp"

extern char** environ;  // NOLINT: POSIX

namespace onesided::bootstrap {
namespace {

bool set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

}  // namespace

bool pmixEnvironmentPresent() {
  if (set("PMIX_NAMESPACE")) return true;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "PMIX_SERVER_URI", 15) == 0) return true;
  }
  return false;
}

#ifndef ONESIDED_HAVE_PMIX
std::unique_ptr<Bootstrap> makePmix() {
  throw Error(kErrOther,
              "bootstrap: started under a PMIx launcher (PMIX_* variables are set) but this "
              "build of onesided has no PMIx support (configure with libpmix-dev installed)");
}
#endif

std::unique_ptr<Bootstrap> makeFromEnvironment() {
  if (const char* forced = settings::raw(settings::Id::kBootstrap); forced != nullptr && *forced) {
    const std::string f = forced;
    if (f == "pmix") return makePmix();
    if (f == "tcp") return makeTcp();
    if (f == "singleton") return makeSingleton();
    throw Error(kErrArg, "ONESIDED_BOOTSTRAP='" + f + "': expected pmix, tcp or singleton");
  }
  if (set(settings::get(settings::Id::kRendezvous).name)) return makeTcp();
  if (pmixEnvironmentPresent()) return makePmix();
  return makeSingleton();
}

}  // namespace onesided::bootstrap
