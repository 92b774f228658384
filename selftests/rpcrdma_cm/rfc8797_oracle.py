#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An independent oracle of RFC 8797 for the interop matrix.

  rfc8797_oracle.py decode HEX
  rfc8797_oracle.py expect --server SPEC --client SPEC --transport rxe|siw
  rfc8797_oracle.py negotiate < LINES
  rfc8797_oracle.py judge ROW_DIR --server SPEC --client SPEC --transport rxe|siw
                    [--name NAME]

Written from the RFC text and the documented behaviour of the kernels, not
from rust/proto or the module: the interop matrix (scripts/guest/interop.sh) and
the guests' hostile responder and storms (selftests/rpcrdma_cm/peer_lib.sh)
judge the module with it, so its expectations must not come from the code
it judges. Standard library only (and tshark for judge). decode and expect
print JSON; negotiate reads one connection a line, "SEND RECV RI HEX" (what
this side advertised, RI 1 or 0, and the octets it received, "-" for none),
and prints a line "CONFORMANCE RESERVED_FLAGS SEND_THRESHOLD RECV_THRESHOLD
on|off" for each, one process for a whole set of connections. judge judges
the negotiation of one interop row from the files the row left in ROW_DIR
(server.pcap, {client,server}-connections, -trace, client-inline-thresh):
the REQ/REP on the wire and what each side reports against expect's values
for the row's SPECs; it prints one JSON object (ok, why, the table's cells)
on stdout and its findings, one a line, on stderr; exit 0 when all agree, 1
on a disagreement. A bad argument or line exits 2 with a message on stderr.

