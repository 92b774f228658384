#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The backchannel works on a connection negotiated at 1 KB, with a real
# callback: a delegation granted and recalled. NFSv4.1 and later run
# server-to-client callbacks over the same RDMA connection (svcrdma's
# backchannel sends its Calls through svc_rdma_map_reply_msg(), the path
# the Reply threshold check sits on, with is_reply false: Calls are not
# held to it). Both ends advertise 1 KB and mount NFSv4.1. nfsd marks a
# 4.1 backchannel UP without a probe Call (nfsd4_run_cb_work: "Don't send
# probe messages for 4.1 or later"), so that state alone shows nothing
# crossed it. Then: the client opens a file the server created and keeps
# it open, nfsd grants it a read delegation (its clients/*/states), and a
# local writer on the server breaks the lease: nfsd sends CB_RECALL over
# the backchannel, the client receives it over RDMA (rpcrdma's
# xprtrdma_cb_call tracepoint), marshals its answer (xprtrdma_cb_reply),
# returns the delegation (DELEGRETURN in its mountstats), nfsd takes the
# answer (nfsd_cb_recall_done, status 0) without revoking (no
# nfsd_stid_revoke for the client), and the writer completes. The Call's
# Receive length (xprtrdma_wc_receive) is printed: the measured size
# behind design.rst's argument for not limiting backchannel Calls (a
# Call longer than the client's 1 KB Receive buffers would have failed
# the recall). Finally the connection must have stayed up (no reconnect)
# and the mount must keep working.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# lockd, which nfsd starts for NFSv3, has a grace period of its own (50 s
# by default), and nfsd grants no delegation while any lock manager is in
# grace: 10 s for the nfsd this program starts (selftest_begin), the
# value before for the programs after it (cleanup). Not in start_nfsd:
# with delegations granted, the other programs' and the bench's
# workloads would send other RPCs (a create without its CLOSE).
NLM_GRACE=/proc/sys/fs/nfs/nlm_grace_period
NLM_GRACE_WAS=$(cat "$NLM_GRACE" 2>/dev/null) && echo 10 >"$NLM_GRACE" 2>/dev/null || NLM_GRACE_WAS=
# What cleanup undoes (selftest_end runs it on every exit).
FILE='' TI='' WRITER='' WRITER_RC=/tmp/rpcrdma_cm-writer.$$
cleanup() {
	exec 3<&-
	if [ -n "$WRITER" ]; then
		kill "$WRITER" 2>/dev/null
		wait "$WRITER" 2>/dev/null
	fi
	rm -f "$WRITER_RC"
	[ -z "$FILE" ] || rm -f "$NFS_EXPORT/$FILE"
	[ -z "$TI" ] || [ ! -d "$TI" ] || rmdir "$TI"
	[ -z "$NLM_GRACE_WAS" ] || echo "$NLM_GRACE_WAS" >"$NLM_GRACE"
}
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
ktap_test_result "nfsd marks the 4.1 backchannel up (callback state UP; no Call crosses it yet)" callback_up

# The delegation's file: created on the server, its writer closed, a file
# of its own for this run (nfsd blocks delegations on a file recalled in
# the last 30 to 60 s).
FILE=deleg.$$
echo v1 >"$NFS_EXPORT/$FILE"
INO=$(stat -c %i "$NFS_EXPORT/$FILE")
# A trace instance of this program's own: its events and buffer leave the
# global ones (which other programs use) alone, tracing is on in it, and
# its clock orders the events of every CPU.
T=/sys/kernel/tracing
TI=$T/instances/cm_backchannel.$$
EVENTS="rpcrdma/xprtrdma_cb_call rpcrdma/xprtrdma_cb_reply rpcrdma/xprtrdma_wc_receive
	nfsd/nfsd_cb_recall_done nfsd/nfsd_stid_revoke"

