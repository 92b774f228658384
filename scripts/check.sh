#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make check': everything, in order, with one tally at the end.
#
#   deps        scripts/deps.sh (idempotent; aborts the run if it fails)
#   host        cargo test of the workspace (each cargo test counts)
#   lint        scripts/lint.sh (each check counts)
#   kernel      the cached test kernel (one test)
#   module      rpcrdma_cm.ko (one test)
#   selftests   the guest kselftests (each KTAP subtest counts; a program
#               that fails without a failing subtest counts once)
#   two-guest   scripts/two-guest.sh (each KTAP test counts)
#
# Ends with one line "N passed, N failed, N skipped"; exits 1 if any failed.
# Logs are kept in build/check/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RPCRDMA_CM_TOP"
require_root "make check"

# Every guest of this run carries this tag in its QEMU -name.
export RPCRDMA_CM_GUEST_TAG=check$$
logs=$RPCRDMA_CM_TOP/build/check
rm -rf "$logs"
mkdir -p "$logs"
passed=0 failed=0 skipped=0
failures=()
start=$(date +%s)

note() { echo "check: [$(($(date +%s) - start))s] $*"; }

# count NAME STATUS: one test
count() {
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("$1")
	fi
}

# tally_ktap PREFIX LOG: count "ok N desc" / "not ok N desc" lines at the
# KTAP nesting level given by the sed-stripped prefix.
tally_ktap() {
	local name=$1 log=$2 line desc
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"*) skipped=$((skipped + 1)) ;;
		"ok "*) passed=$((passed + 1)) ;;
		"not ok "*)
			desc=${line#not ok }
			desc=${desc#* }
			failed=$((failed + 1))
			failures+=("$name: $desc") ;;
		esac
	done <"$log"
}

note "deps"
if ! step_deps "$logs/deps.log"; then
	echo "0 passed, 1 failed"
	exit 1
fi

note "host tests (cargo test; a few minutes when nothing is built yet)"
run_step "host tests" "$logs/host.log" progress_last_line cargo test --workspace --release
host_rc=$?
while read -r p f; do
	passed=$((passed + p))
	failed=$((failed + f))
done < <(sed -n 's/^test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed.*/\1 \2/p' "$logs/host.log")
grep -E '^test .* FAILED$' "$logs/host.log" | while read -r _ t _; do echo "check: host test failed: $t"; done
if [ $host_rc -ne 0 ]; then
	grep -qE '^test .* FAILED$' "$logs/host.log" || count "host build (see build/check/host.log)" 1
	failures+=("host tests (see build/check/host.log)")
fi

note "kernel"
step_kernel "$logs/kernel.log"
kernel_rc=$?
count "kernel build (build/check/kernel.log)" $kernel_rc

note "module"
make -s module >"$logs/module.log" 2>&1
module_rc=$?
count "module build (build/check/module.log)" $module_rc

note "lint"
run_step "lint" "$logs/lint.log" progress_last_line scripts/lint.sh
sed 's/^ok - /ok 0 /; s/^not ok - /not ok 0 /' "$logs/lint.log" >"$logs/lint.ktap"
tally_ktap lint "$logs/lint.ktap"

if [ $kernel_rc -eq 0 ] && [ $module_rc -eq 0 ]; then
	note "selftests (one guest, about 7 minutes under TCG)"
	run_step "selftests" "$logs/selftests.log" progress_ktap scripts/selftests.sh
	st_rc=$?
	# Subtests are the runner's output prefixed with "# ".
	sed -n 's/^# \(\(not \)\{0,1\}ok [0-9]\{1,\} .*\)/\1/p' "$logs/selftests.log" >"$logs/selftests.ktap"
	tally_ktap selftests "$logs/selftests.ktap"
	# A program that failed (crash, timeout) without any failing subtest.
	if [ $st_rc -ne 0 ] && ! grep -q '^not ok' "$logs/selftests.ktap"; then
		count "selftests: guest or runner failed (build/check/selftests.log)" 1
	fi

	note "two-guest test (two guests, about 3 minutes under TCG)"
	run_step "two-guest" "$logs/two-guest.log" progress_ktap scripts/two-guest.sh
	tg_rc=$?
	tally_ktap two-guest "$logs/two-guest.log"
	if [ $tg_rc -ne 0 ] && ! grep -q '^not ok' "$logs/two-guest.log"; then
		count "two-guest: did not complete (build/check/two-guest.log)" 1
	fi
else
	note "no kernel or module: guest tests not run"
	count "guest tests (no kernel or module)" 1
fi

note "done in $(($(date +%s) - start)) s"
for f in "${failures[@]}"; do
	echo "FAILED: $f"
done
if pgrep -f "qemu-system.*-name [^ ]*-$RPCRDMA_CM_GUEST_TAG" >/dev/null; then
	echo "check: QEMU processes of this run left behind!" >&2
	count "no QEMU process outlives the run" 1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
