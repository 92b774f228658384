#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of selftests/rpcrdma_cm/rfc8797_oracle.py, the RFC 8797 oracle that judges
# the interop matrix (scripts/guest/interop.sh). Boots nothing, about 15 s.
# KTAP output; exit 0 when every test passes, 1 otherwise.
#
# What it checks:
# - every row of the last full interop run (measured: the wire and what
#   each side reported) is what the oracle expects from the row's
#   configuration alone: the REQ and REP private data (first 8 octets and
#   length), and each side's send/recv/RI and where it reports them;
# - the row configurations copied below are still the ones
#   scripts/guest/interop.sh runs under those names;
# - worked examples with asymmetric sizes (the table's sizes are symmetric,
#   so a swap of send and receive would pass it), rounding,
#   Remote Invalidation off, nothing sent, refused parameters;
# - the decoder: each non-conformance, the size codes 0, 3, 63, 255 and
#   the order of send and receive, reserved flag bits, padding.
# RFC8797_ORACLE=PATH tests another copy (a mutant, to see a check fail).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib.sh
. "$top/scripts/lib.sh"
ORACLE=${RFC8797_ORACLE:-$top/selftests/rpcrdma_cm/rfc8797_oracle.py}
command -v jq >/dev/null || { echo "1..0 # SKIP jq missing"; exit 1; }

