# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the rpcrdma_cm selftests. They run inside a virtme-ng guest
# that shares the host's userspace; source this file, then the kselftest
# KTAP helpers are available too.
#
# Environment (set by scripts/guest/guest.sh):
#   KSFT_DIR       the kernel tree's tools/testing/selftests
#   RPCRDMA_CM_KO  path of rpcrdma_cm.ko

: "${KSFT_DIR:?KSFT_DIR must point at tools/testing/selftests of the kernel tree}"
# shellcheck source=/dev/null
. "$KSFT_DIR/kselftest/ktap_helpers.sh"

# What a kernel log must not contain: warnings, BUGs, oopses, KASAN,
# lockdep and kmemleak reports (and the call traces they print).
KERNEL_REPORTS='WARNING:|BUG:|Oops|general protection|KASAN|possible circular locking|possible recursive locking|inconsistent lock state|kernel BUG|Call Trace|suspected memory leak'

# no_kernel_report LOG [WHOSE]: succeed when the kernel log file LOG holds no
# report; otherwise say how many lines match and show the first report with
# the 40 lines after it (its stack), each line headed by WHOSE when given.
# A LOG that is missing or that grep cannot read fails: only grep's "no
# match" is clean.
no_kernel_report() {
	local first rc whose=${2:+$2: }
	if [ ! -f "$1" ] || [ ! -r "$1" ]; then
		ktap_print_msg "${whose}no readable kernel log at $1"
		return 1
	fi
	first=$(grep -E -m1 -A40 "$KERNEL_REPORTS" "$1")
	rc=$?
	case $rc in
	1) return 0 ;;
	0) ;;
	*)
		ktap_print_msg "${whose}grep could not read the kernel log $1 (status $rc)"
		return 1 ;;
	esac
	ktap_print_msg "${whose}lines matching: $(grep -cE "$KERNEL_REPORTS" "$1"); the first report and its stack:"
	echo "$first" | sed "s|^|# $whose|"
	return 1
}

# rdma_teardown_settled [SECS]: wait until every RDMA device is back to
# what it held when added (rdma_devices_idle: the transports' asynchronous
# teardown is over; svcrdma frees a transport in a work item after nfsd
# stops, xprtrdma after the umount), SECS seconds at most (60); says how
# long it took, or which device was not idle.
rdma_teardown_settled() {
	local start=$SECONDS limit=${1:-60} left l
	until left=$(rdma_devices_idle); do
		if [ $((SECONDS - start)) -ge "$limit" ]; then
			ktap_print_msg "after $limit s, not back to what they held when added:"
			while IFS= read -r l; do ktap_print_msg "$l"; done <<<"$left"
			return 1
		fi
		sleep 0.5
	done
	ktap_print_msg "every RDMA device idle after $((SECONDS - start)) s: $(rdma resource show 2>/dev/null | awk '$2 ~ /:$/' | paste -sd ';')"
}

# rdma_resources: what 'rdma resource show' counts over every RDMA device,
# summed (rdma_device_resources without a device): "pd=N cq=N qp=N
# cm_id=N mr=N"; nothing (false, the reason on stderr) when it shows no
# device's counts or a device's line lacks one.
rdma_resources() {
	rdma_device_resources
}

# RDMA_IDLE: what each soft RDMA device held when it was added, a file a
# device (rdma_link_add); dmesg_clean.sh waits until every device is back
# to it before it reads the kernel log.
RDMA_IDLE=/tmp/rpcrdma-cm-rdma-idle

# rdma_device_resources [DEV]: what 'rdma resource show' counts for the
# RDMA device DEV, or summed over every device without DEV: "pd=N cq=N
# qp=N cm_id=N mr=N", each count found by its name (iproute2 versions
# print "pd 1", "pd 1/32768" or more fields between); false, with the
# reason on stderr, when DEV (or any device) is not listed or a count is
# missing from a device's line.
rdma_device_resources() {
	local out
	out=$(rdma resource show 2>&1) || { echo "rdma resource show failed: $out" >&2; return 1; }
	awk -v dev="${1:+$1:}" '
		dev == "" ? $2 ~ /^[^ ]+:$/ : $2 == dev {
			f = 1
			k = 0
			for (i = 3; i < NF; i++)
				if ($i ~ /^(pd|cq|qp|cm_id|mr)$/ && $(i + 1) ~ /^[0-9]/) {
					n[$i] += $(i + 1)
					k++
				}
			if (k != 5) { print "a count is missing: " $0 > "/dev/stderr"; bad = 1; exit 1 }
		}
		END {
			if (bad) exit 1
			if (!f) { print (dev == "" ? "no device" : "no device " substr(dev, 1, length(dev) - 1)) " in rdma resource show" > "/dev/stderr"; exit 1 }
			printf "pd=%d cq=%d qp=%d cm_id=%d mr=%d\n", n["pd"], n["cq"], n["qp"], n["cm_id"], n["mr"]
		}' <<<"$out"
}

