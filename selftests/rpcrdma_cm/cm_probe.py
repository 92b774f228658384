#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Connect to an RPC-over-RDMA listener with chosen CM private data.

Usage: cm_probe.py [--times N | --hold SECONDS] ADDRESS PORT HEX [READ_FILE COUNT]

Sends HEX (any length up to 56 octets, "" for none) as the private data of
the rdma_cm connect, prints the private data of the accept in hex (first
line) and disconnects. Exit 0 when the connection was established.

With READ_FILE and COUNT it first sends one NFSv4.0 COMPOUND (PUTROOTFH,
LOOKUP READ_FILE, READ COUNT octets with the anonymous stateid) as an
RPC-over-RDMA RDMA_MSG with no chunks at all, so the whole reply has to
come inline, and prints a second line "proc=P err=E len=L": the reply's
RPC-over-RDMA procedure (0 RDMA_MSG, 4 RDMA_ERROR), error code (2 is
ERR_CHUNK) and the length of the Send received.

With --hold SECONDS it keeps the connection that long before it
disconnects (its lines printed first), so that the server's view of it
can be read meanwhile.

With --times N it connects, reads (if asked) and disconnects N times in a
row, printing the lines of the last connection only.

cm_probe.py --accept ADDRESS PORT HEX SECONDS [GO_FILE] plays the
responder instead: it listens on ADDRESS:PORT, prints "listening",
prints the requester's private data in hex when its connect request
arrives, waits until GO_FILE exists if one is named (at most 120 s),
accepts with HEX as the private data of the accept, keeps the
connection SECONDS seconds and disconnects.

