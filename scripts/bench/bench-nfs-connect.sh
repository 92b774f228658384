#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The connect-cost part of 'make bench-nfs', in one guest. Usage:
#   bench-nfs-connect.sh SHARED_DIR CONNECTS
#
# nfsd listens over soft-RoCE; a userspace requester ('rpcrdma-cm probe
# --count', $RPCRDMA_CM_TOOL) connects to it and disconnects CONNECTS times
# with rpcrdma_cm not loaded and CONNECTS times with it loaded (defaults
# but callback_times=1, so the loaded side includes the timing's clock reads),
# in four alternating rounds each so that a drift of the machine's speed
# falls on both sides alike. Each round's JSON goes to
# SHARED_DIR/{unloaded,loaded}-ROUND.json, and the module's callback_times
# of each loaded round (the time its callbacks took, from debugfs) to
# SHARED_DIR/callbacks-ROUND.txt.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=../../selftests/rpcrdma_cm/lib.sh
. "$DIR/../../selftests/rpcrdma_cm/lib.sh"
W=${1:?shared directory}
CONNECTS=${2:?connects per side}
ROUNDS=4
error() { echo "$*" >"$W/error"; exit 1; }

nic=$(guest_nic) || error "no NIC"
setup_rxe "$nic" >&2 || error "rxe did not come up"
ip=$(guest_ip "$nic")
modprobe rpcrdma || error "modprobe rpcrdma failed"
mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug || error "no debugfs"
start_nfsd || error "nfsd failed"
# save_callback_times FILE: the module's callback_times once every
# connection of the round has been closed (settle_callback_times; a note
# on stderr when they did not catch up, which the report then names).
save_callback_times() {
	settle_callback_times || echo "round $r: responder closed did not catch up with prepare_accept in 10 s" >&2
	cp /sys/kernel/debug/rpcrdma_cm/callback_times "$1" || error "cannot read callback_times"
}
per_round=$((CONNECTS / ROUNDS))
[ "$per_round" -ge 2 ] || per_round=2
# Warm up (caches, first-connect address resolution); not measured.
"$RPCRDMA_CM_TOOL" probe --count 20 "$ip" >/dev/null || error "warm-up probe against $ip failed"
for r in $(seq 1 $ROUNDS); do
	for side in unloaded loaded; do
		echo "round $r/$ROUNDS, module $side" >"$W/progress"
		# Loaded with its callbacks timed (the callback_times setting, a
		# debugging aid off by default: two clock reads per callback).
		[ $side = loaded ] && { insmod "$RPCRDMA_CM_KO" callback_times=1 || error "insmod failed"; }
		"$RPCRDMA_CM_TOOL" probe --json --count "$per_round" "$ip" >"$W/$side-$r.json" 2>"$W/$side-$r.err" ||
			error "probe --count $per_round ($side, round $r): $(cat "$W/$side-$r.err")"
		if [ $side = loaded ]; then
			save_callback_times "$W/callbacks-$r.txt"
			rmmod rpcrdma_cm || error "rmmod failed"
		fi
	done
done
stop_nfsd
dmesg >"$W/dmesg"
touch "$W/done"
