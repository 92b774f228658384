#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2034 # settings for the programs that source it
#
# Sourced by stock_transports.sh and cm_err_chunk.sh: a userspace
# requester (rpcrdma-cm probe --read) that advertises chosen sizes in its
# private data and sends one NFSv4.0 READ without any chunk, so the whole Reply must
# come inline or as RDMA_ERROR/ERR_CHUNK, over soft-RoCE (rxe: the CM area
# arrives zero-padded) and soft-iWARP (siw: exactly the octets sent).
#
# reply_setup: debugfs, rxe, nfsd, a siw device on its own dummy NIC (when
# the caller's TRANSPORTS, if set, names siw: a distribution's kernel may
# have no siw) and the files the READs read; sets ip and REP_LEN for rxe.
# Callers pick a transport with reply_transport rxe|siw.

CLIENT_1K=f6ab0e1801000000 # send 1 KB, receive 1 KB, no RI
CLIENT_1K_RI=f6ab0e1801010000 # the same with Remote Invalidation
CLIENT_4K=f6ab0e1801000303 # send 4 KB, receive 4 KB, no RI
CLIENT_16K=f6ab0e1801000f0f # send 16 KB, receive 16 KB, no RI
CLIENT_NONE=none # no private data at all
SIW_NIC=rcmrplsiw0
SIW_ADDR=192.0.2.78
SIW_DEV=siw-reply

reply_cleanup() {
	stop_nfsd
	rmmod rpcrdma_cm 2>/dev/null
	rdma link delete $SIW_DEV 2>/dev/null
	ip link delete $SIW_NIC 2>/dev/null
}

reply_setup() {
	guest_setup rxe nfsd
	rxe_ip=$ip
	case " ${TRANSPORTS:-siw} " in
	*" siw "*) siw_setup $SIW_NIC $SIW_ADDR $SIW_DEV ;;
	esac
	head -c 3000 /dev/urandom >"$NFS_EXPORT/big"
	head -c 500 /dev/urandom >"$NFS_EXPORT/small"
	head -c 6000 /dev/urandom >"$NFS_EXPORT/huge"
	reply_transport rxe
}

# reply_transport rxe|siw: the address the probe connects to, and how long
# the server's accept private data arrives on that transport.
reply_transport() {
	case $1 in
	rxe) ip=$rxe_ip REP_LEN=196 ;;
	siw) ip=$SIW_ADDR REP_LEN=8 ;;
	esac
}

# probe_out CLIENT_PDATA FILE COUNT: rpcrdma-cm probe --read's JSON report
# (the server's accept private data, how the READ was answered).
probe_out() {
	local pdata=$1
	[ "$pdata" = $CLIENT_NONE ] && pdata=
	probe_pdata "$pdata" --json --read "$2:$3" "$ip:$NFS_PORT"
}

# read_reply CLIENT_PDATA FILE COUNT: "proc=P err=E len=L nfs_status=S"
# (P the RPC-over-RDMA procedure of the answer, 0 RDMA_MSG, 4 RDMA_ERROR,
# -1 none; E its error, 2 ERR_CHUNK; L the Send's octets; S the COMPOUND's
# status of an inline Reply, else -1).
# The server's accept private data must have the length of the transport
# under test (REP_LEN: 196 zero-padded octets on rxe, exactly the 8 sent
# on siw), or the reply names the wrong transport and fails.
read_reply() {
	local out rep
	out=$(probe_out "$@")
	rep=$(echo "$out" | jq -r '.received.raw // ""' 2>/dev/null)
	if [ "${#rep}" != $((2 * REP_LEN)) ]; then
		echo "accept private data of $((${#rep} / 2)) octets, $REP_LEN on this transport"
		return
	fi
	echo "$out" | jq -r '.read | "proc=\(.procedure // -1) err=\(.error) len=\(.len) nfs_status=\(.nfs_status // -1)"'
}

# The NFSv4 grace period (10 s here) refuses READ; wait it out (at most
# 30 s). Not ending it is a failure of its own, so that the checks after
# it do not fail for a reason they do not name.
grace_over() {
	local r i
	for i in $(seq 1 30); do
		r=$(read_reply $CLIENT_4K small 500)
		case "$r" in
		*nfs_status=0)
			ktap_print_msg "a READ succeeded after $i attempt(s)"
			return 0 ;;
		esac
		sleep 1
	done
	ktap_print_msg "no READ succeeded within 30 attempts; the last reply: ${r:-none}"
	return 1
}

