#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The iWARP side of interop's SEND check (scripts/lib.sh: send_sizes PCAP
# SRC siw, send_sizes_iwarp), on a capture a real run kept: the row
# module-asym-x-module-asym-siw (server 16/8 KB, client 32/4 KB over
# siw, NFS 4.2), cut down to the TCP handshakes, the MPA Request/Reply
# and the frames that carry Send messages (testdata/send-sizes/README).
# The largest Call and Reply must be what the RoCEv2 decoder found for
# the same configuration and workload on rxe (module-asym-x-module-asym,
# 4320 and 1160 octets: another wire, another decoder), multi-segment
# Sends included; every frame twice gives the same sizes with the copies
# counted as resent; and a capture that lost the middle segment of a
# Send, a whole Send message, or ends inside one must fail rather than
# give a size. Boots
# nothing. KTAP; exit 0 only if every case holds, 4 (skip) without tshark,
# editcap or mergecap.
#
#   scripts/tests/send-sizes.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/lib.sh"
pcap=$top/selftests/rpcrdma_cm/testdata/send-sizes/asym-siw.pcap
if ! command -v tshark >/dev/null || ! command -v editcap >/dev/null || ! command -v mergecap >/dev/null; then
	echo "1..0 # SKIP tshark, editcap or mergecap missing"
	exit 4
fi
# send_sizes reports tshark's complaints through ktap_print_msg.
ktap_print_msg() { echo "# $*"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SERVER=192.0.2.1 CLIENT=192.0.2.2

n=0 bad=0
result() {
	n=$((n + 1))
	if [ "$2" = ok ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1: $3"
		bad=$((bad + 1))
	fi
}

# largest WHO SRC WANT: the largest Send of SRC is WANT octets.
largest() {
	local out count max
	out=$(send_sizes "$pcap" "$2" siw 2>&1)
	read -r count max _ <<<"$out"
	if [[ "$count $max" =~ ^[1-9][0-9]*\ [0-9]+$ ]] && [ "$max" = "$3" ]; then
		result "the $1's largest Send: $max octets ($count messages), as on rxe" ok
	else
		result "the $1's largest Send" fail "'$out', want $3 (rxe's)"
	fi
}

# frame FILTER: the number of the first frame of the capture FILTER selects.
frame() {
	tshark -r "$pcap" -Y "$1" -T fields -e frame.number 2>/dev/null | head -n 1
}

# lost WHAT FRAME MESSAGE: the capture without FRAME fails, saying MESSAGE.
lost() {
	local out rc=0
	editcap "$pcap" "$work/lost.pcap" "$2" || { result "$1" fail "editcap failed"; return; }
	out=$(send_sizes "$work/lost.pcap" "$CLIENT" siw 2>&1) || rc=$?
	if [ $rc != 0 ] && grep -q "$3" <<<"$out"; then
		result "$1: fails ($out)" ok
	else
		result "$1" fail "exit $rc, '$out'"
	fi
}

# resent_copies: every frame twice (what tshark takes for TCP
# retransmissions): the same sizes, the copies counted as resent.
resent_copies() {
	local out count max resent
	mergecap -w "$work/twice.pcap" "$pcap" "$pcap" || { result "every frame twice" fail "mergecap failed"; return; }
	out=$(send_sizes "$work/twice.pcap" "$CLIENT" siw 2>&1)
	read -r count max resent <<<"$out"
	if [ "$max" = 4320 ] && [[ $resent =~ ^[1-9][0-9]*$ ]]; then
		result "every frame twice: the same largest Send ($max), $resent copies counted as resent ($count messages)" ok
	else
		result "every frame twice" fail "'$out', want 4320 and copies counted"
	fi
}

# cut_after FRAME: the capture up to FRAME, a middle segment, fails: its
# message has no last segment.
cut_after() {
	local out rc=0
	editcap -r "$pcap" "$work/cut.pcap" "1-$1" || { result "a capture ending inside a Send" fail "editcap failed"; return; }
	out=$(send_sizes "$work/cut.pcap" "$CLIENT" siw 2>&1) || rc=$?
	if [ $rc != 0 ] && grep -q "has no last segment" <<<"$out"; then
		result "a capture ending inside a Send: fails ($out)" ok
	else
		result "a capture ending inside a Send" fail "exit $rc, '$out'"
	fi
}

echo "TAP version 13"
echo "1..6"
largest client "$CLIENT" 4320
largest server "$SERVER" 1160
mid=$(frame "ip.src == $CLIENT && iwarp_ddp.tagged_flag == 0 && iwarp_ddp.last_flag == 0 && iwarp_ddp.mo > 0")
lost "a Send's middle segment missing" "$mid" "lost a segment"
one=$(frame "ip.src == $CLIENT && iwarp_ddp.tagged_flag == 0 && iwarp_rdma.opcode >= 3 && iwarp_rdma.opcode <= 6 && iwarp_ddp.msn == 20")
lost "a whole Send message missing" "$one" "lost a Send message"
resent_copies
cut_after "$mid"
[ $bad -eq 0 ]
