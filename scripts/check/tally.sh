# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The tally of 'make check' (scripts/check/check.sh sources this file): each
# function reads one stage's log and adds to the globals passed, failed,
# skipped and failures (an array of names, printed as "FAILED: ..." lines).
#
# The rule for every stage: a result that should be there and is not is a
# failure. A stage that stops early (plan larger than its results), exits
# non-zero without a failing result, or skips a program the README promises
# counts as failed, so no part of the run can disappear from the count.

# The diagnostics a failing subtest printed just before its result (up to
# ten "# " lines since the previous result) go under its FAILED line, so
# that the end of the run says why, not only what.
context=()
# remember LINE: keep LINE as context for the next result.
remember() {
	context+=("$1")
	[ "${#context[@]}" -le 10 ] || context=("${context[@]:1}")
}
# with_context DESC: DESC, then the kept context lines indented (the
# caller clears the context: this runs in a command substitution).
with_context() {
	local out=$1 l
	for l in "${context[@]}"; do
		out+=$'\n'"    $l"
	done
	printf '%s' "$out"
}

# count NAME STATUS: one test; STATUS 0 passes.
count() {
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("$1")
	fi
}

# tally_ktap NAME LOG [STATUS]: a flat KTAP log (lint.sh, two-guest.sh): a
# plan "1..N" and results "ok N desc", "not ok N desc", "ok N desc # SKIP".
# Each result counts. A missing plan, fewer results than planned, or a
# producer exit STATUS other than 0 without a failing result is a failure.
tally_ktap() {
	local name=$1 log=$2 status=${3:-0} line desc plan='' results=0 bad=0
	while IFS= read -r line; do
		case "$line" in
		1..[0-9]*)
			[ -n "$plan" ] || plan=${line#1..} plan=${plan%% *} ;;
		"ok "*"# SKIP"*)
			context=()
			skipped=$((skipped + 1)) results=$((results + 1)) ;;
		"ok "*)
			context=()
			passed=$((passed + 1)) results=$((results + 1)) ;;
		"not ok "*)
			desc=${line#not ok }
			desc=${desc#* }
			failed=$((failed + 1)) results=$((results + 1)) bad=$((bad + 1))
			failures+=("$(with_context "$name: $desc")")
			context=() ;;
		"# "*)
			remember "$line" ;;
		esac
	done <"$log"
	if [ -z "$plan" ]; then
		count "$name: printed no plan (did not start?)" 1
	elif [ "$results" -lt "$plan" ]; then
		failed=$((failed + plan - results))
		failures+=("$name: $((plan - results)) of $plan results missing (stopped early?)")
	elif [ "$results" -gt "$plan" ]; then
		count "$name: $results results, but the plan says $plan" 1
	fi
	if [ "$status" != 0 ] && [ "$bad" = 0 ]; then
		count "$name: exit status $status without a failing result" 1
	fi
}

# allowed_skip PROG: PROG is listed in RPCRDMA_CM_ALLOW_SKIP (comma-separated).
allowed_skip() {
	case ",${RPCRDMA_CM_ALLOW_SKIP:-}," in
	*",$1,"*) return 0 ;;
	esac
	return 1
}

