#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The memory checker against the bug the series fixes, on the unpatched
# kernel built with KASAN (make check-memory: build-kernel.sh
# stock-checked). A requester sends nfsd's RDMA listener 1, 3 and 7
# octets of private data over siw, which delivers exactly what was sent
# (siw_cm.c allocates the octets and 4 more); the stock server reads an
# 8-octet message from them. KASAN must report that read in svcrdma's CM
# handler: a checker that misses the real bug would miss its siblings.
# Not in TEST_PROGS: on a patched kernel the same requests must leave no
# report, which cm_iwarp_short.sh checks; there this program skips.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin stock_overread tool guest

modprobe rpcrdma 2>/dev/null
if [ -d /sys/kernel/tracing/events/rpcrdma/svcrdma_cm_private ]; then
	ktap_skip_all "a patched kernel (it traces svcrdma_cm_private): cm_iwarp_short.sh checks it"
	exit "$KSFT_SKIP"
fi
if ! grep -qw kasan_report /proc/kallsyms; then
	ktap_skip_all "a kernel without KASAN"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 2

SIW_NIC=rcmsiw0
SIW_ADDR=192.0.2.77
cleanup() {
	stop_nfsd
	rdma link delete siw0 2>/dev/null
	ip link delete $SIW_NIC 2>/dev/null
}
siw_setup $SIW_NIC $SIW_ADDR siw0
start_nfsd || ktap_exit_fail_msg "nfsd did not start"

kmsg_mark stock_overread
# Each short request is accepted (the server answers its own message).
accepted() {
	local hex reply ok=0
	for hex in f6 f6ab0e f6ab0e18010103; do
		reply=$("$TOOL" probe --json --pdata "$hex" "$SIW_ADDR:$NFS_PORT" | jq -r .received.raw)
		ktap_print_msg "$((${#hex} / 2)) octets sent: the server answered '$reply'"
		[ -n "$reply" ] && [ "$reply" != null ] || ok=1
	done
	return $ok
}
ktap_test_result "requests with 1, 3 and 7 octets of private data over siw are answered" accepted
kasan_saw_it() {
	kernel_log_since stock_overread >/tmp/stock_overread.log || return 1
	if grep -qE "BUG: KASAN: slab-out-of-bounds in svc_rdma_" /tmp/stock_overread.log; then
		grep -m1 -A1 "BUG: KASAN" /tmp/stock_overread.log | sed 's/^/# /'
		return 0
	fi
	ktap_print_msg "no KASAN report of the stock server's over-read; the log since the requests:"
	sed 's/^/# /' /tmp/stock_overread.log | tail -20
	return 1
}
ktap_test_result "KASAN reports the stock server reading past the short private data" kasan_saw_it
ktap_finished
