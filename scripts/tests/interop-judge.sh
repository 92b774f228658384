#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of the judge of the interop matrix (rfc8797_oracle.py judge, which
# scripts/guest/interop.sh runs on each row): the small rows kept in
# selftests/rpcrdma_cm/testdata/interop/ (cut from a real run: the capture's
# connection setup, each side's debugfs, tracepoint and
# xprtrdma_inline_thresh lines) are judged ok with the table cells the run
# printed, and corrupted copies fail, naming the cause: a digit of a
# reported threshold, an octet of what the server says it received, a
# tracepoint line with another threshold, a stock client's inline
# threshold, another row's capture (also with its port made the judged
# one), non-zero padding, no tracepoint line, a row the oracle refuses.
# Also: the oracle runs no program but tshark and imports nothing beyond the
# standard library (its expectations never come from the code under test).
# Boots nothing, a few seconds. KTAP; exit 0 when every test passes, 1
# otherwise, 4 (skip) without tshark or jq.
#
#   scripts/tests/interop-judge.sh
#   RFC8797_ORACLE=PATH scripts/tests/interop-judge.sh   (a mutant: see it fail)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib.sh
. "$top/scripts/lib.sh"
ORACLE=${RFC8797_ORACLE:-$top/selftests/rpcrdma_cm/rfc8797_oracle.py}
DATA=$top/selftests/rpcrdma_cm/testdata/interop
if ! command -v tshark >/dev/null || ! command -v jq >/dev/null; then
	echo "1..0 # SKIP tshark or jq missing"
	exit 4
fi
work=$(mktemp -d /tmp/interop-judge.XXXXXX)
trap 'rm -rf "$work"' EXIT


# The fixtures' rows, as scripts/guest/interop.sh's ROWS has them:
# NAME|SERVER|CLIENT|TRANSPORT, and the table cells of the run they come
# from (REQ, REP, expected client|server, client says, server says, verdict;
# tab-separated).
kb() {
	local b=$(($1 * 1024))
	echo "responder_send_size=$b,responder_recv_size=$b,requester_send_size=$b,requester_recv_size=$b"
}
SPECS="module-asymown-x-module-asymown|module:responder_send_size=16384,responder_recv_size=8192|module:requester_send_size=4096,requester_recv_size=32768|rxe
module-nopdata-x-module-siw-v6|module:send_private_data=N|module:$(kb 16)|siw
stock-x-module|stock|module:-|rxe
module1k-x-stock|module:$(kb 1)|stock|rxe"
CELLS="module-asymown-x-module-asymown	f6ab0e180101031f/56	f6ab0e1801010f03/196	4096/16384/1|16384/4096/1	debugfs:4096/16384/1	debugfs:16384/4096/1	ok
module-nopdata-x-module-siw-v6	f6ab0e1801010f0f/8	none/0	1024/1024/0|1024/1024/0	debugfs:1024/1024/0	debugfs:1024/1024/0	ok
stock-x-module	f6ab0e1801010303/56	f6ab0e1801000303/196	4096/4096/0|0/4096/1	debugfs:4096/4096/0	none:-/-/-	ok (stock server: not traced)
module1k-x-stock	f6ab0e1801010303/56	f6ab0e1801010000/196	1024/1024/1|1024/1024/1	inline_thresh:1024/1024/-	debugfs:1024/1024/1	ok"

# judge DIR ROW: the oracle's judge of DIR as ROW; sets out (JSON), err
# (its findings) and rc.
judge() {
	local spec server client tr
	spec=$(grep "^$2|" <<<"$SPECS")
	IFS='|' read -r _ server client tr <<<"$spec"
	out=$(python3 "$ORACLE" judge "$1" --name "$2" --server "$server" --client "$client" --transport "$tr" 2>"$work/err")
	rc=$?
	err=$(cat "$work/err")
}
# copy ROW NAME: a fresh copy of the fixture ROW in $work/NAME/ROW; prints it.
copy() {
	rm -rf "${work:?}/$2"
	mkdir -p "$work/$2" && cp -r "$DATA/$1" "$work/$2/" && echo "$work/$2/$1"
}
# fails DESC DIR ROW WHY MESSAGE: the judge of DIR exits 1 with exactly the
# reasons WHY (space-separated) and a finding containing MESSAGE.
fails() {
	local why
	judge "$2" "$3"
	why=$(jq -r '.why | join(" ")' <<<"$out" 2>/dev/null)
	if [ "$rc" = 1 ] && [ "$why" = "$4" ] && grep -qF -- "$5" <<<"$err"; then
		tap_result "$1: fails ($4)" ok
	else
		tap_result "$1: fails ($4)" fail "exit $rc, why '$why', findings: $(paste -sd ';' <<<"$err" | head -c 600)"
	fi
}

