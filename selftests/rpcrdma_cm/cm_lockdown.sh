#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's run-time settings under kernel lockdown, the integrity
# level Secure Boot puts a kernel in: they must still be writable, and a
# connection made afterwards must negotiate what was written. On 7.3 the
# settings are configfs attributes (rpcrdma_cm/), on 6.12 sysfs module
# parameters (lib.sh's rpcrdma_cm_params_dir); a writable debugfs file,
# where 7.3's settings used to be, is refused there (the control: the
# lockdown is in force).
# The module is loaded first and the kernel then locked down
# (securityfs' lockdown file): under lockdown only signed modules load,
# and the test module is not signed (a Secure Boot machine loads it signed
# by a key it trusts: admin-guide.rst, "Secure Boot").
# Not in TEST_PROGS: a lockdown cannot be lifted, so this program runs last
# in its guest, with RPCRDMA_CM_LOCKDOWN_REQUIRED=1 (make check: the
# distribution's guest, scripts/distro/distro-test.sh; Debian's kernel has
# the lockdown LSM, the test kernels have no LSM); without it the program
# does not lock the kernel down and skips. On a kernel without the
# lockdown LSM it skips too, unless RPCRDMA_CM_LOCKDOWN_REQUIRED=1 makes
# that a failure.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_lockdown module rxe nfsd

LOCKDOWN=/sys/kernel/security/lockdown

not_here() {
	if [ "${RPCRDMA_CM_LOCKDOWN_REQUIRED:-}" = 1 ]; then
		ktap_set_plan 1
		ktap_test_fail "a kernel locked down: $1"
		ktap_finished
	fi
	ktap_skip_all "$1"
	exit "$KSFT_SKIP"
}
mountpoint -q /sys/kernel/security || mount -t securityfs none /sys/kernel/security 2>/dev/null
[ -r $LOCKDOWN ] || not_here "no lockdown LSM ($LOCKDOWN missing)"
[ "${RPCRDMA_CM_LOCKDOWN_REQUIRED:-}" = 1 ] ||
	not_here "it would lock this guest down for good: run it last in its guest with RPCRDMA_CM_LOCKDOWN_REQUIRED=1 (make check does, on Debian's kernel)"

# level: the lockdown level in force ("none [integrity] confidentiality":
# the bracketed one).
level() {
	sed -n 's/.*\[\([a-z]*\)\].*/\1/p' $LOCKDOWN
}

ktap_plan_counted

cleanup() {
	umount_rdma 2>/dev/null
	rmmod rpcrdma_cm 2>/dev/null
	return 0
}

ktap_test_result "insmod rpcrdma_cm.ko, before the lockdown" insmod "$RPCRDMA_CM_KO"
P=$(rpcrdma_cm_params_dir) || P=/nonexistent
ktap_print_msg "settings in $P"

# The debugfs file of the control below: failslab's probability where it
# is built in; else the first writable file of debugfs proper (tracing/
# below it is tracefs, which lockdown closes only at the confidentiality
# level).
mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
DEBUGFS_FILE=/sys/kernel/debug/failslab/probability
[ -f $DEBUGFS_FILE ] || DEBUGFS_FILE=$(find /sys/kernel/debug -path /sys/kernel/debug/tracing -prune -o \
	-maxdepth 2 -type f -perm -u=w -print 2>/dev/null | head -n 1)
# debugfs_opens: it opens for writing before the lockdown (so that its
# refusal after it is the lockdown's).
debugfs_opens() {
	[ -n "$DEBUGFS_FILE" ] || { ktap_print_msg "no writable debugfs file to try"; return 1; }
	ktap_print_msg "debugfs file: $DEBUGFS_FILE"
	(: >>"$DEBUGFS_FILE")
}
ktap_test_result "a writable debugfs file opens for writing before the lockdown" debugfs_opens

# locked_down: the kernel raised to lockdown's integrity level.
locked_down() {
	echo integrity >$LOCKDOWN || return 1
	ktap_print_msg "lockdown: $(cat $LOCKDOWN)"
	[ "$(level)" = integrity ]
}
ktap_test_result "the kernel locked down (integrity, as Secure Boot)" locked_down

# What each setting is set to here: sizes the stock code never picks (it
# uses 4096), a different one for each, so that an attribute that sets
# another parameter shows in what each side advertises; Remote
# Invalidation off (stock: on); the 1 KB hold for requesters without a
# message on (both ends here send one); the callbacks timed.
# The server's receive size follows the client's send size (RFC 8797
# section 3.1, admin guide): RESP_RECV is below REQ_SEND so that what the
# server advertises is still its own setting.
REQ_SEND=20480 REQ_RECV=16384 RESP_SEND=12288 RESP_RECV=8192
SETTINGS="requester_send_size=$REQ_SEND requester_recv_size=$REQ_RECV
responder_send_size=$RESP_SEND responder_recv_size=$RESP_RECV
remote_invalidation=N send_private_data=Y nonconforming_requester_1k=Y
callback_times=Y"

