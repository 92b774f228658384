#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RFC 8797 negotiation through rpcrdma_cm, client and server in one guest
# (both ends of every connection are visible in debugfs):
#  - threshold matrix: client-advertised x server-advertised sizes; both
#    sides' debugfs lines, the client's rpcrdma:xprtrdma_inline_thresh
#    tracepoint and both sides' rpcrdma:{xprtrdma,svcrdma}_cm_private
#    tracepoints follow the min() rule and show what each side sent;
#  - private data off: both ends see a non-conforming peer and fall back
#    to 1024/1024 without Remote Invalidation; the mount still works;
#  - debugfs lists exactly the one connection of each mount (a mount waits
#    until the previous one's lines are gone) and its values equal what the
#    transports applied, as the tracepoints report them;
#  - debugfs lines go away when the connection closes;
#  - one open connections file shows each connection once, also when it is
#    read again after its end with more connections up (requesters of
#    rpcrdma-cm probe --hold);
#  - module unloaded: the stock negotiation (same values as with the
#    module at its defaults), no debugfs directory.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_negotiation tool module rxe nfsd

# RPCRDMA_CM_NEGOTIATION_SIZES: another set (make check's 6.12 cut runs
# the corners, 1024 and 65536).
SIZES=${RPCRDMA_CM_NEGOTIATION_SIZES:-1024 4096 16384 65536}
T=/sys/kernel/tracing
D=/sys/kernel/debug
CONN=$D/rpcrdma_cm/connections

# The threshold matrix: the client's SIZES times the server's, one result
# each.
ktap_plan_counted $(( $(echo $SIZES | wc -w) ** 2 ))

for e in xprtrdma_inline_thresh xprtrdma_cm_private svcrdma_cm_private; do
	echo 1 >$T/events/rpcrdma/$e/enable
done

# conn_lines ROLE: the debugfs lines of ROLE (requester or responder).
conn_lines() {
	grep "^role=$1 " $CONN
}

# value_of LINE KEY: KEY's value in a line of key=value pairs.
value_of() {
	line_value "$1" "$2"
}

# wait_no_lines: wait (at most 60 s) until debugfs lists no connection. The
# server's line of a closed connection goes only when svc_rdma_free runs,
# some time after the unmount, and its slot is reused lowest first: a
# check right after the next mount could read it instead of the new one.
wait_no_lines() {
	slowwait 60 no_line_in $CONN && return 0
	ktap_print_msg "debugfs still lists connections 60 s after they closed:"
	sed 's/^/# left: /' $CONN
	return 1
}

# module_matches_transport: debugfs lists exactly one requester and one
# responder line, both of the connection the tracepoints saw (the client's
# rpcrdma:xprtrdma_cm_private addresses), and their thresholds and Remote
# Invalidation equal what each transport applied (the tracepoints' fields,
# filled from the transport's own state).
module_matches_transport() {
	local req rsp client server ev role line key want got ok=0
	req=$(conn_lines requester) rsp=$(conn_lines responder)
	if [ "$(echo "$req" | grep -c .)" != 1 ] || [ "$(echo "$rsp" | grep -c .)" != 1 ]; then
		ktap_print_msg "want exactly one requester and one responder line:"
		sed 's/^/# /' $CONN
		return 1
	fi
	read -r client server <<<"$(traced_addrs xprtrdma_cm_private)"
	if [ -z "$server" ] ||
		[ "$(value_of "$req" local) $(value_of "$req" peer)" != "$client $server" ] ||
		[ "$(value_of "$rsp" local) $(value_of "$rsp" peer)" != "$server $client" ] ||
		[ "$(traced_addrs svcrdma_cm_private)" != "$server $client" ]; then
		ktap_print_msg "debugfs lines are not of this connection (client $client -> server $server, svcrdma $(traced_addrs svcrdma_cm_private)):"
		sed 's/^/# /' $CONN
		return 1
	fi
	for role in requester responder; do
		ev=xprtrdma_cm_private line=$req
		[ $role = responder ] && ev=svcrdma_cm_private line=$rsp
		for key in send_threshold recv_threshold remote_inv; do
			want=$(traced_value $ev $key)
			case $want in on) want=1 ;; off) want=0 ;; esac
			got=$(value_of "$line" $key)
			if [ -z "$want" ] || [ "$got" != "$want" ]; then
				ktap_print_msg "$role $key: debugfs '$got', transport (tracepoint) '$want'"
				ok=1
			fi
		done
	done
	return $ok
}