# rdma_link_add DEV TYPE NETDEV: add the soft RDMA device DEV (TYPE rxe or
# siw) on NETDEV and keep what it holds before any transport uses it (the
# MAD layer's QP, CQ and PD on RoCE; nothing on iWARP) in RDMA_IDLE (or
# why it could not be read, which rdma_devices_idle then reports).
rdma_link_add() {
	rdma link add "$1" type "$2" netdev "$3" || return 1
	mkdir -p "$RDMA_IDLE"
	rdma_device_resources "$1" >"$RDMA_IDLE/$1" 2>&1
	return 0
}

# rdma_devices_idle: every RDMA device 'rdma resource show' lists holds no
# CM ID and the PDs, CQs, QPs and MRs it held when added (rdma_link_add;
# a wildcard listener, nfsd's, has a CM ID on each device, also on one
# added while it listened, so that count is not compared with the file);
# prints what differs, or a device rdma_link_add did not add, and is
# false then, or when 'rdma resource show' fails. A guest with no RDMA
# device prints "none" (nothing was torn down there).
rdma_devices_idle() {
	local dev now idle ok=0 out devs
	out=$(rdma resource show 2>&1) || { echo "rdma resource show failed: $out"; return 1; }
	devs=$(awk '$2 ~ /:$/ { sub(/:$/, "", $2); print $2 }' <<<"$out")
	[ -n "$devs" ] || { echo none; return 0; }
	for dev in $devs; do
		now=$(rdma_device_resources "$dev" 2>&1) || { echo "$dev: $now"; ok=1; continue; }
		if [ ! -f "$RDMA_IDLE/$dev" ]; then
			echo "$dev: $now, not added by rdma_link_add (nothing to compare with)"
			ok=1
			continue
		fi
		idle=$(sed 's/cm_id=[0-9]*/cm_id=0/' "$RDMA_IDLE/$dev")
		case $idle in
		pd=*) ;;
		*) echo "$dev: $now, its counts when added could not be read: $idle"; ok=1; continue ;;
		esac
		if [ "$now" != "$idle" ]; then
			echo "$dev: $now, idle $idle"
			ok=1
		fi
	done
	return $ok
}

# teardown_settled BASELINE SECONDS: wait, at most SECONDS, until the RDMA
# resources are BASELINE again (rdma_resources before the test's transports
# came up): the transports' asynchronous teardown (xprtrdma's and
# svcrdma's workers, after umount or nfsd's stop) has freed every PD, CQ,
# QP, CM ID and MR it made, so that a kernel log read afterwards covers
# it. Prints "settled after N s: ..." or "left after N s: ... (before:
# ...)"; false in the second case.
teardown_settled() {
	local base=$1 now start=$SECONDS
	[ -n "$base" ] || { echo "no baseline: rdma resource show gave no device's counts"; return 1; }
	# With its reason when the counts cannot be read (never equal to base).
	now=$(rdma_resources 2>&1)
	while [ "$now" != "$base" ] && [ $((SECONDS - start)) -lt "$2" ]; do
		sleep 0.5
		now=$(rdma_resources 2>&1)
	done
	if [ "$now" = "$base" ]; then
		echo "settled after $((SECONDS - start)) s: $now"
	else
		echo "left after $((SECONDS - start)) s: $now (before: $base)"
		return 1
	fi
}

