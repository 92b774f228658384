# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Reconciling a series of RDMA CM connections between the kernel and a
# userspace peer (rpcrdma-cm storm or respond) with what RFC 8797 gives and what rpcrdma_cm
# counted: cm_hostile_responder.sh (the kernel client, ROLE=requester)
# and cm_storm.sh (nfsd, ROLE=responder). Source after lib.sh; set ROLE
# and WORK first. The oracle is $RPCRDMA_CM_ORACLE, by default
# rfc8797_oracle.py beside this file (a TEST_FILES of the Makefile).
#
# A set NAME leaves in $WORK: NAME.peer (what the userspace peer sent, one
# hex line per connection, "-" for nothing), NAME.trace (the kernel's
# event lines, one per connection, in the same order), NAME.before and
# NAME.after (ROLE's counters around the set). reconcile goes through them
# once (one oracle process per set: the guests run under TCG) and
# check_set reports.

# rpcrdma_cm's debugfs files the reconciliation reads.
STATS=/sys/kernel/debug/rpcrdma_cm/stats
CONNS=/sys/kernel/debug/rpcrdma_cm/connections

ORACLE=${RPCRDMA_CM_ORACLE:-$(dirname "${BASH_SOURCE[0]}")/rfc8797_oracle.py}

# counters: ROLE's counters, "name=value" one a line.
counters() {
	grep "^$ROLE " "$STATS" | tr ' ' '\n' | grep '='
}

