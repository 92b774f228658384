#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Server half of one interop matrix row (scripts/guest/interop.sh runs it in the
# server guest). Usage: interop_server.sh SHARED_DIR [MODULE_PARAMS]
#
# MODULE_PARAMS: empty for no rpcrdma_cm (a stock kernel has no hook), "-"
# for its defaults, else insmod parameters. INTEROP_TRANSPORT and
# INTEROP_FAMILY (interop_lib.sh) pick soft-RoCE or soft-iWARP and IPv4 or
# IPv6. Brings up the link, nfsd with an RDMA listener, captures the
# connection setup (RoCEv2 or MPA over TCP) while the client works, and
# leaves the capture, the tracepoint lines, debugfs and the kernel log in
# SHARED_DIR.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# shellcheck source=interop_lib.sh
. "$DIR/interop_lib.sh"
W=${1:?shared directory}
MODULE_PARAMS=${2:-}

# The kernel log, whatever happens (after the transports' teardown at the
# end); server-done only at the end.
trap 'dmesg >"$W/server-dmesg"' EXIT

nic=$(interop_link_up server) || { echo "link or $INTEROP_TRANSPORT failed" >"$W/server-error"; exit 1; }
echo "$nic" >"$W/server-nic"
load_rpcrdma_cm "$MODULE_PARAMS" || { echo "module load failed" >"$W/server-error"; exit 1; }
interop_kernel >"$W/server-kernel"
uname -r >"$W/server-release"
# The RDMA resources before nfsd's listener and the row's connections.
base=$(rdma_resources)
start_nfsd || { echo "nfsd failed" >"$W/server-error"; exit 1; }
cat /proc/fs/nfsd/portlist >"$W/server-portlist"
why=$(interop_trace_on svcrdma_cm_private) ||
	{ echo "cannot enable tracing: $why" >"$W/server-error"; exit 1; }

if ! capture_start "$nic" "$W/tcpdump.log" "$(interop_capture_filter)"; then
	echo "tcpdump not listening after 60 s: $(cat "$W/tcpdump.log")" >"$W/server-error"
	exit 1
fi
touch "$W/server-ready"

# debugfs while the client is mounted (client-mounted; client-done if it
# never mounts).
wait_for_either "${TWO_GUEST_WAIT:-400}" "$W/client-mounted" "$W/client-done"
if [ -d /sys/module/rpcrdma_cm ]; then
	mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
	cat /sys/kernel/debug/rpcrdma_cm/connections >"$W/server-connections"
	cat /sys/kernel/debug/rpcrdma_cm/stats >"$W/server-stats"
fi
touch "$W/server-connections-done"

# The row's connection ends with the client's unmount (client-unmounted;
# client-done if the client ended before it): the client's conform
# connections, if any, come after server-captured and are neither in the
# capture nor in the trace.
wait_for_either "${TWO_GUEST_WAIT:-400}" "$W/client-unmounted" "$W/client-done"
# The client's files, read back on the server from the export itself.
(cd "$NFS_EXPORT" && sha256sum -- data-* 2>/dev/null) >"$W/server-sums"
# Stop the capture once the last packet is in it (the unmount tears the
# connection down just before client-unmounted).
capture_stop "$W/tcpdump.log" "$W/server.pcap"
interop_traced svcrdma_cm_private >"$W/server-trace"
touch "$W/server-captured"
wait_for_file "${TWO_GUEST_WAIT:-400}" "$W/client-done" || echo "client did not finish" >"$W/server-error"
stop_nfsd
# The kernel log (the EXIT trap) once svcrdma's teardown has freed what it
# made.
teardown_settled "$base" 60 >"$W/server-teardown"
touch "$W/server-done"
