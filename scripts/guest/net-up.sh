#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# In a guest of a kernel whose NIC driver is a module (a distribution's):
# load virtio_net and take an address by DHCP, as virtme-ng's init does
# for a built-in driver (its list of modules to load has no network
# driver, so on such a kernel it finds no NIC). guest.sh --kimg runs it
# before the command.
#
#   scripts/guest/net-up.sh UDHCPC_SCRIPT
set -euo pipefail

modprobe virtio_net
nic=
for _ in $(seq 20); do
	for d in /sys/class/net/*; do
		[ "${d##*/}" = lo ] || { nic=${d##*/}; break; }
	done
	[ -n "$nic" ] && break
	sleep 0.5
done
[ -n "$nic" ] || { echo "net-up: no NIC after loading virtio_net" >&2; exit 1; }
ip link set "$nic" up
# Patient: three tries three seconds apart (udhcpc's default) can miss a
# loaded TCG guest's DHCP (selftests/rpcrdma_cm/lib.sh, dhcp_again).
busybox udhcpc -i "$nic" -n -q -f -t 8 -T 4 -s "$1" >/dev/null
