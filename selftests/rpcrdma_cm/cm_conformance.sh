#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The responder's view of what requesters send: a userspace requester
# (cm_probe.py, rdma-core pyverbs) connects to nfsd's RDMA listener with
# conforming and non-conforming private data. With rpcrdma_cm loaded the
# server answers every one with its own advertisement (Remote Invalidation
# flag included), counts each cause in debugfs and its
# rpcrdma:svcrdma_cm_private tracepoint shows the raw and decoded private
# data it received; unloaded, the stock server answers with flags 0. A
# requester connecting and disconnecting 1000 times leaves no debugfs
# line behind.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root

D=/sys/kernel/debug
STATS=$D/rpcrdma_cm/stats
CONN=$D/rpcrdma_cm/connections
T=/sys/kernel/tracing
CONNECTS=1000
PROBE="/usr/bin/python3 $DIR/cm_probe.py"

ktap_print_header
require_pyverbs
require_module_ko

# name|private data sent ("none": no private data)|counter that must rise
# |whether the tracepoint decodes a Version One message
# IB and RoCE pad the CM area (56 octets in a REQ) with zeros, so nothing
# arrives as zeros and 3 octets as a magic with a zero low octet.
CASES="conforming, RI offered|f6ab0e1801010303|conforming|yes
absent|none|zeroed|no
short (3 octets, zero-padded by the CM)|f6ab0e|bad_magic|no
little-endian magic|180eabf601010303|bad_magic|no
version 2|f6ab0e1802010303|unknown_version|no
reserved flag bit set|f6ab0e1801810f0f|reserved_flags|yes
eight zero octets|0000000000000000|zeroed|no"
ktap_set_plan $(( $(echo "$CASES" | wc -l) + 3 ))

mountpoint -q $D || mount -t debugfs nodev $D
mountpoint -q $T || mount -t tracefs nodev $T
echo 1 >$T/events/rpcrdma/svcrdma_cm_private/enable
nic=$(guest_nic) && setup_rxe "$nic" || ktap_exit_fail_msg "no ACTIVE rxe device"
ip=$(guest_ip "$nic")
modprobe rpcrdma
rmmod rpcrdma_cm 2>/dev/null
insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
start_nfsd || ktap_exit_fail_msg "nfsd did not start"

counter() {
	grep '^responder ' $STATS | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# probe_case HEX|none COUNTER V1: the server answers f6ab0e18 01 01 03 03
# (4 KB, RI capable), COUNTER rises by one and the tracepoint shows the
# first eight octets received (zero-padded by the CM) and V1 (yes or no).
probe_case() {
	local before after reply hex=$1 raw got
	[ "$hex" = none ] && hex=
	raw=$(printf '%-16s' "$hex" | tr ' ' 0)
	before=$(counter "$2")
	echo >$T/trace
	reply=$($PROBE "$ip" "$NFS_PORT" "$hex") || return 1
	after=$(counter "$2")
	if [ "${reply:0:16}" != f6ab0e1801010303 ] || [ "$after" != $((before + 1)) ]; then
		ktap_print_msg "reply ${reply:0:16}, $2 $before -> $after"
		return 1
	fi
	got=$(for k in by peer_len peer peer_v1 sent; do
		traced_value svcrdma_cm_private $k
	done | paste -sd ' ')
	if [ "$got" != "module 56 $raw $3 f6ab0e1801010303" ]; then
		traced_cm_private svcrdma_cm_private | sed 's/^/# /'
		ktap_print_msg "want peer_len=56 peer=$raw peer_v1=$3 sent=f6ab0e1801010303"
		return 1
	fi
}

while IFS='|' read -r name hex count v1; do
	ktap_test_result "$name: server answers with its advertisement, counts $count, traces it" \
		probe_case "$hex" "$count" "$v1"
done <<<"$CASES"

ri_counted() {
	# Only the two requests with the RI bit (and conforming) enable it.
	[ "$(counter remote_inv)" = 2 ] && [ "$(counter connections)" = 7 ]
}
ktap_test_result "Remote Invalidation used only where the requester offered it" ri_counted

# After CONNECTS connections the responder lines are gone again (the
# transports are freed asynchronously: wait up to 60 s).
no_leak() {
	local before after i lines
	before=$(counter connections)
	$PROBE --times $CONNECTS "$ip" "$NFS_PORT" f6ab0e1801010303 >/dev/null || return 1
	after=$(counter connections)
	for i in $(seq 1 240); do
		lines=$(grep -c '^role=responder ' $CONN)
		[ "$lines" = 0 ] && break
		sleep 0.25
	done
	ktap_print_msg "$((after - before)) connections counted, $lines debugfs lines left"
	[ $((after - before)) = $CONNECTS ] && [ "$lines" = 0 ]
}
ktap_test_result "$CONNECTS connect/disconnect cycles leave no debugfs line behind" no_leak

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
