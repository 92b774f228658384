#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The backchannel works on a connection negotiated at 1 KB. NFSv4.1 and
# later run server-to-client callbacks over the same RDMA connection. Both
# ends advertise 1 KB; the client holds a file open for reading and gets a
# read delegation; a write to the file on the server recalls it
# (CB_RECALL over the backchannel). The client must return it
# (DELEGRETURN), the server's write must finish well within the lease
# time, and the connection must stay up (no reconnect). A CB_RECALL Call
# is a few hundred octets, so this does not show that Calls are exempt
# from the Reply threshold (patch 9 applies it to Replies only); it shows
# the backchannel works at the smallest threshold.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root
require_module_ko

P=/sys/module/rpcrdma_cm/parameters
CONN=/sys/kernel/debug/rpcrdma_cm/connections

ktap_print_header
ktap_set_plan 5

nic=$(guest_nic) && setup_rxe "$nic" || ktap_exit_fail_msg "no ACTIVE rxe device"
ip=$(guest_ip "$nic")
modprobe rpcrdma
rmmod rpcrdma_cm 2>/dev/null
start_nfsd || ktap_exit_fail_msg "nfsd did not start"
insmod "$RPCRDMA_CM_KO" requester_send_size=1024 requester_recv_size=1024 \
	responder_send_size=1024 responder_recv_size=1024 || ktap_exit_fail_msg "insmod failed"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
kmsg_mark cm_backchannel
head -c 3000 /dev/urandom >"$NFS_EXPORT/delegated"

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
delegreturns() {
	mountstats_field DELEGRETURN: 2
}
server_delegations() {
	cat /proc/fs/nfsd/clients/*/states 2>/dev/null | grep -c "type: deleg"
}

connects_before=$(connects)
# No delegation is granted during the grace period (10 s here) or before
# the server has probed the backchannel: open, read and look, at most
# 40 times a second apart.
held() {
	local i
	for i in $(seq 1 40); do
		exec 3<"$MNT/delegated" || return 1
		head -c 100 <&3 >/dev/null || return 1
		sleep 1
		if [ "$(server_delegations)" -gt 0 ]; then
			ktap_print_msg "delegated at attempt $i"
			return 0
		fi
		[ $i = 40 ] || exec 3<&-
	done
	ktap_print_msg "no delegation; the server's clients and their states:"
	grep . /proc/fs/nfsd/clients/*/info /proc/fs/nfsd/clients/*/states 2>/dev/null | sed 's/^/# /'
	exec 3<&-
	return 1
}
ktap_test_result "the client holds a read delegation" held

recalled() {
	local start end
	start=$(date +%s)
	timeout 60 sh -c "echo recall >>'$NFS_EXPORT/delegated'" || return 1
	end=$(date +%s)
	ktap_print_msg "server-side write finished after $((end - start)) s; DELEGRETURN $(delegreturns); delegations $(server_delegations)"
	[ "$(delegreturns)" -gt 0 ] && [ "$(server_delegations)" = 0 ] &&
		[ $((end - start)) -lt 10 ]
}
ktap_test_result "a server-side write recalls it over the backchannel and the client returns it" recalled

still_up() {
	local after
	after=$(connects)
	head -c 100 "$MNT/delegated" >/dev/null || return 1
	ktap_print_msg "transport connects: $connects_before before, $after after"
	[ -n "$after" ] && [ "$after" = "$connects_before" ]
}
ktap_test_result "the connection stayed up: no reconnect, the mount still reads" still_up
exec 3<&-

log_clean() {
	local log=/tmp/cm_backchannel.log
	kernel_log_since cm_backchannel >$log || return 1
	no_kernel_report $log
}
ktap_test_result "kernel log: no report" log_clean

umount_rdma
rmmod rpcrdma_cm
stop_nfsd
ktap_finished
