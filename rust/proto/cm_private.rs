// SPDX-License-Identifier: GPL-2.0

//! RPC-over-RDMA Version One CM private data (RFC 8797).
//!
//! Peers exchange an 8-octet message in the private data of the rdma_cm
//! connect request and accept reply:
//!
//! ```text
//!  0               1               2               3
//! +---------------+---------------+---------------+---------------+
//! |                   magic 0xf6ab0e18 (big-endian)               |
//! +---------------+---------------+---------------+---------------+
//! |    version    |     flags     |   send size   |  receive size |
//! +---------------+---------------+---------------+---------------+
//! ```
//!
//! Sizes are encoded as `bytes / 1024 - 1`, so 1 KB..256 KB. Flag bit 0 says
//! the sender supports Remote Invalidation; bits 1..7 are reserved. A peer that
//! sends nothing conforming is treated as if it advertised 1024/1024 and no
//! Remote Invalidation.
//!
//! This module is pure: no allocation, no I/O, only `core`, so that it can be
//! tested outside the kernel as well.

use core::fmt;

// The causes of a nonconforming message and the negotiation rule, each in a
// file of its own beside this one.
#[path = "nonconformance.rs"]
mod nonconformance;
pub use nonconformance::Nonconformance;
#[path = "negotiation.rs"]
mod negotiation;
pub use negotiation::{negotiate, LocalLimits, Negotiated};

/// The first four octets of a conforming message, as a big-endian number.
pub const MAGIC: u32 = 0xf6ab_0e18;

/// The only message format version this module understands.
pub const VERSION_ONE: u8 = 1;

/// Length of a version one message on the wire.
pub const MESSAGE_LEN: usize = 8;

/// An inline threshold that the private data can carry: a whole number of
/// KiB from 1 KiB to 256 KiB.
///
/// Holding the encoded octet makes every value of this type encodable, so
/// encoding can never wrap (stock Linux computes `(size >> 10) - 1`, which
/// wraps below 1 KiB and above 256 KiB).
///
/// ```
/// # use rpcrdma_cm_proto::cm_private::InlineSize;
/// let s = InlineSize::from_bytes(4096);
/// assert_eq!(s.bytes(), 4096);
/// assert_eq!(s.encoded(), 3);
/// // Byte counts round down to a multiple of 1024 and clamp to the range.
/// assert_eq!(InlineSize::from_bytes(5000).bytes(), 4096);
/// assert_eq!(InlineSize::from_bytes(0).bytes(), 1024);
/// assert_eq!(InlineSize::from_bytes(1 << 20).bytes(), 262_144);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct InlineSize(u8);

impl InlineSize {
    /// 1 KiB, the smallest size and the RPC-over-RDMA Version One default.
    pub const MIN: InlineSize = InlineSize(0);
    /// 256 KiB, the largest size the format can carry.
    pub const MAX: InlineSize = InlineSize(u8::MAX);
    /// The RFC 8166 default inline threshold (1024 bytes).
    pub const DEFAULT: InlineSize = InlineSize::MIN;
    /// Smallest size in bytes.
    pub const MIN_BYTES: u32 = 1024;
    /// Largest size in bytes.
    pub const MAX_BYTES: u32 = 256 * 1024;

    /// The size carried by an encoded octet (`(octet + 1) * 1024`).
    pub const fn from_encoded(octet: u8) -> InlineSize {
        InlineSize(octet)
    }

    /// The octet that carries this size on the wire.
    pub const fn encoded(self) -> u8 {
        self.0
    }

    /// This size in bytes.
    pub const fn bytes(self) -> u32 {
        (self.0 as u32 + 1) * 1024
    }

