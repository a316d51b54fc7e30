// SPDX-License-Identifier: BSD-3-Clause
// Every ONESIDED_* environment setting the library reads, in one table (settings.cpp): the
// readers take their variable through it, MPI_T lists it as control variables, and the tables
// of docs/settings.md are generated from it (onesided-run --settings-table; a unit test checks
// that the page matches), so the three cannot drift apart.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace onesided::settings {

/// Each setting's identifier: the readers name their variable by it.
enum class Id : std::uint8_t {
  kTransport,
  kDevice,
  kGidIndex,
  kLog,
  kSharePages,
  kWait,
  kBalance,
  kAccumulate,
  kUcxThreadDirect,
  kProgressThread,
  kCollAlg,
  kCollChunk,
  kCollInflight,
  kCollZcopy,
  kCollShare,
  kCollAttach,
  kCopyBackward,
  kCollCell,
  kCollRing,
  kP2pRing,
  kP2pEager,
  kP2pAttach,
  kRegcacheMb,
  kBootstrap,
  kRank,
  kSize,
  kLocalRank,
  kLocalSize,
  kRendezvous,
  kJobid,
  kSecret,
  kReportFd,
  kReportSignal,
  kNum_
};

/// How the value reads: a number in [lo, hi], one of a few words, or free text.
enum class Type : std::uint8_t { kCount, kChoice, kText };
/// MPI_T's scopes (MPI-3.1 §14.3.6): what may differ between ranks.
enum class Scope : std::uint8_t { kLocal, kAllEq };
/// MPI_T's verbosity levels (user / tuner / MPI developer, basic / detail / all).
enum class Verbosity : std::uint8_t {
  kUserBasic,
  kUserDetail,
  kUserAll,
  kTunerBasic,
  kTunerDetail,
  kTunerAll,
  kMpidevBasic,
  kMpidevDetail,
  kMpidevAll
};
/// The MPI_T category a setting belongs to (categories.cpp of the C API lists their names).
enum class Category : std::uint8_t { kTransport, kRma, kP2p, kCollectives, kRuntime, kLauncher };

struct Setting {
  const char* name;  ///< the environment variable
  Type type;
  const char* dflt;  ///< the value when unset: a number, a choice, or text ("auto": computed)
  const char* const* choices;  ///< kChoice: the words, null-terminated (the default among them)
  std::uint64_t lo, hi;        ///< kCount: the accepted range
  Scope scope;
  Verbosity verbosity;
  Category category;
  bool internal;  ///< set by onesided-run for its ranks: not a control variable (see settings.cpp)
  const char* defaultText;  ///< the default, as docs/settings.md says it (markdown)
  const char* meaning;      ///< what it does, in one line (markdown): docs/settings.md, MPI_T
};

/// The table; index = static_cast<int>(Id).
std::span<const Setting> all() noexcept;
const Setting& get(Id id) noexcept;
/// The environment variable of `id` as std::getenv returns it (null when unset): what every
/// reader starts from, so that its parse and errors stay its own.
const char* raw(Id id) noexcept;

/// A setting's value as MPI_T shows it: for kCount the number, for kChoice the index of its
/// word, for kText the text; the default's when unset or empty. Nothing when the environment's
/// text is not a valid value (the reader refuses it too).
struct Value {
  std::uint64_t number = 0;
  int choice = -1;
  std::string text;
};
std::optional<Value> parse(const Setting& s, const char* text);
/// The same for the current environment.
std::optional<Value> current(const Setting& s);

/// docs/settings.md's tables, markdown: one per category, one line per setting.
std::string markdownTable();

}  // namespace onesided::settings
