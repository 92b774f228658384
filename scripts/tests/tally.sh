#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of scripts/check/tally.sh, the rules by which 'make check' counts: each
# case feeds tally_selftests a made-up kselftest runner log and compares
# the passed/failed/skipped counts with what the rules say. Boots nothing.
# KTAP output; exit 0 only if every case passes.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../check/tally.sh
. "$top/scripts/check/tally.sh"

n=0 bad=0
echo "TAP version 13"
echo "1..8"
# case NAME WANT(passed/failed/skipped) LOG PROGS...
case_() {
	local name=$1 want=$2 log=$3 got
	shift 3
	passed=0 failed=0 skipped=0 failures=()
	tally_selftests <(printf '%s\n' "$log") "$@" >/dev/null
	got="$passed/$failed/$skipped"
	n=$((n + 1))
	if [ "$got" = "$want" ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name # got $got, want $want"
		bad=$((bad + 1))
	fi
}

case_ "two passing subtests of one program" 2/0/0 "# selftests: d: a.sh
# ok 1 x
# ok 2 y
ok 1 selftests: d: a.sh" a.sh

case_ "a failing subtest is one failure" 1/1/0 "# selftests: d: a.sh
# ok 1 x
# not ok 2 y
not ok 1 selftests: d: a.sh # exit=1" a.sh

case_ "a program that failed without a failing subtest" 1/1/0 "# selftests: d: a.sh
# ok 1 x
not ok 1 selftests: d: a.sh # TIMEOUT 600 seconds" a.sh

case_ "a program skipped as a whole (exit 4) fails unless allowed" 0/1/0 "# selftests: d: a.sh
# 1..0 # SKIP no rxe
ok 1 selftests: d: a.sh # SKIP" a.sh

case_ "a program that printed 1..0 # SKIP and exited 0 fails" 0/1/0 "# selftests: d: a.sh
# 1..0 # SKIP no rxe
ok 1 selftests: d: a.sh" a.sh

case_ "a program with no result did not run" 1/1/0 "# selftests: d: a.sh
# ok 1 x
ok 1 selftests: d: a.sh" a.sh b.sh

# context_case NAME WANT KIND LOG: the one failure's text (FAILED line and
# the diagnostics under it) equals WANT; KIND is ktap or selftests.
context_case() {
	local name=$1 want=$2 kind=$3 log=$4 got
	passed=0 failed=0 skipped=0 failures=() context=()
	if [ "$kind" = ktap ]; then
		tally_ktap t <(printf '%s\n' "$log") >/dev/null
	else
		tally_selftests <(printf '%s\n' "$log") a.sh >/dev/null
	fi
	got=${failures[0]:-none}
	n=$((n + 1))
	if [ "${#failures[@]}" = 1 ] && [ "$got" = "$want" ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		printf '%s\n' "$got" | sed 's/^/# got: /'
		bad=$((bad + 1))
	fi
}

context_case "a flat KTAP failure carries the diagnostics printed since the last result" \
	"t: y"$'\n'"    # y saw 5"$'\n'"    # want 4" ktap "1..2
# x saw 1
ok 1 x
# y saw 5
# want 4
not ok 2 y"

context_case "a selftest subtest failure carries its own diagnostics, not the previous program's" \
	"selftests: a.sh: y"$'\n'"    # largest 5000 octets" selftests "# selftests: d: b.sh
# # b said something
# selftests: d: a.sh
# # largest 5000 octets
# not ok 1 y
not ok 1 selftests: d: a.sh # exit=1"

[ $bad -eq 0 ]
