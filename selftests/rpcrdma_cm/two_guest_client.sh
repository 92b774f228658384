#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Client half of the two-guest test (scripts/guest/two-guest.sh runs it in the
# client guest). Usage: two_guest_client.sh SHARED_DIR [MODULE_PARAMS]
#
# With MODULE_PARAMS ("-" for none), rpcrdma_cm is loaded with them first.
#
# Puts 192.0.2.2/24 on the link NIC, brings up rxe, waits for the server,
# mounts it over RDMA (NFSv4.2), copies a file both ways, writes and reads
# files whose RPCs land near the inline thresholds, and records the outcome
# in SHARED_DIR.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
W=${1:?shared directory}
MODULE_PARAMS=${2:-}

finish() {
	dmesg >"$W/client-dmesg"
	touch "$W/client-done"
}
trap finish EXIT

nic=$(link_up 192.0.2.2/24) || { echo "link or rxe failed" >"$W/client-error"; exit 1; }
wait_for_file "${TWO_GUEST_WAIT:-300}" "$W/server-ready" || { echo "server not ready" >"$W/client-error"; exit 1; }
load_rpcrdma_cm "$MODULE_PARAMS" || { echo "module load failed" >"$W/client-error"; exit 1; }
# The RDMA resources before the mount.
base=$(rdma_resources)
trace_cm_private xprtrdma_cm_private
mount_rdma 192.0.2.1 4.2 || { echo "mount failed" >"$W/client-error"; exit 1; }
mount_options >"$W/client-mount-options"
traced_cm_private xprtrdma_cm_private >"$W/client-trace"
if [ -d /sys/module/rpcrdma_cm ]; then
	mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
	cat /sys/kernel/debug/rpcrdma_cm/connections >"$W/client-connections"
fi
# Let the server save its debugfs while the connection is up.
touch "$W/client-mounted"
wait_for_file 60 "$W/server-connections-done"
echo "$nic" >"$W/client-nic"
head -c 262144 /dev/urandom >/tmp/payload
cp /tmp/payload "$MNT/payload" && sync && echo 3 >/proc/sys/vm/drop_caches
if cmp -s /tmp/payload "$MNT/payload"; then
	echo ok >"$W/client-data"
else
	echo mismatch >"$W/client-data"
fi
# Messages near the thresholds: one O_DIRECT WRITE and one READ of each
# size, so that the capture holds Calls and Replies just below 1 KB and
# 4 KB (and, above them, the chunked ones): the on-wire check of the limits
# then judges SENDs close to each receiver's limit, not only small ones.
near=ok
for size in 512 700 3072 3584 3700 3840; do
	head -c "$size" /dev/urandom >"/tmp/near-$size"
	/usr/bin/python3 "$DIR/direct_io.py" write "$MNT/near-$size" "/tmp/near-$size" >/dev/null &&
		/usr/bin/python3 "$DIR/direct_io.py" read "$MNT/near-$size" "/tmp/back-$size" >/dev/null &&
		cmp -s "/tmp/near-$size" "/tmp/back-$size" || near="mismatch at $size octets"
done
echo "$near" >"$W/client-near-data"
grep -A1 "xprt:.*rdma" /proc/self/mountstats >"$W/client-mountstats" 2>/dev/null
umount_rdma
# The kernel log (finish) once xprtrdma's teardown has freed what it made.
teardown_settled "$base" 60 >"$W/client-teardown"
