#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Client half of 'make bench-nfs' (scripts/bench-nfs.sh runs it in the
# client guest). Usage: bench-nfs-client.sh SHARED_DIR N WORKLOADS [MODULE_PARAMS]
#
# Puts 192.0.2.2/24 on the link NIC, brings up rxe, waits for the server,
# loads rpcrdma_cm with MODULE_PARAMS ("" none, "-" defaults), mounts the
# server over RDMA (NFSv4.2) and runs bench_nfs_workload.py: per workload
# one JSON line in SHARED_DIR/client-results.jsonl.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=../selftests/rpcrdma_cm/lib.sh
. "$DIR/../selftests/rpcrdma_cm/lib.sh"
W=${1:?shared directory}
N=${2:?operations per workload}
WORKLOADS=${3:?workloads}
MODULE_PARAMS=${4:-}
finish() {
	dmesg >"$W/client-dmesg"
	touch "$W/client-done"
}
trap finish EXIT
error() { echo "$*" >"$W/client-error"; exit 1; }

link_up 192.0.2.2/24 >/dev/null || error "link or rxe failed"
wait_for_file "${BENCH_WAIT:-3000}" "$W/server-ready" || error "server not ready"
load_rpcrdma_cm "$MODULE_PARAMS" || error "module load failed"
trace_cm_private xprtrdma_cm_private || error "tracefs failed"
T=/sys/kernel/tracing
echo 8192 >$T/buffer_size_kb
mount_rdma 192.0.2.1 4.2 || error "mount failed"
mount_options >"$W/client-mount-options"
traced_cm_private xprtrdma_cm_private >"$W/client-trace"
echo 0 >$T/events/rpcrdma/xprtrdma_cm_private/enable
echo 1 >$T/events/rpcrdma/xprtrdma_marshal/enable
/usr/bin/python3 "$DIR/bench_nfs_workload.py" --mnt "$MNT" --n "$N" --workloads "$WORKLOADS" \
	--out "$W/client-results.jsonl" --progress "$W/client-progress" --marker 192.0.2.1:47900 \
	2>"$W/client-workload.err" || error "workload failed: $(tail -c 300 "$W/client-workload.err")"
rm -rf "$MNT/bench" "$MNT"/io*k
umount_rdma
