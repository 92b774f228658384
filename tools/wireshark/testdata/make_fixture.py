#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Build cm_private.pcap, the dissector's test capture, from a two-guest
capture (KEEP_TWO_GUEST_DIR=1 make two-guest; DIR/stock/server.pcap): its
first ConnectRequest and ConnectReply (NFS/RDMA, stock Linux on both ends)
as captured, then copies with the consumer private data, the service ID
port or the REP's remote communication ID changed. The edited frames'
ICRC is left as captured (Wireshark does not check it).

Usage: make_fixture.py SERVER_PCAP OUT_PCAP
"""

import struct
import sys

# Offsets in a RoCEv2 CM MAD frame: Ethernet 14, IPv4 20, UDP 8, BTH 12,
# DETH 8, MAD header 24 = 86, where the CM message starts.
CM = 86
REQ_SERVICE_ID = CM + 8
REP_REMOTE_COMM_ID = CM + 4
# The 92-octet REQ private data ends 4 octets (ICRC) before the frame's
# end; the consumer's part follows the 36-octet IP CM header.
REQ_CONSUMER = 322 - 4 - 92 + 36
# REP private data (196 octets) ends there too.
REP_PRIVATE = 322 - 4 - 196


def read_pcap(path):
    data = open(path, "rb").read()
    off, frames = 24, []
    while off < len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return data[:24], frames


def patch(frame, offset, octets):
    return frame[:offset] + octets + frame[offset + len(octets):]


def main():
    header, frames = read_pcap(sys.argv[1])
    req = next(f for f in frames if f[REQ_SERVICE_ID:REQ_SERVICE_ID + 8] ==
               bytes.fromhex("0000000001064e51"))
    rep = next(f for f in frames if f[REP_PRIVATE:REP_PRIVATE + 4] ==
               bytes.fromhex("f6ab0e18") and f is not req)
    zeros = bytes(56)
    port_4420 = bytes.fromhex("0000000001061144")
    out = [
        req,                                                    # 1 as captured
        rep,                                                    # 2 as captured
        patch(req, REQ_CONSUMER, zeros),                        # 3 zeroed
        patch(req, REQ_CONSUMER, bytes.fromhex("180eabf601010303")),  # 4 bad magic
        patch(req, REQ_CONSUMER, bytes.fromhex("f6ab0e1802010303")),  # 5 version 2
        patch(req, REQ_CONSUMER, bytes.fromhex("f6ab0e1801810f0f")),  # 6 reserved bit
        # A REP answering no REQ seen, zeroed: not claimed.
        patch(patch(rep, REP_REMOTE_COMM_ID, b"\xde\xad\xbe\xef"), REP_PRIVATE, bytes(196)),  # 7
        patch(rep, REP_PRIVATE, bytes(196)),                    # 8 zeroed REP of NFS
        # Last: REQs to port 4420 (NVMe-oF) change the IB conversation.
        patch(patch(req, REQ_SERVICE_ID, port_4420), REQ_CONSUMER, zeros),  # 9 not NFS
        patch(req, REQ_SERVICE_ID, port_4420),                  # 10 not NFS, magic
    ]
    with open(sys.argv[2], "wb") as f:
        f.write(header)
        for i, frame in enumerate(out):
            f.write(struct.pack("<IIII", 1_700_000_000 + i, 0, len(frame), len(frame)))
            f.write(frame)


if __name__ == "__main__":
    main()
