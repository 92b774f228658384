// SPDX-License-Identifier: GPL-2.0

//! ONC RPC over TCP: each call record-marked by the protocol core, replies
//! read with its receiver limits on.

use super::{CallError, RpcTransport};
use crate::error::{Context, Failure};
use crate::oncrpc::xid_of;
use rpcrdma_cm_proto::record_marking::{Fragments, Limits};
use rpcrdma_cm_proto::stdio::RecordReader;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The NFS port, over TCP.
pub(crate) const NFS_TCP_PORT: u16 = 2049;

/// The record receiver's limits for replies: a NULL reply is tiny, and a
/// record must arrive within the call's timeout.
pub(crate) fn reply_limits(timeout: Duration) -> Limits {
    Limits {
        max_record_bytes: 64 * 1024,
        max_fragments: 16,
        max_buffered: 64 * 1024,
        max_record_time: Some(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)),
    }
}

/// ONC RPC over a TCP connection.
pub(crate) struct TcpTransport {
    /// For writing and for setting the read timeout.
    stream: TcpStream,
    /// Reads whole records with the core's receiver limits.
    reader: RecordReader<TcpStream>,
}

impl TcpTransport {
    /// Connect to `addr` within `timeout`.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> Result<Self, Failure> {
        let stream = TcpStream::connect_timeout(&addr, timeout).context("connect")?;
        let _ = stream.set_nodelay(true);
        stream.set_write_timeout(Some(timeout))?;
        let reader = RecordReader::new(stream.try_clone()?, reply_limits(timeout));
        Ok(TcpTransport { stream, reader })
    }
}

impl RpcTransport for TcpTransport {
    fn call(&mut self, xid: u32, call: &[u8], deadline: Instant) -> Result<Vec<u8>, CallError> {
        let fragments = Fragments::new(call, u32::MAX);
        let mut wire = vec![0; fragments.encoded_len()];
        fragments
            .write_to(&mut wire)
            .ok_or_else(|| CallError::Fatal("cannot record-mark the call".into()))?;
        self.stream
            .write_all(&wire)
            .map_err(|e| CallError::Fatal(format!("send: {e}")))?;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(CallError::Timeout);
            }
            self.stream
                .set_read_timeout(Some(left))
                .map_err(|e| CallError::Fatal(e.to_string()))?;
            match self.reader.next_record() {
                Ok(Some(rec)) if xid_of(&rec) == Some(xid) => return Ok(rec),
                // A late reply to a call that timed out.
                Ok(Some(_)) => continue,
                Ok(None) => {
                    return Err(CallError::Fatal("the server closed the connection".into()))
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(CallError::Timeout)
                }
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    return Err(CallError::Fatal(format!("malformed record: {e}")))
                }
                Err(e) => return Err(CallError::Fatal(format!("receive: {e}"))),
            }
        }
    }
}
