#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A userspace RDMA CM peer for the kernel's NFS/RDMA client and server.

cm_peer.py respond ADDRESS PORT CASES
    The legacy or hostile responder: listens on ADDRESS:PORT and accepts
    every connection with the private data of the next line of the file
    CASES (hex, "-" for no private data at all; the cases are used in
    order, then again from the first), waits until it is established,
    disconnects and waits for the disconnection. Prints "listening" once
    the listener is up, then one line per connection:
    "conn N req=HEX rep=HEX" (what the requester sent, as the CM delivered
    it, and what this side sent; "-" for none). Runs until killed.

cm_peer.py storm ADDRESS PORT COUNT SEED
    The requester: COUNT connects to ADDRESS:PORT, each with random
    private data (seeded with SEED: conforming messages with random sizes,
    flags and trailing octets, bad magic, other versions, random octets,
    every length from 0 to 56, none), each disconnected once established.
    Prints one line per connect: "conn N req=HEX rep=HEX outcome=accepted"
    (or "outcome=rejected"/"outcome=error:WHAT").

Uses rdma-core's pyverbs (Debian python3-pyverbs), run with /usr/bin/python3.
"""

import random
import struct
import sys

import pyverbs.cm_enums as ce
from pyverbs.cmid import AddrInfo, CMEvent, CMEventChannel, CMID, ConnParam
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QPCap, QPInitAttr

MAGIC = 0xF6AB0E18
MAX_REQ_PRIVATE_DATA = 56


def hexof(data):
    """Octets as hex, "-" for none."""
    return bytes(data).hex() if data else "-"


def conn_param(pdata):
    """A ConnParam carrying pdata (None or b"": no private data)."""
    param = ConnParam(resources=1, depth=1, data_len=len(pdata or b""))
    if pdata:
        param.set_private_data(pdata)
    return param


def rc_qp(cmid):
    """The small RC QP every connection needs."""
    cap = QPCap(max_send_wr=1, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
    cmid.create_qp(QPInitAttr(qp_type=2, cap=cap))  # IBV_QPT_RC


def read_cases(path):
    """The responder's private data, one hex line each ("-" none)."""
    cases = []
    with open(path, encoding="ascii") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            cases.append(b"" if line == "-" else bytes.fromhex(line))
    if not cases:
        raise SystemExit(f"cm_peer: no cases in {path}")
    return cases


def respond(addr, port, cases):
    """Accept each connection with the next case, then disconnect it."""
    channel = CMEventChannel()
    listen_id = CMID(creator=channel, port_space=ce.RDMA_PS_TCP)
    info = AddrInfo(src=addr, src_service=port, port_space=ce.RDMA_PS_TCP,
                    flags=ce.RAI_PASSIVE)
    listen_id.bind_addr(info)
    listen_id.listen()
    print("listening", flush=True)
    # Connection requests that arrived while another connection was being
    # set up or torn down wait here, not acknowledged yet.
    pending = []

    def next_event():
        """The next event of the connection in hand (a new connection
        request is kept for later instead)."""
        while True:
            event = CMEvent(channel)
            if event.event_type == ce.RDMA_CM_EVENT_CONNECT_REQUEST:
                pending.append(event)
                continue
            return event

    n = 0
    while True:
        event = pending.pop(0) if pending else CMEvent(channel)
        if event.event_type != ce.RDMA_CM_EVENT_CONNECT_REQUEST:
            # A late event of a connection already closed.
            event.ack_cm_event()
            continue
        request = event.private_data or b""
        cmid = CMID(creator=event, listen_id=listen_id)
        event.ack_cm_event()
        pdata = cases[n % len(cases)]
        rc_qp(cmid)
        cmid.accept(conn_param(pdata))
        print(f"conn {n} req={hexof(request)} rep={hexof(pdata)}", flush=True)
        n += 1
        # ESTABLISHED (or the requester gave up), then disconnect.
        event = next_event()
        established = event.event_type == ce.RDMA_CM_EVENT_ESTABLISHED
        event.ack_cm_event()
        if established:
            try:
                cmid.disconnect()
            except PyverbsError:
                pass  # the requester disconnected first
            next_event().ack_cm_event()
        cmid.close()


def random_pdata(rng):
    """One random private data for the storm (b"" for none)."""
    kind = rng.randrange(8)
    tail = bytes(rng.randrange(256) for _ in range(rng.randrange(MAX_REQ_PRIVATE_DATA - 7)))
    if kind == 0:
        return b""
    if kind in (1, 2):  # conforming: random sizes and flags, any tail
        return struct.pack(">IBBBB", MAGIC, 1, rng.randrange(256),
                           rng.randrange(256), rng.randrange(256)) + tail
    if kind == 3:  # bad magic: byte-swapped, one bit off, random
        magic = rng.choice([0x180EABF6, MAGIC ^ (1 << rng.randrange(32)),
                            rng.randrange(1 << 32)])
        return struct.pack(">IBBBB", magic, 1, rng.randrange(256), 3, 3) + tail
    if kind == 4:  # other versions
        version = rng.choice([0, 2, rng.randrange(256)])
        return struct.pack(">IBBBB", MAGIC, version, 1, 3, 3) + tail
    if kind == 5:  # short prefixes of a conforming message
        return struct.pack(">IBBBB", MAGIC, 1, 1, 3, 3)[:rng.randrange(1, 8)]
    # random octets of random length
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, MAX_REQ_PRIVATE_DATA + 1)))


def connect_once(addr, port, pdata):
    """Connect with pdata, disconnect; (reply private data, outcome)."""
    channel = CMEventChannel()
    cmid = CMID(creator=channel, port_space=ce.RDMA_PS_TCP)
    try:
        info = AddrInfo(dst=addr, dst_service=port, port_space=ce.RDMA_PS_TCP)
        cmid.resolve_addr(info, 2000)
        event = CMEvent(channel)
        event.ack_cm_event()
        cmid.resolve_route(2000)
        event = CMEvent(channel)
        event.ack_cm_event()
        rc_qp(cmid)
        cmid.connect(conn_param(pdata))
        event = CMEvent(channel)
        kind = event.event_type
        reply = bytes(event.private_data or b"")
        event.ack_cm_event()
        if kind == ce.RDMA_CM_EVENT_REJECTED:
            return reply, "rejected"
        if kind != ce.RDMA_CM_EVENT_ESTABLISHED:
            return reply, f"error:event{kind}"
        cmid.disconnect()
        CMEvent(channel).ack_cm_event()
        return reply, "accepted"
    except (PyverbsError, PyverbsRDMAError) as e:
        return b"", "error:" + str(e).replace(" ", "_")[:60]
    finally:
        cmid.close()
        channel.close()


def storm(addr, port, count, seed):
    """count connects with random private data."""
    rng = random.Random(seed)
    for n in range(count):
        pdata = random_pdata(rng)
        reply, outcome = connect_once(addr, port, pdata)
        print(f"conn {n} req={hexof(pdata)} rep={hexof(reply)} outcome={outcome}", flush=True)


def main():
    """Parse the command line."""
    args = sys.argv[1:]
    if len(args) == 4 and args[0] == "respond":
        respond(args[1], args[2], read_cases(args[3]))
    elif len(args) == 5 and args[0] == "storm":
        try:
            count, seed = int(args[3]), int(args[4])
        except ValueError:
            raise SystemExit(f"cm_peer: COUNT and SEED must be integers\n{__doc__}") from None
        if count < 1:
            raise SystemExit("cm_peer: COUNT must be at least 1")
        storm(args[1], args[2], count, seed)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
