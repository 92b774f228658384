#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make bench-nfs': what the negotiated inline thresholds and Remote
# Invalidation save per NFS RPC, on the wire, stock against rpcrdma_cm.
#
#   scripts/bench/bench-nfs.sh [--n N] [--configs C1,C2,...] [--workloads W1,...]
#                        [--connects N] [--out DIR]
#
# For each configuration a server guest and a client guest boot on one
# virtual link (as in the two-guest test); the client runs the workloads
# (scripts/bench/bench_nfs_workload.py) over NFSv4.2/RDMA, the server captures
# RoCEv2 with tcpdump, the host decodes the BTH opcodes with tshark. Then
# one guest measures connect+disconnect latency of a userspace requester
# against its own nfsd with rpcrdma_cm loaded and not ('rpcrdma-cm probe
# --count'). After its workloads each client opens 4 connections
# (nconnect) and both guests measure what their transport keeps allocated
# for them (bench-nfs-memory.sh); the server's trace holds the bytes
# svcrdma copied per workload. bench-nfs-report turns it all into
# DIR/table.md, results.csv, memory.csv, results.json, plot.svg and
# plot-costs.svg and prints the table.
#
# Options (environment in brackets):
#   --n N            operations per workload (BENCH_N, default 200)
#   --configs LIST   configurations (default: stock-4k, cm-1k, cm-4k, cm-16k,
#                    cm-64k, cm-64k-ri-off, cm-pdata-off, stock-64k-4k,
#                    cm-64k-4k; cm-4k-ri-off only
#                    when named; see CONFIGS below)
#   --workloads LIST workloads (default all: create, stat, readdir,
#                    rename, remove, write-1k..write-60k, read-1k..read-60k)
#   --connects N     connects per side of the connect-cost run (BENCH_CONNECTS,
#                    default 1000; 0 skips it)
#   --out DIR        output directory (default build/bench)
# Exits 1 when a configuration or the connect-cost run failed (the report
# is still written for what ran), 2 on a usage error, 3 when everything ran
# and a target of the report was missed.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

# usage [STATUS]: the comment above from the synopsis on; on stderr and
# exit 2 (a usage error), or on stdout and exit 0 for --help.
usage() {
	local text
	text=$(sed -n '/^#   scripts/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//')
	if [ "${1:-2}" = 0 ]; then
		echo "$text"
	else
		echo "$text" >&2
	fi
	exit "${1:-2}"
}

SIZES() {
	echo "requester_send_size=$1 requester_recv_size=$1 responder_send_size=$1 responder_recv_size=$1"
}
# name|server module parameters|client module parameters|what it is
# ("" = stock, rpcrdma_cm not loaded)
CONFIGS=(
	"stock-4k|||stock: no module on either end (4 KB inline, the kernel's default)"
	"cm-1k|$(SIZES 1024)|$(SIZES 1024)|rpcrdma_cm both ends, 1 KB"
	"cm-4k|$(SIZES 4096)|$(SIZES 4096)|rpcrdma_cm both ends, 4 KB"
	"cm-16k|$(SIZES 16384)|$(SIZES 16384)|rpcrdma_cm both ends, 16 KB"
	"cm-64k|$(SIZES 65536)|$(SIZES 65536)|rpcrdma_cm both ends, 64 KB"
	"cm-64k-ri-off|$(SIZES 65536) remote_invalidation=N|$(SIZES 65536)|rpcrdma_cm both ends, 64 KB, server remote_invalidation=N"
	"cm-pdata-off|send_private_data=N|$(SIZES 65536)|rpcrdma_cm client (64 KB) against a server sending no private data (RFC 8166 legacy: 1 KB)"
	"stock-64k-4k|max_req_size=65536||mixed fleet, no module: the server's max_req_size 64 KB, a client advertising 4 KB"
	"cm-64k-4k|$(SIZES 65536)|$(SIZES 4096)|mixed fleet: rpcrdma_cm server 64 KB, client 4 KB"
)
# Not in the default set (--configs names it): what Remote Invalidation
# saves where I/O is chunked (at 64 KB nothing of these workloads is).
EXTRA_CONFIGS=(
	"cm-4k-ri-off|$(SIZES 4096) remote_invalidation=N|$(SIZES 4096)|rpcrdma_cm both ends, 4 KB, server remote_invalidation=N"
)
ALL_WORKLOADS=create,stat,readdir,rename,remove
for op in write read; do
	for kb in 1 2 4 8 16 32 60; do
		ALL_WORKLOADS+=,$op-${kb}k
	done
