#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of scripts/check/conform_table.py, which makes the conformance-by-
# server table from make check's logs: made-up logs in the forms the guest
# runs print (nested KTAP, a wrong verdict, two bases, the stock kernel's
# kept log), and the cells the table must show for them. Boots nothing.
# KTAP output; exit 0 only if every case passes.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/rpcrdma-cm-conform-table.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/selftests-7.3.log" <<'LOG'
# # ok 6 module rxe: calibration: pass
# # ok 7 module rxe: threshold.1k.above: pass
# # ok 8 module siw: threshold.1k.above: pass
# # ok 9 series rxe: request.none.above: xfail
# # not ok 10 module-1k rxe: request.none.above: fail, want pass
# # ok 11 module rxe: accept.length: not_applicable
# # ok 12 module siw: accept.length: pass
# ok 1 selftests: rpcrdma_cm: conform_tool.sh
LOG
cat >"$work/selftests-6.12.log" <<'LOG'
# # ok 6 module rxe: calibration: pass
# # ok 7 module rxe: threshold.1k.above: pass
# # ok 11 module rxe: accept.length: not_applicable
LOG
cat >"$work/stock-conformance-guest.log" <<'LOG'
# ok 4 stock rxe: threshold.1k.above: fail
# ok 5 stock rxe: a 500-octet Reply comes inline (passes)
LOG
out=$("$top/scripts/check/conform_table.py" "$work" --commit abc123 --date 2026-01-02)
rc=$?

n=0 bad=0
echo "TAP version 13"
echo "1..7"
# row ID CELLS_REGEX: the row of check ID matches.
has() {
	n=$((n + 1))
	if grep -qE -- "$2" <<<"$out"; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		sed 's/^/# /' <<<"$out"
		bad=$((bad + 1))
	fi
}
n=$((n + 1))
if [ $rc = 0 ]; then echo "ok $n the table is made (exit 0)"; else echo "not ok $n exit $rc"; bad=$((bad + 1)); fi
has "dated, with the commit, never by hand" '^Generated .* run of 2026-01-02 at abc123 \(bases: 6.12, 7.3, stock;'
has "the same verdict on every base and transport is one cell; the stock kernel's own column" \
	'^\| ``threshold.1k.above`` +\| pass +\| +\| +\| \*\*FAIL\*\* +\|$'
has "a known deviation is shown as one" '^\| ``request.none.above`` +\| +\| \*\*FAIL\*\* \(judged wrong: want pass\) +\| \*\*FAIL\*\* \(known\) +\| +\|$'
has "verdicts that differ are each shown with their base and transport" \
	'\| 6.12 rxe: n/a; 7.3 rxe: n/a; 7.3 siw: pass +\|'
n=$((n + 1))
if grep -qE '500-octet|selftests:' <<<"$out"; then
	echo "not ok $n lines that are not conform verdicts are left out"
	bad=$((bad + 1))
else
	echo "ok $n lines that are not conform verdicts are left out"
fi
n=$((n + 1))
if "$top/scripts/check/conform_table.py" "$work/none" >/dev/null 2>&1; then
	echo "not ok $n a directory without results: exit 1"
	bad=$((bad + 1))
else
	echo "ok $n a directory without results: exit 1"
fi
[ $bad = 0 ]
