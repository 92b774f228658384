# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What `rpcrdma-cm conform` must find on a Linux NFS/RDMA server, from the
# server's configuration and RFC 8797, written here and not taken from the
# tool or the module: the checks the tool makes and each one's verdict,
# with every exception's source. Sourced by conform_tool.sh (one guest) and
# scripts/guest/interop.sh (the conform rows of the matrix).
#
# A server is described by
#   KIND     stock (no series), series (the series, no module) or module
#            (rpcrdma_cm loaded);
#   SEND     the send size its Accept advertises, octets (svcrdma: 4096;
#            the module: responder_send_size);
#   MESSAGE  yes if its Accept carries an RFC 8797 message, no if not
#            (the module with send_private_data=N);
#   STRICT   yes for the module with nonconforming_requester_1k=Y;
#   FILE     yes if the tool ran with --file (a file to READ), no or
#            absent if not.

# Without --file the tool's COMPOUNDs reach every XDR size from about 300
# octets to about 4.4 KB (PUTROOTFH + GETATTR pairs of about 208 octets,
# further PUTROOTFH of 8 and a tag of up to 128, at most 50 operations
# in a call of at most 1 KB): a threshold above 4 KB is one it cannot
# judge, "could not tell" by design. With --file a READ reaches any size.
CONFORM_REACH=4096

# The non-conforming requests of RFC 8797 section 5 the tool sends.
CONFORM_NONCONFORMING="none zeroed bad-magic swapped-magic version-0 version-2"

# conform_read_verdicts JSON IDS VERDICTS [raw]: the tool's report JSON
# read once: IDS (a variable's name) gets the ids of its checks in its
# order, space-separated, and VERDICTS (an associative array's name) each
# check's verdict, as conform_expected says verdicts: "xfail" for a
# failure that names a known deviation (known_deviation), else the
# verdict; with "raw", the verdict as the tool says it. One jq for the
# whole report: a jq started per check was most of conform_tool.sh's time
# (in a one-vCPU TCG guest each start of jq took 195 ms, a check's
# conform_expected 16 ms). Nothing is read from a missing or unreadable
# file.
conform_read_verdicts() {
	local -n _ids=$2 _verdicts=$3
	local id verdict xfail=true
	[ "${4:-}" = raw ] && xfail=false
	_ids='' _verdicts=()
	while read -r id verdict; do
		_ids+="${_ids:+ }$id"
		_verdicts[$id]=$verdict
	done < <(jq -r --argjson xfail "$xfail" '.checks[] |
		"\(.id) \(if $xfail and .verdict == "fail" and .known_deviation != null then "xfail" else .verdict end)"' \
		"$1" 2>/dev/null)
}

# conform_check_ids TRANSPORT MESSAGE [OVERREAD]: the checks in the tool's
# order; OVERREAD yes: run with --include-overread-probes (the short
# request is sent over siw; without it, one request.short, not applicable).
conform_check_ids() {
	local t c
	if [ "$2" = yes ]; then
		echo accept.magic accept.version accept.reserved-flags accept.length calibration
	else
		echo accept.message calibration
	fi
	for t in threshold.own-send threshold.1k threshold.4k threshold.16k threshold.64k request.reserved-flags; do
		echo $t.accepted $t.below $t.above
	done
	for c in $CONFORM_NONCONFORMING; do
		echo request.$c.accepted request.$c.below request.$c.above
	done
	if [ "$1" = siw ] && [ "${3:-no}" = yes ]; then
		echo request.short.accepted request.short.below request.short.above
	else
		echo request.short
	fi
	echo ri.requester-without-r ri.requester-without-message ri.nonconforming-with-r
	echo ri.server-without-r ri.offered-stag
}

# conform_threshold ID SEND: the threshold (octets) the tool judges a
# threshold check against: the requester's receive size it sent, never
# above the server's send size; empty for other checks.
conform_threshold() {
	local send=$2
	case $1 in
	threshold.own-send.*) echo "$send" ;;
	threshold.1k.*) echo $((send < 1024 ? send : 1024)) ;;
	threshold.4k.* | request.reserved-flags.*) echo $((send < 4096 ? send : 4096)) ;;
	threshold.16k.*) echo $((send < 16384 ? send : 16384)) ;;
	threshold.64k.*) echo $((send < 65536 ? send : 65536)) ;;
	esac
}

