#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The server's Receive buffers follow the client (7.3's "svcrdma: Size the
# Receive buffers by the client's send size", and the module's policy):
# with svcrdma's max_req_size at 65536, a requester that advertised a send
# size of S gets an Accept whose receive size is S (RFC 8797 section 3.1:
# it sends nothing larger), never less than 4096 without the module (the
# sysctl's smallest max_req_size) and never more than max_req_size; one
# that sent nothing gets max_req_size. With rpcrdma_cm loaded
# (responder_*_size=65536) the same without the 4096 floor.
#
# Each expectation is computed here from the sizes and the RFC: the
# Accept's octets as the requester received them (rpcrdma-cm probe, or the
# kernel client's xprtrdma_cm_private event) are decoded by
# rfc8797_oracle.py, not by the code under test, and the buffers are what
# the kernel allocated (kmem:kmalloc from svc_rdma_recv_ctxt_alloc: one
# context and one buffer per Receive). The data path is checked around the
# thresholds with O_DIRECT WRITEs and READs, byte-exact, and again after a
# reconnect with another client send size. 7.3 only: 6.12's series sizes
# the buffers by max_req_size (its module advertises the same sizes, into
# larger buffers).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# shellcheck source=reply_lib.sh
. "$DIR/reply_lib.sh"
selftest_begin cm_recv_follow tool module

case $(uname -r) in
7.3*) ;;
*) ktap_skip_all "the Receive buffers follow the client on 7.3's series only (this is $(uname -r))"
	exit "$KSFT_SKIP" ;;
esac

CLIENT_64K=f6ab0e1801003f3f # send 64 KB, receive 64 KB, no RI
SYSCTL=/proc/sys/sunrpc/svc_rdma/max_req_size
WSIZE=/proc/sys/sunrpc/rdma_max_inline_write
RSIZE=/proc/sys/sunrpc/rdma_max_inline_read
T=/sys/kernel/tracing
TRANSPORTS=rxe
ktap_plan_counted

old_req='' old_wsize='' old_rsize=''
cleanup() {
	umount_rdma
	echo 0 >$T/events/kmem/kmalloc/enable 2>/dev/null
	echo 0 >$T/events/kmem/kmalloc/filter 2>/dev/null
	echo 0 >$T/events/rpcrdma/xprtrdma_cm_private/enable 2>/dev/null
	[ -z "$old_req" ] || echo "$old_req" >$SYSCTL
	[ -z "$old_wsize" ] || echo "$old_wsize" >$WSIZE
	[ -z "$old_rsize" ] || echo "$old_rsize" >$RSIZE
	echo 0 >$T/events/kmem/kfree/enable 2>/dev/null
	reply_cleanup
}
rmmod rpcrdma_cm 2>/dev/null
reply_setup
old_req=$(cat $SYSCTL) && old_wsize=$(cat $WSIZE) && old_rsize=$(cat $RSIZE) ||
	ktap_exit_fail_msg "no $SYSCTL, $WSIZE or $RSIZE"
mountpoint -q $T || mount -t tracefs nodev $T
echo 65536 >$SYSCTL || ktap_exit_fail_msg "max_req_size 65536 refused"
ktap_test_result "the server's grace period ends: a 500-octet READ succeeds" grace_over

# trace_on: an empty trace of the kmallocs of 1 KB and more (those of
# svcrdma's receive contexts among them) and of the client's CM private
# data event.
trace_on() {
	echo 0 >$T/tracing_on
	echo 16384 >$T/buffer_size_kb
	echo >$T/trace
	echo 'bytes_req >= 1024' >$T/events/kmem/kmalloc/filter || return 1
	echo 1 >$T/events/kmem/kmalloc/enable
	echo 1 >$T/events/rpcrdma/xprtrdma_cm_private/enable
	echo 1 >$T/tracing_on
}
trace_off() {
	echo 0 >$T/events/kmem/kmalloc/enable
	echo 0 >$T/events/rpcrdma/xprtrdma_cm_private/enable
}