# The client's tracepoint: "neg send/recv=S/R".
traced_neg() {
	grep -o 'neg send/recv=[0-9]*/[0-9]*' $T/trace | tail -1 | cut -d= -f2
}

# mount_and_check WANT RI BY [CLIENT SERVER]: mount, write a file, compare
# both sides' negotiated values (WANT/WANT, Remote Invalidation RI = 1 or
# 0) in debugfs and the tracepoints; BY is "module" or "stock". With
# CLIENT and SERVER, each side's tracepoint must also show that it
# advertised its own size and decoded the peer's.
mount_and_check() {
	local want=$1 want_ri=$2 by=$3 c=$4 s=$5 reply=${6:-$1} ok=0 ri=off
	[ "$want_ri" = 1 ] && ri=on
	wait_no_lines || return 1
	echo >$T/trace
	mount_rdma "$ip" 4.2 || { ktap_print_msg "mount failed"; return 1; }
	echo hello >"$MNT/probe" && [ "$(cat "$MNT/probe")" = hello ] || ok=1
	# The transports applied WANT (min of the sizes this test set); the
	# module's report must equal what they applied.
	if [ "$by" = module ]; then
		module_matches_transport || ok=1
	fi
	if [ "$(traced_neg)" != "$want/$want" ]; then
		ktap_print_msg "tracepoint neg send/recv=$(traced_neg), want $want/$want"
		ok=1
	fi
	traced_is xprtrdma_cm_private by=$by send_threshold=$want \
		recv_threshold=$want remote_inv=$ri || ok=1
	traced_is svcrdma_cm_private by=$by recv_threshold=$want || ok=1
	# Without the module svcrdma uses Send With Invalidate whenever the
	# client offers it and limits Replies to the client's receive size;
	# stock_check looks at that. With the module, the server's applied
	# Reply threshold is WANT too, or REPLY where the program says why.
	if [ "$by" = module ]; then
		traced_is svcrdma_cm_private remote_inv=$ri send_threshold=$reply || ok=1
	fi
	if [ -n "$c" ]; then
		# The server's receive size follows the client's send size
		# (RFC 8797 section 3.1: the client sends nothing larger):
		# min(c, s) (admin guide, responder_recv_size).
		traced_is xprtrdma_cm_private sent_v1=yes sent_send="$c" sent_recv="$c" \
			peer_v1=yes peer_send="$s" peer_recv="$((c < s ? c : s))" || ok=1
		traced_is svcrdma_cm_private sent_v1=yes \
			sent_send="$s" sent_recv="$((c < s ? c : s))" peer_v1=yes peer_send="$c" \
			peer_recv="$c" || ok=1
	fi
	[ $ok = 0 ] || { sed 's/^/# /' $CONN; grep _cm_private $T/trace | sed 's/^/# /'; }
	rm -f "$MNT/probe"
	umount_rdma
	return $ok
}

rmmod rpcrdma_cm 2>/dev/null
insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
P=$(rpcrdma_cm_params_dir) || ktap_exit_fail_msg "no parameters of rpcrdma_cm to change"

for c in $SIZES; do
	for s in $SIZES; do
		echo "$c" >$P/requester_send_size
		echo "$c" >$P/requester_recv_size
		echo "$s" >$P/responder_send_size
		echo "$s" >$P/responder_recv_size
		min=$((c < s ? c : s))
		ktap_test_result "client $c x server $s: both sides and the tracepoints use $min" \
			mount_and_check "$min" 1 module "$c" "$s"
	done
done

