#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make run': boot a guest, load rpcrdma_cm, mount NFS over RDMA and print
# the mount line and the negotiated inline thresholds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kdir=${KDIR:-$("$RPCRDMA_CM_TOP/scripts/build-kernel.sh" --print-dir)}
exec "$RPCRDMA_CM_TOP/scripts/guest.sh" --kdir "$kdir" --timeout 600 -- \
	env "KSFT_DIR=$kdir/tools/testing/selftests" "RPCRDMA_CM_KO=$RPCRDMA_CM_TOP/rpcrdma_cm.ko" \
	"$RPCRDMA_CM_TOP/scripts/demo-in-guest.sh"
