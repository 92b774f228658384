#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmmod/insmod rpcrdma_cm 50 times while an NFSv4.2 mount over RDMA is busy:
# no oops or warning in dmesg, every file written meanwhile reads back
# byte-exact, and a fresh mount afterwards negotiates through the module.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root

CYCLES=50
ktap_print_header
require_module_ko
ktap_set_plan 5

mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
nic=$(guest_nic) && setup_rxe "$nic" || ktap_exit_fail_msg "no ACTIVE rxe device"
ip=$(guest_ip "$nic")
modprobe rpcrdma
rmmod rpcrdma_cm 2>/dev/null
start_nfsd || ktap_exit_fail_msg "nfsd did not start"
insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
mount_rdma "$ip" 4.2 || ktap_exit_fail_msg "mount failed"
dmesg -C

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

cycle() {
	local i
	for i in $(seq 1 $CYCLES); do
		rmmod rpcrdma_cm || { ktap_print_msg "rmmod failed at $i"; return 1; }
		insmod "$RPCRDMA_CM_KO" || { ktap_print_msg "insmod failed at $i"; return 1; }
	done
}
ktap_test_result "$CYCLES rmmod/insmod cycles under I/O" cycle
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
	mount_rdma "$ip" 4.2 && grep -q '^role=requester .*send_threshold=4096' \
		/sys/kernel/debug/rpcrdma_cm/connections
}
ktap_test_result "a new mount negotiates through the reloaded module" remount
umount_rdma
ktap_test_result "rmmod rpcrdma_cm at the end" rmmod rpcrdma_cm

rm -rf "$work"
stop_nfsd
ktap_finished