# Send and receive sizes differ on both ends. RFC 8797 section 4: a side
# sends inline up to min(its own send size, the peer's receive size), and
# the peer may send to it up to min(the peer's send size, its own receive
# size). Written out from the configuration here, independent of the
# module: client 16K send / 2K receive, server 8K send / 64K receive.
CS=16384 CR=2048 SS=8192 SR=65536
asymmetric() {
	local ok=0 want
	echo $CS >$P/requester_send_size
	echo $CR >$P/requester_recv_size
	echo $SS >$P/responder_send_size
	echo $SR >$P/responder_recv_size
	wait_no_lines || return 1
	echo >$T/trace
	mount_rdma "$ip" 4.2 || { ktap_print_msg "mount failed"; return 1; }
	# A 100 KB file written and read back crosses both thresholds.
	head -c 100000 /dev/urandom >/tmp/asym && cp /tmp/asym "$MNT/asym" && sync &&
		cmp -s /tmp/asym "$MNT/asym" || { ktap_print_msg "data did not come back the same"; ok=1; }
	module_matches_transport || ok=1
	want="$((CS < SR ? CS : SR))/$((CR < SS ? CR : SS))"
	[ "$(traced_neg)" = "$want" ] || { ktap_print_msg "tracepoint neg send/recv=$(traced_neg), want $want"; ok=1; }
	# The server advertises min(SR, CS) as its receive size: the client
	# sends nothing larger than CS (RFC 8797 section 3.1).
	traced_is xprtrdma_cm_private by=module sent_send=$CS sent_recv=$CR peer_send=$SS \
		peer_recv=$((SR < CS ? SR : CS)) send_threshold=$((CS < SR ? CS : SR)) \
		recv_threshold=$((CR < SS ? CR : SS)) || ok=1
	traced_is svcrdma_cm_private by=module sent_send=$SS sent_recv=$((SR < CS ? SR : CS)) peer_send=$CS \
		peer_recv=$CR send_threshold=$((SS < CR ? SS : CR)) \
		recv_threshold=$((SR < CS ? SR : CS)) || ok=1
	[ $ok = 0 ] || { sed 's/^/# /' $CONN; grep _cm_private $T/trace | sed 's/^/# /'; }
	rm -f "$MNT/asym"
	umount_rdma
	return $ok
}
ktap_test_result "client $CS/$CR x server $SS/$SR (send/receive): each side takes its own min()" asymmetric

# The last connections' lines go too.
no_lines_left() {
	wait_no_lines
}
ktap_test_result "debugfs lines go away when connections close" no_lines_left

# One open file of rpcrdma_cm/connections shows each connection once: a
# reader that read to the end and reads again after more connections came
# gets only lines it has not shown (on 6.12 the C shim's walk continues
# from the last cookie shown; an earlier walk counted positions from the
# first cookie again, and showed the first connection twice whenever a
# newer one had a smaller cookie: with four newer ones, four runs in five).
# Connections: userspace requesters held open (rpcrdma-cm probe --hold,
# killed at the end), each line told apart by the requester's port.
one_file_shows_each_once() {
	local dir pids=() n first rc=0
	dir=$(mktemp -d)
	hold_probe() {
		"$TOOL" probe --hold 300 --pdata f6ab0e1801010303 "$ip:$NFS_PORT" \
			>/dev/null 2>>"$dir/probe.err" &
		pids+=($!)
	}
	wait_for() {
		slowwait 120 eval "$1"
	}
	hold_probe
	if wait_for '[ "$(grep -c "^role=responder" $CONN)" -ge 1 ]'; then
		/usr/bin/python3 - "$CONN" "$dir" <<'PY' &
import os, sys, time
conn, d = sys.argv[1], sys.argv[2]
with open(conn) as f:
    open(d + "/first", "w").write(f.read())
    open(d + "/first.done", "w").close()
    while not os.path.exists(d + "/go"):
        time.sleep(0.1)
    open(d + "/second", "w").write(f.read())
PY
		local reader=$!
		if wait_for_file 120 "$dir/first.done"; then
			for _ in 1 2 3 4; do hold_probe; done
			wait_for '[ "$(grep -c "^role=responder" $CONN)" -ge 5 ]' ||
				{ ktap_print_msg "only $(grep -c '^role=responder' $CONN) of 5 responder lines"; rc=1; }
		else
			ktap_print_msg "the reader's first read did not finish"
			rc=1
		fi
		touch "$dir/go"
		wait $reader
	else
		ktap_print_msg "the first requester never showed up"
		rc=1
	fi
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	sed 's/^/# probe: /' "$dir/probe.err" 2>/dev/null | head -5
	sed 's/^/# first read: /' "$dir/first" 2>/dev/null
	sed 's/^/# after the end: /' "$dir/second" 2>/dev/null
	first=$(grep -c '^role=responder' "$dir/first" 2>/dev/null)
	n=$(cat "$dir/first" "$dir/second" 2>/dev/null | grep '^role=responder' |
		sed -n 's/.* peer=\([^ ]*\) .*/\1/p' | sort | uniq -d | wc -l)
	rm -rf "$dir"
	ktap_print_msg "first read ${first:-0} responder line(s), lines shown twice: $n"
	[ $rc = 0 ] && [ "${first:-0}" -ge 1 ] && [ "$n" = 0 ]
}
ktap_test_result "one open connections file shows each connection once, also when read again after its end" \
	one_file_shows_each_once