# The last full interop run, copied from Documentation/measurements.rst (the
# table of "make interop" at commit 95c88a3, 4 December 2026; the rows
# patched-x-patched and module-x-module-nopdata measured again on 5
# December with the stock-conformance patches, scripts/guest/interop.sh --rows
# and --cut, since the series changed what they report; module16k-x-stock
# on 7 December, scripts/guest/interop.sh --rows, since the server's
# receive size follows the client's send size: its REP says 16 KB send,
# 4 KB receive). These are
# measurements: the REQ/REP columns are what the server captured on the
# wire (first 8 octets / length) and "client says"/"server says" what each
# kernel reported (debugfs, tracepoint, xprtrdma_inline_thresh). The
# "expected" column is NOT used: rpcrdma-cm computed it from the code this
# oracle is meant to judge.
MEASURED='stock-x-module                 rxe  v4  4.2  f6ab0e1801010303/56  f6ab0e1801000303/196 4096/4096/0|4096/4096/0      debugfs:4096/4096/0      none:-/-/-               ok (stock server: not traced)
stock-x-module16k              rxe  v4  4.2  f6ab0e1801010f0f/56  f6ab0e1801000303/196 4096/4096/0|4096/4096/0      debugfs:4096/4096/0      none:-/-/-               ok (stock server: not traced)
module-x-stock                 rxe  v4  4.2  f6ab0e1801010303/56  f6ab0e1801010303/196 4096/4096/1|4096/4096/1      inline_thresh:4096/4096/- debugfs:4096/4096/1      ok
module16k-x-stock              rxe  v4  4.2  f6ab0e1801010303/56  f6ab0e1801010f03/196 4096/4096/1|4096/4096/1      inline_thresh:4096/4096/- debugfs:4096/4096/1      ok
module-x-module-1k             rxe  v4  4.2  f6ab0e1801010000/56  f6ab0e1801010000/196 1024/1024/1|1024/1024/1      debugfs:1024/1024/1      debugfs:1024/1024/1      ok
module-x-module-4k             rxe  v4  4.2  f6ab0e1801010303/56  f6ab0e1801010303/196 4096/4096/1|4096/4096/1      debugfs:4096/4096/1      debugfs:4096/4096/1      ok
module-x-module-16k            rxe  v4  4.2  f6ab0e1801010f0f/56  f6ab0e1801010f0f/196 16384/16384/1|16384/16384/1  debugfs:16384/16384/1    debugfs:16384/16384/1    ok
module-x-module-64k            rxe  v4  4.2  f6ab0e1801013f3f/56  f6ab0e1801013f3f/196 65536/65536/1|65536/65536/1  debugfs:65536/65536/1    debugfs:65536/65536/1    ok
module-nopdata-x-module        rxe  v4  4.2  f6ab0e1801010303/56  0000000000000000/196 1024/1024/0|1024/1024/0      debugfs:1024/1024/0      debugfs:1024/1024/0      ok
module-x-module-nopdata        rxe  v4  4.2  0000000000000000/56  f6ab0e1801010303/196 1024/1024/0|4096/1024/0      debugfs:1024/1024/0      debugfs:4096/1024/0      ok
patched-x-patched              rxe  v4  4.2  f6ab0e1801010303/56  f6ab0e1801010303/196 4096/4096/1|4096/4096/1      trace:4096/4096/1        trace:4096/4096/1        ok
module-x-module-siw            siw  v4  4.2  f6ab0e1801010303/8   f6ab0e1801010303/8   4096/4096/1|4096/4096/1      debugfs:4096/4096/1      debugfs:4096/4096/1      ok
module-x-stock-siw             siw  v4  4.0  f6ab0e1801010303/8   f6ab0e1801010303/8   4096/4096/1|4096/4096/1      inline_thresh:4096/4096/- debugfs:4096/4096/1      ok
stock-x-module-siw             siw  v4  4.2  f6ab0e1801010303/8   f6ab0e1801000303/8   4096/4096/0|4096/4096/0      debugfs:4096/4096/0      none:-/-/-               ok (stock server: not traced)
module-x-module-v6             rxe  v6  4.2  f6ab0e1801010303/56  f6ab0e1801010303/196 4096/4096/1|4096/4096/1      debugfs:4096/4096/1      debugfs:4096/4096/1      ok
module-x-module-64k-v6         rxe  v6  4.1  f6ab0e1801013f3f/56  f6ab0e1801013f3f/196 65536/65536/1|65536/65536/1  debugfs:65536/65536/1    debugfs:65536/65536/1    ok
module-x-module-siw-v6         siw  v6  4.2  f6ab0e1801010303/8   f6ab0e1801010303/8   4096/4096/1|4096/4096/1      debugfs:4096/4096/1      debugfs:4096/4096/1      ok
module-nopdata-x-module-siw-v6 siw  v6  3    f6ab0e1801010f0f/8   none/0               1024/1024/0|1024/1024/0      debugfs:1024/1024/0      debugfs:1024/1024/0      ok
module-x-module-v3             rxe  v4  3    f6ab0e1801010303/56  f6ab0e1801010303/196 4096/4096/1|4096/4096/1      debugfs:4096/4096/1      debugfs:4096/4096/1      ok
module-x-module-v40            rxe  v4  4.0  f6ab0e1801010303/56  f6ab0e1801010303/196 4096/4096/1|4096/4096/1      debugfs:4096/4096/1      debugfs:4096/4096/1      ok
module-x-module-v41            rxe  v4  4.1  f6ab0e1801010303/56  f6ab0e1801010303/196 4096/4096/1|4096/4096/1      debugfs:4096/4096/1      debugfs:4096/4096/1      ok'

# The configuration of those rows (scripts/guest/interop.sh ROWS at that run,
# with $(kb N), $K16S and $K16C written out): NAME|SERVER|CLIENT|TRANSPORT.
k16s=responder_send_size=16384,responder_recv_size=16384
k16c=requester_send_size=16384,requester_recv_size=16384
kb() {
	local b=$(($1 * 1024))
	echo "responder_send_size=$b,responder_recv_size=$b,requester_send_size=$b,requester_recv_size=$b"
}
SPECS="stock-x-module|stock|module:-|rxe
stock-x-module16k|stock|module:$k16c|rxe
module-x-stock|module:-|stock|rxe
module16k-x-stock|module:$k16s|stock|rxe
module-x-module-1k|module:$(kb 1)|module:$(kb 1)|rxe
module-x-module-4k|module:$(kb 4)|module:$(kb 4)|rxe
module-x-module-16k|module:$(kb 16)|module:$(kb 16)|rxe
module-x-module-64k|module:$(kb 64)|module:$(kb 64)|rxe
module-nopdata-x-module|module:send_private_data=N|module:-|rxe
module-x-module-nopdata|module:-|module:send_private_data=N|rxe
patched-x-patched|patched|patched|rxe
module-x-module-siw|module:-|module:-|siw
module-x-stock-siw|module:-|stock|siw
stock-x-module-siw|stock|module:-|siw
module-x-module-v6|module:-|module:-|rxe
module-x-module-64k-v6|module:$(kb 64)|module:$(kb 64)|rxe
module-x-module-siw-v6|module:-|module:-|siw
module-nopdata-x-module-siw-v6|module:send_private_data=N|module:$(kb 16)|siw
module-x-module-v3|module:-|module:-|rxe
module-x-module-v40|module:-|module:-|rxe
module-x-module-v41|module:-|module:-|rxe"


