// SPDX-License-Identifier: BSD-3-Clause
// Attribute caching (MPI-3.1 §6.7, attr.cpp): what the calls that dup and free communicators,
// windows and datatypes, and MPI_Finalize, run of the attributes' callbacks.
#pragma once

#include <optional>

#include "onesided/errors.hpp"

namespace onesided::capi {

enum class AttrKind { kComm, kWin, kType };

/// MPI_Comm_dup / MPI_Type_dup: runs the copy callback of each attribute of `from`, in the order
/// the keyvals were created, and caches on `to` what they copy. A callback's error is thrown
/// after the attributes already copied to `to` are deleted again.
void copyAttrs(AttrKind kind, int from, int to);

/// MPI_*_free: runs the delete callback of each attribute of `obj`, last set first, and drops
/// them. A callback's error is thrown; that attribute and those set before it stay.
void deleteAttrs(AttrKind kind, int obj);

/// The start of MPI_Finalize (MPI-3.1 §8.7.1): deletes the attributes of MPI_COMM_SELF, then
/// those of MPI_COMM_WORLD, each last set first, all of them whatever the callbacks return. The
/// first callback error, if any, for MPI_Finalize to report once it is done.
std::optional<Error> finalizeAttrs();

}  // namespace onesided::capi
