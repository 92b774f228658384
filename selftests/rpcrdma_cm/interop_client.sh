#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Client half of one interop matrix row (scripts/guest/interop.sh runs it in the
# client guest). Usage: interop_client.sh SHARED_DIR [MODULE_PARAMS]
#
# MODULE_PARAMS as in interop_server.sh; INTEROP_TRANSPORT and
# INTEROP_FAMILY as there, INTEROP_NFS_VERS the NFS version (3, 4.0, 4.1,
# 4.2). Mounts the server over RDMA, writes and reads back with O_DIRECT
# (one WRITE and one READ each) the files of INTEROP_SIZES
# (interop_lib.sh: around each inline threshold a row can negotiate, and
# one of 256 KiB), and leaves what it saw in SHARED_DIR: its checksums (the server
# checksums the files in its export), the mount options, the tracepoint
# lines, debugfs and the kernel log.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# shellcheck source=interop_lib.sh
. "$DIR/interop_lib.sh"
W=${1:?shared directory}
MODULE_PARAMS=${2:-}
VERS=${INTEROP_NFS_VERS:-4.2}

# client-done (the server stops waiting) whatever happens; client-finished
# only when the script got to its end.
finish() {
	dmesg >"$W/client-dmesg"
	touch "$W/client-done"
}
trap finish EXIT

nic=$(interop_link_up client) || { echo "link or $INTEROP_TRANSPORT failed" >"$W/client-error"; exit 1; }
echo "$nic" >"$W/client-nic"
wait_for_file "${TWO_GUEST_WAIT:-300}" "$W/server-ready" || { echo "server not ready" >"$W/client-error"; exit 1; }
load_rpcrdma_cm "$MODULE_PARAMS" || { echo "module load failed" >"$W/client-error"; exit 1; }
# The RDMA resources before the mount.
base=$(rdma_resources)
interop_kernel >"$W/client-kernel"
uname -r >"$W/client-release"
why=$(interop_trace_on xprtrdma_cm_private xprtrdma_inline_thresh) ||
	{ echo "cannot enable tracing: $why" >"$W/client-error"; exit 1; }
server=$(interop_host "$(interop_addr server)")
# The server's RDMA listener may come up a moment after server-ready on a
# slow guest: a few tries, each bounded.
# mount.nfs takes IPv6 over RDMA as proto=rdma6 (nfs(5)).
proto=rdma
[ "$INTEROP_FAMILY" = 6 ] && proto=rdma6
src="$server:/" opts="vers=$VERS,proto=$proto,port=$NFS_PORT"
[ "$VERS" = 3 ] && src="$server:$NFS_EXPORT" opts="$opts,nolock"
mkdir -p "$MNT"
mounted=0
for _ in 1 2 3; do
	if timeout 120 mount -t nfs -o "$opts" "$src" "$MNT" 2>>"$W/client-mount-errors"; then
		mounted=1
		break
	fi
	sleep 2
done
[ $mounted = 1 ] || { echo "mount failed: $(tail -c 300 "$W/client-mount-errors")" >"$W/client-error"; exit 1; }
mount_options >"$W/client-mount-options"
interop_traced xprtrdma_cm_private >"$W/client-trace"
interop_traced xprtrdma_inline_thresh >"$W/client-inline-thresh"
if [ -d /sys/module/rpcrdma_cm ]; then
	mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
	cat /sys/kernel/debug/rpcrdma_cm/connections >"$W/client-connections"
	cat /sys/kernel/debug/rpcrdma_cm/stats >"$W/client-stats"
fi
touch "$W/client-mounted"
wait_for_file 60 "$W/server-connections-done"

sizes=$INTEROP_SIZES
: >"$W/client-sums"
: >"$W/client-data"
mkdir -p /tmp/interop
for n in $sizes; do
	f=data-$n
	head -c "$n" /dev/urandom >"/tmp/interop/$f"
	(cd /tmp/interop && sha256sum -- "$f") >>"$W/client-sums"
	if ! dd if="/tmp/interop/$f" of="$MNT/$f" bs="$n" count=1 oflag=direct status=none 2>>"$W/client-dd-errors"; then
		echo "$n write-failed" >>"$W/client-data"
		continue
	fi
	rm -f "/tmp/interop/$f.back"
	if ! dd if="$MNT/$f" of="/tmp/interop/$f.back" bs="$n" count=1 iflag=direct status=none 2>>"$W/client-dd-errors"; then
		echo "$n read-failed" >>"$W/client-data"
		continue
	fi
	if cmp -s "/tmp/interop/$f" "/tmp/interop/$f.back"; then
		echo "$n ok" >>"$W/client-data"
	else
		echo "$n mismatch" >>"$W/client-data"
	fi
done
sync
grep -A1 "xprt:.*rdma" /proc/self/mountstats >"$W/client-mountstats" 2>/dev/null
umount_rdma
touch "$W/client-unmounted"
# INTEROP_CONFORM=1: rpcrdma-cm conform against the server, judged on the
# host (scripts/guest/interop.sh, selftests/rpcrdma_cm/conform_expect.sh), once
# the server has its capture and trace of the row's connection.
if [ "${INTEROP_CONFORM:-0}" = 1 ] && wait_for_file 120 "$W/server-captured"; then
	target=$(interop_addr server)
	[ "$INTEROP_FAMILY" = 6 ] && target="[$target]"
	timeout 600 "${RPCRDMA_CM_TOOL:-$DIR/../../tools/target/release/rpcrdma-cm}" conform --json --deadline 540 \
		"$target:$NFS_PORT" >"$W/client-conform.json" 2>"$W/client-conform.err"
	echo $? >"$W/client-conform.rc"
fi
# The kernel log (finish) once xprtrdma's teardown and conform's have freed
# what they made.
teardown_settled "$base" 60 >"$W/client-teardown"
touch "$W/client-finished"
