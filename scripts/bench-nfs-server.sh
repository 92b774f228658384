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

tcpdump -Z root -i "$nic" -s 128 -B 16384 -U -w /tmp/server.pcap \
	'udp port 4791 or udp port 47900' 2>"$W/tcpdump.log" &
tcpdump_pid=$!
listening() { grep -qs "listening on $nic" "$W/tcpdump.log"; }
for _ in $(seq 1 240); do
	listening && break
	kill -0 "$tcpdump_pid" 2>/dev/null || break
	sleep 0.25
done
listening || error "tcpdump not listening after 60 s: $(cat "$W/tcpdump.log")"
touch "$W/server-ready"

wait_for_file "${BENCH_WAIT:-3000}" "$W/client-done" || echo "client did not finish" >"$W/server-error"
# The capture is complete once the file stops growing (2 s).
last=-1 same=0
for _ in $(seq 1 120); do
	size=$(stat -c %s /tmp/server.pcap 2>/dev/null || echo 0)
	if [ "$size" = "$last" ]; then
		same=$((same + 1))
		[ $same -ge 4 ] && break
	else
		same=0 last=$size
	fi
	sleep 0.5
done
kill -INT "$tcpdump_pid"
wait "$tcpdump_pid"
echo "tcpdump exit $?" >>"$W/tcpdump.log"
cp /tmp/server.pcap "$W/server.pcap"
traced_cm_private svcrdma_cm_private >"$W/server-trace"
stop_nfsd
dmesg >"$W/server-dmesg"
touch "$W/server-done"
