#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Per-Reply cost of svcrdma's send path, one guest (NFS client and nfsd on
# the same rxe device, as nfs_rdma_roundtrip.sh does): how often each step
# of svc_rdma_sendto() runs per Reply (the function profiler: counts do
# not depend on TCG's speed), its time per Reply (profiler mean and a
# function_graph distribution: TCG time, comparable only between kernels
# built the same way and booted the same way), and the svcrdma events.
# How the Reply limit's rework was measured (Documentation/measurements.rst,
# "The Reply limit's cost per Reply"); stock svcrdma, no module.
#
#   reply-cost-guest.sh OUTDIR LABEL [WORKLOAD [N [INLINE]]]
#     OUTDIR    a directory the guest may write (guest.sh --rwdir)
#     LABEL     the kernel's label, e.g. before-1
#     WORKLOAD  getattr (default): N stat()s of one file, actimeo=0, so
#               each is one NFSv4.2 COMPOUND (SEQUENCE, PUTFH, GETATTR)
#               and one small Reply; read:SIZE: N O_DIRECT READs of SIZE
#               octets
#     N         operations per phase (default 2000)
#     INLINE    both sides' inline sizes, octets (svcrdma max_req_size,
#               the client's rdma_max_inline_read/write), e.g. 65536 so
#               that READs of 60 KB come inline; default: the kernel's
#
# Needs a kernel built with scripts/kernel/kconfig/ftrace.config merged
# (function tracer, function graph, dynamic ftrace, profiler).
#
# Writes OUTDIR/LABEL-WORKLOAD.txt (key=value lines) and
# OUTDIR/LABEL-WORKLOAD.durations (one svc_rdma_sendto duration in us a
# line, from function_graph). Exit 0 done, 1 failed, 4 kernel lacks ftrace.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=../../selftests/rpcrdma_cm/lib.sh
. "$DIR/../../selftests/rpcrdma_cm/lib.sh"

OUT=${1:?OUTDIR}
LABEL=${2:?LABEL}
WL=${3:-getattr}
N=${4:-2000}
INLINE=${5:-}
T=/sys/kernel/tracing
res=$OUT/$LABEL-$WL.txt
dur=$OUT/$LABEL-$WL.durations

die() { echo "error=$*" >>"$res"; echo "# $*" >&2; exit 1; }
say() { echo "$1=$2" >>"$res"; }

mkdir -p "$OUT" && : >"$res" || exit 1
say label "$LABEL"
say workload "$WL"
say n "$N"
say uname "$(uname -r)"
say cmdline "$(cat /proc/cmdline)"

guest_setup rxe
if [ -n "$INLINE" ]; then
	echo "$INLINE" >/proc/sys/sunrpc/svc_rdma/max_req_size &&
		echo "$INLINE" >/proc/sys/sunrpc/rdma_max_inline_read &&
		echo "$INLINE" >/proc/sys/sunrpc/rdma_max_inline_write || die "cannot set the inline sizes"
fi
say inline "${INLINE:-default}"
start_nfsd || die "nfsd did not start"

if ! grep -qw function_graph $T/available_tracers ||
   [ ! -e $T/function_profile_enabled ]; then
	say skip "kernel lacks function_graph or the function profiler"
	exit 4
fi
say trace_clock "$(sed 's/.*\[\(.*\)\].*/\1/' $T/trace_clock)"

umount_rdma
# shellcheck disable=SC2154 # ip: set by guest_setup
mount_rdma "$ip" 4.2 actimeo=0 || die "mount failed"
say mount "$(grep " $MNT " /proc/mounts)"

# The workload's file.
case $WL in
getattr)
	echo x >"$MNT/f" || die "create failed"
	;;
read:*)
	size=${WL#read:}
	head -c "$size" /dev/urandom >"$NFS_EXPORT/f" || die "create failed"
	;;
*)
	die "unknown workload $WL"
	;;
esac
sync

# run COUNT: the workload, COUNT operations.
run() {
	case $WL in
	getattr)
		python3 - "$MNT/f" "$1" <<'EOF'
import os, sys
path, n = sys.argv[1], int(sys.argv[2])
for _ in range(n):
    os.stat(path)
EOF
		;;
	read:*)
		python3 - "$MNT/f" "$1" "${WL#read:}" <<'EOF'
import mmap, os, sys
path, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
buf = mmap.mmap(-1, (size + 4095) // 4096 * 4096)
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
for _ in range(n):
    os.preadv(fd, [memoryview(buf)[:size]], 0)
os.close(fd)
EOF
		;;
	esac
}

