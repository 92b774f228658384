// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm conform`: which requirements of RFC 8797 an NFS/RDMA server
//! meets, as far as a requester can observe them.
//!
//! Every check connects with chosen private data, looks at the Accept,
//! and sends at most a NULL call and read-only NFSv4.0 COMPOUNDs
//! (PUTROOTFH + GETATTR, repeated) of at most 1 KB each. The expectation of
//! each check is computed here from what was sent, what the server's
//! Accept said and the RFC's rules, written out in this file; the
//! protocol core's negotiation is not consulted, so that the tool judges
//! servers (and the module) independently of the code that runs in them.
//!
//! Reply sizes are measured, not guessed: a calibration COMPOUND with one
//! and with two PUTROOTFH + GETATTR pairs gives the size of the Send that
//! carries the Reply as `first + (pairs - 1) * step`, from which the
//! COMPOUNDs just below and just above each threshold are chosen.

use crate::report::hex;
use crate::rpc::null_call;
use crate::{emit, json, Exit, Failure};
use clap::Args;
use rdmacm_sys::{ConnectOptions, Connection, Error as RdmaError, RemoteRegion};
use rpcrdma_cm_proto::rpcrdma_header::{Body, Header, RdmaError as HeaderError};
use serde::Serialize;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The RPC-over-RDMA private data magic (RFC 8797 section 4).
const MAGIC: [u8; 4] = [0xf6, 0xab, 0x0e, 0x18];
/// The magic with its octets reversed (a little-endian sender).
const MAGIC_SWAPPED: [u8; 4] = [0x18, 0x0e, 0xab, 0xf6];
/// RFC 8797's default inline threshold, both directions (RFC 8166 section 3.3.3).
const DEFAULT_INLINE: u32 = 1024;
/// Receive buffers posted by every connection: large enough to see a
/// server that sends more than it may (the RDMA maximum the RFC encodes).
const RECV_BUFFER: usize = 256 * 1024 + 4096;
/// Receives posted.
const RECEIVES: u32 = 4;
/// The largest call this tool sends: RFC 8797's default, so that no
/// server's receive threshold is ever exceeded.
const MAX_CALL: usize = 1024;
/// The most PUTROOTFH + GETATTR pairs in one COMPOUND: Linux nfsd before
/// 6.13 refuses COMPOUNDs of more than 50 operations.
const MAX_PAIRS: u32 = 24;
/// The NFS program.
const NFS_PROGRAM: u32 = 100_003;
/// Octets offered as a Reply chunk for the Remote Invalidation checks.
const REPLY_CHUNK: u32 = 4096;

/// Arguments of `conform`.
#[derive(Args, Debug)]
pub(crate) struct ConformArgs {
    /// The server: HOST, HOST:PORT or [IPV6]:PORT (default port 20049).
    pub target: String,
    /// Seconds allowed for each connection and each call.
    #[arg(long, short = 'W', default_value_t = 10.0, value_parser = crate::rpc::positive_seconds)]
    pub timeout: f64,
    /// Check the Accept's private data and that every kind of request is
    /// accepted, without any RPC (for any RDMA CM listener, e.g. one that
    /// is not an NFS server).
    #[arg(long)]
    pub accept_only: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The verdict of one check.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    /// The server meets the requirement.
    Pass,
    /// The server breaks it.
    Fail,
    /// The requirement does not apply to this server or transport.
    NotApplicable,
    /// The tool could not observe what the requirement is about.
    CouldNotTell,
}

impl Verdict {
    /// The word printed.
    fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::NotApplicable => "n/a",
            Verdict::CouldNotTell => "?",
        }
    }
}

/// One requirement, checked.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Check {
    /// A short stable name.
    pub id: String,
    /// The requirement, in a sentence.
    pub requirement: String,
    /// Where RFC 8797 (or RFC 8166) says it.
    pub section: &'static str,
    /// What this tool sent.
    pub sent: String,
    /// What came back.
    pub got: String,
    /// The verdict.
    pub verdict: Verdict,
}

/// The whole report.
#[derive(Serialize, Debug)]
pub(crate) struct ConformReport {
    /// The server.
    pub target: String,
    /// "iWARP" (exact private data lengths) or "InfiniBand/RoCE" (padded).
    pub transport: String,
    /// The Accept's private data on a conforming request, hex.
    pub accept: String,
    /// Every check, in order.
    pub checks: Vec<Check>,
    /// How many of each verdict.
    pub pass: usize,
    /// See [`ConformReport::pass`].
    pub fail: usize,
    /// See [`ConformReport::pass`].
    pub not_applicable: usize,
    /// See [`ConformReport::pass`].
    pub could_not_tell: usize,
}

impl ConformReport {
    /// The report of `checks` against `addr`, whose Accept was `accept`.
    fn new(addr: SocketAddr, transport: &str, accept: &[u8], checks: Vec<Check>) -> Self {
        let count = |v: Verdict| checks.iter().filter(|k| k.verdict == v).count();
        ConformReport {
            target: addr.to_string(),
            transport: transport.into(),
            accept: hex(&accept[..accept.len().min(8)]),
            pass: count(Verdict::Pass),
            fail: count(Verdict::Fail),
            not_applicable: count(Verdict::NotApplicable),
            could_not_tell: count(Verdict::CouldNotTell),
            checks,
        }
    }

    /// Text: one block per check.
    pub fn render(&self) -> String {
        let mut t = format!(
            "{} over {}: Accept {}\n",
            self.target, self.transport, self.accept
        );
        for c in &self.checks {
            t += &format!(
                "{:<4}  {:<10}  {}: {}\n      sent: {}\n      got:  {}\n",
                c.verdict.word(),
                c.section,
                c.id,
                c.requirement,
                c.sent,
                c.got
            );
        }
        t += &format!(
            "{} pass, {} fail, {} not applicable, {} could not tell\n",
            self.pass, self.fail, self.not_applicable, self.could_not_tell
        );
        t
    }
}

