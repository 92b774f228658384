#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmmod/insmod rpcrdma_cm 50 times while an NFSv4.2 mount over RDMA is busy
# and reconnecting: in every cycle the client's transport is forced to
# reconnect (writing its own address to its sunrpc sysfs dstaddr file),
# alternately while the module is out and while it is in, and the new
# connection must follow whichever path is live on both ends: the stock
# code (4096/4096) without the module, the module's 16 KB thresholds with
# it, as the rpcrdma:*_cm_private tracepoints show, and must carry an
# O_DIRECT write and read before the next cycle. No oops or warning in
# dmesg; a writer copies files onto the mount all along, at least one per
# cycle, each byte-exact in the server's export and through an O_DIRECT
# read; a fresh mount afterwards makes a new connection that negotiates
# through the module. Every step that could block on the mount is bounded:
# a stall fails the test with the blocked tasks (sysrq w) in its output
# instead of running into the runner's timeout.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_reload module rxe nfsd

# RPCRDMA_CM_RELOAD_CYCLES: fewer cycles for slow kernels (KASAN under TCG).
CYCLES=${RPCRDMA_CM_RELOAD_CYCLES:-50}
MODULE_SIZE=16384
PARAMS="requester_send_size=$MODULE_SIZE requester_recv_size=$MODULE_SIZE responder_send_size=$MODULE_SIZE responder_recv_size=$MODULE_SIZE"
T=/sys/kernel/tracing
ktap_plan_counted

# shellcheck disable=SC2086
insmod "$RPCRDMA_CM_KO" $PARAMS || ktap_exit_fail_msg "insmod failed"
mount_rdma "$ip" 4.2 || ktap_exit_fail_msg "mount failed"
echo 1 >$T/events/rpcrdma/xprtrdma_cm_private/enable
echo 1 >$T/events/rpcrdma/svcrdma_cm_private/enable
# The transport's reconnect backoff, reported at the end.
echo 1 >$T/events/rpcrdma/xprtrdma_op_connect/enable
echo >$T/trace

# Seconds any single step that needs the mount may take.
STEP_LIMIT=120

# stalled WHAT: report a step that did not finish within STEP_LIMIT, with
# the tasks blocked in the kernel at that moment.
stalled() {
	ktap_print_msg "$1 did not finish within ${STEP_LIMIT}s; blocked tasks:"
	echo w >/proc/sysrq-trigger
	dmesg | sed -n '/sysrq: Show Blocked State/,$p' | tail -n 60 | sed 's/^/# /'
}

# connections_traced: client connections so far (xprtrdma_cm_private lines).
connections_traced() {
	traced_cm_private xprtrdma_cm_private | wc -l
}

# The mount's RDMA transports in sunrpc sysfs.
xprt_dirs() {
	ls -d /sys/kernel/sunrpc/xprt-switches/switch-*/xprt-*-rdma 2>/dev/null
}

# store_dstaddr DIR ADDR: write ADDR to the transport's dstaddr, which
# forces a reconnect. The store sleeps in wait_on_bit_lock(XPRT_LOCKED),
# but 6.12 releases that bit after each send without wake_up_bit() (only a
# finished connect or an autoclose wakes it): a store that comes while an
# RPC holds the send lock can sleep until the next reconnect, under steady
# I/O for good. So each attempt gets 10 s (the wait is killable) and is
# retried; store_retries counts them. Returns 1 if the store failed, 2 if
# it never got the lock within STEP_LIMIT.
store_retries=0
store_dstaddr() {
	local d=$1 addr=$2 _
	for _ in $(seq 1 $((STEP_LIMIT / 10))); do
		timeout 10 tee "$d/dstaddr" <<<"$addr" >/dev/null 2>"$work/store.err"
		case $? in
		0) return 0 ;;
		124) store_retries=$((store_retries + 1)) ;;
		*) ktap_print_msg "${d##*/}: $(cat "$work/store.err")"; return 1 ;;
		esac
	done
	stalled "the dstaddr store of ${d##*/}"
	return 2
}

