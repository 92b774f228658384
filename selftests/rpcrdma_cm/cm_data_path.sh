#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The data path follows the negotiated thresholds. Both ends (one guest)
# advertise the same size through rpcrdma_cm, 4 KB and then 64 KB; an
# NFSv4.2 mount writes and reads files of 2, 8, 32 and 60 KB with O_DIRECT
# (direct_io.py: one WRITE or READ RPC, counted between OPEN and CLOSE).
# The client's mountstats chunk counters must show a Read chunk for a
# WRITE, and a Write chunk for a READ, exactly when the payload does not
# fit inline under the threshold, and no Reply chunk; every file reads
# back byte-exact. (Around the I/O, OPEN's largest possible reply exceeds
# 4 KB, so at 4 KB each OPEN takes a Reply chunk; that is not counted.)

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=lib.sh
. "$DIR/lib.sh"
selftest_begin cm_data_path module rxe nfsd

THRESHOLDS="4096 65536"
SIZES_KB="2 8 32 60"
CONN=/sys/kernel/debug/rpcrdma_cm/connections

# The thresholds' loop: per threshold the mount, and per size of its inner
# loop a WRITE and a READ.
ktap_plan_counted $(( $(wc -w <<<"$THRESHOLDS") * (1 + $(wc -w <<<"$SIZES_KB") * 2) ))

insmod "$RPCRDMA_CM_KO" || ktap_exit_fail_msg "insmod failed"
P=$(rpcrdma_cm_params_dir) || ktap_exit_fail_msg "no parameters of rpcrdma_cm to change"
work=$(mktemp -d)

# counter KEY DELTAS: KEY's value in direct_io.py's output.
counter() {
	line_value "$2" "$1"
}

# expect_chunks WHAT DELTA CHUNKED: DELTA must be 0 when CHUNKED is 0 and
# positive when it is 1. A DELTA that is empty or not a number (the counter
# is missing from direct_io.py's output) fails.
expect_chunks() {
	case $2 in
	'' | *[!0-9]*)
		ktap_print_msg "$1: chunk count '$2' is not a number"
		return 1 ;;
	esac
	if [ "$3" = 1 ] && [ "$2" -le 0 ]; then
		ktap_print_msg "$1: no chunk, but the RPC exceeds the threshold"
		return 1
	fi
	if [ "$3" = 0 ] && [ "$2" -ne 0 ]; then
		ktap_print_msg "$1: $2 chunk(s), but the RPC fits inline"
		return 1
	fi
}

# write_file THRESHOLD KB: one O_DIRECT WRITE of KB kilobytes. Payloads
# here are at least 2 KB away from the thresholds, so "the RPC exceeds
# the threshold" is "the payload is not smaller than it".
write_file() {
	local thr=$1 kb=$2 d chunked=0
	[ $((kb * 1024)) -ge "$thr" ] && chunked=1
	head -c $((kb * 1024)) /dev/urandom >"$work/src$kb"
	d=$(/usr/bin/python3 "$DIR/direct_io.py" write "$MNT/f$kb" "$work/src$kb") || return 1
	ktap_print_msg "write $kb KB at $thr: $d"
	expect_chunks "WRITE $kb KB" "$(counter read_chunks "$d")" $chunked &&
		expect_chunks "WRITE $kb KB, write chunks" "$(counter write_chunks "$d")" 0 &&
		expect_chunks "WRITE $kb KB, reply chunks" "$(counter reply_chunks "$d")" 0
}

# read_file THRESHOLD KB: one O_DIRECT READ, compared with what was written.
read_file() {
	local thr=$1 kb=$2 d chunked=0
	[ $((kb * 1024)) -ge "$thr" ] && chunked=1
	rm -f "$work/back"
	d=$(/usr/bin/python3 "$DIR/direct_io.py" read "$MNT/f$kb" "$work/back") || return 1
	ktap_print_msg "read $kb KB at $thr: $d"
	cmp "$work/src$kb" "$work/back" || { ktap_print_msg "data differs"; return 1; }
	expect_chunks "READ $kb KB" "$(counter write_chunks "$d")" $chunked &&
		expect_chunks "READ $kb KB, read chunks" "$(counter read_chunks "$d")" 0 &&
		expect_chunks "READ $kb KB, reply chunks" "$(counter reply_chunks "$d")" 0
}

# mount_at THRESHOLD: both ends advertise THRESHOLD; the mount's
# connection negotiated it on both sides.
mount_at() {
	local p
	for p in requester_send_size requester_recv_size responder_send_size responder_recv_size; do
		echo "$1" >$P/$p || return 1
	done
	mount_rdma "$ip" 4.2 || return 1
	grep -q "^role=requester .*send_threshold=$1 recv_threshold=$1 " $CONN &&
		grep -q "^role=responder .*send_threshold=$1 recv_threshold=$1 " $CONN ||
		{ sed 's/^/# /' $CONN; return 1; }
}

for thr in $THRESHOLDS; do
	ktap_test_result "mount with both ends at $thr: negotiated $thr/$thr" mount_at "$thr"
	for kb in $SIZES_KB; do
		ktap_test_result "threshold $thr: $kb KB WRITE uses a Read chunk only above it" \
			write_file "$thr" "$kb"
		ktap_test_result "threshold $thr: $kb KB READ uses a Write chunk only above it, data exact" \
			read_file "$thr" "$kb"
	done
	rm -f "$MNT"/f*
	umount_rdma
done

rm -rf "$work"
rmmod rpcrdma_cm
stop_nfsd
ktap_finished
