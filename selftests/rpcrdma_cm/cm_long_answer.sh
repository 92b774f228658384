#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A hook whose prepare callbacks answer a length longer than the buffer
# they were given (test_modules/long_answer/cm_long_answer.rs, a
# kernel::sunrpc::rdma_cm hook named rpcrdma_cm, as the hooks' exports
# require, built by
# scripts/guest/selftests.sh): the transports refuse both answers (the client's
# connect and the server's accept), negotiate the connection with the
# stock code, and report each refused answer to the hook with closed(), so
# that the connection the hook recorded in its prepare callback is not
# leaked. The hook logs each answer and each closed(), and on unload how
# many connections it still holds: it must be 0.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_long_answer rxe nfsd

LONG_KO=$DIR/test_modules/long_answer/rpcrdma_cm.ko

[ -r "$LONG_KO" ] || ktap_exit_fail_msg "$LONG_KO not built (scripts/guest/selftests.sh builds it)"
require_loadable_test_hook
ktap_plan_counted

rmmod rpcrdma_cm 2>/dev/null
[ ! -d /sys/module/rpcrdma_cm ] || ktap_exit_fail_msg "rpcrdma_cm is loaded and does not unload"
load_long() {
	insmod "$LONG_KO"
}
ktap_test_result "insmod long_answer/rpcrdma_cm.ko" load_long

round_trip() {
	local f=/tmp/cm_long_answer.data rc
	trace_cm_private xprtrdma_cm_private || return 1
	head -c 32768 /dev/urandom >$f
	mount_rdma "$ip" 4.2 || { ktap_print_msg "mount failed"; return 1; }
	cp $f "$MNT/long_answer" && echo 3 >/proc/sys/vm/drop_caches && cmp $f "$MNT/long_answer"
	rc=$?
	traced_is xprtrdma_cm_private by=stock || rc=1
	umount_rdma
	return $rc
}
ktap_test_result "the answers are refused: the mount is the stock code's, a 32 KB file round-trips" round_trip
ktap_test_result "rmmod the long-answer hook" rmmod rpcrdma_cm

log=$(kernel_log_since cm_long_answer) || ktap_exit_fail_msg "the kernel log lost the mark"
answered=$(echo "$log" | grep -c "rpcrdma_cm: answered ")
closed=$(echo "$log" | grep -c "rpcrdma_cm: closed: ")
refused=$(echo "$log" | grep -c "rpcrdma: CM private data hook answer refused")
ktap_print_msg "answers: $answered (connect $(echo "$log" | grep -c "answered a connect"), accept $(echo "$log" | grep -c "answered an accept")), closed(): $closed, refusals logged: $refused (rate-limited)"
each_answer_closed() {
	echo "$log" | grep -q "answered a connect" && echo "$log" | grep -q "answered an accept" &&
		[ "$answered" -eq "$closed" ]
}
ktap_test_result "each refused answer, connect and accept, was reported with closed()" each_answer_closed
held_none() {
	grep -q "rpcrdma_cm: unloading; connections still held: 0$" <<<"$log"
}
ktap_test_result "on unload the hook held no connection" held_none

ktap_finished