# buffers_are SIZE: every receive context allocated since trace_on came
# with one buffer of SIZE octets: svc_rdma_recv_ctxt_alloc (inlined into
# svc_rdma_post_recvs in the test kernels) allocates the context (zeroed,
# __GFP_ZERO, left out; its size depends on nfsd's largest payload) and
# its buffer; the trace must show at least 64 buffers (svcrdma posts its
# credits' worth and more per connection), all of SIZE.
buffers_are() {
	local want=$1 sizes n lost a b
	# Nothing lost: "# entries-in-buffer/entries-written: N/N".
	lost=$(sed -n 's/^# entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\) .*/\1 \2/p' $T/trace)
	read -r a b <<<"$lost"
	[ -n "$a" ] && [ "$a" = "$b" ] || { ktap_print_msg "trace events lost: ${lost:-no header}"; return 1; }
	sizes=$(grep -v '__GFP_ZERO' $T/trace |
		sed -En 's/.* kmalloc: call_site=svc_rdma_(recv_ctxt_alloc|post_recvs)\+.* bytes_req=([0-9]+) .*/\2/p' |
		sort -n | uniq -c | awk '{ print $2 ":" $1 }' | paste -sd ' ')
	ktap_print_msg "receive context kmallocs (size:count): ${sizes:-none}"
	n=${sizes#"$want":}
	case $n in
	"" | *[!0-9]*) return 1 ;;
	esac
	[ "$n" -ge 64 ]
}

# accept_says HEX SEND RECV: the Accept's octets (hex, as received)
# decode, by the oracle, to a conforming message of send size SEND and
# receive size RECV.
accept_says() {
	local got
	got=$(/usr/bin/python3 "$DIR/rfc8797_oracle.py" decode "$1" |
		jq -r 'if .conforming then "\(.message.max_send) \(.message.max_recv)" else "none" end')
	ktap_print_msg "the Accept as the requester received it (${1:0:16}): send/recv ${got/ //}, want $2/$3"
	[ "$got" = "$2 $3" ]
}

# probe_accept CLIENT_PDATA SEND RECV: a probe requester sending
# CLIENT_PDATA gets an Accept of SEND/RECV, its READ of 500 octets is
# answered inline, and the server's receive buffers for it are RECV
# octets.
probe_accept() {
	local out rep read ok=0
	trace_on || return 1
	out=$(probe_out "$1" small 500)
	trace_off
	rep=$(jq -r '.received.raw // ""' <<<"$out")
	read=$(jq -r '.read | "proc=\(.procedure // -1) err=\(.error) nfs_status=\(.nfs_status // -1)"' <<<"$out")
	ktap_print_msg "the READ: $read"
	accept_says "$rep" "$2" "$3" || ok=1
	[ "$read" = "proc=0 err=0 nfs_status=0" ] || ok=1
	buffers_are "$3" || ok=1
	return $ok
}

# roundtrip: O_DIRECT WRITEs and READs of sizes around 4 KB and 64 KB
# (inline below the thresholds, chunks above), each file byte-exact.
roundtrip() {
	local n ok=0
	for n in 1 1000 3900 4000 4096 4097 8192 16384 65536 70000; do
		head -c $n /dev/urandom >/tmp/follow.src
		/usr/bin/python3 "$DIR/direct_io.py" write "$MNT/follow.$n" /tmp/follow.src >/dev/null &&
			/usr/bin/python3 "$DIR/direct_io.py" read "$MNT/follow.$n" /tmp/follow.back >/dev/null &&
			cmp -s /tmp/follow.src /tmp/follow.back &&
			cmp -s /tmp/follow.src "$NFS_EXPORT/follow.$n" ||
			{ ktap_print_msg "$n octets: not byte-exact"; ok=1; }
	done
	return $ok
}

# mount_accept WSIZE RECV: the kernel client with rdma_max_inline_write
# WSIZE (its advertised send size) mounts; the Accept it received says
# RECV, the server's buffers are RECV octets, files round-trip. The mount
# is left for the next check (umount_rdma in the caller).
mount_accept() {
	local peer ok=0
	echo "$1" >$WSIZE || return 1
	trace_on || return 1
	if ! mount_rdma "$rxe_ip" 4.2 soft,timeo=50,retrans=2; then
		trace_off
		ktap_print_msg "the mount failed"
		return 1
	fi
	ls "$MNT" >/dev/null
	trace_off
	peer=$(sed -n 's/.* xprtrdma_cm_private: .* peer=\([0-9a-f]*\) .*/\1/p' $T/trace | tail -n 1)
	accept_says "$peer" 65536 "$2" || ok=1
	buffers_are "$2" || ok=1
	roundtrip || ok=1
	return $ok
}
mount_checks() {
	local ok=0
	mount_accept "$@" || ok=1
	umount_rdma
	return $ok
}