# short HEX: the table's form of captured private data, first 8 octets /
# length ("none/0" for none).
short() {
	case "$1" in
	- | "") echo "none/0" ;;
	*) echo "${1:0:16}/$((${#1} / 2))" ;;
	esac
}
# says JSON SIDE: the oracle's side in the table's "says" form,
# SOURCE:SEND/RECV/RI ("-" where the source shows nothing).
says() {
	echo "$1" | jq -r --arg s "$2" '.[$s] |
		if .reports == "none" then "none:-/-/-"
		else "\(.reports):\(.send_threshold)/\(.recv_threshold)/\(if .reports_ri then (if .remote_invalidation then 1 else 0 end) else "-" end)"
		end'
}
# expect_matches DESC SERVER CLIENT TRANSPORT REQ REP CLIENT_SAYS SERVER_SAYS:
# two results, the wire and the sides.
expect_matches() {
	local desc=$1 j wire sides
	if ! j=$(python3 "$ORACLE" expect --server "$2" --client "$3" --transport "$4" 2>&1); then
		tap_result "$desc: REQ and REP as expected" fail "oracle failed: $(echo "$j" | tail -1)"
		tap_result "$desc: client and server values as expected" fail "oracle failed"
		return
	fi
	wire="$(short "$(echo "$j" | jq -r .client.wire)") $(short "$(echo "$j" | jq -r .server.wire)")"
	if [ "$wire" = "$5 $6" ]; then
		tap_result "$desc: REQ and REP as expected" ok
	else
		tap_result "$desc: REQ and REP as expected" fail "oracle REQ REP '$wire', want '$5 $6'"
	fi
	sides="$(says "$j" client) $(says "$j" server)"
	if [ "$sides" = "$7 $8" ]; then
		tap_result "$desc: client and server values as expected" ok
	else
		tap_result "$desc: client and server values as expected" fail "oracle client server '$sides', want '$7 $8'"
	fi
}

# 1. The measured rows.
n=0
while read -r name tr _fam _nfs req rep _expected csays ssays _verdict; do
	spec=$(echo "$SPECS" | grep "^$name|")
	IFS='|' read -r _ server client stran <<<"$spec"
	if [ -z "$spec" ] || [ "$stran" != "$tr" ]; then
		tap_result "measured $name: configuration known" fail "no spec for $name on $tr"
		continue
	fi
	expect_matches "measured $name" "$server" "$client" "$tr" "$req" "$rep" "$csays" "$ssays"
	n=$((n + 1))
done <<<"$MEASURED"
[ "$n" = 21 ] && tap_result "all 21 measured rows compared" ok || tap_result "all 21 measured rows compared" fail "$n rows"

# 2. The copied configurations are scripts/guest/interop.sh's for those names.
rows_now() {
	local block
	block=$(awk '/^K16S=/ { on = 1 } on { print } on && /^ROWS=/ { r = 1 } r && /"$/ { exit }' "$top/scripts/guest/interop.sh")
	[ -n "$block" ] || return 1
	(eval "$block" && printf '%s\n' "$ROWS")
}
if now=$(rows_now) && [ -n "$now" ]; then
	bad=
	while IFS='|' read -r name server client tr; do
		cur=$(echo "$now" | grep "^$name|" | cut -d'|' -f1-4)
		[ "$cur" = "$name|$server|$client|$tr" ] || bad="$bad $name(${cur:-gone})"
	done <<<"$SPECS"
	if [ -z "$bad" ]; then
		tap_result "the measured rows' configurations are scripts/guest/interop.sh's ROWS" ok
	else
		tap_result "the measured rows' configurations are scripts/guest/interop.sh's ROWS" fail \
			"changed since the measurement:$bad"
	fi
