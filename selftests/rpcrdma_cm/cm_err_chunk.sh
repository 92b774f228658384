#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# With rpcrdma_cm loaded, the responder still honours the receive size the
# requester advertised (the hook's send threshold never raises it): the
# checks of reply_lib.sh over rxe (stock_transports.sh runs the same
# checks over rxe and siw without the module); then the module's own send
# size, 2 KB, 16 KB and 1 KB.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
# shellcheck source=reply_lib.sh
. "$DIR/reply_lib.sh"
selftest_begin cm_err_chunk tool module

# The module over rxe; stock_transports.sh runs the same checks over
# rxe and siw without it, and cm_iwarp_short.sh the module over siw.
TRANSPORTS="rxe"
# The transports' loop: reply_checks' eight results (reply_lib.sh) each.
ktap_plan_counted $(( $(wc -w <<<"$TRANSPORTS") * 8 ))

cleanup() { reply_cleanup; }
reply_setup
ktap_test_result "the server's grace period ends: a 500-octet READ succeeds" grace_over
insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
for tr in $TRANSPORTS; do
	reply_transport "$tr"
	reply_checks "$tr: rpcrdma_cm"
done

# The module's own send size: at 2048 the server holds every requester to
# it (min(2048, the requester's receive size)); at 16384 it still holds a
# 1 KB requester to 1 KB (the module never raises the client's limit), and
# a requester that sent nothing to 16384. Over rxe.
reply_transport rxe
reload() {
	rmmod rpcrdma_cm && insmod "$RPCRDMA_CM_KO" "$@"
}
reload responder_send_size=2048 || ktap_exit_fail_msg "insmod responder_send_size=2048 failed"
ktap_test_result "rpcrdma_cm responder_send_size=2048: a 4 KB requester gets ERR_CHUNK for a 3000-octet Reply" \
	expect $CLIENT_4K big 3000 err_chunk 2048
ktap_test_result "rpcrdma_cm responder_send_size=2048: so does a requester that sent no private data" \
	expect $CLIENT_NONE big 3000 err_chunk 2048
reload responder_send_size=16384 responder_recv_size=16384 ||
	ktap_exit_fail_msg "insmod responder_send_size=16384 failed"
ktap_test_result "rpcrdma_cm responder_send_size=16384: a 1 KB requester still gets ERR_CHUNK for 3000 octets" \
	expect $CLIENT_1K big 3000 err_chunk 1024
ktap_test_result "rpcrdma_cm responder_send_size=16384: a requester that sent no private data gets 6000 octets inline" \
	expect $CLIENT_NONE huge 6000 inline 16384

# The server's buffers at 1 KB (its Send SGE count then 4): a requester
# that sent no private data gets ERR_CHUNK for a 3001-octet READ (the XDR
# pad adds a tail SGE) and for a 3000-octet one (a multiple of 4: no pad,
# no tail), as the server's own 1 KB send size says, whatever the Reply
# maps onto, and the svcrdma_reply_over_threshold event says why (length,
# threshold 1024); a 500-octet READ still comes inline.
over_threshold_traced() {
	local t=/sys/kernel/tracing ev
	ev=$t/events/rpcrdma/svcrdma_reply_over_threshold/enable
	[ -w $ev ] || { ktap_print_msg "no svcrdma_reply_over_threshold event"; return 1; }
	echo 0 >$t/tracing_on && echo >$t/trace && echo 1 >$ev && echo 1 >$t/tracing_on
	expect $CLIENT_NONE big "$1" err_chunk 1024
	local rc=$?
	echo 0 >$ev
	grep svcrdma_reply_over_threshold $t/trace | sed 's/^/# /'
	# The event names this Reply: its length above the threshold, 1024.
	local len
	len=$(sed -n 's/.*svcrdma_reply_over_threshold: .* length=\([0-9]*\) threshold=1024$/\1/p' $t/trace | tail -1)
	[ $rc = 0 ] && [ -n "$len" ] && [ "$len" -gt 1024 ]
}
reload responder_send_size=1024 responder_recv_size=1024 ||
	ktap_exit_fail_msg "insmod responder_send_size=1024 failed"
ktap_test_result "rpcrdma_cm at 1 KB: a requester without private data gets ERR_CHUNK for 3001 octets (padded), and the event says why" \
	over_threshold_traced 3001
ktap_test_result "rpcrdma_cm at 1 KB: the same for 3000 octets (no pad), and the event says why" \
	over_threshold_traced 3000
ktap_test_result "rpcrdma_cm at 1 KB: a requester without private data gets a 500-octet READ inline" \
	expect $CLIENT_NONE small 500 inline 1024

ktap_finished