Uses rdma-core's pyverbs (Debian python3-pyverbs), run with /usr/bin/python3.
"""

import os
import struct
import sys
import time

import pyverbs.cm_enums as ce
from pyverbs.cmid import AddrInfo, CMEvent, CMEventChannel, CMID, ConnParam
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QPCap, QPInitAttr


def expect(channel, want):
    """Wait for the next CM event and check its type; return the event."""
    event = CMEvent(channel)
    got = event.event_type
    if got != want:
        event.ack_cm_event()
        raise SystemExit(f"cm_probe: event {got}, expected {want}")
    return event


def xdr_string(data):
    """An XDR opaque/string: length, then data padded to 4 octets."""
    return struct.pack(">I", len(data)) + data + b"\0" * (-len(data) % 4)


def nfs4_read_call(xid, name, count):
    """RPC-over-RDMA header + ONC RPC CALL of an NFSv4.0 COMPOUND."""
    cred = struct.pack(">I", 0) + xdr_string(b"cm-probe") + struct.pack(">III", 0, 0, 0)
    rpc = struct.pack(">IIIIII", xid, 0, 2, 100003, 4, 1)
    rpc += struct.pack(">I", 1) + xdr_string(cred)  # AUTH_SYS, root
    rpc += struct.pack(">II", 0, 0)  # verifier AUTH_NONE
    rpc += xdr_string(b"") + struct.pack(">II", 0, 3)  # tag, minor 0, 3 ops
    rpc += struct.pack(">I", 24)  # PUTROOTFH
    rpc += struct.pack(">I", 15) + xdr_string(name)  # LOOKUP
    rpc += struct.pack(">I", 25) + b"\0" * 16  # READ, anonymous stateid
    rpc += struct.pack(">QI", 0, count)
    # RPC-over-RDMA v1: xid, vers 1, credits 1, RDMA_MSG, no read list,
    # no write list, no reply chunk.
    return struct.pack(">IIIIIII", xid, 1, 1, 0, 0, 0, 0) + rpc


def read_inline(cmid, name, count):
    """Send the READ and report how the server answered."""
    recv_mr = cmid.reg_msgs(65536)
    cmid.post_recv(recv_mr)
    msg = nfs4_read_call(0x52434d31, name, count)
    send_mr = cmid.reg_msgs(len(msg))
    send_mr.write(msg, len(msg))
    cmid.post_send(send_mr, 2, len(msg))  # IBV_SEND_SIGNALED
    cmid.get_send_comp()
    wc = cmid.get_recv_comp()
    if wc.status != 0:
        raise SystemExit(f"cm_probe: receive completion status {wc.status}")
    head = recv_mr.read(64, 0)
    _, _, _, proc, err = struct.unpack(">IIIII", head[:20])
    # After a 28-octet RDMA_MSG header: xid, REPLY, MSG_ACCEPTED, an empty
    # verifier, SUCCESS, then the COMPOUND status.
    status = struct.unpack(">I", head[52:56])[0] if proc == 0 else -1
    print(f"proc={proc} err={err if proc == 4 else 0} len={wc.byte_len} nfs_status={status}")


def connect_once(addr, port, pdata, read_args, quiet, hold=0.0):
    """One connection: connect, optionally READ inline, hold, disconnect."""
    channel = CMEventChannel()
    cmid = CMID(creator=channel, port_space=ce.RDMA_PS_TCP)
    info = AddrInfo(dst=addr, dst_service=port, port_space=ce.RDMA_PS_TCP)
    cmid.resolve_addr(info, 2000)
    expect(channel, ce.RDMA_CM_EVENT_ADDR_RESOLVED).ack_cm_event()
    cmid.resolve_route(2000)
    expect(channel, ce.RDMA_CM_EVENT_ROUTE_RESOLVED).ack_cm_event()
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    cmid.create_qp(QPInitAttr(qp_type=2, cap=cap))  # IBV_QPT_RC
    param = ConnParam(resources=1, depth=1, data_len=len(pdata))
    if pdata:
        param.set_private_data(pdata)
    cmid.connect(param)
    event = expect(channel, ce.RDMA_CM_EVENT_ESTABLISHED)
    reply = event.private_data or b""
    event.ack_cm_event()
    if not quiet:
        print(bytes(reply).hex())
    if read_args and not quiet:
        read_inline(cmid, read_args[0].encode(), int(read_args[1]))
    sys.stdout.flush()
    time.sleep(hold)
    cmid.disconnect()
    expect(channel, ce.RDMA_CM_EVENT_DISCONNECTED).ack_cm_event()
    cmid.close()
    channel.close()


def wait_for(path, limit):
    """Wait until path exists, at most limit seconds; False if it never did."""
    deadline = time.monotonic() + limit
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def accept_once(addr, port, pdata, seconds, go_file=None):
    """Listen, accept one connection with pdata (once go_file exists), hold it, disconnect."""
    channel = CMEventChannel()
    listen_id = CMID(creator=channel, port_space=ce.RDMA_PS_TCP)
    info = AddrInfo(src=addr, src_service=port, port_space=ce.RDMA_PS_TCP,
                    flags=ce.RAI_PASSIVE)
    listen_id.bind_addr(info)
    listen_id.listen()
    print("listening", flush=True)
    event = expect(channel, ce.RDMA_CM_EVENT_CONNECT_REQUEST)
    request = event.private_data or b""
    cmid = CMID(creator=event, listen_id=listen_id)
    event.ack_cm_event()
    print(bytes(request).hex(), flush=True)
    if go_file and not wait_for(go_file, 120):
        raise SystemExit(f"cm_probe: {go_file} did not appear within 120 s")
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    cmid.create_qp(QPInitAttr(qp_type=2, cap=cap))  # IBV_QPT_RC
    param = ConnParam(resources=1, depth=1, data_len=len(pdata))
    if pdata:
        param.set_private_data(pdata)
    cmid.accept(param)
    expect(channel, ce.RDMA_CM_EVENT_ESTABLISHED).ack_cm_event()
    time.sleep(seconds)
    try:
        cmid.disconnect()
    except PyverbsError:
        pass  # the requester disconnected first
    CMEvent(channel).ack_cm_event()  # DISCONNECTED, either way
    cmid.close()
    listen_id.close()
    channel.close()


def main():
    """Parse the command line and make the connection(s)."""
    args = sys.argv[1:]
    if args[:1] == ["--accept"]:
        if len(args) not in (5, 6):
            raise SystemExit(__doc__)
        go_file = args[5] if len(args) == 6 else None
        accept_once(args[1], args[2], bytes.fromhex(args[3]), float(args[4]), go_file)
        return
    times, hold = 1, 0.0
    if args[:1] == ["--times"]:
        if len(args) < 2:
            raise SystemExit(__doc__)
        times = int(args[1])
        args = args[2:]
    elif args[:1] == ["--hold"]:
        if len(args) < 2:
            raise SystemExit(__doc__)
        hold = float(args[1])
        args = args[2:]
    if len(args) not in (3, 5) or times < 1:
        raise SystemExit(__doc__)
    addr, port, hexdata = args[:3]
    pdata = bytes.fromhex(hexdata)
    for i in range(times):
        connect_once(addr, port, pdata, args[3:], quiet=i < times - 1, hold=hold)


if __name__ == "__main__":
    main()