# guest_side_clean DIR SIDE LABEL: what a guest of a pair (SIDE: server or
# client) left in DIR says its end was clean: its kernel log, saved after
# the transports' teardown settled ($SIDE-teardown, teardown_settled), and
# its console (which every guest pair keeps: what reached it, a panic or
# an oops at the console's level) hold no report. Says which (LABEL)
# when not.
guest_side_clean() {
	local d=$1 side=$2 ok=0
	saved_log_clean "$d/$side-dmesg" "$3" || ok=1
	if ! grep -q '^settled ' "$d/$side-teardown" 2>/dev/null; then
		ktap_print_msg "$3: the transports' teardown: $(cat "$d/$side-teardown" 2>/dev/null || echo "not waited for")"
		ok=1
	fi
	no_kernel_report "$d/$side.console" "$3 console" || ok=1
	return $ok
}

# saved_log_clean FILE LABEL: a kernel log a guest saved (FILE) exists and
# holds no report; says which (LABEL) when not.
saved_log_clean() {
	if [ ! -s "$1" ]; then
		ktap_print_msg "$2: no kernel log saved"
		return 1
	fi
	no_kernel_report "$1" "$2"
}

# stat_counters_into ARRAY "ROLE..." "NAME...": every counter NAME of every
# ROLE now, into the associative array ARRAY, keyed ROLE-NAME.
stat_counters_into() {
	local -n into=$1
	local r c
	for r in $2; do
		for c in $3; do
			# shellcheck disable=SC2034 # a nameref: the caller's array
			into[$r-$c]=$(stat_counter "$r" "$c")
		done
	done
}

# kernel_has_kasan: the running kernel reports with KASAN (its report
# function is in kallsyms; a kernel without CONFIG_KASAN has none).
kernel_has_kasan() {
	grep -qw kasan_report /proc/kallsyms
}

# kmsg_mark NAME: put a marker for NAME into the kernel log, from which
# kernel_log_since NAME reads. Programs never clear the log: dmesg_clean.sh
# checks all of it at the end.
kmsg_mark() {
	echo "rpcrdma_cm selftests: mark $1" >/dev/kmsg
}

# kernel_log_since NAME: what the kernel logged after kmsg_mark NAME; fails,
# saying so, when the marker is gone (the log wrapped).
kernel_log_since() {
	dmesg | awk -v mark="rpcrdma_cm selftests: mark $1" '
		found { print; next }
		index($0, mark) { found = 1 }
		END { if (!found) { print "# kernel log lost the marker: " mark; exit 1 } }'
}

# no_report_since NAME: the kernel log since kmsg_mark NAME (kept in
# /tmp/NAME.log) holds no report.
no_report_since() {
	kernel_log_since "$1" >"/tmp/$1.log" || return 1
	no_kernel_report "/tmp/$1.log"
}

# capture_start NIC LOG TCPDUMP_ARGS...: tcpdump on NIC into
# /tmp/server.pcap, writing each packet as it comes (-U), its messages to
# LOG; returns once it listens (under TCG that can take seconds), fails
# after 60 s or when tcpdump ends. The pid is left in CAPTURE_PID.
capture_start() {
	local nic=$1 log=$2
	shift 2
	tcpdump -Z root -i "$nic" -U -w /tmp/server.pcap "$@" 2>"$log" &
	CAPTURE_PID=$!
	for _ in $(seq 1 240); do
		grep -qs "listening on $nic" "$log" && return 0
		kill -0 "$CAPTURE_PID" 2>/dev/null || break
		sleep 0.25
	done
	grep -qs "listening on $nic" "$log"
}

# capture_stop LOG DEST: once /tmp/server.pcap has not grown for 2 s (the
# last packets are in it), stop capture_start's tcpdump, add its exit status
# to LOG and copy the capture to DEST.
capture_stop() {
	local last=-1 same=0 size
	for _ in $(seq 1 120); do
		size=$(stat -c %s /tmp/server.pcap 2>/dev/null || echo 0)
		if [ "$size" = "$last" ]; then
			same=$((same + 1))
			[ $same -ge 4 ] && break
		else
			same=0 last=$size
		fi
		sleep 0.5
	done
	kill -INT "$CAPTURE_PID"
	wait "$CAPTURE_PID"
	echo "tcpdump exit $?" >>"$1"
	cp /tmp/server.pcap "$2"
}

NFS_EXPORT=/srv/rpcrdma_cm
NFS_PORT=20049
MNT=/tmp/rpcrdma_cm.mnt

