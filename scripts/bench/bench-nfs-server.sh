#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Server half of 'make bench-nfs' (scripts/bench/bench-nfs.sh runs it in the
# server guest). Usage: bench-nfs-server.sh SHARED_DIR [MODULE_PARAMS]
#
# MODULE_PARAMS: "" stock (rpcrdma_cm not loaded), "-" rpcrdma_cm with its
# defaults, else insmod parameters; a word max_req_size=N among them is
# not one: it sets svcrdma's /proc/sys/sunrpc/svc_rdma/max_req_size to N
# first (and with no other word rpcrdma_cm is not loaded). Puts 192.0.2.1/24 on the link NIC,
# brings up rxe and nfsd, and captures RoCEv2 (UDP 4791) and the client's
# workload markers (UDP 47900) until the client's workloads are done. Only
# headers are kept (snap length 128: Ethernet, IP, UDP, BTH and RETH);
# frame lengths stay the wire's. The markers also go into the kernel's
# trace (bench_nfs_markers.py), between them the bytes svcrdma copied into
# its send buffers (svcrdma_send_pullup): SHARED_DIR/server-copies.
# Then the memory phase (bench-nfs-client.sh opens its connections):
# what the server's transport keeps allocated for them,
# SHARED_DIR/server-memory.json (bench_nfs_memory.py).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=../../selftests/rpcrdma_cm/lib.sh
. "$DIR/../../selftests/rpcrdma_cm/lib.sh"
# shellcheck source=bench-nfs-memory.sh
. "$DIR/bench-nfs-memory.sh"
W=${1:?shared directory}
MODULE_PARAMS=${2:-}
error() { echo "$*" >"$W/server-error"; exit 1; }
T=/sys/kernel/tracing
MARKERS_PID=
trap '[ -n "$MARKERS_PID" ] && kill "$MARKERS_PID" 2>/dev/null' EXIT

nic=$(link_up 192.0.2.1/24) || error "link or rxe failed"
params=()
for p in $MODULE_PARAMS; do
	case $p in
	max_req_size=*)
		modprobe svcrdma 2>/dev/null || modprobe rpcrdma || error "rpcrdma failed"
		echo "${p#*=}" >/proc/sys/sunrpc/svc_rdma/max_req_size ||
			error "max_req_size ${p#*=} refused"
		;;
	*) params+=("$p") ;;
	esac
done
load_rpcrdma_cm "${params[*]}" || error "module load failed"
# The RDMA resources before nfsd's listener and the client's connections.
base=$(rdma_resources)
# The marker port out of the ephemeral ports' reach before nfsd's helpers
# (lockd, rpc.statd, rpc.mountd, rpcbind) bind theirs at random: the
# listener once failed with EADDRINUSE on 47900 (fresh make check of
# 0c27589, the stock-4k run lost), and nothing else in the guest binds
# it.
echo 47900 >/proc/sys/net/ipv4/ip_local_reserved_ports ||
	error "cannot reserve the marker port"
start_nfsd || error "nfsd failed"
trace_cm_private svcrdma_cm_private || error "tracefs failed"
echo 8192 >$T/buffer_size_kb
echo 1 >$T/events/rpcrdma/svcrdma_send_pullup/enable
/usr/bin/python3 "$DIR/bench_nfs_markers.py" --listen 192.0.2.1:47900 --ready /tmp/markers-ready \
	2>"$W/server-markers.err" &
MARKERS_PID=$!
wait_for_file 60 /tmp/markers-ready || error "marker listener not up: $(cat "$W/server-markers.err")"

# The markers from the client, not the server's acknowledgements.
capture_start "$nic" "$W/tcpdump.log" -s 128 -B 16384 'udp port 4791 or udp dst port 47900' ||
	error "tcpdump not listening after 60 s: $(cat "$W/tcpdump.log")"
touch "$W/server-ready"

# finish: the server's logs, whatever the client did (the EXIT trap stops
# the marker listener).
finish() {
	stop_nfsd
	# The kernel log once svcrdma's teardown has freed what it made.
	teardown_settled "$base" 60 >"$W/server-teardown"
	dmesg >"$W/server-dmesg"
	touch "$W/server-done"
}

workloads_done=1
wait_for_either "${BENCH_WAIT:-3000}" "$W/client-workloads-done" "$W/client-done" || workloads_done=0
# Stop the capture once the last packet is in it (the client's unmount
# tears the connection down just before client-workloads-done); the
# capture and the traces are kept whatever the client did.
capture_stop "$W/tcpdump.log" "$W/server.pcap"
traced_cm_private svcrdma_cm_private >"$W/server-trace"
grep -E ' (tracing_mark_write: rpcrdma-bench |svcrdma_send_pullup: )' $T/trace >"$W/server-copies"
trace_lost >"$W/server-copies-lost"
if [ $workloads_done = 0 ]; then
	echo "client did not finish its workloads" >"$W/server-error"
	finish
	exit 1
fi
echo 0 >$T/events/rpcrdma/svcrdma_send_pullup/enable
kill "$MARKERS_PID" 2>/dev/null
MARKERS_PID=

memory_window_open
touch "$W/server-memory-ready"
# The memory phase's waits: a mount, some GETATTRs and a trace read by
# each side, minutes under TCG; bounded well within the guest's timeout.
if ! wait_for_either 300 "$W/client-memory-up" "$W/client-done"; then
	echo "memory phase: the client's connections did not come up" >"$W/server-error"
elif ! memory_window_close server "$W/server-memory.json"; then
	echo "memory phase: $(cat /tmp/memory.err)" >"$W/server-error"
fi
touch "$W/server-memory-measured"
wait_for_file 300 "$W/client-done" || echo "client did not finish" >>"$W/server-error"
finish
[ ! -s "$W/server-error" ]
