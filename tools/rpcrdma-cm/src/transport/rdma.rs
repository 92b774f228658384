// SPDX-License-Identifier: GPL-2.0

//! RPC-over-RDMA Version One (RFC 8166) over a connected QP: `RDMA_MSG`
//! calls with empty chunk lists, inline replies. The verbs and CM calls are
//! in the `rdmacm` crate; the negotiation is the protocol core's.

use super::{CallError, RpcTransport};
use crate::error::{Context, Failure};
use crate::report::{hex, NegotiatedReport, PrivateDataReport};
use rdmacm::{ConnectOptions, Connection, Error as RdmaError};
use rpcrdma_cm_proto::cm_private::{negotiate, LocalLimits, PrivateMessage};
use rpcrdma_cm_proto::rpcrdma_header::{encode_msg, Body, Header, MSG_HEADER_LEN};
use serde::Serialize;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

pub(crate) const NFS_RDMA_PORT: u16 = 20049;

/// Receives posted for replies, and the credits requested.
const RECEIVES: u32 = 4;

/// What a received message means for the call `xid`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Received<'a> {
    /// The RPC reply to the call, inline.
    Reply(&'a [u8]),
    /// A message for another xid (a late reply).
    Other,
}

/// Interpret a received RPC-over-RDMA message for the call `xid`; `Err`
/// says why the connection cannot go on.
pub(crate) fn interpret(msg: &[u8], xid: u32) -> Result<Received<'_>, String> {
    let h = Header::decode(msg).map_err(|e| format!("malformed transport header: {e}"))?;
    if h.xid != xid {
        return Ok(Received::Other);
    }
    match h.body {
        Body::Msg {
            chunks,
            payload_offset,
        } if chunks.is_empty() => Ok(Received::Reply(&msg[payload_offset..])),
        Body::Msg { chunks, .. } => Err(format!(
            "RDMA_MSG reply with chunks this call did not offer: {chunks:?}"
        )),
        Body::NoMsg { .. } => Err(
            "RDMA_NOMSG: the responder put the reply in a Reply chunk, which this call did not offer"
                .into(),
        ),
        Body::Done => Err("RDMA_DONE instead of a reply".into()),
        Body::Error(e) => Err(format!("RDMA_ERROR {e}")),
    }
}

/// RPC-over-RDMA Version One over a connected QP.
pub(crate) struct RdmaTransport {
    /// The connection (`None` once disconnected).
    conn: Option<Connection>,
    /// The send threshold: no call may be larger.
    send_threshold: usize,
}

/// The transport details a ping reports.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct RdmaConnectionReport {
    /// What this side sent, hex.
    pub sent: Option<String>,
    /// What the responder sent.
    pub received: PrivateDataReport,
    /// What this side uses.
    pub negotiated: NegotiatedReport,
}

impl RdmaTransport {
    /// Connect to `addr` sending `sent` (`None`: no private data),
    /// negotiate as `effective` limits against the Accept, and post receives
    /// sized to the receive threshold.
    pub fn connect(
        addr: SocketAddr,
        sent: Option<Vec<u8>>,
        effective: &LocalLimits,
        timeout: Duration,
    ) -> Result<(Self, RdmaConnectionReport), Failure> {
        let opts = ConnectOptions {
            private_data: sent.clone(),
            timeout,
            max_recv: RECEIVES,
        };
        let accepted = Connection::connect(addr, &opts).context("connect")?;
        let decoded = PrivateMessage::decode(&accepted.private_data);
        let n = negotiate(effective, &decoded);
        let mut conn = accepted.connection;
        conn.post_receives(RECEIVES, n.recv_threshold.bytes() as usize)
            .context("post receives")?;
        Ok((
            RdmaTransport {
                conn: Some(conn),
                send_threshold: n.send_threshold.bytes() as usize,
            },
            RdmaConnectionReport {
                sent: sent.as_deref().map(hex),
                received: PrivateDataReport::from_decoded(&accepted.private_data, &decoded),
                negotiated: n.into(),
            },
        ))
    }

    /// Disconnect.
    pub fn disconnect(&mut self, timeout: Duration) -> Result<(), Failure> {
        match self.conn.take() {
            Some(c) => Ok(c.disconnect(timeout)?),
            None => Ok(()),
        }
    }
}

impl RpcTransport for RdmaTransport {
    fn call(&mut self, xid: u32, call: &[u8], deadline: Instant) -> Result<Vec<u8>, CallError> {
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| CallError::Fatal("not connected".into()))?;
        let mut msg = vec![0u8; MSG_HEADER_LEN];
        encode_msg(xid, RECEIVES, &mut msg)
            .ok_or_else(|| CallError::Fatal("cannot encode the header".into()))?;
        msg.extend_from_slice(call);
        if msg.len() > self.send_threshold {
            return Err(CallError::Fatal(format!(
                "the call ({} octets) exceeds the send threshold {}",
                msg.len(),
                self.send_threshold
            )));
        }
        let fatal = |e: RdmaError| match e {
            RdmaError::Timeout { .. } => CallError::Timeout,
            e => CallError::Fatal(e.to_string()),
        };
        conn.send(&msg, self.send_threshold, deadline)
            .map_err(fatal)?;
        loop {
            let m = conn.receive(deadline).map_err(fatal)?;
            match interpret(&m, xid) {
                Ok(Received::Reply(r)) => return Ok(r.to_vec()),
                Ok(Received::Other) => continue,
                Err(why) => return Err(CallError::Fatal(why)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    #[test]
    fn interpret_replies() {
        let mut m = words(&[7, 1, 32, 0, 0, 0, 0]);
        m.extend_from_slice(&words(&[7, 1, 0, 0, 0, 0]));
        assert_eq!(interpret(&m, 7), Ok(Received::Reply(&m[28..])));
        assert_eq!(interpret(&m, 8), Ok(Received::Other));
        assert_eq!(
            interpret(&words(&[7, 1, 1, 4, 1, 1, 1]), 7),
            Err("RDMA_ERROR ERR_VERS (responder supports versions 1..1)".into())
        );
        assert_eq!(
            interpret(&words(&[7, 1, 1, 4, 2]), 7),
            Err("RDMA_ERROR ERR_CHUNK".into())
        );
        assert!(interpret(&words(&[7, 1, 1, 1, 0, 0, 1, 0]), 7)
            .unwrap_err()
            .starts_with("RDMA_NOMSG"));
        assert!(interpret(&words(&[7, 1, 1, 0, 0, 0, 1, 0]), 7)
            .unwrap_err()
            .starts_with("RDMA_MSG reply with chunks"));
        assert_eq!(
            interpret(&words(&[7, 1, 1, 0, 0, 0]), 7),
            Err("malformed transport header: header truncated in reply chunk: needs 28 octets, 24 received".into())
        );
        assert_eq!(
            interpret(&words(&[7, 2, 1, 0, 0, 0, 0]), 7),
            Err("malformed transport header: version 2, expected 1".into())
        );
        assert_eq!(
            interpret(&words(&[7, 1, 1, 3]), 7),
            Err("RDMA_DONE instead of a reply".into())
        );
    }
}