# client_prepost: the client's side (7.3's "xprtrdma: Size the Receive
# buffers by the negotiated threshold"). It advertises a receive size of
# 64 KB (rdma_max_inline_read) to a server that sends 4 KB (max_req_size
# 4096): RFC 8797 gives a receive threshold of 4096, known only once the
# Accept is in. The mount's kmalloc trace must show one buffer of 64 KB
# from xprtrdma (the Receive posted before the connection was
# established), not a batch of them, and that buffer freed (shrunk to the
# threshold when it is posted again) while the mount is still up.
client_prepost() {
	local big ptr ok=0
	echo 4096 >$SYSCTL && echo 65536 >$RSIZE || return 1
	trace_on || return 1
	echo 1 >$T/events/kmem/kfree/enable
	if mount_rdma "$rxe_ip" 4.2 soft,timeo=50,retrans=2; then
		ls "$MNT" >/dev/null
		roundtrip || ok=1
	else
		ktap_print_msg "the mount failed"
		ok=1
	fi
	trace_off
	echo 0 >$T/events/kmem/kfree/enable
	big=$(grep -E ' kmalloc: call_site=rpcrdma_\S+ \[rpcrdma\] ptr=\S+ bytes_req=65536 ' $T/trace)
	ktap_print_msg "xprtrdma's 64 KB allocations: $(grep -c . <<<"$big") (want 1: the Receive before the connection)"
	[ "$(grep -c . <<<"$big")" = 1 ] || ok=1
	ptr=$(sed -n 's/.* ptr=\([0-9a-fx]*\) .*/\1/p' <<<"$big" | head -n 1)
	if [ -n "$ptr" ] && grep -q " kfree: call_site=.* ptr=$ptr\b" $T/trace; then
		ktap_print_msg "it was freed while the mount was up (shrunk to the threshold)"
	else
		ktap_print_msg "it was not freed while the mount was up"
		ok=1
	fi
	grep -q 'entries-in-buffer/entries-written: \([0-9]*\)/\1 ' $T/trace ||
		{ ktap_print_msg "trace events lost"; ok=1; }
	umount_rdma
	echo "$old_rsize" >$RSIZE
	echo 65536 >$SYSCTL
	return $ok
}

# in_flight_reconnects: NFSv3 I/O in flight in three workers, O_DIRECT
# WRITEs and READs of sizes around 4 KB and 16 KB, while nfsd restarts
# twice, its max_req_size going 4096 -> 16384 -> 4096, with a client
# that advertises a receive size of 64 KB: the client's Receive buffers
# follow the threshold down and up again (4096, 16384, 4096, each
# connection's Accept as the client received it, decoded here), and every
# file comes back byte-exact.
io_worker() {
	local id=$1 n rc=0 round=0
	while [ ! -e /tmp/rif.stop ] || [ $round -lt 2 ]; do
		for n in 3900 4097 16000 16385 70000; do
			head -c $n /dev/urandom >/tmp/rif.$id.src
			/usr/bin/python3 "$DIR/direct_io.py" write "$MNT/rif.$id.$n" /tmp/rif.$id.src >/dev/null &&
				/usr/bin/python3 "$DIR/direct_io.py" read "$MNT/rif.$id.$n" /tmp/rif.$id.back >/dev/null &&
				cmp -s /tmp/rif.$id.src /tmp/rif.$id.back ||
				{ echo "worker $id: $n octets not byte-exact" >>/tmp/rif.err; rc=1; }
		done
		[ -e /tmp/rif.stop ] && round=$((round + 1))
	done
	return $rc
}
nfsd_restart() {
	rpc.nfsd 0 && echo "$1" >$SYSCTL && rpc.nfsd 4 &&
		echo "rdma $NFS_PORT" >/proc/fs/nfsd/portlist
}
in_flight_reconnects() {
	local pids=() p ok=0 sends
	rm -f /tmp/rif.stop /tmp/rif.err
	echo 4096 >$SYSCTL && echo 65536 >$RSIZE || return 1
	echo >$T/trace
	echo 1 >$T/events/rpcrdma/xprtrdma_cm_private/enable
	mount_rdma "$rxe_ip" 3 || { ktap_print_msg "the mount failed"; return 1; }
	for p in 1 2 3; do
		io_worker $p &
		pids+=($!)
	done
	sleep 3
	nfsd_restart 16384 || ok=1
	sleep 8
	nfsd_restart 4096 || ok=1
	sleep 8
	touch /tmp/rif.stop
	for p in "${pids[@]}"; do
		wait "$p" || ok=1
	done
	trace_off
	[ ! -s /tmp/rif.err ] || { sed 's/^/# /' /tmp/rif.err; ok=1; }
	sends=$(sed -n 's/.* xprtrdma_cm_private: .* peer=\([0-9a-f]*\) .*/\1/p' $T/trace |
		while read -r hex; do
			/usr/bin/python3 "$DIR/rfc8797_oracle.py" decode "$hex" | jq -r '.message.max_send // "none"'
		done | uniq | paste -sd ' ')
	ktap_print_msg "the server's send size in each Accept, in order (repeats once): $sends"
	[ "$sends" = "4096 16384 4096" ] || ok=1
	umount_rdma
	echo "$old_rsize" >$RSIZE
	echo 65536 >$SYSCTL
	return $ok
}

