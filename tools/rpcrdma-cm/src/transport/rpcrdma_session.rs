// SPDX-License-Identifier: GPL-2.0

//! One RPC-over-RDMA connection of `conform` and `probe --read` to a
//! server: its own RPC-over-RDMA Version One requester, written apart from
//! the protocol core so that `conform`'s checks do not judge the core with
//! itself: it sends a call with or without a Reply chunk and classifies the
//! answer (inline, in the chunk, `ERR_CHUNK`, With Invalidate or not). What
//! the answers mean for conformance is `conform`'s.

use crate::nfs4::{nfs_path, nfs_status, read_compound};
use crate::oncrpc::{null_call, NFS_PROGRAM};
use rdmacm::{ConnectOptions, Connection, Error as RdmaError, Message, RemoteRegion};
use rpcrdma_cm_proto::rpcrdma_header::{Body, Header, RdmaError as HeaderError};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Receive buffers posted by every connection: large enough to see a
/// server that sends more than it may (the RDMA maximum the RFC encodes).
const RECV_BUFFER: usize = 256 * 1024 + 4096;

/// Receives posted.
const RECEIVES: u32 = 4;

/// The largest call this tool sends: RFC 8797's default, so that no
/// server's receive threshold is ever exceeded.
pub(crate) const MAX_CALL: usize = 1024;

/// Octets of the transport header in front of a call without chunks
/// (what `transport_header` writes for one).
pub(crate) const CALL_HEADER: usize = 28;

/// `path` (a file below the server's NFSv4 root, see [`nfs_path`]) as the
/// names to look up, when its READ fits in a call of at most [`MAX_CALL`]
/// octets: what `conform --file` and `probe --read` take.
pub(crate) fn read_path(path: &str) -> Result<Vec<String>, String> {
    let names = nfs_path(path)?;
    if read_compound(&names, 0).len() + CALL_HEADER > MAX_CALL {
        return Err(format!(
            "'{path}': too long for a READ in a call of {MAX_CALL} octets"
        ));
    }
    Ok(names)
}

/// Octets offered as a Reply chunk for the Remote Invalidation checks.
pub(crate) const REPLY_CHUNK: u32 = 4096;

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
    /// The STag the Send invalidated, as the receive completion reported
    /// it (`None` also for a Send With Invalidate the device refused).
    pub(crate) fn invalidated(&self) -> Option<u32> {
        match self {
            Answer::Inline { invalidated, .. }
            | Answer::InChunk { invalidated }
            | Answer::ErrChunk { invalidated, .. } => *invalidated,
            Answer::InvalidateRefused | Answer::Other(_) => None,
        }
    }

    /// Whether the Send came With Invalidate, or tried to.
    pub(crate) fn with_invalidate(&self) -> bool {
        self.invalidated().is_some() || *self == Answer::InvalidateRefused
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
                format!(
                    "RDMA_NOMSG, the Reply in the Reply chunk{}",
                    inv(invalidated)
                )
            }
            Answer::ErrChunk { invalidated, .. } => {
                format!("RDMA_ERROR ERR_CHUNK{}", inv(invalidated))
            }
            Answer::InvalidateRefused => {
                "a receive error REM_INV_REQ_ERR (remote invalid request: most likely a Send \
                 With Invalidate of an STag this device would not invalidate)"
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
    /// Time allowed per call, and the run's deadline.
    budget: Budget,
    /// The Reply chunk the last call offered.
    last_region: Option<RemoteRegion>,
}

/// Time allowed: for each connection and each call, and for the whole
/// run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// Time allowed per connection and per call.
    pub each: Duration,
    /// When the whole run must be over (`None`: no deadline).
    pub deadline: Option<Instant>,
}

impl Budget {
    /// `each` per step, no deadline.
    pub(crate) fn per_step(each: Duration) -> Self {
        Budget {
            each,
            deadline: None,
        }
    }

    /// The time the next step may take: `each`, never past the deadline;
    /// `None` once the deadline has passed.
    pub(crate) fn next(&self) -> Option<Duration> {
        let Some(deadline) = self.deadline else {
            return Some(self.each);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        (!left.is_zero()).then(|| self.each.min(left))
    }

    /// The time a disconnect may take: `each`, but past the deadline no
    /// more than a second (a disconnect is owed to the server).
    pub(crate) fn closing(&self) -> Duration {
        self.next()
            .unwrap_or(Duration::ZERO)
            .max(Duration::from_secs(1))
            .min(self.each)
    }
}

/// What a step says when the run's deadline has passed.
pub(crate) const DEADLINE_PASSED: &str = "not tried: the run's deadline (--deadline) had passed";

/// Why a connection could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The server rejected it.
    Rejected(i32, Vec<u8>),
    /// This host could not make it: no RDMA device, no route to the
    /// address, an address it cannot use. Nothing was learnt of the server.
    Local(String),
    /// Anything else: a timeout, an unreachable server, the deadline.
    Error(String),
}

