// SPDX-License-Identifier: GPL-2.0

//! What the tool prints about RFC 8797 private data, as serde types; the
//! text forms are rendered from the same values, so text and JSON agree.

use rpcrdma_cm_proto::cm_private::{
    negotiate, LocalLimits, Negotiated, Nonconformance, PrivateMessage,
};
use serde::Serialize;
use std::fmt::Write as _;

/// Octets as lower-case hex without separators.
pub(crate) fn hex(octets: &[u8]) -> String {
    octets.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Hex of `octets`, "-" for none (as test case files and logs write it).
pub(crate) fn hex_or_dash(octets: &[u8]) -> String {
    if octets.is_empty() {
        "-".into()
    } else {
        hex(octets)
    }
}

/// Parse hex octets, allowing spaces, colons and a leading `0x`; the empty
/// string is zero octets.
pub(crate) fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    let s = s.trim();
    let s = s.strip_prefix("0x").unwrap_or(s);
    let digits: Vec<char> = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ':')
        .collect();
    if digits.len() % 2 != 0 {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    digits
        .chunks(2)
        .map(|pair| {
            let text: String = pair.iter().collect();
            u8::from_str_radix(&text, 16).map_err(|_| format!("not hex: '{text}'"))
        })
        .collect()
}

/// The fields of a version one message.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MessageFields {
    /// Always 1.
    pub version: u8,
    /// The flags octet as sent.
    pub flags: u8,
    /// Flag bit 0.
    pub remote_invalidation: bool,
    /// Reserved flag bits the sender set (ignored by the receiver).
    pub reserved_flags: u8,
    /// Largest message the sender sends, in bytes.
    pub max_send: u32,
    /// Largest message the sender receives, in bytes.
    pub max_recv: u32,
}

impl From<&PrivateMessage> for MessageFields {
    fn from(m: &PrivateMessage) -> Self {
        MessageFields {
            version: rpcrdma_cm_proto::cm_private::VERSION_ONE,
            flags: m.flags.octet(),
            remote_invalidation: m.flags.remote_invalidation(),
            reserved_flags: m.flags.reserved_bits(),
            max_send: m.max_send.bytes(),
            max_recv: m.max_recv.bytes(),
        }
    }
}

/// Received private data: raw octets, how they decode and what the sender
/// counts as.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrivateDataReport {
    /// The octets, hex.
    pub raw: String,
    /// Their number.
    pub len: usize,
    /// `ok` or the non-conformance's stable name (`absent`, `zeroed`,
    /// `short`, `bad_magic`, `unknown_version`), as debugfs spells it.
    pub conformance: &'static str,
    /// The non-conformance with its detail, e.g. `bad_magic found=0x...`.
    pub reason: Option<String>,
    /// The decoded message if it conforms.
    pub message: Option<MessageFields>,
    /// What the sender counts as: the message, or the RFC 8797 default.
    pub effective: MessageFields,
}

impl PrivateDataReport {
    /// Decode `raw` with the protocol core.
    pub fn new(raw: &[u8]) -> Self {
        Self::from_decoded(raw, &PrivateMessage::decode(raw))
    }

    /// A report for `raw` that decoded to `decoded`.
    pub fn from_decoded(raw: &[u8], decoded: &Result<PrivateMessage, Nonconformance>) -> Self {
        let (conformance, reason, message) = match decoded {
            Ok(m) => ("ok", None, Some(MessageFields::from(m))),
            Err(why) => (why.name(), Some(why.to_string()), None),
        };
        PrivateDataReport {
            raw: hex(raw),
            len: raw.len(),
            conformance,
            reason,
            message,
            effective: message.unwrap_or_else(|| (&PrivateMessage::RFC_DEFAULT).into()),
        }
    }

    /// Whether the data conforms.
    pub fn conforming(&self) -> bool {
        self.message.is_some()
    }

    /// The text form, each line prefixed with `indent`.
    pub fn render(&self, out: &mut String, indent: &str) {
        let e = &self.effective;
        // The CM pads private data with zeros (to 56 octets in a REQ, 196
        // in a REP on InfiniBand and RoCE): show the padding as a count.
        let head = self.raw.get(..16).unwrap_or(&self.raw);
        let tail = self.raw.get(16..).unwrap_or("");
        if !tail.is_empty() && tail.bytes().all(|c| c == b'0') {
            let _ = writeln!(
                out,
                "{indent}raw: {head} + {} zero octets ({} octets)",
                self.len - 8,
                self.len
            );
        } else {
            let _ = writeln!(out, "{indent}raw: {} ({} octets)", self.raw, self.len);
        }
        match &self.reason {
            None => {
                let _ = writeln!(out, "{indent}conforming: version {}", e.version);
            }
            Some(why) => {
                let _ = writeln!(out, "{indent}not conforming: {why}");
                let _ = writeln!(out, "{indent}counts as the RFC 8797 default:");
            }
        }
        let _ = writeln!(
            out,
            "{indent}  remote invalidation: {}",
            e.remote_invalidation
        );
        let _ = writeln!(out, "{indent}  max send: {} bytes", e.max_send);
        let _ = writeln!(out, "{indent}  max recv: {} bytes", e.max_recv);
        if e.reserved_flags != 0 {
            let _ = writeln!(
                out,
                "{indent}  reserved flag bits: {:#04x} (ignored)",
                e.reserved_flags
            );
        }
    }
}

