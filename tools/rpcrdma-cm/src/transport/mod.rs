// SPDX-License-Identifier: GPL-2.0

//! The transports an RPC call travels over: ONC RPC over TCP with record
//! marking ([`tcp`]) and RPC-over-RDMA Version One ([`rdma`]), one call at
//! a time each; and [`rpcrdma_session`], the RPC-over-RDMA requester of
//! `conform` and `probe --read`, which offers Reply chunks and classifies
//! every kind of answer without the protocol core.

use std::time::Instant;

pub(crate) mod rdma;
pub(crate) mod rpcrdma_session;
pub(crate) mod tcp;

/// Why a call got no usable reply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CallError {
    /// No reply within the timeout; the connection may still be used.
    Timeout,
    /// The connection is unusable (malformed record, EOF, RDMA_ERROR...).
    Fatal(String),
}

/// A connected RPC transport that carries one call at a time.
pub(crate) trait RpcTransport {
    /// Send `call` (an RPC CALL message whose xid is `xid`) and return the
    /// reply with that xid, waiting until `deadline`. Replies to earlier
    /// calls that timed out are skipped.
    fn call(&mut self, xid: u32, call: &[u8], deadline: Instant) -> Result<Vec<u8>, CallError>;
}