# reply_len REPLY: the len= of a read_reply line.
reply_len() {
	local len=${1#*len=}
	echo "${len%% *}"
}

# expect CLIENT FILE COUNT inline|err_chunk MAX_LEN: the Reply is a
# successful inline RDMA_MSG or an RDMA_ERROR/ERR_CHUNK, and its Send is at
# most MAX_LEN octets.
expect() {
	local r
	r=$(read_reply "$1" "$2" "$3")
	ktap_print_msg "$2 ($3 octets), client $1: $r"
	case "$4:$r" in
	"inline:proc=0 err=0 "*" nfs_status=0") ;;
	"err_chunk:proc=4 err=2 "*) ;;
	*) return 1 ;;
	esac
	[ "$(reply_len "$r")" -le "$5" ]
}

# overhead, at_threshold and above_threshold: at the boundary. The Reply of
# a READ of COUNT octets is the header overhead (the same for every READ,
# measured from the 500-octet one) plus COUNT rounded up to 4 (XDR). The
# largest Reply that fits 1 KB exactly comes inline; one octet more to read
# (4 more on the wire) is refused. A responder that compared with < instead
# of <= would refuse the first.
overhead() {
	local r
	r=$(read_reply $CLIENT_1K small 500)
	case "$r" in "proc=0 err=0 "*" nfs_status=0") ;; *) return 1 ;; esac
	echo $(($(reply_len "$r") - 500))
}
at_threshold() {
	local o r
	o=$(overhead) || return 1
	ktap_print_msg "Reply overhead of a READ: $o octets; a READ of $((1024 - o)) makes a 1024-octet Reply"
	r=$(read_reply $CLIENT_1K big $((1024 - o)))
	ktap_print_msg "big ($((1024 - o)) octets), client $CLIENT_1K: $r"
	case "$r" in "proc=0 err=0 "*" nfs_status=0") ;; *) return 1 ;; esac
	[ "$(reply_len "$r")" -eq 1024 ]
}
above_threshold() {
	local o
	o=$(overhead) || return 1
	expect $CLIENT_1K big $((1024 - o + 1)) err_chunk 1024
}

# reply_checks WHAT: the eight checks of the responder-to-requester
# threshold (RFC 8797: min(the responder's send size, the requester's
# receive size); RFC 8166 section 4.5.3: ERR_CHUNK when a Reply cannot be
# conveyed within it), for a server that advertises 4 KB, as KTAP tests
# named "WHAT: ...".
reply_checks() {
	ktap_test_result "$1: a 3000-octet Reply to a 1 KB requester is answered with ERR_CHUNK" \
		expect $CLIENT_1K big 3000 err_chunk 1024
	ktap_test_result "$1: a 500-octet READ still comes inline within 1 KB" \
		expect $CLIENT_1K small 500 inline 1024
	ktap_test_result "$1: a 4 KB requester gets the 3000-octet Reply inline" \
		expect $CLIENT_4K big 3000 inline 4096
	ktap_test_result "$1: a Reply of exactly the 1 KB threshold comes inline" at_threshold
	ktap_test_result "$1: one octet more to read is answered with ERR_CHUNK" above_threshold
	# A requester that sent no private data may be an RFC 8166 client that
	# sizes Reply chunks by its real buffers: the server holds it to its own
	# send size, not to 1 KB (design.rst, "A client that sent no conforming
	# private data"). This guards against a server too strict.
	ktap_test_result "$1: a requester that sent no private data gets the 3000-octet Reply inline" \
		expect $CLIENT_NONE big 3000 inline 4096
	# The server's own send size holds for every requester: a 6000-octet
	# Reply maps onto few Send SGEs and stock svcrdma sends it inline.
	ktap_test_result "$1: a 16 KB requester gets ERR_CHUNK for a 6000-octet Reply (the server sends 4 KB)" \
		expect $CLIENT_16K huge 6000 err_chunk 4096
	ktap_test_result "$1: a requester that sent no private data gets ERR_CHUNK for a 6000-octet Reply" \
		expect $CLIENT_NONE huge 6000 err_chunk 4096
}