# padded HEX PAD: HEX ("-" none) as the CM delivers it, zeros up to PAD.
padded() {
	local hex=$1
	[ "$hex" = - ] && hex=
	while [ $((${#hex} / 2)) -lt "$2" ]; do hex=${hex}00; done
	echo "$hex"
}

# trace_fields LINE: the event's key=value words as T_key variables.
trace_fields() {
	local w
	T_sent_send='' T_sent_recv='' T_sent_flags='' T_peer_len='' T_peer='' T_send_threshold='' T_recv_threshold='' T_remote_inv=''
	for w in $1; do
		case "$w" in
		sent_send=*|sent_recv=*|sent_flags=*|peer_len=*|peer=*|send_threshold=*|recv_threshold=*|remote_inv=*)
			printf -v "T_${w%%=*}" '%s' "${w#*=}" ;;
		esac
	done
}

# reconcile NAME PAD: for each connection, what the kernel traced against
# what the peer sent (PAD: the octets the CM delivers, 196 for a REP and
# 56 for a REQ on IB/RoCE, 0 = exact on iWARP) and against RFC 8797 as the
# independent oracle gives it (rfc8797_oracle.py negotiate: this
# side's own message, from the event, against the peer's octets; written
# from the RFC, not from the module's protocol core). Writes NAME.expected
# ("conformance reserved send recv ri" per connection) and
# NAME.bad-{trace,rfc,bound} (one line per connection that fails that
# check).
reconcile() {
	local name=$1 pad=$2 i=0 rep want exp got
	local -a lines wants exps
	mapfile -t lines <"$WORK/$name.trace"
	: >"$WORK/$name.bad-trace"
	: >"$WORK/$name.bad-rfc"
	: >"$WORK/$name.bad-bound"
	# One oracle process for the whole set (the guests run under TCG).
	: >"$WORK/$name.oracle-in"
	while read -r rep; do
		trace_fields "${lines[$i]:-}"
		want=$(padded "$rep" "$pad")
		wants[i]=$want
		i=$((i + 1))
		echo "${T_sent_send:-0} ${T_sent_recv:-0} $((${T_sent_flags:-0} & 1)) ${want:--}" >>"$WORK/$name.oracle-in"
	done <"$WORK/$name.peer"
	if ! /usr/bin/python3 "$ORACLE" negotiate <"$WORK/$name.oracle-in" >"$WORK/$name.oracle"; then
		echo "the oracle refused $WORK/$name.oracle-in" >>"$WORK/$name.bad-rfc"
	fi
	# The server holds a client that advertised no receive size to what
	# the server itself advertised it sends (its event's sent size, the
	# first column the oracle read), not to RFC 8797's assumed 1 KB
	# (Documentation/design.rst, the series' policy).
	if [ "$ROLE" = responder ]; then
		awk 'NR == FNR { own[FNR] = $1 > 0 ? $1 : 1024; next } $1 != "ok" { $3 = own[FNR] } { print }' \
			"$WORK/$name.oracle-in" "$WORK/$name.oracle" >"$WORK/$name.expected"
	else
		cp "$WORK/$name.oracle" "$WORK/$name.expected"
	fi
	mapfile -t exps <"$WORK/$name.expected"
	i=0
	while read -r rep; do
		trace_fields "${lines[$i]:-}"
		want=${wants[$i]}
		read -r _ _ exp <<<"${exps[$i]:-}"
		i=$((i + 1))
		if [ "$T_peer_len" != $((${#want} / 2)) ] || [ "$T_peer" != "${want:0:16}" ]; then
			echo "#$i: peer sent $rep; $ROLE traced peer_len=$T_peer_len peer=$T_peer" >>"$WORK/$name.bad-trace"
		fi
		got="$T_send_threshold $T_recv_threshold $T_remote_inv"
		if [ "$got" != "$exp" ]; then
			echo "#$i: peer sent $rep; RFC 8797 (the oracle) gives ${exp:-nothing}, the $ROLE applied $got" >>"$WORK/$name.bad-rfc"
		fi
		if [ "${T_send_threshold:-0}" -gt "${T_sent_send:-0}" ] || [ "${T_recv_threshold:-0}" -gt "${T_sent_recv:-0}" ]; then
			echo "#$i: thresholds $T_send_threshold/$T_recv_threshold above its own $T_sent_send/$T_sent_recv" >>"$WORK/$name.bad-bound"
		fi
	done <"$WORK/$name.peer"
}

# none_in NAME WHAT: NAME.bad-WHAT is empty (after at least one
# connection); otherwise show its first lines.
none_in() {
	[ -s "$WORK/$1.expected" ] || { ktap_print_msg "$1: no connection to check"; return 1; }
	[ -s "$WORK/$1.bad-$2" ] || return 0
	ktap_print_msg "$1: $(grep -c . "$WORK/$1.bad-$2") connections fail:"
	head -5 "$WORK/$1.bad-$2" | sed 's/^/# /'
	return 1
}

# each_offered NAME CASES: the first connections carried each case once,
# in order (the peer cycles through them; a client that reconnects within
# one mount attempt makes more connections than cases).
each_offered() {
	local name=$1 cases=$2 logged n
	logged=$(grep -c . "$WORK/$name.peer")
	n=$(grep -c . "$cases")
	ktap_print_msg "$name: $n cases, $logged connections logged, $(grep -c . "$WORK/$name.trace") traced"
	[ "$(grep -c . "$WORK/$name.trace")" = "$logged" ] ||
		{ ktap_print_msg "$name: $(grep -c . "$WORK/$name.trace") events for $logged connections"; return 1; }
	[ "$logged" -ge "$n" ] && diff <(head -n "$n" "$WORK/$name.peer") "$cases" >/dev/null && return 0
	ktap_print_msg "$name: the peer's first $n connections did not carry the $n cases in order"
	return 1
}

counted() {
	local name=$1 ok=0 c want before after
	for c in connections conforming absent zeroed short bad_magic unknown_version reserved_flags remote_inv; do
		case $c in
		connections) want=$(grep -c . "$WORK/$name.expected") ;;
		conforming) want=$(grep -c '^ok ' "$WORK/$name.expected") ;;
		reserved_flags) want=$(awk '$1 == "ok" && $2 != 0' "$WORK/$name.expected" | grep -c .) ;;
		remote_inv) want=$(awk '$5 == "on"' "$WORK/$name.expected" | grep -c .) ;;
		*) want=$(grep -c "^$c " "$WORK/$name.expected") ;;
		esac
		before=$(sed -n "s/^$c=//p" "$WORK/$name.before")
		after=$(sed -n "s/^$c=//p" "$WORK/$name.after")
		if [ -z "$before" ] || [ -z "$after" ] || [ $((after - before)) != "$want" ]; then
			ktap_print_msg "$name: counter $c ${before:-?} -> ${after:-?}, want +$want"
			ok=1
		fi
	done
	[ $ok = 0 ] && ktap_print_msg "$name: counters after: $(paste -sd ' ' "$WORK/$name.after")"
	return $ok
}

no_line_left() {
	slowwait 30 no_line_in "$CONNS" "$ROLE" && return 0
	ktap_print_msg "debugfs lines left after 30 s:"
	sed 's/^/# /' "$CONNS"
	return 1
}

# check_set NAME PAD CASES WHAT: the six results of one set.
check_set() {
	local name=$1 pad=$2 cases=$3 what=$4
	reconcile "$name" "$pad"
	ktap_test_result "$what: the first connections carried each case once, in order" each_offered "$name" "$cases"
	ktap_test_result "$what: the $ROLE traced the octets each connection carried" none_in "$name" trace
	ktap_test_result "$what: thresholds and RI are what RFC 8797 gives (the independent oracle)" none_in "$name" rfc
	ktap_test_result "$what: no threshold above what the $ROLE advertised" none_in "$name" bound
	ktap_test_result "$what: the module counted each connection once, under its cause" counted "$name"
	ktap_test_result "$what: no debugfs line left" no_line_left
}
