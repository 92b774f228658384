#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the guest (see scripts/demo/run-demo.sh): the same NFSv4.2-over-RDMA
# mount and workload twice, stock (rpcrdma_cm not loaded) and with
# rpcrdma_cm loaded (both ends 64 KB, Remote Invalidation on, unless
# RPCRDMA_CM_PARAMS says otherwise). Client and server are this guest, over
# soft-RoCE. For each: what each end advertised and negotiated (the
# rpcrdma:*_cm_private tracepoints, filled from the transport's own state),
# what the workload cost in RPCs and chunks (the client's mountstats), and
# at the end one summary table.
set -u
DIR=$(dirname "$(readlink -f "$0")")
KSFT_DIR=${KSFT_DIR:?}
# shellcheck source=../../selftests/rpcrdma_cm/lib.sh
. "$DIR/../../selftests/rpcrdma_cm/lib.sh"

MODULE_PARAMS=${RPCRDMA_CM_PARAMS:-"requester_send_size=65536 requester_recv_size=65536 responder_send_size=65536 responder_recv_size=65536 remote_invalidation=Y"}
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug

say() { printf '\n== %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

# rdma_counters: the demo mount's transport's RPCs sent and Read, Write and
# Reply chunks so far (fields of the "xprt: rdma" line in $MNT's block of
# /proc/self/mountstats; another mount's line may come first).
rdma_counters() {
	awk -v m="$MNT" '$1 == "device" { on = ($5 == m) }
		on && $1 == "xprt:" && $2 == "rdma" { print $8, $13, $14, $15; exit }' /proc/self/mountstats
}

# measure NAME CMD...: run CMD; print the RPCs and chunks it cost and record
# them in the summary for this phase.
measure() {
	local name=$1 before after rpcs r w p chunks
	shift
	before=$(rdma_counters)
	[ -n "$before" ] || die "no 'xprt: rdma' line in /proc/self/mountstats"
	"$@" || die "$name failed"
	after=$(rdma_counters)
	read -r rpcs r w p < <(echo "$before $after" |
		awk '{ print $5 - $1, $6 - $2, $7 - $3, $8 - $4 }')
	chunks=$((r + w + p))
	printf '  %-34s %4d RPCs, %3d chunks (read %d, write %d, reply %d)\n' \
		"$name" "$rpcs" "$chunks" "$r" "$w" "$p"
	summary_cells+=("$chunks/$rpcs")
	total_rpcs=$((total_rpcs + rpcs))
	total_chunks=$((total_chunks + chunks))
}

creates() {
	local i
	mkdir -p "$MNT/demo" || return 1
	for i in $(seq 1 50); do
		: >"$MNT/demo/f$i" || return 1
	done
}

# direct_rw KB: one O_DIRECT write and one O_DIRECT read of KB kilobytes,
# read back byte-exact.
direct_rw() {
	local kb=$1
	head -c $((kb * 1024)) /dev/urandom >"/tmp/demo.src$kb"
	dd if="/tmp/demo.src$kb" of="$MNT/demo/io$kb" bs="${kb}k" oflag=direct status=none &&
		dd if="$MNT/demo/io$kb" of="/tmp/demo.back$kb" bs="${kb}k" iflag=direct status=none &&
		cmp -s "/tmp/demo.src$kb" "/tmp/demo.back$kb"
}

# show_cm_private EVENT WHO PEER: what EVENT's newest line says this end sent
# and negotiated.
show_cm_private() {
	local ev=$1
	v() { traced_value "$ev" "$1"; }
	printf '  %-6s sent %-16s (%s: send %s, receive %s, flags %s)\n' "$2" "$(v sent)" \
		"$( [ "$(v sent_v1)" = yes ] && echo "RFC 8797 v1" || echo "none/not v1")" \
		"$(v sent_send)" "$(v sent_recv)" "$(v sent_flags)"
	printf '  %-6s got  %-16s from the %s; applies send %s, receive %s, Remote Invalidation %s\n' \
		"$2" "$(v peer)" "$3" "$(v send_threshold)" "$(v recv_threshold)" "$(v remote_inv)"
}

# wait_no_server_connection: the previous mount's server side is gone.
wait_no_server_connection() {
	local i
	for i in $(seq 1 120); do
		[ -z "$(ls /sys/kernel/debug/rpcrdma_cm 2>/dev/null)" ] && return 0
		grep -q '^role=responder' /sys/kernel/debug/rpcrdma_cm/connections 2>/dev/null || return 0
		sleep 0.5
	done
	return 1
}

# phase LABEL PARAMS: one mount, the workload, one summary row. PARAMS ""
# runs stock (module not loaded).
phase() {
	local label=$1 params=$2 start=$SECONDS cthr sthr ri
	summary_cells=()
	total_rpcs=0 total_chunks=0
	say "$label"
	rmmod rpcrdma_cm 2>/dev/null
	if [ -n "$params" ]; then
		# shellcheck disable=SC2086
		insmod "$RPCRDMA_CM_KO" $params || die "insmod $RPCRDMA_CM_KO $params failed"
		echo "  insmod rpcrdma_cm.ko $params"
	else
		echo "  rpcrdma_cm not loaded: the kernel's own negotiation"
	fi
	echo >$T/trace
	echo 1 >$T/events/rpcrdma/xprtrdma_cm_private/enable
	echo 1 >$T/events/rpcrdma/svcrdma_cm_private/enable
	mount_rdma "$ip" 4.2 || die "mount -o vers=4.2,proto=rdma $ip:/ failed"
	echo "  mounted $ip:/ on $MNT ($(mount_options | tr ',' '\n' | grep -E '^(vers|proto)=' | paste -sd,))"
	echo "  CM private data (rpcrdma:xprtrdma_cm_private / svcrdma_cm_private):"
	show_cm_private xprtrdma_cm_private client server
	show_cm_private svcrdma_cm_private server client
	cthr="$(traced_value xprtrdma_cm_private send_threshold)/$(traced_value xprtrdma_cm_private recv_threshold)"
	sthr=$(traced_value svcrdma_cm_private send_threshold)
	[ "$sthr" = 0 ] && sthr="unlimited"
	ri="$(traced_value xprtrdma_cm_private remote_inv)/$(traced_value svcrdma_cm_private remote_inv)"
	echo "  workload (client's mountstats, counted around each step):"
	measure "50 creates (OPEN+CLOSE each)" creates
	measure "8 KB O_DIRECT write + read" direct_rw 8
	measure "32 KB O_DIRECT write + read" direct_rw 32
	rm -rf "$MNT/demo"
	umount_rdma
	wait_no_server_connection || echo "  (the server side of the connection lingers)"
	summary_rows+=("$(printf '%-19s %-13s %-10s %-7s %-9s %-9s %-9s %s' "$label" "$cthr" "$sthr" "$ri" \
		"${summary_cells[@]}" "$(awk -v c="$total_chunks" -v r="$total_rpcs" 'BEGIN { printf "%.2f", r ? c / r : 0 }')")")
	echo "  TCG time for this phase: $((SECONDS - start)) s (emulation; not a performance figure)"
}

nic=$(guest_nic) || die "no NIC"
ip=$(guest_ip "$nic")
say "soft-RoCE on $nic ($ip), nfsd with an RDMA listener on port $NFS_PORT"
setup_rxe "$nic" || die "rxe did not come up"
rdma link show rxe0/1 | sed 's/^/  /'
modprobe rpcrdma || die "modprobe rpcrdma failed"
start_nfsd || die "nfsd did not start"

summary_rows=()
phase "stock (no module)" ""
phase "rpcrdma_cm loaded" "$MODULE_PARAMS"

say "rpcrdma_cm counters (debugfs) after both mounts"
sed 's/^/  /' /sys/kernel/debug/rpcrdma_cm/stats
rmmod rpcrdma_cm
stop_nfsd

say "summary: chunks/RPCs per step (fewer chunks: more RPCs travel inline, no RDMA Read/Write)"
printf '%-19s %-13s %-10s %-7s %-9s %-9s %-9s %s\n' configuration "client s/r" "server s" "RI c/s" \
	creates "8 KB" "32 KB" "chunks/RPC"
printf '%s\n' "${summary_rows[@]}"
