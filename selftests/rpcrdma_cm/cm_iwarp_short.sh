#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Short private data over iWARP. Soft-iWARP (siw) delivers exactly the
# octets the peer sent (IB and RoCE pad the CM area with zeros), so a
# requester that sends fewer than the 8 octets of an RFC 8797 message must
# not make the server read past them. A userspace requester (rpcrdma-cm probe)
# connects to nfsd's RDMA listener over siw with 0, 1, 3, 7, 8 and 9
# octets of private data, with rpcrdma_cm unloaded (the stock decoder) and
# loaded. Each connection must be accepted; the server's
# rpcrdma:svcrdma_cm_private event shows what it made of the data: a
# Version One message only for 8 and 9 octets, Remote Invalidation only
# where a whole message offered it. The module counts the short ones as
# "short"; a requester without a whole message is held to the server's own
# send size only (server send_threshold 4096, not 1024), as RFC 8166
# clients without RFC 8797 expect. The log
# of the whole program must hold no report: on the debug kernel KASAN
# reports the stock decoder's out-of-bounds read of 1-3 octets.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_iwarp_short tool module guest

# A dummy NIC of its own for siw: rxe may sit on the guest's NIC already,
# and the address picks the RDMA device. 192.0.2.0/24 is TEST-NET-1.
SIW_NIC=rcmsiw0
SIW_ADDR=192.0.2.77


# octets sent|peer_v1 the server must trace|remote_inv|module counter
# The private data are prefixes of a conforming message offering Remote
# Invalidation (f6ab0e18 01 01 03 03), and one longer than it: 7 octets
# hold magic, version and the RI flag but no receive size, which must not
# pass for a message either.
CASES="none|no|off|absent
f6|no|off|short
f6ab0e|no|off|short
f6ab0e18010103|no|off|short
f6ab0e1801010303|yes|on|conforming
f6ab0e1801010303ff|yes|on|conforming"
ncases=$(echo "$CASES" | wc -l)
# The requester's side: rpcrdma-cm respond answers the kernel NFS
# client's connect with these octets. octets|peer_v1|send and receive
# thresholds the client must apply (4096 is its own limit).
CLIENT_PORT=$((NFS_PORT + 1))
CLIENT_CASES="f6|no|1024
f6ab0e|no|1024
f6ab0e18010103|no|1024
f6ab0e1801010303|yes|4096"
nclient=$(echo "$CLIENT_CASES" | wc -l)
# The loop over stock and module: CASES each, one result per case; the
# loop over CLIENT_CASES: one result each.
ktap_plan_counted $((2 * ncases)) "$nclient"

cleanup() {
	stop_nfsd
	umount_rdma
	rmmod rpcrdma_cm 2>/dev/null
	rdma link delete siw0 2>/dev/null
	ip link delete $SIW_NIC 2>/dev/null
}

siw_setup $SIW_NIC $SIW_ADDR siw0
trace_cm_private svcrdma_cm_private || ktap_exit_fail_msg "no rpcrdma tracepoints"
start_nfsd || ktap_exit_fail_msg "nfsd did not start"

counter() {
	stat_counter responder "$1"
}

