// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace onesided {

namespace detail {
struct Loop;
}

/// How a datatype was made (the MPI_COMBINER_* values of <mpi.h>).
enum class Combiner : int {
  kNamed = 1,
  kDup = 2,
  kContiguous = 3,
  kVector = 4,
  kHvector = 5,
  kIndexed = 6,
  kHindexed = 7,
  kIndexedBlock = 8,
  kHindexedBlock = 9,
  kStruct = 10,
  kSubarray = 11,
  kDarray = 12,
  kResized = 13,
};

/// Array storage order of subarray and darray (MPI_ORDER_C / MPI_ORDER_FORTRAN values).
enum Order : int { kOrderC = 56, kOrderFortran = 57 };
/// Darray distributions (MPI_DISTRIBUTE_* values).
enum Distribution : int {
  kDistributeBlock = 121,
  kDistributeCyclic = 122,
  kDistributeNone = 123,
};
constexpr int kDistributeDfltDarg = -49767;

/// Handle values of the predefined types this file needs by name (the rest are in <mpi.h>).
constexpr int kTypePacked = 32;
constexpr int kTypeLb = 39;
constexpr int kTypeUb = 40;
constexpr int kNumPredefinedTypes = 45;

/// An MPI datatype: a type map (basic types at byte displacements), its bounds and, once
/// committed, a compact layout (detail::Loop) that communication walks with a Cursor.
///
/// Ownership: predefined types live for the whole process; derived ones are created by the
/// static constructors below as shared_ptr and hold their constituent types, so a type stays
/// valid while anything (a handle, a type built from it, a pending operation) holds it.
/// Apart from commit() and setName(), a Datatype never changes. Not thread-safe to commit or
/// rename while another thread uses the same type.
///
/// Bounds follow MPI-2.2 §4.1.6 including the sticky MPI_LB / MPI_UB markers: a type that
/// contains an MPI_LB (MPI_UB) marker anywhere in its type map takes its lower (upper) bound
/// from the markers alone; MPI_Type_create_resized sets both markers. Without an MPI_UB marker,
/// a struct's extent is padded to the largest alignment of its basic types, as C pads structs.
class Datatype : public std::enable_shared_from_this<Datatype> {
 public:
  /// One contiguous run of a layout, relative to the buffer address.
  struct Segment {
    std::ptrdiff_t offset;
    std::size_t len;
  };
  /// One run of the type signature: `count` basic elements of `kind` (a predefined type id).
  struct SigRun {
    int kind;
    std::size_t count;
  };
  using Ptr = std::shared_ptr<const Datatype>;

  // ---- constructors (MPI-3.1 §4.1.2 - §4.1.7). Counts are MPI ints widened; a negative count
  // throws kErrCount, a size or bound that does not fit in the address range kErrCount, other
  // bad arguments kErrArg. The result is not committed.
  static std::shared_ptr<Datatype> contiguous(std::int64_t count, const Datatype& old);
  static std::shared_ptr<Datatype> vector(std::int64_t count, std::int64_t blocklen,
                                          std::int64_t stride, const Datatype& old);
  /// hvector: stride in bytes.
  static std::shared_ptr<Datatype> hvector(std::int64_t count, std::int64_t blocklen,
                                           std::int64_t strideBytes, const Datatype& old);
  static std::shared_ptr<Datatype> indexed(std::span<const std::int64_t> blocklens,
                                           std::span<const std::int64_t> displs,
                                           const Datatype& old);
  static std::shared_ptr<Datatype> hindexed(std::span<const std::int64_t> blocklens,
                                            std::span<const std::int64_t> byteDispls,
                                            const Datatype& old);
  static std::shared_ptr<Datatype> indexedBlock(std::int64_t blocklen,
                                                std::span<const std::int64_t> displs,
                                                const Datatype& old);
  static std::shared_ptr<Datatype> hindexedBlock(std::int64_t blocklen,
                                                 std::span<const std::int64_t> byteDispls,
                                                 const Datatype& old);
  static std::shared_ptr<Datatype> structType(std::span<const std::int64_t> blocklens,
                                              std::span<const std::int64_t> byteDispls,
                                              std::span<const Datatype* const> types);
  static std::shared_ptr<Datatype> subarray(std::span<const std::int64_t> sizes,
                                            std::span<const std::int64_t> subsizes,
                                            std::span<const std::int64_t> starts, int order,
                                            const Datatype& old);
  static std::shared_ptr<Datatype> darray(std::int64_t size, std::int64_t rank,
                                          std::span<const std::int64_t> gsizes,
                                          std::span<const std::int64_t> distribs,
                                          std::span<const std::int64_t> dargs,
                                          std::span<const std::int64_t> psizes, int order,
                                          const Datatype& old);
  static std::shared_ptr<Datatype> resized(std::int64_t lb, std::int64_t extent,
                                           const Datatype& old);
  static std::shared_ptr<Datatype> dup(const Datatype& old);

