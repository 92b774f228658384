#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RFC 8797 negotiation through rpcrdma_cm, client and server in one guest
# (both ends of every connection are visible in debugfs):
#  - threshold matrix: client-advertised x server-advertised sizes; both
#    sides' debugfs lines and the client's rpcrdma:xprtrdma_inline_thresh
#    tracepoint follow the min() rule;
#  - private data off: both ends see a non-conforming peer and fall back
#    to 1024/1024 without Remote Invalidation; the mount still works;
#  - debugfs lines go away when the connection closes;
#  - module unloaded: the stock negotiation (same values as with the
#    module at its defaults), no debugfs directory.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root

SIZES="1024 4096 16384 65536"
T=/sys/kernel/tracing
D=/sys/kernel/debug
CONN=$D/rpcrdma_cm/connections
P=/sys/module/rpcrdma_cm/parameters

ktap_print_header
require_module_ko
ktap_set_plan $(( $(echo $SIZES | wc -w) ** 2 + 6 ))

mountpoint -q $T || mount -t tracefs nodev $T
mountpoint -q $D || mount -t debugfs nodev $D
nic=$(guest_nic) && setup_rxe "$nic" || ktap_exit_fail_msg "no ACTIVE rxe device"
ip=$(guest_ip "$nic")
modprobe rpcrdma
start_nfsd || ktap_exit_fail_msg "nfsd did not start"
echo 1 >$T/events/rpcrdma/xprtrdma_inline_thresh/enable

# field ROLE KEY: the value of KEY on the ROLE line of debugfs.
field() {
	grep "^role=$1 " $CONN | head -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# The client's tracepoint: "neg send/recv=S/R".
traced_neg() {
	grep -o 'neg send/recv=[0-9]*/[0-9]*' $T/trace | tail -1 | cut -d= -f2
}

# mount_and_check WANT_SEND WANT_RECV WANT_RI: mount, write a file,
# compare both sides' negotiated values and the tracepoint.
mount_and_check() {
	local want=$1 want_ri=$2 ok=0 k
	echo >$T/trace
	mount_rdma "$ip" 4.2 || { ktap_print_msg "mount failed"; return 1; }
	echo hello >"$MNT/probe" && [ "$(cat "$MNT/probe")" = hello ] || ok=1
	for k in requester responder; do
		local s r ri
		s=$(field $k send_threshold) r=$(field $k recv_threshold) ri=$(field $k remote_inv)
		if [ "$s/$r/$ri" != "$want/$want/$want_ri" ]; then
			ktap_print_msg "$k: send/recv/ri $s/$r/$ri, want $want/$want/$want_ri"
			ok=1
		fi
	done
	if [ "$(traced_neg)" != "$want/$want" ]; then
		ktap_print_msg "tracepoint neg send/recv=$(traced_neg), want $want/$want"
		ok=1
	fi
	[ $ok = 0 ] || sed 's/^/# /' $CONN
	rm -f "$MNT/probe"
	umount_rdma
	return $ok
}

rmmod rpcrdma_cm 2>/dev/null
insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"

for c in $SIZES; do
	for s in $SIZES; do
		echo "$c" >$P/requester_send_size
		echo "$c" >$P/requester_recv_size
		echo "$s" >$P/responder_send_size
		echo "$s" >$P/responder_recv_size
		min=$((c < s ? c : s))
		ktap_test_result "client $c x server $s: both sides and the tracepoint use $min" \
			mount_and_check "$min" 1
	done
done

no_lines_left() {
	local i
	for i in $(seq 1 40); do
		[ -z "$(grep '^role=requester' $CONN)" ] &&
			[ -z "$(grep '^role=responder' $CONN)" ] && return 0
		sleep 0.25
	done
	sed 's/^/# left: /' $CONN
	return 1
}
ktap_test_result "debugfs lines go away when connections close" no_lines_left

for p in requester_send_size requester_recv_size responder_send_size responder_recv_size; do
	echo 0 >$P/$p
done
echo N >$P/send_private_data
off_check() {
	mount_and_check 1024 0 || return 1
	grep -q "requester.*private_data_off=1" $D/rpcrdma_cm/stats &&
		grep -q "responder.*private_data_off=1" $D/rpcrdma_cm/stats
}
ktap_test_result "private data off: both ends fall back to 1024/1024, no RI, mount works" off_check
# IB/RoCE pad the CM area with zeros: "sent nothing" arrives as zeros.
absence_counted() {
	grep -Eq 'requester .*(absent|zeroed)=[1-9]' $D/rpcrdma_cm/stats &&
		grep -Eq 'responder .*(absent|zeroed)=[1-9]' $D/rpcrdma_cm/stats
}
ktap_test_result "private data off: the peer's absence is counted as non-conforming" absence_counted
echo Y >$P/send_private_data

ktap_test_result "module defaults: 4096/4096 with Remote Invalidation (stock sizes)" \
	mount_and_check 4096 1
unloaded() {
	rmmod rpcrdma_cm && [ ! -e $D/rpcrdma_cm ]
}
ktap_test_result "rmmod rpcrdma_cm: debugfs directory gone" unloaded

stock_check() {
	echo >$T/trace
	mount_rdma "$ip" 4.2 || return 1
	local neg
	neg=$(traced_neg)
	umount_rdma
	ktap_print_msg "stock: neg send/recv=$neg"
	[ "$neg" = 4096/4096 ]
}
ktap_test_result "module unloaded: stock negotiation 4096/4096" stock_check

stop_nfsd
ktap_finished
