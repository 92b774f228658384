#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make run': everything a fresh machine needs, then the demo. Installs the
# pinned packages (scripts/kernel/deps.sh), builds the test kernel once (cached),
# builds rpcrdma_cm.ko, and boots one guest that mounts NFS over RDMA twice:
# stock (module not loaded) and with rpcrdma_cm advertising 64 KB on both
# ends, running the same small workload, and prints what each end
# advertised and negotiated, what the workload cost in chunks, and a
# summary table. RPCRDMA_CM_PARAMS replaces the module's parameters.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$RPCRDMA_CM_TOP"

require_root "make run"
logs=$RPCRDMA_CM_TOP/build/run
mkdir -p "$logs"

step_deps "$logs/deps.log"
# Only now are the toolchain versions that name the kernel's cache known.
step_kernel "$logs/kernel.log"
kdir=$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)
echo "module: building rpcrdma_cm.ko (under a minute); log: $logs/module.log"
make -s module KDIR="$kdir" >"$logs/module.log" 2>&1 || {
	tail -n 20 "$logs/module.log" >&2
	rpcrdma_cm_die "the module did not build (log: $logs/module.log)"
}

if [ ! -w /dev/kvm ]; then
	echo "guest: no usable /dev/kvm here: the guest runs under TCG (emulation), which is fine, only slower"
fi
echo "guest: booting the demo guest (about 2-3 minutes under TCG)"
exec "$RPCRDMA_CM_TOP/scripts/guest/guest.sh" --kdir "$kdir" --timeout 900 -- \
	env "KSFT_DIR=$kdir/tools/testing/selftests" "RPCRDMA_CM_KO=$(module_ko)" \
	"RPCRDMA_CM_PARAMS=${RPCRDMA_CM_PARAMS:-}" \
	"$RPCRDMA_CM_TOP/scripts/demo/demo-in-guest.sh"
