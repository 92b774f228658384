#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of scripts/bench/bench_nfs_memory.py, which turns a guest's
# kmem:kmalloc/kfree trace into the bench's memory figures: made-up traces
# in the kernel's format, the figures computed here by hand. Boots nothing.
# KTAP output; exit 0 only if every case passes.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
MEMORY=${BENCH_NFS_MEMORY:-$top/scripts/bench/bench_nfs_memory.py}
command -v jq >/dev/null || { echo "1..0 # SKIP jq missing"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

n=0 bad=0
echo "TAP version 13"
echo "1..7"
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		bad=$((bad + 1))
	fi
}
# run SIDE TRACE: the JSON of bench_nfs_memory.py on TRACE (text).
run() {
	printf '%s\n' "$2" >"$work/trace"
	/usr/bin/python3 "$MEMORY" --trace "$work/trace" --side "$1" --connections 2 \
		--memfree-before 1000 --memfree-after 900 \
		--rdma-before "0: rxe0: pd 1 cq 2 qp 1 cm_id 1 mr 0 ctx 0 srq 0" \
		--rdma-after "0: rxe0: pd 3 cq 6 qp 3 cm_id 3 mr 8 ctx 0 srq 0" \
		--lost 0 --out "$work/out.json" 2>"$work/err" && cat "$work/out.json"
}
# k TASK FUNCTION OFFSET MODULE PTR REQ ALLOC: a kmalloc line, as the
# kernels print it (kmem:kmalloc's TP_printk).
k() {
	echo "  $1 [000] ..... 1.0: kmalloc: call_site=$2+0x$3/0x1a0${4:+ [$4]} ptr=$5 bytes_req=$6 bytes_alloc=$7 gfp_flags=GFP_KERNEL node=-1 accounted=false"
}
# f FUNCTION PTR: a kfree line.
f() {
	echo "  nfsd-1 [000] ..... 2.0: kfree: call_site=$1+0x10/0x40 [rpcrdma] ptr=$2"
}

# Server: two connections, 3 receive contexts each (the context at one call
# site, then its buffer of 16 KB at the next), one freed; a send context
# of the same size; the provider's allocation; something of another
# subsystem. 5 buffers of 16384 left.
trace=$( (for i in 1 2 3 4 5 6; do
	k nfsd-1 svc_rdma_post_recvs 4c rpcrdma "c$i" 2600 4096
	k nfsd-1 svc_rdma_post_recvs 9a rpcrdma "b$i" 16384 16384
done
f svc_rdma_recv_ctxt_destroy b6
f svc_rdma_recv_ctxt_destroy c6
k nfsd-1 svc_rdma_send_ctxt_get 4c rpcrdma s1 16384 16384
k nfsd-1 rxe_alloc_mr 10 "" m1 512 512
k nfsd-1 nfsd4_alloc_client 10 "" x1 1000 1024
f kfree_other unknown) )
out=$(run server "$trace")
# rpcrdma: 5 x (16384 + 4096) + 16384; MemFree 100 KiB; MRs 0 -> 8.
want='{"count":5,"size":16384,"bytes":81920,"sizes":{"16384":5}} 118784 512 102400 0->8'
got=$(jq -c -r '"\(.receive_buffers) \(.rpcrdma_kmalloc_bytes) \(.rdma_stack_kmalloc_bytes) \(.memfree_drop_bytes) \(.rdma_resources_before.mr)->\(.rdma_resources_after.mr)"' <<<"$out" 2>&1)
[ "$got" = "$want" ]
result $? "server: live receive buffers (the later call site) and kmalloc by the transport, freed ones and other subsystems left out # got $got"

# The groups: rpcrdma and the RDMA stack only, largest first.
got=$(jq -c -r '[.groups[] | "\(.function)/\(.bytes_req)x\(.count)"] | join(" ")' <<<"$out" 2>&1)
[ "$got" = "svc_rdma_post_recvs/16384x5 svc_rdma_post_recvs/2600x5 svc_rdma_send_ctxt_get/16384x1 rxe_alloc_mr/512x1" ]
result $? "server: groups by function and size, largest first # $got"

# Server at 1 KB: buffers smaller than their contexts are still the
# buffers (told apart by call site, not size).
trace=$(for i in 1 2; do
	k nfsd-1 svc_rdma_post_recvs 4c rpcrdma "c$i" 2600 4096
	k nfsd-1 svc_rdma_post_recvs 9a rpcrdma "b$i" 1024 1024
done)
got=$(run server "$trace" | jq -c '.receive_buffers' 2>&1)
[ "$got" = '{"count":2,"size":1024,"bytes":2048,"sizes":{"1024":2}}' ]
result $? "server: 1 KB buffers below their 2600-octet contexts # $got"

# Client: a rep's buffer is the second rpcrdma_regbuf_alloc_node allocation
# of the same task after rpcrdma_rep_create; the first rep posted before the
# connection was established keeps the advertised 64 KB, the later ones
# have the negotiated 1 KB; another task's regbufs in between (a request's
# send buffer) do not count.
trace=$( (k kworker-1 rpcrdma_rep_create 20 rpcrdma r0 160 192
	k kworker-1 rpcrdma_regbuf_alloc_node 30 rpcrdma g0 64 64
	k kworker-1 rpcrdma_regbuf_alloc_node 60 rpcrdma d0 65536 65536
	for i in 1 2 3; do
		k kworker-2 rpcrdma_rep_create 20 rpcrdma "r$i" 160 192
		k mount-9 rpcrdma_regbuf_alloc_node 30 rpcrdma "x$i" 64 64
		k kworker-2 rpcrdma_regbuf_alloc_node 30 rpcrdma "g$i" 64 64
		k mount-9 rpcrdma_regbuf_alloc_node 60 rpcrdma "y$i" 2048 2048
		k kworker-2 rpcrdma_regbuf_alloc_node 60 rpcrdma "d$i" 1024 1024
	done) )
got=$(run client "$trace" | jq -c '.receive_buffers' 2>&1)
[ "$got" = '{"count":4,"size":1024,"bytes":68608,"sizes":{"1024":3,"65536":1}}' ]
result $? "client: one buffer per rpcrdma_rep, whatever its size # $got"

# A server trace whose receive contexts show one call site only: not a
# trace of svcrdma's receive set-up.
run server "$(k nfsd-1 svc_rdma_post_recvs 9a rpcrdma b1 1024 1024)" >/dev/null
grep -q "svcrdma's receive contexts: allocations at 1 call sites, not 2" "$work/err"
result $? "server: a single call site is an error # $(cat "$work/err")"

# No kmalloc line at all (the event was off).
run server "  nfsd-1 [000] ..... 1.0: svcrdma_post_recv: cq.id=1" >/dev/null
grep -q "no kmalloc event left live" "$work/err"
result $? "a trace without kmalloc events is an error # $(cat "$work/err")"

# A kmalloc line without its sizes is an error, not a zero.
run server "  nfsd-1 [000] ..... 1.0: kmalloc: call_site=svc_rdma_post_recvs+0x4c/0x1a0 [rpcrdma] ptr=p1 gfp_flags=GFP_KERNEL" >/dev/null
grep -q "a kmalloc line without its sizes" "$work/err"
result $? "a kmalloc line without its sizes is an error # $(cat "$work/err")"

echo "# Totals: pass:$((n - bad)) fail:$bad xfail:0 xpass:0 skip:0 error:0"
[ "$bad" = 0 ]
