#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make distro-test': boot the distribution's own kernel image (its
# packages, pinned in scripts/distro/debian.pins, unpacked as they are)
# with its own modules and what 'make distro' built installed into
# updates/ as an admin installs it, and run the guest programs there.
#
#   scripts/distro/distro-test.sh [RELEASE]
#   scripts/distro/distro-test.sh --list [RELEASE]   the programs it runs
#                                            (make check tallies them)
#
# One guest (soft-RoCE, nfsd and the NFS client in it), programs in this
# order: stock_transports.sh first, with rpcrdma_cm not loaded (the
# series' stock fixes in the rebuilt rpcrdma.ko: Replies held to the
# client's receive size, the R bit as advertised); distro_kernel.sh (the
# image, the modules, insmod rpcrdma_cm.ko, taint); then module_load.sh,
# nfs_rdma_roundtrip.sh and cm_negotiation.sh with the module (NFSv3 and
# NFSv4.2 over rxe, byte-exact around the thresholds, both ends'
# negotiation in debugfs as configured, the private data in the trace) and
# dmesg_clean.sh; last, cm_lockdown.sh, which locks the kernel down for
# good (Debian's kernel has the lockdown LSM): the module's run-time
# settings written and negotiated there. On a kernel without Rust (Debian's 6.12) there is no
# rpcrdma_cm.ko: the same without module_load.sh and cm_negotiation.sh
# (nfs_rdma_roundtrip.sh then mounts through the rebuilt rpcrdma alone).
# Over the soft RDMA devices the distribution builds (Debian's 7.3: rxe;
# siw is not set). RPCRDMA_CM_NEGOTIATION_SIZES as for make selftests
# (make check: the corners). Prints the runner's KTAP; exit status
# non-zero when the guest failed or a program did not pass.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

distro=$RPCRDMA_CM_TOP/scripts/distro/distro.sh
list=0
if [ "${1:-}" = --list ]; then
	list=1
	shift
fi
read -r release version < <("$distro" version ${1:+"$1"}) || exit 1
rust=$("$distro" rust "$release") || exit 1
if [ "$rust" = y ]; then
	progs=(stock_transports.sh distro_kernel.sh module_load.sh rxe_active.sh nfs_rdma_roundtrip.sh
		cm_negotiation.sh dmesg_clean.sh cm_lockdown.sh)
else
	progs=(stock_transports.sh distro_kernel.sh rxe_active.sh nfs_rdma_roundtrip.sh dmesg_clean.sh)
fi
if [ $list = 1 ]; then
	echo "${progs[@]}"
	exit 0
fi
require_root "make distro-test"

# The build root's lock for the whole run: a 'make distro' of a release
# built in the same root (or DKMS) would replace the trees the guest reads.
suite=$("$distro" suite "$release") || exit 1
exec 9>"$RPCRDMA_CM_CACHE/distro/lock-$suite"
flock 9
export RPCRDMA_CM_DISTRO_LOCKED=1

built=$RPCRDMA_CM_TOP/build/distro/$release
[ -f "$built/rpcrdma.ko" ] || rpcrdma_cm_die "$built/rpcrdma.ko missing: run 'make distro' first"
[ "$rust" = n ] || [ -f "$built/rpcrdma_cm.ko" ] ||
	rpcrdma_cm_die "$built/rpcrdma_cm.ko missing: 'make distro' failed"
# The series' patches the rebuilt rpcrdma.ko took, as the build reported
# them (distro_kernel.sh finds exactly these in its modinfo).
patches=$(sed -n 's/^rpcrdma\.ko: \([0-9]\{4\}\)-.*/\1/p' "$built/report.txt" | paste -sd ' ')
[ -n "$patches" ] || rpcrdma_cm_die "$built/report.txt lists no patch taken into rpcrdma.ko"

# The image and modules as the packages hold them, and a copy of its tree
# (hard links: nothing of the pristine one changes) into which the modules
# are installed the way 'make distro-install' does.
pristine=$("$distro" boot-root "$release") || exit 1
root=$RPCRDMA_CM_CACHE/distro/test-$release
rm -rf "$root"
cp -al "$pristine" "$root"
DESTDIR=$root "$distro" install "$release" >/dev/null || rpcrdma_cm_die "installing into $root failed"
# The image where the packages put it: Debian 13's beside its modules,
# Debian 12's in /boot. The modules: lib/modules (on a merged-/usr root a
# link to usr/lib/modules).
mods=$root/lib/modules/$release
kimg=$mods/vmlinuz
[ -f "$kimg" ] || kimg=$root/boot/vmlinuz-$release
[ -f "$kimg" ] || rpcrdma_cm_die "no kernel image of $release in its packages (lib/modules/$release/vmlinuz, boot/)"
ko=''
[ "$rust" = n ] || ko=$mods/updates/rpcrdma_cm.ko

# The kselftest helpers of the same kernel version: the build root's tree.
ksft=$("$distro" tree "$release")/tools/testing/selftests
[ -f "$ksft/kselftest/runner.sh" ] || rpcrdma_cm_die "no kselftest runner of $release: run 'make distro' first"

# The soft RDMA devices the distribution builds: Debian's 7.3 has rxe and
# not siw (CONFIG_RDMA_SIW unset).
transports=rxe
[ -z "$(find "$mods/kernel/drivers/infiniband/sw/" -name 'siw.ko*' 2>/dev/null)" ] ||
	transports="rxe siw"

log=$(mktemp /tmp/rpcrdma-cm-distro-test.XXXXXX)
trap 'rm -f "$log"' EXIT
"$RPCRDMA_CM_TOP/scripts/guest/guest.sh" --kimg "$kimg" --name distro --timeout "${DISTRO_TEST_TIMEOUT:-1500}" -- \
	env "KSFT_DIR=$ksft" "RPCRDMA_CM_KO=$ko" \
	"RPCRDMA_CM_DISTRO_RELEASE=$release" "RPCRDMA_CM_DISTRO_VERSION=$version" \
	"RPCRDMA_CM_DISTRO_PATCHES=$patches" \
	"RPCRDMA_CM_TEST_TIMEOUT=${RPCRDMA_CM_TEST_TIMEOUT:-}" "RPCRDMA_CM_REPLY_TRANSPORTS=$transports" \
	"RPCRDMA_CM_NEGOTIATION_SIZES=${RPCRDMA_CM_NEGOTIATION_SIZES:-}" \
	"RPCRDMA_CM_LOCKDOWN_REQUIRED=1" \
	"$RPCRDMA_CM_TOP/selftests/rpcrdma_cm/run_guest_tests.sh" "${progs[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
total=$(grep -cE '^(not )?ok [0-9]+ selftests:' "$log")
# A program skipped as a whole tested nothing: here that is a failure.
bad=$(grep -cE '^not ok [0-9]+ selftests:|^ok [0-9]+ selftests:.*# SKIP' "$log")
if [ "$rc" -ne 0 ] || [ "$total" -ne ${#progs[@]} ] || [ "$bad" -ne 0 ]; then
	echo "distro-test: guest exit $rc, $total of ${#progs[@]} programs ran, $bad failed or skipped" >&2
	exit 1
fi
