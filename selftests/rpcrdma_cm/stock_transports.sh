#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RFC 8797 conformance of the kernel's own svcrdma and xprtrdma, without
# rpcrdma_cm (the series' stand-alone fixes; the module is never loaded):
#  - the Accept advertises the Remote Invalidation the server uses: to a
#    requester that offers it, over a device that can invalidate (rxe and
#    siw can), the Accept's flags are 01;
#  - inline Replies stay within the requester's advertised receive size
#    and the server's own send size: the checks of reply_lib.sh
#    (ERR_CHUNK above 1 KB for a 1 KB requester, exactly 1 KB inline,
#    above 4 KB for every requester; a requester that sent nothing is not
#    held to 1 KB), over rxe and siw (RPCRDMA_CM_REPLY_TRANSPORTS);
#  - sizes that are not whole KB count as the private data carries them,
#    rounded down: the client's rdma_max_inline_read (its receive
#    threshold) and the server's max_req_size (its Reply limit), over rxe.
# Stock 7.3.4 and 6.12.118 fail the Accept's flag, the four ERR_CHUNK
# checks of each transport (flags 00; each Reply sent inline) and both
# roundings; scripts/guest/stock-conformance.sh runs this program on the stock
# kernel and requires exactly that.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# shellcheck source=reply_lib.sh
. "$DIR/reply_lib.sh"
selftest_begin stock_transports tool

# RPCRDMA_CM_REPLY_TRANSPORTS: rxe, siw or both (the default); make check's
# cut on its second base runs rxe only.
TRANSPORTS=${RPCRDMA_CM_REPLY_TRANSPORTS:-rxe siw}
read -r -a tr_list <<<"$TRANSPORTS"
# The transports' loop: the Accept's flag and reply_checks' eight
# results (reply_lib.sh) each.
ktap_plan_counted $(( ${#tr_list[@]} * (1 + 8) ))

cleanup() { reply_cleanup; }
rmmod rpcrdma_cm 2>/dev/null
# Every hook is a module named rpcrdma_cm (the test hooks too: the hooks'
# exports require it).
[ ! -d /sys/module/rpcrdma_cm ] || ktap_exit_fail_msg "rpcrdma_cm is loaded: this program judges svcrdma without a hook"
reply_setup
ktap_test_result "the server's grace period ends: a 500-octet READ succeeds" grace_over

# accept_flags CLIENT_PDATA WANT: the flags octet of the server's accept.
accept_flags() {
	local rep
	rep=$(probe_out "$1" small 500 | jq -r ".received.raw // \"\"")
	ktap_print_msg "accept private data: ${rep:0:16} (client sent $1)"
	[ "${rep:0:10}" = f6ab0e1801 ] && [ "${rep:10:2}" = "$2" ]
}
# odd_max_req_size: with a max_req_size that is not whole KB (5000), the
# Accept advertises it as the octets can carry it, rounded down to 4 KB,
# and the server holds its Replies to that, as the requester reads it: a
# Reply of 4300 octets to a 16 KB requester, between what was advertised
# and the sysctl, is ERR_CHUNK. The sysctl is restored whatever happens.
odd_max_req_size() {
	local sysctl=/proc/sys/sunrpc/svc_rdma/max_req_size old rep o ok=0
	old=$(cat $sysctl) || return 1
	echo 5000 >$sysctl || return 1
	rep=$(probe_out $CLIENT_16K small 500 | jq -r ".received.raw // \"\"")
	ktap_print_msg "max_req_size 5000: accept private data ${rep:0:16}"
	[ "${rep:0:10}" = f6ab0e1801 ] && [ "${rep:12:4}" = 0303 ] || ok=1
	if o=$(overhead); then
		expect $CLIENT_16K huge $((4300 - o)) err_chunk 4096 || ok=1
	else
		ok=1
	fi
	echo "$old" >$sysctl
	return $ok
}
# client_odd_inline: the kernel client's side of the same rounding. With
# rdma_max_inline_read at 5119 the client advertises 4 KB receive (whole
# KB), and against a server that sends 8 KB (max_req_size 8192) RFC 8797
# gives min(8 KB, 4 KB): the client must take 4096 as its receive
# threshold (xprtrdma_inline_thresh, "neg send/recv", a stock event), not
# 5119, or it expects inline Replies the server will not send: a
# 4000-octet O_DIRECT READ, which such a client sends without a Write
# chunk, then fails with EIO (the server answers ERR_CHUNK); it must
# round-trip. The sysctls are restored whatever happens.
client_odd_inline() {
	local rd=/proc/sys/sunrpc/rdma_max_inline_read req=/proc/sys/sunrpc/svc_rdma/max_req_size
	local t=/sys/kernel/tracing old_rd old_req neg ok=0
	old_rd=$(cat $rd) && old_req=$(cat $req) || return 1
	echo 5119 >$rd && echo 8192 >$req || ok=1
	mountpoint -q $t || mount -t tracefs nodev $t
	echo >$t/trace
	echo 1 >$t/events/rpcrdma/xprtrdma_inline_thresh/enable || ok=1
	head -c 4000 /dev/urandom >"$NFS_EXPORT/odd"
	if [ $ok = 0 ] && mount_rdma "$rxe_ip" 4.2 soft,timeo=50,retrans=2; then
		neg=$(sed -n 's/.*neg send\/recv=[0-9]*\/\([0-9]*\),.*/\1/p' $t/trace | tail -n 1)
		ktap_print_msg "the client's receive threshold: ${neg:-not traced} (it advertised 4096)"
		[ "$neg" = 4096 ] || ok=1
		/usr/bin/python3 "$DIR/direct_io.py" read "$MNT/odd" /tmp/odd.back | sed 's/^/# /'
		cmp -s "$NFS_EXPORT/odd" /tmp/odd.back || { ktap_print_msg "the READ of 4000 octets failed or differs"; ok=1; }
		umount_rdma
	else
		ktap_print_msg "set-up or mount failed"
		ok=1
	fi
	echo 0 >$t/events/rpcrdma/xprtrdma_inline_thresh/enable
	echo "$old_rd" >$rd
	echo "$old_req" >$req
	return $ok
}
ktap_test_result "a client with rdma_max_inline_read 5119 (advertised 4 KB) takes 4096 from an 8 KB server" client_odd_inline

for tr in $TRANSPORTS; do
	reply_transport "$tr"
	ktap_test_result "$tr: to a requester offering Remote Invalidation the Accept advertises it (flags 01)" \
		accept_flags $CLIENT_1K_RI 01
	reply_checks "$tr: without rpcrdma_cm"
done
# The rounding does not depend on the transport: over rxe only.
reply_transport rxe
ktap_test_result "with max_req_size 5000 the Accept advertises 4 KB and a 4300-octet Reply to a 16 KB requester is ERR_CHUNK" \
	odd_max_req_size

ktap_finished