# reconnect BY SIZE: force the client's transports to reconnect and wait
# for the new connection; both ends' tracepoints must say BY (module or
# stock) and the thresholds SIZE/SIZE.
reconnect() {
	local by=$1 size=$2 before d got addr deadline forced=0
	before=$(connections_traced)
	# Transports of short-lived clients may go away meanwhile.
	for d in $(xprt_dirs); do
		addr=$(cat "$d/dstaddr" 2>/dev/null) || continue
		[ "$addr" != "<closed>" ] || continue
		store_dstaddr "$d" "$addr"
		case $? in
		0) forced=$((forced + 1)) ;;
		2) return 1 ;;
		esac
	done
	if [ "$forced" = 0 ]; then
		ktap_print_msg "no RDMA transport to reconnect; sunrpc sysfs has:"
		for d in $(xprt_dirs); do
			ktap_print_msg "${d##*/}: dstaddr $(cat "$d/dstaddr" 2>&1) $(tr '\n' ' ' <"$d/xprt_info" 2>&1)"
		done
		return 1
	fi
	deadline=$((SECONDS + STEP_LIMIT))
	until [ "$(connections_traced)" -gt "$before" ]; do
		[ $SECONDS -lt $deadline ] || { stalled "reconnect"; return 1; }
		timeout 10 stat "$MNT" >/dev/null 2>&1
		sleep 0.25
	done
	got="$(traced_value xprtrdma_cm_private by) $(traced_value xprtrdma_cm_private send_threshold)/$(traced_value xprtrdma_cm_private recv_threshold)"
	got="$got $(traced_value svcrdma_cm_private by) $(traced_value svcrdma_cm_private recv_threshold)"
	if [ "$got" != "$by $size/$size $by $size" ]; then
		ktap_print_msg "after reconnect: client/server '$got', want '$by $size/$size $by $size'"
		return 1
	fi
	round_trip
}

# round_trip: one O_DIRECT write and read of 4 KB, so RPCs cross the new
# connection (and its first reply ends the transport's reconnect backoff:
# without one, the next forced reconnect waits up to 5 s).
round_trip() {
	timeout $STEP_LIMIT dd if="$work/src" of="$MNT/round_trip" bs=4096 count=1 \
		oflag=direct status=none || { stalled "O_DIRECT write"; return 1; }
	timeout $STEP_LIMIT dd if="$MNT/round_trip" of="$work/back" bs=4096 count=1 \
		iflag=direct status=none || { stalled "O_DIRECT read"; return 1; }
	head -c 4096 "$work/src" | cmp -s - "$work/back" ||
		{ ktap_print_msg "O_DIRECT read returned other data"; return 1; }
}

work=$(mktemp -d)
head -c 200000 /dev/urandom >"$work/src"
# Writer: copies files onto the mount until told to stop, and compares each
# with what the server stored (its export, not the client's page cache)
# and with an O_DIRECT read through the mount (what the server returns).
# After each file it writes how many it has compared to $work/progress.
(
	n=0
	while [ ! -e "$work/stop" ]; do
		if ! cp "$work/src" "$MNT/w$n"; then
			echo "file $n: the copy onto the mount failed" >>"$work/errors"
		elif ! cmp -s "$work/src" "$NFS_EXPORT/w$n"; then
			echo "file $n: the server's export holds other data" >>"$work/errors"
		elif ! dd if="$MNT/w$n" bs=64k iflag=direct status=none | cmp -s "$work/src" -; then
			echo "file $n: an O_DIRECT read returned other data" >>"$work/errors"
		fi
		rm -f "$MNT/w$n"
		n=$((n + 1))
		echo "$n" >"$work/progress.new" && mv "$work/progress.new" "$work/progress"
	done
	echo "$n" >"$work/count"
) &
writer=$!

# files_compared: how many files the writer has written and compared.
files_compared() {
	cat "$work/progress" 2>/dev/null || echo 0
}

# writer_advanced SINCE: wait (at most STEP_LIMIT) until the writer has
# compared a file more than SINCE; a stall fails with the blocked tasks.
writer_advanced() {
	local deadline=$((SECONDS + STEP_LIMIT))
	until [ "$(files_compared)" -gt "$1" ]; do
		[ $SECONDS -lt $deadline ] || { stalled "the writer"; return 1; }
		sleep 0.25
	done
}