/// An RPC-over-RDMA private data message as this tool builds it.
fn message(version: u8, flags: u8, send_code: u8, recv_code: u8) -> Vec<u8> {
    let mut m = MAGIC.to_vec();
    m.extend_from_slice(&[version, flags, send_code, recv_code]);
    m
}

/// What a server's Accept says, read by this tool's own rules (RFC 8797
/// section 4): a message when the first four octets are the magic and the
/// version is 1; otherwise the RFC default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ServerLimits {
    /// Whether the Accept carried a version 1 message.
    pub message: bool,
    /// The largest Send it makes (1 KB without a message).
    pub send: u32,
    /// The largest Send it receives (1 KB without a message).
    pub recv: u32,
    /// Its R bit.
    pub remote_invalidation: bool,
}

impl ServerLimits {
    /// Read `accept`.
    pub fn of(accept: &[u8]) -> Self {
        if accept.len() >= 8 && accept[..4] == MAGIC && accept[4] == 1 {
            ServerLimits {
                message: true,
                send: (u32::from(accept[6]) + 1) * 1024,
                recv: (u32::from(accept[7]) + 1) * 1024,
                remote_invalidation: accept[5] & 1 != 0,
            }
        } else {
            ServerLimits {
                message: false,
                send: DEFAULT_INLINE,
                recv: DEFAULT_INLINE,
                remote_invalidation: false,
            }
        }
    }
}

/// How the server answered one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// An `RDMA_MSG` with the Reply inline: the Send's length, and the
    /// STag it invalidated if it came With Invalidate.
    Inline {
        /// Octets of the Send.
        len: usize,
        /// NFS status of a COMPOUND (the RPC's accept status otherwise).
        status: Option<u32>,
        /// The STag invalidated.
        invalidated: Option<u32>,
    },
    /// An `RDMA_NOMSG`: the Reply went into the offered Reply chunk.
    InChunk {
        /// The STag invalidated.
        invalidated: Option<u32>,
    },
    /// `RDMA_ERROR` with `ERR_CHUNK`.
    ErrChunk {
        /// Octets of the Send.
        len: usize,
        /// The STag invalidated.
        invalidated: Option<u32>,
    },
    /// The receive failed because the server sent With Invalidate an STag
    /// this device cannot invalidate (rxe and user memory regions).
    InvalidateRefused,
    /// Anything else: another RDMA_ERROR, a malformed header, a timeout, a
    /// lost connection.
    Other(String),
}

impl Answer {
    /// The STag the Send invalidated, or whether it tried.
    fn with_invalidate(&self) -> bool {
        match self {
            Answer::Inline { invalidated, .. }
            | Answer::InChunk { invalidated }
            | Answer::ErrChunk { invalidated, .. } => invalidated.is_some(),
            Answer::InvalidateRefused => true,
            Answer::Other(_) => false,
        }
    }

    /// In words.
    pub(crate) fn describe(&self) -> String {
        let inv = |i: &Option<u32>| match i {
            Some(k) => format!(", With Invalidate of STag {k:#x}"),
            None => String::new(),
        };
        match self {
            Answer::Inline {
                len,
                status,
                invalidated,
            } => format!(
                "inline Reply, a Send of {len} octets{}{}",
                status.map(|s| format!(", status {s}")).unwrap_or_default(),
                inv(invalidated)
            ),
            Answer::InChunk { invalidated } => {
                format!("RDMA_NOMSG, the Reply in the Reply chunk{}", inv(invalidated))
            }
            Answer::ErrChunk { invalidated, .. } => {
                format!("RDMA_ERROR ERR_CHUNK{}", inv(invalidated))
            }
            Answer::InvalidateRefused => {
                "a Send With Invalidate (this device refused to invalidate the STag: REM_INV_REQ_ERR)"
                    .into()
            }
            Answer::Other(s) => s.clone(),
        }
    }
}

/// One connection to the server.
pub(crate) struct Session {
    /// The connection (`None` once lost).
    conn: Option<Connection>,
    /// The Accept's private data.
    pub accept: Vec<u8>,
    /// The next xid.
    xid: u32,
    /// Time allowed per call.
    timeout: Duration,
    /// The Reply chunk the last call offered.
    last_region: Option<RemoteRegion>,
}

/// Why a connection could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The server rejected it.
    Rejected(i32, Vec<u8>),
    /// Anything else.
    Error(String),
}