# sed_case ROW FILE SED DESC WHY MESSAGE: a copy of ROW whose FILE the sed
# expression SED edits fails with WHY and MESSAGE (fails).
sed_case() {
	local d
	d=$(copy "$1" "sed-$1-$2-${#TAP_RESULTS[@]}")
	sed -i "$3" "$d/$2"
	fails "$4" "$d" "$1" "$5" "$6"
}

# 1. The fixtures as they are: ok, with the run's table cells.
while IFS=$'\t' read -r row want; do
	if [ ! -d "$DATA/$row" ]; then
		tap_result "$row as kept: ok" fail "no fixture $DATA/$row"
		continue
	fi
	judge "$DATA/$row" "$row"
	got=$(jq -r '.cells | [.req, .rep, .expected, .client_says, .server_says, .verdict] | join("\t")' <<<"$out" 2>/dev/null)
	if [ "$rc" = 0 ] && [ "$(jq -r .ok <<<"$out")" = true ] && [ "$got" = "$want" ]; then
		tap_result "$row as kept: ok, the run's table cells" ok
	else
		tap_result "$row as kept: ok, the run's table cells" fail \
			"exit $rc, cells '$got', want '$want'; findings: $(paste -sd ';' <<<"$err" | head -c 600)"
	fi
done <<<"$CELLS"

# The specs above are scripts/guest/interop.sh's for those names.
rows_now() {
	local block
	block=$(awk '/^K16S=/ { on = 1 } on { print } on && /^ROWS=/ { r = 1 } r && /"$/ { exit }' "$top/scripts/guest/interop.sh")
	[ -n "$block" ] && (eval "$block" && printf '%s\n' "$ROWS")
}
now=$(rows_now) bad=
while IFS='|' read -r name server client tr; do
	cur=$(grep "^$name|" <<<"$now" | cut -d'|' -f1-4)
	[ "$cur" = "$name|$server|$client|$tr" ] || bad="$bad $name(${cur:-gone})"
done <<<"$SPECS"
[ -z "$bad" ] && tap_result "the fixtures' specs are scripts/guest/interop.sh's ROWS" ok ||
	tap_result "the fixtures' specs are scripts/guest/interop.sh's ROWS" fail "differ:$bad"

# 2. Corrupted copies.
A=module-asymown-x-module-asymown S=module-nopdata-x-module-siw-v6 ST=stock-x-module K1=module1k-x-stock
sed_case $A client-connections '/^role=requester /s/ send_threshold=4096 / send_threshold=5096 /' "client debugfs send_threshold 4096 -> 5096" "client client-trace" \
	"$A client: tracepoint '4096 16384 1', debugfs 'debugfs 5096 16384 1'"

# The REQ's send size octet (03: 4096) as the server says it received it.
sed_case $A server-connections '/^role=responder /s/ peer_pdata=f6ab0e180101031f / peer_pdata=f6ab0e180101041f /' "the REQ's send size octet the server received 03 -> 04" "server-received" \
	"server: received peer_pdata=f6ab0e180101041f (want f6ab0e180101031f)"

sed_case $A server-connections '/^role=responder /s/ peer_send=4096 / peer_send=5120 /' "the REQ's send size the server decoded 4096 -> 5120" "server-received" \
	"server: received peer_send=5120 (want 4096)"

sed_case $A server-trace 's/ recv_threshold=4096 / recv_threshold=8192 /' "server tracepoint recv_threshold 4096 -> 8192" "server-trace" \
	"$A server: tracepoint '16384 8192 1', debugfs 'debugfs 16384 4096 1'"

sed_case $S client-trace 's/ send_threshold=1024 / send_threshold=2048 /' "siw client tracepoint send_threshold 1024 -> 2048" "client-trace" \
	"$S client: tracepoint '2048 1024 0', debugfs 'debugfs 1024 1024 0'"

