#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel::debugfs files held open across rmmod (7.3 kernel crate; the
# first three patches of the 7.3 series). debugfs_kinds.ko (test_modules/,
# built by scripts/guest/selftests.sh, passed as DEBUGFS_KINDS_KO) has one
# file of each of the six kinds. Each reads and writes what the module
# holds; then, with one of them open, rmmod succeeds, the open file's
# reads and writes fail with EIO (the file is gone), and closing it runs
# no code of the unloaded module: no report in the kernel log. Each kind
# is held open alone. On stock 7.3 each close oopses in
# full_proxy_release. Skips on a kernel whose Rust crate has no debugfs
# (6.12); on 7.3 a missing debugfs_kinds.ko fails.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin debugfs_unload

if ! kernel_crate_has_debugfs; then
	ktap_skip_all "the kernel's Rust crate has no debugfs (6.12)"
	exit "$KSFT_SKIP"
fi
if [ ! -r "${DEBUGFS_KINDS_KO:-}" ]; then
	ktap_exit_fail_msg "DEBUGFS_KINDS_KO '${DEBUGFS_KINDS_KO:-}' not readable (scripts/guest/selftests.sh builds it)"
fi
# The loop over the six kinds: one result each.
ktap_plan_counted 6

D=/sys/kernel/debug/debugfs_kinds
mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
rmmod debugfs_kinds 2>/dev/null
ktap_test_result "insmod debugfs_kinds.ko" insmod "$DEBUGFS_KINDS_KO"

# hex FILE: the file's content in hex.
hex() { od -An -tx1 "$1" | tr -d ' \n'; }
contents() {
	local ok=0 got
	[ "$(cat $D/ro)" = 42 ] || { ktap_print_msg "ro: '$(cat $D/ro)'"; ok=1; }
	[ "$(cat $D/rw)" = 7 ] && echo 9 >$D/rw && [ "$(cat $D/rw)" = 9 ] ||
		{ ktap_print_msg "rw: '$(cat $D/rw)'"; ok=1; }
	echo 5 >$D/wo || { ktap_print_msg "wo: write failed"; ok=1; }
	if cat $D/wo >/dev/null 2>&1; then ktap_print_msg "wo: read succeeded"; ok=1; fi
	got=$(hex $D/bin_ro)
	[ "$got" = 61626364 ] || { ktap_print_msg "bin_ro: $got"; ok=1; }
	printf 'QRST' >$D/bin_wo || { ktap_print_msg "bin_wo: write failed"; ok=1; }
	printf 'AB' >$D/bin_rw && got=$(hex $D/bin_rw)
	[ "$got" = 4142797a ] || { ktap_print_msg "bin_rw after writing AB: $got"; ok=1; }
	return $ok
}
ktap_test_result "each of the six kinds reads and writes the module's data" contents

# held_open NAME MODE: with NAME open (MODE < read, > write, <> both) in a
# child shell, so that an oops kills the child and not this program, and
# that child closes one file only (an oops while an exiting task closes
# more of them recurses and hangs it): rmmod succeeds, the open file's
# reads or writes fail, and closing it is clean. Reloads the module after.
held_open() {
	local out rc
	kmsg_mark "debugfs_unload-$1"
	out=$(bash -c '
		f=$1 mode=$2
		case $mode in
		"<") exec 3<"$f" ;;
		">") exec 3>"$f" ;;
		"<>") exec 3<>"$f" ;;
		esac || exit 1
		rmmod debugfs_kinds || { echo "rmmod refused"; exit 1; }
		bad=
		case $mode in
		*"<"*) cat <&3 >/dev/null 2>&1 && bad="$bad read" ;;
		esac
		case $mode in
		*">") (echo 1 >&3) 2>/dev/null && bad="$bad write" ;;
		esac
		exec 3>&-
		echo "closed${bad:+; succeeded after rmmod:$bad}"
		[ -z "$bad" ]' held-open "$D/$1" "$2")
	rc=$?
	ktap_print_msg "$1 held open across rmmod: ${out:-killed, no outcome} (status $rc)"
	[ $rc = 0 ] && [ ! -d /sys/module/debugfs_kinds ] || rc=1
	no_report_since "debugfs_unload-$1" || rc=1
	insmod "$DEBUGFS_KINDS_KO" || rc=1
	return $rc
}
for kind in "ro <" "rw <>" "wo >" "bin_ro <" "bin_wo >" "bin_rw <>"; do
	# shellcheck disable=SC2086
	ktap_test_result "${kind% *} held open across rmmod: its I/O fails, closing it is clean" held_open $kind
done

# What the writes left, logged at the first unload above; and no report
# since the mark.
unload_clean() {
	local log
	log=$(kernel_log_since debugfs_unload) || return 1
	echo "$log" | grep -q 'debugfs_kinds: wo=5 bin_wo=\[81, 82, 83, 84\]' ||
		{ ktap_print_msg "the module did not log wo=5 bin_wo=QRST at unload"; return 1; }
	no_report_since debugfs_unload
}
ktap_test_result "the writes reached the module; no kernel report" unload_clean

rmmod debugfs_kinds
ktap_finished
