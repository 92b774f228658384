// SPDX-License-Identifier: GPL-2.0

//! `respond --answer-rpc`: a minimal RPC-over-RDMA Version One responder
//! that follows RFC 8797, or breaks one rule of it on purpose
//! (`--fault`), so that `conform` can be shown catching each break.
//!
//! It answers ONC RPC NULL (any program) and NFSv4 COMPOUNDs of PUTROOTFH,
//! GETATTR, LOOKUP and READ (the calls `conform` makes; GETATTR returns
//! fixed, made-up attribute octets, LOOKUP finds any name, READ returns
//! zeros; the tag is echoed, as RFC 7530 says), inline when the Reply fits its send
//! threshold and with `RDMA_ERROR`/`ERR_CHUNK` otherwise: it writes no
//! Reply chunk. Its send threshold is min(its own send size, the
//! requester's receive size), 1 KB for a requester without a conforming
//! message (RFC 8797 sections 3.1 and 5). It never sends With Invalidate
//! (RFC 8797 section 3.2 makes that optional even when both sides allow
//! it).

use crate::nfs4::{words, xdr_opaque};
use rdmacm::{Connection, Error as RdmaError};
use rpcrdma_cm_proto::cm_private::PrivateMessage;
use std::time::{Duration, Instant};

/// The NFS program.
const NFS_PROGRAM: u32 = 100_003;
/// Octets of made-up attribute values in a GETATTR result: each pair then
/// adds 208 octets, as with nfsd, so that 24 pairs reach above 4 KB.
const ATTR_OCTETS: usize = 176;
/// NFS4ERR_NOTSUPP.
const NFS4ERR_NOTSUPP: u32 = 10004;
/// NFS4ERR_RESOURCE.
const NFS4ERR_RESOURCE: u32 = 10018;
/// OP_ILLEGAL and NFS4ERR_OP_ILLEGAL.
const OP_ILLEGAL: u32 = 10044;
/// The last NFSv4.0 operation number (RELEASE_LOCKOWNER).
const LAST_V40_OP: u32 = 39;
/// The most COMPOUND operations answered.
const MAX_OPS: u32 = 1024;
/// The most bitmap words of a GETATTR answered.
const MAX_BITMAP_WORDS: u32 = 64;
/// The most octets a READ returns (a server may return fewer than asked):
/// enough for a Reply of 256 KB, the largest send size RFC 8797 encodes.
const MAX_READ: u32 = 260 * 1024;
/// The most octets of results a COMPOUND gets: past this, NFS4ERR_RESOURCE
/// (so that one call cannot make the responder allocate more).
const MAX_RESULTS: usize = 264 * 1024;

/// A rule the responder breaks on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// ERR_CHUNK for every Reply longer than this many octets, though its
    /// threshold allows more (breaks "within the threshold comes inline").
    RefuseAbove(usize),
    /// The requester's receive size is ignored: the threshold is the
    /// responder's own send size (RFC 8797 section 3.1, as stock Linux).
    IgnoreRecvSize,
    /// Every Reply is a Send With Invalidate of the call's first STag,
    /// whatever the R bits (RFC 8797 section 3.2).
    Invalidate,
    /// Every Reply to a call offering an STag is a Send With Invalidate
    /// of the previous such call's first STag on the connection (a stale
    /// STag, not of the request it answers; the first is a plain Send).
    InvalidatePrevious,
    /// ERR_CHUNK for the NULL procedure's Reply to a call without chunks,
    /// however small (breaks "accepts the connection and answers a NULL
    /// call"; a call offering chunks is answered as usual).
    RefuseNull,
    /// The send threshold moved by this many octets (negative: smaller),
    /// as a server whose limit is off by that much (e.g. +28: one that
    /// forgets the transport header).
    ThresholdOff(i64),
}

