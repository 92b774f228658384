#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The userspace tool rpcrdma-cm (tools/, built on the host with
# 'cargo build --release') against the guest's real nfsd over soft-RoCE:
# - probe: the server answers flags 01 without rpcrdma_cm (the series'
#   svcrdma advertises the Remote Invalidation it uses) and with it;
#   each odd private data (none, zero octets, short, little-endian magic,
#   version 2, reserved bit, zeros) is accepted with the module's
#   advertisement and counted by the responder under its cause; IPv6
#   (probe and ping); iWARP (siw), where the private data arrives unpadded.
# - ping: 100 NULL calls each over TCP and over RDMA (RDMA_MSG), NFS
#   program 100003 versions 3 and 4, none lost; an unsupported version is
#   PROG_MISMATCH (exit 1); nothing listening gives exit 1 in time.
# - callback_times: with the setting off (the default) nothing counted or
#   timed; on, the responder's callbacks timed once per connection of the
#   tool, the requester's for the NFSv4 mount.
# - status and status --json while an NFSv4 mount is up agree with the
#   debugfs files they read; with the module unloaded status says so.
# The round-trip times of the pings are printed (as '# rtt ...' lines).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_tools module rxe nfsd

TOOL=${RPCRDMA_CM_TOOL:-$DIR/../../tools/target/release/rpcrdma-cm}
D=/sys/kernel/debug
STATS=$D/rpcrdma_cm/stats
CONN=$D/rpcrdma_cm/connections
TIMES=$D/rpcrdma_cm/callback_times
# What every probe and ping that must succeed waits for each step (-W;
# the tool's default is 5 s). On the debug kernel (KASAN under TCG, other
# guests on the cores) a siw connect and, once, an address resolution
# took longer than 5 s. An answer still returns at once.
WAIT=20
OUT=$(mktemp)
IPV6=fd00:5243:4d::1
# Leave nothing behind for the later tests and a rerun: the IPv6 address,
# the siw device and the dummy interface under it.
cleanup() {
	rm -f "$OUT"
	if rdma link show siw_d0/1 >/dev/null 2>&1; then
		rdma link delete siw_d0
	fi
	if ip link show rpcrdma_d0 >/dev/null 2>&1; then
		ip link del rpcrdma_d0
	fi
	if [ -n "${nic:-}" ] && ip -6 addr show dev "$nic" | grep -q " $IPV6/"; then
		ip -6 addr del $IPV6/64 dev "$nic"
	fi
	return 0
}

if [ ! -x "$TOOL" ] || ! command -v jq >/dev/null; then
	ktap_skip_all "$TOOL or jq missing (cargo build --release -p rpcrdma-cm-tools)"
	exit "$KSFT_SKIP"
fi

# name|--pdata argument ("none": --no-pdata)|responder counter that must rise
CASES="conforming, RI offered|f6ab0e1801010303|conforming
no private data|none|zeroed
zero octets|-|zeroed
short (3 octets)|f6ab0e|bad_magic
little-endian magic|180eabf601010303|bad_magic
version 2|f6ab0e1802010303|unknown_version
reserved flag bit set|f6ab0e1801810f0f|reserved_flags
eight zero octets|0000000000000000|zeroed"
PINGS="tcp 3
tcp 4
rdma 3
rdma 4"
# probe 3, cases, callback_times 3, IPv6/siw 5, pings, text 2, errors 3,
# callback_times of the mount 1 and status 4, unloaded 1.
# One result per case of each loop below, one per top-level result.
ktap_plan_counted "$(grep -c . <<<"$CASES")" "$(grep -c . <<<"$PINGS")"


# run ARGS...: run the tool with its output in $OUT and its exit status in
# $rc; on a surprise the caller prints $OUT.
run() {
	rc=0
	"$TOOL" "$@" >"$OUT" 2>&1 || rc=$?
}

show() {
	sed 's/^/# /' "$OUT"
}

# probe_flags WANT: a default probe is accepted (exit 0) and the server's
# private data conforms with flags WANT (0 stock, 1 rpcrdma_cm).
probe_flags() {
	run probe -W $WAIT --json "$ip"
	if [ "$rc" != 0 ] || [ "$(jq -r '.received.message.flags' "$OUT")" != "$1" ] ||
		[ "$(jq -r '.received.conformance' "$OUT")" != ok ]; then
		show
		ktap_print_msg "exit $rc, want 0 and flags $1"
		return 1
	fi
	ktap_print_msg "server sent $(jq -r '.received.raw[0:16]' "$OUT")"
}
ktap_test_result "probe: without rpcrdma_cm the server answers flags 01 (the series' svcrdma)" probe_flags 1

insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
P=$(rpcrdma_cm_params_dir) || ktap_exit_fail_msg "no settings directory for rpcrdma_cm"
ktap_test_result "probe: with rpcrdma_cm loaded the server answers flags 01" probe_flags 1
probe_text() {
	run probe -W $WAIT "$ip"
	show
	[ "$rc" = 0 ] && grep -q "^  raw: f6ab0e1801010303 + 188 zero octets (196 octets)$" "$OUT" &&
		grep -q "^this side (requester) negotiates:$" "$OUT"
}
ktap_test_result "probe: text output" probe_text

counter() {
	stat_counter responder "$1"
}

# probe_case PDATA COUNTER: the server accepts with f6ab0e1801010303 and
# counts COUNTER once; the tool's view of what the responder negotiates
# matches: 4096/4096 for a conforming sender, 1024/1024 for any other.
probe_case() {
	local before after arg want_send
	case $1 in
	none) arg=(--no-pdata) ;;
	-) arg=(--pdata "") ;;
	*) arg=(--pdata "$1") ;;
	esac
	before=$(counter "$2")
	run probe -W $WAIT --json "${arg[@]}" "$ip"
	after=$(counter "$2")
	case $2 in conforming | reserved_flags) want_send=4096 ;; *) want_send=1024 ;; esac
	if [ "$rc" != 0 ] || [ "$(jq -r '.received.raw[0:16]' "$OUT")" != f6ab0e1801010303 ] ||
		[ "$after" != $((before + 1)) ] ||
		[ "$(jq -r '.responder_negotiates.recv_threshold' "$OUT")" != "$want_send" ]; then
		show
		ktap_print_msg "exit $rc, $2 $before -> $after, want responder recv threshold $want_send"
		return 1
	fi
}
while IFS='|' read -r name pdata cause; do
	ktap_test_result "probe --pdata: $name (counted as $cause)" probe_case "$pdata" "$cause"
done <<<"$CASES"

# callback_field ROLE CALLBACK FIELD: FIELD (calls, total_ns, max_ns) of
# the "ROLE CALLBACK" line of callback_times.
callback_field() {
	line_value "$(grep "^$1 $2 " $TIMES)" "$3"
}

# Each responder callback's calls, total_ns and max_ns, one line each.
responder_times() {
	local cb
	for cb in prepare_accept accepted closed; do
		echo "$cb $(callback_field responder $cb calls) $(callback_field responder $cb total_ns)" \
			"$(callback_field responder $cb max_ns)"
	done
}

# With the callback_times setting off (the default: a debugging aid, no
# clock read in the callbacks), three connects from the tool count
# nothing: no call, no time (the module was loaded for this program, so
# every counter is still 0).
callback_times_off() {
	local before after
	[ "$(cat "$P/callback_times")" = N ] ||
		{ ktap_print_msg "callback_times is $(cat "$P/callback_times"), the documented default is N"; return 1; }
	before=$(responder_times)
	run probe -W $WAIT --count 3 "$ip"
	[ "$rc" = 0 ] || { show; return 1; }
	# Their closed callbacks too (svcrdma frees a transport a little after
	# its requester has gone).
	slowwait 60 no_line_in $CONN responder || ktap_print_msg "responder connections still listed after 60 s"
	after=$(responder_times)
	sed 's/^/# /' $TIMES
	[ "$after" = "$before" ] || { ktap_print_msg "counted while off: $before -> $after"; return 1; }
}
ktap_test_result "callback_times off (the default): 3 connects count and time nothing" callback_times_off

# Timed from here on: the setting written, as an admin would, once the
# untimed connections are gone (a connection accepted untimed and closed
# timed would count a closed without its prepare_accept).
timing_on() {
	slowwait 60 no_line_in $CONN responder || { ktap_print_msg "responder connections still listed after 60 s"; return 1; }
	echo Y >"$P/callback_times" && [ "$(cat "$P/callback_times")" = Y ]
}
ktap_test_result "callback_times setting turned on" timing_on