# first_ipv4_nic: print the first NIC with a global IPv4 address; false
# when there is none yet.
first_ipv4_nic() {
	local nic
	nic=$(ip -o -4 addr show scope global 2>/dev/null | awk '{print $2; exit}')
	[ -n "$nic" ] && echo "$nic"
}

# dhcp_again: take an address by DHCP for each NIC (not lo) that has no
# IPv4 address, with more patience than virtme-ng's init had. Its one
# "udhcpc -n" gives up after three tries three seconds apart, which a
# guest under TCG on a loaded host can miss (seen: make bisect-series
# beside kernel builds, 4 of 15 boots with no address after 60 s).
dhcp_again() {
	local d nic
	for d in /sys/class/net/*; do
		nic=${d##*/}
		[ "$nic" != lo ] && [ -e "$d/device" ] || continue
		ip -o -4 addr show dev "$nic" | grep -q . && continue
		echo "# $nic: no DHCP lease yet, asking again" >&2
		ip link set "$nic" up
		busybox udhcpc -i "$nic" -n -q -f -t 8 -T 4 -s "$(dirname "${BASH_SOURCE[0]}")/udhcpc_bound.sh" >/dev/null 2>&1
	done
}

# The guest's first NIC with an IPv4 address (DHCP may still be running;
# after 20 s without one, dhcp_again asks once more).
guest_nic() {
	slowwait 20 first_ipv4_nic && return 0
	dhcp_again
	slowwait 40 first_ipv4_nic && return 0
	echo "# no NIC with a global IPv4 address after 60 s and a second DHCP:" >&2
	ip -o addr show 2>&1 | sed 's/^/# /' >&2
	return 1
}

