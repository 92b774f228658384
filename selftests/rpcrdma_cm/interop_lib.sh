# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the interop matrix's guest halves (interop_server.sh,
# interop_client.sh; scripts/guest/interop.sh runs them). Source after lib.sh.
#
# Environment (set by scripts/guest/interop.sh):
#   INTEROP_TRANSPORT  rxe (soft-RoCE, the default) or siw (soft-iWARP)
#   INTEROP_FAMILY     4 (192.0.2.0/24, the default) or 6 (2001:db8:2::/64)

INTEROP_TRANSPORT=${INTEROP_TRANSPORT:-rxe}
INTEROP_FAMILY=${INTEROP_FAMILY:-4}

# INTEROP_SIZES: the files interop_client.sh writes and reads back (one
# WRITE and one READ each, O_DIRECT), what scripts/guest/interop.sh's
# data check counts: below, at and above each inline threshold a row can
# negotiate (1, 4, 16 and 64 KB); 512 octets below each, whose READ
# Reply, headers included, goes inline some 250 octets inside a receive
# threshold of that size (the largest Replies then come near the bound
# the wire check holds the server to: a Reply of 1023 octets sent to a
# client that receives 4 KB says little about a server that would exceed
# it), and whose WRITE Call does too on rxe (on siw, six send SGEs: the
# 16 and 64 KB ones go by Read chunk); one of 256 KiB.
# shellcheck disable=SC2034 # read by the scripts that source this file
INTEROP_SIZES="512 1023 1024 1025 3584 4095 4096 4097 15872 16383 16384 16385 65024 65535 65536 65537 262144"

# interop_addr server|client: this side's address on the link.
interop_addr() {
	local host=1
	[ "$1" = client ] && host=2
	if [ "$INTEROP_FAMILY" = 6 ]; then
		echo "2001:db8:2::$host"
	else
		echo "192.0.2.$host"
	fi
}

# interop_host ADDR: ADDR as mount and rpcrdma-cm take it ([v6]).
interop_host() {
	case "$1" in
	*:*) echo "[$1]" ;;
	*) echo "$1" ;;
	esac
}

# setup_siw NIC: a soft-iWARP device on NIC.
setup_siw() {
	modprobe siw 2>/dev/null || true
	rdma link show siw0/1 >/dev/null 2>&1 || rdma_link_add siw0 siw "$1" || return 1
	slowwait 30 rdma_link_active siw0/1 && return 0
	echo "# siw0 not ACTIVE after 30 s: $(rdma link show 2>&1)"
	return 1
}

# ipv6_ready NIC ADDR: ADDR/64 is on NIC and no longer tentative.
ipv6_ready() {
	ip -6 addr show dev "$1" | grep -q "$2/64 scope global" &&
		! ip -6 addr show dev "$1" | grep -q tentative
}

# interop_link_up server|client: the link NIC up with this side's address
# (IPv6 without duplicate address detection, and only once it is usable),
# and the RDMA device of INTEROP_TRANSPORT on it; prints the NIC.
interop_link_up() {
	local nic addr
	nic=$(link_nic) || return 1
	addr=$(interop_addr "$1")
	ip link set "$nic" up || return 1
	if [ "$INTEROP_FAMILY" = 6 ]; then
		ip -6 addr add "$addr/64" dev "$nic" nodad || return 1
		slowwait 20 ipv6_ready "$nic" "$addr"
	else
		ip addr add "$addr/24" dev "$nic" || return 1
	fi
	case "$INTEROP_TRANSPORT" in
	rxe) setup_rxe "$nic" >&2 || return 1 ;;
	siw) setup_siw "$nic" >&2 || return 1 ;;
	*) echo "# unknown transport $INTEROP_TRANSPORT" >&2; return 1 ;;
	esac
	echo "$nic"
}

# interop_capture_filter: what carries the connection setup on the wire:
# RoCEv2 (UDP 4791) for rxe, the TCP connection of MPA for siw.
interop_capture_filter() {
	if [ "$INTEROP_TRANSPORT" = siw ]; then
		echo "tcp port $NFS_PORT"
	else
		echo "udp port 4791"
	fi
}

# interop_kernel: "patched" when the running kernel has the series (its
# rpcrdma:*_cm_private events exist once rpcrdma is loaded), else "stock".
interop_kernel() {
	local t=/sys/kernel/tracing
	mountpoint -q $t || mount -t tracefs nodev $t
	if [ -d $t/events/rpcrdma/xprtrdma_cm_private ]; then
		echo patched
	else
		echo stock
	fi
}

# interop_trace_on EVENT...: enable those rpcrdma events that exist (a
# stock kernel has no *_cm_private), with an empty buffer. Fails, saying
# which, when tracefs or an event that exists cannot be enabled: a row
# must not read "nothing traced" from a trace that was never on.
interop_trace_on() {
	local t=/sys/kernel/tracing e
	mountpoint -q $t || mount -t tracefs nodev $t || { echo "tracefs"; return 1; }
	echo >$t/trace || { echo "trace buffer"; return 1; }
	for e in "$@"; do
		[ -d "$t/events/rpcrdma/$e" ] || continue
		echo 1 >"$t/events/rpcrdma/$e/enable" &&
			[ "$(cat "$t/events/rpcrdma/$e/enable")" = 1 ] || { echo "rpcrdma:$e"; return 1; }
	done
	return 0
}

# interop_traced EVENT: EVENT's lines so far.
interop_traced() {
	grep " $1: " /sys/kernel/tracing/trace
}