impl Session {
    /// Connect with `pdata` (`None`: no private data).
    pub(crate) fn open(
        addr: SocketAddr,
        pdata: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Self, Refusal> {
        let opts = ConnectOptions {
            private_data: pdata.map(<[u8]>::to_vec),
            timeout,
            max_recv: RECEIVES,
        };
        let accepted = Connection::connect(addr, &opts).map_err(|e| match e {
            RdmaError::Rejected {
                status,
                private_data,
            } => Refusal::Rejected(status, private_data),
            e => Refusal::Error(e.to_string()),
        })?;
        let mut conn = accepted.connection;
        conn.post_receives(RECEIVES, RECV_BUFFER)
            .map_err(|e| Refusal::Error(format!("post receives: {e}")))?;
        Ok(Session {
            conn: Some(conn),
            accept: accepted.private_data,
            xid: 0x8797_0000,
            timeout,
            last_region: None,
        })
    }

    /// Send `rpc` (an ONC RPC call whose xid is patched in) with a Reply
    /// chunk of `reply_chunk` octets offered if asked, and see how it is
    /// answered.
    pub(crate) fn call(&mut self, rpc: &[u8], reply_chunk: bool) -> Answer {
        let Some(conn) = self.conn.as_mut() else {
            return Answer::Other("the connection was lost before".into());
        };
        self.xid = self.xid.wrapping_add(1);
        let xid = self.xid;
        let region = if reply_chunk {
            match conn.offer_remote_write(REPLY_CHUNK) {
                Ok(r) => Some(r),
                Err(e) => return Answer::Other(format!("register a Reply chunk: {e}")),
            }
        } else {
            None
        };
        self.last_region = region;
        let mut msg = transport_header(xid, region);
        let mut body = rpc.to_vec();
        body[..4].copy_from_slice(&xid.to_be_bytes());
        msg.extend_from_slice(&body);
        let deadline = Instant::now() + self.timeout;
        if let Err(e) = conn.send(&msg, MAX_CALL, deadline) {
            self.conn = None;
            return Answer::Other(format!("send: {e}"));
        }
        loop {
            let m = match conn.receive_message(deadline) {
                Ok(m) => m,
                Err(RdmaError::Completion {
                    invalidate_refused: true,
                    ..
                }) => {
                    self.conn = None;
                    return Answer::InvalidateRefused;
                }
                Err(RdmaError::Timeout { .. }) => {
                    return Answer::Other(format!(
                        "no answer within {} s",
                        self.timeout.as_secs_f64()
                    ))
                }
                Err(e) => {
                    self.conn = None;
                    return Answer::Other(format!("the connection failed: {e}"));
                }
            };
            let h = match Header::decode(&m.data) {
                Ok(h) => h,
                Err(e) => return Answer::Other(format!("malformed transport header: {e}")),
            };
            if h.xid != xid {
                continue;
            }
            let invalidated = m.invalidated_rkey;
            return match h.body {
                Body::Msg {
                    chunks,
                    payload_offset,
                } if chunks.is_empty() => Answer::Inline {
                    len: m.data.len(),
                    status: nfs_status(&m.data[payload_offset..]),
                    invalidated,
                },
                Body::Msg { chunks, .. } => Answer::Other(format!(
                    "RDMA_MSG with chunks this call did not offer: {chunks:?}"
                )),
                Body::NoMsg { .. } => Answer::InChunk { invalidated },
                Body::Error(HeaderError::Chunk) => Answer::ErrChunk {
                    len: m.data.len(),
                    invalidated,
                },
                Body::Error(e) => Answer::Other(format!("RDMA_ERROR {e}")),
                Body::Done => Answer::Other("RDMA_DONE instead of a reply".into()),
            };
        }
    }

    /// Whether the last call's Reply chunk was invalidated: a NULL call
    /// sent from its memory fails locally if its STag is no longer valid
    /// (how a Send With Invalidate shows where the provider does not say
    /// so in the receive completion, as siw's userspace provider). The
    /// connection has just carried a call and its Reply, so a local
    /// failure of this Send is its memory's; any other failure, or none
    /// of the two outcomes, is `None`.
    fn region_invalidated(&mut self) -> Option<bool> {
        let region = self.last_region?;
        let conn = self.conn.as_mut()?;
        self.xid = self.xid.wrapping_add(1);
        let xid = self.xid;
        let mut msg = transport_header(xid, None);
        msg.extend_from_slice(&null_call(xid, NFS_PROGRAM, 4));
        let deadline = Instant::now() + self.timeout;
        match conn.send_from_region(&region, &msg, deadline) {
            Ok(()) => {}
            Err(e) if e.is_local_send_failure() => {
                self.conn = None;
                return Some(true);
            }
            Err(_) => {
                self.conn = None;
                return None;
            }
        }
        // Its Reply, so that nothing is left in flight.
        loop {
            let m = conn.receive_message(deadline).ok()?;
            if Header::decode(&m.data).is_ok_and(|h| h.xid == xid) {
                return Some(false);
            }
        }
    }

    /// Disconnect and say whether that went cleanly.
    pub(crate) fn close_checked(mut self) -> Result<(), String> {
        match self.conn.take() {
            Some(c) => c.close(self.timeout).map_err(|e| e.to_string()),
            None => Err("the connection was lost".into()),
        }
    }

    /// Disconnect (failures are not the server's conformance).
    pub(crate) fn close(mut self) {
        if let Some(c) = self.conn.take() {
            let _ = c.close(self.timeout);
        }
    }
}

/// An `RDMA_MSG` transport header for `xid` with empty Read and Write
/// lists and, if `reply` is given, a Reply chunk of one segment.
fn transport_header(xid: u32, reply: Option<RemoteRegion>) -> Vec<u8> {
    let mut w: Vec<u32> = vec![xid, 1, RECEIVES, 0, 0, 0];
    match reply {
        None => w.push(0),
        Some(r) => w.extend_from_slice(&[
            1,
            1,
            r.handle,
            r.length,
            (r.offset >> 32) as u32,
            r.offset as u32,
        ]),
    }
    w.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// XDR opaque: length, octets, padding.
fn xdr_opaque(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
    out.resize(out.len() + (4 - data.len() % 4) % 4, 0);
}

/// Append XDR words.
fn words(out: &mut Vec<u8>, w: &[u32]) {
    for x in w {
        out.extend_from_slice(&x.to_be_bytes());
    }
}

/// The GETATTR bitmap: attributes with fixed-size values of a directory
/// (RFC 7530 section 5), so that each pair adds the same octets.
const GETATTR_BITMAP: [u32; 2] = [
    // type, change, size, fsid, fileid, files_avail/free/total,
    // maxfilesize, maxread, maxwrite
    (1 << 1)
        | (1 << 3)
        | (1 << 4)
        | (1 << 8)
        | (1 << 20)
        | (1 << 21)
        | (1 << 22)
        | (1 << 23)
        | (1 << 27)
        | (1 << 30)
        | (1 << 31),
    // mode, numlinks, space_avail/free/total/used, time_access,
    // time_metadata, time_modify, mounted_on_fileid
    (1 << 1)
        | (1 << 3)
        | (1 << 10)
        | (1 << 11)
        | (1 << 12)
        | (1 << 13)
        | (1 << 15)
        | (1 << 20)
        | (1 << 21)
        | (1 << 23),
];

/// The start of an ONC RPC call (xid 0, patched when sent) of an NFSv4.0
/// COMPOUND of `ops` operations, with AUTH_SYS root credentials, an
/// empty tag and minor version 0; the operations follow.
fn compound_call(ops: u32) -> Vec<u8> {
    let mut cred = Vec::new();
    words(&mut cred, &[0]);
    xdr_opaque(&mut cred, b"rpcrdma-cm");
    words(&mut cred, &[0, 0, 0]);
    let mut c = Vec::new();
    words(&mut c, &[0, 0, 2, NFS_PROGRAM, 4, 1, 1]);
    xdr_opaque(&mut c, &cred);
    words(&mut c, &[0, 0]);
    xdr_opaque(&mut c, b"");
    words(&mut c, &[0, ops]);
    c
}

/// An ONC RPC call (xid 0, patched when sent) of an NFSv4.0 COMPOUND of
/// `pairs` PUTROOTFH + GETATTR, with AUTH_SYS root credentials.
pub(crate) fn getattr_compound(pairs: u32) -> Vec<u8> {
    let mut c = compound_call(pairs * 2);
    for _ in 0..pairs {
        // PUTROOTFH; GETATTR with a two-word bitmap
        words(&mut c, &[24, 9, 2, GETATTR_BITMAP[0], GETATTR_BITMAP[1]]);
    }
    c
}

/// An ONC RPC call (xid 0, patched when sent) of an NFSv4.0 COMPOUND
/// PUTROOTFH, LOOKUP `name`, READ `count` octets from offset 0 with the
/// anonymous stateid, with AUTH_SYS root credentials.
pub(crate) fn read_compound(name: &str, count: u32) -> Vec<u8> {
    let mut c = compound_call(3);
    // PUTROOTFH; LOOKUP name; READ: stateid (seqid and other, zero),
    // offset, count.
    words(&mut c, &[24, 15]);
    xdr_opaque(&mut c, name.as_bytes());
    words(&mut c, &[25, 0, 0, 0, 0, 0, 0, count]);
    c
}

/// The NFS status of a COMPOUND Reply (or the RPC's accept status when it
/// is not SUCCESS); `None` if `rpc` is too short.
fn nfs_status(rpc: &[u8]) -> Option<u32> {
    let word = |i: usize| {
        rpc.get(i..i + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    // xid, REPLY, MSG_ACCEPTED (a denied call has no status here),
    // verifier flavor and length.
    if word(4)? != 1 || word(8)? != 0 {
        return None;
    }
    let verf_len = word(16)? as usize;
    let at = verf_len.div_ceil(4).checked_mul(4)?.checked_add(20)?;
    let accept_stat = word(at)?;
    if accept_stat != 0 {
        return Some(accept_stat);
    }
    // A NULL Reply ends here: SUCCESS. A COMPOUND's status follows.
    if rpc.len() == at + 4 {
        return Some(0);
    }
    word(at + 4)
}

/// Reply sizes of the GETATTR COMPOUND, measured: the Send of `pairs`
/// pairs is `first + (pairs - 1) * step` octets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Calibration {
    /// The Send of one pair.
    pub first: u32,
    /// What each further pair adds.
    pub step: u32,
}

impl Calibration {
    /// Octets of the Send of `pairs` pairs.
    pub fn size(&self, pairs: u32) -> u32 {
        self.first + (pairs - 1) * self.step
    }

    /// The most pairs whose Reply fits `threshold`, and the fewest whose
    /// Reply exceeds it; `None` where that needs no pair or more than
    /// [`MAX_PAIRS`] (or more than a 1 KB call holds).
    pub fn around(&self, threshold: u32) -> (Option<u32>, Option<u32>) {
        let above = if threshold < self.first {
            1
        } else {
            (threshold - self.first) / self.step + 2
        };
        let fits = |p: u32| p <= MAX_PAIRS && getattr_compound(p).len() + 40 <= MAX_CALL;
        let below = above.checked_sub(1).filter(|&p| p >= 1 && fits(p));
        (below, fits(above).then_some(above))
    }
}

/// Measure the calibration on `s`.
fn calibrate(s: &mut Session) -> Result<Calibration, String> {
    let one = s.call(&getattr_compound(1), false);
    let two = s.call(&getattr_compound(2), false);
    match (&one, &two) {
        (
            Answer::Inline {
                len: a,
                status: Some(0),
                ..
            },
            Answer::Inline {
                len: b,
                status: Some(0),
                ..
            },
        ) if b > a => Ok(Calibration {
            first: *a as u32,
            step: (*b - *a) as u32,
        }),
        _ => Err(format!(
            "PUTROOTFH + GETATTR once: {}; twice: {}",
            one.describe(),
            two.describe()
        )),
    }
}

/// A run against one server.
struct Run {
    /// The checks so far.
    checks: Checks,
    /// The server.
    addr: SocketAddr,
    /// Time allowed per connection and call.
    timeout: Duration,
    /// The Reply sizes, if measured.
    cal: Option<Calibration>,
}

/// Collects the checks.
struct Checks {
    /// What has been checked.
    list: Vec<Check>,
}

impl Checks {
    /// Add one.
    fn add(
        &mut self,
        id: impl Into<String>,
        section: &'static str,
        requirement: impl Into<String>,
        sent: impl Into<String>,
        got: impl Into<String>,
        verdict: Verdict,
    ) {
        self.list.push(Check {
            id: id.into(),
            requirement: requirement.into(),
            section,
            sent: sent.into(),
            got: got.into(),
            verdict,
        });
    }
}

/// Hex of private data, "none" for none.
fn shown(p: Option<&[u8]>) -> String {
    match p {
        None => "no private data".into(),
        Some(p) => format!("private data {}", hex(p)),
    }
}

/// The Accept's private data, judged (RFC 8797 section 4).
fn check_accept(c: &mut Checks, sent: &[u8], accept: &[u8], iwarp: bool) {
    let sent = shown(Some(sent));
    let absent = accept.iter().all(|&b| b == 0);
    if absent {
        c.add(
            "accept.message",
            "§4",
            "the Accept carries an RPC-over-RDMA Version One message (optional: absent, the server is taken to use 1 KB and no Remote Invalidation)",
            sent,
            format!("none ({} octets, all zero): a server that predates RFC 8797", accept.len()),
            Verdict::NotApplicable,
        );
        return;
    }
    let got = format!(
        "{} ({} octets)",
        hex(&accept[..accept.len().min(8)]),
        accept.len()
    );
    let magic = accept.get(..4).unwrap_or(accept);
    c.add(
        "accept.magic",
        "§4",
        "the Accept's message starts with the magic 0xf6ab0e18 in big-endian order",
        &sent,
        if magic == MAGIC_SWAPPED {
            format!("{got}: the magic in little-endian order")
        } else {
            got.clone()
        },
        if magic == MAGIC {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
    );
    if magic != MAGIC {
        return;
    }
    let version = accept.get(4).copied();
    c.add(
        "accept.version",
        "§4",
        "its version is 1",
        &sent,
        format!(
            "version {}",
            version.map_or("missing".into(), |v| v.to_string())
        ),
        if version == Some(1) {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
    );
    if version != Some(1) || accept.len() < 8 {
        if accept.len() < 8 {
            c.add(
                "accept.length",
                "§4",
                "a version 1 message has all eight octets",
                &sent,
                got,
                Verdict::Fail,
            );
        }
        return;
    }
    c.add(
        "accept.reserved-flags",
        "§4.1",
        "the reserved flag bits (all but R) are zero",
        &sent,
        format!("flags {:#04x}", accept[5]),
        if accept[5] & !1 == 0 {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
    );
    // The sizes are not a check: every code decodes to 1 KB..256 KB
    // (section 4.2); the report's header shows the Accept.
    c.add(
        "accept.length",
        "§4",
        "a version 1 message is exactly eight octets (checkable over iWARP only: InfiniBand and RoCE pad the REP to 196)",
        &sent,
        got,
        if !iwarp {
            Verdict::NotApplicable
        } else if accept.len() == 8 {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
    );
}

/// The server's Reply to a COMPOUND of `pairs` pairs against a threshold
/// of `threshold` octets: within it must come inline, above it must not.
fn judge_reply(answer: &Answer, predicted: u32, threshold: u32) -> Verdict {
    let within = predicted <= threshold;
    match answer {
        Answer::Inline { len, .. } if *len as u32 > threshold => Verdict::Fail,
        Answer::Inline { .. } if within => Verdict::Pass,
        // Smaller than predicted yet inline: the calibration no longer
        // holds (e.g. an error status); nothing to conclude.
        Answer::Inline { .. } => Verdict::CouldNotTell,
        Answer::ErrChunk { .. } if within => Verdict::Fail,
        Answer::ErrChunk { .. } => Verdict::Pass,
        // A timeout, a lost connection, another error: nothing seen.
        _ => Verdict::CouldNotTell,
    }
}

/// `once()`, and if it could not tell (no answer, a connection that failed
/// other than by a reject: a lost message, a slow guest), once more on a
/// new connection; what came back says both tries.
fn twice_if_unseen(mut once: impl FnMut() -> (String, Verdict)) -> (String, Verdict) {
    let (got, verdict) = once();
    if verdict != Verdict::CouldNotTell {
        return (got, verdict);
    }
    let (again, verdict) = once();
    (format!("{again} (tried again; first: {got})"), verdict)
}

/// The `below` and `above` checks of `id`, "could not tell" because of
/// `why` (so that a run always has the same checks).
fn unjudged_thresholds(
    c: &mut Checks,
    id: &str,
    section: &'static str,
    what: &str,
    sent: &str,
    threshold: u32,
    why: &str,
) {
    for (name, rule) in [
        (
            "below",
            format!("a Reply of up to {threshold} octets comes inline"),
        ),
        (
            "above",
            format!("no inline Reply above {threshold} octets (ERR_CHUNK without a Reply chunk)"),
        ),
    ] {
        c.add(
            format!("{id}.{name}"),
            section,
            format!("{what}: {rule}"),
            sent,
            why,
            Verdict::CouldNotTell,
        );
    }
}

/// One connection with `pdata`, the threshold `threshold` judged with the
/// COMPOUNDs just below and just above it; if a check could not tell,
/// the whole of it once more on a new connection (as [`twice_if_unseen`]
/// does for a single check).
fn threshold_checks(
    run: &mut Run,
    id: &str,
    section: &'static str,
    what: &str,
    pdata: Option<&[u8]>,
    threshold: u32,
) {
    let before = run.checks.list.len();
    threshold_checks_once(run, id, section, what, pdata, threshold);
    let unseen = run.checks.list[before..]
        .iter()
        .any(|k| k.verdict == Verdict::CouldNotTell);
    if unseen {
        let first: Vec<String> = run.checks.list.drain(before..).map(|k| k.got).collect();
        threshold_checks_once(run, id, section, what, pdata, threshold);
        for (k, was) in run.checks.list[before..].iter_mut().zip(first) {
            k.got = format!("{} (tried again; first: {was})", k.got);
        }
    }
}

/// [`threshold_checks`], once.
fn threshold_checks_once(
    run: &mut Run,
    id: &str,
    section: &'static str,
    what: &str,
    pdata: Option<&[u8]>,
    threshold: u32,
) {
    let (addr, timeout, cal) = (run.addr, run.timeout, run.cal);
    let c = &mut run.checks;
    let sent = shown(pdata);
    let mut s = match Session::open(addr, pdata, timeout) {
        Ok(s) => s,
        Err(r) => {
            let (got, verdict) = match r {
                Refusal::Rejected(reason, _) => {
                    (format!("rejected (reason {reason})"), Verdict::Fail)
                }
                Refusal::Error(e) => (e, Verdict::CouldNotTell),
            };
            c.add(
                format!("{id}.accepted"),
                "§5",
                format!("{what}: the server accepts the connection"),
                &sent,
                got,
                verdict,
            );
            unjudged_thresholds(c, id, section, what, &sent, threshold, "no connection");
            return;
        }
    };
    let null = s.call(&null_call(0, NFS_PROGRAM, 4), false);
    c.add(
        format!("{id}.accepted"),
        "§5",
        format!("{what}: the server accepts the connection and answers a NULL call"),
        &sent,
        format!(
            "accepted with {}; NULL: {}",
            shown(Some(&s.accept)),
            null.describe()
        ),
        match null {
            Answer::Inline { .. } => Verdict::Pass,
            // No answer, a lost connection: nothing seen.
            Answer::Other(_) => Verdict::CouldNotTell,
            _ => Verdict::Fail,
        },
    );
    let Some(cal) = cal else {
        unjudged_thresholds(
            c,
            id,
            section,
            what,
            &sent,
            threshold,
            "no calibration (see calibration)",
        );
        s.close();
        return;
    };
    let (below, above) = cal.around(threshold);
    for (name, pairs, rule) in [
        ("below", below, "comes inline"),
        ("above", above, "does not come inline"),
    ] {
        let requirement = format!(
            "{what}: a Reply of up to {threshold} octets {rule}",
            what = what
        );
        let requirement = if name == "above" {
            format!("{what}: no inline Reply above {threshold} octets (ERR_CHUNK without a Reply chunk)")
        } else {
            requirement
        };
        let Some(p) = pairs else {
            c.add(
                format!("{id}.{name}"),
                section,
                requirement,
                &sent,
                format!(
                    "no COMPOUND of at most {MAX_PAIRS} PUTROOTFH + GETATTR pairs and 1 KB has a Reply {} {threshold} octets",
                    if name == "above" { "above" } else { "within" }
                ),
                Verdict::CouldNotTell,
            );
            continue;
        };
        let a = s.call(&getattr_compound(p), false);
        c.add(
            format!("{id}.{name}"),
            section,
            requirement,
            format!(
                "{sent}; COMPOUND of {p} PUTROOTFH + GETATTR, Reply {} octets, no Reply chunk",
                cal.size(p)
            ),
            a.describe(),
            judge_reply(&a, cal.size(p), threshold),
        );
    }
    s.close();
}

/// The Remote Invalidation checks (RFC 8797 section 3.2): a Reply With
/// Invalidate only when both messages carried the R bit.
fn remote_invalidation_checks(c: &mut Checks, addr: SocketAddr, timeout: Duration) {
    for (id, r_bit, what) in [
        (
            "ri.requester-without-r",
            0u8,
            "the requester's message has no R bit",
        ),
        (
            "ri.server-without-r",
            1u8,
            "the requester's message has the R bit",
        ),
    ] {
        let pdata = message(1, r_bit, 3, 3);
        let sent = format!(
            "{}; NULL with a {REPLY_CHUNK}-octet Reply chunk",
            shown(Some(&pdata))
        );
        let requirement =
            format!("{what}: no Send With Invalidate unless both messages carry the R bit");
        let (got, verdict) =
            twice_if_unseen(|| remote_invalidation_once(addr, timeout, &pdata, r_bit));
        c.add(id, "§3.2", requirement, sent, got, verdict);
    }
}

/// One Remote Invalidation check on a new connection with `pdata`: what
/// came back and the verdict.
fn remote_invalidation_once(
    addr: SocketAddr,
    timeout: Duration,
    pdata: &[u8],
    r_bit: u8,
) -> (String, Verdict) {
    let mut s = match Session::open(addr, Some(pdata), timeout) {
        Ok(s) => s,
        Err(r) => return (format!("{r:?}"), Verdict::CouldNotTell),
    };
    let server = ServerLimits::of(&s.accept);
    if r_bit == 1 && server.remote_invalidation {
        s.close();
        return (
            "the Accept carries the R bit too: the server may use Send With Invalidate".into(),
            Verdict::NotApplicable,
        );
    }
    let a = s.call(&null_call(0, NFS_PROGRAM, 4), true);
    let unreported = if a.with_invalidate() || matches!(a, Answer::Other(_)) {
        None
    } else {
        s.region_invalidated()
    };
    let verdict = match (a.with_invalidate(), &a, unreported) {
        (true, _, _) | (_, _, Some(true)) => Verdict::Fail,
        (_, Answer::Other(_), _) | (_, _, None) => Verdict::CouldNotTell,
        _ => Verdict::Pass,
    };
    let after = match unreported {
        Some(true) => "; the Reply chunk's STag was invalidated: a Send from its memory failed",
        Some(false) => "; the Reply chunk's STag is still valid",
        None => "",
    };
    s.close();
    (
        format!(
            "Accept R bit {}; {}{after}",
            u8::from(server.remote_invalidation),
            a.describe()
        ),
        verdict,
    )
}

/// A request the RFC's default covers (section 5): what it is and its
/// octets (`None`: no private data).
pub(crate) fn nonconforming_requests(
    iwarp: bool,
) -> Vec<(&'static str, &'static str, Option<Vec<u8>>)> {
    // Each carries 4 KB sizes and the R bit where it has fields, so that
    // a server that honours them anyway is seen doing so.
    let mut swapped = MAGIC_SWAPPED.to_vec();
    swapped.extend_from_slice(&[1, 1, 3, 3]);
    let mut bad = message(1, 1, 3, 3);
    bad[3] ^= 0x01;
    let mut v = vec![
        ("request.none", "a request without private data", None),
        (
            "request.zeroed",
            "a request of eight zero octets",
            Some(vec![0; 8]),
        ),
        (
            "request.bad-magic",
            "a request whose magic is wrong",
            Some(bad),
        ),
        (
            "request.swapped-magic",
            "a request whose magic is little-endian",
            Some(swapped),
        ),
        (
            "request.version-0",
            "a request of version 0",
            Some(message(0, 1, 3, 3)),
        ),
        (
            "request.version-2",
            "a request of version 2",
            Some(message(2, 1, 3, 3)),
        ),
    ];
    if iwarp {
        v.push((
            "request.short",
            "a request of the first four octets only (iWARP)",
            Some(MAGIC.to_vec()),
        ));
    }
    v
}

/// `--accept-only`: each request the RFC default covers, and a version 1
/// request with reserved flags, is accepted (RFC 8797 section 5: the
/// responder assumes the default and goes on), without any RPC.
fn accepted_checks(c: &mut Checks, addr: SocketAddr, timeout: Duration, iwarp: bool) {
    let mut requests = vec![(
        "request.reserved-flags",
        "a version 1 request with reserved flags set",
        Some(message(1, 0xfe, 3, 3)),
    )];
    requests.extend(nonconforming_requests(iwarp));
    for (id, what, pdata) in requests {
        let once = || match Session::open(addr, pdata.as_deref(), timeout) {
            Ok(s) => {
                let got = format!("accepted with {}", shown(Some(&s.accept)));
                s.close();
                (got, Verdict::Pass)
            }
            Err(Refusal::Rejected(reason, _)) => {
                (format!("rejected (reason {reason})"), Verdict::Fail)
            }
            Err(Refusal::Error(e)) => (e, Verdict::CouldNotTell),
        };
        // E.g. a reset racing an iWARP reject.
        let (got, verdict) = twice_if_unseen(once);
        c.add(
            format!("{id}.accepted"),
            "§5",
            format!("{what}: the server accepts the connection"),
            shown(pdata.as_deref()),
            got,
            verdict,
        );
    }
}

/// Run every check against `addr`.
pub(crate) fn conform(
    addr: SocketAddr,
    timeout: Duration,
    accept_only: bool,
) -> Result<ConformReport, Failure> {
    let mut c = Checks { list: Vec::new() };
    // The reference connection: this side can receive 256 KB, so the
    // server's own send size is what limits its Replies.
    let reference = message(1, 0, 255, 255);
    let mut s = Session::open(addr, Some(&reference), timeout).map_err(|r| {
        Failure::peer(format!(
            "conform {addr}: the server did not accept a conforming request: {r:?}"
        ))
    })?;
    let iwarp = s.conn.as_ref().is_some_and(Connection::is_iwarp);
    let accept = s.accept.clone();
    check_accept(&mut c, &reference, &accept, iwarp);
    let transport = if iwarp { "iWARP" } else { "InfiniBand/RoCE" };
    if accept_only {
        s.close();
        accepted_checks(&mut c, addr, timeout, iwarp);
        return Ok(ConformReport::new(addr, transport, &accept, c.list));
    }
    let server = ServerLimits::of(&accept);
    let cal = calibrate(&mut s);
    c.add(
        "calibration",
        "-",
        "Reply sizes measured: PUTROOTFH + GETATTR once and twice, inline",
        format!("{}; COMPOUNDs of 1 and 2 pairs", shown(Some(&reference))),
        match &cal {
            Ok(k) => format!("a Send of {} octets plus {} per pair", k.first, k.step),
            Err(e) => e.clone(),
        },
        if cal.is_ok() {
            Verdict::Pass
        } else {
            Verdict::CouldNotTell
        },
    );
    let cal = cal.ok();
    s.close();
    let mut run = Run {
        checks: c,
        addr,
        timeout,
        cal,
    };
    // The server never sends more inline than its own send size.
    threshold_checks(
        &mut run,
        "threshold.own-send",
        "§3.1",
        &format!("requester receives 256 KB, server sends {}", server.send),
        Some(&reference),
        server.send,
    );
    // The requester's receive size, at every size code edge.
    for (code, name) in [(0u8, "1k"), (3, "4k"), (63, "64k")] {
        let p = message(1, 0, code, code);
        let recv = (u32::from(code) + 1) * 1024;
        threshold_checks(
            &mut run,
            &format!("threshold.{name}"),
            "§3.1",
            &format!("requester receives {recv}"),
            Some(&p),
            recv.min(server.send),
        );
    }
    // A version 1 message with reserved bits set is still version 1.
    let reserved = message(1, 0xfe, 3, 3);
    threshold_checks(
        &mut run,
        "request.reserved-flags",
        "§4.1",
        "a version 1 request with reserved flags set, receiving 4096",
        Some(&reserved),
        4096u32.min(server.send),
    );
    // Requests the RFC default covers: 1 KB.
    for (id, what, pdata) in nonconforming_requests(iwarp) {
        threshold_checks(
            &mut run,
            id,
            "§5",
            &format!("{what} (the server must assume 1 KB)"),
            pdata.as_deref(),
            DEFAULT_INLINE,
        );
    }
    let mut c = run.checks;
    if !iwarp {
        c.add(
            "request.short",
            "§5",
            "a request shorter than eight octets is a non-conforming one",
            "-",
            "InfiniBand and RoCE pad a REQ to 56 octets: a short request cannot be sent (use siw)",
            Verdict::NotApplicable,
        );
    }
    remote_invalidation_checks(&mut c, addr, timeout);
    Ok(ConformReport::new(addr, transport, &accept, c.list))
}

/// `rpcrdma-cm conform`.
pub(crate) fn conform_cmd(args: &ConformArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
    let addr = crate::rpc::resolve(&args.target, crate::rdma::NFS_RDMA_PORT)?;
    let r = conform(
        addr,
        Duration::from_secs_f64(args.timeout),
        args.accept_only,
    )?;
    emit(out, &if args.json { json(&r) } else { r.render() });
    Ok(if r.fail == 0 { Exit::Ok } else { Exit::Peer })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_brackets_each_threshold() {
        let k = Calibration {
            first: 300,
            step: 250,
        };
        assert_eq!(k.size(1), 300);
        // 1024: 3 pairs = 800 fit, 4 pairs = 1050 do not.
        assert_eq!(k.around(1024), (Some(3), Some(4)));
        // Below the first reply: nothing fits, one pair is above.
        assert_eq!(k.around(200), (None, Some(1)));
        // Beyond the pairs a COMPOUND may hold: nothing above.
        assert_eq!(k.around(100_000).1, None);
    }

    #[test]
    fn replies_judged_against_the_threshold() {
        let inline = |len| Answer::Inline {
            len,
            status: Some(0),
            invalidated: None,
        };
        let chunk = Answer::ErrChunk {
            len: 36,
            invalidated: None,
        };
        assert_eq!(judge_reply(&inline(1000), 1000, 1024), Verdict::Pass);
        assert_eq!(judge_reply(&inline(1100), 1100, 1024), Verdict::Fail);
        assert_eq!(judge_reply(&chunk, 1100, 1024), Verdict::Pass);
        assert_eq!(judge_reply(&chunk, 1000, 1024), Verdict::Fail);
        assert_eq!(judge_reply(&inline(200), 1100, 1024), Verdict::CouldNotTell);
        assert_eq!(
            judge_reply(&Answer::Other("x".into()), 1100, 1024),
            Verdict::CouldNotTell
        );
        assert_eq!(
            judge_reply(&Answer::Other("x".into()), 1000, 1024),
            Verdict::CouldNotTell
        );
    }

    #[test]
    fn server_limits_read_by_the_rfc() {
        let s = ServerLimits::of(&[0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 63]);
        assert_eq!(
            (s.message, s.send, s.recv, s.remote_invalidation),
            (true, 4096, 65536, true)
        );
        for a in [
            &[][..],
            &[0; 196],
            &[0x18, 0x0e, 0xab, 0xf6, 1, 1, 3, 3],
            &[0xf6, 0xab, 0x0e, 0x18, 2, 1, 3, 3],
        ] {
            let s = ServerLimits::of(a);
            assert_eq!(
                (s.message, s.send, s.recv, s.remote_invalidation),
                (false, 1024, 1024, false)
            );
        }
    }

    #[test]
    fn accept_checks() {
        let run = |accept: &[u8], iwarp| {
            let mut c = Checks { list: Vec::new() };
            check_accept(&mut c, &message(1, 0, 3, 3), accept, iwarp);
            c.list
                .iter()
                .map(|k| (k.id.clone(), k.verdict))
                .collect::<Vec<_>>()
        };
        let mut padded = message(1, 0, 3, 3);
        padded.resize(196, 0);
        let ids = run(&padded, false);
        assert!(ids.iter().all(|(_, v)| *v != Verdict::Fail), "{ids:?}");
        assert_eq!(ids.last().unwrap().1, Verdict::NotApplicable);
        assert_eq!(
            run(&message(1, 0, 3, 3), true).last().unwrap().1,
            Verdict::Pass
        );
        assert_eq!(run(&padded, true).last().unwrap().1, Verdict::Fail);
        assert_eq!(
            run(&[0; 196], false),
            vec![("accept.message".into(), Verdict::NotApplicable)]
        );
        assert_eq!(
            run(&[0x18, 0x0e, 0xab, 0xf6, 1, 0, 3, 3], false)[0].1,
            Verdict::Fail
        );
        assert!(
            run(&message(2, 0, 3, 3), false).contains(&("accept.version".into(), Verdict::Fail))
        );
        assert!(run(&message(1, 0x81, 3, 3), false)
            .contains(&("accept.reserved-flags".into(), Verdict::Fail)));
    }

    #[test]
    fn compound_and_header_layout() {
        let c = getattr_compound(2);
        // RPC call header, AUTH_SYS, then tag, minor version 0, 4 ops.
        assert_eq!(&c[12..16], &NFS_PROGRAM.to_be_bytes());
        assert_eq!(c.len() % 4, 0);
        assert_eq!(&c[c.len() - 40..c.len() - 36], &24u32.to_be_bytes());
        let h = transport_header(7, None);
        assert_eq!(h.len(), 28);
        let r = RemoteRegion {
            handle: 0x1234,
            offset: 0x1_0000_0002,
            length: 4096,
        };
        let h = transport_header(7, Some(r));
        assert_eq!(h.len(), 48);
        let d = Header::decode(&h).unwrap();
        assert!(matches!(d.body, Body::Msg { chunks, .. } if chunks.reply_segments == Some(1)));
    }

    #[test]
    fn read_compound_layout() {
        let c = read_compound("big", 3000);
        assert_eq!(c.len() % 4, 0);
        // The last words: READ, the anonymous stateid, offset 0, count.
        let tail: Vec<u32> = c[c.len() - 32..]
            .chunks(4)
            .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        assert_eq!(tail, [25, 0, 0, 0, 0, 0, 0, 3000]);
        // LOOKUP with the name, padded.
        let at = c.len() - 32 - 12;
        assert_eq!(&c[at..at + 4], &15u32.to_be_bytes());
        assert_eq!(&c[at + 4..at + 12], &[0, 0, 0, 3, b'b', b'i', b'g', 0]);
    }

    #[test]
    fn nfs_status_is_read_after_the_verifier() {
        let mut r = Vec::new();
        words(&mut r, &[1, 1, 0, 0, 4]);
        r.extend_from_slice(&[9; 4]);
        words(&mut r, &[0, 10006]);
        assert_eq!(nfs_status(&r), Some(10006));
        assert_eq!(nfs_status(&r[..10]), None);
    }
}
