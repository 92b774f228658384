#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The interop matrix: pairs of guests (server and client, each with its own
# kernel: the patched test kernel, with or without rpcrdma_cm, or the stock
# kernel of scripts/kernel/build-kernel.sh stock) over soft-RoCE or soft-iWARP,
# IPv4 or IPv6, with NFSv3, 4.0, 4.1 or 4.2.
#
#   scripts/guest/interop.sh [--cut | --full] [--rows NAME,NAME...] [--list]
#                      [--recheck DIR]
#
# --cut (the default) runs the rows 'make check' runs on one base, --cross
# the rows that pair the 6.12 and 7.3 bases (make check runs them too),
# --full every row ('make interop'); --rows only the rows named; --list
# prints the rows.
# --recheck DIR boots nothing: it judges the rows' files kept in DIR/NAME
# by an earlier run (INTEROP_KEEP=DIR), e.g. after corrupting one of them
# to see a check fail.
# For each row the client mounts the server over RDMA and writes and reads
# back byte-exact (O_DIRECT, checked on the server's export too) files
# below, at and above every threshold; the server captures the connection
# setup. The expected values come from the rows' configuration: the
# oracle (selftests/rpcrdma_cm/rfc8797_oracle.py judge, below) computes what
# each end advertises and applies; the REQ and REP private data decoded from
# the capture (IB CM MADs on rxe, MPA Request/Reply on siw) must match it,
# and each end's own report (debugfs with rpcrdma_cm loaded, else the
# rpcrdma:*_cm_private tracepoints, else on the stock kernel
# xprtrdma_inline_thresh) must agree; each guest must run the kernel its
# side names; rows of CONFORM_CUT (every row with --full) also run
# rpcrdma-cm conform from the client against the server, judged by
# selftests/rpcrdma_cm/conform_expect.sh. Prints KTAP (four results per
# row, five for a conform row) and the matrix as a table, also written to
# $INTEROP_TABLE (default build/check/interop-table.txt).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

kdir=${KDIR:-$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)}
stock_kdir=${STOCK_KDIR:-$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir stock)}
KSFT_DIR=$kdir/tools/testing/selftests
# shellcheck source=/dev/null
. "$KSFT_DIR/kselftest/ktap_helpers.sh"
T=$RPCRDMA_CM_TOP/selftests/rpcrdma_cm
# shellcheck source=../../selftests/rpcrdma_cm/lib.sh
. "$T/lib.sh"
# shellcheck source=../../selftests/rpcrdma_cm/conform_expect.sh
. "$T/conform_expect.sh"
TOOL=${RPCRDMA_CM_TOOL:-$RPCRDMA_CM_TOP/tools/target/release/rpcrdma-cm}
TIMEOUT=${TWO_GUEST_TIMEOUT:-420}
TABLE=${INTEROP_TABLE:-$RPCRDMA_CM_TOP/build/check/interop-table.txt}