# Ten connects from the tool: once every earlier connection has been
# closed (svcrdma frees a transport a little after its requester has
# gone), each responder callback is timed exactly once per connection,
# its total time rises, and its longest call is at least its mean; the
# requester's lines do not move.
callback_times_responder() {
	local before after requester_before bad=0 cb calls total max c0 t0
	settle_callback_times || { ktap_print_msg "closed never caught up with prepare_accept"; return 1; }
	before=$(responder_times)
	requester_before=$(grep '^requester ' $TIMES)
	run probe -W $WAIT --count 10 "$ip"
	[ "$rc" = 0 ] || { show; return 1; }
	settle_callback_times || ktap_print_msg "closed did not catch up with prepare_accept in 10 s"
	after=$(responder_times)
	while read -r cb calls total max; do
		read -r c0 t0 <<<"$(echo "$before" | awk -v c="$cb" '$1 == c { print $2, $3 }')"
		if [ "$calls" != $((c0 + 10)) ] || [ "$total" -le "$t0" ] || [ "$max" -lt 1 ] ||
			[ $((max * calls)) -lt "$total" ]; then
			ktap_print_msg "$cb: calls $c0 -> $calls (want +10), total_ns $t0 -> $total, max_ns $max"
			bad=1
		fi
	done <<<"$after"
	if [ "$(grep '^requester ' $TIMES)" != "$requester_before" ]; then
		ktap_print_msg "requester lines moved"
		bad=1
	fi
	sed 's/^/# /' $TIMES
	return $bad
}
ktap_test_result "callback_times: 10 connects, each responder callback timed once per connection" \
	callback_times_responder

# IPv6: a unique local address on the same NIC.
probe_ipv6() {
	ip -6 addr add $IPV6/64 dev "$nic" nodad 2>/dev/null
	run probe -W $WAIT --json "[$IPV6]"
	if [ "$rc" != 0 ] || [ "$(jq -r '.received.message.flags' "$OUT")" != 1 ]; then
		show
		return 1
	fi
}
ktap_test_result "probe over IPv6" probe_ipv6
ping_ipv6() {
	run ping --json -t "$1" -c 10 -i 0 -W $WAIT "[$IPV6]"
	if [ "$rc" != 0 ] || [ "$(jq -r '"\(.received) \(.lost)"' "$OUT")" != "10 0" ]; then
		show
		return 1
	fi
}
ktap_test_result "ping tcp over IPv6: 10 calls, 0 lost" ping_ipv6 tcp
ktap_test_result "ping rdma over IPv6: 10 calls, 0 lost" ping_ipv6 rdma

# iWARP: a siw device on a dummy interface of its own (the RDMA CM binds
# 127.0.0.1 to the first device, rxe). MPA carries the private data as
# sent, without the InfiniBand CM's zero padding.
SIW_IP=10.99.0.1
siw_up() {
	if ! rdma link show siw_d0/1 >/dev/null 2>&1; then
		ip link add rpcrdma_d0 type dummy && ip link set rpcrdma_d0 up &&
			ip addr add $SIW_IP/24 dev rpcrdma_d0 &&
			rdma_link_add siw_d0 siw rpcrdma_d0
	fi
}
probe_siw() {
	siw_up || { ktap_print_msg "siw on a dummy interface failed"; return 1; }
	run probe -W $WAIT --json $SIW_IP
	if [ "$rc" != 0 ] || [ "$(jq -r '"\(.received.raw) \(.received.len)"' "$OUT")" != "f6ab0e1801010303 8" ]; then
		show
		return 1
	fi
}
ktap_test_result "probe over siw (iWARP): the server's 8 octets, unpadded" probe_siw
ping_siw() {
	run ping --json -t rdma -c 20 -i 0 -W $WAIT $SIW_IP
	if [ "$rc" != 0 ] || [ "$(jq -r '"\(.received) \(.lost)"' "$OUT")" != "20 0" ]; then
		show
		return 1
	fi
	ktap_print_msg "rtt rdma (siw) NFSv3: $(jq -r '.rtt_ms | map_values(. * 1000 | round / 1000) |
		"min/avg/max/stddev = \(.min)/\(.avg)/\(.max)/\(.stddev) ms"' "$OUT")"
}
ktap_test_result "ping rdma over siw: 20 calls, 0 lost" ping_siw

