#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The smoke cut of 'make bench-nfs' that 'make check' runs, so the bench
# cannot rot: two workloads (N creates, NFSv4.2 OPEN+CLOSE each; N 8 KB
# READs) under two configurations (stock and rpcrdma_cm at 64 KB), with
# the memory phase, two guest pairs, about 3 minutes under TCG. Prints
# KTAP; exit 0 only if all pass.
#
#   scripts/bench/bench-nfs-smoke.sh [--checks-only DIR]
#
# --checks-only DIR judges an existing output directory of bench-nfs.sh
# instead of running it (to see the checks fail on broken input).
# BENCH_SMOKE_N: creates (default 20). Output: build/check/bench-smoke.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

kdir=${KDIR:-$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)}
KSFT_DIR=$kdir/tools/testing/selftests
# The KTAP helpers and no_kernel_report.
# shellcheck source=../../selftests/rpcrdma_cm/lib.sh
. "$RPCRDMA_CM_TOP/selftests/rpcrdma_cm/lib.sh"
N=${BENCH_SMOKE_N:-20}
out=$RPCRDMA_CM_TOP/build/check/bench-smoke
run=1
if [ "${1:-}" = --checks-only ]; then
	out=${2:?--checks-only DIR}
	run=0
fi
J=$out/results.json

ktap_print_header
ktap_set_plan 11

if [ $run = 1 ]; then
	bench_log=$(mktemp)
	"$RPCRDMA_CM_TOP/scripts/bench/bench-nfs.sh" --n "$N" --configs stock-4k,cm-64k --workloads create,read-8k \
		--connects 0 --out "$out" 2>&1 | tee "$bench_log" | sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	# Why a run failed, again just before the result: make check prints
	# a failed result with the last lines before it only, and the
	# report's table comes after the failing run's lines (CI's output of
	# stop 47 showed the table and not why stock-4k had no rows).
	if [ "$rc" != 0 ]; then
		grep -E '^  (server|client)|failed|missing|incomplete|cannot|error|lines matching|BUG|WARNING' "$bench_log" |
			grep -v '^bench-nfs: .*/table.md' | tail -n 8 | sed 's/^/# why: /'
	fi
	rm -f "$bench_log"
else
	# A run that never wrote its exit status did not finish.
	rc=$(cat "$out/exit-status" 2>/dev/null || echo missing)
fi
ktap_test_result "bench-nfs: both configurations ran and the report was written (exit $rc)" test "$rc" = 0

# row CONFIG JQ_EXPR [WORKLOAD]: the value of JQ_EXPR on the WORKLOAD
# (create) row of CONFIG in results.json; fails, saying why, when the file
# or the row is missing.
row() {
	local v w=${3:-create}
	v=$(jq -e --arg c "$1" --arg w "$w" ".rows[] | select(.workload == \$w and .config == \$c) | $2" "$J" 2>&1) || {
		ktap_print_msg "results.json: no $w row of $1 or no $2 ($v)" >&2
		return 1
	}
	echo "$v"
}
# side CONFIG SIDE JQ_EXPR: JQ_EXPR on SIDE's (client, server) memory
# figures of CONFIG's run in results.json.
side() {
	local v
	v=$(jq -e --arg c "$1" ".runs[] | select(.config.name == \$c) | .$2_memory | $3" "$J" 2>&1) || {
		ktap_print_msg "results.json: no $2 memory figure $3 in the run of $1 ($v)" >&2
		return 1
	}
	echo "$v"
}
# number X: X is a non-negative integer.
number() { case ${1:-} in '' | *[!0-9]*) return 1 ;; esac; }

