#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A soft-RoCE (rdma_rxe) device on the guest NIC comes up ACTIVE.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin rxe_active

if ! command -v rdma >/dev/null; then
	ktap_skip_all "iproute2 'rdma' tool missing"
	exit "$KSFT_SKIP"
fi
ktap_plan_counted

nic=$(guest_nic)
has_nic() {
	[ -n "$nic" ]
}
ktap_test_result "guest NIC has an IPv4 address (${nic:-none})" has_nic
ktap_test_result "rxe0 on $nic is ACTIVE" setup_rxe "$nic"
lists_rxe0() {
	ibv_devices 2>/dev/null | grep -qw rxe0
}
ktap_test_result "ibv_devices lists rxe0" lists_rxe0

ktap_finished
