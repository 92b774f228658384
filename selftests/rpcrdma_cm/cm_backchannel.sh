#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The backchannel works on a connection negotiated at 1 KB. NFSv4.1 and
# later run server-to-client callbacks over the same RDMA connection
# (svcrdma's backchannel sends its Calls through svc_rdma_map_reply_msg(),
# the path the Reply threshold check used to sit on). Both ends advertise
# 1 KB and mount NFSv4.1; nfsd must then probe the backchannel with a
# CB_NULL Call and mark it UP ("callback state: UP" in
# /proc/fs/nfsd/clients/*/info), the connection must stay up (no
# reconnect) and the mount must keep working. A CB_NULL Call is far below
# 1 KB, so this does not show that Calls are exempt from the Reply
# threshold (the series applies it to Replies only); it shows that the
# backchannel works at the smallest threshold.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_backchannel module rxe nfsd

CONN=/sys/kernel/debug/rpcrdma_cm/connections

ktap_plan_counted

insmod "$RPCRDMA_CM_KO" requester_send_size=1024 requester_recv_size=1024 \
	responder_send_size=1024 responder_recv_size=1024 || ktap_exit_fail_msg "insmod failed"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

mount_at_1k() {
	mount_rdma "$ip" 4.1 || return 1
	grep -q "^role=requester .*send_threshold=1024 recv_threshold=1024 " $CONN &&
		grep -q "^role=responder .*send_threshold=1024 recv_threshold=1024 " $CONN ||
		{ sed 's/^/# /' $CONN; return 1; }
}
ktap_test_result "NFSv4.1 mount over RDMA, both ends at 1024/1024" mount_at_1k

# mountstats_field WHAT N: field N of the mount's line starting with WHAT.
mountstats_field() {
	awk -v m="$MNT" -v what="$1" -v n="$2" '
		$1 == "device" { on = ($5 == m) }
		on && $1 == what { print $n; exit }' /proc/self/mountstats
}
# The connect count of the mount's transport ("xprt: rdma port bind
# connect ...").
connects() {
	mountstats_field xprt: 5
}

connects_before=$(connects)
callback_up() {
	local i state
	# This test's client is the only NFSv4.1 one (the others use 4.0/4.2).
	for i in $(seq 1 60); do
		state=$(grep -l '^minor version: 1$' /proc/fs/nfsd/clients/*/info 2>/dev/null |
			xargs -r sed -n 's/^callback state: //p')
		if [ "$state" = UP ]; then
			ktap_print_msg "callback state UP after $i s"
			return 0
		fi
		sleep 1
	done
	ktap_print_msg "callback state '$state' after 60 s:"
	grep . /proc/fs/nfsd/clients/*/info 2>/dev/null | sed 's/^/# /'
	return 1
}
ktap_test_result "nfsd's CB_NULL probe over the backchannel succeeds: callback state UP" callback_up

still_up() {
	local after
	echo data >"$MNT/after" && [ "$(cat "$MNT/after")" = data ] || return 1
	after=$(connects)
	ktap_print_msg "transport connects: $connects_before before, $after after"
	[ -n "$after" ] && [ "$after" = "$connects_before" ]
}
ktap_test_result "the connection stayed up: no reconnect, the mount still writes and reads" still_up

ktap_test_result "kernel log: no report" no_report_since cm_backchannel

umount_rdma
rmmod rpcrdma_cm
stop_nfsd
ktap_finished