prefix="max_req_size 65536, no module"
ktap_test_result "$prefix: a requester advertising 4 KB gets receive 4096, 4096-octet buffers" \
	probe_accept $CLIENT_4K 65536 4096
ktap_test_result "$prefix: one advertising 16 KB gets 16384" \
	probe_accept $CLIENT_16K 65536 16384
ktap_test_result "$prefix: one advertising 1 KB gets 4096, the sysctl's floor" \
	probe_accept $CLIENT_1K 65536 4096
ktap_test_result "$prefix: one advertising 64 KB and sending 500-octet Calls gets 65536" \
	probe_accept $CLIENT_64K 65536 65536
# Its receive size is what the server provisions, 65536 octets, and the
# RFC's 1 KB for its send size is what it may send: stock svcrdma
# advertises max_req_size, unrounded buffers.
ktap_test_result "$prefix: one that sent no private data gets 65536 (max_req_size)" \
	probe_accept $CLIENT_NONE 65536 65536
ktap_test_result "$prefix: the kernel client (send 4 KB) mounts with 4096-octet buffers, files byte-exact" \
	mount_checks 4096 4096
ktap_test_result "$prefix: it reconnects with send 16 KB and gets 16384-octet buffers, files byte-exact" \
	mount_checks 16384 16384
echo "$old_wsize" >$WSIZE
ktap_test_result "a client advertising receive 64 KB to a 4 KB server keeps no batch of 64 KB buffers" \
	client_prepost
ktap_test_result "I/O in flight across reconnects to servers sending 16 KB, then 4 KB: byte-exact" \
	in_flight_reconnects

insmod "$RPCRDMA_CM_KO" responder_send_size=65536 responder_recv_size=65536 ||
	ktap_exit_fail_msg "insmod responder_*_size=65536 failed"
prefix="rpcrdma_cm responder sizes 65536"
ktap_test_result "$prefix: a requester advertising 1 KB gets receive 1024, 1024-octet buffers" \
	probe_accept $CLIENT_1K 65536 1024
ktap_test_result "$prefix: one advertising 64 KB gets 65536" \
	probe_accept $CLIENT_64K 65536 65536
ktap_test_result "$prefix: one that sent no private data gets 65536" \
	probe_accept $CLIENT_NONE 65536 65536
ktap_test_result "$prefix: the kernel client (send 4 KB) mounts with 4096-octet buffers, files byte-exact" \
	mount_checks 4096 4096
ktap_test_result "$prefix: it reconnects with send 8 KB and gets 8192-octet buffers, files byte-exact" \
	mount_checks 8192 8192
echo "$old_wsize" >$WSIZE

ktap_finished