# The first NIC backed by a device (not lo, not dummy0 and friends), for the
# two-guest link where addresses are set by hand.
link_nic() {
	local n
	for n in /sys/class/net/*; do
		if [ -e "$n/device" ]; then
			basename "$n"
			return 0
		fi
	done
	return 1
}

# link_up ADDR/PREFIX: put the address on the link NIC (two-guest tests)
# and bring up rxe on it; prints the NIC's name.
link_up() {
	local nic
	nic=$(link_nic) || return 1
	ip link set "$nic" up && ip addr add "$1" dev "$nic" || return 1
	setup_rxe "$nic" >&2 || return 1
	echo "$nic"
}

# load_rpcrdma_cm PARAMS: "" loads nothing (stock), "-" loads rpcrdma_cm
# with its defaults, anything else is passed to insmod as parameters.
# rpcrdma_cm_params_dir: where the loaded module's parameters are changed
# at run time. Built with the C shim (kernels whose Rust kernel crate has no
# module parameters, such as 6.12) they are module parameters in
# /sys/module/rpcrdma_cm/parameters. Built from the kernel crate (7.3), whose
# module! parameters are set at load only and have no sysfs file, the module
# offers the same names as attributes in configfs rpcrdma_cm (mounted here
# if it is not): configfs, not debugfs, which lockdown closes to writes.
rpcrdma_cm_params_dir() {
	if [ -d /sys/module/rpcrdma_cm/parameters ]; then
		echo /sys/module/rpcrdma_cm/parameters
		return 0
	fi
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
	[ -d /sys/kernel/config/rpcrdma_cm ] || return 1
	echo /sys/kernel/config/rpcrdma_cm
}

load_rpcrdma_cm() {
	modprobe rpcrdma || return 1
	[ -n "$1" ] || return 0
	local params=$1
	[ "$params" = - ] && params=
	# shellcheck disable=SC2086
	insmod "$RPCRDMA_CM_KO" $params
}

# trace_cm_private EVENT: enable rpcrdma:EVENT (xprtrdma_cm_private or
# svcrdma_cm_private) with an empty trace buffer.
trace_cm_private() {
	local t=/sys/kernel/tracing
	mountpoint -q $t || mount -t tracefs nodev $t || return 1
	echo >$t/trace
	echo 1 >"$t/events/rpcrdma/$1/enable"
}

# traced_round_trip NAME BYTES [WHILE_MOUNTED]: with both ends'
# rpcrdma:*_cm_private tracepoints on (an empty trace buffer), an NFSv4.2
# mount over RDMA of this guest's own export, a file NAME of BYTES random
# octets written and read back byte-exact past the page cache, the command
# WHILE_MOUNTED run before the umount; fails, saying why.
traced_round_trip() {
	local f=/tmp/$1.data rc
	trace_cm_private xprtrdma_cm_private || return 1
	echo 1 >/sys/kernel/tracing/events/rpcrdma/svcrdma_cm_private/enable || return 1
	head -c "$2" /dev/urandom >"$f"
	mount_rdma "$ip" 4.2 soft,timeo=50,retrans=2 || { ktap_print_msg "mount failed"; return 1; }
	cp "$f" "$MNT/$1" && echo 3 >/proc/sys/vm/drop_caches && cmp "$f" "$MNT/$1"
	rc=$?
	[ -z "${3:-}" ] || "$3"
	umount_rdma
	[ $rc = 0 ] || { ktap_print_msg "the $2-octet file did not round-trip"; return 1; }
}

# line_value LINE KEY: the value of KEY in LINE, a line of key=value pairs
# separated by spaces (debugfs, tracepoints, the interop rows); empty when
# it has none. The one key=value reader of the scripts and programs.
line_value() {
	tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"
}

# line_values LINE KEY...: the values of the KEYs in LINE, space-separated.
line_values() {
	local line=$1 k
	shift
	for k in "$@"; do
		line_value "$line" "$k"
	done | paste -sd ' '
}

# traced_cm_private EVENT [TRACE]: EVENT's lines so far, in the global
# trace buffer or in TRACE (an instance's trace file).
traced_cm_private() {
	grep " $1: " "${2:-/sys/kernel/tracing/trace}"
}

# traced_value EVENT KEY: KEY's value in EVENT's newest line so far.
traced_value() {
	line_value "$(traced_cm_private "$1" | tail -1)" "$2"
}

# traced_expect EVENT "KEY..." WANT: the newest EVENT line's values of
# the KEYs are WANT (space-separated); otherwise says what was traced.
traced_expect() {
	local got
	# shellcheck disable=SC2086 # the keys, one word each
	got=$(line_values "$(traced_cm_private "$1" | tail -1)" $2)
	[ "$got" = "$3" ] && return 0
	traced_cm_private "$1" | sed 's/^/# /'
	ktap_print_msg "$1: $2 traced '$got', want '$3'"
	return 1
}

# traced_is EVENT KEY=VALUE...: the newest EVENT line has these values.
traced_is() {
	local ev=$1 kv ok=0
	shift
	for kv in "$@"; do
		if [ "$(traced_value "$ev" "${kv%%=*}")" != "${kv#*=}" ]; then
			ktap_print_msg "$ev: ${kv%%=*}=$(traced_value "$ev" "${kv%%=*}"), want ${kv#*=}"
			ok=1
		fi
	done
	return $ok
}

# stat_counter ROLE NAME: rpcrdma_cm's debugfs counter NAME of ROLE now.
stat_counter() {
	line_value "$(grep "^$1 " /sys/kernel/debug/rpcrdma_cm/stats)" "$2"
}

# traced_addrs EVENT: "SRC DST" (address:port) of EVENT's newest line.
traced_addrs() {
	traced_cm_private "$1" | tail -1 | sed -n "s/.* $1: \([^ ]*\) -> \([^ ]*\) .*/\1 \2/p"
}

guest_ip() {
	ip -o -4 addr show dev "$1" scope global | awk '{split($4, a, "/"); print a[1]; exit}'
}

# rdma_link_active LINK: the RDMA link (device/port) is ACTIVE.
rdma_link_active() {
	rdma link show "$1" 2>/dev/null | grep -q "state ACTIVE"
}

# Bring up a soft-RoCE device on the NIC and wait until it is ACTIVE.
setup_rxe() {
	local nic=$1
	modprobe rdma_rxe 2>/dev/null || true
	if ! rdma link show rxe0/1 >/dev/null 2>&1; then
		rdma_link_add rxe0 rxe "$nic" || return 1
	fi
	slowwait 30 rdma_link_active rxe0/1 && return 0
	echo "# rxe0 not ACTIVE after 30 s: $(rdma link show 2>&1)"
	ip -o link show "$nic" | sed 's/^/# /'
	return 1
}

