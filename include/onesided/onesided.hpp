// SPDX-License-Identifier: BSD-3-Clause
// The C++ API: Context (one rank's runtime), Comm, Window (RMA), Datatype, Error.
#pragma once

#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"
#include "onesided/window.hpp"