/// clap value parser for `--fault`.
pub(crate) fn fault(s: &str) -> Result<Fault, String> {
    match s {
        "ignore-recv-size" => Ok(Fault::IgnoreRecvSize),
        "invalidate" => Ok(Fault::Invalidate),
        "invalidate-previous" => Ok(Fault::InvalidatePrevious),
        "refuse-null" => Ok(Fault::RefuseNull),
        _ => {
            if let Some(n) = s.strip_prefix("refuse-above=") {
                return n
                    .parse()
                    .map(Fault::RefuseAbove)
                    .map_err(|_| format!("'{n}' is not an octet count"));
            }
            if let Some(n) = s.strip_prefix("threshold-off=") {
                return n
                    .parse::<i64>()
                    .ok()
                    .filter(|n| n.unsigned_abs() <= 1 << 20)
                    .map(Fault::ThresholdOff)
                    .ok_or_else(|| format!("'{n}' is not a signed octet count of at most 1 MiB"));
            }
            Err(format!(
                "'{s}': refuse-above=OCTETS, threshold-off=[+|-]OCTETS, ignore-recv-size, invalidate, invalidate-previous or refuse-null"
            ))
        }
    }
}

/// The length of the NULL procedure's RPC reply (xid, REPLY,
/// MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS): every COMPOUND reply is
/// longer (status, tag, results).
const NULL_REPLY_LEN: usize = 24;

/// A big-endian XDR reader.
struct Xdr<'a> {
    /// The octets.
    buf: &'a [u8],
    /// The next word's offset.
    at: usize,
}

impl<'a> Xdr<'a> {
    /// A reader of `buf` from `at`.
    fn new(buf: &'a [u8], at: usize) -> Self {
        Xdr { buf, at }
    }

    /// The next word.
    fn word(&mut self) -> Option<u32> {
        let b = self.buf.get(self.at..self.at + 4)?;
        self.at += 4;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Skip an XDR opaque.
    fn skip_opaque(&mut self) -> Option<()> {
        self.opaque().map(|_| ())
    }

    /// The next XDR opaque's octets.
    fn opaque(&mut self) -> Option<&'a [u8]> {
        let len = self.word()? as usize;
        let start = self.at;
        self.at = self.at.checked_add(len.div_ceil(4).checked_mul(4)?)?;
        (self.at <= self.buf.len()).then(|| &self.buf[start..start + len])
    }
}

/// What a call's transport header says.
#[derive(Debug, PartialEq, Eq)]
enum Call {
    /// An `RDMA_MSG`: its xid, where the RPC message starts, and the
    /// first STag it offers (if any).
    Msg(u32, usize, Option<u32>),
    /// Another transport version: answered with `ERR_VERS`.
    OtherVersion(u32),
}

/// Read a call's transport header; `None` for anything else (no answer).
fn call_header(msg: &[u8]) -> Option<Call> {
    let mut x = Xdr::new(msg, 0);
    let xid = x.word()?;
    let (version, _credits, procedure) = (x.word()?, x.word()?, x.word()?);
    if version != 1 {
        return Some(Call::OtherVersion(xid));
    }
    if procedure != 0 {
        return None;
    }
    let mut first = None;
    // Read list: position, handle, length, offset.
    while x.word()? == 1 {
        let (_position, handle) = (x.word()?, x.word()?);
        first.get_or_insert(handle);
        x.at += 12;
    }
    // Write list: chunks of segments (handle, length, offset).
    while x.word()? == 1 {
        for _ in 0..x.word()? {
            first.get_or_insert(x.word()?);
            x.at += 12;
        }
    }
    // Reply chunk.
    if x.word()? == 1 {
        for _ in 0..x.word()? {
            first.get_or_insert(x.word()?);
            x.at += 12;
        }
    }
    (x.at <= msg.len()).then_some(Call::Msg(xid, x.at, first))
}

