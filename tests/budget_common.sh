# SPDX-License-Identifier: BSD-3-Clause
# What tests/ctest_budget.sh and tests/gtest_budget.sh share: the order that spreads a cut run
# over every test's variants, and the report of what a run left out for time. Sourced.

# A test's family: a gtest name without its last "/parameters" part (the whole name when it has
# none), an MPI program's name without "_npN".
budget_fam='function fam(t) { if (match(t, /_np[0-9]+$/)) return substr(t, 1, RSTART - 1)
                   if (gsub(/\//, "/", t) >= 2) sub(/\/[^\/]*$/, "", t); return t }'

# budget_order < NAMES: the names, pass k holding every family's k-th variant, the variants of a
# family taken in a fixed pseudo-random order (seed 1), so that a cut run still covers each
# test's transports, rank counts and algorithms in a spread, not its first parameter sets in
# the listed order (for the collectives: the self transport at 1 rank).
budget_order() {
  awk "$budget_fam"'
    BEGIN { srand(1) } NF { printf "%s %.9f %d %s\n", fam($0), rand(), NR, $0 }' |
    sort -k1,1 -k2,2n | awk '{ k = ++seen[$1]; print k, $3, $4 }' | sort -n -k1,1 -k2,2 |
    awk '{print $3}'
}

# budget_left_out NAME TOTAL SPENT BUDGET ALL_NAMES < LEFT_NAMES: says what a stage left out for
# time, by test ("k of m" variants), and appends a line to ONESIDED_LEFT_OUT_FILE when set.
budget_left_out() {
  local left_names n left
  left_names="$(cat)"
  n="$(grep -c . <<<"$left_names")"
  left="$1: $n of its $2 tests left out for time ($3 s spent of the $4 s budget; every test"
  left+=" runs unsanitized in the host's ctest)"
  echo "== $left; by test, variants left out of the test's variants:"
  ALL="$5" awk "$budget_fam"'
    BEGIN { m = split(ENVIRON["ALL"], a, "\n"); for (j = 1; j <= m; ++j) total[fam(a[j])]++ }
    NF { k[fam($0)]++ }
    END { for (f in k) printf "     %s: %d of %d\n", f, k[f], total[f] }' <<<"$left_names" | sort
  if [ -n "${ONESIDED_LEFT_OUT_FILE:-}" ]; then echo "$left" >>"$ONESIDED_LEFT_OUT_FILE"; fi
}

# budget_tests NAMES: sets the array `tests` to the names in budget_order's order, and `n` to
# their number.
budget_tests() {
  mapfile -t tests < <(budget_order <<<"$1")
  n=${#tests[@]}
  [ -n "${tests[0]:-}" ] || n=0
}