done

n=${BENCH_N:-200} connects=${BENCH_CONNECTS:-1000} out=$RPCRDMA_CM_TOP/build/bench
configs='' workloads=$ALL_WORKLOADS
while [ $# -gt 0 ]; do
	case $1 in
	--n) n=${2:-}; shift 2 || usage ;;
	--configs) configs=${2:-}; shift 2 || usage ;;
	--workloads) workloads=${2:-}; shift 2 || usage ;;
	--connects) connects=${2:-}; shift 2 || usage ;;
	--out) out=${2:-}; shift 2 || usage ;;
	-h|--help) usage 0 ;;
	*) echo "bench-nfs: unknown option '$1'" >&2; usage ;;
	esac
done
case $n in '' | *[!0-9]* | 0) echo "bench-nfs: --n must be a positive number, not '$n'" >&2; exit 2 ;; esac
case $connects in '' | *[!0-9]*) echo "bench-nfs: --connects must be a number, not '$connects'" >&2; exit 2 ;; esac
selected=()
if [ -z "$configs" ]; then
	selected=("${CONFIGS[@]}")
else
	for c in "${CONFIGS[@]}" "${EXTRA_CONFIGS[@]}"; do
		[[ ",$configs," == *",${c%%|*},"* ]] && selected+=("$c")
	done
fi
# The names, read whole by grep (no grep -q at the end of a pipe under
# pipefail: bash's printf writes line by line, and a grep that stops at
# the first match fails the pipe: the smoke of the fresh make check of
# 5d05e1a said "unknown configuration 'stock-4k' (known: stock-4k ...)").
known=$(printf '%s\n' "${CONFIGS[@]}" "${EXTRA_CONFIGS[@]}" | cut -d'|' -f1)
for want in ${configs//,/ }; do
	grep -qx -- "$want" <<<"$known" || {
		echo "bench-nfs: unknown configuration '$want' (known: $(paste -sd' ' <<<"$known"))" >&2
		exit 2
	}
done
for w in ${workloads//,/ }; do
	[[ ",$ALL_WORKLOADS," == *",$w,"* ]] || {
		echo "bench-nfs: unknown workload '$w' (known: ${ALL_WORKLOADS//,/ })" >&2
		exit 2
	}
done
require_root "make bench-nfs"
# The guests reach the output directory by its absolute path.
out=$(realpath -m "$out")

kdir=${KDIR:-$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)}
KO=$(module_ko)
TOOL=$RPCRDMA_CM_TOP/tools/target/release/rpcrdma-cm
REPORT=$RPCRDMA_CM_TOP/tools/target/release/bench-nfs-report
for f in "$kdir/arch/x86/boot/bzImage" "$KO" "$TOOL" "$REPORT"; do
	[ -e "$f" ] || rpcrdma_cm_die "$f missing: run 'make module tools' (make bench-nfs does)"
done
command -v tshark >/dev/null || rpcrdma_cm_die "tshark missing: run 'make deps'"
GUEST=$RPCRDMA_CM_TOP/scripts/guest/guest.sh
S=$RPCRDMA_CM_TOP/scripts/bench
# no_kernel_report and the KTAP helpers it prints with.
KSFT_DIR=$kdir/tools/testing/selftests
# shellcheck source=../../selftests/rpcrdma_cm/lib.sh
. "$RPCRDMA_CM_TOP/selftests/rpcrdma_cm/lib.sh"

# run_logs_clean DIR LOG...: every LOG of a run's guests (the kernel log a
# guest saved, and its console to the end, which holds what the kernel
# printed after that snapshot) exists and holds no warning, oops, KASAN or
# lockdep report.
run_logs_clean() {
	local d=$1 f rc=0
	shift
	for f in "$@"; do
		no_kernel_report "$d/$f" "$(basename "$d") $f" || rc=1
	done
	return $rc
}

# The time estimate: seconds per operation of each workload under TCG on
# the 2-core development machine (measured; see Documentation/performance.rst),
# plus the boot of a guest pair.
# (A create is an OPEN and a CLOSE, about 50 ms each; the rest one RPC.)
PAIR_BOOT_SECS=45
# The memory phase after the workloads (a mount, a kmalloc trace, its
# reading in both guests).
MEMORY_PHASE_SECS=60
op_secs() {
	case $1 in
	create) echo 0.12 ;;
	stat) echo 0.07 ;;
	readdir) echo 0.01 ;;
	rename|remove) echo 0.065 ;;
	*-*k) awk -v kb="${1#*-}" 'BEGIN { printf "%.4f", 0.075 + kb * 0.0003 }' ;;
	esac
}
per_config=$((PAIR_BOOT_SECS + MEMORY_PHASE_SECS))
for w in ${workloads//,/ }; do
	per_config=$(awk -v a="$per_config" -v b="$(op_secs "$w")" -v n="$n" 'BEGIN { print a + b * n }')
done
connect_secs=0
[ "$connects" -gt 0 ] && connect_secs=$((60 + connects * 2 * 25 / 1000))
estimate=$(awk -v p="$per_config" -v c="${#selected[@]}" -v k="$connect_secs" 'BEGIN { printf "%d", p * c + k }')
nwl=$(echo "${workloads//,/ }" | wc -w)
# A guest's hard limit: three times its estimate, at least 10 minutes, and
# the memory phase's bounded waits (bench-nfs-server.sh: 300 s twice) on
# top, so that a guest that waited for a stalled peer still saves its logs
# before it is killed; BENCH_WAIT, the wait for the workloads, leaves them
# and a minute.
TIMEOUT=$(awk -v p="$per_config" 'BEGIN { t = 3 * p; printf "%d", (t < 600 ? 600 : t) + 600 }')

rm -rf "$out"
mkdir -p "$out/runs"
echo "bench-nfs: ${#selected[@]} configurations x $nwl workloads, N=$n$([ "$connects" -gt 0 ] && echo ", $connects connects per side"); output in $out"
echo "bench-nfs: estimated time under TCG here: about $((estimate / 60)) min $((estimate % 60)) s" \
	"(KVM: much less); progress every ${RPCRDMA_CM_PROGRESS_SECS} s"

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	guest_pair_kill
}
trap cleanup EXIT
trap 'exit 130' INT TERM