# has_deleg: nfsd's client states list a read delegation of the file.
has_deleg() {
	grep -qsE "type: deleg, access: ra?, superblock: \"[0-9a-f]+:[0-9a-f]+:$INO\"" \
		/proc/fs/nfsd/clients/*/states
}
# open_delegated: the client holds the file open (fd 3, kept: the client
# returns an unused delegation within a lease or two) and nfsd lists the
# delegation; otherwise the file is closed again. nfsd grants none while
# a lock manager is in its grace period (start_nfsd keeps lockd's and
# nfsd's at 10 s).
open_delegated() {
	exec 3<"$MNT/$FILE" && cat <&3 >/dev/null && has_deleg && return 0
	exec 3<&-
	sleep 1
	return 1
}
delegated() {
	local start=$SECONDS
	if slowwait 90 open_delegated; then
		ktap_print_msg "delegation listed after $((SECONDS - start)) s: $(grep -hs ":$INO\"" /proc/fs/nfsd/clients/*/states)"
		return 0
	fi
	ktap_print_msg "no delegation of inode $INO after 90 s (lockd's grace: $(cat /proc/sys/fs/nfs/nlm_grace_period 2>/dev/null || echo unknown) s); the clients' states:"
	sed 's/^/# /' /proc/fs/nfsd/clients/*/states 2>/dev/null
	return 1
}
ktap_test_result "nfsd grants the client a read delegation over RDMA at 1 KB" delegated

delegreturns() {
	mountstats_field DELEGRETURN: 2
}
returns_before=$(delegreturns)
mountpoint -q $T || mount -t tracefs nodev $T
mkdir "$TI" || ktap_exit_fail_msg "cannot make the trace instance $TI"
echo global >"$TI/trace_clock" || ktap_exit_fail_msg "cannot set $TI's trace clock"
for e in $EVENTS; do
	echo 1 >"$TI/events/$e/enable" || ktap_exit_fail_msg "cannot enable the tracepoint $e"
done
# The local writer: its open breaks the lease and waits until the
# delegation is returned (or revoked, after a lease of 10 s). Started on
# its own, without the program's descriptors (fd 3 holds the NFS file).
writer_start=$SECONDS
sh -c 'echo v2 >>"$1"; echo $? >"$2"' writer "$NFS_EXPORT/$FILE" "$WRITER_RC" \
	</dev/null >/dev/null 2>&1 3<&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
WRITER=$!
traced() {
	traced_cm_private "$1" "$TI/trace"
}
# recall_seen: what the recall must have left, once all of it arrived (the
# writer wakes when nfsd removes the lease, before the client counts the
# DELEGRETURN's reply, and the CB reply can reach nfsd after that).
recall_seen() {
	local after
	traced xprtrdma_cb_call >/dev/null && traced xprtrdma_cb_reply >/dev/null &&
		traced nfsd_cb_recall_done | grep -qE ' status=0$' || return 1
	after=$(delegreturns)
	[ -n "$after" ] && [ "$after" -gt "${returns_before:-0}" ] && ! has_deleg
}
recall_report() {
	local e
	for e in $EVENTS; do
		ktap_print_msg "${e#*/}: $(traced "${e#*/}" | wc -l) traced"
	done
	traced nfsd_cb_recall_done | sed 's/^/# /'
	ktap_print_msg "client DELEGRETURNs: ${returns_before:-none} before, $(delegreturns) now"
	grep -hs "callback state" /proc/fs/nfsd/clients/*/info | sed 's/^/# /'
	grep -hs ":$INO\"" /proc/fs/nfsd/clients/*/states | sed 's/^/# /'
}
recalled() {
	local rc client
	if ! slowwait 60 test -s "$WRITER_RC"; then
		ktap_print_msg "the server's writer still waits after 60 s"
		recall_report
		return 1
	fi
	wait "$WRITER"
	WRITER=
	rc=$(cat "$WRITER_RC")
	ktap_print_msg "the server's writer completed after $((SECONDS - writer_start)) s (exit $rc)"
	[ "$rc" = 0 ] || return 1
	if ! slowwait 10 recall_seen; then
		ktap_print_msg "the recall left less than a Call received, a Reply marshalled, nfsd's status 0 and a DELEGRETURN:"
		recall_report
		return 1
	fi
	# A revocation of this client's stateid (the laundromat's answer to a
	# recall never answered).
	client=$(traced nfsd_cb_recall_done | sed -n 's/.* client \([0-9a-f]*:[0-9a-f]*\) .*/\1/p' | head -n 1)
	if traced nfsd_stid_revoke | grep -q "client $client "; then
		ktap_print_msg "nfsd revoked a stateid of client $client: $(traced nfsd_stid_revoke)"
		return 1
	fi
	ktap_print_msg "client DELEGRETURNs: ${returns_before:-none} before, $(delegreturns) after"
	grep -qx v2 "$MNT/$FILE" || { ktap_print_msg "the writer's line not read through the mount"; return 1; }
}
ktap_test_result "a local writer on the server recalls it: CB_RECALL over the RDMA backchannel, answered, the delegation returned, the writer done" recalled

# The Receive that carried each backchannel Call since the writer started
# (the CB_RECALL among them): the last receive completion traced before it
# (one Receive CQ, its completions handled one after the other; the global
# clock orders the CPUs). A measurement, not a result: the client's
# Receive buffers are its receive threshold long, so a longer Call would
# have completed in error and never reached xprtrdma_cb_call, and the
# recall above would have failed.
call_sizes() {
	awk '/ xprtrdma_wc_receive: / { n = $0; sub(/.* received=/, "", n); last = n + 0; seen = 1 }
		/ xprtrdma_cb_call: / { calls++; if (!seen) unknown = 1; else if (last > max) max = last }
		END { if (calls && !unknown) print calls, max }' "$TI/trace"
}
ktap_print_msg "backchannel Calls and the largest one's Receive: $(call_sizes || true) octets (receive threshold 1024)"
exec 3<&-

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
