#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmmod/insmod rpcrdma_cm 50 times while an NFSv4.2 mount over RDMA is busy
# and reconnecting: in every cycle the client's transport is forced to
# reconnect (writing its own address to its sunrpc sysfs dstaddr file),
# alternately while the module is out and while it is in, and the new
# connection must follow whichever path is live on both ends: the stock
# code (4096/4096) without the module, the module's 16 KB thresholds with
# it, as the rpcrdma:*_cm_private tracepoints show. No oops or warning in dmesg, every file written meanwhile reads
# back byte-exact, and a fresh mount afterwards negotiates through the
# module.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root

# RPCRDMA_CM_RELOAD_CYCLES: fewer cycles for slow kernels (KASAN under TCG).
CYCLES=${RPCRDMA_CM_RELOAD_CYCLES:-50}
MODULE_SIZE=16384
PARAMS="requester_send_size=$MODULE_SIZE requester_recv_size=$MODULE_SIZE responder_send_size=$MODULE_SIZE responder_recv_size=$MODULE_SIZE"
T=/sys/kernel/tracing
ktap_print_header
require_module_ko
ktap_set_plan 5

mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
mountpoint -q $T || mount -t tracefs nodev $T
nic=$(guest_nic) && setup_rxe "$nic" || ktap_exit_fail_msg "no ACTIVE rxe device"
ip=$(guest_ip "$nic")
modprobe rpcrdma
rmmod rpcrdma_cm 2>/dev/null
start_nfsd || ktap_exit_fail_msg "nfsd did not start"
# shellcheck disable=SC2086
insmod "$RPCRDMA_CM_KO" $PARAMS || ktap_exit_fail_msg "insmod failed"
mount_rdma "$ip" 4.2 || ktap_exit_fail_msg "mount failed"
dmesg -C
echo 1 >$T/events/rpcrdma/xprtrdma_cm_private/enable
echo 1 >$T/events/rpcrdma/svcrdma_cm_private/enable
echo >$T/trace

# The mount's RDMA transports in sunrpc sysfs.
xprt_dirs() {
	ls -d /sys/kernel/sunrpc/xprt-switches/switch-*/xprt-*-rdma 2>/dev/null
}

# traced EVENT KEY: KEY's value in the newest EVENT line of the trace.
traced() {
	grep " $1: " $T/trace | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# reconnect BY SIZE: force the client's transports to reconnect and wait
# for the new connection; both ends' tracepoints must say BY (module or
# stock) and the thresholds SIZE/SIZE.
reconnect() {
	local by=$1 size=$2 before d i got addr forced=0
	before=$(grep -c ' xprtrdma_cm_private: ' $T/trace)
	# Transports of short-lived clients may go away meanwhile.
	for d in $(xprt_dirs); do
		addr=$(cat "$d/dstaddr" 2>/dev/null) &&
			echo "$addr" 2>/dev/null >"$d/dstaddr" && forced=$((forced + 1))
	done
	[ "$forced" -gt 0 ] || { ktap_print_msg "no RDMA transport to reconnect"; return 1; }
	for i in $(seq 1 120); do
		stat "$MNT" >/dev/null 2>&1
		[ "$(grep -c ' xprtrdma_cm_private: ' $T/trace)" -gt "$before" ] && break
		sleep 0.25
	done
	got="$(traced xprtrdma_cm_private by) $(traced xprtrdma_cm_private send_threshold)/$(traced xprtrdma_cm_private recv_threshold)"
	got="$got $(traced svcrdma_cm_private by) $(traced svcrdma_cm_private recv_threshold)"
	if [ "$got" != "$by $size/$size $by $size" ]; then
		ktap_print_msg "after reconnect: client/server '$got', want '$by $size/$size $by $size'"
		return 1
	fi
}

work=$(mktemp -d)
head -c 200000 /dev/urandom >"$work/src"
# Writer: copies and verifies files until told to stop.
(
	n=0
	while [ ! -e "$work/stop" ]; do
		cp "$work/src" "$MNT/w$n" && cmp -s "$work/src" "$MNT/w$n" ||
			echo "file $n differs" >>"$work/errors"
		rm -f "$MNT/w$n"
		n=$((n + 1))
	done
	echo "$n" >"$work/count"
) &
writer=$!

# Each cycle forces one reconnect: on odd cycles while the module is
# unloaded, on even cycles once it is loaded again (a reconnect costs
# seconds under TCG; this keeps the program well inside its timeout).
cycle() {
	local i
	[ -n "$(xprt_dirs)" ] || { ktap_print_msg "no RDMA transport in /sys/kernel/sunrpc"; return 1; }
	for i in $(seq 1 $CYCLES); do
		rmmod rpcrdma_cm || { ktap_print_msg "rmmod failed at $i"; return 1; }
		if [ $((i % 2)) = 1 ]; then
			reconnect stock 4096 || { ktap_print_msg "cycle $i, unloaded"; return 1; }
		fi
		# shellcheck disable=SC2086
		insmod "$RPCRDMA_CM_KO" $PARAMS || { ktap_print_msg "insmod failed at $i"; return 1; }
		if [ $((i % 2)) = 0 ]; then
			reconnect module $MODULE_SIZE || { ktap_print_msg "cycle $i, loaded"; return 1; }
		fi
		[ $((i % 10)) = 0 ] && ktap_print_msg "$i cycles after ${SECONDS}s"
	done
	ktap_print_msg "connections made during the cycles: $(grep -c ' xprtrdma_cm_private: ' $T/trace)"
}
ktap_test_result "$CYCLES rmmod/insmod cycles under I/O, each with a forced reconnect that takes the live path" cycle
touch "$work/stop"
wait "$writer"
ktap_print_msg "files written during the cycles: $(cat "$work/count" 2>/dev/null)"

no_errors() {
	[ ! -s "$work/errors" ] || { sed 's/^/# /' "$work/errors"; return 1; }
}
ktap_test_result "every file written during the cycles read back byte-exact" no_errors

clean_dmesg() {
	! dmesg | grep -E 'WARNING|BUG|Oops|general protection|KASAN|leak' | sed 's/^/# /' | grep -q .
}
ktap_test_result "dmesg holds no WARNING, BUG, Oops or KASAN report" clean_dmesg

umount_rdma
remount() {
	mount_rdma "$ip" 4.2 && grep -q "^role=requester .*send_threshold=$MODULE_SIZE" \
		/sys/kernel/debug/rpcrdma_cm/connections
}
ktap_test_result "a new mount negotiates through the reloaded module" remount
umount_rdma
ktap_test_result "rmmod rpcrdma_cm at the end" rmmod rpcrdma_cm

rm -rf "$work"
stop_nfsd
ktap_finished
