#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The hooks' in-tree user: on a kernel with the series' last 7.3 patch and
# CONFIG_SUNRPC_XPRT_RDMA_CM=m, rpcrdma_cm.ko comes with the kernel
# (net/sunrpc/xprtrdma/rpcrdma_cm/, generated from this repository's
# source by scripts/kernel/in-tree-user.sh). modprobe loads that copy, not the
# out-of-tree one; with it an NFSv4.2 mount over RDMA is the module's on
# both ends (the tracepoints say by=module) and a 32 KB file
# round-trips; rmmod unloads it.
# Skipped on a kernel without it (6.12, or CONFIG_SUNRPC_XPRT_RDMA_CM off).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_in_tree

rmmod rpcrdma_cm 2>/dev/null
modprobe rpcrdma || ktap_exit_fail_msg "modprobe rpcrdma failed"
path=$(modinfo -F filename rpcrdma_cm 2>/dev/null)
case "$path" in
*/kernel/net/sunrpc/xprtrdma/rpcrdma_cm/rpcrdma_cm.ko*) ;;
*)
	ktap_skip_all "this kernel has no in-tree rpcrdma_cm (modinfo: ${path:-none})"
	exit "$KSFT_SKIP"
	;;
esac
guest_setup rxe nfsd
ktap_plan_counted

ktap_print_msg "in-tree module: $path"
loaded_in_tree() {
	# modprobe loads only from the kernel's module tree: the file above.
	modprobe rpcrdma_cm && [ -d /sys/module/rpcrdma_cm ] && rpcrdma_cm_params_dir >/dev/null
}
ktap_test_result "modprobe loads the in-tree rpcrdma_cm (its parameters in configfs)" loaded_in_tree

# connections_tracked: how many connections the module's debugfs shows.
connections_tracked() {
	grep -c "^role=" /sys/kernel/debug/rpcrdma_cm/connections | sed 's/^/# connections tracked: /'
}
mount_by_module() {
	local ev
	traced_round_trip in_tree 32768 connections_tracked || return 1
	for ev in xprtrdma_cm_private svcrdma_cm_private; do
		traced_is "$ev" by=module || return 1
	done
}
ktap_test_result "an NFSv4.2 mount over RDMA is the in-tree module's on both ends; 32 KB round-trip" mount_by_module

ktap_test_result "rmmod unloads it" rmmod rpcrdma_cm
not_loaded() { [ ! -d /sys/module/rpcrdma_cm ]; }
ktap_test_result "it is gone" not_loaded

ktap_finished
