#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rpcrdma_cm's allocation failures, under the kernel's own fault injection
# (Documentation/fault-injection/fault-injection.rst): failslab with a
# stack-trace filter on the module's code fails every slab allocation made
# with one of the module's functions on the stack, which is the node of each
# connection it would track, allocated in the connect callback (xprtrdma's
# connect worker) and in the accept callback (an nfsd thread). Each
# connection is then negotiated by the stock code as if the module were not
# loaded. The expectations come from the RFC and the stock code, not from
# the module: the series' xprtrdma and svcrdma advertise 4096/4096, so the
# client applies 4096/4096 and the server limits Replies to the client's
# advertised 4096 (send_threshold=4096).
#
#  - armed for the mount only (both allocations happen during it): the
#    NFSv4.2 mount over RDMA works, and disarmed it moves data; both
#    transports' tracepoints say by=stock with those values; debugfs tracks
#    no connection; failslab's own count of injected failures equals the
#    rise of the module's no_memory counters, at least one per role, and
#    no connection was counted as the module's;
#  - disarmed: the next mount is the module's again (by=module on both);
#  - the kernel log since the start holds no report (dmesg_clean.sh later
#    reads the whole log, and on a kernel with kmemleak, 7.3's test kernel
#    among them, scans for leaks).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_fault_injection module rxe nfsd

T=/sys/kernel/tracing
D=/sys/kernel/debug
F=$D/failslab
CONN=$D/rpcrdma_cm/connections

if [ ! -e $F/require-start ]; then
	ktap_skip_all "kernel without failslab and its stack-trace filter (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_STACKTRACE_FILTER)"
	exit "$KSFT_SKIP"
fi
# The filter needs exact stack traces: the guess unwinder reports stale
# text addresses left on the stack, and would fail other code's
# allocations. orc_sort_cmp is the ORC unwinder's (a sort callback, never
# inlined; orc_find is).
if ! grep -qw orc_sort_cmp /proc/kallsyms; then
	ktap_skip_all "kernel without the ORC unwinder (CONFIG_UNWINDER_ORC): failslab's stack filter would not be exact"
	exit "$KSFT_SKIP"
fi
ktap_plan_counted

insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
for e in xprtrdma_cm_private svcrdma_cm_private; do
	echo 1 >$T/events/rpcrdma/$e/enable || ktap_exit_fail_msg "cannot enable rpcrdma:$e"
done
kmsg_mark fault_injection

# The module's code: where the kernel put its .text and .exit.text
# (/sys/module/rpcrdma_cm/sections/) with each section's size in the
# module file (readelf); the kernel lays them out one after the other.
# Every text symbol /proc/kallsyms lists for the module must lie in the
# range. (Addresses as root reads them; bash arithmetic wraps at 2^63 but
# keeps the order of kernel addresses, all above it.)
text_start='' text_end=''
for sec in .text .exit.text; do
	addr=$(cat "/sys/module/rpcrdma_cm/sections/$sec" 2>/dev/null)
	size=$(readelf -SW "$RPCRDMA_CM_KO" |
		sed -n "s/.*\] \\$sec  *PROGBITS  *[0-9a-f]*  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p")
	[ -n "$addr" ] && [ -n "${addr//[0x]/}" ] && [ -n "$size" ] ||
		ktap_exit_fail_msg "no address (${addr:-none}) or size (${size:-none}) of rpcrdma_cm's $sec"
	[ -z "$text_start" ] || [ $((addr)) -lt $((text_start)) ] && text_start=$addr
	[ -z "$text_end" ] || [ $((addr + 0x$size)) -gt $((text_end)) ] &&
		text_end=$(printf '0x%x' $((addr + 0x$size)))
done
outside=$(awk '$4 == "[rpcrdma_cm]" && ($2 == "t" || $2 == "T") { print $1 }' /proc/kallsyms |
	while read -r a; do
		[ $((0x$a)) -ge $((text_start)) ] && [ $((0x$a)) -lt $((text_end)) ] || echo "$a"
	done)
[ -z "$outside" ] || ktap_exit_fail_msg "rpcrdma_cm text symbols outside $text_start..$text_end: $outside"
ktap_print_msg "rpcrdma_cm text $text_start..$text_end"


# Budget of failures: failslab counts "times" down by one per failure; a
# mount takes two (one per side).
BUDGET=10
disarm() {
	echo 0 >$F/probability
	echo 0 >$F/require-start
	echo 0xffffffffffffffff >$F/require-end
	echo 1 >$F/times
	echo 2 >$F/verbose
	echo Y >$F/ignore-gfp-wait
}
arm() {
	echo N >$F/ignore-gfp-wait &&
		echo N >$F/task-filter &&
		echo N >$F/cache-filter &&
		echo 32 >$F/stacktrace-depth &&
		echo 0 >$F/reject-start &&
		echo 0 >$F/reject-end &&
		echo 1 >$F/verbose &&
		echo 0 >$F/space &&
		echo 1 >$F/interval &&
		echo $BUDGET >$F/times &&
		echo "$text_start" >$F/require-start &&
		echo "$text_end" >$F/require-end &&
		echo 100 >$F/probability
}
cleanup() { disarm; }

