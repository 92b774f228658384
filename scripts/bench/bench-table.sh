#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# 'make bench-table': the connection table micro-benchmark. Builds a copy
# of rpcrdma_cm.ko with RPCRDMA_CM_BENCH=1 (rust/bench.rs: the production
# module has none of it) in build/bench-table/, loads it in a guest (it
# runs the benchmark at load, on a private table) and prints its numbers:
# the time of one connect+teardown cycle (allocate, link, look up twice,
# unlink, free) with 10, 1000 and 10000 live connections in the table.
# The wall clock of a TCG guest is slow and noisy in absolute terms; what
# matters is how the three numbers compare.
#
#   scripts/bench/bench-table.sh [--build-only]
#
# --build-only builds that copy and stops (lint runs it, so that the
# benchmark, which no other target compiles, cannot rot).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

build_only=0
[ "${1:-}" = --build-only ] && build_only=1
kdir=${KDIR:-$("$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)}
[ -f "$kdir/vmlinux" ] || rpcrdma_cm_die "no kernel at $kdir: run 'make kernel'"
out=$RPCRDMA_CM_TOP/build/bench-table-$RPCRDMA_CM_KBASE
rm -rf "$out"
mkdir -p "$out"
cp -r "$RPCRDMA_CM_TOP/rust/." "$out/"
rm -f "$out"/*.o "$out"/.*.cmd "$out"/*.ko "$out"/*.mod "$out"/*.mod.c
# shellcheck disable=SC2046
make -s -C "$kdir" M="$out" $(kernel_make_args) RPCRDMA_CM_BENCH=1 modules
ko=$out/rpcrdma_cm.ko
[ $build_only = 1 ] && { echo "bench-table: built $ko"; exit 0; }
echo "bench-table: loading $ko in a guest (the benchmark runs at load)"
"$RPCRDMA_CM_TOP/scripts/guest/guest.sh" --kdir "$kdir" --timeout "${BENCH_TABLE_TIMEOUT:-900}" -- \
	sh -c "modprobe rpcrdma && insmod '$ko' && rmmod rpcrdma_cm; dmesg | grep 'rpcrdma_cm: bench:'" |
	tee "$out/result.txt"
n=$(grep -c 'table_ns_per_cycle_best=' "$out/result.txt" || true)
[ "$n" = 3 ] || rpcrdma_cm_die "expected 3 results, got $n (see $out/result.txt)"