# ping_ok TRANSPORT VERSION: 100 NULL calls, all answered with SUCCESS.
ping_ok() {
	run ping --json -t "$1" -V "$2" -c 100 -i 0 -W $WAIT "$ip"
	if [ "$rc" != 0 ] || [ "$(jq -r '"\(.sent) \(.received) \(.failed) \(.lost)"' "$OUT")" != "100 100 0 0" ]; then
		show
		ktap_print_msg "exit $rc"
		return 1
	fi
	ktap_print_msg "rtt $1 NFSv$2: $(jq -r '.rtt_ms | map_values(. * 1000 | round / 1000) |
		"min/avg/max/stddev = \(.min)/\(.avg)/\(.max)/\(.stddev) ms"' "$OUT")"
}
while read -r transport version; do
	ktap_test_result "ping $transport NFSv$version: 100 calls, 0 lost" ping_ok "$transport" "$version"
done <<<"$PINGS"

# The text form: a line per reply like ping's, then the summary.
ping_text() {
	run ping -t "$1" -c 3 -i 0.2 -W $WAIT "$ip"
	show
	[ "$rc" = 0 ] && [ "$(grep -c "^reply from .* SUCCESS time=" "$OUT")" = 3 ] &&
		grep -q "^3 calls sent, 3 replies, 0 not SUCCESS, 0 lost (0% loss)$" "$OUT" &&
		grep -q "^rtt min/avg/max/stddev = " "$OUT"
}
ktap_test_result "ping tcp text output" ping_text tcp
ktap_test_result "ping rdma text output" ping_text rdma

# An unsupported version: PROG_MISMATCH with the supported range, exit 1.
ping_mismatch() {
	run ping -W $WAIT -t "$1" -V 9 -c 1 "$ip"
	if [ "$rc" != 1 ] || ! grep -q 'PROG_MISMATCH (versions [0-9]*\.\.4)' "$OUT"; then
		show
		return 1
	fi
}
ktap_test_result "ping tcp NFSv9: PROG_MISMATCH, exit 1" ping_mismatch tcp
ktap_test_result "ping rdma NFSv9: PROG_MISMATCH, exit 1" ping_mismatch rdma

# Nothing listens on port 20050: exit 1 within the timeout, no hang.
ping_nobody() {
	local start=$SECONDS
	run ping -t rdma -c 1 -W 5 "$ip:20050"
	if [ "$rc" != 1 ] || [ $((SECONDS - start)) -gt 10 ]; then
		show
		return 1
	fi
	ktap_print_msg "$(head -1 "$OUT")"
}
ktap_test_result "ping rdma to a port nobody listens on: exit 1" ping_nobody

# status while an NFSv4 mount is up: the requester and responder rows are
# there, and the JSON carries the same values as the debugfs lines.
umount_rdma
requester_before=("$(callback_field requester prepare_connect calls)"
	"$(callback_field requester prepare_connect total_ns)"
	"$(callback_field requester established calls)"
	"$(callback_field requester established total_ns)")
mount_rdma "$ip" 4 || ktap_exit_fail_msg "NFSv4 mount over RDMA failed"

# The mount's connection: the requester's prepare_connect and established
# were timed, and their time rose (a retried connect is timed again: at
# least one established, no more established than prepare_connect).
callback_times_requester() {
	local connects established
	connects=$(($(callback_field requester prepare_connect calls) - requester_before[0]))
	established=$(($(callback_field requester established calls) - requester_before[2]))
	sed 's/^/# /' $TIMES
	[ "$established" -ge 1 ] && [ "$established" -le "$connects" ] &&
		[ "$(callback_field requester prepare_connect total_ns)" -gt "${requester_before[1]}" ] &&
		[ "$(callback_field requester established total_ns)" -gt "${requester_before[3]}" ]
}
ktap_test_result "callback_times: the mount's requester callbacks timed" callback_times_requester

status_table() {
	run status
	if [ "$rc" != 0 ] || ! grep -q "^requester  $ip:$NFS_PORT .* ok " "$OUT" ||
		! grep -q "^responder  $ip:[0-9]* .* ok " "$OUT"; then
		show
		return 1
	fi
	show
}
ktap_test_result "status: a requester and a responder row" status_table