# kernel_crate_has_debugfs: the kernel under test (its tree is
# $KSFT_DIR/../../..) has kernel::debugfs and module! parameters, from which
# Kbuild builds rpcrdma_cm without the C shim (7.3); not so on 6.12, nor on
# a distribution's kernel (RPCRDMA_CM_DISTRO_RELEASE set: 'make distro'),
# whose kernel::debugfs lacks the series' fix: there rust/Kbuild takes the
# C shim.
kernel_crate_has_debugfs() {
	local tree=${KSFT_DIR:?KSFT_DIR names the kernel tree}/../../..
	[ -z "${RPCRDMA_CM_DISTRO_RELEASE:-}" ] &&
		[ -f "$tree/rust/kernel/debugfs.rs" ] && [ -f "$tree/rust/kernel/module_param.rs" ]
}

# guest_setup [rxe] [nfsd]: the set-up the single-guest programs share, in
# this order: debugfs and tracefs mounted, failslab disarmed; with rxe, soft-RoCE ACTIVE on the
# guest's NIC, whose name and address it leaves in nic and ip; the rpcrdma
# module loaded and rpcrdma_cm not; with nfsd, nfsd's RDMA listener up.
# Bails out of the program (KTAP) naming the part that failed.
guest_setup() {
	local part
	for part in "$@"; do
		case $part in
		rxe | nfsd) ;;
		*) ktap_exit_fail_msg "guest_setup: unknown part '$part'" ;;
		esac
	done
	mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug ||
		ktap_exit_fail_msg "cannot mount debugfs"
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing ||
		ktap_exit_fail_msg "cannot mount tracefs"
	# No failslab left armed by a program the runner killed
	# (cm_fault_injection.sh disarms on its own exit).
	[ -w /sys/kernel/debug/failslab/probability ] && echo 0 >/sys/kernel/debug/failslab/probability
	if [[ " $* " == *" rxe "* ]]; then
		nic=$(guest_nic) && setup_rxe "$nic" || ktap_exit_fail_msg "no ACTIVE rxe device"
		ip=$(guest_ip "$nic")
	fi
	modprobe rpcrdma || ktap_exit_fail_msg "modprobe rpcrdma failed"
	rmmod rpcrdma_cm 2>/dev/null
	if [[ " $* " == *" nfsd "* ]]; then
		start_nfsd || ktap_exit_fail_msg "nfsd did not start"
	fi
	return 0
}

# selftest_begin NAME [tool] [module] [guest | rxe] [nfsd]: the start
# every program shares, in this order: root or skip, the KTAP header, the
# rpcrdma-cm tool (TOOL) and the module (RPCRDMA_CM_KO) or skip,
# guest_setup (with rxe and nfsd when named; "guest" for neither), a
# kernel log mark NAME (no_report_since NAME), and an EXIT trap,
# selftest_end. The plan follows (ktap_plan_counted).
selftest_begin() {
	local name=$1 need setup=() guest=0
	SELFTEST_NAME=$name
	shift
	skip_unless_root
	ktap_print_header
	for need in "$@"; do
		case $need in
		tool) require_tool ;;
		module) require_module_ko ;;
		guest) guest=1 ;;
		rxe | nfsd) setup+=("$need") guest=1 ;;
		*) ktap_exit_fail_msg "selftest_begin: unknown need '$need'" ;;
		esac
	done
	trap selftest_end EXIT
	[ $guest = 1 ] && guest_setup "${setup[@]}"
	kmsg_mark "$name"
}

# ktap_plan_counted [N...]: set the plan of the calling program from its
# own text: one result for each line that begins with ktap_test_result
# (a result at the top level, run once), plus each N (what a loop's
# indented results add: its cases times the results in its body).
# Everything else is in an N: an indented ktap_test_result, any
# ktap_test_pass/fail/skip (an if's branches count once), and a helper's
# results (reply_checks: 8, check_set: 6).
ktap_plan_counted() {
	local n extra
	n=$(grep -c '^ktap_test_result ' "$0")
	for extra in "$@"; do
		n=$((n + extra))
	done
	ktap_set_plan "$n"
}