else
	tap_result "the measured rows' configurations are scripts/guest/interop.sh's ROWS" fail "cannot read ROWS from scripts/guest/interop.sh"
fi

# 3. Worked examples, by hand from RFC 8797 3.1 (send = min(own send, peer
# recv), recv = min(own recv, peer send)), 3.2, 4.2 (code = size/1024 - 1)
# and the documented defaults (client 4096/4096, server 4096; module sizes
# rounded down to 1 KB and capped at 65536).
a_s=module:responder_send_size=8192,responder_recv_size=2048
a_c=module:requester_send_size=16384,requester_recv_size=1024
# client advertises 16384/1024 (0f 00), server 8192/2048 (07 01):
# client send min(16384, 2048), recv min(1024, 8192);
# server send min(8192, 1024), recv min(2048, 16384).
expect_matches "asymmetric sizes, rxe" "$a_s" "$a_c" rxe \
	f6ab0e1801010f00/56 f6ab0e1801010701/196 debugfs:2048/1024/1 debugfs:1024/2048/1
expect_matches "asymmetric sizes, siw" "$a_s" "$a_c" siw \
	f6ab0e1801010f00/8 f6ab0e1801010701/8 debugfs:2048/1024/1 debugfs:1024/2048/1
# client 5000 -> 4096 (03), 65535 -> 64512 (3e); server 65536 both, its
# receive size advertised as min(65536, the client's 4096 send) (RFC
# 8797 section 3.1; admin guide, responder_recv_size): REP 3f 03;
# client send min(4096, 4096), recv min(64512, 65536);
# server send min(65536, 64512), recv min(4096, 4096).
expect_matches "rounding down to whole KB" module:"$(kb 64)" \
	module:requester_send_size=5000,requester_recv_size=65535 rxe \
	f6ab0e180101033e/56 f6ab0e1801013f03/196 debugfs:4096/64512/1 debugfs:64512/4096/1
# client 2048/8192 (01 07) against a stock server (flags 0, 4096 both):
# client send min(2048, 4096), recv min(8192, 4096), RI off (server flag 0);
# the stock server uses Send With Invalidate as the client offered it.
expect_matches "asymmetric client, stock server" stock \
	module:requester_send_size=2048,requester_recv_size=8192 rxe \
	f6ab0e1801010107/56 f6ab0e1801000303/196 debugfs:2048/4096/0 none:-/-/-
# A patched server (no module) advertises RI (rxe can invalidate) and
# its sc_max_req_size (4096) both ways; it limits Replies to min(4096, the
# client's 4096), receives into 4096, and uses RI only if the client
# offered it: here not, so neither side has it.
expect_matches "client without RI, patched server" patched module:remote_invalidation=N rxe \
	f6ab0e1801000303/56 f6ab0e1801010303/196 debugfs:4096/4096/0 trace:4096/4096/0
# A 1 KB client (01 00 00) against a patched server: the server's Replies
# are limited to min(4096, 1024); RI both ways (both flags, rxe).
expect_matches "1 KB client, patched server" patched module:requester_send_size=1024,requester_recv_size=1024 rxe \
	f6ab0e1801010000/56 f6ab0e1801010303/196 debugfs:1024/1024/1 trace:1024/4096/1
# The same client against a stock server: flags 0, Replies not limited
# (send 0), Send With Invalidate used though the server said it does not.
expect_matches "1 KB client, stock server" stock module:requester_send_size=1024,requester_recv_size=1024 rxe \
	f6ab0e1801010000/56 f6ab0e1801000303/196 debugfs:1024/1024/0 none:-/-/-
