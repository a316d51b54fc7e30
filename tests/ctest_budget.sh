#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the tests a ctest selection picks within a time budget: in chunks, none started once the
# budget is spent, the variants spread so that what runs first covers the most — every test's
# first variant (its first parameter set; an MPI program's first rank count), then every test's
# second, and so on. What is left out for time is named. CI's machines differ in speed by a
# factor of three or more (the same commit's CI took 2174 s on one and passed 5400 s on
# another), so the sanitizer stages after the host's full run take what time is left.
# Usage: tests/ctest_budget.sh BUILD_DIR SECONDS NAME [ctest args for the selection and run...]
#   The selection arguments (-L, -E, -R) are also passed to each chunk's run, with the chunk's
#   names; other ctest options (-j, --timeout, --output-on-failure) go to the runs only, so pass
#   them after "--": tests/ctest_budget.sh build 600 "ASan unit" -L unit -- -j 2 --timeout 900
# Exit status: 1 when a test failed, 0 otherwise (tests left out for time do not fail the run,
# they are listed). Afterwards BUILD_DIR/Testing/Temporary/LastTestsFailed.log and LastTest.log
# hold every chunk's failures and output, for failed_tails.sh.
set -uo pipefail
# shellcheck source=tests/budget_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/budget_common.sh"
build="${1:?usage: ctest_budget.sh BUILD_DIR SECONDS NAME [selection...] [-- run options...]}"
budget="${2:?}"
name="${3:?}"
shift 3
select=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  select+=("$1")
  shift
done
[ $# -gt 0 ] && shift
run=("$@")
chunk="${ONESIDED_CTEST_CHUNK:-24}"
start=$SECONDS
tmp="$build/Testing/Temporary"

names="$(cd "$build" && ctest -N "${select[@]}" | awk '/Test +#[0-9]+:/ {print $3}')"
budget_tests "$names"
echo "== $name: $n tests in chunks of $chunk, budget $budget s"

status=0
failed_all=""
log_all=""
for ((i = 0; i < n; i += chunk)); do
  if [ $((SECONDS - start)) -ge "$budget" ]; then
    printf '%s\n' "${tests[@]:i}" |
      budget_left_out "$name" "$n" "$((SECONDS - start))" "$budget" "$names"
    break
  fi
  # gtest_discover_tests' names go on with "  # GetParam() = ...": a name ends at a space.
  re="^($(printf '%s\n' "${tests[@]:i:chunk}" | sed 's/[][().*+?^$|\\]/\\&/g' | paste -sd'|'))( |\$)"
  rm -f "$tmp/LastTestsFailed.log"
  (cd "$build" && ctest "${select[@]}" -R "$re" "${run[@]}") || status=1
  [ -s "$tmp/LastTestsFailed.log" ] && failed_all+="$(cat "$tmp/LastTestsFailed.log")"$'\n'
  [ -s "$tmp/LastTest.log" ] && log_all+="$(cat "$tmp/LastTest.log")"$'\n'
done
rm -f "$tmp/LastTestsFailed.log"
if [ -n "$failed_all" ]; then printf '%s' "$failed_all" >"$tmp/LastTestsFailed.log"; fi
printf '%s' "$log_all" >"$tmp/LastTest.log"
echo "== $name: took $((SECONDS - start)) s"
exit "$status"