# Stock at 4 KB: the client's largest possible OPEN reply exceeds 4 KB, so
# every OPEN of the N creates takes a Reply chunk (mountstats, tracepoint)
# and the server writes it with RDMA WRITE (capture).
stock_reply_chunks() {
	local opens reply marsh none writes
	opens=$(row stock-4k '.ops.OPEN') && reply=$(row stock-4k .reply_chunks) &&
		marsh=$(row stock-4k .marshalled) && none=$(row stock-4k .no_chunk) || return 1
	ktap_print_msg "stock-4k create: OPEN $opens, Reply chunk segments $reply, RPCs marshalled $marsh, without chunk $none"
	# At least one OPEN per create (7.3's client sent 26 for 20 creates,
	# 6.12's 20): each of them must take a Reply chunk.
	number "$opens" && number "$reply" && number "$marsh" && number "$none" &&
		[ "$opens" -ge "$N" ] && [ "$reply" -ge "$opens" ] && [ $((marsh - none)) -ge "$opens" ]
}
ktap_test_result "stock 4 KB: every OPEN of $N creates takes a Reply chunk" stock_reply_chunks
stock_rdma_writes() {
	local writes sends
	writes=$(row stock-4k .wire.rdma_write_ops) && sends=$(row stock-4k .wire.send_packets) || return 1
	ktap_print_msg "stock-4k create on the wire: RDMA WRITE $writes, RC SEND packets $sends"
	number "$writes" && [ "$writes" -ge "$N" ]
}
ktap_test_result "stock 4 KB: the capture shows an RDMA WRITE per Reply chunk" stock_rdma_writes

# rpcrdma_cm at 64 KB: the same creates travel inline: RPCs were
# marshalled (at least an OPEN and a CLOSE per create), none with a chunk.
cm_no_chunk() {
	local opens reply marsh none
	opens=$(row cm-64k '.ops.OPEN') && reply=$(row cm-64k .reply_chunks) &&
		marsh=$(row cm-64k .marshalled) && none=$(row cm-64k .no_chunk) || return 1
	ktap_print_msg "cm-64k create: OPEN $opens, Reply chunk segments $reply, RPCs marshalled $marsh, without chunk $none"
	number "$opens" && number "$reply" && number "$marsh" && number "$none" &&
		[ "$opens" -ge "$N" ] && [ "$marsh" -ge $((2 * N)) ] && [ "$none" -eq "$marsh" ] && [ "$reply" -eq 0 ]
}
ktap_test_result "rpcrdma_cm 64 KB: no RPC of $N creates has a chunk" cm_no_chunk
cm_no_rdma() {
	local reads writes sends thr
	reads=$(row cm-64k .wire.rdma_read_ops) && writes=$(row cm-64k .wire.rdma_write_ops) &&
		sends=$(row cm-64k .wire.send_packets) && thr=$(row cm-64k .threshold) || return 1
	ktap_print_msg "cm-64k create on the wire: RDMA READ $reads, RDMA WRITE $writes, RC SEND packets $sends; client threshold $thr"
	# The capture held the workload (a call and a reply per RPC), the
	# client applied 64 KB (its tracepoint), and no RDMA READ or WRITE.
	number "$reads" && number "$writes" && number "$sends" &&
		[ "$sends" -ge $((4 * N)) ] && [ "$thr" = 65536 ] && [ "$reads" -eq 0 ] && [ "$writes" -eq 0 ]
}
ktap_test_result "rpcrdma_cm 64 KB: the capture shows RC SENDs and no RDMA READ or WRITE" cm_no_rdma

# The memory phase on both sides of both runs: receive buffers and the
# transport's kmalloc per connection present, and larger at 64 KB than at
# 4 KB (each side posts its receive buffers at its receive size).
memory_grows() {
	local s c b k conns bytes
	declare -A rb km
	for s in client server; do
		for c in stock-4k cm-64k; do
			conns=$(side $c $s .connections) && b=$(side $c $s .receive_buffers.bytes) &&
				k=$(side $c $s '(.rpcrdma_kmalloc_bytes + .rdma_stack_kmalloc_bytes)') || return 1
			number "$conns" && number "$b" && number "$k" && [ "$conns" -gt 0 ] || return 1
			rb[$s$c]=$((b / conns)) km[$s$c]=$((k / conns))
			ktap_print_msg "$c $s: receive buffers $((b / conns)) B, transport kmalloc $((k / conns)) B per connection ($conns connections)"
		done
		[ "${rb[${s}cm-64k]}" -gt "${rb[${s}stock-4k]}" ] && [ "${km[${s}cm-64k]}" -gt "${km[${s}stock-4k]}" ] &&
			[ "${rb[${s}stock-4k]}" -gt 0 ] || return 1
	done
	# The server's receive buffers are at least sixteen times larger.
	bytes=${rb[servercm-64k]}
	[ "$bytes" -ge $((16 * ${rb[serverstock-4k]})) ]
}
ktap_test_result "memory per connection: both sides' figures present, larger at 64 KB than at 4 KB" memory_grows