/// Whether `e` is this host's failure rather than the peer's: a library
/// call that failed here (no RDMA device, a bad argument; not
/// `rdma_connect`, which reports the peer's answer on siw), or address or
/// route resolution that ended for a reason of this host (no device for
/// the route, no route, an address of the wrong family or not usable
/// here). Resolution that times out (nobody answered ARP) or a peer that
/// cannot be reached is not: the peer may be down.
pub(crate) fn is_local(e: &RdmaError) -> bool {
    /// errno values of a resolution that failed on this host: ENODEV,
    /// EINVAL, EAFNOSUPPORT, EADDRNOTAVAIL, ENETUNREACH.
    const LOCAL_ERRNOS: [i32; 5] = [19, 22, 97, 99, 101];
    match e {
        // siw connects in blocking mode: rdma_connect itself then fails
        // with the peer's refusal, timeout or unreachability.
        RdmaError::Call { what, .. } => *what != "rdma_connect",
        RdmaError::Invalid(_) => true,
        RdmaError::Event { event, status, .. } => {
            (event.ends_with("ADDR_ERROR") || event.ends_with("ROUTE_ERROR"))
                && LOCAL_ERRNOS.contains(&status.abs())
        }
        _ => false,
    }
}

impl Session {
    /// Connect with `pdata` (`None`: no private data).
    pub(crate) fn open(
        addr: SocketAddr,
        pdata: Option<&[u8]>,
        budget: Budget,
    ) -> Result<Self, Refusal> {
        let Some(timeout) = budget.next() else {
            return Err(Refusal::Error(DEADLINE_PASSED.into()));
        };
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
            e if is_local(&e) => Refusal::Local(e.to_string()),
            e => Refusal::Error(e.to_string()),
        })?;
        let mut conn = accepted.connection;
        conn.post_receives(RECEIVES, RECV_BUFFER)
            .map_err(|e| Refusal::Local(format!("post receives: {e}")))?;
        Ok(Session {
            conn: Some(conn),
            accept: accepted.private_data,
            xid: 0x8797_0000,
            budget,
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
        self.last_region = None;
        let Some(timeout) = self.budget.next() else {
            return Answer::Other(DEADLINE_PASSED.into());
        };
        let deadline = Instant::now() + timeout;
        let region = if reply_chunk {
            match conn.offer_remote_write(REPLY_CHUNK, deadline) {
                Ok(r) => Some(r),
                Err(e) => {
                    // A failed bind leaves the QP in error.
                    if matches!(e, RdmaError::Completion { .. } | RdmaError::Timeout { .. }) {
                        self.conn = None;
                    }
                    return Answer::Other(format!("offer a Reply chunk: {e}"));
                }
            }
        } else {
            None
        };
        self.last_region = region;
        let mut msg = transport_header(xid, region);
        let mut body = rpc.to_vec();
        body[..4].copy_from_slice(&xid.to_be_bytes());
        msg.extend_from_slice(&body);
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
                    return Answer::Other(format!("no answer within {} s", timeout.as_secs_f64()))
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
            return classify(h.body, &m);
        }
    }

    /// Whether the last call's Reply chunk was invalidated: a NULL call
    /// sent from its memory fails locally if its STag is no longer valid
    /// (how a Send With Invalidate shows where the provider does not say
    /// so in the receive completion, as siw's userspace provider). The
    /// connection has just carried a call and its Reply, so a local
    /// failure of this Send is its memory's; any other failure, or none
    /// of the two outcomes, is `None`.
    pub(crate) fn region_invalidated(&mut self) -> Option<bool> {
        let region = self.last_region?;
        let conn = self.conn.as_mut()?;
        self.xid = self.xid.wrapping_add(1);
        let xid = self.xid;
        let mut msg = transport_header(xid, None);
        msg.extend_from_slice(&null_call(xid, NFS_PROGRAM, 4));
        let deadline = Instant::now() + self.budget.next()?;
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

    /// The Reply chunk the last call offered, if it offered one.
    pub(crate) fn last_region(&self) -> Option<RemoteRegion> {
        self.last_region
    }

    /// Whether the connection runs over iWARP (false once lost).
    pub(crate) fn is_iwarp(&self) -> bool {
        self.conn.as_ref().is_some_and(Connection::is_iwarp)
    }

    /// Disconnect and say whether that went cleanly.
    pub(crate) fn close_checked(mut self) -> Result<(), String> {
        match self.conn.take() {
            Some(c) => c.close(self.budget.closing()).map_err(|e| e.to_string()),
            None => Err("the connection was lost".into()),
        }
    }

    /// Disconnect (failures are not the server's conformance).
    pub(crate) fn close(mut self) {
        if let Some(c) = self.conn.take() {
            let _ = c.close(self.budget.closing());
        }
    }
}

/// How the message `m`, the answer to a call (its transport header's body
/// is `body`), answered it.
fn classify(body: Body, m: &Message) -> Answer {
    let invalidated = m.invalidated_rkey;
    match body {
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::nfs4::getattr_compound;

    #[test]
    fn call_header_length() {
        assert_eq!(transport_header(1, None).len(), CALL_HEADER);
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
            kind: rdmacm::RegionKind::Window,
        };
        let h = transport_header(7, Some(r));
        assert_eq!(h.len(), 48);
        let d = Header::decode(&h).unwrap();
        assert!(matches!(d.body, Body::Msg { chunks, .. } if chunks.reply_segments == Some(1)));
    }
}