# Operation counts: the client's (mountstats, this mount) and nfsd's.
client_ops() {
	awk -v m="$MNT" '$1 == "device" { on = ($5 == m) }
		on && $1 == "GETATTR:" { g = $2 } on && $1 == "READ:" { r = $2 }
		END { print (g + 0) + (r + 0) }' /proc/self/mountstats
}
server_calls() { awk '$1 == "rpc" { print $2 }' /proc/net/rpc/nfsd; }

# profile OUTKEY: sum trace_stat/function* over the CPUs and record
# OUTKEY.FUNCTION.hits / .time_us / .avg_us.
profile() {
	awk -v k="$1" 'FNR > 2 && NF >= 2 && $2 ~ /^[0-9]+$/ {
			h[$1] += $2; if (NF >= 8) t[$1] += $3 }
		END { for (f in h) printf "%s.%s.hits=%d\n%s.%s.time_us=%.3f\n%s.%s.avg_us=%.4f\n",
			k, f, h[f], k, f, t[f], k, f, (h[f] ? t[f] / h[f] : 0) }' \
		$T/trace_stat/function* | sort >>"$res"
}

# filter FUNCTION...: set_ftrace_filter to these rpcrdma functions (globs:
# a static function may carry a .isra/.constprop suffix); a name that
# matches nothing (inlined) is recorded and left out.
filter() {
	local f
	: >$T/set_ftrace_filter
	for f in "$@"; do
		echo "$f:mod:rpcrdma" >>$T/set_ftrace_filter 2>/dev/null ||
			say "not_traceable.$f" 1
	done
	say "filter.$PHASE" "$(tr '\n' ' ' <$T/set_ftrace_filter)"
}

echo 0 >$T/tracing_on
echo nop >$T/current_tracer
echo 16384 >$T/buffer_size_kb
run 500 # warm-up: connection, session, caches

# Phase 1, counts: how often each step runs per Reply. Deterministic.
PHASE=count
filter svc_rdma_sendto svc_rdma_map_reply_msg pcl_process_nonpayloads \
	'svc_rdma_xb_count_sges*' 'svc_rdma_xb_linearize*' 'svc_rdma_xb_dma_map*' \
	'xprt_rdma_bc_send_request*'
echo >$T/trace
for ev in svcrdma_send_pullup svcrdma_reply_over_threshold svcrdma_err_chunk; do
	echo 1 >$T/events/rpcrdma/$ev/enable
done
echo 1 >$T/tracing_on
c0=$(client_ops) s0=$(server_calls)
echo 1 >$T/function_profile_enabled
run "$N"
echo 0 >$T/function_profile_enabled
c1=$(client_ops) s1=$(server_calls)
echo 0 >$T/tracing_on
for ev in svcrdma_send_pullup svcrdma_reply_over_threshold svcrdma_err_chunk; do
	echo 0 >$T/events/rpcrdma/$ev/enable
	say "count.event.$ev" "$(grep -c " $ev: " $T/trace)"
done
say count.client_ops $((c1 - c0))
say count.server_calls $((s1 - s0))
profile count

# Phase 2, time: svc_rdma_sendto alone (one hook pair per Reply, the same
# in every kernel compared), children included (graph-time).
PHASE="time"
filter svc_rdma_sendto
echo 1 >$T/options/graph-time
echo 1 >$T/function_profile_enabled
run "$N"
echo 0 >$T/function_profile_enabled
profile time

# Phase 3, distribution: function_graph on svc_rdma_sendto alone, one
# duration per Reply.
echo 0 >$T/options/funcgraph-overhead 2>/dev/null
echo 1 >$T/options/funcgraph-tail 2>/dev/null # name on a closing }
echo function_graph >$T/current_tracer
echo >$T/trace
echo 1 >$T/tracing_on
run "$N"
echo 0 >$T/tracing_on
sed -n 's/^[^|]*[^0-9.]\([0-9][0-9.]*\) us *|.*svc_rdma_sendto.*/\1/p' $T/trace >"$dur"
say dist.samples "$(wc -l <"$dur")"
say dist.lost "$(awk '/overrun:/ { s += $2 } END { print s + 0 }' $T/per_cpu/cpu*/stats)"
sort -n "$dur" | awk '{ v[NR] = $1; s += $1 }
	END { if (NR) printf "dist.mean_us=%.3f\ndist.p10_us=%s\ndist.median_us=%s\ndist.p90_us=%s\n",
		s / NR, v[int(NR * 0.1) + 1], v[int(NR * 0.5) + 1], v[int(NR * 0.9) + 1] }' >>"$res"
echo nop >$T/current_tracer
: >$T/set_ftrace_filter

umount_rdma
say finished 1
exit 0
