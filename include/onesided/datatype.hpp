// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace onesided {

/// A datatype's type map, for the predefined types of this step (the general type engine comes
/// with derived datatypes). Immutable; predefined ones live for the whole process.
class Datatype {
 public:
  /// One contiguous run of an element, relative to the element's start.
  struct Block {
    std::ptrdiff_t offset;
    std::size_t len;
  };
  /// One run of the type signature: `count` basic elements of `kind` (a predefined type id).
  struct SigRun {
    int kind;
    std::size_t count;
  };

  Datatype(int id, std::string name, std::size_t size, std::ptrdiff_t extent,
           std::vector<Block> blocks, std::vector<SigRun> signature);

  [[nodiscard]] int id() const noexcept { return id_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::ptrdiff_t lb() const noexcept { return 0; }
  [[nodiscard]] std::ptrdiff_t extent() const noexcept { return extent_; }
  /// count elements occupy one run of count * size bytes.
  [[nodiscard]] bool contiguous() const noexcept { return contiguous_; }
  [[nodiscard]] const std::vector<Block>& blocks() const noexcept { return blocks_; }
  [[nodiscard]] const std::vector<SigRun>& signature() const noexcept { return signature_; }
  /// Lowest and one-past-highest byte touched by `count` elements, relative to the buffer.
  [[nodiscard]] std::ptrdiff_t trueLb() const noexcept {
    return blocks_.empty() ? 0 : blocks_[0].offset;
  }
  [[nodiscard]] std::ptrdiff_t trueUb(std::size_t count) const noexcept {
    if (count == 0 || blocks_.empty()) return trueLb();
    const auto& last = blocks_.back();
    return static_cast<std::ptrdiff_t>(count - 1) * extent_ + last.offset +
           static_cast<std::ptrdiff_t>(last.len);
  }

  /// The predefined type with this MPI_Datatype handle value, or nullptr. Inline: every
  /// MPI_Put / MPI_Get looks up two.
  static const Datatype* predefined(int id) noexcept {
    const PredefinedTable t = predefinedTable();
    return id > 0 && id < t.count ? t.types + id : nullptr;
  }
  struct PredefinedTable {
    const Datatype* types;
    int count;
  };
  static PredefinedTable predefinedTable() noexcept;

 private:
  int id_;
  std::string name_;
  std::size_t size_;
  std::ptrdiff_t extent_;
  bool contiguous_;
  std::vector<Block> blocks_;
  std::vector<SigRun> signature_;
};

/// True when `ocount` elements of `o` and `tcount` elements of `t` have the same type signature
/// (MPI-3.1 §3.3.1 type matching, as RMA requires between origin and target).
bool signaturesMatch(const Datatype& o, std::size_t ocount, const Datatype& t, std::size_t tcount);

/// The predefined datatype for a C++ type, for the typed C++ API.
template <class T>
const Datatype& datatypeOf();
template <>
const Datatype& datatypeOf<char>();
template <>
const Datatype& datatypeOf<signed char>();
template <>
const Datatype& datatypeOf<unsigned char>();
template <>
const Datatype& datatypeOf<std::byte>();
template <>
const Datatype& datatypeOf<wchar_t>();
template <>
const Datatype& datatypeOf<short>();
template <>
const Datatype& datatypeOf<unsigned short>();
template <>
const Datatype& datatypeOf<int>();
template <>
const Datatype& datatypeOf<unsigned>();
template <>
const Datatype& datatypeOf<long>();
template <>
const Datatype& datatypeOf<unsigned long>();
template <>
const Datatype& datatypeOf<long long>();
template <>
const Datatype& datatypeOf<unsigned long long>();
template <>
const Datatype& datatypeOf<float>();
template <>
const Datatype& datatypeOf<double>();
template <>
const Datatype& datatypeOf<long double>();
template <>
const Datatype& datatypeOf<bool>();
template <>
const Datatype& datatypeOf<std::complex<float>>();
template <>
const Datatype& datatypeOf<std::complex<double>>();

}  // namespace onesided
