#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rpcrdma_cm.ko loads and unloads; its parameters are visible (under
# /sys/module with the C shim, in configfs rpcrdma_cm when built
# from the kernel crate: lib.sh's rpcrdma_cm_params_dir), writable, and
# refuse out-of-range sizes. A debugfs file held open across rmmod is
# closed afterwards without running code of the unloaded module; so is a
# setting's file (configfs on 7.3, sysfs on 6.12), whose writes and
# fresh reads fail after rmmod.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin module_load

ktap_plan_counted

if [ ! -r "${RPCRDMA_CM_KO:-}" ]; then
	ktap_exit_fail_msg "RPCRDMA_CM_KO '${RPCRDMA_CM_KO:-}' not readable"
fi
modprobe rpcrdma || ktap_exit_fail_msg "modprobe rpcrdma failed"
rmmod rpcrdma_cm 2>/dev/null

ktap_test_result "insmod rpcrdma_cm.ko" insmod "$RPCRDMA_CM_KO"
P=$(rpcrdma_cm_params_dir) || P=/nonexistent

# The defaults Documentation/admin-guide.rst promises: sizes 0 (the
# transport's own setting), remote_invalidation and send_private_data Y,
# nonconforming_requester_1k and callback_times N.
DEFAULTS="requester_send_size=0 requester_recv_size=0 responder_send_size=0
responder_recv_size=0 remote_invalidation=Y send_private_data=Y nonconforming_requester_1k=N
callback_times=N"
params_present() {
	local kv p want got ok=0
	for kv in $DEFAULTS; do
		p=${kv%%=*} want=${kv#*=}
		if [ ! -r "$P/$p" ]; then
			ktap_print_msg "missing $P/$p"
			ok=1
			continue
		fi
		got=$(cat "$P/$p")
		if [ "$got" != "$want" ]; then
			ktap_print_msg "$p=$got, the documented default is $want"
			ok=1
		fi
	done
	return $ok
}
ktap_test_result "parameters visible with stock defaults" params_present

size_writable() {
	echo 16384 >$P/requester_send_size && [ "$(cat $P/requester_send_size)" = 16384 ] &&
		echo 0 >$P/requester_send_size && [ "$(cat $P/requester_send_size)" = 0 ]
}
ktap_test_result "size parameter writable at runtime" size_writable

size_range_checked() {
	local v
	for v in 1 1023 65537 262144 -1 abc; do
		if echo "$v" >$P/responder_recv_size 2>/dev/null; then
			ktap_print_msg "value $v was accepted"
			return 1
		fi
	done
	[ "$(cat $P/responder_recv_size)" = 0 ] && echo 65536 >$P/responder_recv_size &&
		[ "$(cat $P/responder_recv_size)" = 65536 ] && echo 1024 >$P/responder_recv_size
}
# 65536: the most xprtrdma and svcrdma allocate for an inline message
# (RPCRDMA_MAX_INLINE, RPCRDMA_MAX_INLINE_THRESH), so that a value takes
# effect as given; RFC 8797's format would carry up to 256 KiB.
ktap_test_result "size parameter refuses values outside 1024..65536" size_range_checked

# size_write TEXT: write TEXT (printf's %b escapes: \n a newline; no
# newline added) to responder_recv_size in one write() (dd: a shell's
# printf writes a line at a time); prints the error text, if any.
size_write() {
	printf '%b' "$1" | LC_ALL=C dd of="$P/responder_recv_size" bs=4096 count=1 iflag=fullblock status=none 2>&1
}

# What a size's file takes is kstrtouint(s, 0)'s rule (lib/kstrtox.c, its
# kernel-doc): an optional '+', then hex after 0x, octal after 0, else
# decimal, then at most one newline; "out of range" past 32 bits, invalid
# otherwise. The same on both bases (sysfs on 6.12, configfs on 7.3), but
# past 64 bits (refused either way: kstrtouint says out of range, the
# kernel crate's parser invalid; admin-guide.rst).
size_forms() {
	local v want got err ok=0
	while read -r v want; do
		err=$(size_write "$v")
		got=$(cat "$P/responder_recv_size")
		if [ -n "$err" ] || [ "$got" != "$want" ]; then
			ktap_print_msg "'$v': ${err:-accepted}, reads $got, want $want"
			ok=1
		fi
	done <<'EOF_CASES'
0x400 1024
02000 1024
+1024 1024
+0x400 1024
+04000 2048
0X1000 4096
8192\n 8192
0 0
+0 0
0x0 0
2048\0x 2048
4096 4096
EOF_CASES
	while read -r v want; do
		err=$(size_write "$v")
		case "$want:$err" in
		EINVAL:*"error writing"*"Invalid argument"* | ERANGE:*"error writing"*"out of range"*) ;;
		REFUSED:*"error writing"*"Invalid argument"* | REFUSED:*"error writing"*"out of range"*) ;;
		*)
			ktap_print_msg "'${v:0:20}': ${err:-accepted}, want $want"
			ok=1
			;;
		esac
		got=$(cat "$P/responder_recv_size")
		[ "$got" = 4096 ] || { ktap_print_msg "after '${v:0:20}' the value is $got, want 4096 (unchanged)"; ok=1; }
	done <<'EOF_CASES'
