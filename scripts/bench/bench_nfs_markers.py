#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The server side of the bench's workload markers.

Usage (in the bench-nfs server guest, by bench-nfs-server.sh):
    bench_nfs_markers.py --listen HOST:PORT --ready FILE

Receives the client's markers ("rpcrdma-bench begin|end WORKLOAD", UDP),
writes each into the kernel's trace (trace_marker), so that the server's
tracepoint events fall between the markers of the workload that caused
them, and only then acknowledges it ("ack " and the marker) to the sender:
the client starts a workload after the server's trace holds its begin
marker. Creates FILE once it listens; runs until killed.
"""

import argparse
import socket

MARKER = b"rpcrdma-bench "
TRACE_MARKER = "/sys/kernel/tracing/trace_marker"


def main():
    """Listen, mark, acknowledge."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--listen", required=True, help="HOST:PORT")
    p.add_argument("--ready", required=True, help="file created once listening")
    args = p.parse_args()
    host, port = args.listen.rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((host, int(port)))
    with open(args.ready, "w", encoding="ascii"):
        pass
    with open(TRACE_MARKER, "w", encoding="ascii") as trace:
        while True:
            data, peer = sock.recvfrom(512)
            if not data.startswith(MARKER):
                continue
            trace.write(data.decode("ascii", errors="replace") + "\n")
            trace.flush()
            sock.sendto(b"ack " + data, peer)


if __name__ == "__main__":
    main()