# The rows: NAME|SERVER|CLIENT|TRANSPORT|FAMILY|NFS|IN
# SERVER and CLIENT: KERNEL[@BASE][:PARAMS], KERNEL "stock" (no series, no
# module) or "patched" (no module) or "module" (patched + rpcrdma_cm with
# PARAMS, "-" for its defaults; spaces in PARAMS as commas); BASE the kernel
# base of that side (6.12 or 7.3; default RPCRDMA_CM_KBASE), so that a row
# can pair the two bases. IN: "cut" rows run in make check and make
# interop, "full" rows only in make interop.
K16S=responder_send_size=16384,responder_recv_size=16384
K16C=requester_send_size=16384,requester_recv_size=16384
# Sizes that are not a whole KB, and the largest the module takes (65536,
# what the transports allocate; RFC 8797's format would carry 256 KB):
# 5000 is advertised as 4 KB, 65535 as 63 KB (the rows
# module-odd-x-module-big and its mirror).
ODD=responder_send_size=5000,responder_recv_size=5000,requester_send_size=5000,requester_recv_size=5000
kb() {
	local b=$(($1 * 1024))
	echo "responder_send_size=$b,responder_recv_size=$b,requester_send_size=$b,requester_recv_size=$b"
}
ROWS="stock-x-module|stock|module:-|rxe|4|4.2|cut
stock-x-module16k|stock|module:$K16C|rxe|4|4.2|full
module-x-stock|module:-|stock|rxe|4|4.2|full
module16k-x-stock|module:$K16S|stock|rxe|4|4.2|cut
stock-x-module1k|stock|module:$(kb 1)|rxe|4|4.2|cut
stock-x-module2k|stock|module:$(kb 2)|rxe|4|4.2|full
module1k-x-stock|module:$(kb 1)|stock|rxe|4|4.2|cut
module2k-x-stock|module:$(kb 2)|stock|rxe|4|4.2|full
module-x-module-1k|module:$(kb 1)|module:$(kb 1)|rxe|4|4.2|full
module-x-module-4k|module:$(kb 4)|module:$(kb 4)|rxe|4|4.2|full
module-x-module-16k|module:$(kb 16)|module:$(kb 16)|rxe|4|4.2|full
module-x-module-64k|module:$(kb 64)|module:$(kb 64)|rxe|4|4.2|full
module-nopdata-x-module|module:send_private_data=N|module:-|rxe|4|4.2|full
module-x-module-nopdata|module:-|module:send_private_data=N|rxe|4|4.2|full
patched-x-patched|patched|patched|rxe|4|4.2|full
module-asym-x-module-asym|module:responder_send_size=16384,responder_recv_size=8192|module:requester_send_size=32768,requester_recv_size=4096|rxe|4|4.2|cut
module-asymown-x-module-asymown|module:responder_send_size=16384,responder_recv_size=8192|module:requester_send_size=4096,requester_recv_size=32768|rxe|4|4.2|full
module-x-module-siw|module:-|module:-|siw|4|4.2|full
module-asym-x-module-asym-siw|module:responder_send_size=16384,responder_recv_size=8192|module:requester_send_size=32768,requester_recv_size=4096|siw|4|4.2|full
module-x-stock-siw|module:-|stock|siw|4|4.0|full
stock-x-module-siw|stock|module:-|siw|4|4.2|full
module-x-module-v6|module:-|module:-|rxe|6|4.2|full
module-x-module-64k-v6|module:$(kb 64)|module:$(kb 64)|rxe|6|4.1|full
module-x-module-siw-v6|module:-|module:-|siw|6|4.2|full
module-nopdata-x-module-siw-v6|module:send_private_data=N|module:$(kb 16)|siw|6|3|cut
module-odd-x-module-big|module:$ODD|module:requester_send_size=65536,requester_recv_size=65535|rxe|4|4.2|cut
module-big-x-module-odd|module:responder_send_size=65535,responder_recv_size=65536|module:$ODD|rxe|4|4.2|full
module-x-module-v3|module:-|module:-|rxe|4|3|full
module-x-module-v40|module:-|module:-|rxe|4|4.0|full
module-x-module-v41|module:-|module:-|rxe|4|4.1|full
stock7.3-x-stock6.12|stock@7.3|stock@6.12|rxe|4|4.2|full
module7.3-x-stock6.12|module@7.3:-|stock@6.12|rxe|4|4.2|cross
stock7.3-x-module6.12|stock@7.3|module@6.12:-|rxe|4|4.2|full
module6.12-x-stock7.3|module@6.12:-|stock@7.3|rxe|4|4.2|cross
stock6.12-x-module7.3|stock@6.12|module@7.3:-|rxe|4|4.2|full"

which='cut' only='' list=0 recheck=''
while [ $# -gt 0 ]; do
	case "$1" in
	--cut) which='cut'; shift ;;
	--cross) which=cross; shift ;;
	--full) which=full; shift ;;
	--rows) only=$2; shift 2 ;;
	--list) list=1; shift ;;
	--recheck) recheck=$2; shift 2 ;;
	*) rpcrdma_cm_die "unknown argument $1 (--cut, --cross, --full, --rows NAME,..., --list, --recheck DIR)" ;;
	esac