/// This side's limits, as given on the command line.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct LocalReport {
    /// Largest message this side sends, in bytes (after rounding).
    pub max_send: u32,
    /// Largest message this side receives, in bytes (after rounding).
    pub max_recv: u32,
    /// Whether this side offers Remote Invalidation.
    pub remote_invalidation: bool,
    /// The 8 octets it advertises, hex, as sent; `None` if it sends none
    /// or sends private data that does not conform.
    pub advertisement: Option<String>,
}

impl LocalReport {
    /// The report for `limits`; `sends` says whether it sends private data.
    pub fn new(limits: &LocalLimits, sends: bool) -> Self {
        LocalReport {
            max_send: limits.max_send.bytes(),
            max_recv: limits.max_recv.bytes(),
            remote_invalidation: limits.remote_invalidation,
            advertisement: sends.then(|| hex(&limits.advertisement().encode())),
        }
    }

    /// The report for a side that negotiates with `effective` after
    /// sending `sent` (`None`: no private data): the advertisement is what
    /// it sent, if that conforms, never a re-encoding of `effective`.
    pub fn from_sent(effective: &LocalLimits, sent: Option<&[u8]>) -> Self {
        LocalReport {
            max_send: effective.max_send.bytes(),
            max_recv: effective.max_recv.bytes(),
            remote_invalidation: effective.remote_invalidation,
            advertisement: sent.filter(|s| PrivateMessage::decode(s).is_ok()).map(hex),
        }
    }
}

/// The outcome of negotiation on one side.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NegotiatedReport {
    /// Largest message this side may send inline, in bytes.
    pub send_threshold: u32,
    /// Largest message the peer may send to this side, in bytes.
    pub recv_threshold: u32,
    /// Whether Remote Invalidation is in use.
    pub remote_invalidation: bool,
    /// Whether the peer's private data conformed.
    pub peer_conforming: bool,
}

impl From<Negotiated> for NegotiatedReport {
    fn from(n: Negotiated) -> Self {
        NegotiatedReport {
            send_threshold: n.send_threshold.bytes(),
            recv_threshold: n.recv_threshold.bytes(),
            remote_invalidation: n.remote_invalidation,
            peer_conforming: n.peer_conforming,
        }
    }
}

impl NegotiatedReport {
    /// The text form, each line prefixed with `indent`.
    pub fn render(&self, out: &mut String, indent: &str) {
        let _ = writeln!(out, "{indent}send threshold: {} bytes", self.send_threshold);
        let _ = writeln!(out, "{indent}recv threshold: {} bytes", self.recv_threshold);
        let _ = writeln!(
            out,
            "{indent}remote invalidation: {}",
            self.remote_invalidation
        );
    }
}

/// `rpcrdma-cm negotiate`: this side against a peer's private data.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct NegotiateReport {
    /// This side.
    pub local: LocalReport,
    /// The peer's private data.
    pub peer: PrivateDataReport,
    /// What this side would use. A side that sends no private data
    /// negotiates as if it had sent the RFC 8797 default.
    pub negotiated: NegotiatedReport,
}

impl NegotiateReport {
    /// Negotiate `limits` (sending private data if `sends`) against `peer_raw`.
    pub fn new(limits: &LocalLimits, sends: bool, peer_raw: &[u8]) -> Self {
        let decoded = PrivateMessage::decode(peer_raw);
        let effective_local = if sends {
            *limits
        } else {
            LocalLimits::RFC_DEFAULT
        };
        NegotiateReport {
            local: LocalReport::new(limits, sends),
            peer: PrivateDataReport::from_decoded(peer_raw, &decoded),
            negotiated: negotiate(&effective_local, &decoded).into(),
        }
    }

    /// The text form.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "local: send {} recv {} remote invalidation {}",
            self.local.max_send, self.local.max_recv, self.local.remote_invalidation
        );
        let _ = writeln!(
            out,
            "  advertises: {}",
            self.local.advertisement.as_deref().unwrap_or("nothing")
        );
        out.push_str("peer:\n");
        self.peer.render(&mut out, "  ");
        out.push_str("negotiated:\n");
        self.negotiated.render(&mut out, "  ");
        out
    }
}
