#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Build the dissector's test captures.

make_fixture.py ib SERVER_PCAP cm_private.pcap
    From a two-guest capture (KEEP_TWO_GUEST_DIR=1 make two-guest;
    DIR/stock/server.pcap): its first ConnectRequest and ConnectReply
    (NFS/RDMA, stock Linux on both ends) as captured, then copies with the
    consumer private data, the service ID port or the REP's remote
    communication ID changed. The edited frames' ICRC is left as captured
    (Wireshark does not check it).

make_fixture.py mpa SIW_PCAP mpa.pcap
    From a capture on lo of rpcrdma-cm probing nfsd over siw (a siw
    device on a dummy interface, as cm_tools.sh sets it up; the first
    probe with the default private data, the second with --pdata
    f6ab0e1801810f0f): both TCP connections (10 frames each: handshake,
    MPA Request and Reply, close) as captured, then copies of the first
    with another client port and the Request's private data zeroed, and
    with the server port 20050, zeroed or not, and with a Request that
    carries no consumer private data (only MPA revision 2's IRD/ORD).
    TCP and IPv4 checksums of the copies are left as captured (Wireshark
    does not check them).
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


# In a frame captured on lo (Ethernet header of zeros, IPv4, TCP without
# options but timestamps): the TCP ports, and the MPA private data, which
# ends the frame: 4 octets of IRD/ORD (MPA revision 2), then the consumer's.
TCP_SRC, TCP_DST = 34, 36


def mpa(path, out_path):
    header, frames = read_pcap(path)
    conn1, conn2 = frames[0:10], frames[10:20]
    client = conn1[0][TCP_SRC:TCP_SRC + 2]
    server = conn1[0][TCP_DST:TCP_DST + 2]

    def copy(conn, new_client, new_server, zero_req, zero_rep):
        out = []
        for f in conn:
            from_client = f[TCP_SRC:TCP_SRC + 2] == client
            c, s_ = (TCP_SRC, TCP_DST) if from_client else (TCP_DST, TCP_SRC)
            f = patch(patch(f, c, new_client), s_, new_server)
            is_mpa = b"MPA ID Req Frame" in f or b"MPA ID Rep Frame" in f
            if is_mpa and ((from_client and zero_req) or (not from_client and zero_rep)):
                f = patch(f, len(f) - 8, bytes(8))
            out.append(f)
        return out

    def without_consumer_data(conn):
        # The Request carries the IRD/ORD octets only: private data length
        # 4 (MPA header: key 16, flags, revision, length 2), frame and IPv4
        # total length 8 shorter.
        out = []
        for f in conn:
            if b"MPA ID Req Frame" in f:
                key = f.index(b"MPA ID Req Frame")
                f = patch(f, key + 18, struct.pack(">H", 4))[:-8]
                total = struct.unpack(">H", f[16:18])[0]
                f = patch(f, 16, struct.pack(">H", total - 8))
            out.append(f)
        return out

    port = lambda n: struct.pack(">H", n)
    out = (conn1 + conn2
           + copy(conn1, port(58100), server, True, False)       # 21-30
           + copy(conn1, port(58101), port(20050), True, True)    # 31-40
           + copy(conn1, port(58102), port(20050), False, False)  # 41-50
           + without_consumer_data(copy(conn1, port(58103), server, False, False)))  # 51-60
    write_pcap(out_path, header, out)


def write_pcap(path, header, frames):
    with open(path, "wb") as f:
        f.write(header)
        for i, frame in enumerate(frames):
            f.write(struct.pack("<IIII", 1_700_000_000 + i, 0, len(frame), len(frame)))
            f.write(frame)


def ib(path, out_path):
    header, frames = read_pcap(path)
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
    write_pcap(out_path, header, out)


if __name__ == "__main__":
    {"ib": ib, "mpa": mpa}[sys.argv[1]](sys.argv[2], sys.argv[3])