4294967296 ERANGE
\n EINVAL
0x EINVAL
08 EINVAL
-0 EINVAL
-1024 EINVAL
0b11 EINVAL
0o10 EINVAL
0x+400 EINVAL
++1024 EINVAL
1024\n\n EINVAL
1024x EINVAL
\x201024 EINVAL
+\n EINVAL
18446744073709551616 REFUSED
0x10000000000000000 REFUSED
EOF_CASES
	echo 0 >"$P/responder_recv_size"
	return $ok
}
ktap_test_result "size parameter file takes kstrtouint(s, 0)'s forms: +, 0x, octal, one newline; refuses signs, 0b/0o, junk, > 32 bits" size_forms

bool_writable() {
	echo N >$P/send_private_data && [ "$(cat $P/send_private_data)" = N ] &&
		echo Y >$P/send_private_data && [ "$(cat $P/send_private_data)" = Y ]
}
ktap_test_result "boolean parameter writable at runtime" bool_writable

ktap_test_result "rmmod rpcrdma_cm" rmmod rpcrdma_cm

# A reader holds <debugfs>/rpcrdma_cm/stats open while the module goes. The
# right outcome depends on the kernel (kernel_crate_has_debugfs): on 6.12
# rmmod refuses while the file is open (the C shim's file_operations.owner
# pins the module); on 7.3 rmmod succeeds, the open file then fails its
# reads, and closing it later runs no code of the unloaded module.
# Wrong is what 7.3's kernel::debugfs did without a fix: the close called
# into the freed module (an oops in full_proxy_release), or a read that
# still succeeds. The reader is a child shell, so an oops kills it, not this
# program; the kernel log since the mark must hold no report.
held_open_across_rmmod() {
	local f=/sys/kernel/debug/rpcrdma_cm/stats rc=0 outcome
	insmod "$RPCRDMA_CM_KO" || return 1
	mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
	if [ ! -r "$f" ]; then
		ktap_print_msg "no $f"
		rmmod rpcrdma_cm
		return 1
	fi
	kmsg_mark held_open
	outcome=$(bash -c '
		exec 3<"$1"
		head -c 1 <&3 >/dev/null || { echo "first read failed"; exit 1; }
		if rmmod rpcrdma_cm 2>/dev/null; then
			if cat <&3 >/dev/null 2>&1; then
				echo "read after rmmod succeeded"
				exit 1
			fi
			exec 3<&-
			echo unloaded
		else
			exec 3<&-
			rmmod rpcrdma_cm || { echo "rmmod after close failed"; exit 1; }
			echo pinned
		fi' held-open "$f")
	rc=$?
	ktap_print_msg "held-open reader: ${outcome:-killed, no outcome} (status $rc)"
	# kernel::debugfs (7.3, with the series' first three patches) lets rmmod go and
	# fails the open file; the C shim's .owner (6.12) pins the module.
	local want=pinned
	kernel_crate_has_debugfs && want=unloaded
	if [ "$outcome" != "$want" ]; then
		ktap_print_msg "this kernel's debugfs files must leave the module $want"
		rc=1
	fi
	rmmod rpcrdma_cm 2>/dev/null
	no_report_since held_open || rc=1
	if [ -d /sys/module/rpcrdma_cm ]; then
		ktap_print_msg "rpcrdma_cm still loaded"
		rc=1
	fi
	return $rc
}
ktap_test_result "debugfs file held open across rmmod closes cleanly" held_open_across_rmmod

# A setting's file (configfs attribute on 7.3, sysfs parameter on 6.12)
# held open for reading and writing while the module goes: rmmod succeeds
# (neither pins the module), a write through the open file then fails (the
# attribute's operations are the module's code), and so does the read
# after it, and closing it is clean; the kernel log since the mark holds
# no report. The write comes first: a read can still return what an
# earlier read left buffered (configfs keeps a file's last show until a
# write through it; sysfs the rest of a line), and configfs' write, even
# a failed one, empties that buffer.
setting_held_open() {
	local rc=0 outcome dir
	insmod "$RPCRDMA_CM_KO" || return 1
	dir=$(rpcrdma_cm_params_dir) || { ktap_print_msg "no settings directory"; rmmod rpcrdma_cm; return 1; }
	kmsg_mark setting_held_open
	outcome=$(bash -c '
		exec 3<>"$1"
		head -c 1 <&3 >/dev/null || { echo "first read failed"; exit 1; }
		rmmod rpcrdma_cm 2>/dev/null || { exec 3<&-; echo "rmmod refused"; exit 1; }
		if echo 2048 >&3 2>/dev/null; then
			echo "write after rmmod succeeded"
			exit 1
		fi
		if cat <&3 >/dev/null 2>&1; then
			echo "read after rmmod succeeded"
			exit 1
		fi
		exec 3<&-
		echo unloaded' held-open "$dir/requester_send_size")
	rc=$?
	ktap_print_msg "held-open setting: ${outcome:-killed, no outcome} (status $rc)"
	[ "$outcome" = unloaded ] || rc=1
	rmmod rpcrdma_cm 2>/dev/null
	no_report_since setting_held_open || rc=1
	return $rc
}
ktap_test_result "a setting's file held open across rmmod fails its reads and writes, closes cleanly" setting_held_open

insmod_with_params() {
	insmod "$RPCRDMA_CM_KO" requester_send_size=8192 send_private_data=N &&
		[ "$(cat $P/requester_send_size)" = 8192 ] &&
		[ "$(cat $P/send_private_data)" = N ] && rmmod rpcrdma_cm &&
		! insmod "$RPCRDMA_CM_KO" requester_send_size=512 2>/dev/null &&
		[ ! -d /sys/module/rpcrdma_cm ]
}
ktap_test_result "insmod with parameters; bad value refused at load" insmod_with_params

# Above the transports' 64 KiB the load fails too, and the kernel log
# names the value and the parameter (the module's message on 7.3, the
# kernel's for a refused parameter on 6.12 and the distribution build).
insmod_above_ceiling() {
	local rc=0
	kmsg_mark insmod_above_ceiling
	if insmod "$RPCRDMA_CM_KO" responder_send_size=65537 2>/dev/null; then
		ktap_print_msg "responder_send_size=65537 was accepted at load"
		rmmod rpcrdma_cm
		return 1
	fi
	[ ! -d /sys/module/rpcrdma_cm ] &&
		kernel_log_since insmod_above_ceiling | grep -q "65537' invalid for parameter .responder_send_size'" || rc=1
	# The ceiling itself is taken.
	insmod "$RPCRDMA_CM_KO" responder_send_size=65536 &&
		[ "$(cat $P/responder_send_size)" = 65536 ] && rmmod rpcrdma_cm || rc=1
	return $rc
}
ktap_test_result "a size above 65536 refused at load, named in the kernel log; 65536 taken" insmod_above_ceiling

ktap_finished
