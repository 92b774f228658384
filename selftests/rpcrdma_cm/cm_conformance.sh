#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The responder's view of what requesters send: a userspace requester
# (cm_probe.py, rdma-core pyverbs) connects to nfsd's RDMA listener with
# conforming and non-conforming private data. With rpcrdma_cm loaded the
# server answers every one with its own advertisement (Remote Invalidation
# flag included) and counts each cause in debugfs; unloaded, the stock
# server answers with flags 0.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root

D=/sys/kernel/debug
STATS=$D/rpcrdma_cm/stats
PROBE="/usr/bin/python3 $DIR/cm_probe.py"

ktap_print_header
require_pyverbs
require_module_ko

# name|private data sent ("none": no private data)|counter that must rise
# IB and RoCE pad the CM area (56 octets in a REQ) with zeros, so nothing
# arrives as zeros and 3 octets as a magic with a zero low octet.
CASES="conforming, RI offered|f6ab0e1801010303|conforming
absent|none|zeroed
short (3 octets, zero-padded by the CM)|f6ab0e|bad_magic
little-endian magic|180eabf601010303|bad_magic
version 2|f6ab0e1802010303|unknown_version
reserved flag bit set|f6ab0e1801810f0f|reserved_flags
eight zero octets|0000000000000000|zeroed"
ktap_set_plan $(( $(echo "$CASES" | wc -l) + 2 ))

mountpoint -q $D || mount -t debugfs nodev $D
nic=$(guest_nic) && setup_rxe "$nic" || ktap_exit_fail_msg "no ACTIVE rxe device"
ip=$(guest_ip "$nic")
modprobe rpcrdma
rmmod rpcrdma_cm 2>/dev/null
insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
start_nfsd || ktap_exit_fail_msg "nfsd did not start"

counter() {
	grep '^responder ' $STATS | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# probe_case HEX|none COUNTER: the server answers f6ab0e18 01 01 03 03
# (4 KB, RI capable) and COUNTER rises by one.
probe_case() {
	local before after reply hex=$1
	[ "$hex" = none ] && hex=
	before=$(counter "$2")
	reply=$($PROBE "$ip" "$NFS_PORT" "$hex") || return 1
	after=$(counter "$2")
	if [ "${reply:0:16}" != f6ab0e1801010303 ] || [ "$after" != $((before + 1)) ]; then
		ktap_print_msg "reply ${reply:0:16}, $2 $before -> $after"
		return 1
	fi
}

while IFS='|' read -r name hex count; do
	ktap_test_result "$name: server answers with its advertisement, counts $count" \
		probe_case "$hex" "$count"
done <<<"$CASES"

ri_counted() {
	# Only the two requests with the RI bit (and conforming) enable it.
	[ "$(counter remote_inv)" = 2 ] && [ "$(counter connections)" = 7 ]
}
ktap_test_result "Remote Invalidation used only where the requester offered it" ri_counted

stock_reply() {
	local reply
	rmmod rpcrdma_cm || return 1
	reply=$($PROBE "$ip" "$NFS_PORT" f6ab0e1801010303) || return 1
	ktap_print_msg "stock server answered ${reply:0:16}"
	[ "${reply:0:16}" = f6ab0e1801000303 ]
}
ktap_test_result "module unloaded: stock server answers with flags 0" stock_reply

stop_nfsd
ktap_finished
