#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Connect to an RPC-over-RDMA listener with chosen CM private data.

Usage: cm_probe.py ADDRESS PORT HEX

Sends HEX (any length up to 56 octets, "" for none) as the private data of
the rdma_cm connect, prints the private data of the accept in hex (first
line) and disconnects. Exit 0 when the connection was established.
Uses rdma-core's pyverbs (Debian python3-pyverbs), run with /usr/bin/python3.
"""

import sys

import pyverbs.cm_enums as ce
from pyverbs.cmid import AddrInfo, CMEvent, CMEventChannel, CMID, ConnParam
from pyverbs.qp import QPCap, QPInitAttr


def expect(channel, want):
    """Wait for the next CM event and check its type; return the event."""
    event = CMEvent(channel)
    got = event.event_type
    if got != want:
        event.ack_cm_event()
        raise SystemExit(f"cm_probe: event {got}, expected {want}")
    return event


def main():
    addr, port, hexdata = sys.argv[1], sys.argv[2], sys.argv[3]
    pdata = bytes.fromhex(hexdata)
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
    print(bytes(reply).hex())
    cmid.disconnect()
    expect(channel, ce.RDMA_CM_EVENT_DISCONNECTED).ack_cm_event()
    cmid.close()
    channel.close()


if __name__ == "__main__":
    main()
