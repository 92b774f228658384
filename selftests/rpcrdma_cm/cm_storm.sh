#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A connection storm against nfsd: a userspace requester (rpcrdma-cm
# storm) connects RPCRDMA_CM_STORM times (default 200; make interop: 1000) to nfsd's RDMA
# listener over soft-RoCE, each time with random private data (conforming
# messages with random sizes, flags and trailing octets, bad magic, other
# versions, short prefixes, random octets, none), with rpcrdma_cm loaded.
# Every connect must be accepted; for each, the server's
# rpcrdma:svcrdma_cm_private event shows the octets sent (padded to the
# REQ's 56) and thresholds and Remote Invalidation as RFC 8797 gives
# them (rfc8797_oracle.py, written from the RFC, not from the
# module's core), none above what the server advertised; the module's
# responder counters rise by exactly the connects, each under the cause
# the oracle gives; no debugfs line is left; the kernel log stays clean.
# The server's sizes differ (8 KB send, 2 KB receive), so that a side
# that swapped the peer's send and receive sizes shows.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# shellcheck source=peer_lib.sh
. "$DIR/peer_lib.sh"
selftest_begin cm_storm tool module rxe
ROLE=responder
STORM=${RPCRDMA_CM_STORM:-200}
SEED=8797
WORK=/tmp/cm_storm

[ -r "$ORACLE" ] || ktap_exit_fail_msg "no oracle at $ORACLE"
# check_set's six results (peer_lib.sh), for the one set.
ktap_plan_counted 6

cleanup() {
	stop_nfsd
	rmmod rpcrdma_cm 2>/dev/null
}

mkdir -p $WORK
addr=$ip
insmod "$RPCRDMA_CM_KO" responder_send_size=8192 responder_recv_size=2048 ||
	ktap_exit_fail_msg "insmod failed"
trace_cm_private svcrdma_cm_private || ktap_exit_fail_msg "no rpcrdma tracepoints"
# Room for every connect's event (about 700 octets each).
echo $((STORM + 64)) >/sys/kernel/tracing/buffer_size_kb
start_nfsd || ktap_exit_fail_msg "nfsd did not start"

# The private data the storm is to send, from the same generator and seed.
"$TOOL" storm --count "$STORM" --seed $SEED --print-cases >$WORK/cases

counters >$WORK/storm.before
echo >/sys/kernel/tracing/trace
start=$(date +%s)
"$TOOL" storm --count "$STORM" --seed $SEED "$addr:$NFS_PORT" >$WORK/storm.log 2>&1
storm_rc=$?
ktap_print_msg "$STORM connects in $(($(date +%s) - start)) s (rpcrdma-cm storm exit $storm_rc)"
# The last connect's teardown may still be under way.
slowwait 10 traced_at_least svcrdma_cm_private "$STORM"
traced_cm_private svcrdma_cm_private >$WORK/storm.trace
counters >$WORK/storm.after
grep '^conn ' $WORK/storm.log | sed 's/.* req=//; s/ .*//' >$WORK/storm.peer

all_accepted() {
	local n
	n=$(grep -c 'outcome=accepted$' $WORK/storm.log)
	[ "$n" = "$STORM" ] && [ $storm_rc = 0 ] && return 0
	ktap_print_msg "$n of $STORM accepted; others:"
	grep -v 'outcome=accepted$' $WORK/storm.log | head -5 | sed 's/^/# /'
	return 1
}
ktap_test_result "storm: all $STORM connects accepted" all_accepted
check_set storm 56 $WORK/cases "storm of $STORM random REQs against nfsd"

ktap_test_result "kernel log since the first connect: no report" no_report_since cm_storm

ktap_finished
