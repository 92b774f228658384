#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rpcrdma_cm.ko loads and unloads; its parameters are visible (under
# /sys/module with the C shim, in debugfs rpcrdma_cm/parameters when built
# from the kernel crate: lib.sh's rpcrdma_cm_params_dir), writable, and
# refuse out-of-range sizes.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
skip_unless_root

ktap_print_header
ktap_set_plan 7

if [ ! -r "${RPCRDMA_CM_KO:-}" ]; then
	ktap_exit_fail_msg "RPCRDMA_CM_KO '${RPCRDMA_CM_KO:-}' not readable"
fi
modprobe rpcrdma || ktap_exit_fail_msg "modprobe rpcrdma failed"
rmmod rpcrdma_cm 2>/dev/null

ktap_test_result "insmod rpcrdma_cm.ko" insmod "$RPCRDMA_CM_KO"
P=$(rpcrdma_cm_params_dir) || P=/nonexistent

# The defaults Documentation/admin-guide.rst promises: sizes 0 (the
# transport's own setting), both booleans Y.
DEFAULTS="requester_send_size=0 requester_recv_size=0 responder_send_size=0
responder_recv_size=0 remote_invalidation=Y send_private_data=Y"
params_present() {
	local kv p want got ok=0
	for kv in $DEFAULTS; do
		p=${kv%%=*} want=${kv#*=}
		if [ ! -r "$P/$p" ]; then
			ktap_print_msg "missing $P/$p"
			ok=1
			continue
		fi
		got=$(cat "$P/$p")
		if [ "$got" != "$want" ]; then
			ktap_print_msg "$p=$got, the documented default is $want"
			ok=1
		fi
	done
	return $ok
}
ktap_test_result "parameters visible with stock defaults" params_present

size_writable() {
	echo 16384 >$P/requester_send_size && [ "$(cat $P/requester_send_size)" = 16384 ] &&
		echo 0 >$P/requester_send_size && [ "$(cat $P/requester_send_size)" = 0 ]
}
ktap_test_result "size parameter writable at runtime" size_writable

size_range_checked() {
	local v
	for v in 1 1023 262145 -1 abc; do
		if echo "$v" >$P/responder_recv_size 2>/dev/null; then
			ktap_print_msg "value $v was accepted"
			return 1
		fi
	done
	[ "$(cat $P/responder_recv_size)" = 0 ] && echo 262144 >$P/responder_recv_size &&
		echo 1024 >$P/responder_recv_size
}
ktap_test_result "size parameter refuses values outside 1024..262144" size_range_checked

bool_writable() {
	echo N >$P/send_private_data && [ "$(cat $P/send_private_data)" = N ] &&
		echo Y >$P/send_private_data && [ "$(cat $P/send_private_data)" = Y ]
}
ktap_test_result "boolean parameter writable at runtime" bool_writable

ktap_test_result "rmmod rpcrdma_cm" rmmod rpcrdma_cm

insmod_with_params() {
	insmod "$RPCRDMA_CM_KO" requester_send_size=8192 send_private_data=N &&
		[ "$(cat $P/requester_send_size)" = 8192 ] &&
		[ "$(cat $P/send_private_data)" = N ] && rmmod rpcrdma_cm &&
		! insmod "$RPCRDMA_CM_KO" requester_send_size=512 2>/dev/null &&
		[ ! -d /sys/module/rpcrdma_cm ]
}
ktap_test_result "insmod with parameters; bad value refused at load" insmod_with_params

ktap_finished