# settings_written: each write succeeds, then each reads back its own value;
# a boolean is written the other way first and read back so (a write of
# its default alone would show nothing).
settings_written() {
	local kv ok=0 err other
	for kv in $SETTINGS; do
		case ${kv#*=} in
		Y) other=N ;;
		N) other=Y ;;
		*) continue ;;
		esac
		if ! err=$(echo $other 2>&1 >"$P/${kv%%=*}") || [ "$(cat "$P/${kv%%=*}")" != $other ]; then
			ktap_print_msg "${kv%%=*}: $other not taken: ${err:-reads $(cat "$P/${kv%%=*}")}"
			ok=1
		fi
	done
	for kv in $SETTINGS; do
		if ! err=$(echo "${kv#*=}" 2>&1 >"$P/${kv%%=*}"); then
			ktap_print_msg "${kv%%=*}: write refused: $err"
			ok=1
		fi
	done
	for kv in $SETTINGS; do
		if [ "$(cat "$P/${kv%%=*}")" != "${kv#*=}" ]; then
			ktap_print_msg "${kv%%=*} reads $(cat "$P/${kv%%=*}"), want ${kv#*=}"
			ok=1
		fi
	done
	return $ok
}
ktap_test_result "every setting written under lockdown reads back" settings_written

# debugfs_refused: the same file now fails to open for writing with EPERM
# (the lockdown is in force where 7.3's settings used to be), and the
# kernel says it was the lockdown.
debugfs_refused() {
	local err
	[ -n "$DEBUGFS_FILE" ] || return 1
	if err=$( (: >>"$DEBUGFS_FILE") 2>&1); then
		ktap_print_msg "$DEBUGFS_FILE opened for writing under lockdown"
		return 1
	fi
	ktap_print_msg "$DEBUGFS_FILE: $err"
	case $err in *"Operation not permitted"*) ;; *) return 1 ;; esac
	kernel_log_since cm_lockdown | grep -q 'Lockdown: .*debugfs access is restricted' ||
		{ ktap_print_msg "no 'Lockdown: ... debugfs access is restricted' in the kernel log"; return 1; }
}
ktap_test_result "a writable debugfs file is refused under lockdown" debugfs_refused

# negotiated: an NFSv4.2 mount over rxe (this guest is client and server)
# goes through the module on both ends with what was written: each side
# advertised its own two sizes, and the thresholds are RFC 8797's min()
# of them (client send min(REQ_SEND, RESP_RECV), receive min(REQ_RECV,
# RESP_SEND); the server the other way round), no Remote Invalidation;
# the tracepoints, which lockdown at the integrity level leaves readable.
negotiated() {
	local c_send=$((REQ_SEND < RESP_RECV ? REQ_SEND : RESP_RECV))
	local c_recv=$((REQ_RECV < RESP_SEND ? REQ_RECV : RESP_SEND))
	local s_recv=$((RESP_RECV < REQ_SEND ? RESP_RECV : REQ_SEND))
	traced_round_trip lockdown 16384 || return 1
	traced_is xprtrdma_cm_private by=module sent_send=$REQ_SEND sent_recv=$REQ_RECV \
		send_threshold=$c_send recv_threshold=$c_recv remote_inv=off &&
		traced_is svcrdma_cm_private by=module sent_send=$RESP_SEND sent_recv=$s_recv \
			send_threshold=$c_recv recv_threshold=$c_send remote_inv=off
}
ktap_test_result "a mount then negotiates the settings written: each side's own sizes advertised, RFC 8797's thresholds, no Remote Invalidation" negotiated

# timed: callback_times=Y, written under lockdown, took effect: the
# mount's prepare_connect and prepare_accept were counted with time
# (debugfs's read-only files stay readable at the integrity level).
timed() {
	local times=/sys/kernel/debug/rpcrdma_cm/callback_times line cb calls total ok=0
	[ -r $times ] || { ktap_print_msg "no $times"; return 1; }
	sed 's/^/# /' $times
	for cb in "requester prepare_connect" "responder prepare_accept"; do
		line=$(grep "^$cb " $times)
		calls=$(line_value "$line" calls) total=$(line_value "$line" total_ns)
		if [ "${calls:-0}" -lt 1 ] || [ "${total:-0}" -lt 1 ]; then
			ktap_print_msg "$cb: not timed ('$line')"
			ok=1
		fi
	done
	return $ok
}
ktap_test_result "callback_times=Y written under lockdown: the mount's callbacks were timed" timed

ktap_test_result "rmmod rpcrdma_cm under lockdown" rmmod rpcrdma_cm

# log_clean: nfsd stopped and the transports' asynchronous teardown
# waited for (every RDMA device back to what it held when added, 60 s at
# most), as dmesg_clean.sh does, then the kernel log since the program
# began: no report (this program runs after the guest's dmesg_clean.sh).
log_clean() {
	stop_nfsd
	rdma_teardown_settled 60 && no_report_since cm_lockdown
}
ktap_test_result "nfsd stopped, the transports torn down, then the kernel log since the program began: no report" log_clean

ktap_finished