done
selected=()
while IFS= read -r row; do
	name=${row%%|*}
	if [ -n "$only" ]; then
		case ",$only," in *",$name,"*) ;; *) continue ;; esac
	elif [ "$which" != full ] && [ "${row##*|}" != "$which" ]; then
		continue
	fi
	selected+=("$row")
done <<<"$ROWS"
if [ $list = 1 ]; then
	printf '%s\n' "${selected[@]}" | tr '|' ' '
	exit 0
fi
[ ${#selected[@]} -gt 0 ] || rpcrdma_cm_die "no row selected (--list shows them)"

# The rows whose client also runs rpcrdma-cm conform against the server in
# the cut (with --full: every row): servers the single-guest conform_tool.sh
# does not meet (1 KB; 16 KB send and 8 KB receive; no private data, over
# siw and IPv6).
CONFORM_CUT="module1k-x-stock module-asym-x-module-asym module-nopdata-x-module-siw-v6"
conform_row() {
	[ "$which" = full ] || [[ " $CONFORM_CUT " == *" $1 "* ]]
}

# side_kind SPEC, side_base SPEC: "stock", "patched" or "module", and the
# kernel base of a side.
side_kind() {
	local k=${1%%:*}
	echo "${k%@*}"
}
side_base() {
	local k=${1%%:*}
	case "$k" in *@*) echo "${k#*@}" ;; *) echo "$RPCRDMA_CM_KBASE" ;; esac
}
# side_kdir SPEC / side_ko SPEC / side_params SPEC: the kernel tree, the
# module and the module parameters ("" none, "-" defaults) of a side.
side_kdir() {
	local base
	base=$(side_base "$1")
	if [ "$base" = "$RPCRDMA_CM_KBASE" ]; then
		case "$(side_kind "$1")" in stock) echo "$stock_kdir" ;; *) echo "$kdir" ;; esac
		return
	fi
	case "$(side_kind "$1")" in
	stock) RPCRDMA_CM_KBASE=$base "$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir stock ;;
	*) RPCRDMA_CM_KBASE=$base "$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir ;;
	esac
}
side_ko() {
	module_ko "$(side_base "$1")"
}
side_params() {
	case "$1" in
	module*:*) echo "${1#*:}" | tr ',' ' ' ;;
	*) echo "" ;;
	esac
}

# --recheck boots nothing: it needs no kernel, module or tool.
[ -n "$recheck" ] || for row in "${selected[@]}"; do
	IFS='|' read -r name server client _ <<<"$row"
	for spec in "$server" "$client"; do
		f=$(side_kdir "$spec")/arch/x86/boot/bzImage
		[ -f "$f" ] || rpcrdma_cm_die "$f missing ($name: $spec): build that base's kernels" \
			"('make KBASE=$(side_base "$spec") kernel', scripts/kernel/build-kernel.sh stock)"
		[ "$(side_kind "$spec")" != module ] || [ -f "$(side_ko "$spec")" ] ||
			rpcrdma_cm_die "$(side_ko "$spec") missing ($name): run 'make KBASE=$(side_base "$spec") module'"
	done
done
[ -n "$recheck" ] || [ -x "$TOOL" ] || rpcrdma_cm_die "$TOOL missing: run 'make tools'"

