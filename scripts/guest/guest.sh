#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the test kernel in a virtme-ng guest (the host's userspace, read-only
# root with writable overlays) and run one command in it.
#
#   scripts/guest/guest.sh [options] -- COMMAND...
#     --kdir DIR        kernel tree (default: the cached test kernel)
#     --kimg FILE       a kernel image instead, with its modules in the
#                       lib/modules/<release>/ above it (a distribution's:
#                       scripts/distro/distro-test.sh)
#     --name NAME       guest hostname (default rpcrdma-cm)
#     --timeout SEC     hard limit for the whole guest (default 900)
#     --net user        QEMU user networking with DHCP (default)
#     --net listen:PORT | --net connect:PORT
#                       a virtio NIC on a QEMU socket link over the host's
#                       loopback, for two-guest tests (no DHCP)
#     --mac MAC         MAC address of the socket-link NIC
#     --rwdir DIR       a host directory the guest may write
#     --cpus N --memory M
#
# The guest always goes away: on timeout, error, Ctrl-C or when the command
# ends, every process of its process group (vng and QEMU) is killed.
# KVM: RPCRDMA_CM_KVM=1 forces it, 0 forbids it, auto (default) uses it
# only after a probe boot with KVM succeeded once on this machine.
# RPCRDMA_CM_GUEST_CONSOLE=1 shows the guest's kernel console on stderr.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# RPCRDMA_CM_GUEST_CPUS: the vCPUs of a guest that is not given --cpus
# (make check runs two one-vCPU guests side by side).
kdir='' kimg='' name=rpcrdma-cm timeout=900 net=user mac=52:54:00:12:34:56
cpus=${RPCRDMA_CM_GUEST_CPUS:-2} memory=2G
rwdirs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kdir) kdir=$2; shift 2 ;;
	--kimg) kimg=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--net) net=$2; shift 2 ;;
	--mac) mac=$2; shift 2 ;;
	--rwdir) rwdirs+=("--rwdir=$2"); shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--) shift; break ;;
	*) rpcrdma_cm_die "unknown option $1" ;;
	esac
done
[ $# -gt 0 ] || rpcrdma_cm_die "no command given"
# A tag in the guest name lets a caller find its own QEMU processes.
[ -z "${RPCRDMA_CM_GUEST_TAG:-}" ] || name=$name-$RPCRDMA_CM_GUEST_TAG
if [ -n "$kimg" ]; then
	[ -f "$kimg" ] || rpcrdma_cm_die "no kernel image $kimg"
	run=$kimg kdir=$(dirname "$kimg")
else
	[ -n "$kdir" ] || kdir=$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)
	[ -f "$kdir/arch/x86/boot/bzImage" ] || rpcrdma_cm_die "no kernel in $kdir: run 'make kernel'"
	run=.
fi
[ -x "$VNG" ] || rpcrdma_cm_die "virtme-ng missing: run 'make deps'"

net_args=()
case "$net" in
user) net_args=(--network user) ;;
listen:*|connect:*)
	net_args=(--qemu-opts="-netdev socket,id=link0,${net%%:*}=127.0.0.1:${net#*:} -device virtio-net-pci,netdev=link0,mac=$mac") ;;
*) rpcrdma_cm_die "unknown --net $net" ;;
esac

# run_group SECONDS CMD...: run CMD in a process group of its own and kill
# the whole group (vng and its QEMU) when it ends, times out or we are
# interrupted. Returns CMD's status (137 when killed by the timeout).
run_group() {
	local limit=$1 pgid watchdog rc=0
	shift
	setsid "$@" &
	pgid=$!
	# Interrupted or killed: the guest and its watchdog go too.
	# shellcheck disable=SC2064
	trap "kill -KILL -- -$pgid 2>/dev/null; rm -f -- ${cmdfile:-}" EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	setsid bash -c "sleep $limit; echo 'guest: timed out after ${limit}s' >&2; kill -KILL -- -$pgid" &
	watchdog=$!
	# shellcheck disable=SC2064
	trap "kill -KILL -- -$pgid -$watchdog 2>/dev/null; rm -f -- ${cmdfile:-}" EXIT
	wait "$pgid" || rc=$?
	kill -- "-$watchdog" 2>/dev/null || true
	kill -TERM -- "-$pgid" 2>/dev/null || true
	sleep 0.5
	kill -KILL -- "-$pgid" 2>/dev/null || true
	trap - EXIT
	return "$rc"
}