# selftest_end: on every exit, the program's own cleanup (a function named
# cleanup, if it has one), then the guest as the next program expects it:
# nothing mounted on $MNT, rpcrdma_cm not loaded. The program's exit status
# stands.
selftest_end() {
	if declare -F cleanup >/dev/null; then
		cleanup
	fi
	if mountpoint -q "$MNT" 2>/dev/null; then
		umount_rdma
	fi
	rmmod rpcrdma_cm 2>/dev/null
	# How long the program took (bash counts from its start): a KTAP
	# diagnostic, so that the host's logs show where a run's minutes go.
	echo "# $SELFTEST_NAME: $SECONDS s"
	return 0
}

# siw_setup NIC ADDR LINK: soft-iWARP device LINK on a dummy NIC of its own
# with ADDR/24 (an address of its own picks the RDMA device; rxe may sit on
# the guest's NIC already). Bails out of the program when it fails.
siw_setup() {
	ip link add "$1" type dummy && ip addr add "$2/24" dev "$1" && ip link set "$1" up ||
		ktap_exit_fail_msg "cannot set up $1"
	rdma_link_add "$3" siw "$1" || ktap_exit_fail_msg "cannot add $3"
}

# start_daemon CMD...: start a daemon with no descriptor of ours. The
# kselftest runner writes each program's output through fd 4, a reopened
# /dev/stdout, which in a virtme-ng guest is a virtio-serial port only one
# process may hold open: a daemon that inherited it and outlived its
# program (one killed by the runner's timeout never reaches stop_nfsd)
# would make every later program's output fail with EBUSY.
start_daemon() {
	"$@" </dev/null >/dev/null 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
}

# Start nfsd with an RDMA listener and a tmpfs export (NFSv3 and NFSv4).
# Grace and lease are short so that tests do not wait 90 s.
start_nfsd() {
	modprobe rpcrdma 2>/dev/null || true
	mountpoint -q /var/lib/nfs || mount -t tmpfs tmpfs /var/lib/nfs
	mkdir -p /var/lib/nfs/v4recovery /var/lib/nfs/rpc_pipefs
	touch /var/lib/nfs/etab /var/lib/nfs/rmtab
	mkdir -p "$NFS_EXPORT"
	mountpoint -q "$NFS_EXPORT" || mount -t tmpfs -o size=256m tmpfs "$NFS_EXPORT"
	echo "$NFS_EXPORT *(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" >/etc/exports
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	if ! grep -q rdma /proc/fs/nfsd/portlist 2>/dev/null; then
		echo 10 >/proc/fs/nfsd/nfsv4leasetime
		echo 10 >/proc/fs/nfsd/nfsv4gracetime
		pgrep -x rpcbind >/dev/null || start_daemon rpcbind -w
		exportfs -ra || return 1
		pgrep -x rpc.mountd >/dev/null || start_daemon rpc.mountd
		rpc.nfsd 4 || return 1
		echo "rdma $NFS_PORT" >/proc/fs/nfsd/portlist || return 1
	fi
	grep -q "rdma $NFS_PORT" /proc/fs/nfsd/portlist
}

# Stop what start_nfsd started (the guest is torn down anyway; this keeps
# daemons from holding the console).
stop_nfsd() {
	rpc.nfsd 0 2>/dev/null || true
	pkill -x rpc.mountd 2>/dev/null || true
	pkill -x rpcbind 2>/dev/null || true
}

# mount_rdma SERVER_IP VERS [EXTRA_OPTIONS]: mount the export over RDMA on $MNT.
mount_rdma() {
	local ip=$1 vers=$2 extra=${3:-} src
	mkdir -p "$MNT"
	if [ "$vers" = 3 ]; then
		src="$ip:$NFS_EXPORT"
		extra="nolock${extra:+,$extra}"
	else
		src="$ip:/"
	fi
	# MOUNT_TIMEOUT (seconds): give up on a mount that hangs.
	timeout "${MOUNT_TIMEOUT:-0}" mount -t nfs -o "vers=$vers,proto=rdma,port=$NFS_PORT${extra:+,$extra}" "$src" "$MNT"
}

umount_rdma() {
	umount "$MNT" 2>/dev/null || umount -f -l "$MNT" 2>/dev/null || true
}

# The mount options of $MNT as /proc/mounts shows them.
mount_options() {
	awk -v m="$MNT" '$2 == m { print $4 }' /proc/mounts
}