TOPW=$(mktemp -d /tmp/rpcrdma-cm-interop.XXXXXX)
cleanup() {
	guest_pair_kill
	[ -n "${KEEP_TWO_GUEST_DIR:-}" ] || rm -rf "$TOPW"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run_row DIR SERVER CLIENT TRANSPORT FAMILY NFS CONFORM: both guests on a
# fresh link (CONFORM 1: the client runs rpcrdma-cm conform at the end).
run_row() {
	local d=$1 genv server_cmd client_cmd
	genv=("KSFT_DIR=$KSFT_DIR"
		"TWO_GUEST_WAIT=$((TIMEOUT - 60))" "INTEROP_TRANSPORT=$4"
		"INTEROP_FAMILY=$5" "INTEROP_NFS_VERS=$6" "INTEROP_CONFORM=$7")
	# shellcheck disable=SC2034 # read by guest_pair through namerefs
	server_cmd=(env "${genv[@]}" "RPCRDMA_CM_KO=$(side_ko "$2")" "$T/interop_server.sh" "$d" "$(side_params "$2")")
	# shellcheck disable=SC2034 # read by guest_pair through namerefs
	client_cmd=(env "${genv[@]}" "RPCRDMA_CM_KO=$(side_ko "$3")" "$T/interop_client.sh" "$d" "$(side_params "$3")")
	guest_pair "$d" iop 52:54:00:00:04 "$TIMEOUT" "$(side_kdir "$2")" "$(side_kdir "$3")" server_cmd client_cmd
}

# The judge of the negotiation: selftests/rpcrdma_cm/rfc8797_oracle.py, written
# from the RFC text and the documented behaviour of the stock and patched
# kernels and the module's parameters, not from rust/proto or the module: a
# row's expected values come from its configuration alone.
# scripts/tests/rfc8797-oracle.sh checks the oracle against the measured
# table in Documentation/testing.rst, scripts/tests/interop-judge.sh its
# judge against small kept rows.
ORACLE=${RPCRDMA_CM_ORACLE:-$T/rfc8797_oracle.py}

# tool_info HEX: rpcrdma-cm's own decoding, printed for information on a
# disagreement; not part of any judgement.
tool_info() {
	local h=$1
	[ "$h" = - ] && h=
	"$TOOL" decode --json "$h" 2>/dev/null | jq -r '.conformance' 2>/dev/null || echo "?"
}

# The table, one line per row; the judge's cells of the current row.
declare -a table=() cells=()
fmt='%-30s %-4s %-3s %-4s %-20s %-20s %-28s %-24s %-24s %s'
header=$(printf "$fmt" pair tran fam nfs "REQ bytes" "REP bytes" "expected client|server" "client says" "server says" verdict)

# The number of files a row's client round-trips (interop_lib.sh's
# INTEROP_SIZES, which interop_client.sh writes).
INTEROP_FILES=$(. "$T/interop_lib.sh" && echo "$INTEROP_SIZES" | wc -w)
[ "${INTEROP_FILES:-0}" -gt 0 ] || rpcrdma_cm_die "$T/interop_lib.sh: no INTEROP_SIZES"
# data_exact NAME DIR: the client mounted over RDMA, its INTEROP_FILES
# files read back byte-exact, and the server's export holds what the
# client wrote.
data_exact() {
	local name=$1 d=$2 n bad=0
	[ -e "$d/client-mounted" ] || { ktap_print_msg "$name: not mounted: $(cat "$d/client-error" 2>/dev/null)"; return 1; }
	grep -q "proto=rdma" "$d/client-mount-options" ||
		{ ktap_print_msg "$name: mount options $(cat "$d/client-mount-options")"; return 1; }
	n=$(grep -c ' ok$' "$d/client-data")
	if [ "$n" != "$INTEROP_FILES" ]; then
		ktap_print_msg "$name: $n of $INTEROP_FILES files round-tripped: $(grep -v ' ok$' "$d/client-data" | tr '\n' ' ')"
		bad=1
	fi
	if [ ! -s "$d/server-sums" ] || ! diff <(sort -k2 "$d/client-sums") <(sort -k2 "$d/server-sums") >/dev/null; then
		ktap_print_msg "$name: the server's export differs from what the client wrote"
		diff <(sort -k2 "$d/client-sums") <(sort -k2 "$d/server-sums" 2>/dev/null) | head -5 | sed 's/^/# /'
		bad=1
	fi
	return $bad
}

# sends_as_negotiated NAME DIR SERVER CLIENT TRANSPORT FAMILY: on the
# wire (the server's capture), every SEND message each side sent
# is within the send threshold RFC 8797 gives it for the row's
# configuration (the oracle's expect, not either side's report): the
# client's Calls within min(its send size, the server's receive size),
# the server's Replies within min(its send size, the client's receive
# size). A stock server's Replies are not held to the client's receive
# size (the oracle gives 0, the defect the series fixes): that direction
# is not judged, and said. The client's mountstats count no bad reply
# (an ERR_CHUNK or a malformed Reply). On rxe the SENDs are RoCEv2 RC
# packets, on siw RDMAP Send messages over MPA/TCP (send_sizes).
sends_as_negotiated() {
	local name=$1 d=$2 exp side limit addr out n max resent ok=0 bad
	bad=$(mountstats_rdma "$d/client-mountstats" 20)
	if [ -z "$bad" ]; then
		ktap_print_msg "$name: no RDMA transport in the client's mountstats"
		ok=1
	elif [ "$bad" != 0 ]; then
		ktap_print_msg "$name: the client's mountstats count $bad bad replies"
		ok=1
	fi
	exp=$(python3 "$ORACLE" expect --server "$3" --client "$4" --transport "$5") ||
		{ ktap_print_msg "$name: the oracle refuses the row"; return 1; }
	for side in client server; do
		limit=$(jq -r ".$side.send_threshold" <<<"$exp")
		addr=$(. "$T/interop_lib.sh" && INTEROP_FAMILY=$6 interop_addr "$side")
		if [ "$side" = server ] && [ "$(jq -r .server.kernel <<<"$exp")" = stock ]; then
			ktap_print_msg "$name: the stock server's SENDs not judged (it does not hold its Replies to the client's receive size)"
			continue
		fi
		if ! [[ $limit =~ ^[1-9][0-9]*$ ]]; then
			ktap_print_msg "$name: the oracle gives the $side no send threshold ('$limit')"
			ok=1
			continue
		fi
		out=$(send_sizes "$d/server.pcap" "$addr" "$5" 2>&1) || { ktap_print_msg "$name: $out"; ok=1; continue; }
		read -r n max resent <<<"$out"
		ktap_print_msg "$name: the $side sent $n SEND messages, the largest $max octets (its threshold $limit; $resent packets resent)"
		if ! [[ "$n $max" =~ ^[0-9]+\ [0-9]+$ ]] || [ "$n" -eq 0 ] || [ "$max" -gt "$limit" ]; then
			ok=1
		fi
	done
	return $ok
}

# negotiation NAME DIR SERVER CLIENT TRANSPORT: the oracle judges the REQ/REP
# on the wire (octets, lengths, zero padding) and each side's values (debugfs,
# tracepoint, xprtrdma_inline_thresh) against the row's configuration; its
# findings as KTAP messages, its table cells into cells.
negotiation() {
	local j rc=0 err=$TOPW/judge.err m
	j=$(python3 "$ORACLE" judge "$2" --name "$1" --server "$3" --client "$4" --transport "$5" 2>"$err") || rc=$?
	while IFS= read -r m; do ktap_print_msg "$m"; done <"$err"
	mapfile -t cells < <(jq -r '.cells | .req, .rep, .expected, .client_says, .server_says, .verdict' <<<"$j" 2>/dev/null)
	if [ ${#cells[@]} != 6 ]; then
		cells=("?" "?" "?" "?" "?" "FAIL: judge (exit $rc)")
		return 1
	fi
	if [ $rc != 0 ] && [ -x "$TOOL" ] && [ "$(jq -r .req <<<"$j")" != none ]; then
		ktap_print_msg "$1: for information (not judged), rpcrdma-cm decodes" \
			"REQ as $(tool_info "$(jq -r .req <<<"$j")"), REP as $(tool_info "$(jq -r .rep <<<"$j")")"
	fi
	return $rc
}

# logs_clean NAME DIR: both transports torn down (guest_side_clean), then
# both kernel logs and consoles clean, both guest scripts finished.
logs_clean() {
	local name=$1 d=$2 side ok=0 rc end
	for side in server client; do
		guest_side_clean "$d" $side "$name $side" || ok=1
		rc=$(cat "$d/$side-exit" 2>/dev/null)
		end='server-done'; [ $side = client ] && end='client-finished'
		if [ "$rc" != 0 ] || [ ! -e "$d/$end" ]; then
			ktap_print_msg "$name $side guest: exit ${rc:-unknown}, script $([ -e "$d/$end" ] && echo finished || echo "did not finish"): $(cat "$d/$side-error" 2>/dev/null)"
			ok=1
		fi
	done
	return $ok
}

# kernels_as_specified NAME DIR SERVER CLIENT: each guest ran the kernel its
# side names: the base from the release it reports (uname -r), stock or
# patched from what it has (the series' tracepoints), seen from inside.
kernels_as_specified() {
	local name=$1 d=$2 side spec kind base release has ok=0
	for side in server client; do
		if [ $side = server ]; then spec=$3; else spec=$4; fi
		kind=$(side_kind "$spec") base=$(side_base "$spec")
		release=$(cat "$d/$side-release" 2>/dev/null)
		has=$(cat "$d/$side-kernel" 2>/dev/null)
		case "$release" in
		"$base".*) ;;
		*) ktap_print_msg "$name $side: booted '${release:-nothing}', the row wants $base"; ok=1 ;;
		esac
		if { [ "$kind" = stock ] && [ "$has" != stock ]; } || { [ "$kind" != stock ] && [ "$has" != patched ]; }; then
			ktap_print_msg "$name $side: the kernel is '${has:-unknown}', the row wants $kind"
			ok=1
		fi
	done
	return $ok
}

# conform_as_expected NAME DIR SERVER TRANSPORT: rpcrdma-cm conform from the
# client against the server gives the checks and verdicts conform_expect.sh
# gives for the server's configuration.
conform_as_expected() {
	local name=$1 d=$2 tr=$4 kind send=4096 message=yes strict=no p id got want fails=0 unknown=0 ok=0 rc
	local -A verdicts
	local json=$d/client-conform.json
	kind=$(side_kind "$3")
	[ "$kind" = patched ] && kind=series
	for p in $(side_params "$3"); do
		case $p in
		responder_send_size=*) send=${p#*=} ;;
		send_private_data=N) message=no ;;
		nonconforming_requester_1k=Y) strict=yes ;;
		esac
	done
	if [ ! -s "$json" ]; then
		ktap_print_msg "$name: no conform report: $(head -c 300 "$d/client-conform.err" 2>/dev/null)"
		return 1
	fi
	conform_read_verdicts "$json" got verdicts
	want=$(conform_check_ids "$tr" $message | tr ' ' '\n' | paste -sd ' ')
	[ "$got" = "$want" ] || { ktap_print_msg "$name: conform made '$got', want '$want'"; ok=1; }
	for id in $(conform_check_ids "$tr" $message); do
		want=$(conform_expected "$kind" "$tr" "$id" "$send" $message $strict)
		got=${verdicts[$id]:-}
		case $want in fail | xfail) fails=$((fails + 1)) ;; esac
		[ "$want" = could_not_tell ] && unknown=$((unknown + 1))
		if [ "$got" != "$want" ]; then
			ktap_print_msg "$name: conform $id: ${got:-missing}, want $want;" \
				"$(jq -r --arg id "$id" '.checks[] | select(.id == $id) | "sent \(.sent); got \(.got)"' "$json")"
			ok=1
		fi
	done
	rc=$(cat "$d/client-conform.rc" 2>/dev/null)
	[ "$rc" = "$(conform_exit $fails $unknown)" ] ||
		{ ktap_print_msg "$name: conform exit ${rc:-?} with $fails expected failures, $unknown could not tell"; ok=1; }
	[ $ok = 0 ] && ktap_print_msg "$name: conform $(jq -r '"\(.pass) pass, \(.fail) fail, \(.not_applicable) n/a, \(.could_not_tell) could not tell"' "$json"), as expected"
	return $ok
}

