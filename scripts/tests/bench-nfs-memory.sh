#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of scripts/bench/bench_nfs_memory.py, which turns a guest's
# kmem:kmalloc/kfree trace into the bench's memory figures: made-up traces
# in the kernel's format (7.3's and 6.12's TP_printk), the figures computed
# here by hand. Boots nothing. KTAP output; exit 0 only if every case
# passes.
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
# run SIDE RECV TRACE: the JSON of bench_nfs_memory.py on TRACE (text).
run() {
	printf '%s\n' "$3" >"$work/trace"
	/usr/bin/python3 "$MEMORY" --trace "$work/trace" --side "$1" --connections 2 --recv-size "$2" \
		--memfree-before 1000 --memfree-after 900 \
		--rdma-before "0: rxe0: pd 1 cq 2 qp 1 cm_id 1 mr 0 ctx 0 srq 0" \
		--rdma-after "0: rxe0: pd 3 cq 6 qp 3 cm_id 3 mr 8 ctx 0 srq 0" \
		--lost 0 --out "$work/out.json" 2>"$work/err" && cat "$work/out.json"
}
k() { # k FUNCTION MODULE PTR REQ ALLOC: a kmalloc line (7.3's format)
	echo "  nfsd-1 [000] ..... 1.0: kmalloc: call_site=$1+0x4c/0x1a0${2:+ [$2]} ptr=$3 name=(null) bytes_req=$4 bytes_alloc=$5 gfp_flags=GFP_KERNEL node=-1 accounted=false"
}
f() { # f FUNCTION MODULE PTR: a kfree line
	echo "  nfsd-1 [000] ..... 2.0: kfree: call_site=$1+0x10/0x40${2:+ [$2]} ptr=$3"
}

# Server: two connections, 3 receive contexts each (context 2600 octets,
# buffer 16 KB), one freed; a send context; the provider's allocation;
# something of another subsystem. 5 buffers of 16384 left.
trace=$( (for i in 1 2 3 4 5 6; do
	k svc_rdma_post_recvs rpcrdma "c$i" 2600 4096
	k svc_rdma_post_recvs rpcrdma "b$i" 16384 16384
done
f svc_rdma_recv_ctxt_destroy rpcrdma b6
f svc_rdma_recv_ctxt_destroy rpcrdma c6
k svc_rdma_send_ctxt_get rpcrdma s1 16384 16384
k rxe_alloc_mr "" m1 512 512
k nfsd4_alloc_client "" x1 1000 1024
f kfree_other "" unknown) )
out=$(run server 16384 "$trace")
# rpcrdma: 5 x (16384 + 4096) + 16384; MemFree 100 KiB; MRs 0 -> 8.
want='{"count":5,"size":16384,"bytes":81920} 118784 512 102400 0->8'
got=$(jq -c -r '"\(.receive_buffers) \(.rpcrdma_kmalloc_bytes) \(.rdma_stack_kmalloc_bytes) \(.memfree_drop_bytes) \(.rdma_resources_before.mr)->\(.rdma_resources_after.mr)"' <<<"$out" 2>&1)
[ "$got" = "$want" ]
result $? "server: live receive buffers and kmalloc by the transport, freed ones and other subsystems left out${got:+ # got $got}"

# The groups: rpcrdma and the RDMA stack only, largest first.
got=$(jq -c -r '[.groups[] | "\(.function)/\(.bytes_req)x\(.count)"] | join(" ")' <<<"$out" 2>&1)
[ "$got" = "svc_rdma_post_recvs/16384x5 svc_rdma_post_recvs/2600x5 svc_rdma_send_ctxt_get/16384x1 rxe_alloc_mr/512x1" ]
result $? "server: groups by function and size, largest first # $got"

# Client: 3 reps with 4 KB buffers (rpcrdma_regbuf_alloc_node), a request's
# send buffer of the same size, 6.12's kmalloc line (no name=).
trace=$( (for i in 1 2 3; do
	k rpcrdma_rep_create rpcrdma "r$i" 160 192
	k rpcrdma_regbuf_alloc_node rpcrdma "g$i" 64 64
	k rpcrdma_regbuf_alloc_node rpcrdma "d$i" 4096 4096
done
echo "  kworker-1 [000] ..... 1.0: kmalloc: call_site=rpcrdma_regbuf_alloc_node+0x4c/0x1a0 [rpcrdma] ptr=d9 bytes_req=4096 bytes_alloc=4096 gfp_flags=GFP_KERNEL node=-1 accounted=false") )
out=$(run client 4096 "$trace")
got=$(jq -c '.receive_buffers' <<<"$out" 2>&1)
[ "$got" = '{"count":3,"size":4096,"bytes":12288}' ]
result $? "client: one receive buffer per rpcrdma_rep, of the receive threshold # $got"

# Fewer buffers of the receive size than reps: the size is not what the
# client allocated its receive buffers with.
out=$(run client 8192 "$trace")
grep -q "3 rpcrdma_rep allocated but only 0 buffers of 8192 octets" "$work/err"
result $? "client: a receive size the buffers do not have is an error # $(cat "$work/err")"

# A server receive size svcrdma did not allocate with: an error naming
# the sizes it did.
run server 4096 "$(k svc_rdma_post_recvs rpcrdma p1 16384 16384)" >/dev/null
grep -q "no receive buffer of 4096 octets allocated by svcrdma (sizes there: \[16384\])" "$work/err"
result $? "server: a receive size svcrdma did not allocate with is an error # $(cat "$work/err")"

# No kmalloc line at all (the event was off).
run server 4096 "  nfsd-1 [000] ..... 1.0: svcrdma_post_recv: cq.id=1" >/dev/null
grep -q "no kmalloc event left live" "$work/err"
result $? "a trace without kmalloc events is an error # $(cat "$work/err")"

# A kmalloc line without its sizes is an error, not a zero.
run server 4096 "  nfsd-1 [000] ..... 1.0: kmalloc: call_site=svc_rdma_post_recvs+0x4c/0x1a0 [rpcrdma] ptr=p1 gfp_flags=GFP_KERNEL" >/dev/null
grep -q "a kmalloc line without its sizes" "$work/err"
result $? "a kmalloc line without its sizes is an error # $(cat "$work/err")"

echo "# Totals: pass:$((n - bad)) fail:$bad xfail:0 xpass:0 skip:0 error:0"
[ "$bad" = 0 ]