Sources cited below:
  RFC      RFC 8797 (/work/shared/seeds/rfc8797-draft-rpcrdma-cm-private-data.txt
           is the draft text, without section numbers; the numbers are the
           RFC's: 3.1 Inline Threshold Size, 3.2 Remote Invalidation,
           4 Private Data Message Format, 4.1 Using the R Field,
           4.2 Send and Receive Size Values, 5 Interoperability,
           6 Updating the Message Format)
  6.12.md  /work/shared/reference/rfc8797-in-linux-6.12.md (stock 6.12 source)
  7.3.md   /work/shared/reference/rfc8797-in-linux-7.3.md (stock 7.3: unchanged)
  admin    Documentation/admin-guide.rst (the module's parameters and policy)
  design   Documentation/design.rst (the series)
  testing  Documentation/testing.rst (the guests, the interop matrix)
"""

import argparse
import json
import os
import re
import subprocess
import sys

# --- The message (RFC section 4) ---------------------------------------

MAGIC = 0xF6AB0E18  # RFC 4: "MUST be 0xf6ab0e18, in big-endian order"
VERSION = 1  # RFC 4: version 1 = exactly the first eight octets defined
MSG_LEN = 8  # magic(4) version(1) flags(1) send size(1) recv size(1)
FLAG_RI = 0x01  # RFC 4.1: bit 0 of the Flags octet (bit 8 of the message)
DEFAULT_SIZE = 1024  # RFC 5 / RFC 8166 4.3.3: the Version One default inline size


def encode_size(size):
    # RFC 4.2: "dividing the actual value by 1024 and subtracting one".
    assert 1024 <= size <= 256 * 1024 and size % 1024 == 0, size
    return size // 1024 - 1


def decode_size(code):
    # RFC 4.2: "performing complementary operations": 0 -> 1 KB, 255 -> 256 KB.
    return (code + 1) * 1024


def encode_message(send, recv, ri):
    """The 8 octets a peer advertising SEND/RECV/RI puts first (RFC 4)."""
    return bytes(
        [
            (MAGIC >> 24) & 0xFF,
            (MAGIC >> 16) & 0xFF,
            (MAGIC >> 8) & 0xFF,
            MAGIC & 0xFF,
            VERSION,
            FLAG_RI if ri else 0,
            encode_size(send),
            encode_size(recv),
        ]
    )


def parse_hex(text):
    """HEX as bytes: colons and spaces allowed, "" or "-" for none."""
    text = text.replace(":", "").replace(" ", "")
    if text in ("", "-"):
        return b""
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise SystemExit(f"rfc8797_oracle: not hex: {text!r}") from None


def decode(data):
    """What a receiver learns from DATA (all the private data it got).

    Not conforming (RFC 5: "does not receive a CM Private Data message which
    conforms"): fewer than 8 octets (none at all, or iWARP delivering a short
    one exactly: design.rst, the length checks), a magic other than 0xf6ab0e18 read
    big-endian, a version other than 1. All-zero data of any length (what
    IB/RoCE deliver when the peer sent nothing: the CM area is zero-padded,
    6.12.md; over iWARP, zeros as sent) carries no message at all; it is
    named "zeroed" as the module's counters name an all-zero area (admin),
    also when shorter than 8 octets.
    Octets after the first 8 are padding (IB/RoCE) and are ignored (RFC 4:
    version 1 defines only the first eight).
    Reserved flag bits are reported and ignored (RFC 4.1: reserved, "must be
    clear"; RFC 6: a new meaning needs a new version; admin: "reported but
    ignored").
    """
    out = {"length": len(data), "hex": data.hex()}
    if len(data) == 0:
        cause = "absent"
    elif not any(data):
        cause = "zeroed"
    elif len(data) < MSG_LEN:
        cause = "short"
    elif int.from_bytes(data[0:4], "big") != MAGIC:
        cause = "bad_magic"
    elif data[4] != VERSION:
        cause = "unknown_version"
    else:
        cause = "ok"
    out["conformance"] = cause
    out["conforming"] = cause == "ok"
    if cause == "ok":
        flags = data[5]
        out["message"] = {
            "hex": data[:MSG_LEN].hex(),
            "version": data[4],
            "flags": flags,
            "remote_invalidation": bool(flags & FLAG_RI),
            "reserved_flags": flags & ~FLAG_RI & 0xFF,
            "send_code": data[6],
            "recv_code": data[7],
            "max_send": decode_size(data[6]),
            "max_recv": decode_size(data[7]),
        }
        eff = (decode_size(data[6]), decode_size(data[7]), bool(flags & FLAG_RI))
    else:
        out["message"] = None
        eff = rfc_default()
    # What the receiver must assume the peer supports.
    out["peer"] = {"send": eff[0], "recv": eff[1], "remote_invalidation": eff[2]}
    return out


def rfc_default():
    # RFC 5: without a conforming message "the peer behaves as if a Private
    # Data message was received in which bit 8 of the Flags field is clear
    # (zero), and both Size fields contain the value zero": 1024/1024, no RI.
    return (decode_size(0), decode_size(0), False)


# --- The rules (RFC 3.1 and 3.2) ---------------------------------------


def rfc_thresholds(own_send, own_recv, own_ri, peer_send, peer_recv, peer_ri):
    """(send threshold, receive threshold, Remote Invalidation) of one side.

    RFC 3.1: the requester "MUST use the smaller of its maximum send size and
    the responder's maximum receive size"; the responder the smaller of its
    maximum send size and the requester's maximum receive size. The other
    direction is the peer's rule seen from this side: what this side
    receives is at most what the peer sends, min(own recv, peer send).
    RFC 3.2: Remote Invalidation only "if both peers support it".
    """
    send = min(own_send, peer_recv)
    recv = min(own_recv, peer_send)
    ri = own_ri and peer_ri
    return send, recv, ri


# --- The test guests' transport settings -------------------------------

# Client: xprtrdma's defaults, /proc/sys/sunrpc/rdma_max_inline_write (what
# it sends) and rdma_max_inline_read (what it receives), 4096 (6.12.md,
# Client knobs; the guests leave them alone: testing, admin "With the default
# parameters the negotiated values equal the stock ones (4096/4096)").
CLIENT_INLINE_WRITE = 4096
CLIENT_INLINE_READ = 4096
# Server: svcrdma's /proc/sys/sunrpc/svc_rdma/max_req_size, 4096 (6.12.md).
SERVER_MAX_REQ_SIZE = 4096
# The module's size parameters other than 0 (admin, Parameters:
# "Otherwise 1024..65536").
PARAM_MIN = 1024
PARAM_MAX = 65536
# Both soft devices can post Send With Invalidate (both have
# IB_DEVICE_MEM_MGT_EXTENSIONS; testing: the two-guest test sees opcodes
# 22/23 on rxe); stock svcrdma drops Remote Invalidation without it (6.12.md).
DEVICE_CAN_INVALIDATE = {"rxe": True, "siw": True}
# How much private data the receiver (and the server's capture) sees.
# IB/RoCE (rxe): the CM message's whole area, zero-padded: 56 octets in a
# REQ (92 less rdma_cm's 36-octet header), 196 in a REP (6.12.md, rdma_cm
# facts; admin, debugfs peer_pdata_len). iWARP (siw): exactly what was sent
# (design.rst, the length checks), nothing when nothing was sent.
PADDED_LEN = {"rxe": {"req": 56, "rep": 196}, "siw": None}

# --- The row's sides ---------------------------------------------------

KINDS = ("stock", "patched", "module")
SIZE_PARAMS = {
    "client": ("requester_send_size", "requester_recv_size"),
    "server": ("responder_send_size", "responder_recv_size"),
}
BOOL_PARAMS = ("remote_invalidation", "send_private_data")


def parse_spec(spec, role):
    """interop.sh's side: KERNEL[@BASE][:PARAMS] (see its ROWS comment)."""
    head, _, params = spec.partition(":")
    kind, _, base = head.partition("@")
    if kind not in KINDS:
        raise SystemExit(f"rfc8797_oracle: {role} {spec!r}: kernel {kind!r} is not one of {KINDS}")
    if kind != "module" and params:
        raise SystemExit(f"rfc8797_oracle: {role} {spec!r}: only 'module' takes parameters")
    # The module's defaults (admin, Parameters): sizes 0, remote_invalidation
    # Y, send_private_data Y.
    p = {SIZE_PARAMS[role][0]: 0, SIZE_PARAMS[role][1]: 0, "remote_invalidation": True, "send_private_data": True}
    for item in params.replace(" ", ",").split(","):
        if item in ("", "-"):
            continue
        key, eq, val = item.partition("=")
        if not eq:
            raise SystemExit(f"rfc8797_oracle: {role} {spec!r}: {item!r} is not key=value")
        if key in BOOL_PARAMS:
            if val not in ("Y", "y", "1", "N", "n", "0"):
                raise SystemExit(f"rfc8797_oracle: {role} {spec!r}: {key}={val}: Y or N")
            p[key] = val in ("Y", "y", "1")
        elif key in SIZE_PARAMS["client"] + SIZE_PARAMS["server"]:
            try:
                size = int(val, 10)
            except ValueError:
                raise SystemExit(f"rfc8797_oracle: {role} {spec!r}: {key}={val}: not a number") from None
            if size != 0 and not PARAM_MIN <= size <= PARAM_MAX:
                # admin: "Otherwise 1024..65536; other values are refused
                # (-ERANGE)"; at load that makes the load fail.
                raise SystemExit(f"rfc8797_oracle: {role} {spec!r}: {key}={val}: the module refuses it (-ERANGE)")
            # The other role's sizes are taken but do not act on this one.
            if key in SIZE_PARAMS[role]:
                p[key] = size
        else:
            raise SystemExit(f"rfc8797_oracle: {role} {spec!r}: unknown parameter {key!r}")
    return kind, base or None, p


def module_size(param, transport_setting):
    # admin, Parameters: 0 (default) = the transport's own setting; else
    # rounded down to a multiple of 1024 (at most 65536, what the
    # transports allocate: larger values are refused above).
    if param == 0:
        return transport_setting
    return param // 1024 * 1024


# The smallest max_req_size svcrdma's sysctl takes (6.12.md, 7.3.md:
# min_max_inline = RPCRDMA_DEF_INLINE_THRESH).
SERVER_MIN_MAX_REQ_SIZE = 4096


def follows_client(recv, client_adv):
    """A server's receive size once it follows the client (design, "Receive
    buffers that follow the client"): RFC 3.1, a client sends nothing larger
    than the send size it advertised, so the server advertises (and
    provisions) at most that; unchanged for a client without a message."""
    if client_adv is None:
        return recv
    return min(recv, client_adv[0])


def advertisement(role, kind, p, transport, base=None, client_adv=None):
    """What a side puts in its private data: (send, recv, ri) or None.
    For the server, CLIENT_ADV is what the client sent (None: nothing
    conforming)."""
    if kind in ("stock", "patched"):
        if role == "client":
            # 6.12.md, rpcrdma_ep_create(): its inline sizes, flags always
            # SND_W_INV_OK. The series changes nothing in the client's
            # message (patches: none touches rpcrdma_ep_create()'s message).
            return (CLIENT_INLINE_WRITE, CLIENT_INLINE_READ, True)
        if kind == "stock":
            # 6.12.md and 7.3.md, svc_rdma_accept(): flags 0,
            # sc_max_req_size both ways.
            return (SERVER_MAX_REQ_SIZE, SERVER_MAX_REQ_SIZE, False)
        # The series' "svcrdma: Advertise the Remote Invalidation the
        # server uses": the flag set when the device has the memory
        # management extensions, the send size as stock. On 7.3, "svcrdma:
        # Size the Receive buffers by the client's send size": the receive
        # size follows the client, never below the sysctl's smallest
        # max_req_size (design); 6.12's series does not carry it.
        recv = SERVER_MAX_REQ_SIZE
        if base != "6.12":
            recv = max(follows_client(recv, client_adv), min(SERVER_MIN_MAX_REQ_SIZE, recv))
        return (SERVER_MAX_REQ_SIZE, recv, DEVICE_CAN_INVALIDATE[transport])
    if not p["send_private_data"]:
        # admin: send_private_data=N "sends no private data at all".
        return None
    if role == "client":
        send = module_size(p["requester_send_size"], CLIENT_INLINE_WRITE)
        recv = module_size(p["requester_recv_size"], CLIENT_INLINE_READ)
    else:
        send = module_size(p["responder_send_size"], SERVER_MAX_REQ_SIZE)
        # admin, responder_recv_size: the receive size follows a client
        # that sent a conforming message (both bases: it is the module's).
        recv = follows_client(module_size(p["responder_recv_size"], SERVER_MAX_REQ_SIZE), client_adv)
    # admin: "Both roles advertise what they really use", the RI flag from
    # remote_invalidation.
    return (send, recv, p["remote_invalidation"])


def own_limits(adv):
    # A side that sent no message has promised nothing more than the RFC
    # default: the peer takes it as 1024/1024 without RI (RFC 5), so it must
    # hold itself to that (design, the cross-check: "a side that sent
    # nothing conforming counts as 1 KB each way without Remote
    # Invalidation"; admin, send_private_data=N).
    return adv if adv is not None else rfc_default()


def client_outcome(kind, adv, peer):
    """The client's (send, recv, ri) and where it reports them."""
    own = own_limits(adv)
    # Stock xprtrdma (6.12.md, rpcrdma_update_cm_private()): defaults
    # 1024/1024, a conforming message gives the server's sizes, then
    # min(own, peer) both ways: the same as RFC 3.1. It handles Send With
    # Invalidate whenever it comes; the patched kernel's trace reports RI as
    # both peers advertised it (admin, Tracepoints: against a stock server
    # "the stock client reports off"), which is RFC 3.2 again. The module
    # applies RFC 3.1/3.2 (admin, "What changes").
    send, recv, ri = rfc_thresholds(own[0], own[1], own[2], peer["send"], peer["recv"], peer["remote_invalidation"])
    # Reports: rpcrdma_cm's debugfs; the patched kernel's
    # rpcrdma:xprtrdma_cm_private; the stock kernel's xprtrdma_inline_thresh,
    # which shows no RI (testing, The interop matrix).
    source = {"module": "debugfs", "patched": "trace", "stock": "inline_thresh"}[kind]
    return send, recv, ri, source


def server_outcome(kind, adv, peer, peer_conforming, transport):
    """The server's (send, recv, ri) and where it reports them."""
    device = DEVICE_CAN_INVALIDATE[transport]
    if kind in ("stock", "patched"):
        # Stock svcrdma (6.12.md, 7.3.md): it receives into sc_max_req_size
        # buffers: recv = sc_max_req_size; the series on 7.3 into buffers of
        # the receive size it advertised. It uses Send With Invalidate
        # whenever the client offered it (conforming message with the flag)
        # and the device can.
        recv = SERVER_MAX_REQ_SIZE if kind == "stock" else adv[1]
        ri = peer_conforming and peer["remote_invalidation"] and device
        if kind == "stock":
            # The client's sizes are dropped: Replies are limited only by
            # its own sc_max_req_size, reported as send 0, "not limited"
            # (admin, Tracepoints); and it advertises flags 0 while it
            # uses Send With Invalidate: against RFC 3.1 and 3.2, as it
            # behaves. A stock kernel traces nothing on the server.
            return 0, recv, ri, "none"
        # The series' "svcrdma: Do not send an inline Reply larger than
        # the client can receive": RFC 3.1's min(own send, client's
        # receive) for a client that advertised its sizes; a client that
        # did not is held to the server's own send size only, not to RFC
        # 5's assumed 1 KB, the series' policy (design, "A client that
        # sent no conforming private data").
        send = min(SERVER_MAX_REQ_SIZE, peer["recv"]) if peer_conforming else SERVER_MAX_REQ_SIZE
        return send, recv, ri, "trace"
    own = own_limits(adv)
    send, recv, ri = rfc_thresholds(own[0], own[1], own[2], peer["send"], peer["recv"], peer["remote_invalidation"])
    # admin, remote_invalidation: "Server: use it when the client advertised
    # it and the device supports it".
    ri = ri and device
    if not peer_conforming:
        # The series' server policy (admin, debugfs; design.rst): a
        # client that sent no conforming private data may be an RFC 8166
        # client sizing Reply chunks by its own buffers, so it is held to
        # what this server advertised it sends, not to RFC 5's assumed
        # 1 KB receive size (and to RFC 5's 1 KB if this server sent no
        # message either: own_limits).
        send = own[0]
    return send, recv, ri, "debugfs"


def wire(adv, transport, which):
    """The private data the server's capture shows for one message, hex
    ("-" none), and its length."""
    data = encode_message(*adv) if adv is not None else b""
    padded = PADDED_LEN[transport]
    if padded is not None:
        # rxe: the whole CM area, zero-padded, also when nothing was sent.
        data = data + bytes(padded[which] - len(data))
    return (data.hex() or "-"), len(data)


def expect(server_spec, client_spec, transport):
    if transport not in DEVICE_CAN_INVALIDATE:
        raise SystemExit(f"rfc8797_oracle: transport {transport!r}: rxe or siw")
    s_kind, s_base, s_p = parse_spec(server_spec, "server")
    c_kind, c_base, c_p = parse_spec(client_spec, "client")
    c_adv = advertisement("client", c_kind, c_p, transport)
    s_adv = advertisement("server", s_kind, s_p, transport, s_base, c_adv)
    req_hex, req_len = wire(c_adv, transport, "req")
    rep_hex, rep_len = wire(s_adv, transport, "rep")
    # Each side judges what it received (as received: padded on rxe).
    c_got = decode(parse_hex(rep_hex))
    s_got = decode(parse_hex(req_hex))
    c_res = client_outcome(c_kind, c_adv, c_got["peer"])
    s_res = server_outcome(s_kind, s_adv, s_got["peer"], s_got["conforming"], transport)

    def side(spec, kind, base, adv, sent_hex, sent_len, res):
        send, recv, ri, source = res
        return {
            "spec": spec,
            "kernel": kind,
            "base": base,
            "sends": encode_message(*adv).hex() if adv is not None else None,
            "advertised": None if adv is None else {"send": adv[0], "recv": adv[1], "remote_invalidation": adv[2]},
            "wire": sent_hex,
            "wire_length": sent_len,
            "send_threshold": send,
            "recv_threshold": recv,
            "remote_invalidation": bool(ri),
            "reports": source,
            # xprtrdma_inline_thresh shows no RI; "none" shows nothing.
            "reports_ri": source in ("debugfs", "trace"),
        }

    return {
        "transport": transport,
        "wire_padding": PADDED_LEN[transport],
        "client": side(client_spec, c_kind, c_base, c_adv, req_hex, req_len, c_res),
        "server": side(server_spec, s_kind, s_base, s_adv, rep_hex, rep_len, s_res),
    }


def negotiate_lines(lines):
    """The `negotiate` command: RFC 3.1/3.2 for each "SEND RECV RI HEX"."""
    out = []
    for n, line in enumerate(lines, 1):
        words = line.split()
        if not words:
            continue
        if len(words) != 4 or words[2] not in ("0", "1"):
            raise SystemExit(f"rfc8797_oracle: line {n}: want 'SEND RECV RI HEX', got {line!r}")
        try:
            own_send, own_recv = int(words[0]), int(words[1])
        except ValueError:
            raise SystemExit(f"rfc8797_oracle: line {n}: sizes must be integers: {line!r}") from None
        got = decode(parse_hex(words[3]))
        peer = got["peer"]
        send, recv, ri = rfc_thresholds(
            own_send, own_recv, words[2] == "1", peer["send"], peer["recv"], peer["remote_invalidation"]
        )
        reserved = got["message"]["reserved_flags"] if got["message"] else 0
        out.append(f"{got['conformance']} {reserved} {send} {recv} {'on' if ri else 'off'}")
    return out


# --- The judge of one interop row (scripts/guest/interop.sh) -------------
#
# What the row's files show is compared with expect()'s values for the
# row's configuration; nothing here comes from the code under test (the
# rpcrdma-cm tool's decoding stays informational, in interop.sh).

NFS_PORT = 20049  # NFS/RDMA's registered port (IANA "nfsrdma")


class JudgeError(Exception):
    """A row that cannot be judged: its message says why."""


def read_text(path):
    """PATH's text, None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def nonempty(path):
    # The shell's test -s.
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False


def last_line(text):
    # tail -1.
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines[-1] if lines else ""


def line_value(line, key):
    """KEY's value in a "key=value key=value" line ("" when absent)."""
    return "\n".join(w[len(key) + 1 :] for w in line.split(" ") if w.startswith(key + "="))


def role_lines(path, role):
    """The lines of a debugfs connections file of ROLE."""
    text = read_text(path) or ""
    return [line for line in text.split("\n") if line.startswith(f"role={role} ")]


def tshark_fields(pcap, display_filter, fields):
    """tshark's FIELDS of the packets matching DISPLAY_FILTER, a list per
    packet; JudgeError when tshark fails or complains."""
    cmd = ["tshark", "-r", pcap, "-Y", display_filter, "-T", "fields", "-E", "separator=|"]
    for f in fields:
        cmd += ["-e", f]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, errors="replace", check=False)
    except OSError as err:
        raise JudgeError(f"tshark cannot read {pcap}: {err}") from None
    # tshark run as root says so on stderr; anything else is a complaint.
    complaints = [line for line in run.stderr.split("\n") if line and 'Running as user "root"' not in line]
    if run.returncode != 0 or complaints:
        raise JudgeError(f"tshark cannot read {pcap}: {' '.join(complaints)[:300]}")
    return [line.split("|") for line in run.stdout.split("\n") if line]


def judged_port(d):
    """The client's port of the connection whose values the row judges,
    where a side says it: the server's debugfs line (peer=) or the
    client's (local=); "" when neither side runs rpcrdma_cm."""
    for side, role, key in (("server", "responder", "peer"), ("client", "requester", "local")):
        lines = role_lines(f"{d}/{side}-connections", role)
        if lines:
            m = re.match(r"^.*:([0-9]*)$", line_value(lines[0], key))
            return m.group(1) if m else ""
    return ""


def mpa_consumer_data(rev, length, hexdata):
    """The consumer's private data of an MPA frame in hex, "-" for none:
    MPA revision 2 (RFC 6581, enhanced connection setup) puts 4 octets of
    IRD/ORD before it; the frame's length must be what it holds."""
    hexdata = hexdata.replace(":", "")
    if rev == "2":
        hexdata = hexdata[8:]
    if rev not in ("1", "2"):
        raise JudgeError(f"MPA revision {rev or 'missing'}")
    if not length.isdigit() or len(hexdata) // 2 != int(length) - (4 if rev == "2" else 0):
        raise JudgeError(f"MPA private data length {length}, octets {len(hexdata) // 2}")
    return hexdata or "-"


def wire_pdata(d, transport):
    """(REQ, REP): the private data of the NFS connection's REQ and REP in
    hex as the server captured them, "-" for a message that carried none:
    the IB CM ConnectRequest (to port 20049) and the ConnectReply that
    answers it (its remote communication ID is the REQ's local one) on rxe;
    the MPA Request and the Reply of the same TCP stream on siw, less MPA
    revision 2's IRD/ORD. The REQ is the judged connection's (judged_port:
    its source port), else the last one (the connection that stayed up)."""
    pcap = f"{d}/server.pcap"
    port = judged_port(d)
    req = rep = ""
    if transport == "rxe":
        rows = tshark_fields(
            pcap,
            f"infiniband.mad.attributeid == 0x0010 && infiniband.cm.req.serviceid.dport == {NFS_PORT}",
            ["infiniband.cm.req", "infiniband.cm.req.ip_cm.sport", "infiniband.cm.req.ip_cm.private"],
        )
        if port:
            # tshark shows the IP CM source port in hex.
            rows = [r for r in rows if len(r) > 1 and (r[1] == port or r[1].lower() == f"0x{int(port):04x}")]
        pick = (rows[-1] + ["", ""])[:3] if rows else ["", "", ""]
        comm_id, req = pick[0], pick[2].replace(":", "")
        reps = tshark_fields(
            pcap,
            "infiniband.mad.attributeid == 0x0013",
            ["infiniband.cm.rep.remotecommid", "infiniband.cm.rep.private"],
        )
        rep = next((r[1].replace(":", "") for r in reps if comm_id and r[0] == comm_id and len(r) > 1), "")
    else:
        rows = tshark_fields(
            pcap,
            "iwarp_mpa.req",
            ["tcp.stream", "tcp.srcport", "iwarp_mpa.rev", "iwarp_mpa.pdlength", "iwarp_mpa.privatedata"],
        )
        if port:
            rows = [r for r in rows if len(r) > 1 and r[1] == port]
        if rows:
            pick = (rows[-1] + [""] * 5)[:5]
            req = mpa_consumer_data(pick[2], pick[3], pick[4])
            reps = tshark_fields(
                pcap,
                f"iwarp_mpa.rep && tcp.stream == {pick[0] or 'none'}",
                ["iwarp_mpa.rev", "iwarp_mpa.pdlength", "iwarp_mpa.privatedata"],
            )
            if reps:
                rep = mpa_consumer_data(*(reps[0] + ["", "", ""])[:3])
    if not req or not rep:
        raise JudgeError(f"no REQ/REP pair of the judged connection{f' (port {port})' if port else ''} in {pcap}")
    return req, rep


def octets(hexdata):
    """HEX, its trailing zeros counted instead of shown."""
    body = re.sub(r"(00)*$", "", hexdata)
    if len(body) == len(hexdata):
        return hexdata
    if len(body) % 2:
        body += "0"
    return f"{body}+{(len(hexdata) - len(body)) // 2}x00"


def rfc_expect(exp, side):
    """"SEND RECV RI SOURCE" expect() gives SIDE."""
    s = exp[side]
    return f"{s['send_threshold']} {s['recv_threshold']} {1 if s['remote_invalidation'] else 0} {s['reports']}"


def wire_as_expected(exp, side, hexdata):
    """Why what SIDE sent, as the capture shows it, is not what expect()
    says it sends: the message (or none conforming), the length the
    transport delivers (rxe: the whole zero-padded CM area; siw: exactly
    what was sent) and octet for octet; None when it is."""
    try:
        dec = decode(parse_hex(hexdata))
    except SystemExit:
        return f"{side}: undecodable '{hexdata}'"
    want = f"{exp[side]['sends'] or 'none'} {exp[side]['wire_length']}"
    got = f"{dec['message']['hex'] if dec['message'] else 'none'} {dec['length']}"
    if got != want:
        return f"{side} sent {got} ({dec['conformance']}), want {want}"
    if hexdata != exp[side]["wire"]:
        return f"{side}: padding differs from zeros: {octets(hexdata)}"
    return None


def reported(d, side):
    """"SOURCE SEND RECV RI": what SIDE says it applied: rpcrdma_cm's
    debugfs line when loaded, else its rpcrdma:*_cm_private tracepoint
    (patched kernel), else xprtrdma_inline_thresh (stock client; RI not
    traced: "-"); "none - - -" when there is nothing to read (a stock server
    traces nothing)."""
    role = "responder" if side == "server" else "requester"
    if nonempty(f"{d}/{side}-connections"):
        lines = role_lines(f"{d}/{side}-connections", role)
        if len(lines) != 1:
            return f"debugfs:{len(lines)}-lines - - -"
        vals = [line_value(lines[0], k) for k in ("send_threshold", "recv_threshold", "remote_inv")]
        return "debugfs " + " ".join(vals)
    if nonempty(f"{d}/{side}-trace"):
        line = last_line(read_text(f"{d}/{side}-trace"))
        ri = {"on": "1", "off": "0"}.get(line_value(line, "remote_inv"), line_value(line, "remote_inv"))
        return f"trace {line_value(line, 'send_threshold')} {line_value(line, 'recv_threshold')} {ri}"
    if side == "client" and nonempty(f"{d}/client-inline-thresh"):
        m = re.match(r".*neg send/recv=([0-9]*)/([0-9]*),", last_line(read_text(f"{d}/client-inline-thresh")))
        return f"inline_thresh {m.group(1)} {m.group(2)} -" if m else ""
    return "none - - -"


def words4(text):
    # The shell's read A B C D: the last takes the rest.
    w = text.split(None, 3)
    return w + [""] * (4 - len(w))


def received_as_captured(d, side, peer_hex):
    """Why SIDE's debugfs line does not show what the capture shows its peer
    sent (peer_pdata: the first 8 octets, peer_pdata_len: all of them, the
    decoded conformance, sizes and RI); None when it does."""
    role = "responder" if side == "server" else "requester"
    lines = role_lines(f"{d}/{side}-connections", role)
    if len(lines) != 1:
        return None  # reported() fails the row already
    got = parse_hex(peer_hex)
    dec = decode(got)
    want = {"peer_pdata": got[:MSG_LEN].hex(), "peer_pdata_len": str(len(got)), "peer_conformance": dec["conformance"]}
    if dec["message"]:
        m = dec["message"]
        want.update(
            peer_send=str(m["max_send"]),
            peer_recv=str(m["max_recv"]),
            peer_remote_inv="1" if m["remote_invalidation"] else "0",
        )
    bad = [f"{k}={line_value(lines[0], k)} (want {v})" for k, v in want.items() if line_value(lines[0], k) != v]
    return f"{side}: received {' '.join(bad)}" if bad else None


def judge(d, server_spec, client_spec, transport, name):
    """The negotiation of one row: (result dict, messages)."""
    msgs, why = [], []
    req = rep = "none"
    exp_c = exp_s = got_c = got_s = "- - - -"
    res = {"row": name, "dir": d, "server": server_spec, "client": client_spec, "transport": transport}
    try:
        # What the row's configuration gives, before looking at the row.
        try:
            exp = expect(server_spec, client_spec, transport)
        except SystemExit as err:
            msgs.append(f"{name}: the oracle refuses the row ({server_spec}, {client_spec}, {transport}): {err}")
            why.append("oracle")
            raise JudgeError(None) from None
        res["expect"] = exp
        exp_c, exp_s = rfc_expect(exp, "client"), rfc_expect(exp, "server")
        try:
            req, rep = wire_pdata(d, transport)
        except JudgeError as err:
            msgs.append(str(err))
            why.append("wire")
            raise JudgeError(None) from None
        # The wire: each side sent what its configuration makes it send.
        for which, got in (("client", req), ("server", rep)):
            msg = wire_as_expected(exp, which, got)
            if msg:
                msgs.append(f"{name}: {msg}")
                why.append(f"{which}-wire")
        # The sides: each reports, where the oracle says it does, exactly
        # the oracle's values: debugfs (rpcrdma_cm) and the patched
        # kernel's tracepoint send/recv/RI, including the server without the
        # module; xprtrdma_inline_thresh (stock client) send/recv (it shows
        # no RI); a stock server reports nothing.
        got_c, got_s = reported(d, "client"), reported(d, "server")
        for which, e, g in (("client", exp_c, got_c), ("server", exp_s, got_s)):
            src, gs, gr, gri = words4(g)
            es, er, eri, esrc = words4(e)
            if src != esrc:
                why.append(f"{which}-{src}-not-{esrc}")
            elif src in ("debugfs", "trace"):
                if (gs, gr, gri) != (es, er, eri):
                    why.append(which)
            elif src == "inline_thresh":
                if (gs, gr, gri) != (es, er, "-"):
                    why.append(which)
            elif src != "none":
                why.append(f"{which}-{src}")
        # With rpcrdma_cm loaded on a side, its tracepoint (the transport's
        # own state) must say the same as its debugfs (the module runs only
        # on the patched kernel, which has the tracepoint: no trace fails),
        # and what its debugfs says it received must be what the capture
        # shows the peer sent.
        for which, peer_hex in (("client", rep), ("server", req)):
            if not nonempty(f"{d}/{which}-connections"):
                continue
            msg = received_as_captured(d, which, peer_hex)
            if msg:
                msgs.append(f"{name}: {msg}")
                why.append(f"{which}-received")
            if not nonempty(f"{d}/{which}-trace"):
                msgs.append(f"{name} {which}: rpcrdma_cm loaded, no tracepoint line")
                why.append(f"{which}-no-trace")
                continue
            line = last_line(read_text(f"{d}/{which}-trace"))
            vals = [line_value(line, k) for k in ("send_threshold", "recv_threshold", "remote_inv")]
            t = re.sub(r" off$", " 0", re.sub(r" on$", " 1", " ".join(v for v in vals if v)))
            says = reported(d, which)
            if t != (says.split(" ", 1)[1] if " " in says else says):
                msgs.append(f"{name} {which}: tracepoint '{t}', debugfs '{says}'")
                why.append(f"{which}-trace")
    except JudgeError:
        pass
    # Every failed sub-check named, also when the row could not be judged
    # further (the oracle refused it, or the capture has no REQ/REP of the
    # judged connection: "oracle", "wire").
    if why:
        msgs.append(
            f"{name}: disagreement ({' '.join(why)}): REQ {octets(req)} REP {octets(rep)}; "
            f"the oracle gives client {exp_c}, server {exp_s} (send recv RI source); "
            f"client says {got_c}, server says {got_s}"
        )

    def short(h):
        # The table's form of captured private data: first 8 octets/length.
        return {"-": "none/0", "none": "?"}.get(h) or f"{h[:16]}/{len(h) // 2}"

    def expected_cell(e):
        return "/".join(e.split(" ")[:-1])

    def says_cell(g):
        return g.replace(" ", ":", 1).replace(" ", "/")

    if why:
        verdict = "FAIL: " + " ".join(why)
    else:
        verdict = {"none": "ok (stock server: not traced)", "trace": "ok (svcrdma without rpcrdma_cm)"}.get(
            exp_s.split(" ")[-1], "ok"
        )
    res.update(
        ok=not why,
        why=why,
        req=req,
        rep=rep,
        expected={"client": exp_c, "server": exp_s},
        says={"client": got_c, "server": got_s},
        cells={
            "req": short(req),
            "rep": short(rep),
            "expected": f"{expected_cell(exp_c)}|{expected_cell(exp_s)}",
            "client_says": says_cell(got_c),
            "server_says": says_cell(got_s),
            "verdict": verdict,
        },
    )
    return res, msgs


def main(argv):
    ap = argparse.ArgumentParser(prog="rfc8797_oracle.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("decode", help="decode received private data (hex, '-' or '' for none)")
    d.add_argument("hex", nargs="?", default="")
    e = sub.add_parser("expect", help="what RFC 8797 and the documented kernels give a row")
    e.add_argument("--server", required=True)
    e.add_argument("--client", required=True)
    e.add_argument("--transport", required=True, choices=sorted(DEVICE_CAN_INVALIDATE))
    sub.add_parser("negotiate", help='"SEND RECV RI HEX" lines on stdin: each side\'s outcome, a line each')
    j = sub.add_parser("judge", help="judge one interop row's negotiation from the files it kept")
    j.add_argument("row_dir")
    j.add_argument("--server", required=True)
    j.add_argument("--client", required=True)
    j.add_argument("--transport", required=True, choices=sorted(DEVICE_CAN_INVALIDATE))
    j.add_argument("--name", help="the row's name in messages (default: ROW_DIR's)")
    a = ap.parse_args(argv)
    if a.cmd == "judge":
        if not os.path.isdir(a.row_dir):
            print(f"rfc8797_oracle: {a.row_dir}: not a directory", file=sys.stderr)
            return 2
        res, msgs = judge(a.row_dir, a.server, a.client, a.transport, a.name or os.path.basename(a.row_dir.rstrip("/")))
        for m in msgs:
            print(m, file=sys.stderr)
        print(json.dumps(res, sort_keys=True))
        return 0 if res["ok"] else 1
    try:
        if a.cmd == "decode":
            out = decode(parse_hex(a.hex))
        elif a.cmd == "negotiate":
            print("\n".join(negotiate_lines(sys.stdin.read().splitlines())))
            return 0
        else:
            out = expect(a.server, a.client, a.transport)
    except SystemExit as err:
        print(err, file=sys.stderr)
        return 2
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
