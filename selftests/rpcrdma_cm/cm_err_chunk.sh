#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The responder honours the receive size the requester advertised. A
# userspace requester (cm_probe.py) advertises send/receive sizes in its
# private data and sends an NFSv4.0 READ without any chunk, so the whole
# Reply must come inline:
#  - with rpcrdma_cm, a Reply above the requester's receive size is
#    answered with RDMA_ERROR/ERR_CHUNK (RFC 8166 section 4.5.3), smaller
#    ones come inline and never exceed the advertised size;
#  - without it, the stock server sends the oversize Reply inline anyway;
#  - a requester that sent no private data is not limited, with or
#    without rpcrdma_cm (an RFC 8166 client predating RFC 8797).
# Each check runs over soft-RoCE (rxe: the CM area arrives zero-padded) and
# over soft-iWARP (siw: exactly the octets sent; its own dummy NIC, as in
# cm_iwarp_short.sh).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root

PROBE="/usr/bin/python3 $DIR/cm_probe.py"
CLIENT_1K=f6ab0e1801000000 # send 1 KB, receive 1 KB, no RI
CLIENT_4K=f6ab0e1801000303 # send 4 KB, receive 4 KB, no RI

ktap_print_header
require_pyverbs
require_module_ko
TRANSPORTS="rxe siw"
ktap_set_plan $((1 + 7 * 2))

SIW_NIC=rcmerrsiw0
SIW_ADDR=192.0.2.78

cleanup() {
	stop_nfsd
	rmmod rpcrdma_cm 2>/dev/null
	rdma link delete siw-err 2>/dev/null
	ip link delete $SIW_NIC 2>/dev/null
}
trap cleanup EXIT

guest_setup rxe nfsd
rxe_ip=$ip
REP_LEN=196
siw_setup $SIW_NIC $SIW_ADDR siw-err
head -c 3000 /dev/urandom >"$NFS_EXPORT/big"
head -c 500 /dev/urandom >"$NFS_EXPORT/small"

CLIENT_NONE=none # no private data at all

# read_reply CLIENT_PDATA FILE COUNT: "proc=P err=E len=L nfs_status=S",
# the last line of cm_probe.py's output.
# Its first line, the server's accept private data, must have the length of
# the transport under test (REP_LEN: 196 zero-padded octets on rxe, exactly
# the 8 sent on siw), or the reply names the wrong transport and fails.
read_reply() {
	local pdata=$1 out rep
	[ "$pdata" = $CLIENT_NONE ] && pdata=
	out=$($PROBE "$ip" "$NFS_PORT" "$pdata" "$2" "$3")
	rep=$(echo "$out" | head -n 1)
	if [ "${#rep}" != $((2 * REP_LEN)) ]; then
		echo "accept private data of $((${#rep} / 2)) octets, $REP_LEN on this transport"
		return
	fi
	echo "$out" | tail -n 1
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
ktap_test_result "the server's grace period ends: a 500-octet READ succeeds" grace_over

# expect CLIENT FILE COUNT inline|err_chunk MAX_LEN: the Reply is a
# successful inline RDMA_MSG or an RDMA_ERROR/ERR_CHUNK, and its Send is at
# most MAX_LEN octets.
expect() {
	local r len
	r=$(read_reply "$1" "$2" "$3")
	ktap_print_msg "$2 ($3 octets), client $1: $r"
	case "$4:$r" in
	"inline:proc=0 err=0 "*" nfs_status=0") ;;
	"err_chunk:proc=4 err=2 "*) ;;
	*) return 1 ;;
	esac
	len=${r#*len=}
	len=${len%% *}
	[ "$len" -le "$5" ]
}

stock_oversize() {
	expect $CLIENT_1K big 3000 inline 65536 || return 1
	local r len
	r=$(read_reply $CLIENT_1K big 3000)
	len=${r#*len=}
	len=${len%% *}
	[ "$len" -gt 1024 ]
}

# overhead, at_threshold and above_threshold: at the boundary. The Reply of
# a READ of COUNT octets is the header overhead (the same for every READ,
# measured from the 500-octet one) plus COUNT rounded up to 4 (XDR). The
# largest Reply that fits 1 KB exactly comes inline; one octet more to read
# (4 more on the wire) is refused. A responder that compared with < instead
# of <= would refuse the first.
overhead() {
	local r len
	r=$(read_reply $CLIENT_1K small 500)
	len=${r#*len=}
	len=${len%% *}
	case "$r" in "proc=0 err=0 "*" nfs_status=0") ;; *) return 1 ;; esac
	echo $((len - 500))
}
at_threshold() {
	local o r len
	o=$(overhead) || return 1
	ktap_print_msg "Reply overhead of a READ: $o octets; a READ of $((1024 - o)) makes a 1024-octet Reply"
	r=$(read_reply $CLIENT_1K big $((1024 - o)))
	ktap_print_msg "big ($((1024 - o)) octets), client $CLIENT_1K: $r"
	len=${r#*len=}
	len=${len%% *}
	case "$r" in "proc=0 err=0 "*" nfs_status=0") ;; *) return 1 ;; esac
	[ "$len" -eq 1024 ]
}
above_threshold() {
	local o
	o=$(overhead) || return 1
	expect $CLIENT_1K big $((1024 - o + 1)) err_chunk 1024
}

for tr in $TRANSPORTS; do
	ip=$rxe_ip REP_LEN=196
	[ "$tr" = siw ] && ip=$SIW_ADDR REP_LEN=8
	rmmod rpcrdma_cm 2>/dev/null
	[ ! -d /sys/module/rpcrdma_cm ] || ktap_exit_fail_msg "rpcrdma_cm did not unload"
	ktap_test_result "$tr: stock server: 3000-octet Reply sent inline to a 1 KB requester" stock_oversize
	insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
	ktap_test_result "$tr: rpcrdma_cm: the same Reply is answered with ERR_CHUNK" \
		expect $CLIENT_1K big 3000 err_chunk 1024
	ktap_test_result "$tr: rpcrdma_cm: a 500-octet READ still comes inline within 1 KB" \
		expect $CLIENT_1K small 500 inline 1024
	ktap_test_result "$tr: rpcrdma_cm: a 4 KB requester gets the 3000-octet Reply inline" \
		expect $CLIENT_4K big 3000 inline 4096
	ktap_test_result "$tr: rpcrdma_cm: a Reply of exactly the 1 KB threshold comes inline" at_threshold
	ktap_test_result "$tr: rpcrdma_cm: one octet more to read is answered with ERR_CHUNK" above_threshold
	# A requester that sent no private data may be an RFC 8166 client that
	# sizes Reply chunks by its real buffers: the server does not limit it.
	ktap_test_result "$tr: rpcrdma_cm: a requester that sent no private data gets the 3000-octet Reply inline" \
		expect $CLIENT_NONE big 3000 inline 65536
done

ktap_finished
