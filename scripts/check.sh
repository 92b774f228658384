#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make check': everything, in order, with one tally at the end.
#
#   deps        scripts/deps.sh (idempotent; aborts the run if it fails)
#   host        cargo test --no-fail-fast of the workspace (each cargo test
#               counts; a test binary without a result is a failure)
#   script tests  scripts/tests/*.sh, the shell library's own tests with
#               stand-ins for the guests (each KTAP test counts)
#   lint        scripts/lint.sh (each check counts; fewer than its plan or
#               a non-zero exit without a failing check is a failure)
#   kernel      the cached test kernel (one test)
#   module      rpcrdma_cm.ko (one test)
#   tools       target/release/rpcrdma-cm for the guests (one test)
#   selftests   the guest kselftests (each KTAP subtest counts; a program
#               that fails without a failing subtest of its own, or prints
#               no result, is a failure; a program skipped as a whole is a
#               failure unless RPCRDMA_CM_ALLOW_SKIP=prog1,prog2 allows it)
#   two-guest   scripts/two-guest.sh (each KTAP test counts; fewer than its
#               plan or a non-zero exit without a failing test is a failure)
#   bench-nfs-smoke  scripts/bench-nfs-smoke.sh, the smoke cut of
#               'make bench-nfs' (each KTAP test counts, as for two-guest)
#   stock kernel  scripts/build-stock-kernel.sh, the unpatched peer of the
#               interop matrix, built incrementally from the test kernel's
#               tree (one test)
#   interop cut scripts/interop.sh --cut, the rows of the matrix meant for
#               make check (each KTAP test counts, as for two-guest)
#
# The tally's rules are in scripts/tally.sh.
#
# Ends with one line "N passed, N failed, N skipped"; exits 1 if any failed.
# Logs are kept in build/check/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tally.sh"
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

note "deps"
if ! step_deps "$logs/deps.log"; then
	echo "0 passed, 1 failed"
	exit 1
fi

note "host tests (cargo test; a few minutes when nothing is built yet)"
# --no-fail-fast: a failing test binary must not keep the later ones from
# running (and being counted).
run_step "host tests" "$logs/host.log" progress_last_line cargo test --workspace --release --no-fail-fast
tally_cargo "$logs/host.log" $?

note "script tests (scripts/tests/, no guest)"
for t in scripts/tests/*.sh; do
	name=$(basename "$t" .sh)
	"$t" >"$logs/script-$name.log" 2>&1
	tally_ktap "script $name" "$logs/script-$name.log" $?
done

note "kernel"
step_kernel "$logs/kernel.log"
kernel_rc=$?
count "kernel build (build/check/kernel.log)" $kernel_rc

note "module"
make -s module >"$logs/module.log" 2>&1
module_rc=$?
count "module build (build/check/module.log)" $module_rc

note "tools"
# The guest tests run target/release/rpcrdma-cm (cm_tools.sh, two-guest).
make -s tools >"$logs/tools.log" 2>&1
count "tools build (build/check/tools.log)" $?

note "lint"
run_step "lint" "$logs/lint.log" progress_last_line scripts/lint.sh
lint_rc=$?
sed 's/^ok - /ok 0 /; s/^not ok - /not ok 0 /' "$logs/lint.log" >"$logs/lint.ktap"
tally_ktap lint "$logs/lint.ktap" "$lint_rc"

if [ $kernel_rc -eq 0 ] && [ $module_rc -eq 0 ]; then
	note "selftests (one guest, about 10 minutes under TCG)"
	run_step "selftests" "$logs/selftests.log" progress_ktap scripts/selftests.sh
	st_rc=$?
	# Each subtest counts; each program's result is paired with its own
	# subtests; a whole-program skip fails unless RPCRDMA_CM_ALLOW_SKIP
	# names the program.
	read -r -a programs <<<"$(sed -n 's/^TEST_PROGS := //p' selftests/rpcrdma_cm/Makefile)"
	failed_before=$failed
	tally_selftests "$logs/selftests.log" "${programs[@]}"
	# The guest's own end (selftests.sh says why on its last lines).
	if [ $st_rc -ne 0 ] && [ "$failed" -eq "$failed_before" ]; then
		count "selftests: guest or runner failed (build/check/selftests.log)" 1
	fi

	note "two-guest test (two guests, about 3 minutes under TCG)"
	run_step "two-guest" "$logs/two-guest.log" progress_ktap scripts/two-guest.sh
	tg_rc=$?
	tally_ktap two-guest "$logs/two-guest.log" "$tg_rc"

	note "bench-nfs smoke (two guest pairs, about 2 minutes under TCG, 4 on busy cores)"
	run_step "bench-nfs smoke" "$logs/bench-nfs-smoke.log" progress_ktap scripts/bench-nfs-smoke.sh
	bs_rc=$?
	tally_ktap bench-nfs-smoke "$logs/bench-nfs-smoke.log" "$bs_rc"

	note "stock kernel (incrementally from the test kernel's tree, about 2 minutes)"
	run_step "stock kernel" "$logs/stock-kernel.log" progress_last_line scripts/build-stock-kernel.sh
	stock_rc=$?
	count "stock kernel build (build/check/stock-kernel.log)" $stock_rc
	if [ $stock_rc -eq 0 ]; then
		note "interop cut ($(scripts/interop.sh --cut --list | grep -c .) pairs of guests, about 12 minutes under TCG)"
		run_step "interop cut" "$logs/interop-cut.log" progress_ktap \
			env INTEROP_TABLE="$logs/interop-table.txt" scripts/interop.sh --cut
		ic_rc=$?
		tally_ktap interop-cut "$logs/interop-cut.log" "$ic_rc"
	else
		count "interop cut (no stock kernel)" 1
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