declare -A before
stat_counters_into before "requester responder" "connections no_memory"

echo >$T/trace
arm || ktap_exit_fail_msg "cannot arm failslab"
mounted=0
mount_rdma "$ip" 4.2 && mounted=1
injected=$((BUDGET - $(cat $F/times)))
disarm
data_ok=0
[ $mounted = 1 ] && head -c 100000 /dev/urandom >/tmp/fi-data &&
	cp /tmp/fi-data "$MNT/fi-data" && sync && cmp -s /tmp/fi-data "$MNT/fi-data" && data_ok=1

armed_mount() {
	[ $mounted = 1 ] || { ktap_print_msg "mount failed"; return 1; }
	[ $data_ok = 1 ] || { ktap_print_msg "100000 random octets did not come back the same"; return 1; }
}
ktap_test_result "failslab armed on the module: the NFSv4.2 mount works, and moves data" armed_mount

stock_negotiated() {
	local ok=0
	traced_is xprtrdma_cm_private by=stock send_threshold=4096 recv_threshold=4096 || ok=1
	traced_is svcrdma_cm_private by=stock send_threshold=4096 || ok=1
	if [ ! -r $CONN ]; then
		ktap_print_msg "no $CONN"
		ok=1
	elif grep -q '^role=' $CONN; then
		ktap_print_msg "debugfs tracks a connection the module could not allocate for:"
		sed 's/^/# /' $CONN
		ok=1
	fi
	[ $ok = 0 ] || grep _cm_private $T/trace | sed 's/^/# /'
	return $ok
}
ktap_test_result "both ends negotiated by the stock code, debugfs tracks nothing" stock_negotiated

counted() {
	local r ok=0 nm=0 d
	ktap_print_msg "failslab injected $injected failures"
	for r in requester responder; do
		d=$(($(stat_counter $r no_memory) - ${before[$r-no_memory]}))
		nm=$((nm + d))
		if [ "$d" -lt 1 ]; then
			ktap_print_msg "$r no_memory rose by $d, want at least 1"
			ok=1
		fi
		if [ "$(stat_counter $r connections)" != "${before[$r-connections]}" ]; then
			ktap_print_msg "$r connections $(stat_counter $r connections), was ${before[$r-connections]}: a connection left to the stock code was counted"
			ok=1
		fi
	done
	if [ "$nm" != "$injected" ]; then
		ktap_print_msg "no_memory rose by $nm in all, failslab injected $injected"
		ok=1
	fi
	[ $ok = 0 ] || sed 's/^/# /' $D/rpcrdma_cm/stats
	return $ok
}
ktap_test_result "every injected failure is counted in no_memory, none as a connection" counted

# warned: for each role, the kernel log since the first armed allocation
# says so once at each power of two the role's no_memory count passed,
# with that count (the rule admin-guide.rst documents: 1st, 2nd, 4th,
# 8th...), and names the role.
warned() {
	local r ok=0 b a p want got
	for r in requester responder; do
		b=${before[$r-no_memory]} a=$(stat_counter $r no_memory) want=
		for ((p = 1; p <= a; p *= 2)); do
			[ "$p" -gt "$b" ] && want="$want $p"
		done
		got=$(kernel_log_since fault_injection |
			sed -n "s/.*rpcrdma_cm: no memory to track a connection of the $r; left to the stock code (\([0-9]*\) so far, stats: no_memory)$/\1/p" |
			paste -sd ' ')
		if [ "$got" != "${want# }" ]; then
			ktap_print_msg "$r: warned at '${got}', want '${want# }' (no_memory $b -> $a)"
			ok=1
		fi
	done
	return $ok
}
ktap_test_result "each role's warning names it and comes at each power of two its no_memory count reached" warned

rm -f "$MNT/fi-data"
umount_rdma

module_again() {
	local ok=0
	echo >$T/trace
	mount_rdma "$ip" 4.2 || { ktap_print_msg "mount failed"; return 1; }
	echo hello >"$MNT/probe" && [ "$(cat "$MNT/probe")" = hello ] || ok=1
	traced_is xprtrdma_cm_private by=module || ok=1
	traced_is svcrdma_cm_private by=module || ok=1
	[ "$(grep -c '^role=' $CONN)" = 2 ] || {
		ktap_print_msg "want one requester and one responder line:"
		sed 's/^/# /' $CONN
		ok=1
	}
	rm -f "$MNT/probe"
	umount_rdma
	return $ok
}
ktap_test_result "disarmed: the next mount is negotiated by the module again" module_again

ktap_test_result "rmmod rpcrdma_cm" rmmod rpcrdma_cm
ktap_test_result "no kernel report since the first armed allocation" no_report_since fault_injection
stop_nfsd
ktap_finished
