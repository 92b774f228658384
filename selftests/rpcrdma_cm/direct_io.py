#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""One O_DIRECT write or read on an NFS file, and what it cost in chunks.

    direct_io.py write NFS_FILE SOURCE   write SOURCE's bytes to NFS_FILE
    direct_io.py read NFS_FILE DEST      read NFS_FILE's bytes into DEST

The file is opened before and closed after the client's RPC-over-RDMA
counters are read, so the counts cover the one WRITE or READ (and a
COMMIT) and not the OPEN and CLOSE around it. Prints
"read_chunks=N write_chunks=N reply_chunks=N local_inv_needed=N": how much
each mountstats counter grew.
"""

import mmap
import os
import sys

# Positions after "xprt: rdma" in /proc/self/mountstats (0-based).
COUNTERS = {"read_chunks": 10, "write_chunks": 11, "reply_chunks": 12,
            "local_inv_needed": 24}


def rdma_counters(path):
    """The counters of the RPC-over-RDMA transport of the NFS mount that
    holds path (the "xprt: rdma" line of that mount's block in
    /proc/self/mountstats, not the first such line: another mount may
    come first)."""
    path = os.path.realpath(path)
    best, found, mount = "", None, None
    with open("/proc/self/mountstats", encoding="ascii") as stats:
        for line in stats:
            words = line.split()
            # "device SRV:/ mounted on /mnt with fstype nfs4 statvers=1.1"
            if words[:1] == ["device"] and words[2:4] == ["mounted", "on"]:
                mount = words[4]
            elif words[:2] == ["xprt:", "rdma"] and mount is not None:
                inside = path == mount or path.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) > len(best):
                    numbers = words[2:]
                    best = mount
                    found = {k: int(numbers[i]) for k, i in COUNTERS.items()}
    if found is None:
        sys.exit(f"direct_io.py: no 'xprt: rdma' line for the mount of {path}"
                 " in /proc/self/mountstats")
    return found


def main():
    """Do the one transfer and print the counter deltas."""
    if len(sys.argv) != 4 or sys.argv[1] not in ("write", "read"):
        sys.exit(__doc__)
    op, nfs_file, local = sys.argv[1:]
    if op == "write":
        with open(local, "rb") as src:
            data = src.read()
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        size = len(data)
    else:
        flags = os.O_RDONLY
        size = os.stat(nfs_file).st_size
    # An anonymous mapping is page aligned, as O_DIRECT wants.
    buf = mmap.mmap(-1, max(size, 1))
    fd = os.open(nfs_file, flags | os.O_DIRECT, 0o644)
    try:
        if op == "write":
            buf[:size] = data
        before = rdma_counters(nfs_file)
        if op == "write":
            done = os.pwrite(fd, memoryview(buf)[:size], 0)
        else:
            done = os.preadv(fd, [memoryview(buf)[:size]], 0)
        after = rdma_counters(nfs_file)
    finally:
        os.close(fd)
    if done != size:
        sys.exit(f"direct_io.py: {op} moved {done} of {size} bytes")
    if op == "read":
        with open(local, "wb") as dst:
            dst.write(buf[:size])
    print(" ".join(f"{k}={after[k] - before[k]}" for k in COUNTERS))


if __name__ == "__main__":
    main()
