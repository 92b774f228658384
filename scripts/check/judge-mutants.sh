#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The judges can fail: corrupt copies of what a real run kept, the way a
# broken module or a wrong guest would have left them, and check that the
# interop matrix and the bench smoke turn each one red. Boots nothing.
#
#   scripts/check/judge-mutants.sh KEPT_ROWS BENCH_SMOKE_DIR [BASE]
#
# KEPT_ROWS is INTEROP_KEEP of an interop run that kept the rows
# module-asym-x-module-asym, stock-x-module, module1k-x-stock and
# module7.3-x-stock6.12 (make
# check keeps them in build/check/interop-kept), BENCH_SMOKE_DIR the output
# of scripts/bench/bench-nfs-smoke.sh (build/check/bench-smoke). Prints KTAP: a
# test passes when the unchanged rows are judged ok and each mutant is
# judged not ok by the check named. BASE (7.3 or 6.12, default 7.3) is
# the base the rows and the bench smoke ran on.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

kept=${1:?KEPT_ROWS}
bench=${2:?BENCH_SMOKE_DIR}
# The base the rows were run on (their sides' kernels and the oracle's
# documented kernels; the cross rows pair both bases whatever it is).
kbase_set "${3:-7.3}"
# kselftest's KTAP helpers from a kernel tree: KDIR, or that base's test
# kernel.
kdir=${KDIR:-$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)}
# shellcheck source=/dev/null
. "$kdir/tools/testing/selftests/kselftest/ktap_helpers.sh"
work=$(mktemp -d /tmp/rpcrdma-cm-mutants.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The rechecks' table goes here, not over the run's (build/check).
export INTEROP_TABLE=$work/interop-table.txt

ASYM=module-asym-x-module-asym
STOCK='stock-x-module'
STOCK_CLIENT=module1k-x-stock
CROSS=module7.3-x-stock6.12

ktap_print_header
ktap_set_plan 21

# judged DIR ROW: interop.sh's verdicts on ROW kept in DIR, one per line,
# with the oracle's finding of a failed negotiation check ("... disagreement
# (CODES): ...": which of its sub-checks failed); everything it printed is
# left in judged_all, for a mutant that looks for its message.
judged_all=''
judged() {
	judged_all=$("$RPCRDMA_CM_TOP/scripts/guest/interop.sh" --recheck "$1" --rows "$2" 2>&1)
	grep -E '^(not )?ok [0-9]+ |^# .*: disagreement \(' <<<"$judged_all"
}
# mutant ROW: a fresh copy of the kept ROW in $work; prints its directory.
mutant() {
	rm -rf "${work:?}/$1"
	cp -r "$kept/$1" "$work/" && echo "$work/$1"
}
# red DIR ROW N [CODES]: result N of ROW (1 data, 2 negotiation, 3 logs,
# 4 kernels) is not ok, and the others are ok; for the negotiation, the
# oracle's sub-checks that failed are exactly CODES (its "disagreement
# (CODES)": wire, client-wire, server-wire for the capture, client and
# server for a side's values against the oracle's, CLIENT-trace for the
# tracepoint against debugfs, CLIENT-no-trace, CLIENT-received for what
# debugfs says it received against the capture), so that each mutant
# shows the one judge it is for failing.
red() {
	local out codes
	judged "$1" "$2" >"$work/judged"
	out=$(<"$work/judged")
	echo "$out" | sed 's/^/# /'
	grep -q "^not ok $3 " <<<"$out" && [ "$(grep -c '^not ok' <<<"$out")" = 1 ] || return 1
	[ $# -lt 4 ] && return 0
	# The same codes, in any order (one disagreement line a row).
	codes=$(sed -n 's/.*: disagreement (\([^)]*\)).*/\1/p' <<<"$out" | tr ' ' '\n' | sort | paste -sd ' ')
	[ "$codes" = "$(tr ' ' '\n' <<<"$4" | sort | paste -sd ' ')" ] ||
		{ ktap_print_msg "the oracle's failed sub-checks: '$codes', want '$4'"; return 1; }
}

unchanged() {
	local row out ok=0
	for row in $ASYM $STOCK $STOCK_CLIENT $CROSS; do
		[ -d "$kept/$row" ] || { ktap_print_msg "$row not kept in $kept"; ok=1; continue; }
		out=$(judged "$kept" "$row")
		# Four results for every row, a fifth where the row runs conform.
		[ "$(grep -c '^ok' <<<"$out")" -ge 4 ] && ! grep -q '^not ok' <<<"$out" ||
			{ sed 's/^/# /' <<<"$out"; ok=1; }
	done
	return $ok
}
ktap_test_result "the kept rows as they are: all ok" unchanged

swapped() {
	local d
	d=$(mutant $ASYM) || return 1
	# What a negotiation with the peer's send and receive swapped reports:
	# client min(32K, 16K)/min(4K, 8K), server min(16K, 32K)/min(8K, 4K)
	# (RFC 8797: client 8K/4K, server 4K/8K).
	sed -i '/role=requester/s/send_threshold=8192/send_threshold=16384/' "$d/client-connections"
	sed -i 's/send_threshold=8192/send_threshold=16384/' "$d/client-trace"
	sed -i '/role=responder/{s/send_threshold=4096/send_threshold=16384/; s/recv_threshold=8192/recv_threshold=4096/}' \
		"$d/server-connections"
	sed -i 's/send_threshold=4096/send_threshold=16384/; s/recv_threshold=8192/recv_threshold=4096/' "$d/server-trace"
	red "$work" $ASYM 2 "client server"
}
ktap_test_result "send and receive swapped in the negotiation: the negotiation check fails" swapped

sizes_ignored() {
	local d f
	d=$(mutant $ASYM) || return 1
	# A module that ignores its size parameters sends and applies 4 KB.
	python3 - "$d/server.pcap" <<'EOF' || return 1
import sys
p = sys.argv[1]
b = open(p, 'rb').read()
for a in ('f6ab0e1801011f03', 'f6ab0e1801010f07'):
    if bytes.fromhex(a) not in b:
        sys.exit('message %s not in the capture' % a)
    b = b.replace(bytes.fromhex(a), bytes.fromhex('f6ab0e1801010303'))
open(p, 'wb').write(b)
EOF
	for f in client-connections server-connections client-trace server-trace; do
		sed -i -E 's/(send_threshold|recv_threshold)=[0-9]+/\1=4096/g' "$d/$f"
	done
	# The wire and both sides' values; debugfs still says what the peer
	# sent before the capture was changed (received).
	red "$work" $ASYM 2 "client-wire server-wire client server client-received server-received"
}
ktap_test_result "size parameters ignored (4 KB on the wire and applied): the negotiation check fails" sizes_ignored

stock_is_patched() {
	local d
	d=$(mutant $STOCK) || return 1
	echo patched >"$d/server-kernel"
	red "$work" $STOCK 4
}
ktap_test_result "a stock side that booted the patched kernel: the kernel check fails" stock_is_patched

wrong_base() {
	local d
	d=$(mutant $CROSS) || return 1
	sed -i 's/^7\.3/6.12/' "$d/server-release"
	red "$work" $CROSS 4
}
ktap_test_result "a 7.3 side that booted 6.12: the kernel check fails" wrong_base

other_connection() {
	local d
	d=$(mutant $ASYM) || return 1
	# The judged connection's port is not the one the capture holds.
	sed -i -E '/role=responder/s/peer=(.*):[0-9]+ /peer=\1:1 /' "$d/server-connections"
	red "$work" $ASYM 2 wire
}
ktap_test_result "the capture's REQ/REP are another connection's: the negotiation check fails" other_connection

no_trace() {
	local d
	d=$(mutant $ASYM) || return 1
	# The module's side traced nothing (tracing never came on): the
	# cross-check of tracepoint and debugfs must not pass on no line.
	: >"$d/client-trace"
	red "$work" $ASYM 2 client-no-trace
}
ktap_test_result "a module side with no tracepoint line: the negotiation check fails" no_trace

# Each judge alone: a mutant only it can see.
padding_only() {
	local d
	d=$(mutant $ASYM) || return 1
	# The server's REP with a non-zero octet in the CM area's padding (the
	# InfiniBand CM pads the 8 octets to 196 with zeros): only the capture
	# shows it (debugfs records the first 8 octets and the length).
	python3 - "$d/server.pcap" <<'EOF' || return 1
import sys
p = sys.argv[1]
b = open(p, 'rb').read()
m = bytes.fromhex('f6ab0e1801010f07') + bytes(8)
if b.count(m) != 1:
    sys.exit('the REP message followed by zeros is not in the capture once')
open(p, 'wb').write(b.replace(m, m[:15] + b'\x01'))
EOF
	red "$work" $ASYM 2 server-wire
}
ktap_test_result "a non-zero padding octet in the REP on the wire, nothing else: the wire sub-check alone fails" padding_only

data_only() {
	local d
	d=$(mutant $ASYM) || return 1
	# One file of the 17 that did not round-trip.
	sed -i '0,/ ok$/s/ ok$/ differs/' "$d/client-data"
	red "$work" $ASYM 1
}
ktap_test_result "one file not byte-exact, nothing else: the data check alone fails" data_only

bad_replies() {
	local d
	d=$(mutant $ASYM) || return 1
	# The client's mountstats count three bad replies (bad_reply_count,
	# the 20th number after "rdma"): the data check fails.
	awk '/xprt:.*rdma/ { for (i = 1; i <= NF; i++) if ($i == "rdma") { $(i + 20) = 3; break } } { print }' \
		"$d/client-mountstats" >"$d/client-mountstats.new" && mv "$d/client-mountstats.new" "$d/client-mountstats"
	red "$work" $ASYM 1 && grep -q "count 3 bad replies" <<<"$judged_all"
}
ktap_test_result "bad replies in the client's mountstats, nothing else: the data check alone fails" bad_replies

no_server_sends() {
	local d
	d=$(mutant $ASYM) || return 1
	# The capture without the server's RC SEND packets (its Replies): the
	# CM's MADs (the REQ/REP the negotiation reads) stay.
	tshark -r "$kept/$ASYM/server.pcap" -Y '!(ip.src == 192.0.2.1 && (infiniband.bth.opcode <= 5 || infiniband.bth.opcode == 22 || infiniband.bth.opcode == 23))' \
		-w "$d/server.pcap" 2>/dev/null || return 1
	red "$work" $ASYM 1 && grep -q "the server sent 0 SEND messages" <<<"$judged_all"
}
ktap_test_result "a capture without the server's SENDs, nothing else: the data check alone fails" no_server_sends

trace_only() {
	local d
	d=$(mutant $ASYM) || return 1
	# The client's tracepoint says another send threshold than its debugfs
	# (which still says what the oracle gives).
	sed -i -E '$s/send_threshold=[0-9]+/send_threshold=1024/' "$d/client-trace"
	red "$work" $ASYM 2 client-trace
}
ktap_test_result "the client's tracepoint differs from its debugfs, nothing else: the trace sub-check alone fails" trace_only

values_only() {
	local d
	d=$(mutant $ASYM) || return 1
	# The client applied another send threshold than RFC 8797 gives, and
	# says so in debugfs and tracepoint alike (the wire as sent).
	sed -i -E '/role=requester/s/send_threshold=[0-9]+/send_threshold=1024/' "$d/client-connections"
	sed -i -E 's/send_threshold=[0-9]+/send_threshold=1024/' "$d/client-trace"
	red "$work" $ASYM 2 client
}
ktap_test_result "the client's threshold other than the oracle's, debugfs and tracepoint agreeing: the oracle sub-check alone fails" values_only

stock_client_value() {
	local d
	d=$(mutant $STOCK_CLIENT) || return 1
	# The stock client's xprtrdma_inline_thresh says it negotiated 4 KB
	# sends against a 1 KB server.
	sed -i -E '$s#neg send/recv=[0-9]+/#neg send/recv=4096/#' "$d/client-inline-thresh"
	red "$work" $STOCK_CLIENT 2 client
}
ktap_test_result "a stock client's negotiated value other than the oracle's: the oracle sub-check fails for it" stock_client_value

log_after_teardown() {
	local d
	d=$(mutant $ASYM) || return 1
	# A report in the server's kernel log saved after its teardown settled.
	echo "[  321.0] WARNING: CPU: 0 PID: 77 at net/sunrpc/xprtrdma/svc_rdma_transport.c:600 __svc_rdma_free+0x1/0x2 [rpcrdma]" \
		>>"$d/server-dmesg"
	red "$work" $ASYM 3
}
ktap_test_result "a warning in a kernel log saved after the teardown: the logs check alone fails" log_after_teardown

not_torn_down() {
	local d
	d=$(mutant $ASYM) || return 1
	# The client's transport outlived the unmount (its QP, CQs, MRs and
	# CM ID still there after the wait): its log covers no teardown.
	echo "left after 60 s: pd=2 cq=3 qp=2 cm_id=1 mr=4 (before: pd=1 cq=1 qp=1 cm_id=0 mr=0)" \
		>"$d/client-teardown"
	red "$work" $ASYM 3
}
ktap_test_result "a side whose transports were not torn down: the logs check fails" not_torn_down

# bench_red DIR TITLE: the smoke's result whose title begins with TITLE
# is not ok on DIR.
bench_red() {
	local out
	out=$("$RPCRDMA_CM_TOP/scripts/bench/bench-nfs-smoke.sh" --checks-only "$1" 2>&1 | grep -E '^(not )?ok [0-9]+ ')
	grep "^not ok" <<<"$out" | sed 's/^/# /'
	grep -qF "$2" <<<"$(grep '^not ok' <<<"$out")"
}
bench_oops() {
	local b=$work/bench-oops
	cp -r "$bench" "$b" || return 1
	echo "[   12.0] BUG: unable to handle page fault for address: 0000000000000000" >>"$b/runs/cm-64k/client-dmesg"
	bench_red "$b" "every guest's transports torn down, then its kernel log and console free of reports"
}
ktap_test_result "an oops in a bench guest's kernel log: the smoke's log check fails" bench_oops

bench_not_torn_down() {
	local b=$work/bench-teardown
	cp -r "$bench" "$b" || return 1
	echo "left after 60 s: pd=2 cq=3 qp=2 cm_id=1 mr=4 (before: pd=1 cq=1 qp=1 cm_id=0 mr=0)" \
		>"$b/runs/stock-4k/server-teardown"
	bench_red "$b" "every guest's transports torn down, then its kernel log and console free of reports"
}
ktap_test_result "a bench guest whose transports were not torn down: the smoke's log check fails" bench_not_torn_down

bench_no_status() {
	local b=$work/bench-nostatus
	cp -r "$bench" "$b" || return 1
	rm -f "$b/exit-status"
	bench_red "$b" "bench-nfs: both configurations ran"
}
ktap_test_result "bench output without its exit status: the smoke's first check fails" bench_no_status

bench_marshal_off() {
	local b=$work/bench-marshal-off out rc
	cp -r "$bench" "$b" || return 1
	# What the client records when rpcrdma:xprtrdma_marshal never came on:
	# no RPC marshalled, none without a chunk ("100 % of 0").
	sed -i -E 's/"marshalled": ?[0-9]+/"marshalled": 0/; s/"marshalled_no_chunk": ?[0-9]+/"marshalled_no_chunk": 0/' \
		"$b/runs/cm-64k/client-results.jsonl"
	out=$("$RPCRDMA_CM_TOP/tools/target/release/bench-nfs-report" --out "$b/report" \
		"$b/runs/stock-4k" "$b/runs/cm-64k" 2>&1 >/dev/null)
	rc=$?
	echo "$out" | sed 's/^/# /'
	[ $rc = 1 ] && echo "$out" | grep -q "xprtrdma_marshal saw 0 RPCs, fewer than"
}
ktap_test_result "a bench run whose marshal tracepoint was off: the report refuses it (exit 1)" bench_marshal_off

bench_memory_flat() {
	local b=$work/bench-memory-flat stock
	cp -r "$bench" "$b" || return 1
	# A server whose receive buffers did not grow with its receive size
	# (64 KB advertised, 4 KB buffers posted).
	stock=$(jq '.runs[] | select(.config.name == "stock-4k") | .server_memory.receive_buffers' "$b/results.json") &&
		jq --argjson s "$stock" '(.runs[] | select(.config.name == "cm-64k") | .server_memory.receive_buffers) = $s' \
			"$b/results.json" >"$b/results.json.new" && mv "$b/results.json.new" "$b/results.json" || return 1
	bench_red "$b" "memory per connection"
}
ktap_test_result "a server's receive buffers the same at 64 KB as at 4 KB: the smoke's memory check fails" bench_memory_flat
ktap_finished
