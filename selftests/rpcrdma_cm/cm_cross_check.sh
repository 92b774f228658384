#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The transports decode what a CM private data hook wrote and keep it in
# line with what the hook says it provisions. cm_lying_hook.ko (built next
# to this script, for this test only) lies in one of three ways; each time
# an NFSv4.2 mount over RDMA must work, a 32 KB file must round-trip
# byte-exact, and the trace must show what the transport applied:
#  - lie=recv: the client advertises a 64 KB receive size but provisions
#    1 KB: the answer is refused (a peer would send 64 KB into 1 KB
#    buffers) and the stock code builds the connect (by=stock, 4 KB);
#  - lie=send: the client advertises a 1 KB send size but provisions 16 KB
#    and claims 16 KB at ESTABLISHED: it may send at most what it
#    advertised (send_threshold=1024);
#  - lie=accept: the server advertises a 64 KB receive size but
#    provisions 4 KB: refused, the stock accept goes out (by=stock).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root

LYING_KO=$DIR/cm_lying_hook/cm_lying_hook.ko

ktap_print_header
if [ ! -r "$LYING_KO" ]; then
	ktap_skip_all "$LYING_KO not built (make selftests builds it)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 4

nic=$(guest_nic) && setup_rxe "$nic" || ktap_exit_fail_msg "no ACTIVE rxe device"
ip=$(guest_ip "$nic")
rmmod rpcrdma_cm 2>/dev/null
start_nfsd || ktap_exit_fail_msg "nfsd did not start"
kmsg_mark cm_cross_check

# with_lie LIE EVENT WANT: mount with cm_lying_hook lie=LIE loaded, round
# trip a 32 KB file, and check "by" and the sizes named in WANT's keys
# (k=v pairs) in the last EVENT of the trace.
with_lie() {
	local lie=$1 event=$2 want=$3 got k f=/tmp/cm_cross_check.data
	trace_cm_private "$event" || return 1
	insmod "$LYING_KO" lie="$lie" || return 1
	head -c 32768 /dev/urandom >$f
	if ! mount_rdma "$ip" 4.2 soft,timeo=50,retrans=2; then
		rmmod cm_lying_hook
		ktap_print_msg "mount failed"
		return 1
	fi
	cp $f "$MNT/cross_check" && echo 3 >/proc/sys/vm/drop_caches &&
		cmp $f "$MNT/cross_check"
	local rc=$?
	umount_rdma
	rmmod cm_lying_hook || return 1
	[ $rc = 0 ] || { ktap_print_msg "the 32 KB file did not round-trip"; return 1; }
	got=$(for k in $want; do
		k=${k%%=*}
		echo "$k=$(traced_value "$event" "$k")"
	done | paste -sd ' ')
	if [ "$got" != "$want" ]; then
		traced_cm_private "$event" | sed 's/^/# /'
		ktap_print_msg "traced '$got', want '$want'"
		return 1
	fi
}

ktap_test_result "lie=recv: 64 KB receive advertised over 1 KB buffers is refused; stock connect, file round-trips" \
	with_lie recv xprtrdma_cm_private "by=stock sent_recv=4096"
ktap_test_result "lie=send: 1 KB send advertised, 16 KB provisioned: sends at most 1 KB inline, file round-trips" \
	with_lie send xprtrdma_cm_private "by=module sent_send=1024 send_threshold=1024"
ktap_test_result "lie=accept: server's 64 KB receive over 4 KB buffers is refused; stock accept, file round-trips" \
	with_lie accept svcrdma_cm_private "by=stock sent_recv=4096"

log_clean() {
	local log=/tmp/cm_cross_check.log
	kernel_log_since cm_cross_check >$log || return 1
	# Each refusal is reported, rate-limited; nothing else may be.
	grep -c "CM private data hook answer refused" $log | sed 's/^/# refusals reported: /'
	no_kernel_report $log
}
ktap_test_result "kernel log since the first mount: refusals reported, no other report" log_clean

stop_nfsd
ktap_finished
