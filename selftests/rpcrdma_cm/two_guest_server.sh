#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Server half of the two-guest test (scripts/guest/two-guest.sh runs it in the
# server guest). Usage: two_guest_server.sh SHARED_DIR [MODULE_PARAMS]
#
# With MODULE_PARAMS ("-" for none), rpcrdma_cm ($RPCRDMA_CM_KO) is loaded
# with them before nfsd starts; without, the server is stock.
#
# Puts 192.0.2.1/24 on the link NIC, brings up rxe and nfsd, captures RoCEv2
# (UDP 4791) on the NIC while the client works, and leaves the capture and
# status files in SHARED_DIR.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
W=${1:?shared directory}
MODULE_PARAMS=${2:-}

nic=$(link_up 192.0.2.1/24) || { echo "link or rxe failed" >"$W/server-error"; exit 1; }
echo "$nic" >"$W/server-nic"
load_rpcrdma_cm "$MODULE_PARAMS" || { echo "module load failed" >"$W/server-error"; exit 1; }
# The RDMA resources before nfsd's listener and the pair's connections.
base=$(rdma_resources)
start_nfsd || { echo "nfsd failed" >"$W/server-error"; exit 1; }
trace_cm_private svcrdma_cm_private

# The client may connect only once the capture is open.
if ! capture_start "$nic" "$W/tcpdump.log" udp port 4791; then
	echo "tcpdump not listening after 60 s: $(cat "$W/tcpdump.log")" >"$W/server-error"
	exit 1
fi
touch "$W/server-ready"

# For the host's dissector check: the module's debugfs while the client is
# mounted (it says so with client-mounted; client-done if it never mounts).
if [ -d /sys/module/rpcrdma_cm ]; then
	wait_for_either "${TWO_GUEST_WAIT:-400}" "$W/client-mounted" "$W/client-done"
	mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
	cat /sys/kernel/debug/rpcrdma_cm/connections >"$W/server-connections"
fi
touch "$W/server-connections-done"

wait_for_file "${TWO_GUEST_WAIT:-400}" "$W/client-done" || echo "client did not finish" >"$W/server-error"
# Stop the capture once the last packet is in it (the client's unmount
# tears the connection down just before client-done).
capture_stop "$W/tcpdump.log" "$W/server.pcap"
traced_cm_private svcrdma_cm_private >"$W/server-trace"
stop_nfsd
# The kernel log once svcrdma's teardown has freed what it made.
teardown_settled "$base" 60 >"$W/server-teardown"
dmesg >"$W/server-dmesg"
touch "$W/server-done"