# 8 KB READs: at 4 KB in a Write chunk (RDMA WRITE into the pages, no copy
# by the client), at 64 KB inline (the client copies each reply's 8 KB out
# of its receive buffer: mountstats fixup_copy_count).
copies_grow() {
	local reads4 reads64 c4 c64 s4 s64
	reads4=$(row stock-4k .ops.READ read-8k) && reads64=$(row cm-64k .ops.READ read-8k) &&
		c4=$(row stock-4k .client_copy_bytes read-8k) && c64=$(row cm-64k .client_copy_bytes read-8k) &&
		s4=$(row stock-4k .server_copy_bytes read-8k) && s64=$(row cm-64k .server_copy_bytes read-8k) || return 1
	ktap_print_msg "read-8k copied: stock-4k client $c4 B server $s4 B ($reads4 READs); cm-64k client $c64 B server $s64 B ($reads64 READs)"
	number "$reads4" && number "$reads64" && number "$c4" && number "$c64" && number "$s4" && number "$s64" &&
		[ "$reads64" -ge "$N" ] && [ "$c64" -ge $((8192 * reads64)) ] && [ "$c4" -lt $((8192 * reads4)) ]
}
ktap_test_result "bytes copied: the client copies each inline 8 KB READ reply at 64 KB, not the chunked ones at 4 KB" copies_grow

outputs() {
	local f ok=0
	for f in table.md results.csv memory.csv results.json plot.svg plot-costs.svg; do
		[ -s "$out/$f" ] || { ktap_print_msg "$out/$f missing or empty"; ok=1; }
	done
	[ $ok = 0 ] || return 1
	grep -q '^| create | stock-4k |' "$out/table.md" && grep -q '^| create | cm-64k |' "$out/table.md" ||
		{ ktap_print_msg "table.md lacks a create row of each configuration"; return 1; }
	[ "$(grep -c '^create,' "$out/results.csv")" = 2 ] ||
		{ ktap_print_msg "results.csv: $(grep -c '^create,' "$out/results.csv") create rows, want 2"; return 1; }
}
ktap_test_result "table.md, results.csv, memory.csv, results.json, plot.svg and plot-costs.svg written, a row per configuration" outputs
plot_ok() {
	head -c 4 "$out/plot.svg" | grep -q '<svg' && tail -1 "$out/plot.svg" | grep -qx '</svg>' &&
		grep -q '>create<' "$out/plot.svg" && [ "$(grep -c '<circle ' "$out/plot.svg")" -ge 1 ] &&
		[ "$(grep -c 'l8,8 m0,-8 l-8,8' "$out/plot.svg")" -ge 2 ]
}
ktap_test_result "plot.svg: a complete SVG with the create series and the stock point" plot_ok
costs_plot_ok() {
	head -c 4 "$out/plot-costs.svg" | grep -q '<svg' && tail -1 "$out/plot-costs.svg" | grep -qx '</svg>' &&
		[ "$(grep -c '<svg ' "$out/plot-costs.svg")" = 4 ] &&
		grep -q '>server, receive buffers<' "$out/plot-costs.svg" && grep -q '>read-8k<' "$out/plot-costs.svg" &&
		[ "$(grep -c '^| cm-64k | 64K | server |' "$out/table.md")" = 1 ] ||
		{ ktap_print_msg "plot-costs.svg incomplete or table.md without the memory rows"; return 1; }
}
ktap_test_result "plot-costs.svg: memory, copies and RDMA operations panels; table.md: the memory rows" costs_plot_ok

# Both configurations' guests: the kernel log each saved at its end, once
# the transports' teardown had freed what they made, and its console to
# the last line (what the kernel printed after the snapshot), with no
# warning, oops, KASAN or lockdep report.
guest_logs_clean() {
	local c side ok=0
	for c in stock-4k cm-64k; do
		for side in server client; do
			guest_side_clean "$out/runs/$c" $side "$c $side" || ok=1
		done
	done
	return $ok
}
ktap_test_result "every guest's transports torn down, then its kernel log and console free of reports" guest_logs_clean
ktap_finished
