#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Client half of 'make bench-nfs' (scripts/bench/bench-nfs.sh runs it in the
# client guest). Usage: bench-nfs-client.sh SHARED_DIR N WORKLOADS [MODULE_PARAMS]
#
# Puts 192.0.2.2/24 on the link NIC, brings up rxe, waits for the server,
# loads rpcrdma_cm with MODULE_PARAMS ("" none, "-" defaults), mounts the
# server over RDMA (NFSv4.2) and runs bench_nfs_workload.py: per workload
# one JSON line in SHARED_DIR/client-results.jsonl. Then the memory phase:
# a mount with nconnect=4 (bench-nfs-memory.sh), GETATTRs until each of
# its transports has carried RPCs, and what the client's transport keeps
# allocated for them, SHARED_DIR/client-memory.json.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=../../selftests/rpcrdma_cm/lib.sh
. "$DIR/../../selftests/rpcrdma_cm/lib.sh"
# shellcheck source=bench-nfs-memory.sh
. "$DIR/bench-nfs-memory.sh"
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

# rdma_transports_used: how many of the mount's RDMA transports have sent
# RPCs (mountstats: one 'xprt: rdma' line per transport, the sixth
# number its sends).
rdma_transports_used() {
	awk -v m="$MNT" '$1 == "device" { inside = index($0, " mounted on " m " ") > 0 }
		inside && $1 == "xprt:" && $2 == "rdma" && $8 > 0 { n++ }
		END { print n + 0 }' /proc/self/mountstats
}

link_up 192.0.2.2/24 >/dev/null || error "link or rxe failed"
wait_for_file "${BENCH_WAIT:-3000}" "$W/server-ready" || error "server not ready"
load_rpcrdma_cm "$MODULE_PARAMS" || error "module load failed"
# The RDMA resources before the mounts.
base=$(rdma_resources)
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
echo 0 >$T/events/rpcrdma/xprtrdma_marshal/enable
touch "$W/client-workloads-done"

echo "memory phase" >"$W/client-progress"
wait_for_either 120 "$W/server-memory-ready" "$W/server-done" || error "server's memory phase not ready"
memory_window_open
# A mount that hangs must not outlive the server's wait for it.
MOUNT_TIMEOUT=120 mount_rdma 192.0.2.1 4.2 "nconnect=$MEMORY_CONNECTIONS,actimeo=0" ||
	error "memory phase: mount failed"
# Round robin over the transports: a GETATTR each (no attribute cache).
for _ in $(seq 1 100); do
	[ "$(rdma_transports_used)" -ge "$MEMORY_CONNECTIONS" ] && break
	timeout 20 stat "$MNT" >/dev/null
done
used=$(rdma_transports_used)
[ "$used" -ge "$MEMORY_CONNECTIONS" ] ||
	error "memory phase: $used of $MEMORY_CONNECTIONS transports carried RPCs after 100 GETATTRs"
touch "$W/client-memory-up"
wait_for_either 300 "$W/server-memory-measured" "$W/server-done" || error "server's memory phase did not finish"
memory_window_close client "$W/client-memory.json" ||
	error "memory phase: $(cat /tmp/memory.err)"
umount_rdma
# The kernel log (finish) once xprtrdma's teardown has freed what it made.
teardown_settled "$base" 60 >"$W/client-teardown"
