#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs last: the kernel log of the whole guest session (every test before
# this one) holds no warning, BUG, oops, KASAN or lockdep report, and, on a
# kernel with kmemleak, a scan finds no leak.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root

ktap_print_header
ktap_set_plan 2

no_reports() {
	dmesg >/tmp/dmesg-all
	if kernel_report /tmp/dmesg-all >/tmp/dmesg-bad; then
		ktap_print_msg "lines matching: $(grep -cE "$KERNEL_REPORTS" /tmp/dmesg-all); the first report and its stack:"
		sed 's/^/# /' /tmp/dmesg-bad
		return 1
	fi
}
ktap_test_result "dmesg holds no warning, BUG, oops, KASAN or lockdep report" no_reports

mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
KML=/sys/kernel/debug/kmemleak
no_leaks() {
	echo scan >$KML && echo scan >$KML
	if grep -q "unreferenced object" $KML; then
		grep -A12 "unreferenced object" $KML | head -60 | sed 's/^/# /'
		return 1
	fi
}
if [ -w $KML ]; then
	ktap_test_result "kmemleak finds no leak" no_leaks
else
	ktap_test_skip "kmemleak finds no leak (kernel without kmemleak)"
fi

ktap_finished