# row_checks NAME DIR SERVER CLIENT TRANSPORT FAMILY NFS: the row's results
# (ktap_test_result's own status is always 0: each check's is kept) and its
# line of the table.
row_checks() {
	local name=$1 d=$2 server=$3 client=$4 tr=$5 rc verdict
	rc=0 && data_exact "$name" "$d" || rc=$?
	sends_as_negotiated "$name" "$d" "$server" "$client" "$tr" "$6" || rc=1
	ktap_test_result "$name: NFS $7 over $tr IPv$6 mounted, $INTEROP_FILES files (512 octets..256 KiB, around each threshold) byte-exact both ways, each SEND on the wire within its sender's threshold, no bad reply" test $rc = 0
	rc=0 && negotiation "$name" "$d" "$server" "$client" "$tr" || rc=$?
	ktap_test_result "$name: the REQ/REP on the wire and both ends' values are what RFC 8797 and the row's configuration give (rfc8797_oracle.py)" test $rc = 0
	verdict=${cells[5]}
	rc=0 && logs_clean "$name" "$d" || rc=$?
	ktap_test_result "$name: both transports torn down, then both kernel logs and consoles clean, both guests ended cleanly" test $rc = 0
	[ $rc = 0 ] || verdict="$verdict, log/guest FAIL"
	rc=0 && kernels_as_specified "$name" "$d" "$server" "$client" || rc=$?
	ktap_test_result "$name: each guest booted the kernel its side names (base, stock or patched)" test $rc = 0
	[ $rc = 0 ] || verdict="$verdict, kernel FAIL"
	if conform_row "$name"; then
		rc=0 && conform_as_expected "$name" "$d" "$server" "$tr" || rc=$?
		ktap_test_result "$name: rpcrdma-cm conform against the $server server gives the verdicts conform_expect.sh expects" test $rc = 0
		[ $rc = 0 ] || verdict="$verdict, conform FAIL"
	fi
	table+=("$(printf "$fmt" "$name" "$tr" "v$6" "$7" "${cells[@]:0:5}" "$verdict")")
}