# Whether KVM works here. The answer is cached per machine (host name and
# CPU model): a probe guest that hangs costs its full timeout once.
kvm_usable() {
	case "${RPCRDMA_CM_KVM:-auto}" in
	1|on|yes) return 0 ;;
	0|off|no) return 1 ;;
	esac
	[ -w /dev/kvm ] || return 1
	local stamp
	stamp="$RPCRDMA_CM_CACHE/kvm-probe-$( (hostname; grep -m1 'model name' /proc/cpuinfo) | sha256sum | cut -c1-12)"
	if [ ! -f "$stamp" ]; then
		mkdir -p "$RPCRDMA_CM_CACHE"
		# One probe at a time (make check's lanes start two guests at
		# once): a guest starting beside a probe waits for its answer.
		(
			flock -w 120 9 || echo "guest: no KVM probe lock after 120 s ($stamp.lock); probing anyway" >&2
			[ ! -f "$stamp" ] || exit 0
			if (cd "$kdir" && run_group 45 "$VNG" --run "$run" --name "kvm-probe${RPCRDMA_CM_GUEST_TAG:+-$RPCRDMA_CM_GUEST_TAG}" --exec true </dev/null >/dev/null 2>&1 9>&-); then
				echo yes >"$stamp.$$" && mv "$stamp.$$" "$stamp"
			else
				echo no >"$stamp.$$" && mv "$stamp.$$" "$stamp"
				echo "guest: KVM probe failed here; using TCG (RPCRDMA_CM_KVM=1 forces KVM)" >&2
			fi
		) 9>"$stamp.lock"
	fi
	[ -f "$stamp" ] || echo "guest: no KVM probe answer in $stamp; using TCG" >&2
	[ "$(cat "$stamp" 2>/dev/null)" = yes ]
}
accel_args=()
kvm_usable || accel_args=(--disable-kvm)
[ "${RPCRDMA_CM_GUEST_CONSOLE:-0}" = 1 ] && accel_args+=(--verbose)

# no5lvl: 4-level paging in every guest. QEMU's "max" CPU (TCG) and recent
# hosts (KVM) offer LA57, and with 5-level paging a KASAN kernel can report a
# false "wild-memory-access" at boot: identify_cpu() zeroes boot_cpu_data's
# capabilities, so pgtable_l5_enabled() reads false for a moment, and an
# interrupt in that window sees its direct-map address (0xff11...) below the
# 4-level KASAN_SHADOW_START. Stock x86 behaviour, reported upstream in
# "kasan: Fix false-positive wild-memory-access on x86 under 5-level paging"
# (LKML, June 2026). See Documentation/testing.rst.
# log_buf_len: room for the kernel log of a whole test session (the default
# 128 KiB could wrap), which dmesg_clean.sh checks from boot on.
kernel_args=(--append no5lvl --append log_buf_len=1M)
# The root file system: the host's own, read-only, over 9p. virtme-ng
# mounts it without a cache, so every exec and every read crosses to the
# host's QEMU main loop (under TCG a guest running shell tests kept that
# thread at 100% of a core, and spent about half of an exec-heavy loop
# there). The host tree does not change under a running guest's feet in
# these tests (the writable directories are separate mounts), so the
# guest may cache it: the kernel takes the last rootflags= given.
# RPCRDMA_CM_GUEST_9P_CACHE=none keeps virtme-ng's uncached mount.
vng_args=()
# virtme-ng gives each of its six script ports a virtio-serial device of
# its own, each with QEMU's default of 31 ports: 64 virtqueues a device,
# each an eventfd that QEMU's main loop polls on every wake-up (about 400
# descriptors; under TCG the guest's timer ticks wake it thousands of
# times a second, and polling them kept that thread busy). Two ports a
# device (port 0 is the console's, unused) are all virtme-ng uses.
vng_args+=("--qemu-opts=-global virtio-serial-pci.max_ports=2")
if [ "${RPCRDMA_CM_GUEST_9P_CACHE:-loose}" != none ]; then
	vng_args+=(--force-9p)
	kernel_args+=(--append "rootflags=version=9p2000.L,trans=virtio,access=any,msize=524288,cache=${RPCRDMA_CM_GUEST_9P_CACHE:-loose}")
