// SPDX-License-Identifier: GPL-2.0

//! Negotiation (RFC 8797 section 3.1): from what this side can do and what
//! the peer advertised, the thresholds and Remote Invalidation each side
//! applies. Part of [`super`], the protocol core: pure, `core` only.

use super::{Flags, InlineSize, Nonconformance, PrivateMessage};

/// What this side can do, before hearing from the peer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct LocalLimits {
    /// Largest message this side can send inline.
    pub max_send: InlineSize,
    /// Largest message this side's receive buffers hold.
    pub max_recv: InlineSize,
    /// Requester: it can handle Send With Invalidate; responder: it can send
    /// it.
    pub remote_invalidation: bool,
}

impl LocalLimits {
    /// What the peer assumes about a side that sends no private data (RFC 8797
    /// section 5): 1024/1024 and no Remote Invalidation.
    ///
    /// A side that sends nothing must negotiate with these, not its real
    /// limits, or it would expect inline messages the peer will never send and
    /// send ones the peer does not expect.
    ///
    /// ```
    /// # use rpcrdma_cm_proto::cm_private::*;
    /// let peer = PrivateMessage::decode(&[0xf6, 0xab, 0x0e, 0x18, 1, 1, 15, 15]);
    /// let n = negotiate(&LocalLimits::RFC_DEFAULT, &peer);
    /// assert_eq!((n.send_threshold.bytes(), n.recv_threshold.bytes()), (1024, 1024));
    /// assert!(!n.remote_invalidation);
    /// ```
    pub const RFC_DEFAULT: LocalLimits = LocalLimits {
        max_send: InlineSize::DEFAULT,
        max_recv: InlineSize::DEFAULT,
        remote_invalidation: false,
    };

    /// These limits with the send size lowered to RFC 8797's default.
    ///
    /// A responder that holds a requester without a conforming message to
    /// the 1 KB the RFC says it MUST assume (section 5) advertises a send
    /// size of 1 KB to it, so that what it applies and what it says agree.
    ///
    /// ```
    /// # use rpcrdma_cm_proto::cm_private::*;
    /// let me = LocalLimits {
    ///     max_send: InlineSize::from_bytes(16384),
    ///     max_recv: InlineSize::from_bytes(8192),
    ///     remote_invalidation: true,
    /// };
    /// let held = me.with_default_send();
    /// assert_eq!(held.max_send.bytes(), 1024);
    /// assert_eq!((held.max_recv, held.remote_invalidation), (me.max_recv, true));
    /// ```
    pub const fn with_default_send(self) -> LocalLimits {
        LocalLimits {
            max_send: InlineSize::DEFAULT,
            ..self
        }
    }

    /// These limits with the receive size lowered to what `peer` said it
    /// sends.
    ///
    /// A requester sends no message larger than the send size it advertised
    /// (RFC 8797 section 3.1), so a responder that receives into buffers of
    /// its advertised receive size needs no more than that: advertising it
    /// changes no threshold, and the buffers follow the requester.
    ///
    /// ```
    /// # use rpcrdma_cm_proto::cm_private::*;
    /// let me = LocalLimits {
    ///     max_send: InlineSize::from_bytes(65536),
    ///     max_recv: InlineSize::from_bytes(65536),
    ///     remote_invalidation: true,
    /// };
    /// let peer = PrivateMessage::decode(&[0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 63]).unwrap();
    /// let held = me.with_recv_for(&peer);
    /// assert_eq!((held.max_send.bytes(), held.max_recv.bytes()), (65536, 4096));
    /// assert_eq!(negotiate(&held, &Ok(peer)), negotiate(&me, &Ok(peer)));
    /// let big = PrivateMessage::decode(&[0xf6, 0xab, 0x0e, 0x18, 1, 0, 255, 255]).unwrap();
    /// assert_eq!(me.with_recv_for(&big), me);
    /// ```
    pub const fn with_recv_for(self, peer: &PrivateMessage) -> LocalLimits {
        LocalLimits {
            max_recv: self.max_recv.min(peer.max_send),
            ..self
        }
    }

    /// The message this side advertises.
    pub const fn advertisement(&self) -> PrivateMessage {
        PrivateMessage::new(
            Flags::new(self.remote_invalidation),
            self.max_send,
            self.max_recv,
        )
    }
}

/// The outcome of negotiation on one side of a connection.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Negotiated {
    /// The largest message this side may send inline: min(own send, peer recv).
    pub send_threshold: InlineSize,
    /// The largest message the peer may send to this side: min(own recv, peer send).
    pub recv_threshold: InlineSize,
    /// Responder: it may reply with Send With Invalidate; requester: both sides
    /// advertised support, so it may see Send With Invalidate.
    pub remote_invalidation: bool,
    /// Whether the peer's private data conformed (false: RFC defaults used).
    pub peer_conforming: bool,
}

/// Negotiate thresholds and Remote Invalidation from this side's limits and
/// the peer's decoded private data.
///
/// The rule is the same for both roles (RFC 8797 section 3.1): this side
/// sends at most min(own send, peer recv) and expects at most
/// min(own recv, peer send). A non-conforming peer counts as
/// [`PrivateMessage::RFC_DEFAULT`]. Remote Invalidation needs both the local
/// capability and the peer's flag.
///
/// ```
/// # use rpcrdma_cm_proto::cm_private::*;
/// let me = LocalLimits {
///     max_send: InlineSize::from_bytes(65536),
///     max_recv: InlineSize::from_bytes(16384),
///     remote_invalidation: true,
/// };
/// let peer = PrivateMessage::decode(&[0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 7]);
/// let n = negotiate(&me, &peer);
/// assert_eq!((n.send_threshold.bytes(), n.recv_threshold.bytes()), (8192, 4096));
/// assert!(n.remote_invalidation);
/// let n = negotiate(&me, &PrivateMessage::decode(&[]));
/// assert_eq!((n.send_threshold.bytes(), n.recv_threshold.bytes()), (1024, 1024));
/// assert!(!n.remote_invalidation);
/// ```
pub fn negotiate(local: &LocalLimits, peer: &Result<PrivateMessage, Nonconformance>) -> Negotiated {
    let (p, peer_conforming) = match peer {
        Ok(m) => (*m, true),
        Err(_) => (PrivateMessage::RFC_DEFAULT, false),
    };
    Negotiated {
        send_threshold: local.max_send.min(p.max_recv),
        recv_threshold: local.max_recv.min(p.max_send),
        remote_invalidation: local.remote_invalidation && p.flags.remote_invalidation(),
        peer_conforming,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_stock_linux_client_and_server() {
        let client = LocalLimits {
            max_send: InlineSize::from_bytes(4096),
            max_recv: InlineSize::from_bytes(4096),
            remote_invalidation: true,
        };
        assert_eq!(
            client.advertisement().encode(),
            [0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3]
        );
        let server = LocalLimits {
            remote_invalidation: false,
            ..client
        };
        assert_eq!(
            server.advertisement().encode(),
            [0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3]
        );
    }
}