ktap_print_header
conform_rows=0
for row in "${selected[@]}"; do
	conform_row "${row%%|*}" && conform_rows=$((conform_rows + 1))
done
ktap_set_plan $((4 * ${#selected[@]} + conform_rows))
start=$(date +%s)
for row in "${selected[@]}"; do
	IFS='|' read -r name server client tr fam nfs _ <<<"$row"
	if [ -n "$recheck" ]; then
		d=$recheck/$name
		[ -d "$d" ] || ktap_print_msg "$name: nothing kept in $d"
	else
		d=$TOPW/$name
		rs=$(date +%s)
		conform=0
		conform_row "$name" && conform=1
		run_row "$d" "$server" "$client" "$tr" "$fam" "$nfs" $conform
		ktap_print_msg "$name: server $server, client $client, $tr IPv$fam NFS $nfs: $(($(date +%s) - rs)) s"
	fi
	row_checks "$name" "$d" "$server" "$client" "$tr" "$fam" "$nfs"
	if [ -n "${INTEROP_KEEP:-}" ]; then
		mkdir -p "$INTEROP_KEEP" && cp -r "$d" "$INTEROP_KEEP/"
	fi
done

mkdir -p "$(dirname "$TABLE")"
{
	echo "interop matrix ($which, ${#selected[@]} rows, $(($(date +%s) - start)) s): expected/says = send/recv/RI"
	echo "$header"
	printf '%s\n' "${table[@]}"
} >"$TABLE"
sed 's/^/# /' "$TABLE"
ktap_finished