sed_case $K1 client-inline-thresh 's|neg send/recv=1024/1024|neg send/recv=1024/4096|' "stock client xprtrdma_inline_thresh recv 1024 -> 4096" "client" \
	"client says inline_thresh 1024 4096 -"

d=$(copy $A no-trace)
: >"$d/client-trace"
fails "module client without a tracepoint line" "$d" $A "client-no-trace" \
	"$A client: rpcrdma_cm loaded, no tracepoint line"

d=$(copy $ST other-pcap)
cp "$DATA/$K1/server.pcap" "$d/server.pcap"
fails "another row's capture ($K1's in $ST)" "$d" $ST "wire" \
	"no REQ/REP pair of the judged connection (port 41574)"

d=$(copy $S other-pcap-siw)
cp "$DATA/$A/server.pcap" "$d/server.pcap"
fails "another row's capture ($A's, rxe, in $S, siw)" "$d" $S "wire" \
	"no REQ/REP pair of the judged connection (port 38559)"

d=$(copy $ST other-pcap-port)
# The asymmetric row's capture, its connection's port made the judged one:
# the octets themselves must differ from what stock-x-module sends.
cp "$DATA/$A/server.pcap" "$d/server.pcap"
sed -i '/^role=requester /s/:41574 /:54048 /' "$d/client-connections"
fails "another row's capture with the judged port ($A's in $ST)" "$d" $ST "client-wire server-wire client-received" \
	"$ST: client sent f6ab0e180101031f 56 (ok), want f6ab0e1801010303 56"

d=$(copy $A padding)
python3 - "$d/server.pcap" <<'EOF'
import sys
p = sys.argv[1]
b = open(p, "rb").read()
m = bytes.fromhex("f6ab0e180101031f") + bytes(48)
assert b.count(m) == 1, "the REQ's private data is not in the capture once"
open(p, "wb").write(b.replace(m, m[:8] + b"\x01" + m[9:]))
EOF
fails "a non-zero octet in the REQ's padding" "$d" $A "client-wire" \
	"$A: client: padding differs from zeros: f6ab0e180101031f01+47x00"

d=$(copy $ST refused)
SPECS="$SPECS
refused|stock|module:frobnicate=1|rxe"
fails "a row the oracle refuses" "$d" refused "oracle" "refused: the oracle refuses the row"

# 3. Usage: exit 2.
while IFS='|' read -r what args; do
	# shellcheck disable=SC2086 # the arguments, one word each
	python3 "$ORACLE" judge $args >/dev/null 2>&1
	rc=$?
	[ $rc = 2 ] && tap_result "usage: $what: exit 2" ok || tap_result "usage: $what: exit 2" fail "exit $rc"
done <<EOF
no --transport|$DATA/$A --server stock --client stock
--transport ib|$DATA/$A --server stock --client stock --transport ib
no ROW_DIR|$work/none --server stock --client stock --transport rxe
EOF

# 4. The oracle stays apart from the code under test: standard library
# imports only, no program run but tshark, no path into the Rust build.
indep=$(python3 - "$ORACLE" <<'EOF'
import ast, sys
tree = ast.parse(open(sys.argv[1]).read())
allowed = {"argparse", "json", "os", "re", "subprocess", "sys"}
bad = []
for node in ast.walk(tree):
    if isinstance(node, ast.Import):
        bad += [a.name for a in node.names if a.name.split(".")[0] not in allowed]
    elif isinstance(node, ast.ImportFrom):
        bad.append(node.module or ".")
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        if "target/release" in node.value or "rpcrdma-cm " in node.value or node.value == "rpcrdma-cm":
            bad.append(repr(node.value[:40]))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("run", "Popen", "call", "check_output", "system", "exec", "execv", "execvp"):
        first = node.args[0] if node.args else None
        if not (isinstance(first, ast.Name) and first.id == "cmd"):
            bad.append(f"line {node.lineno}: {node.func.attr}")
for node in ast.walk(tree):
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "cmd" for t in node.targets):
        if not (isinstance(node.value, ast.List) and node.value.elts and getattr(node.value.elts[0], "value", None) == "tshark"):
            bad.append(f"line {node.lineno}: cmd is not tshark's")
print(" ".join(bad))
EOF
)
[ -z "$indep" ] && tap_result "the oracle imports the standard library only and runs tshark only" ok ||
	tap_result "the oracle imports the standard library only and runs tshark only" fail "$indep"

echo "KTAP version 1"
tap_finish