/// The RPC reply (without the transport header) to the call in `rpc`;
/// `None` if it is not a call this responder understands.
pub(crate) fn rpc_reply(rpc: &[u8]) -> Option<Vec<u8>> {
    let mut x = Xdr::new(rpc, 0);
    let xid = x.word()?;
    let (mtype, rpcvers, program, version, procedure) =
        (x.word()?, x.word()?, x.word()?, x.word()?, x.word()?);
    if mtype != 0 || rpcvers != 2 {
        return None;
    }
    // Credential and verifier: flavor and body each.
    x.word()?;
    x.skip_opaque()?;
    x.word()?;
    x.skip_opaque()?;
    let mut out = Vec::new();
    // REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS.
    words(&mut out, &[xid, 1, 0, 0, 0, 0]);
    if procedure == 0 {
        return Some(out);
    }
    if program != NFS_PROGRAM || version != 4 || procedure != 1 {
        return None;
    }
    let tag = x.opaque()?;
    let _minor = x.word()?;
    let ops = x.word()?;
    let mut results = Vec::new();
    let mut status = 0;
    let mut done = 0;
    if ops > MAX_OPS {
        status = NFS4ERR_RESOURCE;
    }
    for _ in 0..ops.min(MAX_OPS) {
        let op = x.word()?;
        done += 1;
        match op {
            // PUTROOTFH
            24 => words(&mut results, &[24, 0]),
            // LOOKUP: any name is there.
            15 => {
                x.skip_opaque()?;
                words(&mut results, &[15, 0]);
            }
            // READ: stateid, offset, count; zeros, not the end of the file.
            25 => {
                for _ in 0..6 {
                    x.word()?;
                }
                let count = x.word()?.min(MAX_READ);
                if results.len() + count as usize > MAX_RESULTS {
                    status = NFS4ERR_RESOURCE;
                    words(&mut results, &[25, status]);
                    break;
                }
                words(&mut results, &[25, 0, 0, count]);
                results.resize(results.len() + (count as usize).div_ceil(4) * 4, 0);
            }
            // GETATTR: the requested bitmap back, made-up values.
            9 => {
                let n = x.word()?;
                if n > MAX_BITMAP_WORDS {
                    status = NFS4ERR_RESOURCE;
                    words(&mut results, &[9, status]);
                    break;
                }
                let bitmap: Vec<u32> = (0..n).map(|_| x.word()).collect::<Option<_>>()?;
                words(&mut results, &[9, 0, n]);
                words(&mut results, &bitmap);
                words(&mut results, &[ATTR_OCTETS as u32]);
                results.resize(results.len() + ATTR_OCTETS, 0);
            }
            // NFSv4.0 operations this responder does not do.
            3..=LAST_V40_OP => {
                status = NFS4ERR_NOTSUPP;
                words(&mut results, &[op, status]);
                break;
            }
            _ => {
                status = OP_ILLEGAL;
                words(&mut results, &[OP_ILLEGAL, status]);
                break;
            }
        }
    }
    // COMPOUND4res: status, the tag, the results.
    words(&mut out, &[status]);
    xdr_opaque(&mut out, tag);
    words(&mut out, &[done]);
    out.extend_from_slice(&results);
    Some(out)
}

/// The message that answers the call `xid` with the RPC reply `rpc`:
/// `RDMA_MSG` without chunks, or `RDMA_ERROR` `ERR_CHUNK` if it exceeds
/// `threshold` octets (or what `fault` refuses).
fn reply_message(xid: u32, rpc: &[u8], threshold: usize, fault: Option<Fault>) -> Vec<u8> {
    let mut reply = Vec::new();
    // RDMA_MSG, no chunks, then the RPC reply.
    words(&mut reply, &[xid, 1, 4, 0, 0, 0, 0]);
    reply.extend_from_slice(rpc);
    let refuse = match fault {
        Some(Fault::RefuseAbove(n)) => reply.len() > n,
        Some(Fault::RefuseNull) => rpc.len() == NULL_REPLY_LEN,
        _ => false,
    };
    if reply.len() > threshold || refuse {
        // RDMA_ERROR, ERR_CHUNK.
        reply.clear();
        words(&mut reply, &[xid, 1, 4, 4, 2]);
    }
    reply
}

