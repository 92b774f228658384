#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A connection is negotiated by what built its connect, not by whatever is
# registered when it is established. A userspace responder
# (rpcrdma-cm respond --wait-for) holds the kernel NFS client's connect request
# until the test has unloaded or loaded rpcrdma_cm and created the file;
# only then does it accept. The client's rpcrdma:xprtrdma_cm_private event
# shows what it then applied:
#  - built by the module with no private data, module unloaded before
#    ESTABLISHED: the server takes the client as 1 KB each way (RFC 8797),
#    so the client must use 1024/1024, from the octets really sent
#    (by=bound), not the stock computation (which assumes the stock
#    message went out);
#  - built by the stock code, module loaded before ESTABLISHED: the module
#    must not answer for a connect it did not build (by=stock, the stock
#    thresholds and Remote Invalidation, its counters untouched);
#  - control: the module loaded throughout answers (by=module).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_latch tool module rxe

PORT=20051
# The responder's accept: 16 KB each way, Remote Invalidation.
ACCEPT=f6ab0e1801010f0f

ktap_plan_counted


# connect_with_window ACTION: the kernel client connects to a responder
# that accepts only once ACTION, run after the connect request arrived,
# has returned. Leaves the client's event in the trace.
connect_with_window() {
	local out=/tmp/cm_latch.responder go=/tmp/cm_latch.go pid mpid
	rm -f $go
	trace_cm_private xprtrdma_cm_private || return 1
	timeout 240 "$TOOL" respond --count 1 --pdata $ACCEPT --hold 3 --wait-for $go "$ip:$PORT" >$out 2>&1 &
	pid=$!
	wait_for_line 20 $out listening
	mkdir -p "$MNT"
	timeout 90 mount -t nfs -o vers=4.0,proto=rdma,port=$PORT,soft,timeo=20,retrans=1,retry=0 \
		"$ip:/" "$MNT" >/dev/null 2>&1 &
	mpid=$!
	# The second line is the requester's private data: the request is in.
	slowwait 30 has_lines 2 $out
	if [ "$(wc -l <$out)" -lt 2 ]; then
		sed 's/^/# responder: /' $out
		ktap_print_msg "no connect request reached the responder"
		kill $mpid $pid 2>/dev/null
		wait
		return 1
	fi
	ktap_print_msg "connect request: $(sed -n '2s/.* req=\(.\{1,16\}\).*/\1/p' $out)"
	"$@" || { ktap_print_msg "'$*' failed"; kill $mpid $pid; wait; return 1; }
	touch $go
	wait $mpid && umount "$MNT"
	if ! wait $pid; then
		sed 's/^/# responder: /' $out
		ktap_print_msg "the responder did not see the connection through"
		return 1
	fi
}

# expect_traced WANT: the client's last xprtrdma_cm_private event has
# "by sent_len send_threshold recv_threshold remote_inv" = WANT.
expect_traced() {
	traced_expect xprtrdma_cm_private "by sent_len send_threshold recv_threshold remote_inv" "$1"
}

requester_connections() {
	stat_counter requester connections
}

unloaded_between() {
	insmod "$RPCRDMA_CM_KO" send_private_data=0 || return 1
	connect_with_window rmmod rpcrdma_cm || return 1
	expect_traced "bound 0 1024 1024 off"
}
ktap_test_result "built by the module without private data, unloaded before ESTABLISHED: 1024/1024 from the octets sent" \
	unloaded_between

loaded_between() {
	local n
	connect_with_window insmod "$RPCRDMA_CM_KO" requester_send_size=65536 \
		requester_recv_size=65536 remote_invalidation=0 || return 1
	expect_traced "stock 8 4096 4096 on" || return 1
	n=$(requester_connections)
	[ "$n" = 0 ] || { ktap_print_msg "the module counted $n requester connection(s)"; return 1; }
}
ktap_test_result "built by the stock code, module loaded before ESTABLISHED: stock answer, module not asked" \
	loaded_between

loaded_throughout() {
	rmmod rpcrdma_cm 2>/dev/null
	insmod "$RPCRDMA_CM_KO" requester_send_size=65536 requester_recv_size=65536 \
		remote_invalidation=0 || return 1
	connect_with_window true || return 1
	rmmod rpcrdma_cm || return 1
	expect_traced "module 8 16384 16384 off"
}
ktap_test_result "module loaded throughout (64 KB, no RI offered): it answers, 16 KB from the responder" \
	loaded_throughout

ktap_test_result "kernel log since the first connection: no report" no_report_since cm_latch

ktap_finished