genv=("KSFT_DIR=$kdir/tools/testing/selftests" "RPCRDMA_CM_KO=$KO" "BENCH_WAIT=$((TIMEOUT - 660))")

# pair_progress SECS: every RPCRDMA_CM_PROGRESS_SECS, which configuration,
# and how far its client got (guest_pair calls it every second).
pair_progress() {
	[ $(($1 % RPCRDMA_CM_PROGRESS_SECS)) -eq 0 ] || return 0
	printf '  ... %s: %dm%02ds, %s\n' "$pair_label" $(($1 / 60)) $(($1 % 60)) \
		"$(if [ -s "$pair_dir/client-progress" ]; then echo "workload $(cat "$pair_dir/client-progress")";
		elif [ -e "$pair_dir/server-ready" ]; then echo "server ready, client mounting";
		else echo "booting the guests"; fi)"
}

# run_pair DIR SERVER_PARAMS CLIENT_PARAMS LABEL: boot both guests on a
# fresh link (guest_pair, scripts/lib.sh) and wait for them, printing
# progress. Fails unless both guests exit 0 and both scripts finished.
run_pair() {
	local d=$1 rc=0 side
	# shellcheck disable=SC2034 # read by guest_pair through namerefs
	local server_cmd=(env "${genv[@]}" "$S/bench-nfs-server.sh" "$d" "$2")
	# shellcheck disable=SC2034
	local client_cmd=(env "${genv[@]}" "$S/bench-nfs-client.sh" "$d" "$n" "$workloads" "$3")
	pair_dir=$d pair_label=$4
	PAIR_PROGRESS=pair_progress guest_pair "$d" bench 52:54:00:00:03 "$TIMEOUT" "$kdir" "$kdir" \
		server_cmd client_cmd
	for side in server client; do
		[ -s "$d/$side-error" ] && echo "  $side: $(cat "$d/$side-error")" && rc=1
		if [ "$(cat "$d/$side-exit")" != 0 ] || [ ! -e "$d/$side-done" ]; then
			echo "  $side guest: exit status $(cat "$d/$side-exit"), script $([ -e "$d/$side-done" ] && echo finished || echo "did not finish") (console: $d/$side.console)"
			rc=1
		fi
	done
	return $rc
}