ktap_test_result "and their lines go away too" no_lines_left

for p in requester_send_size requester_recv_size responder_send_size responder_recv_size; do
	echo 0 >$P/$p
done
echo N >$P/send_private_data
declare -A before
stat_counters_into before "requester responder" "absent zeroed private_data_off"
# Each end counts the connection with its private data off: the counter
# grew (read as a number: "private_data_off=1" as text also matches 10 to
# 19 and 100 on).
off_counted() {
	local r now ok=0
	for r in requester responder; do
		now=$(stat_counter $r private_data_off)
		case "$now ${before[$r-private_data_off]}" in
		*[!0-9\ ]* | ' '* | *' ') ktap_print_msg "$r: private_data_off not a number: '$now'"; return 1 ;;
		esac
		ktap_print_msg "$r: private_data_off ${before[$r-private_data_off]} -> $now"
		[ "$now" -gt "${before[$r-private_data_off]}" ] || ok=1
	done
	return $ok
}
off_check() {
	mount_and_check 1024 0 module "" "" || return 1
	traced_is xprtrdma_cm_private sent_len=0 peer_v1=no &&
		traced_is svcrdma_cm_private sent_len=0 peer_v1=no || return 1
	off_counted
}
ktap_test_result "private data off: both ends fall back to 1024/1024 (the server's Replies too: it sent nothing), no RI, mount works" off_check
# IB/RoCE (rxe here) pad the CM area with zeros: "sent nothing" arrives as
# 56 (REQ) or 196 (REP) zero octets, so each end counts the peer "zeroed",
# never "absent" (that is iWARP's, where nothing arrives).
absence_counted() {
	local r ok=0 z a
	for r in requester responder; do
		for z in "$(stat_counter $r zeroed)" "$(stat_counter $r absent)" \
			"${before[$r-zeroed]}" "${before[$r-absent]}"; do
			case $z in
			'' | *[!0-9]*)
				ktap_print_msg "$r: a counter is not a number: '$z'"
				return 1 ;;
			esac
		done
		z=$(($(stat_counter $r zeroed) - ${before[$r-zeroed]}))
		a=$(($(stat_counter $r absent) - ${before[$r-absent]}))
		ktap_print_msg "$r: zeroed +$z, absent +$a"
		[ "$z" -ge 1 ] && [ "$a" = 0 ] || ok=1
	done
	return $ok
}
ktap_test_result "private data off over rxe: each end counts the peer zeroed, not absent" absence_counted
echo Y >$P/send_private_data

ktap_test_result "module defaults: 4096/4096 with Remote Invalidation (stock sizes)" \
	mount_and_check 4096 1 module 4096 4096
unloaded() {
	rmmod rpcrdma_cm && [ ! -e $D/rpcrdma_cm ]
}
ktap_test_result "rmmod rpcrdma_cm: debugfs directory gone" unloaded

# Without the module (the series' transports): the server advertises
# the Remote Invalidation it uses (flags 01) and uses it because the
# client always offers it; it limits its Replies to the client's
# advertised 4096 (send_threshold=4096).
stock_check() {
	mount_and_check 4096 1 stock || return 1
	traced_is svcrdma_cm_private remote_inv=on send_threshold=4096 sent=f6ab0e1801010303 \
		peer=f6ab0e1801010303 &&
		traced_is xprtrdma_cm_private sent=f6ab0e1801010303 \
			peer=f6ab0e1801010303
}
ktap_test_result "module unloaded: stock negotiation 4096/4096, tracepoints say by=stock" stock_check

stop_nfsd
ktap_finished
