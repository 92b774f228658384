#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What the RPC-over-RDMA transport keeps allocated for its connections.

Usage (in a bench-nfs guest, by bench-nfs-server.sh and bench-nfs-client.sh):
    bench_nfs_memory.py --trace FILE --side client|server --connections K
        --recv-size BYTES --memfree-before KIB --memfree-after KIB
        --rdma-before LINE --rdma-after LINE --lost N --out FILE.json

FILE holds the kmem:kmalloc and kmem:kfree lines of the kernel's trace from
before the K connections were set up until they were up and had carried
some RPCs. An allocation counts when the trace shows it and no kfree of its
pointer follows (the kernel's own view of what is still held, exact for
kmalloc; slab-cache objects, vmalloc'd queues and pages are not in it: the
MemFree change, measured around the same window, is the coarse
cross-check of everything). Allocations are grouped by allocating function,
its module and the size asked for.

Receive buffers are named apart, with --recv-size the side's receive
threshold as its cm_private tracepoint shows it (xprtrdma's
re_inline_recv, the size of its receive buffers; svcrdma's
sc_max_req_size, the size of its receive buffers, when the server's send
and receive sizes are equal, as in every bench configuration; otherwise
this fails, naming the sizes it saw): on the server the allocations of that size by
svc_rdma_recv_ctxt_alloc (inlined into svc_rdma_post_recvs in the test
kernels' builds), on the client one buffer per rpcrdma_rep
(rpcrdma_rep_create), where rpcrdma_regbuf_alloc_node must have allocated
at least as many buffers of that size.
"""

import argparse
import json
import re
import sys

EVENT = re.compile(r" (kmalloc|kfree): call_site=(\S+)(?: \[(\w+)\])? ptr=(\w+)(.*)$")
SITE = re.compile(r"^([\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+$")
FIELD = re.compile(r" (bytes_req|bytes_alloc)=(\d+)")
# Allocating functions of the RDMA stack outside the rpcrdma module (the
# core and the providers, built into the test kernel).
RDMA_STACK = re.compile(r"^(rxe_|siw_|ib_|rdma_|cma_|iw_|__ib_|__rdma_|rvt_)")
RESOURCES = ("pd", "cq", "qp", "cm_id", "mr")
# Where svcrdma's receive buffers are allocated (the function, or its one
# caller when the compiler inlined it).
SERVER_RECV_ALLOC = ("svc_rdma_recv_ctxt_alloc", "svc_rdma_post_recvs")


def fail(msg):
    """Stop with a message naming this program."""
    sys.exit(f"bench_nfs_memory.py: {msg}")


def live_allocations(lines):
    """The allocations the lines show and do not free: pointer -> record."""
    live = {}
    for line in lines:
        m = EVENT.search(line.rstrip("\n"))
        if not m:
            continue
        kind, site, module, ptr, rest = m.groups()
        if kind == "kfree":
            live.pop(ptr, None)
            continue
        s = SITE.match(site)
        if not s:
            continue
        fields = dict(FIELD.findall(rest))
        if "bytes_req" not in fields or "bytes_alloc" not in fields:
            fail(f"a kmalloc line without its sizes: {line.strip()}")
        live[ptr] = {
            "function": s.group(1),
            "module": module or "",
            "bytes_req": int(fields["bytes_req"]),
            "bytes_alloc": int(fields["bytes_alloc"]),
        }
    return live.values()


def group(allocs):
    """Allocations grouped by function, module and size asked for."""
    groups = {}
    for a in allocs:
        key = (a["function"], a["module"], a["bytes_req"])
        g = groups.setdefault(key, {"function": key[0], "module": key[1], "bytes_req": key[2],
                                    "count": 0, "bytes_alloc": 0})
        g["count"] += 1
        g["bytes_alloc"] += a["bytes_alloc"]
    return sorted(groups.values(), key=lambda g: -g["bytes_alloc"])


def receive_buffers(side, allocs, recv_size):
    """(count, size in octets) of the receive buffers the allocations hold."""
    if side == "server":
        at_site = [a["bytes_req"] for a in allocs if a["function"] in SERVER_RECV_ALLOC]
        count = at_site.count(recv_size)
        if count == 0:
            fail(f"no receive buffer of {recv_size} octets allocated by svcrdma "
                 f"(sizes there: {sorted(set(at_site))}): the receive size is not sc_max_req_size")
        return count, recv_size
    reps = sum(1 for a in allocs if a["function"] == "rpcrdma_rep_create")
    bufs = sum(1 for a in allocs
               if a["function"] == "rpcrdma_regbuf_alloc_node" and a["bytes_req"] == recv_size)
    if bufs < reps:
        fail(f"{reps} rpcrdma_rep allocated but only {bufs} buffers of {recv_size} octets")
    return reps, recv_size


def resources(line):
    """The counts of 'rdma resource show' (one device's line)."""
    counts = dict(re.findall(r"\b(\w+) (\d+)\b", line))
    return {k: int(counts[k]) for k in RESOURCES if k in counts}


def main():
    """Parse the arguments, read the trace, write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trace", required=True)
    p.add_argument("--side", choices=("client", "server"), required=True)
    p.add_argument("--connections", type=int, required=True)
    p.add_argument("--recv-size", type=int, required=True)
    p.add_argument("--memfree-before", type=int, required=True, help="KiB")
    p.add_argument("--memfree-after", type=int, required=True, help="KiB")
    p.add_argument("--rdma-before", required=True)
    p.add_argument("--rdma-after", required=True)
    p.add_argument("--lost", type=int, required=True, help="events the trace lost")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if args.connections < 1:
        fail("--connections must be at least 1")
    if args.recv_size < 1024:
        fail("--recv-size must be the side's receive threshold (at least 1024)")
    with open(args.trace, encoding="ascii", errors="replace") as f:
        allocs = list(live_allocations(f))
    if not allocs:
        fail(f"{args.trace}: no kmalloc event left live: was kmem:kmalloc enabled?")
    count, size = receive_buffers(args.side, allocs, args.recv_size)
    rpcrdma = sum(a["bytes_alloc"] for a in allocs if a["module"] == "rpcrdma")
    stack = sum(a["bytes_alloc"] for a in allocs
                if not a["module"] and RDMA_STACK.match(a["function"]))
    record = {
        "side": args.side,
        "connections": args.connections,
        "trace_lost": args.lost,
        "receive_buffers": {"count": count, "size": size, "bytes": count * size},
        "rpcrdma_kmalloc_bytes": rpcrdma,
        "rdma_stack_kmalloc_bytes": stack,
        "memfree_drop_bytes": (args.memfree_before - args.memfree_after) * 1024,
        "rdma_resources_before": resources(args.rdma_before),
        "rdma_resources_after": resources(args.rdma_after),
        "groups": [g for g in group(allocs) if g["module"] == "rpcrdma"
                   or (not g["module"] and RDMA_STACK.match(g["function"]))],
    }
    with open(args.out, "w", encoding="ascii") as out:
        json.dump(record, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