    /// The largest encodable size not above `bytes`, clamped to
    /// [`InlineSize::MIN`]..=[`InlineSize::MAX`].
    ///
    /// Rounds down to a multiple of 1024 so that a side never advertises more
    /// than it has; values below 1 KiB become 1 KiB (the protocol's floor,
    /// which every peer must support anyway).
    pub const fn from_bytes(bytes: u32) -> InlineSize {
        if bytes < Self::MIN_BYTES {
            Self::MIN
        } else if bytes >= Self::MAX_BYTES {
            Self::MAX
        } else {
            InlineSize((bytes / 1024 - 1) as u8)
        }
    }

    /// The size equal to `bytes`, or `None` if `bytes` is not a multiple of
    /// 1024 within 1 KiB..=256 KiB.
    ///
    /// ```
    /// # use rpcrdma_cm_proto::cm_private::InlineSize;
    /// assert!(InlineSize::from_exact_bytes(65536).is_some());
    /// assert!(InlineSize::from_exact_bytes(4000).is_none());
    /// ```
    pub const fn from_exact_bytes(bytes: u32) -> Option<InlineSize> {
        if bytes < Self::MIN_BYTES || bytes > Self::MAX_BYTES || bytes % 1024 != 0 {
            None
        } else {
            Some(InlineSize((bytes / 1024 - 1) as u8))
        }
    }

    /// The smaller of two sizes.
    pub const fn min(self, other: InlineSize) -> InlineSize {
        if self.0 <= other.0 {
            self
        } else {
            other
        }
    }
}

impl fmt::Display for InlineSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.bytes())
    }
}

/// The flags octet of a version one message.
///
/// The Remote Invalidation bit and the reserved bits are kept apart: the
/// reserved bits never change behaviour, and this side always sends them as
/// zero, but what a peer set is kept so it can be reported.
///
/// ```
/// # use rpcrdma_cm_proto::cm_private::Flags;
/// let f = Flags::from_octet(0x81);
/// assert!(f.remote_invalidation());
/// assert_eq!(f.reserved_bits(), 0x80);
/// // What this side would send for the same capability: reserved bits zero.
/// assert_eq!(Flags::new(f.remote_invalidation()).octet(), 0x01);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Flags {
    remote_invalidation: bool,
    reserved: u8,
}

impl Flags {
    /// Bit 0 of the flags octet: the sender supports Remote Invalidation.
    pub const REMOTE_INVALIDATION: u8 = 0x01;
    /// Bits 1..7 of the flags octet, reserved in version one.
    pub const RESERVED_MASK: u8 = !Self::REMOTE_INVALIDATION;

    /// Flags to send: only the Remote Invalidation bit, reserved bits clear.
    pub const fn new(remote_invalidation: bool) -> Flags {
        Flags {
            remote_invalidation,
            reserved: 0,
        }
    }

    /// Flags as received, reserved bits included.
    pub const fn from_octet(octet: u8) -> Flags {
        Flags {
            remote_invalidation: octet & Self::REMOTE_INVALIDATION != 0,
            reserved: octet & Self::RESERVED_MASK,
        }
    }

    /// The octet these flags stand for, reserved bits included.
    pub const fn octet(self) -> u8 {
        self.reserved
            | if self.remote_invalidation {
                Self::REMOTE_INVALIDATION
            } else {
                0
            }
    }

    /// Whether the sender supports Remote Invalidation.
    pub const fn remote_invalidation(self) -> bool {
        self.remote_invalidation
    }

    /// Reserved bits that were set (always zero for flags made by [`Flags::new`]).
    pub const fn reserved_bits(self) -> u8 {
        self.reserved
    }
}

/// A conforming version one private data message.
///
/// ```
/// # use rpcrdma_cm_proto::cm_private::{Flags, InlineSize, PrivateMessage};
/// // What a stock Linux client sends: 4 KB / 4 KB and Remote Invalidation.
/// let m = PrivateMessage::new(
///     Flags::new(true),
///     InlineSize::from_bytes(4096),
///     InlineSize::from_bytes(4096),
/// );
/// assert_eq!(m.encode(), [0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03]);
/// assert_eq!(PrivateMessage::decode(&m.encode()), Ok(m));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PrivateMessage {
    /// Optional features the sender supports.
    pub flags: Flags,
    /// Largest message the sender can send with RDMA Send.
    pub max_send: InlineSize,
    /// Largest message the sender can receive in its posted receive buffers.
    pub max_recv: InlineSize,
}