# decode_capture DIR: DIR/packets.tsv, one line per captured packet:
# frame length, UDP destination port, BTH opcode, RETH DMA length, payload
# (hex; the workload markers). Fails, saying why, when tshark cannot read
# the whole capture or it holds fewer packets than tcpdump captured.
decode_capture() {
	local d=$1 err captured lines
	err=$(mktemp)
	if ! tshark -r "$d/server.pcap" -T fields -E separator=/t -e frame.len -e udp.dstport \
		-e infiniband.bth.opcode -e infiniband.reth.dmalen -e data.data \
		>"$d/packets.tsv" 2>"$err" || grep -qv 'Running as user "root"' "$err"; then
		echo "  tshark cannot read $d/server.pcap: $(grep -v 'Running as user' "$err" | head -c 300)"
		rm -f "$err"
		return 1
	fi
	rm -f "$err"
	captured=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured$/\1/p' "$d/tcpdump.log")
	lines=$(wc -l <"$d/packets.tsv")
	if [ "$lines" != "$captured" ] ||
		! grep -q '^0 packets\{0,1\} dropped by kernel$' "$d/tcpdump.log"; then
		echo "  capture incomplete: tshark read $lines packets, tcpdump: $(grep -E 'captured|dropped' "$d/tcpdump.log" | paste -sd,)"
		return 1
	fi
}

start=$SECONDS
failed=0
i=0
for c in "${selected[@]}"; do
	IFS='|' read -r name sparams cparams what <<<"$c"
	i=$((i + 1))
	d=$out/runs/$name
	label="[$i/${#selected[@]} $name]"
	echo "bench-nfs: $label $what; elapsed $(((SECONDS - start) / 60)) min"
	mkdir -p "$d"
	jq -n --arg name "$name" --arg what "$what" --arg server "$sparams" --arg client "$cparams" \
		--argjson n "$n" '{name: $name, description: $what, server_params: $server, client_params: $client, n: $n}' \
		>"$d/config.json"
	if run_pair "$d" "$sparams" "$cparams" "$label" && decode_capture "$d" &&
		run_logs_clean "$d" server-dmesg client-dmesg server.console client.console; then
		echo "  done: $(wc -l <"$d/client-results.jsonl") workloads, $(wc -l <"$d/packets.tsv") packets captured"
	else
		echo "bench-nfs: $name failed; logs in $d" >&2
		failed=1
	fi
done

if [ "$connects" -gt 0 ]; then
	d=$out/runs/connect-cost
	mkdir -p "$d"
	chmod 777 "$d"
	echo "bench-nfs: [connect cost] $connects connects + disconnects from a userspace requester, rpcrdma_cm loaded and not; elapsed $(((SECONDS - start) / 60)) min"
	nice -n 5 "$GUEST" --kdir "$kdir" --name rpcrdma-bench-connect --timeout 1200 --cpus 1 --memory 1G \
		--rwdir "$d" -- env "${genv[@]}" "RPCRDMA_CM_TOOL=$TOOL" \
		"$S/bench-nfs-connect.sh" "$d" "$connects" >"$d/console" 2>&1 &
	cpid=$!
	pids+=("$cpid")
	s=0
	while kill -0 "$cpid" 2>/dev/null; do
		sleep 1
		s=$((s + 1))
		[ $((s % RPCRDMA_CM_PROGRESS_SECS)) -eq 0 ] &&
			printf '  ... connect cost: %dm%02ds, %s\n' $((s / 60)) $((s % 60)) "$(cat "$d/progress" 2>/dev/null || echo booting)"
	done
	crc=0
	wait "$cpid" || crc=$?
	if [ $crc != 0 ] || [ ! -e "$d/done" ] || [ -s "$d/error" ] || ! run_logs_clean "$d" dmesg console; then
		echo "bench-nfs: connect cost failed: guest exit status $crc, script $([ -e "$d/done" ] && echo finished || echo "did not finish"): $(cat "$d/error" 2>/dev/null || echo "no error file"); console: $d/console" >&2
		failed=1
	fi
fi

echo "bench-nfs: all runs done in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s; the report:"
run_dirs=()
for c in "${selected[@]}"; do
	[ -d "$out/runs/${c%%|*}" ] && run_dirs+=("$out/runs/${c%%|*}")
done
[ "$connects" -gt 0 ] && run_dirs+=("$out/runs/connect-cost")
"$REPORT" --out "$out" "${run_dirs[@]}"
case $? in
0) ;;
3) [ "$failed" = 1 ] || failed=3
	echo "bench-nfs: a target was missed (see the report's targets)" ;;
*) failed=1 ;;
esac
echo "bench-nfs: $out/table.md, $out/plot.svg, $out/plot-costs.svg, $out/results.csv, $out/memory.csv, $out/results.json"
echo "$failed" >"$out/exit-status"
exit $failed
