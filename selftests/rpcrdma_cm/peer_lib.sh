# SPDX-License-Identifier: GPL-2.0
#
# Reconciling a series of RDMA CM connections between the kernel and a
# userspace peer (cm_peer.py) with what RFC 8797 gives and what rpcrdma_cm
# counted: cm_hostile_responder.sh (the kernel client, ROLE=requester,
# EVENT=xprtrdma_cm_private) and cm_storm.sh (nfsd, ROLE=responder,
# EVENT=svcrdma_cm_private). Source after lib.sh; set ROLE, EVENT, WORK,
# STATS, CONNS and TOOL first.
#
# A set NAME leaves in $WORK: NAME.peer (what the userspace peer sent, one
# hex line per connection, "-" for nothing), NAME.trace (EVENT's lines, one
# per connection, in the same order), NAME.before and NAME.after (ROLE's
# counters around the set). check_set runs the six checks on them.

# counters: ROLE's counters, "name=value" one a line.
counters() {
	grep "^$ROLE " "$STATS" | tr ' ' '\n' | grep '='
}

# padded HEX PAD: HEX ("-" none) as the CM delivers it.
padded() {
	local hex=$1
	[ "$hex" = - ] && hex=
	while [ $((${#hex} / 2)) -lt "$2" ]; do hex=${hex}00; done
	echo "$hex"
}

# tkv LINE KEY: KEY's value in a tracepoint line.
tkv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

each_offered() {
	local name=$1 cases=$2 logged
	logged=$(grep -c . "$WORK/$name.peer")
	ktap_print_msg "$name: $(grep -c . "$cases") cases, $logged connections logged, $(grep -c . "$WORK/$name.trace") traced"
	# Each case went out once, in order (a reconnect would log more).
	diff "$WORK/$name.peer" "$cases" >/dev/null || {
		ktap_print_msg "$name: the peer's private data differ from the cases (reconnects or lost attempts)"
		return 1
	}
}
each_traced() {
	local name=$1 pad=$2 i=0 ok=0 rep want line
	[ "$(grep -c . "$WORK/$name.trace")" = "$(grep -c . "$WORK/$name.peer")" ] || {
		ktap_print_msg "$name: $(grep -c . "$WORK/$name.trace") events for $(grep -c . "$WORK/$name.peer") connections"
		return 1
	}
	while read -r rep; do
		i=$((i + 1))
		line=$(sed -n "${i}p" "$WORK/$name.trace")
		want=$(padded "$rep" "$pad")
		if [ "$(tkv "$line" peer_len)" != $((${#want} / 2)) ] ||
			[ "$(tkv "$line" peer)" != "${want:0:16}" ]; then
			ktap_print_msg "$name #$i: peer sent $rep; $ROLE traced peer_len=$(tkv "$line" peer_len) peer=$(tkv "$line" peer)"
			ok=1
		fi
	done <"$WORK/$name.peer"
	return $ok
}
each_rfc() {
	local name=$1 pad=$2 i=0 ok=0 rep line args j exp got
	: >"$WORK/$name.expected"
	while read -r rep; do
		i=$((i + 1))
		line=$(sed -n "${i}p" "$WORK/$name.trace")
		# What this side sent (its own conforming message).
		args=(--send "$(tkv "$line" sent_send)" --recv "$(tkv "$line" sent_recv)")
		[ $(($(tkv "$line" sent_flags) & 1)) = 1 ] || args+=(--no-ri)
		j=$("$TOOL" negotiate --json "${args[@]}" "$(padded "$rep" "$pad")")
		exp=$(echo "$j" | jq -r '"\(.negotiated.send_threshold) \(.negotiated.recv_threshold) \(if .negotiated.remote_invalidation then "on" else "off" end)"')
		echo "$(echo "$j" | jq -r '"\(.peer.conformance) \(.peer.message.reserved_flags // 0)"') $exp" >>"$WORK/$name.expected"
		got="$(tkv "$line" send_threshold) $(tkv "$line" recv_threshold) $(tkv "$line" remote_inv)"
		if [ "$got" != "$exp" ]; then
			ktap_print_msg "$name #$i: peer sent $rep; RFC 8797 (rpcrdma-cm) gives $exp, the $ROLE applied $got"
			ok=1
		fi
	done <"$WORK/$name.peer"
	[ "$i" -gt 0 ] || { ktap_print_msg "$name: no connection to check"; return 1; }
	return $ok
}
each_bounded() {
	local name=$1 line ok=0 n=0
	while read -r line; do
		n=$((n + 1))
		if [ "$(tkv "$line" send_threshold)" -gt "$(tkv "$line" sent_send)" ] ||
			[ "$(tkv "$line" recv_threshold)" -gt "$(tkv "$line" sent_recv)" ]; then
			ktap_print_msg "$name #$n: thresholds $(tkv "$line" send_threshold)/$(tkv "$line" recv_threshold) above its own $(tkv "$line" sent_send)/$(tkv "$line" sent_recv)"
			ok=1
		fi
	done <"$WORK/$name.trace"
	[ $n -gt 0 ] && return $ok
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
	[ $ok = 0 ] && ktap_print_msg "$name: counters: $(paste -sd ' ' "$WORK/$name.after")"
	return $ok
}
no_line_left() {
	local i
	for i in $(seq 1 120); do
		grep -q "^role=$ROLE " "$CONNS" || return 0
		sleep 0.25
	done
	ktap_print_msg "debugfs lines left after 30 s:"
	sed 's/^/# /' $CONNS
	return 1
}

# check_set NAME PAD CASES WHAT: the six results of one set.
check_set() {
	local name=$1 pad=$2 cases=$3 what=$4
	ktap_test_result "$what: each case offered once, in order" each_offered "$name" "$cases"
	ktap_test_result "$what: the client traced the octets each connection carried" each_traced "$name" "$pad"
	ktap_test_result "$what: thresholds and RI are what RFC 8797 gives (rpcrdma-cm negotiate)" each_rfc "$name" "$pad"
	ktap_test_result "$what: no threshold above what the client advertised" each_bounded "$name"
	ktap_test_result "$what: the module counted each connection once, under its cause" counted "$name"
	ktap_test_result "$what: no debugfs line left" no_line_left
}

