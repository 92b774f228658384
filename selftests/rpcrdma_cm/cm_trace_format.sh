#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rpcrdma:{xprtrdma,svcrdma}_cm_private events must be readable by
# user space tools (libtraceevent: trace-cmd, perf), which evaluate the
# "print fmt" line of an event's format file themselves. They cannot
# evaluate a C statement expression ("({ ... })", what min_t() expands
# to) or sizeof: each argument of the print format must be a field of
# the entry, a constant or a helper they know.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_trace_format

T=/sys/kernel/tracing
EVENTS="xprtrdma_cm_private svcrdma_cm_private"

# The events' loop: one result each.
ktap_plan_counted "$(wc -w <<<"$EVENTS")"

mountpoint -q $T || mount -t tracefs nodev $T
modprobe rpcrdma || ktap_exit_fail_msg "cannot load rpcrdma"

# parseable EVENT: the print fmt has no statement expression, no sizeof,
# and shows the private data with __print_hex_str() over entry fields.
parseable() {
	local fmt
	fmt=$(grep '^print fmt:' "$T/events/rpcrdma/$1/format") || return 1
	if echo "$fmt" | grep -qE '\(\{|sizeof'; then
		ktap_print_msg "$1: print fmt holds an expression tools cannot evaluate:"
		echo "$fmt" | grep -oE '__print_hex_str\([^;]*' | head -2 | sed 's/^/# /'
		return 1
	fi
	echo "$fmt" | grep -qE '__print_hex_str\(REC->sent, REC->[a-z_]+\)' &&
		echo "$fmt" | grep -qE '__print_hex_str\(REC->peer, REC->[a-z_]+\)'
}

for e in $EVENTS; do
	ktap_test_result "rpcrdma:$e print format parseable by user space" parseable "$e"
done

ktap_finished
