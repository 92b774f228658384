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
# cm_cross_check.sh loads a hook that lies, built here for this kernel
# (when it is among the tests to run).
if [ $# -eq 0 ] || [[ " $* " == *" cm_cross_check.sh "* ]]; then
	lying=$RPCRDMA_CM_TOP/selftests/rpcrdma_cm/cm_lying_hook
	# shellcheck disable=SC2046
	make -s -C "$kdir" M="$lying" $(kernel_make_args) modules >/dev/null ||
		rpcrdma_cm_die "could not build $lying against $kdir"
fi
# cm_long_answer.sh loads a kernel::sunrpc::rdma_cm hook whose answers
# are too long, built here for this kernel.
if [ $# -eq 0 ] || [[ " $* " == *" cm_long_answer.sh "* ]]; then
	long=$RPCRDMA_CM_TOP/selftests/rpcrdma_cm/cm_long_answer
	# shellcheck disable=SC2046
	make -s -C "$kdir" M="$long" $(kernel_make_args) modules >/dev/null ||
		rpcrdma_cm_die "could not build $long against $kdir"
fi
# debugfs_unload.sh loads a module with a kernel::debugfs file of each
# kind, built here when the kernel's Rust crate has debugfs (7.3; on 6.12
# the program skips).
kinds_ko=
if { [ $# -eq 0 ] || [[ " $* " == *" debugfs_unload.sh "* ]]; } &&
	[ -f "$kdir/rust/kernel/debugfs.rs" ]; then
	kinds=$RPCRDMA_CM_TOP/selftests/rpcrdma_cm/debugfs_kinds
	# shellcheck disable=SC2046
	make -s -C "$kdir" M="$kinds" $(kernel_make_args) modules >/dev/null ||
		rpcrdma_cm_die "could not build $kinds against $kdir"
	kinds_ko=$kinds/debugfs_kinds.ko
fi
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
	"$RPCRDMA_CM_TOP/selftests/rpcrdma_cm/run_guest_tests.sh" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# The runner prints one 'ok'/'not ok' line per test program.
total=$(grep -cE '^(not )?ok [0-9]+ selftests:' "$log")
bad=$(grep -cE '^not ok [0-9]+ selftests:' "$log")
if [ "$rc" -ne 0 ] || [ "$total" -eq 0 ] || [ "$bad" -ne 0 ]; then
	echo "selftests: guest exit $rc, $total programs ran, $bad failed" >&2
	exit 1
fi
