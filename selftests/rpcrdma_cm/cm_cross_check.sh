#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The transports decode what a CM private data hook wrote and keep it in
# line with what the hook says it provisions. A hook answers only with its
# octets and the sizes it provisions (the hooks take no thresholds from
# it): test_modules/lying_hook/rpcrdma_cm.ko (cm_lying_hook.c, for this
# test only, named rpcrdma_cm as the hooks' exports require) makes the two
# disagree in one way per load. Each time an NFSv4.2 mount over RDMA must
# work (and a 32 KB file round-trip byte-exact), and the trace must show
# what was applied:
#  - lie=recv: the client advertises 64 KB receive over 1 KB buffers:
#    refused (a peer would send 64 KB into them); stock connect, 4 KB;
#  - lie=send: the client advertises 1 KB send but provisions 16 KB: it
#    sends at most 1 KB inline, receives at most the server's 4 KB, and
#    has Remote Invalidation, which both messages offer (the series'
#    svcrdma advertises it);
#  - lie=accept: the server advertises 64 KB receive over 4 KB: refused;
#  - lie=len57, len7 (the first 7 octets of a message, which IB/RoCE pad
#    into one the C side never checked, iWARP into none), small
#    (512-octet buffers), big (128 KB receive), reserved (a reserved flag
#    bit set): refused;
#  - lie=accept_ri: the server's octets say no Remote Invalidation, its
#    limits keep it on: the transport does not use it;
#  - lie=accept_send_over: the server advertises 16 KB send over 4 KB
#    send buffers: refused (a 16 KB requester would expect 16 KB Replies
#    inline); stock accept.
# Every refusal is reported in the kernel log, rate-limited.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_cross_check tool rxe nfsd

LYING_KO=$DIR/test_modules/lying_hook/rpcrdma_cm.ko

if [ ! -r "$LYING_KO" ]; then
	ktap_skip_all "$LYING_KO not built (make selftests builds it)"
	exit "$KSFT_SKIP"
fi
require_loadable_test_hook
ktap_plan_counted
rmmod rpcrdma_cm 2>/dev/null
[ ! -d /sys/module/rpcrdma_cm ] || ktap_exit_fail_msg "rpcrdma_cm is loaded and does not unload"

# with_lie LIE EVENT K=V...: mount with the lying hook (lie=LIE) loaded, round
# trip a 32 KB file, and check each K=V (by and the sizes) in the last
# EVENT of the trace. (The pairs are separate arguments: ktap_test_result
# splits its command's arguments on spaces.)
with_lie() {
	local lie=$1 event=$2 want="${*:3}" got k f=/tmp/cm_cross_check.data
	trace_cm_private "$event" || return 1
	insmod "$LYING_KO" lie="$lie" || return 1
	head -c 32768 /dev/urandom >$f
	if ! mount_rdma "$ip" 4.2 soft,timeo=50,retrans=2; then
		rmmod rpcrdma_cm
		ktap_print_msg "mount failed"
		return 1
	fi
	cp $f "$MNT/cross_check" && echo 3 >/proc/sys/vm/drop_caches &&
		cmp $f "$MNT/cross_check"
	local rc=$?
	umount_rdma
	rmmod rpcrdma_cm || return 1
	[ $rc = 0 ] || { ktap_print_msg "the 32 KB file did not round-trip"; return 1; }
	got=$(for k in $want; do
		k=${k%%=*}
		echo "$k=$(traced_value "$event" "$k")"
	done | paste -sd ' ')
	ktap_print_msg "lie=$lie: traced '$got'"
	if [ "$got" != "$want" ]; then
		traced_cm_private "$event" | sed 's/^/# /'
		ktap_print_msg "traced '$got', want '$want'"
		return 1
	fi
}

ktap_test_result "lie=recv: 64 KB receive advertised over 1 KB buffers is refused; stock connect, file round-trips" \
	with_lie recv xprtrdma_cm_private "by=stock sent_recv=4096"
ktap_test_result "lie=send: 1 KB send advertised, 16 KB provisioned: 1024 out, 4096 in, RI as both messages allow; file round-trips" \
	with_lie send xprtrdma_cm_private \
	"by=module sent_send=1024 send_threshold=1024 recv_threshold=4096 remote_inv=on"
ktap_test_result "lie=accept: server's 64 KB receive over 4 KB buffers is refused; stock accept, file round-trips" \
	with_lie accept svcrdma_cm_private "by=stock sent_recv=4096"

# probe_with_lie LIE PDATA K=V...: a userspace requester sending PDATA
# connects with the lying hook (lie=LIE) loaded; each K=V must be in the
# server's last svcrdma_cm_private event.
probe_with_lie() {
	local lie=$1 pdata=$2 rc
	shift 2
	trace_cm_private svcrdma_cm_private || return 1
	insmod "$LYING_KO" lie="$lie" || return 1
	probe_pdata "$pdata" "$ip:$NFS_PORT" >/dev/null
	rc=$?
	rmmod rpcrdma_cm || return 1
	[ $rc = 0 ] || { ktap_print_msg "the requester's connection failed"; return 1; }
	traced_is svcrdma_cm_private "$@" || { traced_cm_private svcrdma_cm_private | sed 's/^/# /'; return 1; }
}

# The server's octets say no Remote Invalidation (flags 0) while its limits
# keep it on: RFC 8797 allows it only if both peers support it, so the
# transport must not post Send With Invalidate to a requester that offered
# it.
ktap_test_result "lie=accept_ri: the server's octets deny Remote Invalidation, its limits keep it on: not used" \
	probe_with_lie accept_ri f6ab0e1801010303 by=module sent=f6ab0e1801000303 remote_inv=off
ktap_test_result "lie=accept_send_over: 16 KB send advertised over 4 KB send buffers is refused; stock accept" \
	probe_with_lie accept_send_over f6ab0e1801000f0f by=stock send_threshold=4096
ktap_test_result "lie=reserved: a reserved flag bit in the hook's octets is refused; stock connect, file round-trips" \
	with_lie reserved xprtrdma_cm_private "by=stock sent_len=8"

ktap_test_result "lie=len57: 57 octets of private data are refused; stock connect, file round-trips" \
	with_lie len57 xprtrdma_cm_private "by=stock sent_len=8"
ktap_test_result "lie=len7: 7 octets of private data are refused; stock connect, file round-trips" \
	with_lie len7 xprtrdma_cm_private "by=stock sent_len=8"
ktap_test_result "lie=small: 512-octet buffers are refused; stock connect, file round-trips" \
	with_lie small xprtrdma_cm_private "by=stock sent_recv=4096"
ktap_test_result "lie=big: 128 KB receive buffers (above the 64 KB ceiling) are refused; stock connect" \
	with_lie big xprtrdma_cm_private "by=stock sent_recv=4096"

log_clean() {
	local log=/tmp/cm_cross_check.log n
	kernel_log_since cm_cross_check >$log || return 1
	# Each of the seven refusals (recv, accept, reserved, len57, len7,
	# small, big) is reported (rate-limited to 10 in 5 s); nothing else
	# may be.
	n=$(grep -c "CM private data hook answer refused" $log)
	ktap_print_msg "refusals reported: $n"
	[ "$n" -ge 7 ] || return 1
	no_kernel_report $log
}
ktap_test_result "kernel log since the first mount: the refusals reported, no other report" log_clean

stop_nfsd
ktap_finished
