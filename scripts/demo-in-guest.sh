#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the guest (see scripts/run-demo.sh): load rpcrdma_cm, mount NFS over
# RDMA and show what each side advertised and negotiated.
set -u
DIR=$(dirname "$(readlink -f "$0")")
KSFT_DIR=${KSFT_DIR:?}
# shellcheck source=../selftests/rpcrdma_cm/lib.sh
. "$DIR/../selftests/rpcrdma_cm/lib.sh"

T=/sys/kernel/tracing
D=/sys/kernel/debug
mountpoint -q $T || mount -t tracefs nodev $T
mountpoint -q $D || mount -t debugfs nodev $D

say() { printf '\n== %s\n' "$*"; }

nic=$(guest_nic) || { echo "no NIC"; exit 1; }
ip=$(guest_ip "$nic")
say "soft-RoCE on $nic ($ip)"
setup_rxe "$nic" && rdma link show rxe0/1

say "loading rpcrdma_cm"
modprobe rpcrdma
insmod "$RPCRDMA_CM_KO" ${RPCRDMA_CM_PARAMS:-} || exit 1
dmesg | grep rpcrdma_cm | tail -2
for p in /sys/module/rpcrdma_cm/parameters/*; do
	printf '  %-22s %s\n' "$(basename "$p")" "$(cat "$p")"
done

say "nfsd with an RDMA listener on $NFS_PORT"
start_nfsd && cat /proc/fs/nfsd/portlist

echo 1 >$T/events/rpcrdma/xprtrdma_inline_thresh/enable
echo >$T/trace
say "mount -o vers=4.2,proto=rdma $ip:/"
mount_rdma "$ip" 4.2 || exit 1
grep " $MNT " /proc/mounts
dd if=/dev/zero of="$MNT/demo" bs=64k count=16 status=none && sync

say "rpcrdma_cm connections (debugfs): both ends of the mount"
tr ' ' '\n' <$D/rpcrdma_cm/connections | sed 's/^role=/\n  role=/; s/^/    /' | sed '/^    $/d'
say "rpcrdma_cm stats (debugfs)"
sed 's/^/  /' $D/rpcrdma_cm/stats

say "negotiated (requester side, rpcrdma:xprtrdma_inline_thresh)"
grep -o 'xprtrdma_inline_thresh:.*' $T/trace | sed 's/^/  /'
say "RPC-over-RDMA counters (/proc/self/mountstats, xprt: rdma)"
grep "xprt:.*rdma" /proc/self/mountstats | sed 's/^[[:space:]]*/  /'

rm -f "$MNT/demo"
umount_rdma
stop_nfsd
rmmod rpcrdma_cm
say "rpcrdma_cm unloaded"