expect_matches "client without RI, module server" module:- module:remote_invalidation=N rxe \
	f6ab0e1801000303/56 f6ab0e1801010303/196 debugfs:4096/4096/0 debugfs:4096/4096/0
expect_matches "server without RI" module:remote_invalidation=N module:- siw \
	f6ab0e1801010303/8 f6ab0e1801000303/8 debugfs:4096/4096/0 debugfs:4096/4096/0
# server 4096/1024 (03 00) against a stock client (4096/4096, RI):
# client send min(4096, 1024), recv min(4096, 4096);
# server send min(4096, 4096), recv min(1024, 4096).
expect_matches "small server receive, stock client" module:responder_recv_size=1024 stock siw \
	f6ab0e1801010303/8 f6ab0e1801010300/8 inline_thresh:1024/4096/- debugfs:4096/1024/1
# Neither sends: both take the other as 1024/1024 without RI; the module
# server holds a client that sent nothing to its own send size, here RFC
# 8797's 1024 since it sent nothing either.
expect_matches "nothing sent either way, rxe" module:send_private_data=N module:send_private_data=N rxe \
	0000000000000000/56 0000000000000000/196 debugfs:1024/1024/0 debugfs:1024/1024/0
expect_matches "nothing sent either way, siw" module:send_private_data=N module:send_private_data=N siw \
	none/0 none/0 debugfs:1024/1024/0 debugfs:1024/1024/0
# A patched client without the module is stock on the wire; against a
# module server at 16 KB it traces min(4096, 16384) both ways and RI; the
# server advertises receive min(16384, the client's 4096 send): REP 0f 03.
expect_matches "patched client, module server 16 KB" module:"$k16s" patched rxe \
	f6ab0e1801010303/56 f6ab0e1801010f03/196 trace:4096/4096/1 debugfs:4096/4096/1
# The base does not change the rules (7.3 is 6.12 here).
expect_matches "cross-base spec" module@7.3:- stock@6.12 rxe \
	f6ab0e1801010303/56 f6ab0e1801010303/196 inline_thresh:4096/4096/- debugfs:4096/4096/1

# 4. What the module refuses (-ERANGE: the load fails) and other bad specs.
for bad in "module:-|module:requester_send_size=1023|rxe" "module:-|module:requester_recv_size=65537|rxe" \
	"module:responder_recv_size=262144|module:-|rxe" \
	"module:responder_send_size=512|module:-|rxe" "module:-|module:frobnicate=1|rxe" \
	"module:-|module:remote_invalidation=maybe|rxe" "stock:requester_send_size=4096|module:-|rxe" \
	"vanilla|module:-|rxe" "module:-|module:-|ib"; do
	IFS='|' read -r s c t <<<"$bad"
	err=$(python3 "$ORACLE" expect --server "$s" --client "$c" --transport "$t" 2>&1 >/dev/null)
	rc=$?
	# A size out of range must be refused for that reason, not for a
	# typo in the spec.
	case "$bad" in
	module*_size=*) want="the module refuses it (-ERANGE)" ;;
	*"|ib") want="invalid choice" ;;
	*) want="rfc8797_oracle:" ;;
	esac
	if [ $rc = 2 ] && [[ $err == *"$want"* ]]; then
		tap_result "refused: $bad" ok
	else
		tap_result "refused: $bad" fail "exit $rc, want 2 and '$want' ($err)"
	fi
done

