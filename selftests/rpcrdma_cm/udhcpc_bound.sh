#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# busybox udhcpc's script for lib.sh's dhcp_again: on a lease, put the
# address (and the default route, if any) on the interface. udhcpc sets
# interface, ip, mask and router in the environment.
: "${interface:?udhcpc sets interface}"
case "$1" in
deconfig)
	ip link set dev "$interface" up
	ip addr flush dev "$interface"
	;;
bound | renew)
	ip addr replace "${ip:?}/${mask:?}" dev "$interface"
	[ -z "${router:-}" ] || ip route replace default via "${router%% *}" dev "$interface"
	;;
esac
exit 0
