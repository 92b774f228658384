#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest runs a distribution's own kernel with what 'make distro' built
# and installed for it (scripts/distro/distro-test.sh boots it): the image
# is the distribution's (its release and its package version in
# /proc/version), rpcrdma resolves to the rebuilt module in updates/ and
# the rest of the stack to the distribution's own modules, and
# rpcrdma_cm.ko, built against the rebuilt kernel crate metadata, loads
# and unloads with no taint but out-of-tree and unsigned (on a kernel with
# Rust; on one without, as Debian's 6.12, that test is skipped and says
# so).
#
# Environment: RPCRDMA_CM_DISTRO_RELEASE (the kernel release) and
# RPCRDMA_CM_DISTRO_VERSION (its Debian package version), both from
# scripts/distro/debian.pins; RPCRDMA_CM_DISTRO_PATCHES (the numbers of
# the series' patches the build took into rpcrdma.ko, from its report);
# RPCRDMA_CM_KO (empty on a kernel without Rust).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# The module only where there is one to load (a kernel with Rust).
selftest_begin distro_kernel ${RPCRDMA_CM_KO:+module}

if [ -z "${RPCRDMA_CM_DISTRO_RELEASE:-}" ] || [ -z "${RPCRDMA_CM_DISTRO_VERSION:-}" ]; then
	ktap_skip_all "not a distribution's kernel (scripts/distro/distro-test.sh sets RPCRDMA_CM_DISTRO_RELEASE)"
	exit "$KSFT_SKIP"
fi
# The last result comes from an if (one of its three branches).
ktap_plan_counted 1

distro_image() {
	ktap_print_msg "$(cat /proc/version)"
	[ "$(uname -r)" = "$RPCRDMA_CM_DISTRO_RELEASE" ] &&
		grep -qF " $RPCRDMA_CM_DISTRO_VERSION " /proc/version
}
ktap_test_result "the kernel is $RPCRDMA_CM_DISTRO_RELEASE, Debian $RPCRDMA_CM_DISTRO_VERSION" distro_image

# modinfo's answer for a module name is the file modprobe loads; the
# loaded one is the rebuilt one when its own taint is O and E (out-of-tree,
# unsigned): Debian's rpcrdma is in-tree and signed. Its information names
# the series of this kernel's base and exactly the patches the build
# reported taking (rpcrdma_cm_series, written by scripts/distro/distro.sh:
# "patches/BASE DESCRIBE: NNNN NNNN...").
rebuilt_rpcrdma() {
	local f series
	f=$(modinfo -n rpcrdma) || return 1
	series=$(modinfo -F rpcrdma_cm_series rpcrdma)
	ktap_print_msg "rpcrdma: $f ($series)"
	[ "$f" = "/lib/modules/$RPCRDMA_CM_DISTRO_RELEASE/updates/rpcrdma.ko" ] &&
		[ "$(modinfo -F vermagic rpcrdma | cut -d' ' -f1)" = "$RPCRDMA_CM_DISTRO_RELEASE" ] &&
		[[ "$series" == "patches/$(uname -r | cut -d. -f1,2) "* ]] &&
		[ -n "${RPCRDMA_CM_DISTRO_PATCHES:-}" ] && [ "${series#*: }" = "$RPCRDMA_CM_DISTRO_PATCHES" ] || return 1
	modprobe rpcrdma || return 1
	ktap_print_msg "loaded rpcrdma taint: '$(cat /sys/module/rpcrdma/taint)'"
	[ "$(cat /sys/module/rpcrdma/taint)" = OE ]
}
ktap_test_result "rpcrdma is the rebuilt module in updates/" rebuilt_rpcrdma

# The rest is the distribution's: signed by its key, from kernel/.
stock_stack() {
	local m f rc=0
	for m in sunrpc ib_core rdma_cm rdma_rxe; do
		f=$(modinfo -n "$m") || { rc=1; continue; }
		case $f in
		"/lib/modules/$RPCRDMA_CM_DISTRO_RELEASE/kernel/"*) ;;
		*) ktap_print_msg "$m: $f"; rc=1 ;;
		esac
		[ -n "$(modinfo -F signer "$m")" ] || { ktap_print_msg "$m is not signed"; rc=1; }
	done
	return $rc
}
ktap_test_result "sunrpc, ib_core, rdma_cm, rdma_rxe are the distribution's signed modules" stock_stack

# Taint: loading it adds only O (out-of-tree, 4096) and E (unsigned module,
# 8192) to the kernel's, and the module's own is OE.
load_unload() {
	local before after own
	[ "$(modinfo -F vermagic "$RPCRDMA_CM_KO" | cut -d' ' -f1)" = "$RPCRDMA_CM_DISTRO_RELEASE" ] || return 1
	before=$(cat /proc/sys/kernel/tainted)
	insmod "$RPCRDMA_CM_KO" || return 1
	own=$(cat /sys/module/rpcrdma_cm/taint)
	after=$(cat /proc/sys/kernel/tainted)
	rmmod rpcrdma_cm || return 1
	ktap_print_msg "tainted: $before before, $after loaded; rpcrdma_cm: '$own'"
	[ "$own" = OE ] && [ $((after & ~before & ~(4096 | 8192))) = 0 ]
}
if [ -n "${RPCRDMA_CM_KO:-}" ]; then
	ktap_test_result "insmod and rmmod rpcrdma_cm.ko; no taint but out-of-tree and unsigned" load_unload
# No Rust by the headers' .config (distro-test.sh): the running kernel
# must agree, with no symbol of the kernel crate (v0-mangled, "6kernel").
elif ! grep -qE ' _R[A-Za-z0-9_]*6kernel' /proc/kallsyms; then
	ktap_test_skip "insmod rpcrdma_cm.ko: $RPCRDMA_CM_DISTRO_RELEASE has no Rust (rpcrdma.ko alone)"
else
	ktap_test_fail "RPCRDMA_CM_KO is empty on $RPCRDMA_CM_DISTRO_RELEASE, which has Rust"
fi

ktap_finished