# 5. The decoder: HEX|CONFORMANCE|SEND/RECV/RI the receiver assumes|RESERVED
DECODE_CASES="|absent|1024/1024/false|-
-|absent|1024/1024/false|-
f6|short|1024/1024/false|-
f6ab0e18010103|short|1024/1024/false|-
0000000000000000|zeroed|1024/1024/false|-
000000|zeroed|1024/1024/false|-
$(printf '0%.0s' $(seq 112))|zeroed|1024/1024/false|-
180eabf601010303|bad_magic|1024/1024/false|-
f6ab0e1901010303|bad_magic|1024/1024/false|-
f6ab0e1800010303|unknown_version|1024/1024/false|-
f6ab0e1802010303|unknown_version|1024/1024/false|-
f6ab0e18ff010303|unknown_version|1024/1024/false|-
f6ab0e1801000000|ok|1024/1024/false|0
f6ab0e1801010303|ok|4096/4096/true|0
f6ab0e1801013f3f|ok|65536/65536/true|0
f6ab0e180101ffff|ok|262144/262144/true|0
f6ab0e1801010300|ok|4096/1024/true|0
f6ab0e18010000ff|ok|1024/262144/false|0
f6ab0e1801020303|ok|4096/4096/false|2
f6ab0e18010e0303|ok|4096/4096/false|14
f6ab0e1801ff0303|ok|4096/4096/true|254
f6ab0e1801010f0f$(printf '0%.0s' $(seq 96))|ok|16384/16384/true|0
f6ab0e1801010303ff|ok|4096/4096/true|0
f6:ab:0e:18:01:01:03:03|ok|4096/4096/true|0"
while IFS='|' read -r hex want_c want_v want_r; do
	got=$(python3 "$ORACLE" decode "$hex" 2>&1 |
		jq -r '"\(.conformance)|\(.peer.send)/\(.peer.recv)/\(.peer.remote_invalidation)|\(.message.reserved_flags // "-")"' 2>&1)
	what="decode '$(short "$(echo "$hex" | tr -d :)")' ($want_c)"
	[ "$got" = "$want_c|$want_v|$want_r" ] && tap_result "$what" ok ||
		tap_result "$what" fail "got '$got', want '$want_c|$want_v|$want_r'"
done <<<"$DECODE_CASES"
for bad in zz f6a; do
	python3 "$ORACLE" decode "$bad" >/dev/null 2>&1
	rc=$?
	[ $rc = 2 ] && tap_result "decode refuses '$bad'" ok || tap_result "decode refuses '$bad'" fail "exit $rc, want 2"
done

# negotiate: the guests' reconciler (peer_lib.sh) feeds one line per
# connection: this side's send/recv/RI, the octets it received. Worked by
# hand from RFC 8797 3.1/3.2: send = min(own send, peer recv), recv =
# min(own recv, peer send), RI only when both set it; the defaults
# (1024/1024, no RI) for what does not conform.
NEGOTIATE_IN='65536 16384 1 f6ab0e1801010f03
65536 16384 1 f6ab0e1801010307
8192 2048 1 f6ab0e18010100ff
8192 2048 0 f6ab0e1801013f3f
65536 16384 1 -
65536 16384 1 0000000000000000
65536 16384 1 f6ab0e18010103
65536 16384 1 180eabf601010303
65536 16384 1 f6ab0e1802010303
65536 16384 1 f6ab0e1801030f0f'
NEGOTIATE_WANT='ok 0 4096 16384 on
ok 0 8192 4096 on
ok 0 8192 1024 on
ok 0 8192 2048 off
absent 0 1024 1024 off
zeroed 0 1024 1024 off
short 0 1024 1024 off
bad_magic 0 1024 1024 off
unknown_version 0 1024 1024 off
ok 2 16384 16384 on'
got=$(echo "$NEGOTIATE_IN" | python3 "$ORACLE" negotiate 2>&1)
if [ "$got" = "$NEGOTIATE_WANT" ]; then
	tap_result "negotiate: ten connections, asymmetric sizes both ways, each non-conformance" ok
else
	tap_result "negotiate: ten connections, asymmetric sizes both ways, each non-conformance" fail \
		"got: $(echo "$got" | paste -sd ';'), want: $(echo "$NEGOTIATE_WANT" | paste -sd ';')"
fi
for bad in "4096 4096 2 -" "4096 x 1 -" "4096 4096 1"; do
	echo "$bad" | python3 "$ORACLE" negotiate >/dev/null 2>&1
	rc=$?
	[ $rc = 2 ] && tap_result "negotiate refuses '$bad'" ok || tap_result "negotiate refuses '$bad'" fail "exit $rc, want 2"
done

echo "KTAP version 1"
tap_finish
