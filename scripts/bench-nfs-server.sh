#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Server half of 'make bench-nfs' (scripts/bench-nfs.sh runs it in the
# server guest). Usage: bench-nfs-server.sh SHARED_DIR [MODULE_PARAMS]
#
# MODULE_PARAMS: "" stock (rpcrdma_cm not loaded), "-" rpcrdma_cm with its
# defaults, else insmod parameters. Puts 192.0.2.1/24 on the link NIC,
# brings up rxe and nfsd, and captures RoCEv2 (UDP 4791) and the client's
# workload markers (UDP 47900) until the client is done. Only headers are
# kept (snap length 128: Ethernet, IP, UDP, BTH and RETH); frame lengths
# stay the wire's.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=../selftests/rpcrdma_cm/lib.sh
. "$DIR/../selftests/rpcrdma_cm/lib.sh"
W=${1:?shared directory}
MODULE_PARAMS=${2:-}
error() { echo "$*" >"$W/server-error"; exit 1; }

nic=$(link_up 192.0.2.1/24) || error "link or rxe failed"
load_rpcrdma_cm "$MODULE_PARAMS" || error "module load failed"
start_nfsd || error "nfsd failed"
trace_cm_private svcrdma_cm_private || error "tracefs failed"

capture_start "$nic" "$W/tcpdump.log" -s 128 -B 16384 'udp port 4791 or udp port 47900' ||
	error "tcpdump not listening after 60 s: $(cat "$W/tcpdump.log")"
touch "$W/server-ready"

wait_for_file "${BENCH_WAIT:-3000}" "$W/client-done" || echo "client did not finish" >"$W/server-error"
# Stop the capture once the last packet is in it (the client's unmount
# tears the connection down just before client-done).
capture_stop "$W/tcpdump.log" "$W/server.pcap"
traced_cm_private svcrdma_cm_private >"$W/server-trace"
stop_nfsd
dmesg >"$W/server-dmesg"
touch "$W/server-done"