# probe_case BY HEX|none V1 RI COUNTER: connect with HEX over siw; the
# server accepts with its own advertisement (4 KB, RI, module or not) and
# traces BY, the exact length and V1, RI; the module also counts COUNTER,
# and the server holds a requester that sent no Version One message to
# its own send size (send_threshold 4096).
probe_case() {
	local by=$1 hex=$2 v1=$3 ri=$4 before after reply got want len
	[ "$hex" = none ] && hex=
	len=$((${#hex} / 2))
	[ "$by" = module ] && before=$(counter "$5")
	echo >/sys/kernel/tracing/trace
	if [ -n "$hex" ]; then
		reply=$("$TOOL" probe --json --pdata "$hex" "$SIW_ADDR:$NFS_PORT" | jq -r .received.raw)
	else
		reply=$("$TOOL" probe --json --no-pdata "$SIW_ADDR:$NFS_PORT" | jq -r .received.raw)
	fi
	[ -n "$reply" ] || return 1
	# Module or not, the server advertises 4 KB and the Remote
	# Invalidation it uses (siw can invalidate).
	want=f6ab0e1801010303
	if [ "$reply" != "$want" ]; then
		ktap_print_msg "server answered '$reply', want $want"
		return 1
	fi
	traced_expect svcrdma_cm_private "by peer_len peer_v1 remote_inv" "$by $len $v1 $ri" || return 1
	[ "$by" = module ] || return 0
	after=$(counter "$5")
	if [ "$after" != $((before + 1)) ]; then
		ktap_print_msg "$5 $before -> $after"
		return 1
	fi
	# 4096 either way: the client's 4 KB, or for a client without a whole
	# message the server's own advertised 4 KB (not RFC 8797's 1 KB).
	got=$(traced_value svcrdma_cm_private send_threshold)
	want=4096
	if [ "$got" != "$want" ]; then
		ktap_print_msg "module send threshold $got, want $want"
		return 1
	fi
}

for by in stock module; do
	if [ $by = module ]; then
		insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
	fi
	while IFS='|' read -r hex v1 ri count; do
		len=0
		[ "$hex" = none ] || len=$((${#hex} / 2))
		name="$by: $len octets over siw: accepted, peer_v1=$v1 remote_inv=$ri"
		[ $by = module ] && name="$name, counted $count"
		ktap_test_result "$name" probe_case $by "$hex" "$v1" "$ri" "$count"
	done <<<"$CASES"
done

# The module saw every connection of its half; nothing else touched siw.
all_counted() {
	local n
	n=$(counter connections)
	ktap_print_msg "responder connections counted: $n"
	[ "$n" = "$ncases" ]
}
ktap_test_result "module: $ncases connections counted" all_counted

requester_counter() {
	stat_counter requester "$1"
}

# client_case BY HEX V1 SIZE: the kernel client mounts from a responder
# that accepts with HEX (and answers nothing, so the mount fails); its
# rpcrdma:xprtrdma_cm_private event must show BY, the exact length, V1
# and SIZE as both thresholds. With the module, "short" must rise.
client_case() {
	local by=$1 hex=$2 v1=$3 size=$4 out=/tmp/cm_iwarp_short.responder
	local pid got before after len=$((${#2} / 2))
	[ "$by" = module ] && before=$(requester_counter short)
	trace_cm_private xprtrdma_cm_private || return 1
	timeout 120 "$TOOL" respond --count 1 --pdata "${hex:--}" --hold 3 "$SIW_ADDR:$CLIENT_PORT" >$out 2>&1 &
	pid=$!
	wait_for_line 20 $out listening
	mkdir -p "$MNT"
	timeout 90 mount -t nfs -o vers=4.0,proto=rdma,port=$CLIENT_PORT,soft,timeo=20,retrans=1,retry=0 \
		"$SIW_ADDR:/" "$MNT" >/dev/null 2>&1 && umount "$MNT"
	if ! wait $pid; then
		sed 's/^/# responder: /' $out
		ktap_print_msg "the responder did not see the connection through"
		return 1
	fi
	traced_expect xprtrdma_cm_private "by peer_len peer_v1 send_threshold recv_threshold" \
		"$by $len $v1 $size $size" || return 1
	[ "$by" = module ] || return 0
	after=$(requester_counter short)
	[ "$after" = $((before + 1)) ] || { ktap_print_msg "short $before -> $after"; return 1; }
}

rmmod rpcrdma_cm
while IFS='|' read -r hex v1 size; do
	ktap_test_result "stock client: server sent $((${#hex} / 2)) octets over siw: peer_v1=$v1, thresholds $size" \
		client_case stock "$hex" "$v1" "$size"
done <<<"$CLIENT_CASES"
insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
ktap_test_result "module client: server sent 7 octets over siw: counted short, thresholds 1024" \
	client_case module f6ab0e18010103 no 1024

ktap_test_result "kernel log since the first connection: no report" no_report_since cm_iwarp_short

ktap_finished