# conform_expected KIND TRANSPORT ID SEND MESSAGE STRICT [FILE]: the
# verdict.
conform_expected() {
	local kind=$1 tr=$2 id=$3 send=$4 message=$5 strict=$6 file=${7:-no} t
	# A server without a message is taken as 1 KB each way, no R bit.
	[ "$message" = yes ] || send=1024
	case $id in
	# Over InfiniBand and RoCE the CM pads the REP to 196 octets and the
	# REQ to 56: neither a message's exact length nor a short request
	# can be seen there. An absent message is a server that predates RFC
	# 8797 (optional, not a failure). A short request not sent (over rxe,
	# or over siw without --include-overread-probes) is one check, n/a.
	accept.length)
		[ "$tr" = rxe ] && { echo not_applicable; return; }
		;;
	request.short)
		echo not_applicable
		return
		;;
	accept.message)
		echo not_applicable
		return
		;;
	esac
	t=$(conform_threshold "$id" "$send")
	if [ -n "$t" ] && [ "$t" -gt $CONFORM_REACH ] && [ "$file" != yes ] &&
		[ "${id##*.}" != accepted ]; then
		echo could_not_tell
		return
	fi
	case $id in
	# Stock svcrdma ignores the requester's receive size (a 1 KB
	# requester gets 1028 octets inline), nor does it hold itself to the
	# 4 KB it advertises: a Reply whose head fits the Send SGEs goes
	# inline however long (4100 octets; the series' "svcrdma: Do not send
	# an inline Reply larger than the..." fixes both).
	threshold.1k.above | threshold.own-send.above | threshold.4k.above | \
		threshold.16k.above | threshold.64k.above | request.reserved-flags.above)
		[ "$kind" = stock ] && { echo fail; return; }
		;;
	# Linux holds a requester that sent no conforming message to the
	# server's own send size, not to RFC 8797 section 5's 1 KB: with
	# rpcrdma_cm and without it (Documentation/design.rst, "deliberate
	# deviation": RFC 8166 clients predating RFC 8797 size Reply chunks by
	# their own buffers), and in stock svcrdma, which never reads the
	# requester's receive size at all. It conforms when that send size is
	# 1 KB anyway, and with nonconforming_requester_1k=Y, where the module
	# advertises 1 KB to such a requester. A known deviation: the tool
	# must fail it and name it (xfail, see conform_read_verdicts).
	request.*.above)
		if [ "${id#request.}" != reserved-flags.above ] && [ "$strict" != yes ] &&
			{ [ "$kind" = stock ] || [ "$send" -gt 1024 ]; }; then
			echo xfail
			return
		fi
		;;
	# The series' svcrdma advertises the Remote Invalidation it uses
	# (7.3 patch 0009, 6.12 0006): its Accept carries the R bit, so the
	# server may use Send With Invalidate; without a message of its own it
	# uses none. Stock's Accept has flags 00 and it still sends With
	# Invalidate to a requester that offered it (on rxe the tool's Reply
	# chunk is a memory window, invalidated and named in the receive
	# completion; siw invalidates the tool's memory region without saying
	# so, and the tool's next Send from that memory fails).
	ri.server-without-r)
		if [ "$kind" = stock ]; then
			echo fail
		elif [ "$message" = yes ]; then
			echo not_applicable
		else
			echo pass
		fi
		return
		;;
	# To a requester with the R bit (and a device with the memory
	# management extensions: rxe and siw) every Linux svcrdma that uses
	# Send With Invalidate (stock, and the series where its Accept says
	# so) invalidates the STag of the call it answers when the call has
	# exactly one (svc_rdma_get_inv_rkey()): here the Reply chunk of a
	# NULL call, whose Reply goes in it. A memory window on rxe (the
	# receive completion names it), a memory region on siw (its provider
	# does not say; the tool's Send from that memory fails). Without a
	# message of its own the series' server uses none: n/a.
	ri.offered-stag)
		if [ "$kind" = stock ] || [ "$message" = yes ]; then
			echo pass
		else
			echo not_applicable
		fi
		return
		;;
	esac
	echo pass
}

# conform_exit FAILS UNKNOWN: the exit status of `rpcrdma-cm conform`
# whose expected verdicts have FAILS "fail" or "xfail" and UNKNOWN
# "could_not_tell":
# 1 when a requirement fails, 3 when nothing fails but something could not
# be told (inconclusive), 0 otherwise (the tool's documented statuses).
conform_exit() {
	if [ "$1" -gt 0 ]; then
		echo 1
	elif [ "$2" -gt 0 ]; then
		echo 3
	else
		echo 0
	fi
}
