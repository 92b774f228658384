#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The responder's view of what requesters send: a userspace requester
# (rpcrdma-cm probe) connects to nfsd's RDMA listener with
# conforming and non-conforming private data. With rpcrdma_cm loaded the
# server answers every one with its own advertisement (Remote Invalidation
# flag included), counts each cause in debugfs (every counter is checked
# per case: absent and short never rise, since the CM pads) and its
# rpcrdma:svcrdma_cm_private tracepoint shows the raw and decoded private
# data it received and whether the transport uses Remote Invalidation,
# which must match what the requester offered and the module's counter;
# unloaded, the server answers with flags 01 (the series' svcrdma). A
# requester connecting and disconnecting 1000 times leaves no debugfs
# line behind.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_responder_decode tool module rxe

D=/sys/kernel/debug
STATS=$D/rpcrdma_cm/stats
CONN=$D/rpcrdma_cm/connections
T=/sys/kernel/tracing
CONNECTS=1000


# name|private data sent ("none": no private data)|counters that must rise
# by one besides connections (comma-separated)|whether the tracepoint
# decodes a Version One message|whether the transport must use Remote
# Invalidation (the requester offered it in a conforming message: flag bit
# 0; the server's remote_invalidation is Y)
# IB and RoCE pad the CM area (56 octets in a REQ) with zeros, so nothing
# arrives as zeros and 3 octets as a magic with a zero low octet: the
# counters absent and short must never rise here.
CASES="conforming, RI offered|f6ab0e1801010303|conforming|yes|on
absent|none|zeroed|no|off
short (3 octets, zero-padded by the CM)|f6ab0e|bad_magic|no|off
little-endian magic|180eabf601010303|bad_magic|no|off
version 2|f6ab0e1802010303|unknown_version|no|off
reserved flag bit set|f6ab0e1801810f0f|conforming,reserved_flags|yes|on
eight zero octets|0000000000000000|zeroed|no|off"
# The cases' loop: one result per line of CASES.
ktap_plan_counted "$(echo "$CASES" | wc -l)"

# The event exists once rpcrdma is loaded: run first in a guest, this
# program found no event to enable before.
echo 1 >$T/events/rpcrdma/svcrdma_cm_private/enable ||
	ktap_exit_fail_msg "cannot enable rpcrdma:svcrdma_cm_private"
rmmod rpcrdma_cm 2>/dev/null
insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
start_nfsd || ktap_exit_fail_msg "nfsd did not start"

counter() {
	stat_counter responder "$1"
}

# The responder's counters, "name=value" one a line.
counters() {
	grep '^responder ' $STATS | tr ' ' '\n' | grep '='
}

# Connections whose svcrdma_cm_private line said remote_inv=on.
traced_ri_on=0

# probe_case HEX|none COUNTERS V1 RI: the server answers f6ab0e18 01 01 03 03
# (4 KB, RI capable); the tracepoint shows the first eight octets received
# (zero-padded by the CM), V1 (yes or no) and the transport's Remote
# Invalidation RI (on or off, from what the requester sent); of the
# module's counters exactly connections, COUNTERS and, if the transport
# uses Remote Invalidation, remote_inv rise by one, every other (absent
# and short included) stays.
probe_case() {
	local before after reply hex=$1 raw got kv name want rises ok=0
	[ "$hex" = none ] && hex=
	raw=$(printf '%-16s' "$hex" | tr ' ' 0)
	before=$(counters)
	echo >$T/trace
	reply=$(probe_pdata "$hex" --json "$ip:$NFS_PORT" | jq -r .received.raw)
	after=$(counters)
	if [ "${reply:0:16}" != f6ab0e1801010303 ]; then
		ktap_print_msg "reply ${reply:0:16}, want f6ab0e1801010303"
		ok=1
	fi
	got=$(for k in by peer_len peer peer_v1 sent remote_inv; do
		traced_value svcrdma_cm_private $k
	done | paste -sd ' ')
	if [ "$got" != "module 56 $raw $3 f6ab0e1801010303 $4" ]; then
		traced_cm_private svcrdma_cm_private | sed 's/^/# /'
		ktap_print_msg "want peer_len=56 peer=$raw peer_v1=$3 sent=f6ab0e1801010303 remote_inv=$4"
		ok=1
	fi
	rises=" connections ${2//,/ } "
	[ "$(traced_value svcrdma_cm_private remote_inv)" = on ] &&
		rises="$rises remote_inv " traced_ri_on=$((traced_ri_on + 1))
	[ -n "$after" ] || { ktap_print_msg "no responder counters in $STATS"; return 1; }
	for kv in $after; do
		name=${kv%%=*}
		want=$(echo "$before" | sed -n "s/^$name=//p")
		case $rises in *" $name "*) want=$((want + 1)) ;; esac
		if [ "${kv#*=}" != "$want" ]; then
			ktap_print_msg "counter $name: ${kv#*=}, want $want"
			ok=1
		fi
	done
	return $ok
}

while IFS='|' read -r name hex count v1 ri; do
	ktap_test_result "$name: server answers with its advertisement, counts $count, traces it" \
		probe_case "$hex" "$count" "$v1" "$ri"
