// SPDX-License-Identifier: GPL-2.0

//! The RPC-over-RDMA Version One transport header (RFC 8166 section 5).
//!
//! Every RPC-over-RDMA message starts with xid, version, credit value and
//! procedure. An `RDMA_MSG` continues with three chunk lists (Read list,
//! Write list, Reply chunk) and then the RPC message itself; an
//! `RDMA_ERROR` carries an error code. The encoder writes the header of an
//! `RDMA_MSG` with empty chunk lists, which is all a requester needs to send
//! a call that fits inline; the decoder takes any header apart, checking
//! every length against the received octets, without allocating.
//!
//! ```
//! # use rpcrdma_cm_proto::rpcrdma_header::*;
//! let mut buf = [0u8; MSG_HEADER_LEN];
//! encode_msg(7, 32, &mut buf).unwrap();
//! let h = Header::decode(&buf).unwrap();
//! assert_eq!((h.xid, h.credits), (7, 32));
//! assert_eq!(h.body, Body::Msg { chunks: Chunks::NONE, payload_offset: 28 });
//! ```

use core::fmt;

/// The only version this decoder accepts.
pub const VERSION_ONE: u32 = 1;
/// Procedure: an RPC message follows inline.
pub const RDMA_MSG: u32 = 0;
/// Procedure: the RPC message is in chunks, nothing inline.
pub const RDMA_NOMSG: u32 = 1;
/// Procedure: padded message, deprecated by RFC 8166 (section 5.2).
pub const RDMA_MSGP: u32 = 2;
/// Procedure: deprecated signal that the requester has finished reading.
pub const RDMA_DONE: u32 = 3;
/// Procedure: the responder reports an error.
pub const RDMA_ERROR: u32 = 4;
/// RDMA_ERROR code: version not supported.
pub const ERR_VERS: u32 = 1;
/// RDMA_ERROR code: the chunks could not be used (e.g. the reply did not
/// fit and no Reply chunk was given).
pub const ERR_CHUNK: u32 = 2;
/// Octets of an `RDMA_MSG` header with empty chunk lists: 7 XDR words.
pub const MSG_HEADER_LEN: usize = 28;

/// Octets of a Read segment: position, handle, length, 64-bit offset.
const READ_SEGMENT_LEN: usize = 20;
/// Octets of an RDMA segment: handle, length, 64-bit offset.
const RDMA_SEGMENT_LEN: usize = 16;

/// How many of each chunk a header carried.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Chunks {
    /// Read segments in the Read list.
    pub read_segments: u32,
    /// Write chunks in the Write list.
    pub write_chunks: u32,
    /// RDMA segments in all Write chunks together.
    pub write_segments: u32,
    /// RDMA segments of the Reply chunk; `None` if there is none.
    pub reply_segments: Option<u32>,
}

impl Chunks {
    /// Three empty lists.
    pub const NONE: Chunks = Chunks {
        read_segments: 0,
        write_chunks: 0,
        write_segments: 0,
        reply_segments: None,
    };

    /// Whether all three lists are empty.
    pub const fn is_empty(&self) -> bool {
        self.read_segments == 0 && self.write_chunks == 0 && self.reply_segments.is_none()
    }
}

/// An `RDMA_ERROR`'s content.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RdmaError {
    /// `ERR_VERS` with the range of versions the responder supports.
    Version {
        /// Lowest supported version.
        low: u32,
        /// Highest supported version.
        high: u32,
    },
    /// `ERR_CHUNK`.
    Chunk,
    /// An error code RFC 8166 does not define.
    Other(u32),
}

impl fmt::Display for RdmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RdmaError::Version { low, high } => {
                write!(f, "ERR_VERS (responder supports versions {low}..{high})")
            }
            RdmaError::Chunk => f.write_str("ERR_CHUNK"),
            RdmaError::Other(code) => write!(f, "error code {code}"),
        }
    }
}

/// What follows the fixed part of a header.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Body {
    /// `RDMA_MSG`: the chunk lists, then the RPC message from `payload_offset`.
    Msg {
        /// The chunk lists.
        chunks: Chunks,
        /// Offset of the RPC message in the received octets.
        payload_offset: usize,
    },
    /// `RDMA_NOMSG`: the chunk lists; the RPC message is in a chunk.
    NoMsg {
        /// The chunk lists.
        chunks: Chunks,
    },
    /// `RDMA_DONE` (deprecated, no body).
    Done,
    /// `RDMA_ERROR`.
    Error(RdmaError),
}

/// A decoded transport header.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Header {
    /// The xid, equal to the RPC message's.
    pub xid: u32,
    /// Always [`VERSION_ONE`] in a decoded header.
    pub version: u32,
    /// The credit value: requested by a requester, granted by a responder.
    pub credits: u32,
    /// The procedure and its body.
    pub body: Body,
}