fi
# kmemleak, on a kernel built with it, only where a scan is asked for
# (RPCRDMA_CM_GUEST_KMEMLEAK=on: selftests.sh, whose dmesg_clean.sh
# scans; off by default): it records every allocation with its stack,
# which under TCG made nfs_rdma_roundtrip's guest take 59 s against 40
# with kmemleak=off (scoped KASAN alone: 40, the plain kernel 38), and a
# guest that never scans has nothing to show for it.
# kmemleak on a kernel whose SLUB keeps per-CPU sheaves (7.3): a sheaf is
# a kmalloc'ed array of free objects' addresses, which kmemleak scans, and
# the slot an object was allocated from keeps its address until a free
# into that slot overwrites it: such an object stays "referenced" (on the
# 7.3 debug kernel, eight planted kmalloc-192 leaks were none of them
# reported; a 12 KB kmalloc, from the page allocator, was). A cache with a
# debug flag has no sheaves: F (SLUB's consistency checks, the cheapest
# flag measured: 56 s in the guest above, 59 without a flag, 77 with U,
# whose alloc and free stacks cost the rest) on every cache gives kmemleak
# its sight back (32 of 32 planted leaks reported).
case ${RPCRDMA_CM_GUEST_KMEMLEAK:-off} in
on | off) ;;
*) rpcrdma_cm_die "RPCRDMA_CM_GUEST_KMEMLEAK=$RPCRDMA_CM_GUEST_KMEMLEAK: on or off" ;;
esac
if [ -z "$kimg" ] && grep -q '^CONFIG_DEBUG_KMEMLEAK=y' "$kdir/.config" 2>/dev/null; then
	if [ "${RPCRDMA_CM_GUEST_KMEMLEAK:-off}" = off ]; then
		kernel_args+=(--append kmemleak=off)
	elif grep -q 'struct slab_sheaf' "$kdir/mm/slub.c" 2>/dev/null; then
		kernel_args+=(--append slab_debug=F)
	fi
fi
# RPCRDMA_CM_GUEST_APPEND: more kernel parameters (e.g. debugfs=off).
[ -z "${RPCRDMA_CM_GUEST_APPEND:-}" ] || kernel_args+=(--append "$RPCRDMA_CM_GUEST_APPEND")

cmd=$(printf '%q ' "$@")
# A kernel image with modular NIC drivers (a distribution's): the NIC is
# brought up in the guest before the command (net-up.sh says why).
if [ -n "$kimg" ] && [ "$net" = user ]; then
	scripts=("$RPCRDMA_CM_TOOLS"/virtme-ng/lib/python3*/site-packages/virtme/guest/virtme-udhcpc-script)
	udhcpc_script=${scripts[0]}
	[ -f "$udhcpc_script" ] || rpcrdma_cm_die "virtme-ng's udhcpc script missing: run 'make deps'"
	cmd="$(printf '%q ' "$RPCRDMA_CM_TOP/scripts/guest/net-up.sh" "$udhcpc_script")&& $cmd"
fi
cd "$kdir"
# virtme-ng links a tree's modules into its .virtme_mods (and runs depmod
# there) when modules.order is newer than that directory's modules.dep;
# two guests of one tree starting at once (make check's lanes, a guest
# pair) would both rewrite it. Done here first, one guest at a time.
if [ "$run" = . ] && [ -f modules.order ]; then
	flock . sh -c '[ -f .virtme_mods/lib/modules/0.0.0/modules.dep ] &&
		[ ! modules.order -nt .virtme_mods/lib/modules/0.0.0/modules.dep ] ||
		"$1" >/dev/null' prep "$(dirname "$VNG")/virtme-prep-kdir-mods" ||
		rpcrdma_cm_die "virtme-prep-kdir-mods failed in $kdir"
fi
# The command reaches the guest in a file, not on the kernel's command
# line: virtme-ng puts --exec there base64-encoded (4/3 of its length),
# and x86 keeps 2047 characters of it (COMMAND_LINE_SIZE), cutting the
# rest: root= and init= go, the guest panics before its command starts
# and virtme-ng exits 255 with nothing said (CI, stops 44 and 45: make
# check's first 7.3 lane, 17 programs and their paths under /check/work,
# came to more than 2047; measured 1971 here under /work). The host's /tmp
# is the guest's too (virtme-ng's default writable overlays include /tmp,
# with the host's as the lower layer), so the file is read where it was
# written.
cmdfile=$(mktemp /tmp/rpcrdma-cm-guest.XXXXXX)
# (run_group's traps remove it too, beside the guest's end.)
trap 'rm -f -- "$cmdfile"' EXIT
printf '%s\n' "$cmd" >"$cmdfile"
rc=0
run_group "$timeout" "$VNG" --run "$run" "${accel_args[@]}" "${vng_args[@]}" --name "$name" --cpus "$cpus" \
	--memory "$memory" "${kernel_args[@]}" "${net_args[@]}" "${rwdirs[@]}" --cwd "$RPCRDMA_CM_TOP" \
	--exec "exec bash $cmdfile" </dev/null || rc=$?
rm -f "$cmdfile"
# 255: virtme-ng's status when the guest's kernel panicked (no root file
# system, an oops with panic_on_oops) or QEMU could not start it; with
# virtme-ng's quiet console nothing else says so.
[ "$rc" -ne 255 ] ||
	echo "guest: exit 255, virtme-ng's status when the guest's kernel panicked or QEMU failed (or the command's own); RPCRDMA_CM_GUEST_CONSOLE=1 shows the console" >&2
exit "$rc"
