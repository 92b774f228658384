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
# oracle (scripts/guest/rfc8797_oracle.py, below) computes what each end
# advertises and applies; the REQ and REP private data decoded from the
# capture (IB CM MADs on rxe, MPA Request/Reply on siw) must match it, and
# each end's own report (debugfs with rpcrdma_cm loaded, else the
# rpcrdma:*_cm_private tracepoints, else on the stock kernel
# xprtrdma_inline_thresh) must agree; each guest must run the kernel its
# side names; rows of CONFORM_CUT (every row with --full) also run
# rpcrdma-cm conform from the client against the server, judged by
# selftests/rpcrdma_cm/conform_expect.sh. Prints KTAP (four results per
# row, five for a conform row) and the matrix as a
# table, also written to $INTEROP_TABLE (default
# build/check/interop-table.txt).
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
# shellcheck source=../selftests/rpcrdma_cm/conform_expect.sh
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
kb() {
	local b=$(($1 * 1024))
	echo "responder_send_size=$b,responder_recv_size=$b,requester_send_size=$b,requester_recv_size=$b"
}
ROWS="stock-x-module|stock|module:-|rxe|4|4.2|cut
stock-x-module16k|stock|module:$K16C|rxe|4|4.2|full
module-x-stock|module:-|stock|rxe|4|4.2|full
module16k-x-stock|module:$K16S|stock|rxe|4|4.2|full
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
module-asym-x-module-asym|module:responder_send_size=16384,responder_recv_size=8192|module:requester_send_size=4096,requester_recv_size=32768|rxe|4|4.2|cut
module-x-module-siw|module:-|module:-|siw|4|4.2|full
module-x-stock-siw|module:-|stock|siw|4|4.0|full
stock-x-module-siw|stock|module:-|siw|4|4.2|full
module-x-module-v6|module:-|module:-|rxe|6|4.2|full
module-x-module-64k-v6|module:$(kb 64)|module:$(kb 64)|rxe|6|4.1|full
module-x-module-siw-v6|module:-|module:-|siw|6|4.2|full
module-nopdata-x-module-siw-v6|module:send_private_data=N|module:$(kb 16)|siw|6|3|cut
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
# the cut (with --full: every row): servers the single-guest cm_conform.sh
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

# tshark_fields PCAP FILTER FIELD...: tshark's fields of the matching
# packets; fails, saying why, when tshark fails or complains.
tshark_fields() {
	local pcap=$1 filter=$2 err out args=()
	shift 2
	for f in "$@"; do args+=(-e "$f"); done
	err=$(mktemp)
	if ! out=$(tshark -r "$pcap" -Y "$filter" -T fields -E separator='|' "${args[@]}" 2>"$err") ||
		grep -qv 'Running as user "root"' "$err"; then
		ktap_print_msg "tshark cannot read $pcap: $(grep -v 'Running as user "root"' "$err" | head -c 300)" >&2
		rm -f "$err"
		return 1
	fi
	rm -f "$err"
	echo "$out"
}

# judged_port DIR: the client's port of the connection whose values the
# row judges, where a side says it: the server's debugfs line (peer=) or
# the client's (local=); empty when neither side runs rpcrdma_cm.
judged_port() {
	local line
	line=$(grep -h "^role=responder " "$1/server-connections" 2>/dev/null | head -1)
	if [ -n "$line" ]; then
		line_value "$line" peer | sed -n 's/^.*:\([0-9]*\)$/\1/p'
		return
	fi
	line=$(grep -h "^role=requester " "$1/client-connections" 2>/dev/null | head -1)
	[ -n "$line" ] && line_value "$line" local | sed -n 's/^.*:\([0-9]*\)$/\1/p'
}