/// Serve RPC on `conn` until the requester disconnects, the connection
/// fails or `deadline` passes: `own` is what this side advertised (`None`
/// if nothing), `request` what the requester sent.
pub(crate) fn serve(
    conn: &mut Connection,
    own: Option<&PrivateMessage>,
    request: &[u8],
    fault: Option<Fault>,
    deadline: Instant,
) -> Result<(), RdmaError> {
    let own_send = own.map_or(1024, |m| m.max_send.bytes() as usize);
    let peer_recv = match PrivateMessage::decode(request) {
        Ok(m) => m.max_recv.bytes() as usize,
        Err(_) => 1024,
    };
    let threshold = match fault {
        Some(Fault::IgnoreRecvSize) => own_send,
        Some(Fault::ThresholdOff(n)) => (own_send.min(peer_recv) as i64 + n).max(0) as usize,
        _ => own_send.min(peer_recv),
    };
    // The first STag of the last call that offered one (invalidate-previous).
    let mut previous = None;
    loop {
        if Instant::now() >= deadline {
            return Ok(());
        }
        let slice = Instant::now() + Duration::from_millis(200);
        let m = match conn.receive_message(slice.min(deadline)) {
            Ok(m) => m,
            Err(RdmaError::Timeout { .. }) => {
                if conn.wait_peer_disconnect(Instant::now() + Duration::from_millis(1))? {
                    return Ok(());
                }
                continue;
            }
            // The QP left RTS: the requester disconnected (siw flushes
            // the posted receives when it does).
            Err(e) if e.is_flush() => {
                conn.wait_peer_disconnect(Instant::now() + Duration::from_secs(5))?;
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let (xid, at, stag) = match call_header(&m.data) {
            Some(Call::Msg(xid, at, stag)) => (xid, at, stag),
            Some(Call::OtherVersion(xid)) => {
                // RDMA_ERROR, ERR_VERS, versions 1..1 (RFC 8166 section 4.5).
                let mut e = Vec::new();
                words(&mut e, &[xid, 1, 4, 4, 1, 1, 1]);
                conn.send(&e, 262_144, Instant::now() + Duration::from_secs(10))?;
                continue;
            }
            None => continue,
        };
        let Some(rpc) = rpc_reply(&m.data[at..]) else {
            continue;
        };
        let reply = match (fault, stag) {
            (Some(Fault::RefuseNull), Some(_)) => reply_message(xid, &rpc, threshold, None),
            _ => reply_message(xid, &rpc, threshold, fault),
        };
        let send_deadline = Instant::now() + Duration::from_secs(10);
        let max = reply.len().max(262_144);
        let stale = match stag {
            Some(_) => std::mem::replace(&mut previous, stag),
            None => None,
        };
        match (fault, stag, stale) {
            (Some(Fault::Invalidate), Some(rkey), _)
            | (Some(Fault::InvalidatePrevious), Some(_), Some(rkey)) => {
                conn.send_with_invalidate(&reply, max, rkey, send_deadline)?
            }
            _ => conn.send(&reply, max, send_deadline)?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse() {
        assert_eq!(fault("refuse-above=2048"), Ok(Fault::RefuseAbove(2048)));
        assert_eq!(fault("ignore-recv-size"), Ok(Fault::IgnoreRecvSize));
        assert_eq!(fault("invalidate"), Ok(Fault::Invalidate));
        assert_eq!(fault("invalidate-previous"), Ok(Fault::InvalidatePrevious));
        assert_eq!(fault("refuse-null"), Ok(Fault::RefuseNull));
        assert_eq!(fault("threshold-off=-1"), Ok(Fault::ThresholdOff(-1)));
        assert_eq!(fault("threshold-off=+4"), Ok(Fault::ThresholdOff(4)));
        assert!(fault("threshold-off=x").is_err());
        assert!(fault("threshold-off=99999999").is_err());
        assert!(fault("refuse-above=x").is_err());
        assert!(fault("other").is_err());
    }

    #[test]
    fn replies_to_conform_s_calls() {
        let null = crate::oncrpc::null_call(7, NFS_PROGRAM, 4);
        assert_eq!(rpc_reply(&null).unwrap().len(), 24);
        let one = rpc_reply(&crate::nfs4::getattr_compound(1)).unwrap();
        let two = rpc_reply(&crate::nfs4::getattr_compound(2)).unwrap();
        assert!(two.len() > one.len());
        let step = two.len() - one.len();
        let three = rpc_reply(&crate::nfs4::getattr_compound(3)).unwrap();
        assert_eq!(three.len() - two.len(), step);
        // The COMPOUND status is 0.
        assert_eq!(&one[24..28], &[0, 0, 0, 0]);
        // Hostile input: truncated calls, huge counts get no panic.
        let call = crate::nfs4::getattr_compound(2);
        for n in 0..call.len() {
            let _ = rpc_reply(&call[..n]);
        }
        // A GETATTR bitmap of 2^32 - 1 words: refused with RESOURCE.
        let mut c = crate::nfs4::getattr_compound(1);
        let at = c.len() - 12;
        c[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        let r = rpc_reply(&c).unwrap();
        assert_eq!(&r[24..28], &NFS4ERR_RESOURCE.to_be_bytes());
    }

    #[test]
    fn sized_calls_answered_to_the_octet() {
        let r = |c: Vec<u8>| rpc_reply(&c).unwrap().len();
        let base = r(crate::nfs4::sized_compound(1, 0, 0));
        // The tag is echoed, padded; each PUTROOTFH is two words.
        assert_eq!(r(crate::nfs4::sized_compound(1, 0, 4)), base + 4);
        assert_eq!(r(crate::nfs4::sized_compound(1, 0, 5)), base + 8);
        assert_eq!(r(crate::nfs4::sized_compound(1, 3, 0)), base + 24);
        // A READ returns the octets asked for, up to MAX_READ.
        let path = ["a".to_string(), "b".to_string()];
        let empty = r(crate::nfs4::read_compound(&path, 0));
        assert_eq!(r(crate::nfs4::read_compound(&path, 65436)), empty + 65436);
        assert_eq!(
            r(crate::nfs4::read_compound(&path, u32::MAX)),
            empty + MAX_READ as usize
        );
        // Many READs in one COMPOUND: refused past MAX_RESULTS, not
        // allocated.
        let mut many = crate::nfs4::sized_compound(0, 0, 0);
        let ops = many.len() - 4;
        many[ops..].copy_from_slice(&1000u32.to_be_bytes());
        for _ in 0..1000 {
            for w in [25, 0, 0, 0, 0, 0, 0, u32::MAX] {
                many.extend_from_slice(&u32::to_be_bytes(w));
            }
        }
        let reply = rpc_reply(&many).unwrap();
        assert!(reply.len() <= MAX_RESULTS + 64);
        assert_eq!(&reply[24..28], &NFS4ERR_RESOURCE.to_be_bytes());
        // Truncated READs and LOOKUPs get no panic.
        let call = crate::nfs4::read_compound(&path, 8);
        for n in 0..call.len() {
            let _ = rpc_reply(&call[..n]);
        }
    }

    #[test]
    fn headers_give_the_first_stag() {
        let mut h = Vec::new();
        words(&mut h, &[5, 1, 4, 0, 0, 0, 1, 1, 0xabc, 4096, 0, 0]);
        h.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(call_header(&h), Some(Call::Msg(5, 48, Some(0xabc))));
        let mut h = Vec::new();
        words(&mut h, &[5, 1, 4, 0, 0, 0, 0]);
        assert_eq!(call_header(&h), Some(Call::Msg(5, 28, None)));
        assert_eq!(call_header(&h[..20]), None);
        let mut h = Vec::new();
        words(&mut h, &[6, 2, 4, 0]);
        assert_eq!(call_header(&h), Some(Call::OtherVersion(6)));
    }
}
