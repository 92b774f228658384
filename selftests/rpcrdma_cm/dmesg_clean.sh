#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs last: once the transports' asynchronous teardown has settled (every
# RDMA device back to what it held when added), the kernel log of the
# whole guest session (every test before this one) holds no warning, BUG,
# oops, KASAN or lockdep report, and, on a kernel with kmemleak, a scan
# finds no leak.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin dmesg_clean

# The teardown's and kmemleak's ifs, and the checkers' three (KASAN,
# kmemleak, lockdep): each a result or a skip.
ktap_plan_counted 5

# The end of the session's transports: programs may leave nfsd running
# (selftest_end only unmounts and unloads rpcrdma_cm), so stop it and
# unmount whatever NFS is left; then wait for the teardown, which is
# asynchronous (svcrdma frees a transport in a work item after nfsd
# stops, xprtrdma after the umount): a log read before it ends misses
# what the teardown reports.
stop_nfsd
umount -a -t nfs,nfs4 -f -l 2>/dev/null
if [ "$(rdma_devices_idle 2>/dev/null)" = none ]; then
	ktap_test_skip "the transports' teardown settled (no RDMA device in this guest: none torn down)"
else
	ktap_test_result "the transports' teardown settled: every RDMA device without CM ID, its PDs, CQs, QPs and MRs as when added" \
		rdma_teardown_settled 60
fi

dmesg >/tmp/dmesg-all
# The whole session: the log must still begin with the boot banner.
from_boot() {
	head -n 1 /tmp/dmesg-all | grep -q 'Linux version' && return 0
	ktap_print_msg "the kernel log no longer begins at boot (wrapped? log_buf_len); first line:"
	head -n 1 /tmp/dmesg-all | sed 's/^/# /'
	return 1
}
ktap_test_result "dmesg still holds the whole session, from boot on" from_boot
ktap_test_result "dmesg holds no warning, BUG, oops, KASAN, lockdep or kmemleak report" \
	no_kernel_report /tmp/dmesg-all

mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
KML=/sys/kernel/debug/kmemleak
# kmemleak at work: its file is there (debugfs, a kernel with kmemleak)
# and it was not booted off (the file stays, and a scan is refused).
kmemleak_on() {
	[ -w $KML ] && ! grep -qw 'kmemleak=off' /proc/cmdline
}
# checker_missing NAME WHAT: the result WHAT where the running kernel does
# not offer the checker NAME (kasan, kmemleak, lockdep): a skip, or a
# failure if the kernel was built with it (RPCRDMA_CM_CHECKERS, from the
# kernel's configuration, scripts/guest/selftests.sh): a checker that
# turned itself off (kmemleak after a failed allocation of its own)
# would otherwise leave the session judged by nobody.
checker_missing() {
	if [[ " ${RPCRDMA_CM_CHECKERS:-} " == *" $1 "* ]]; then
		ktap_test_fail "$2: the kernel was built with $1, which is not there"
	else
		ktap_test_skip "$2 (kernel without $1)"
	fi
}
# kmemleak reports no object younger than MSECS_MIN_AGE (5 s,
# mm/kmemleak.c) at the time of a scan: the last program's allocations
# would be invisible to a scan right after it. Wait past that age, then
# scan twice (a scan leaves an object whose checksum changed since the
# previous one unreported; the second one reports it).
KMEMLEAK_MIN_AGE=5
no_leaks() {
	sleep $((KMEMLEAK_MIN_AGE + 1))
	echo scan >$KML && echo scan >$KML || { ktap_print_msg "kmemleak scan failed"; return 1; }
	if grep -q "unreferenced object" $KML; then
		grep -A12 "unreferenced object" $KML | head -60 | sed 's/^/# /'
		return 1
	fi
}
if kmemleak_on; then
	ktap_test_result "kmemleak finds no leak" no_leaks
else
	checker_missing kmemleak "kmemleak finds no leak"
fi

# The checkers are alive: with the session judged, planted bugs
# (test_modules/checkers_canary.c) must each be reported by the kernel and
# counted by the judges above. A checker that is off, blind (kmemleak
# behind SLUB's sheaves, see guest.sh) or was turned off without a report
# (lockdep, by a taint) would otherwise pass a clean log unseen. Last,
# because the planted reports stay in the log, and KASAN's turns lockdep
# off.
CANARY_KO=$DIR/test_modules/checkers_canary.ko
# Objects the leak plant leaks, 0xf6 throughout (a report's hex dump shows
# their first 32 octets); a stale pointer on a stack can hide some: at
# least half must be reported.
CANARY_LEAKS=32
CANARY_HEX=$(printf 'f6 %.0s' $(seq 16))
plant() {
	[ -f "$CANARY_KO" ] || { ktap_print_msg "$CANARY_KO not built"; return 1; }
	insmod "$CANARY_KO" "$@" && rmmod checkers_canary
}
kasan_reports_overread() {
	kmsg_mark checkers_canary
	plant plant=overread || return 1
	kernel_log_since checkers_canary >/tmp/dmesg-canary || return 1
	# (The report names the init function by its alias, init_module.)
	if ! grep -qE "BUG: KASAN: slab-out-of-bounds in .*\[checkers_canary\]" /tmp/dmesg-canary; then
		ktap_print_msg "no KASAN report of the planted over-read; the log after it:"
		sed 's/^/# /' /tmp/dmesg-canary | head -20
		return 1
	fi
	# The judge of every guest log must count it (its pattern, not a
	# second reading of the line above).
	if no_kernel_report /tmp/dmesg-canary "the planted over-read" >/dev/null; then
		ktap_print_msg "no_kernel_report passed a log with the planted KASAN report"
		return 1
	fi
}
kmemleak_reports_leak() {
	plant plant=leak leaks=$CANARY_LEAKS || return 1
	# no_leaks (above) must find them, and they must be the planted ones.
	if no_leaks >/tmp/kmemleak-canary; then
		ktap_print_msg "no_leaks found no leak after the planted one"
		return 1
	fi
	local found
	found=$(grep -A3 "unreferenced object" $KML | grep -cF "${CANARY_HEX% }")
	echo clear >$KML
	if [ "$found" -lt $((CANARY_LEAKS / 2)) ]; then
		ktap_print_msg "kmemleak reported $found of the $CANARY_LEAKS planted objects; its report:"
		sed 's/^/# /' /tmp/kmemleak-canary | head -20
		return 1
	fi
	ktap_print_msg "kmemleak reported $found of the $CANARY_LEAKS planted objects"
}
lockdep_checking() {
	grep -q "debug_locks: *1$" /proc/lockdep_stats && return 0
	ktap_print_msg "lockdep is off: $(grep debug_locks /proc/lockdep_stats)"
	return 1
}
if [ -r /proc/lockdep_stats ]; then
	ktap_test_result "lockdep still checking at the end of the session (debug_locks 1)" lockdep_checking
else
	checker_missing lockdep "lockdep still checking"
fi
if kmemleak_on; then
	ktap_test_result "kmemleak reports a planted leak and the leak judge counts it" kmemleak_reports_leak
else
	checker_missing kmemleak "kmemleak reports a planted leak"
fi
# KASAN last: its report turns lockdep off (the kernel is tainted).
if kernel_has_kasan; then
	ktap_test_result "KASAN reports a planted over-read and the log's judge counts it" kasan_reports_overread
else
	checker_missing kasan "KASAN reports a planted over-read"
fi

ktap_finished