# wire_pdata DIR TRANSPORT: "REQ REP", the private data of the NFS
# connection's REQ and REP in hex as the server captured them: the IB CM
# ConnectRequest (to port 20049) and the ConnectReply that answers it
# (its remote communication ID is the REQ's local one) on rxe; the MPA
# Request and the Reply of the same TCP stream on siw, less the 4 octets
# of MPA revision 2's enhanced connection setup (IRD/ORD, RFC 6581) that
# precede the consumer's data. "-" for a message that carried none. The
# REQ is the one of the judged connection (judged_port: its source port),
# else the last one (the connection that stayed up). Fails when the
# capture holds no such pair.
wire_pdata() {
	local d=$1 req rep rows port pick id stream
	port=$(judged_port "$d")
	if [ "$2" = rxe ]; then
		rows=$(tshark_fields "$d/server.pcap" \
			"infiniband.mad.attributeid == 0x0010 && infiniband.cm.req.serviceid.dport == $NFS_PORT" \
			infiniband.cm.req infiniband.cm.req.ip_cm.sport infiniband.cm.req.ip_cm.private) || return 1
		if [ -n "$port" ]; then
			# tshark shows the IP CM source port in hex.
			pick=$(echo "$rows" | awk -F'|' -v p="$port" -v x="$(printf '0x%04x' "$port")" \
				'$2 == p || tolower($2) == x' | tail -1)
		else
			pick=$(echo "$rows" | grep . | tail -1)
		fi
		IFS='|' read -r id _ req <<<"$pick"
		req=$(echo "$req" | tr -d ':')
		rows=$(tshark_fields "$d/server.pcap" "infiniband.mad.attributeid == 0x0013" \
			infiniband.cm.rep.remotecommid infiniband.cm.rep.private) || return 1
		rep=$(echo "$rows" | awk -F'|' -v id="$id" 'id != "" && $1 == id { print $2; exit }' | tr -d ':')
	else
		rows=$(tshark_fields "$d/server.pcap" "iwarp_mpa.req" tcp.stream tcp.srcport iwarp_mpa.rev \
			iwarp_mpa.pdlength iwarp_mpa.privatedata) || return 1
		if [ -n "$port" ]; then
			pick=$(echo "$rows" | awk -F'|' -v p="$port" '$2 == p' | tail -1)
		else
			pick=$(echo "$rows" | grep . | tail -1)
		fi
		stream=${pick%%|*}
		req=$(mpa_consumer_data "$(echo "$pick" | cut -d'|' -f3-)") || return 1
		rows=$(tshark_fields "$d/server.pcap" "iwarp_mpa.rep && tcp.stream == ${stream:-none}" \
			iwarp_mpa.rev iwarp_mpa.pdlength iwarp_mpa.privatedata) || return 1
		rep=$(mpa_consumer_data "$(echo "$rows" | head -1)") || return 1
	fi
	[ -n "$req" ] && [ -n "$rep" ] ||
		{ ktap_print_msg "no REQ/REP pair of the judged connection${port:+ (port $port)} in $d/server.pcap" >&2; return 1; }
	echo "$req $rep"
}
# mpa_consumer_data "REV|LEN|HEX": the consumer's private data in hex, "-"
# for none (an MPA frame with no private data has no privatedata field).
mpa_consumer_data() {
	local rev len hex
	IFS='|' read -r rev len hex <<<"$1"
	hex=$(echo "$hex" | tr -d ':')
	[ -n "$rev" ] || return 1
	[ "$rev" = 2 ] && hex=${hex:8}
	[ "$rev" = 1 ] || [ "$rev" = 2 ] || { ktap_print_msg "MPA revision $rev" >&2; return 1; }
	[ $((${#hex} / 2)) -eq $((len - (rev == 2 ? 4 : 0))) ] ||
		{ ktap_print_msg "MPA private data length $len, octets $((${#hex} / 2))" >&2; return 1; }
	echo "${hex:--}"
}

# octets HEX: HEX, its trailing zeros counted instead of shown.
octets() {
	local hex=$1 body
	body=$(echo "$hex" | sed 's/\(00\)*$//')
	[ ${#body} -eq ${#hex} ] && { echo "$hex"; return; }
	[ $((${#body} % 2)) = 1 ] && body=${body}0
	echo "$body+$(((${#hex} - ${#body}) / 2))x00"
}

# The judge: scripts/guest/rfc8797_oracle.py, written from the RFC text and the
# documented behaviour of the stock and patched kernels and the module's
# parameters, not from rust/proto or the module. A row's expected values
# come from its configuration (SERVER, CLIENT, TRANSPORT) alone; what the
# capture shows and what each side reports must equal them.
# scripts/tests/rfc8797-oracle.sh checks the oracle against the measured
# table in Documentation/testing.rst.
ORACLE=${RPCRDMA_CM_ORACLE:-$RPCRDMA_CM_TOP/scripts/guest/rfc8797_oracle.py}

# oracle_expect SERVER CLIENT TRANSPORT: the oracle's JSON for the row.
oracle_expect() {
	python3 "$ORACLE" expect --server "$1" --client "$2" --transport "$3"
}

# rfc_expect JSON SIDE: "SEND RECV RI SOURCE" the oracle gives SIDE
# (client or server) of the row: its thresholds, Remote Invalidation (1/0)
# and where it reports them (debugfs, trace, inline_thresh or none).
rfc_expect() {
	echo "$1" | jq -r --arg s "$2" '.[$s] |
		"\(.send_threshold) \(.recv_threshold) \(if .remote_invalidation then 1 else 0 end) \(.reports)"'
}

# wire_as_expected JSON SIDE HEX: the private data SIDE sent, as the capture
# shows it (HEX, "-" none), is what the oracle expects: decoded by the
# oracle, the same message (or none conforming), the length the transport
# delivers (rxe: the whole zero-padded CM area, 56 in a REQ, 196 in a REP;
# siw: exactly what was sent), and octet for octet. Says why not.
wire_as_expected() {
	local j=$1 side=$2 hex=$3 dec want got
	dec=$(python3 "$ORACLE" decode "$hex") || { echo "$side: undecodable '$hex'"; return 1; }
	want=$(echo "$j" | jq -r --arg s "$side" '.[$s] | "\(.sends // "none") \(.wire_length)"')
	got=$(echo "$dec" | jq -r '"\(.message.hex // "none") \(.length)"')
	if [ "$got" != "$want" ]; then
		echo "$side sent $got ($(echo "$dec" | jq -r .conformance)), want $want"
		return 1
	fi
	[ "$hex" = "$(echo "$j" | jq -r --arg s "$side" '.[$s].wire')" ] ||
		{ echo "$side: padding differs from zeros: $(octets "$hex")"; return 1; }
}

# tool_info HEX: rpcrdma-cm's own decoding, printed for information on a
# disagreement; not part of any judgement.
tool_info() {
	local h=$1
	[ "$h" = - ] && h=
	"$TOOL" decode --json "$h" 2>/dev/null | jq -r '.conformance' 2>/dev/null || echo "?"
}

# reported DIR SIDE: "SOURCE SEND RECV RI" what SIDE says it applied:
# rpcrdma_cm's debugfs line when loaded, else its rpcrdma:*_cm_private
# tracepoint (patched kernel), else xprtrdma_inline_thresh (stock client;
# RI not traced: "-"); "none" when there is nothing to read (a stock
# server traces nothing).
reported() {
	local d=$1 side=$2 role line
	role=requester
	[ "$side" = server ] && role=responder
	kv() { line_value "$line" "$1"; }
	if [ -s "$d/$side-connections" ]; then
		line=$(grep "^role=$role " "$d/$side-connections")
		[ "$(echo "$line" | grep -c .)" = 1 ] || { echo "debugfs:$(echo "$line" | grep -c .)-lines - - -"; return; }
		echo "debugfs $(kv send_threshold) $(kv recv_threshold) $(kv remote_inv)"
	elif [ -s "$d/$side-trace" ]; then
		line=$(tail -1 "$d/$side-trace")
		echo "trace $(kv send_threshold) $(kv recv_threshold) $(kv remote_inv | sed 's/^on$/1/; s/^off$/0/')"
	elif [ "$side" = client ] && [ -s "$d/client-inline-thresh" ]; then
		tail -1 "$d/client-inline-thresh" | sed -n 's|.*neg send/recv=\([0-9]*\)/\([0-9]*\),.*|inline_thresh \1 \2 -|p'
	else
		echo "none - - -"
	fi
}

# The table, one line per row.
declare -a table=()
fmt='%-30s %-4s %-3s %-4s %-20s %-20s %-28s %-24s %-24s %s'
header=$(printf "$fmt" pair tran fam nfs "REQ bytes" "REP bytes" "expected client|server" "client says" "server says" verdict)

# row_checks NAME DIR SERVER CLIENT TRANSPORT FAMILY NFS
row_checks() {
	local name=$1 d=$2 server=$3 client=$4 tr=$5 fam=$6 nfs=$7
	local wire req=none rep=none exp_c="- - - -" exp_s="- - - -" got_c="- - - -" got_s="- - - -" verdict=ok why=""

	data_exact() {
		local n bad=0
		[ -e "$d/client-mounted" ] || { ktap_print_msg "$name: not mounted: $(cat "$d/client-error" 2>/dev/null)"; return 1; }
		grep -q "proto=rdma" "$d/client-mount-options" ||
			{ ktap_print_msg "$name: mount options $(cat "$d/client-mount-options")"; return 1; }
		n=$(grep -c ' ok$' "$d/client-data")
		if [ "$n" != 13 ]; then
			ktap_print_msg "$name: $n of 13 files round-tripped: $(grep -v ' ok$' "$d/client-data" | tr '\n' ' ')"
			bad=1
		fi
		# What the server's export holds is what the client wrote.
		if [ ! -s "$d/server-sums" ] || ! diff <(sort -k2 "$d/client-sums") <(sort -k2 "$d/server-sums") >/dev/null; then
			ktap_print_msg "$name: the server's export differs from what the client wrote"
			diff <(sort -k2 "$d/client-sums") <(sort -k2 "$d/server-sums" 2>/dev/null) | head -5 | sed 's/^/# /'
			bad=1
		fi
		return $bad
	}
	ktap_test_result "$name: NFS $nfs over $tr IPv$fam mounted, 13 files (1 KB..256 KiB, below/at/above each threshold) byte-exact both ways" data_exact

	negotiation() {
		local ok=0 which exp got oracle msg src gs gr gri es er eri esrc
		# What the row's configuration gives, before looking at the row.
		if ! oracle=$(oracle_expect "$server" "$client" "$tr"); then
			ktap_print_msg "$name: the oracle refuses the row ($server, $client, $tr)"
			why="$why oracle"
			return 1
		fi
		exp_c=$(rfc_expect "$oracle" client)
		exp_s=$(rfc_expect "$oracle" server)
		wire=$(wire_pdata "$d" "$tr") || { req=none rep=none why="$why wire"; return 1; }
		read -r req rep <<<"$wire"
		# The wire: each side sent what its configuration makes it send.
		for which in client server; do
			if [ $which = client ]; then got=$req; else got=$rep; fi
			msg=$(wire_as_expected "$oracle" $which "$got") ||
				{ ktap_print_msg "$name: $msg"; ok=1; why="$why $which-wire"; }
		done
		# The sides: each reports, where the oracle says it does, exactly
		# the oracle's values: debugfs (rpcrdma_cm) and the patched
		# kernel's tracepoint send/recv/RI, including the server without
		# the module (Replies held to min(its send, the client's receive);
		# its own receive size; Send With Invalidate when the client
		# offered it);
		# xprtrdma_inline_thresh (stock client) send/recv (it shows no RI);
		# a stock server reports nothing.
		got_c=$(reported "$d" client)
		got_s=$(reported "$d" server)
		for which in client server; do
			if [ $which = client ]; then exp=$exp_c got=$got_c; else exp=$exp_s got=$got_s; fi
			read -r src gs gr gri <<<"$got"
			read -r es er eri esrc <<<"$exp"
			if [ "$src" != "$esrc" ]; then
				ok=1 why="$why $which-$src-not-$esrc"
				continue
			fi
			case "$src" in
			debugfs | trace) [ "$gs $gr $gri" = "$es $er $eri" ] || { ok=1; why="$why $which"; } ;;
			inline_thresh) [ "$gs $gr $gri" = "$es $er -" ] || { ok=1; why="$why $which"; } ;;
			none) ;;
			*) ok=1 why="$why $which-$src" ;;
			esac
		done
		# With rpcrdma_cm loaded on a side, its tracepoint (the transport's
		# own state) must say the same as its debugfs; the module runs only
		# on the patched kernel, which has the tracepoint: no trace fails.
		for which in client server; do
			[ -s "$d/$which-connections" ] || continue
			if [ ! -s "$d/$which-trace" ]; then
				ktap_print_msg "$name $which: rpcrdma_cm loaded, no tracepoint line"
				ok=1 why="$why $which-no-trace"
				continue
			fi
			local line t
			line=$(tail -1 "$d/$which-trace")
			t=$(line_values "$line" send_threshold recv_threshold remote_inv | sed 's/ on$/ 1/; s/ off$/ 0/')
			if [ "$t" != "$(reported "$d" $which | cut -d' ' -f2-)" ]; then
				ktap_print_msg "$name $which: tracepoint '$t', debugfs '$(reported "$d" $which)'"
				ok=1 why="$why $which-trace"
			fi
		done
		if [ $ok != 0 ]; then
			ktap_print_msg "$name: disagreement ($why): REQ $(octets "$req") REP $(octets "$rep");" \
				"the oracle gives client $exp_c, server $exp_s (send recv RI source);" \
				"client says $got_c, server says $got_s"
			[ -x "$TOOL" ] && ktap_print_msg "$name: for information (not judged), rpcrdma-cm decodes" \
				"REQ as $(tool_info "$req"), REP as $(tool_info "$rep")"
		fi
		return $ok
	}
	# (ktap_test_result's own status is always 0: keep the check's.)
	local neg_rc=0 logs_rc=0
	negotiation || neg_rc=$?
	ktap_test_result "$name: the REQ/REP on the wire and both ends' values are what RFC 8797 and the row's configuration give (rfc8797_oracle.py)" test $neg_rc = 0
	if [ $neg_rc = 0 ]; then
		case "${exp_s##* }" in
		none) verdict="ok (stock server: not traced)" ;;
		trace) verdict="ok (svcrdma without rpcrdma_cm)" ;;
		esac
	else
		verdict="FAIL:$why"
	fi

	logs_clean() {
		local side ok=0 rc
		for side in server client; do
			saved_log_clean "$d/$side-dmesg" "$name $side" || ok=1
			rc=$(cat "$d/$side-exit" 2>/dev/null)
			local end=server-done
			[ $side = client ] && end='client-finished'
			if [ "$rc" != 0 ] || [ ! -e "$d/$end" ]; then
				ktap_print_msg "$name $side guest: exit ${rc:-unknown}, script $([ -e "$d/$end" ] && echo finished || echo "did not finish"): $(cat "$d/$side-error" 2>/dev/null)"
				ok=1
			fi
		done
		return $ok
	}
	logs_clean || logs_rc=$?
	ktap_test_result "$name: both kernel logs clean, both guests ended cleanly" test $logs_rc = 0
	[ $logs_rc = 0 ] || verdict="$verdict, log/guest FAIL"

	# Each guest ran the kernel its side names: the base from the release
	# it reports (uname -r), stock or patched from what it has (the
	# series' tracepoints), seen from inside the guest.
	kernels_as_specified() {
		local side spec kind base release has ok=0
		for side in server client; do
			if [ $side = server ]; then spec=$server; else spec=$client; fi
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
	local kernels_rc=0
	kernels_as_specified || kernels_rc=$?
	ktap_test_result "$name: each guest booted the kernel its side names (base, stock or patched)" test $kernels_rc = 0
	[ $kernels_rc = 0 ] || verdict="$verdict, kernel FAIL"

	# rpcrdma-cm conform from the client against the server: the checks
	# and verdicts conform_expect.sh gives for the server's configuration.
	conform_as_expected() {
		local kind send=4096 message=yes strict=no p id got want fails=0 unknown=0 ok=0 rc
		local json=$d/client-conform.json
		kind=$(side_kind "$server")
		[ "$kind" = patched ] && kind=series
		for p in $(side_params "$server"); do
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
		got=$(jq -r '.checks[].id' "$json" | paste -sd ' ')
		want=$(conform_check_ids "$tr" $message | tr ' ' '\n' | paste -sd ' ')
		[ "$got" = "$want" ] || { ktap_print_msg "$name: conform made '$got', want '$want'"; ok=1; }
		for id in $(conform_check_ids "$tr" $message); do
			want=$(conform_expected "$kind" "$tr" "$id" "$send" $message $strict)
			got=$(jq -r --arg id "$id" '.checks[] | select(.id == $id) | .verdict' "$json")
			[ "$want" = fail ] && fails=$((fails + 1))
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
	if conform_row "$name"; then
		local conform_rc=0
		conform_as_expected || conform_rc=$?
		ktap_test_result "$name: rpcrdma-cm conform against the $server server gives the verdicts conform_expect.sh expects" test $conform_rc = 0
		[ $conform_rc = 0 ] || verdict="$verdict, conform FAIL"
	fi

	short() { case "$1" in -) echo "none/0" ;; none) echo "?" ;; *) echo "${1:0:16}/$((${#1} / 2))" ;; esac; }
	table+=("$(printf "$fmt" "$name" "$tr" "v$fam" "$nfs" "$(short "$req")" "$(short "$rep")" \
		"$(echo "${exp_c% *}" | tr ' ' /)|$(echo "${exp_s% *}" | tr ' ' /)" \
		"$(echo "$got_c" | sed 's/ /:/; s/ /\//g')" "$(echo "$got_s" | sed 's/ /:/; s/ /\//g')" "$verdict")")
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