impl PrivateMessage {
    /// What a peer that sent nothing conforming is assumed to have said
    /// (RFC 8797 section 5): 1024/1024, no Remote Invalidation.
    pub const RFC_DEFAULT: PrivateMessage = PrivateMessage {
        flags: Flags::new(false),
        max_send: InlineSize::DEFAULT,
        max_recv: InlineSize::DEFAULT,
    };

    /// A message with the given flags and sizes.
    pub const fn new(flags: Flags, max_send: InlineSize, max_recv: InlineSize) -> PrivateMessage {
        PrivateMessage {
            flags,
            max_send,
            max_recv,
        }
    }

    /// The 8 octets to put in the CM private data.
    ///
    /// Reserved flag bits are always sent as zero.
    pub const fn encode(&self) -> [u8; MESSAGE_LEN] {
        let m = MAGIC.to_be_bytes();
        [
            m[0],
            m[1],
            m[2],
            m[3],
            VERSION_ONE,
            Flags::new(self.flags.remote_invalidation).octet(),
            self.max_send.encoded(),
            self.max_recv.encoded(),
        ]
    }

    /// Decode received private data of any length.
    ///
    /// The first 8 octets must form a version one message; octets after them
    /// are ignored (InfiniBand CM pads REQ private data to 56 octets and REP
    /// to 196). Reserved flag bits are kept in [`Flags::reserved_bits`] but
    /// do not make the message non-conforming.
    ///
    /// ```
    /// # use rpcrdma_cm_proto::cm_private::{Nonconformance, PrivateMessage};
    /// assert_eq!(PrivateMessage::decode(&[]), Err(Nonconformance::Absent));
    /// assert_eq!(PrivateMessage::decode(&[0; 56]), Err(Nonconformance::Zeroed { len: 56 }));
    /// assert_eq!(PrivateMessage::decode(&[0xf6, 0xab]), Err(Nonconformance::Short { len: 2 }));
    /// let v2 = [0xf6, 0xab, 0x0e, 0x18, 2, 0, 0, 0];
    /// assert_eq!(PrivateMessage::decode(&v2), Err(Nonconformance::UnknownVersion { found: 2 }));
    /// ```
    pub fn decode(data: &[u8]) -> Result<PrivateMessage, Nonconformance> {
        if data.is_empty() {
            return Err(Nonconformance::Absent);
        }
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        if data.iter().all(|&b| b == 0) {
            return Err(Nonconformance::Zeroed { len });
        }
        let Some(head) = data.first_chunk::<MESSAGE_LEN>() else {
            return Err(Nonconformance::Short { len });
        };
        let magic = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        if magic != MAGIC {
            return Err(Nonconformance::BadMagic { found: magic });
        }
        if head[4] != VERSION_ONE {
            return Err(Nonconformance::UnknownVersion { found: head[4] });
        }
        Ok(PrivateMessage {
            flags: Flags::from_octet(head[5]),
            max_send: InlineSize::from_encoded(head[6]),
            max_recv: InlineSize::from_encoded(head[7]),
        })
    }
}

impl fmt::Display for PrivateMessage {
    /// `v1 send=4096 recv=4096 ri=1`, plus ` reserved=0xNN` when a peer set
    /// reserved flag bits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "v1 send={} recv={} ri={}",
            self.max_send,
            self.max_recv,
            u8::from(self.flags.remote_invalidation())
        )?;
        if self.flags.reserved_bits() != 0 {
            write!(f, " reserved={:#04x}", self.flags.reserved_bits())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_bits_never_sent() {
        let m = PrivateMessage::new(Flags::from_octet(0xff), InlineSize::MIN, InlineSize::MAX);
        assert_eq!(m.encode()[5], 0x01);
    }
}