/// Why octets are not a Version One transport header.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HeaderError {
    /// The header needs more octets than were received.
    Truncated {
        /// What was being read.
        field: &'static str,
        /// Octets needed up to the end of that field.
        need: usize,
        /// Octets received.
        have: usize,
    },
    /// The version is not 1.
    Version {
        /// The version received.
        found: u32,
    },
    /// The procedure is not one this decoder handles (`RDMA_MSGP`, 2, is
    /// deprecated; anything above 4 is undefined).
    Procedure {
        /// The procedure received.
        found: u32,
    },
    /// A list discriminator is neither 0 nor 1.
    Discriminator {
        /// Which list.
        list: &'static str,
        /// The value received.
        found: u32,
    },
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HeaderError::Truncated { field, need, have } => write!(
                f,
                "header truncated in {field}: needs {need} octets, {have} received"
            ),
            HeaderError::Version { found } => write!(f, "version {found}, expected 1"),
            HeaderError::Procedure { found: RDMA_MSGP } => {
                f.write_str("procedure RDMA_MSGP (deprecated) not supported")
            }
            HeaderError::Procedure { found } => write!(f, "unknown procedure {found}"),
            HeaderError::Discriminator { list, found } => {
                write!(f, "{list} discriminator {found}, expected 0 or 1")
            }
        }
    }
}

/// Reads XDR words with bounds checks.
struct Words<'a> {
    /// The received octets.
    buf: &'a [u8],
    /// Offset of the next word.
    pos: usize,
}

impl Words<'_> {
    /// The next word, `field` naming it if it is missing.
    fn word(&mut self, field: &'static str) -> Result<u32, HeaderError> {
        self.need(4, field)?;
        let b = &self.buf[self.pos..self.pos + 4];
        self.pos += 4;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Check that `n` more octets are there.
    fn need(&self, n: usize, field: &'static str) -> Result<(), HeaderError> {
        match self.pos.checked_add(n) {
            Some(end) if end <= self.buf.len() => Ok(()),
            end => Err(HeaderError::Truncated {
                field,
                need: end.unwrap_or(usize::MAX),
                have: self.buf.len(),
            }),
        }
    }

    /// Skip `count` items of `size` octets.
    fn skip(&mut self, count: u32, size: usize, field: &'static str) -> Result<(), HeaderError> {
        let n = (count as usize)
            .checked_mul(size)
            .ok_or(HeaderError::Truncated {
                field,
                need: usize::MAX,
                have: self.buf.len(),
            })?;
        self.need(n, field)?;
        self.pos += n;
        Ok(())
    }

    /// A discriminator: `true` if an item follows.
    fn present(&mut self, list: &'static str) -> Result<bool, HeaderError> {
        match self.word(list)? {
            0 => Ok(false),
            1 => Ok(true),
            found => Err(HeaderError::Discriminator { list, found }),
        }
    }

    /// A Write chunk (counted array of RDMA segments); returns the count.
    fn write_chunk(&mut self, field: &'static str) -> Result<u32, HeaderError> {
        let n = self.word(field)?;
        self.skip(n, RDMA_SEGMENT_LEN, field)?;
        Ok(n)
    }

    /// The three chunk lists.
    fn chunks(&mut self) -> Result<Chunks, HeaderError> {
        let mut c = Chunks::NONE;
        while self.present("read list")? {
            self.skip(1, READ_SEGMENT_LEN, "read segment")?;
            c.read_segments = c.read_segments.saturating_add(1);
        }
        while self.present("write list")? {
            let n = self.write_chunk("write chunk")?;
            c.write_chunks = c.write_chunks.saturating_add(1);
            c.write_segments = c.write_segments.saturating_add(n);
        }
        if self.present("reply chunk")? {
            c.reply_segments = Some(self.write_chunk("reply chunk")?);
        }
        Ok(c)
    }
}

impl Header {
    /// Decode the header at the start of `buf` (a received message).
    pub fn decode(buf: &[u8]) -> Result<Header, HeaderError> {
        let mut w = Words { buf, pos: 0 };
        let xid = w.word("xid")?;
        let version = w.word("version")?;
        let credits = w.word("credit value")?;
        let proc = w.word("procedure")?;
        if version != VERSION_ONE {
            return Err(HeaderError::Version { found: version });
        }
        let body = match proc {
            RDMA_MSG => {
                let chunks = w.chunks()?;
                Body::Msg {
                    chunks,
                    payload_offset: w.pos,
                }
            }
            RDMA_NOMSG => Body::NoMsg {
                chunks: w.chunks()?,
            },
            RDMA_DONE => Body::Done,
            RDMA_ERROR => Body::Error(match w.word("error code")? {
                ERR_VERS => RdmaError::Version {
                    low: w.word("lowest version")?,
                    high: w.word("highest version")?,
                },
                ERR_CHUNK => RdmaError::Chunk,
                code => RdmaError::Other(code),
            }),
            found => return Err(HeaderError::Procedure { found }),
        };
        Ok(Header {
            xid,
            version,
            credits,
            body,
        })
    }
}

/// Write the header of an `RDMA_MSG` with empty chunk lists for `xid`,
/// requesting `credits`, into `out`; returns [`MSG_HEADER_LEN`], or `None`
/// if `out` is shorter. The RPC message follows it.
pub fn encode_msg(xid: u32, credits: u32, out: &mut [u8]) -> Option<usize> {
    let words = [xid, VERSION_ONE, credits, RDMA_MSG, 0, 0, 0];
    let out = out.get_mut(..MSG_HEADER_LEN)?;
    for (dst, w) in out.chunks_exact_mut(4).zip(words) {
        dst.copy_from_slice(&w.to_be_bytes());
    }
    Some(MSG_HEADER_LEN)
}
