#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The workloads of 'make bench-nfs', run in the client guest.

    bench_nfs_workload.py --mnt DIR --n N --workloads W1,W2,... \\
        --out RESULTS.jsonl --progress FILE --marker HOST:PORT

Workloads (N operations each, on an NFS mount over RDMA):
  create           N empty files created (open O_CREAT, close)
  stat             N stats after a cache drop
  readdir          one listing of the N entries after a cache drop
  rename           N renames
  remove           N removes
  write-KK, read-KK  N O_DIRECT writes or reads of KK KB (1..60); the
                   file is opened before and closed after the count

Around each workload it reads the client's RPC-over-RDMA counters and
per-operation counts (/proc/self/mountstats), counts the
rpcrdma:xprtrdma_marshal events (one per RPC marshalled: chunk types of
the call) and sends a UDP datagram "rpcrdma-bench begin|end WORKLOAD" to
the server, whose capture and trace split on them, and waits for its
acknowledgement (bench_nfs_markers.py). The counters include the bytes
xprtrdma copied: pullup (a call copied into the send buffer) and fixup (an
inline reply copied out of the receive buffer into the RPC's pages).
Writes one JSON line per
workload to RESULTS and "WORKLOAD I/COUNT DONE/N" to FILE as it goes.
"""

import argparse
import json
import mmap
import os
import re
import socket
import sys
import time

TRACE = "/sys/kernel/tracing"
# Positions after "xprt: rdma" in mountstats (0-based).
RDMA_COUNTERS = {"rpcs": 5, "read_chunks": 10, "write_chunks": 11,
                 "reply_chunks": 12, "pullup_copy_bytes": 15, "fixup_copy_bytes": 16,
                 "local_inv_needed": 24}
# Seconds to wait for the server's acknowledgement of a marker (one
# datagram each way on an idle link; the guests run under TCG).
MARK_WAIT = 30
METADATA = ("create", "stat", "readdir", "rename", "remove")
IO_SIZES_KB = (1, 2, 4, 8, 16, 32, 60)
# Chunk types of a call without any chunk (xprtrdma_show_chunktype()).
NO_CHUNK_R = ("inline", "pullup", "mapped")
MARSHAL = re.compile(r" xprtrdma_marshal: .* xdr=\d+/\d+/\d+ (.+)/([^/]+)$")


def fail(msg):
    """Stop with a message naming this program."""
    sys.exit(f"bench_nfs_workload.py: {msg}")


def mount_section(mnt):
    """The lines of mountstats' section for the mount on MNT."""
    lines, inside = [], False
    with open("/proc/self/mountstats", encoding="ascii") as stats:
        for line in stats:
            if line.startswith("device "):
                inside = f" mounted on {mnt} with fstype nfs" in line
                continue
            if inside:
                lines.append(line)
    if not lines:
        fail(f"no mountstats section for {mnt}")
    return lines


def counters(mnt):
    """RPC-over-RDMA counters and per-operation counts of the mount."""
    out, ops, per_op = {}, {}, False
    for line in mount_section(mnt):
        words = line.split()
        if words[:2] == ["xprt:", "rdma"]:
            numbers = words[2:]
            out = {k: int(numbers[i]) for k, i in RDMA_COUNTERS.items()}
        elif line.strip() == "per-op statistics":
            per_op = True
        elif per_op and len(words) > 1 and words[0].endswith(":"):
            ops[words[0][:-1]] = int(words[1])
    if not out:
        fail(f"no 'xprt: rdma' line for {mnt}")
    out["ops"] = ops
    return out


def clear_trace():
    """Empty the trace buffer."""
    with open(f"{TRACE}/trace", "w", encoding="ascii"):
        pass


def marshal_counts():
    """RPCs marshalled since clear_trace(), and how many had no chunk."""
    rpcs = no_chunk = 0
    with open(f"{TRACE}/trace", encoding="ascii", errors="replace") as trace:
        for line in trace:
            m = MARSHAL.search(line.rstrip("\n"))
            if not m:
                continue
            rpcs += 1
            if m.group(1) in NO_CHUNK_R and m.group(2) == "inline":
                no_chunk += 1
    return rpcs, no_chunk


def trace_overrun():
    """Events the trace buffer lost (all CPUs)."""
    lost = 0
    for cpu in os.listdir(f"{TRACE}/per_cpu"):
        with open(f"{TRACE}/per_cpu/{cpu}/stats", encoding="ascii") as s:
            for line in s:
                if line.startswith("overrun:"):
                    lost += int(line.split()[1])
    return lost


def drop_caches():
    """Forget cached dentries, inodes and pages."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w", encoding="ascii") as f:
        f.write("3\n")


class IoFile:
    """An O_DIRECT file io{KB}k on the mount, for KB-sized WRITEs or READs
    at offset 0 (of a fixed pattern; a READ must return it)."""

    def __init__(self, path, op, kb):
        self.op, self.kb, self.size = op, kb, kb * 1024
        # An anonymous mapping is page aligned, as O_DIRECT wants.
        self.buf = mmap.mmap(-1, self.size)
        pattern = bytes((i * 7 + kb) & 0xFF for i in range(256))
        self.expect = (pattern * (self.size // 256 + 1))[:self.size]
        flags = os.O_DIRECT | (os.O_WRONLY | os.O_CREAT if op == "write" else os.O_RDONLY)
        self.fd = os.open(path, flags, 0o644)
        if op == "write":
            self.buf[:] = self.expect

    def run(self, count, tick):
        """COUNT WRITEs or READs; TICK(done) after each."""
        for i in range(count):
            if self.op == "write":
                done = os.pwrite(self.fd, memoryview(self.buf), 0)
            else:
                done = os.preadv(self.fd, [memoryview(self.buf)], 0)
            if done != self.size:
                fail(f"{self.op} of {self.kb} KB moved {done} bytes")
            tick(i + 1)
        if self.op == "read" and self.buf[:] != self.expect:
            fail(f"read of {self.kb} KB returned other bytes than were written")

    def close(self):
        """Close the file (its CLOSE RPC)."""
        os.close(self.fd)


class Bench:
    """One client's run of the workloads."""

    def __init__(self, args):
        self.mnt = args.mnt
        self.n = args.n
        self.dir = os.path.join(args.mnt, "bench")
        self.progress = args.progress
        host, port = args.marker.rsplit(":", 1)
        self.marker = (host, int(port))
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.settimeout(MARK_WAIT)
        self.label = ""
        self.io = None
        os.makedirs(self.dir, exist_ok=True)

    def mark(self, what, workload):
        """Tell the server's capture and trace where a workload begins or
        ends; returns once the server acknowledged it (its trace holds the
        marker, bench_nfs_markers.py)."""
        text = f"rpcrdma-bench {what} {workload}".encode()
        self.sock.sendto(text, self.marker)
        try:
            ack, _ = self.sock.recvfrom(512)
        except socket.timeout:
            fail(f"the server did not acknowledge marker '{text.decode()}' within {MARK_WAIT} s")
        if ack != b"ack " + text:
            fail(f"marker '{text.decode()}' acknowledged as '{ack.decode(errors='replace')}'")

    def tick(self, done):
        """Progress for the host: which workload, how far."""
        if done % 20 == 0 or done == self.n:
            # Replaced whole, so the host never reads it half written.
            with open(self.progress + ".new", "w", encoding="ascii") as f:
                f.write(f"{self.label} {done}/{self.n}\n")
            os.replace(self.progress + ".new", self.progress)

    def names(self, prefix):
        """The N file names with PREFIX."""
        return [os.path.join(self.dir, f"{prefix}{i}") for i in range(self.n)]

    def ensure(self, prefix):
        """N files named PREFIX* exist (set-up, not measured)."""
        for path in self.names(prefix):
            if not os.path.exists(path):
                with open(path, "wb"):
                    pass

    def setup(self, workload):
        """Unmeasured preparation of WORKLOAD."""
        if workload in ("stat", "readdir", "rename"):
            self.ensure("f")
        elif workload == "remove":
            if not all(os.path.exists(p) for p in self.names("g")):
                self.ensure("f")
                for i, path in enumerate(self.names("f")):
                    os.rename(path, self.names("g")[i])
        elif "-" in workload:
            op, size = workload.split("-")
            kb = int(size[:-1])
            path = os.path.join(self.mnt, f"io{kb}k")
            if op == "read" and (not os.path.exists(path) or os.stat(path).st_size != kb * 1024):
                self.io = IoFile(path, "write", kb)
                self.io.run(1, lambda done: None)
                self.io.close()
            # Opened here, closed after the measurement: the workload's
            # RPCs are its READs or WRITEs, not the OPEN and CLOSE.
            self.io = IoFile(path, op, kb)
        if workload in ("stat", "readdir"):
            drop_caches()

    def run(self, workload):
        """Do WORKLOAD's N operations."""
        if workload == "create":
            for i, path in enumerate(self.names("f")):
                with open(path, "wb"):
                    pass
                self.tick(i + 1)
        elif workload == "stat":
            for i, path in enumerate(self.names("f")):
                os.stat(path)
                self.tick(i + 1)
        elif workload == "readdir":
            found = len(os.listdir(self.dir))
            if found < self.n:
                fail(f"readdir found {found} entries, want at least {self.n}")
            self.tick(self.n)
        elif workload == "rename":
            for i, (src, dst) in enumerate(zip(self.names("f"), self.names("g"))):
                os.rename(src, dst)
                self.tick(i + 1)
        elif workload == "remove":
            for i, path in enumerate(self.names("g")):
                os.unlink(path)
                self.tick(i + 1)
        else:
            self.io.run(self.n, self.tick)

    def measure(self, workload):
        """Set up, then run WORKLOAD between markers; its JSON record."""
        self.setup(workload)
        # The trace's window (clear_trace() .. marshal_counts()) holds the
        # counters' (before .. after): bench-nfs-report requires at least
        # one marshal event per NFS operation mountstats counted.
        clear_trace()
        lost = trace_overrun()
        before = counters(self.mnt)
        self.mark("begin", workload)
        start = time.monotonic()
        self.run(workload)
        seconds = time.monotonic() - start
        # Let the last replies' acknowledgements reach the wire first.
        time.sleep(0.5)
        self.mark("end", workload)
        after = counters(self.mnt)
        rpcs, no_chunk = marshal_counts()
        if self.io:
            self.io.close()
            self.io = None
        record = {"workload": workload, "n": self.n, "seconds": round(seconds, 3)}
        for key in RDMA_COUNTERS:
            record[key] = after[key] - before[key]
        record["marshalled"] = rpcs
        record["marshalled_no_chunk"] = no_chunk
        record["trace_lost"] = trace_overrun() - lost
        record["ops"] = {k: v - before["ops"].get(k, 0) for k, v in after["ops"].items()
                         if v != before["ops"].get(k, 0)}
        return record


def workload_names(text):
    """The workloads named in TEXT, checked."""
    known = list(METADATA) + [f"{op}-{kb}k" for op in ("write", "read") for kb in IO_SIZES_KB]
    names = [w for w in text.split(",") if w]
    for w in names:
        if w not in known:
            fail(f"unknown workload '{w}' (known: {', '.join(known)})")
    return names


def main():
    """Parse the arguments and run the workloads."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mnt", required=True)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--workloads", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--progress", required=True)
    p.add_argument("--marker", required=True, help="HOST:PORT of the capture's markers")
    args = p.parse_args()
    if args.n < 1:
        fail("--n must be at least 1")
    names = workload_names(args.workloads)
    bench = Bench(args)
    with open(args.out, "a", encoding="ascii") as out:
        for i, w in enumerate(names):
            bench.label = f"{w} {i + 1}/{len(names)}"
            bench.tick(0)
            out.write(json.dumps(bench.measure(w)) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