# For each debugfs line, the JSON entry with the same addresses has
# the same values for every key debugfs prints.
status_json() {
	local line local_addr peer_addr entry k v got bad=0
	run status --json
	[ "$rc" = 0 ] || { show; return 1; }
	# The mount's requester and responder at least: an empty list would
	# pass every comparison below.
	if [ "$(wc -l <$CONN)" -lt 2 ] ||
		[ "$(jq -r '[.connections[].role] | (index("requester") != null and index("responder") != null)' "$OUT")" != true ]; then
		ktap_print_msg "debugfs lists $(wc -l <$CONN) connections, want the mount's requester and responder"
		show
		return 1
	fi
	[ "$(jq '.connections | length' "$OUT")" = "$(wc -l <$CONN)" ] || { show; return 1; }
	while read -r line; do
		local_addr=$(line_value "$line" local)
		peer_addr=$(line_value "$line" peer)
		entry=$(jq -c --arg l "$local_addr" --arg p "$peer_addr" \
			'[.connections[] | select(.local == $l and .peer == $p)] | first' "$OUT")
		for kv in $line; do
			k=${kv%%=*}
			v=${kv#*=}
			case $k in
			role | local | peer | peer_pdata | peer_pdata_len | peer_conformance | local_send | local_recv)
				got=$(echo "$entry" | jq -r ".$k") ;;
			peer_send) got=$(echo "$entry" | jq -r '.peer_advertised.send') ;;
			peer_recv) got=$(echo "$entry" | jq -r '.peer_advertised.recv') ;;
			peer_remote_inv) got=$(echo "$entry" | jq -r '.peer_advertised.remote_invalidation | if . then 1 else 0 end') ;;
			peer_reserved) got=$(printf '0x%02x' "$(echo "$entry" | jq -r '.peer_reserved_flags')") ;;
			advertised_send) got=$(echo "$entry" | jq -r '.advertised.send') ;;
			advertised_recv) got=$(echo "$entry" | jq -r '.advertised.recv') ;;
			advertised_remote_inv) got=$(echo "$entry" | jq -r '.advertised.remote_invalidation | if . then 1 else 0 end') ;;
			send_threshold) got=$(echo "$entry" | jq -r '.negotiated.send') ;;
			recv_threshold) got=$(echo "$entry" | jq -r '.negotiated.recv') ;;
			remote_inv) got=$(echo "$entry" | jq -r '.negotiated.remote_invalidation | if . then 1 else 0 end') ;;
			*) got="(key $k not compared)" ;;
			esac
			if [ "$got" != "$v" ]; then
				ktap_print_msg "local=$local_addr $k: debugfs $v, status --json $got"
				bad=1
			fi
		done
	done <$CONN
	# The counters too.
	for role in requester responder; do
		for kv in $(grep "^$role " $STATS | cut -d' ' -f2-); do
			got=$(jq -r --arg r "$role" --arg k "${kv%%=*}" '.stats[] | select(.role == $r) | .counters[$k]' "$OUT")
			[ "$got" = "${kv#*=}" ] || { ktap_print_msg "$role $kv: status --json $got"; bad=1; }
		done
	done
	return $bad
}
ktap_test_result "status --json equals debugfs, field by field" status_json

status_ri() {
	# This guest is its own server: the requester offered RI and so did
	# the module's responder, so both ends use Remote Invalidation.
	# At least the requester and the responder ('all' of an empty list is
	# true).
	run status --json
	[ "$(jq -r '(.connections | length >= 2) and ([.connections[] | .negotiated.remote_invalidation] | all)' "$OUT")" = true ] ||
		{ show; return 1; }
}
ktap_test_result "status --json: both ends negotiated Remote Invalidation" status_ri

umount_rdma
stop_nfsd
rmmod rpcrdma_cm
status_unloaded() {
	run status
	if [ "$rc" != 1 ] || ! grep -q "the rpcrdma_cm module is not loaded" "$OUT"; then
		show
		return 1
	fi
}
ktap_test_result "status without the module: says it is not loaded, exit 1" status_unloaded

# Exit status 2 for usage errors, before any connection.
usage_errors() {
	local a
	for a in "probe --pdata 0 $ip" "probe --pdata $(printf '00%.0s' $(seq 57)) $ip" "ping -c 0 $ip" "ping -t udp $ip" "status --frob"; do
		# shellcheck disable=SC2086
		run $a
		[ "$rc" = 2 ] || { ktap_print_msg "'$a': exit $rc"; show; return 1; }
	done
}
ktap_test_result "usage errors exit 2" usage_errors

ktap_finished