  /// MPI_Type_commit: builds the compact layout. Idempotent.
  void commit();
  [[nodiscard]] bool committed() const noexcept { return loop_ != nullptr; }

  /// The predefined handle value, or 0 for a derived type.
  [[nodiscard]] int id() const noexcept { return id_; }
  [[nodiscard]] bool isPredefined() const noexcept { return id_ != 0; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// MPI_Type_set_name (predefined types too, as MPI allows).
  void setName(std::string name) { name_ = std::move(name); }
  /// A name for messages: the set name, else the combiner.
  [[nodiscard]] std::string describe() const;

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::ptrdiff_t lb() const noexcept { return lb_; }
  [[nodiscard]] std::ptrdiff_t ub() const noexcept { return ub_; }
  [[nodiscard]] std::ptrdiff_t extent() const noexcept { return ub_ - lb_; }
  /// Lowest byte and one past the highest byte of data of one element (markers ignored);
  /// both 0 for a type without data.
  [[nodiscard]] std::ptrdiff_t trueLb() const noexcept { return trueLb_; }
  [[nodiscard]] std::ptrdiff_t trueUb() const noexcept { return trueUb_; }
  [[nodiscard]] std::ptrdiff_t trueExtent() const noexcept { return trueUb_ - trueLb_; }
  /// The bytes [lo, hi) that `count` elements touch, relative to the buffer; false when the
  /// range does not fit in 64 bits. Empty (0, 0) for count 0 or a type without data.
  bool footprint(std::size_t count, std::int64_t& lo, std::int64_t& hi) const noexcept;
  /// count elements occupy one run of count * size bytes at the buffer address (committed).
  [[nodiscard]] bool contiguous() const noexcept { return contiguous_; }
  /// Whether the MPI_LB / MPI_UB markers (or create_resized) fixed the bounds.
  [[nodiscard]] bool stickyLb() const noexcept { return markLb_; }
  [[nodiscard]] bool stickyUb() const noexcept { return markUb_; }

  /// Basic elements in one element (the signature's length).
  [[nodiscard]] std::uint64_t basicCount() const noexcept { return nbasic_; }
  /// The predefined kind of every basic element, or -1 if they differ (or there are none).
  [[nodiscard]] int homogeneousKind() const noexcept { return kind_; }
  /// The one predefined type this type is built from, as accumulate counts its elements
  /// (MPI-3.1 §11.3.4): a predefined type is its own (a pair type of MPI_MINLOC / MPI_MAXLOC
  /// included, though its signature is two basic elements); a derived type has the one of its
  /// constituent types when they all have the same one, else -1 (and -1 without data).
  [[nodiscard]] int accumulateKind() const noexcept { return accKind_; }
  /// Contiguous runs of one element's layout (an upper bound; committed types only).
  [[nodiscard]] double runsPerElement() const noexcept;
  /// Whether `count` elements write some byte twice (MPI forbids such a target for put and
  /// accumulate, and such an origin for get). Committed types only; exact, but linear in the
  /// runs when elements interleave.
  [[nodiscard]] bool overlaps(std::size_t count) const;

  // ---- MPI_Type_get_envelope / MPI_Type_get_contents
  [[nodiscard]] Combiner combiner() const noexcept { return combiner_; }
  [[nodiscard]] const std::vector<std::int64_t>& ints() const noexcept { return ints_; }
  [[nodiscard]] const std::vector<std::int64_t>& aints() const noexcept { return aints_; }
  [[nodiscard]] const std::vector<Ptr>& types() const noexcept { return types_; }

  /// A shared reference that keeps this type alive (predefined ones need none).
  [[nodiscard]] Ptr hold() const;
  /// The compact layout (committed types only; nullptr otherwise).
  [[nodiscard]] const detail::Loop* loop() const noexcept { return loop_.get(); }

  /// The signature of `count` elements as runs, calling fn(kind, n) in order, merged runs of
  /// the same kind; stops early when fn returns false.
  template <class Fn>
  void forEachSigRun(std::uint64_t count, Fn&& fn) const;

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

  /// Used by the predefined table and the constructors; use the static constructors instead.
  struct Private;
  explicit Datatype(const Private&);
  ~Datatype();
  Datatype(Datatype&&) noexcept;
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;

  /// One item of the signature: `reps` times the signature of `type`, or `reps` basic elements
  /// of `kind` when type is null.
  struct SigItem {
    const Datatype* type;
    int kind;
    std::uint64_t reps;
  };
  [[nodiscard]] const std::vector<SigItem>& sigItems() const noexcept { return sig_; }

 private:
  friend struct DatatypeBuilder;
  friend struct PredefinedFactory;
  int id_ = 0;
  Combiner combiner_ = Combiner::kNamed;
  std::string name_;
  std::size_t size_ = 0;
  std::ptrdiff_t lb_ = 0;
  std::ptrdiff_t ub_ = 0;
  std::ptrdiff_t trueLb_ = 0;
  std::ptrdiff_t trueUb_ = 0;
  bool markLb_ = false;
  bool markUb_ = false;
  bool hasEntries_ = false;  // any data or marker in the type map
  bool contiguous_ = false;
  std::size_t align_ = 1;
  std::uint64_t nbasic_ = 0;
  int kind_ = -1;
  int accKind_ = -1;
  std::vector<std::int64_t> ints_;
  std::vector<std::int64_t> aints_;
  std::vector<Ptr> types_;
  Ptr inner_;  // subarray / darray: the type built from simpler constructors that has the layout
  std::vector<SigItem> sig_;
  // Built on first need (commit, or a parent's commit); memoised in a const type.
  mutable std::shared_ptr<const detail::Loop> layout_;
  std::shared_ptr<const detail::Loop> loop_;  // set by commit
  friend std::shared_ptr<const detail::Loop> layoutOf(const Datatype& t);
};

/// True when `ocount` elements of `o` and `tcount` elements of `t` have the same type signature
/// (MPI-3.1 §3.3.1 type matching, as RMA requires between origin and target). MPI_PACKED matches
/// any signature of the same size. Cost: proportional to the runs of the shorter common period,
/// not to the counts.
bool signaturesMatch(const Datatype& o, std::size_t ocount, const Datatype& t, std::size_t tcount);

/// MPI_Pack's core: the data of `count` elements of `t` at `in` to out[0 .. count * size), in
/// type-map order. `t` must be committed (kErrType); out must hold the bytes (kErrTruncate,
/// nothing written).
void pack(const void* in, std::size_t count, const Datatype& t, std::byte* out, std::size_t outLen);
/// MPI_Unpack's core: the reverse; kErrTruncate (nothing written) when inLen is too short.
void unpack(const std::byte* in, std::size_t inLen, void* out, std::size_t count,
            const Datatype& t);
/// MPI_Get_elements: basic elements in `bytes` bytes of a stream of `t`; false when the bytes
/// end inside a basic element.
bool elementsIn(const Datatype& t, std::uint64_t bytes, std::uint64_t& elements);
/// MPI_Status_set_elements: the bytes of the first `elements` basic elements of a stream of t.
std::uint64_t bytesOfElements(const Datatype& t, std::uint64_t elements);

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

// ---- implementation of the template above --------------------------------------------------

template <class Fn>
void Datatype::forEachSigRun(std::uint64_t count, Fn&& fn) const {
  // Depth-first over the signature items; homogeneous subtrees are one run without descending.
  struct Frame {
    const Datatype* t;
    std::size_t item;
    std::uint64_t left;  // repetitions of the current item still to emit (non-homogeneous)
  };
  int runKind = -1;
  std::uint64_t runCount = 0;
  auto emit = [&](int kind, std::uint64_t n) {
    if (n == 0) return true;
    if (kind == runKind) {
      runCount += n;
      return true;
    }
    if (runCount != 0 && !fn(runKind, runCount)) return false;
    runKind = kind;
    runCount = n;
    return true;
  };
  if (count == 0 || nbasic_ == 0) return;
  if (kind_ >= 0) {
    fn(kind_, count * nbasic_);
    return;
  }
  std::vector<Frame> stack;
  for (std::uint64_t c = 0; c < count; ++c) {
    stack.push_back({this, 0, 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto& items = f.t->sig_;
      if (f.item == items.size()) {
        stack.pop_back();
        continue;
      }
      const SigItem& it = items[f.item];
      if (it.type == nullptr || it.type->kind_ >= 0 || it.type->nbasic_ == 0) {
        const int kind = it.type == nullptr ? it.kind : it.type->kind_;
        const std::uint64_t n = it.type == nullptr ? it.reps : it.reps * it.type->nbasic_;
        ++f.item;
        if (!emit(kind, n)) return;
        continue;
      }
      if (f.left == 0) f.left = it.reps;
      if (--f.left == 0) ++f.item;
      const Datatype* child = it.type;
      stack.push_back({child, 0, 0});
    }
  }
  if (runCount != 0) fn(runKind, runCount);
}

}  // namespace onesided
