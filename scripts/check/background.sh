#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's background chain: the kernels and modules nothing of the
# full base's guest suite needs, built while its kernel builds and its
# guests run (scripts/check/check.sh starts it; wait_background there
# reads the results).
#
#   scripts/check/background.sh LOGS FULL_BASE CUT_BASE [DISTRO_LTS]
#
# In order, each after the one before: the cut base's test kernel; then,
# once the full base's kernel is built (LOGS/fg-kernel.rc says 0; the
# stock kernels build incrementally from the test kernels' trees), the
# stock kernels of both bases; then the distribution's modules (Debian's
# 7.3 kernel, and DISTRO_LTS, Debian 12's 6.12 release, when given). Each
# step's output goes to its log in LOGS and its exit status to
# LOGS/bg-NAME.rc.
#
# Priority: check.sh starts this with setsid, so that the chain is a
# session, and so a scheduler autogroup, of its own, and this script
# gives that autogroup nice 19 (/proc/self/autogroup; Debian's kernels
# have CONFIG_SCHED_AUTOGROUP and enable it). A nice value is weighed
# only against tasks of the same autogroup, and every guest runs in a
# session of its own (guest.sh's setsid): a build merely reniced in make
# check's session took half of the two cores from a guest. Measured:
# two guest programs in one two-vCPU guest, 63 s on idle cores, 126 s
# beside three nice-19 busy loops of another session, 55 s beside the
# same loops in an autogroup at nice 19 (Documentation/measurements.rst).
# Autogroups apply to tasks of the root CPU cgroup only: where the chain
# runs in a CPU cgroup of its own (systemd with the cpu controller on, a
# container), the write does nothing and the renice below orders the
# chain against everything in that cgroup, the guests included when they
# share it. background.log says which autogroup the chain got.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$RPCRDMA_CM_TOP" || exit 1

[ $# -ge 3 ] || rpcrdma_cm_die "usage: $0 LOGS FULL_BASE CUT_BASE [DISTRO_LTS]"
logs=$1 full_base=$2 cut_base=$3 distro_lts=${4:-}

echo 19 >/proc/self/autogroup 2>/dev/null || true
echo "background: autogroup $(cat /proc/self/autogroup 2>/dev/null || echo "none (no CONFIG_SCHED_AUTOGROUP)"), cgroup $(grep -m1 -E ':cpu[,:]|^0::' /proc/self/cgroup 2>/dev/null)"
renice -n 19 -p $$ >/dev/null

# bg_step NAME LOG BASE CMD...: one step of the chain.
bg_step() {
	local name=$1 log=$2 base=$3 rc
	shift 3
	kbase_set "$base"
	"$@" >"$log" 2>&1
	rc=$?
	echo "$rc" >"$logs/bg-$name.rc"
	return "$rc"
}

bg_step "kernel-$cut_base" "$logs/kernel-$cut_base.log" "$cut_base" \
	scripts/kernel/build-kernel.sh default
while [ ! -f "$logs/fg-kernel.rc" ]; do
	sleep 5
done
[ "$(cat "$logs/fg-kernel.rc")" = 0 ] &&
	bg_step "stock-$full_base" "$logs/stock-kernel-$full_base.log" "$full_base" \
		scripts/kernel/build-kernel.sh stock
[ "$(cat "$logs/bg-kernel-$cut_base.rc")" = 0 ] &&
	bg_step "stock-$cut_base" "$logs/stock-kernel-$cut_base.log" "$cut_base" \
		scripts/kernel/build-kernel.sh stock
# rpcrdma.ko and rpcrdma_cm.ko for Debian's own 7.3 kernel (its build root
# and the kernel crate's metadata are cached like the kernels).
bg_step distro "$logs/distro-build.log" 7.3 scripts/distro/distro.sh build
# rpcrdma.ko alone for Debian 12's 6.12 kernel (no Rust there): its build
# is the smoke cut in make check (against Debian's headers and their
# Module.symvers: an import the kernel does not export stops modpost);
# booting it is make distro-check's.
if [ -n "$distro_lts" ]; then
	bg_step distro-lts "$logs/distro-lts-build.log" 6.12 scripts/distro/distro.sh build "$distro_lts"
else
	echo "no 6.12 release pinned in scripts/distro/debian.pins" >"$logs/distro-lts-build.log"
	echo 1 >"$logs/bg-distro-lts.rc"
fi