# slowwait SECS CMD...: run CMD every 0.25 s until it succeeds, for SECS
# seconds of the clock at most (as tools/testing/selftests/net/lib.sh's
# slowwait: under TCG a round of CMD and sleep takes longer than 0.25 s);
# false when it never did. CMD may be a function of the caller. Every
# bounded wait of these programs goes through it.
slowwait() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.25
	done
}

# wait_for_file SECS FILE: FILE exists, within SECS.
wait_for_file() {
	slowwait "$1" test -e "$2"
}

# wait_for_line SECONDS FILE REGEX: until a line of FILE matches REGEX
# (grep -E), at most SECONDS; false if none did.
wait_for_line() {
	slowwait "$1" grep -sqE "$3" "$2"
}

# has_lines N FILE: FILE has at least N lines.
has_lines() {
	[ "$(wc -l <"$2" 2>/dev/null || echo 0)" -ge "$1" ]
}

# no_line_in FILE [ROLE]: debugfs's connections FILE lists no connection
# (of ROLE, if given).
no_line_in() {
	! grep -q "^role=${2:+$2 }" "$1"
}

# traced_at_least EVENT N: the trace holds at least N lines of EVENT.
traced_at_least() {
	[ "$(traced_cm_private "$1" | grep -c .)" -ge "$2" ]
}

# wait_for_either SECS FILE OTHER: FILE exists within SECS; false at once
# when OTHER appears without it (the other guest ended without FILE).
wait_for_either() {
	slowwait "$1" test -e "$2" -o -e "$3"
	[ -e "$2" ]
}

# Skip the whole test (after its KTAP header) without the module...
require_module_ko() {
	if [ ! -r "${RPCRDMA_CM_KO:-}" ]; then
		ktap_skip_all "RPCRDMA_CM_KO not set"
		exit "$KSFT_SKIP"
	fi
}

# ... or without the rpcrdma-cm tool (make tools), whose path it leaves
# in TOOL ...
require_tool() {
	TOOL=${RPCRDMA_CM_TOOL:-$(dirname "${BASH_SOURCE[0]}")/../../tools/target/release/rpcrdma-cm}
	if [ ! -x "$TOOL" ] || ! command -v jq >/dev/null; then
		ktap_skip_all "$TOOL or jq missing (make tools)"
		exit "$KSFT_SKIP"
	fi
}

# ... or where a test hook (test_modules/lying_hook, long_answer: modules
# named rpcrdma_cm, as the hooks' exports require) cannot load: a kernel
# with rpcrdma_cm built in (no refcnt: not a loadable module).
require_loadable_test_hook() {
	if [ -d /sys/module/rpcrdma_cm ] && [ ! -e /sys/module/rpcrdma_cm/refcnt ]; then
		ktap_skip_all "rpcrdma_cm is built into this kernel: the test hook, a module of that name, cannot load"
		exit "$KSFT_SKIP"
	fi
}

# probe_pdata HEX ARG...: rpcrdma-cm probe (require_tool first) sending HEX
# as private data ("" for none), with ARGs (the target last).
probe_pdata() {
	local hex=$1
	shift
	if [ -n "$hex" ]; then
		"$TOOL" probe --pdata "$hex" "$@"
	else
		"$TOOL" probe --no-pdata "$@"
	fi
}


skip_unless_root() {
	if [ "$(id -u)" -ne 0 ]; then
		ktap_skip_all "must run as root"
		exit "$KSFT_SKIP"
	fi
}

# settle_callback_times: wait (10 s at most) until rpcrdma_cm's responder
# has closed as many connections as it prepared: svcrdma frees a
# transport, and the module's closed callback runs, a little after the
# requester has gone. Fails if they still differ.
settle_callback_times() {
	local times=/sys/kernel/debug/rpcrdma_cm/callback_times
	[ -r $times ] || return 1
	slowwait 10 callbacks_settled $times
}

# callbacks_settled FILE: the responder's prepare_accept and closed
# callbacks in FILE (callback_times) ran as often.
callbacks_settled() {
	[ "$(awk '$1 == "responder" && ($2 == "prepare_accept" || $2 == "closed") { print $3 }' "$1" |
		sort -u | wc -l)" = 1 ]
}
