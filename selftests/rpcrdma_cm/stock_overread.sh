#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The memory checker against the bug the series fixes, on the unpatched
# kernel built with KASAN (build-kernel.sh stock on 7.3, in make check's
# stock conformance guest; stock-checked in make check-memory). A
# requester sends nfsd's RDMA listener short private data over siw,
# which delivers exactly what was sent: iw_cm hands the server a
# kmemdup() of those octets. The stock server
# (svc_rdma_parse_connect_private) reads the 4-octet magic, and after a
# matching magic the version and flags octets (4 and 5): with 1 and 3
# octets it reads past them, with 7 it does not (the receive size, octet
# 7, is read only by a dprintk). KASAN, booted with kasan_multi_shot so
# that each request gets its own report, must report exactly those reads
# in svcrdma's CM handler, of an object of the octets' size.
# Not in TEST_PROGS: on a patched kernel the same requests must leave no
# report, which cm_iwarp_short.sh checks; there, and on a kernel without
# KASAN, this program skips, unless RPCRDMA_CM_STOCK_OVERREAD_REQUIRED=1
# (make check-memory; make check's stock conformance guest on a stock
# kernel with KASAN) makes that a failure.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin stock_overread tool guest

not_here() {
	if [ "${RPCRDMA_CM_STOCK_OVERREAD_REQUIRED:-}" = 1 ]; then
		ktap_set_plan 1
		ktap_test_fail "the unpatched kernel with KASAN: $1"
		ktap_finished
	fi
	ktap_skip_all "$1"
	exit "$KSFT_SKIP"
}
[ ! -d /sys/kernel/tracing/events/rpcrdma/svcrdma_cm_private ] ||
	not_here "a patched kernel (it traces svcrdma_cm_private): cm_iwarp_short.sh checks it"
kernel_has_kasan || not_here "a kernel without KASAN"
grep -qw kasan_multi_shot /proc/cmdline || not_here "booted without kasan_multi_shot"

# octets sent|whether the stock server reads past them
CASES="f6|yes
f6ab0e|yes
f6ab0e18010103|no"
ktap_plan_counted "$(echo "$CASES" | wc -l)"

SIW_NIC=rcmsiw0
SIW_ADDR=192.0.2.77
cleanup() {
	stop_nfsd
	rdma link delete siw0 2>/dev/null
	ip link delete $SIW_NIC 2>/dev/null
}
siw_setup $SIW_NIC $SIW_ADDR siw0
start_nfsd || ktap_exit_fail_msg "nfsd did not start"

# request_case HEX WANT: the request is answered; KASAN reports a read
# past its octets in svc_rdma_listen_handler (WANT yes) or nothing.
request_case() {
	local hex=$1 want=$2 len=$((${#1} / 2)) reply mark log
	mark=short_pdata_$len
	kmsg_mark "$mark"
	reply=$("$TOOL" probe --json --pdata "$hex" "$SIW_ADDR:$NFS_PORT" | jq -r .received.raw)
	if [ -z "$reply" ] || [ "$reply" = null ]; then
		ktap_print_msg "$len octets: no answer from the server"
		return 1
	fi
	log=/tmp/$mark.log
	kernel_log_since "$mark" >"$log" || { sed 's/^/# /' "$log"; return 1; }
	if [ "$want" = no ]; then
		no_kernel_report "$log" "$len octets"
		return
	fi
	if grep -q "BUG: KASAN: slab-out-of-bounds in svc_rdma_listen_handler" "$log" &&
		grep -q "allocated $len-byte region" "$log"; then
		grep -m1 "BUG: KASAN" "$log" | sed 's/^/# /'
		return 0
	fi
	ktap_print_msg "$len octets: no KASAN report of svc_rdma_listen_handler reading past a $len-byte object; the log:"
	sed 's/^/# /' "$log" | tail -20
	return 1
}
while IFS='|' read -r hex want; do
	if [ "$want" = yes ]; then
		name="$((${#hex} / 2)) octets over siw: KASAN reports the stock server reading past them"
	else
		name="$((${#hex} / 2)) octets over siw: the stock server reads within them, no report"
	fi
	ktap_test_result "$name" request_case "$hex" "$want"
done <<<"$CASES"
ktap_finished