# Each cycle forces one reconnect: on odd cycles while the module is
# unloaded, on even cycles once it is loaded again (a reconnect costs
# seconds under TCG; this keeps the program well inside its timeout).
cycle() {
	local i files
	[ -n "$(xprt_dirs)" ] || { ktap_print_msg "no RDMA transport in /sys/kernel/sunrpc"; return 1; }
	for i in $(seq 1 $CYCLES); do
		files=$(files_compared)
		timeout $STEP_LIMIT rmmod rpcrdma_cm || { ktap_print_msg "rmmod failed at $i"; return 1; }
		if [ $((i % 2)) = 1 ]; then
			reconnect stock 4096 || { ktap_print_msg "cycle $i, unloaded"; return 1; }
		fi
		# shellcheck disable=SC2086
		timeout $STEP_LIMIT insmod "$RPCRDMA_CM_KO" $PARAMS ||
			{ ktap_print_msg "insmod failed at $i"; return 1; }
		if [ $((i % 2)) = 0 ]; then
			reconnect module $MODULE_SIZE || { ktap_print_msg "cycle $i, loaded"; return 1; }
		fi
		# At least one file written and compared in every cycle.
		writer_advanced "$files" || { ktap_print_msg "cycle $i: the writer compared no file"; return 1; }
		[ $((i % 10)) = 0 ] && ktap_print_msg "$i cycles after ${SECONDS}s, $(files_compared) files compared"
	done
	ktap_print_msg "connections made during the cycles: $(connections_traced)"
	ktap_print_msg "connects the transport delayed (backoff): $(grep ' xprtrdma_op_connect: ' $T/trace | grep -vc ' delay=0$')"
	ktap_print_msg "dstaddr stores retried after 10 s without the send lock: $store_retries"
}
ktap_test_result "$CYCLES rmmod/insmod cycles under I/O, each with a forced reconnect that takes the live path" cycle
touch "$work/stop"
# The writer finishes its current file; a stuck one is a failure.
writer_done() {
	if ! wait_for_file $STEP_LIMIT "$work/count"; then
		stalled "the writer"
		kill "$writer"
		return 1
	fi
}
writer_ok=0
writer_done || writer_ok=1
wait "$writer"

# Vacuous on no input: a writer that stalled, or wrote fewer files than
# there were cycles, fails.
files_exact() {
	local n
	n=$(cat "$work/count" 2>/dev/null)
	ktap_print_msg "files written and compared during the cycles: ${n:-none}"
	[ $writer_ok = 0 ] || { ktap_print_msg "the writer did not finish"; return 1; }
	[ -n "$n" ] && [ "$n" -ge "$CYCLES" ] ||
		{ ktap_print_msg "want at least one per cycle ($CYCLES)"; return 1; }
	[ ! -s "$work/errors" ] || { sed 's/^/# /' "$work/errors"; return 1; }
}
ktap_test_result "every file written during the cycles (one or more per cycle) is byte-exact on the server" files_exact

clean_dmesg() {
	kernel_log_since cm_reload >"$work/dmesg" || { cat "$work/dmesg"; return 1; }
	no_kernel_report "$work/dmesg"
}
ktap_test_result "the kernel log of the cycles holds no warning, BUG, oops, KASAN or lockdep report" \
	clean_dmesg

umount_rdma
# A new negotiation: a fresh rpcrdma:xprtrdma_cm_private line (by=module,
# 16 KB), and the module's requester line of that very connection (its
# addresses) says 16 KB too. A line left from an earlier connection does
# not count.
remount() {
	local before client server line got
	before=$(connections_traced)
	mount_rdma "$ip" 4.2 || return 1
	if [ "$(connections_traced)" -le "$before" ]; then
		ktap_print_msg "the mount made no new connection (no new xprtrdma_cm_private line)"
		return 1
	fi
	got="$(traced_value xprtrdma_cm_private by) $(traced_value xprtrdma_cm_private send_threshold)/$(traced_value xprtrdma_cm_private recv_threshold)"
	if [ "$got" != "module $MODULE_SIZE/$MODULE_SIZE" ]; then
		ktap_print_msg "new connection: '$got', want 'module $MODULE_SIZE/$MODULE_SIZE'"
		return 1
	fi
	read -r client server <<<"$(traced_addrs xprtrdma_cm_private)"
	line=$(grep "^role=requester local=$client peer=$server " /sys/kernel/debug/rpcrdma_cm/connections)
	if ! echo "$line" | grep -q " send_threshold=$MODULE_SIZE recv_threshold=$MODULE_SIZE "; then
		ktap_print_msg "no requester line of $client -> $server at $MODULE_SIZE:"
		sed 's/^/# /' /sys/kernel/debug/rpcrdma_cm/connections
		return 1
	fi
}
ktap_test_result "a new mount negotiates through the reloaded module" remount
umount_rdma
ktap_test_result "rmmod rpcrdma_cm at the end" rmmod rpcrdma_cm

rm -rf "$work"
stop_nfsd
ktap_finished