done <<<"$CASES"

# A requester that sent nothing: svcrdma holds it to the send size the
# server's Accept advertises, not to RFC 8797's 1 KB (design.rst: the one
# deliberate deviation, for RFC 8166 clients). The module's record of the
# connection must show the threshold the transport applies, as the
# tracepoint does; the want is decoded from the Accept's octets here.
# No responder line in debugfs (connections are freed asynchronously:
# up to 60 s).
no_responder_lines() {
	slowwait 60 no_line_in $CONN responder
}
# probe_reported FILE: FILE holds a probe report with the Accept's octets
# (not `jq -e`: jq 1.6 exits 0 on an empty file, before the probe wrote).
probe_reported() {
	[ -n "$(jq -r '.received.raw // empty' "$1" 2>/dev/null)" ]
}
silent_requester_recorded() {
	local out pid lines want traced shown reply
	# From no line at all, so that the one seen is the held connection's.
	no_responder_lines || { ktap_print_msg "earlier connections still listed in $CONN"; return 1; }
	echo >$T/trace
	out=$(mktemp)
	"$TOOL" probe --hold 120 --no-pdata --json "$ip:$NFS_PORT" >"$out" 2>&1 &
	pid=$!
	# The probe prints its report once connected, then holds the connection.
	slowwait 90 probe_reported "$out"
	lines=$(grep '^role=responder ' $CONN)
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	reply=$(jq -r .received.raw "$out" 2>/dev/null)
	rm -f "$out"
	case "$reply" in
	f6ab0e18*) ;;
	*) ktap_print_msg "no Accept from rpcrdma-cm probe: '$reply'"; return 1 ;;
	esac
	if [ "$(echo "$lines" | grep -c .)" != 1 ]; then
		ktap_print_msg "want exactly the held connection's responder line, got $(echo "$lines" | grep -c .)"
		return 1
	fi
	want=$(( (0x${reply:12:2} + 1) * 1024 ))
	traced=$(traced_value svcrdma_cm_private send_threshold)
	shown=$(line_value "$lines" send_threshold)
	ktap_print_msg "Accept ${reply:0:16} (send $want), traced send_threshold=$traced, debugfs send_threshold=$shown"
	[ "$traced" = "$want" ] && [ "$shown" = "$want" ]
}
ktap_test_result "a requester that sent nothing: the transport and the module's record both hold it to the server's advertised send size" \
	silent_requester_recorded

ri_counted() {
	# Only the two conforming requests with the RI bit enable it: the
	# transports' tracepoints said so, and the module counted as many.
	ktap_print_msg "remote_inv counted $(counter remote_inv), traced on $traced_ri_on, connections $(counter connections)"
	[ "$traced_ri_on" = 2 ] && [ "$(counter remote_inv)" = "$traced_ri_on" ] &&
		[ "$(counter connections)" = 8 ]
}
ktap_test_result "Remote Invalidation used only where the requester offered it" ri_counted

# RoCE's CM pads every REQ to 56 octets: a requester cannot make the
# responder see fewer, so absent and short stay 0 and zeroed/bad_magic
# count those cases instead.
padded_never_absent_or_short() {
	ktap_print_msg "absent=$(counter absent) short=$(counter short) zeroed=$(counter zeroed) bad_magic=$(counter bad_magic)"
	[ "$(counter absent)" = 0 ] && [ "$(counter short)" = 0 ] &&
		[ "$(counter zeroed)" = 3 ] && [ "$(counter bad_magic)" = 2 ]
}
ktap_test_result "absent and short stay 0 on RoCE (the CM pads); zeroed 3 (with the held one), bad_magic 2" \
	padded_never_absent_or_short

# After CONNECTS connections the responder lines are gone again (the
# transports are freed asynchronously: wait up to 60 s).
no_leak() {
	local before after lines
	before=$(counter connections)
	"$TOOL" probe --count $CONNECTS --pdata f6ab0e1801010303 "$ip:$NFS_PORT" >/dev/null || return 1
	after=$(counter connections)
	no_responder_lines
	lines=$(grep -c '^role=responder ' $CONN)
	ktap_print_msg "$((after - before)) connections counted, $lines debugfs lines left"
	[ $((after - before)) = $CONNECTS ] && [ "$lines" = 0 ]
}
ktap_test_result "$CONNECTS connect/disconnect cycles leave no debugfs line behind" no_leak

# Without the module the series' svcrdma advertises the Remote
# Invalidation it uses (rxe can invalidate): flags 01, its 4 KB buffers.
# (Stock 7.3 and 6.12 answer flags 0 and use it all the same.)
stock_reply() {
	local reply
	rmmod rpcrdma_cm || return 1
	reply=$(probe_pdata f6ab0e1801010303 --json "$ip:$NFS_PORT" | jq -r .received.raw)
	ktap_print_msg "server without rpcrdma_cm answered ${reply:0:16}"
	[ "${reply:0:16}" = f6ab0e1801010303 ]
}
ktap_test_result "module unloaded: the server answers flags 01, the Remote Invalidation it uses" stock_reply

stop_nfsd
ktap_finished