# tally_selftests LOG PROG...: the kselftest runner's log of the programs
# PROG... (each one the README promises). The runner prints, per program,
# "# selftests: DIR: PROG", the program's own KTAP prefixed with "# ", and
# "ok N selftests: DIR: PROG" or "not ok ... # exit=RC|# TIMEOUT S seconds".
# Each subtest counts. Each program's result is paired with its own
# subtests: a program that failed without a failing subtest (crash, bail
# out, timeout) is one failure of its own. A program skipped as a whole
# ("1..0 # SKIP reason") counts one skip if RPCRDMA_CM_ALLOW_SKIP names it
# and one failure otherwise. A program that passed with no subtest of its
# own (e.g. printed "1..0 # SKIP" but exited 0) is a failure. A PROG that
# printed no result did not run (the guest died or timed out): a failure,
# counted in not_run too.
tally_selftests() {
	local log=$1 line prog='' desc reason='' own_fail=0 own_n=0 p
	shift
	local -A done_progs=()
	while IFS= read -r line; do
		case "$line" in
		"# selftests: "*)
			prog=${line##*: } own_fail=0 own_n=0 reason='' context=() ;;
		"# 1..0 # SKIP"*)
			reason=${line#*SKIP} reason=${reason# } ;;
		"# ok "[0-9]*"# SKIP"*)
			context=()
			own_n=$((own_n + 1))
			skipped=$((skipped + 1)) ;;
		"# ok "[0-9]*)
			context=()
			own_n=$((own_n + 1))
			passed=$((passed + 1)) ;;
		"# not ok "[0-9]*)
			desc=${line#\# not ok }
			desc=${desc#* }
			own_n=$((own_n + 1))
			own_fail=$((own_fail + 1))
			count "$(with_context "selftests: $prog: $desc")" 1
			context=() ;;
		"# # "*)
			remember "${line#\# }" ;;
		"ok "[0-9]*" selftests: "*|"not ok "[0-9]*" selftests: "*)
			p=${line%% # *}
			p=${p##*: }
			done_progs[$p]=1
			[ "$p" = "$prog" ] || own_fail=0 own_n=0 reason=
			case "$line" in
			"ok "*"# SKIP"*)
				if allowed_skip "$p"; then
					skipped=$((skipped + 1))
					echo "check: $p skipped as a whole (allowed): ${reason:-no reason given}"
				else
					count "selftests: $p skipped as a whole: ${reason:-no reason given} (RPCRDMA_CM_ALLOW_SKIP=$p allows it)" 1
				fi ;;
			"not ok "*)
				[ "$own_fail" -gt 0 ] ||
					count "selftests: $p failed without a failing subtest (${line##* # })" 1 ;;
			*)
				[ "$own_n" -gt 0 ] ||
					count "selftests: $p passed with no subtest of its own${reason:+ (1..0 # SKIP $reason)}" 1 ;;
			esac
			prog= ;;
		esac
	done <"$log"
	# not_run: how many of them did not run (make check prints the log's
	# end then).
	not_run=0
	for p in "$@"; do
		[ -n "${done_progs[$p]:-}" ] && continue
		count "selftests: $p did not run (no result from the runner)" 1
		not_run=$((not_run + 1))
	done
}

# tally_cargo LOG STATUS: 'cargo test --no-fail-fast' output. Each test
# counts (its "test result:" line); every test binary and doc-test run
# ("Running X" / "Doc-tests X") must end with a result line, or it crashed:
# a failure. A non-zero STATUS with no failure found is a failure (the
# build failed).
tally_cargo() {
	local log=$1 status=$2 line unit='' before=$failed p f
	while IFS= read -r line; do
		case "$line" in
		*"Running "*|*"Doc-tests "*)
			[ -z "$unit" ] || count "host: $unit ended without a test result (crashed?)" 1
			unit=${line#"${line%%[! ]*}"} unit=${unit%% (*} ;;
		"test result: "*)
			p=$(echo "$line" | sed -n 's/.* \([0-9]*\) passed; \([0-9]*\) failed.*/\1/p')
			f=$(echo "$line" | sed -n 's/.* \([0-9]*\) passed; \([0-9]*\) failed.*/\2/p')
			passed=$((passed + ${p:-0}))
			failed=$((failed + ${f:-0}))
			unit= ;;
		"test "*" ... FAILED")
			line=${line#test }
			failures+=("host: ${line% ... FAILED}") ;;
		esac
	done <"$log"
	[ -z "$unit" ] || count "host: $unit ended without a test result (crashed?)" 1
	if [ "$status" != 0 ] && [ "$failed" = "$before" ]; then
		count "host: cargo test exit status $status without a failing test (build failed? see build/check/host.log)" 1
	fi
}
