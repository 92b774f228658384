#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the single-guest kselftests (selftests/rpcrdma_cm TEST_PROGS, or the
# ones named as arguments) in one guest. Prints the runner's KTAP; the exit
# status is non-zero if the guest failed or any test did not pass.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

kdir=${KDIR:-$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)}
ko=${RPCRDMA_CM_KO:-$(module_ko)}
[ -f "$ko" ] || rpcrdma_cm_die "$ko missing: run 'make'"
# The programs' test modules (selftests/rpcrdma_cm/test_modules, kselftest's
# TEST_GEN_MODS_DIR), built here for this kernel, each where the kernel has
# what it needs: lying_hook/rpcrdma_cm.ko (cm_cross_check.sh),
# long_answer/rpcrdma_cm.ko (cm_long_answer.sh; both named rpcrdma_cm, as
# the hooks' exports require), debugfs_kinds.ko (debugfs_unload.sh; only where the
# kernel crate has debugfs, 7.3: on 6.12 the program skips).
mods=$RPCRDMA_CM_TOP/selftests/rpcrdma_cm/test_modules
# One build at a time (flock on the directory): make check runs two of
# these side by side, and two Kbuild runs in one directory remove each
# other's objects.
# shellcheck disable=SC2046
flock "$mods" make -s -C "$mods" KDIR="$kdir" $(kernel_make_args) >/dev/null ||
	rpcrdma_cm_die "could not build $mods against $kdir"
kinds_ko=
[ -f "$mods/debugfs_kinds.ko" ] && [ -f "$kdir/rust/kernel/debugfs.rs" ] && kinds_ko=$mods/debugfs_kinds.ko
# kmemleak on where the kernel has it and a program scans (dmesg_clean.sh,
# which the whole suite, run with no program named, ends with); off
# otherwise (guest.sh boots it off: it costs about half again under
# TCG). RPCRDMA_CM_GUEST_KMEMLEAK=on|off decides instead.
kmemleak=off
[ $# -gt 0 ] && [[ " $* " != *" dmesg_clean.sh "* ]] || kmemleak=on
# (guest.sh refuses any other value.)
export RPCRDMA_CM_GUEST_KMEMLEAK=${RPCRDMA_CM_GUEST_KMEMLEAK:-$kmemleak}
# The checkers this kernel was built with (kmemleak: and booted with),
# for dmesg_clean.sh: one of them not working in the guest is then a
# failure, not a skip.
checkers=()
grep -q '^CONFIG_KASAN=y' "$kdir/.config" && checkers+=(kasan)
grep -q '^CONFIG_DEBUG_KMEMLEAK=y' "$kdir/.config" && [ "$RPCRDMA_CM_GUEST_KMEMLEAK" = on ] && checkers+=(kmemleak)
grep -q '^CONFIG_PROVE_LOCKING=y' "$kdir/.config" && checkers+=(lockdep)
log=$(mktemp /tmp/rpcrdma-cm-selftests.XXXXXX)
trap 'rm -f "$log"' EXIT

"$RPCRDMA_CM_TOP/scripts/guest/guest.sh" --kdir "$kdir" --timeout "${SELFTESTS_TIMEOUT:-2400}" -- \
	env "KSFT_DIR=$kdir/tools/testing/selftests" "RPCRDMA_CM_KO=$ko" "DEBUGFS_KINDS_KO=$kinds_ko" \
	"RPCRDMA_CM_TEST_TIMEOUT=${RPCRDMA_CM_TEST_TIMEOUT:-}" \
	"RPCRDMA_CM_RELOAD_CYCLES=${RPCRDMA_CM_RELOAD_CYCLES:-}" \
	"RPCRDMA_CM_NEGOTIATION_SIZES=${RPCRDMA_CM_NEGOTIATION_SIZES:-}" \
	"RPCRDMA_CM_STORM=${RPCRDMA_CM_STORM:-}" \
	"RPCRDMA_CM_HOSTILE_STORM=${RPCRDMA_CM_HOSTILE_STORM:-}" \
	"RPCRDMA_CM_REPLY_TRANSPORTS=${RPCRDMA_CM_REPLY_TRANSPORTS:-}" \
	"RPCRDMA_CM_CONFORM_TRANSPORTS=${RPCRDMA_CM_CONFORM_TRANSPORTS:-}" \
	"RPCRDMA_CM_CONFORM_RESPONDER=${RPCRDMA_CM_CONFORM_RESPONDER:-}" \
	"RPCRDMA_CM_CONFORM_MUTANT=${RPCRDMA_CM_CONFORM_MUTANT:-}" \
	"RPCRDMA_CM_STOCK_OVERREAD_REQUIRED=${RPCRDMA_CM_STOCK_OVERREAD_REQUIRED:-}" \
	"RPCRDMA_CM_LOCKDOWN_REQUIRED=${RPCRDMA_CM_LOCKDOWN_REQUIRED:-}" \
	"RPCRDMA_CM_CHECKERS=${checkers[*]}" \
	"$RPCRDMA_CM_TOP/selftests/rpcrdma_cm/run_guest_tests.sh" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# The runner prints one 'ok'/'not ok' line per test program.
total=$(grep -cE '^(not )?ok [0-9]+ selftests:' "$log")
bad=$(grep -cE '^not ok [0-9]+ selftests:' "$log")
if [ "$rc" -ne 0 ] || [ "$total" -eq 0 ] || [ "$bad" -ne 0 ]; then
	echo "selftests: guest exit $rc, $total programs ran, $bad failed" >&2
	exit 1
fi
