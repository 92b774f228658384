// SPDX-License-Identifier: GPL-2.0

//! ONC RPC record marking for stream transports (RFC 5531 section 11).
//!
//! On TCP an RPC message travels as one record made of one or more
//! fragments. Each fragment starts with a 4-octet big-endian marker: the top
//! bit says "this is the last fragment of the record", the low 31 bits give
//! the fragment's length (zero is legal).
//!
//! [`RecordReceiver`] is an explicit state machine that accepts the stream in
//! slices of any size and yields the same records however the stream was cut.
//! Local policy limits (record bytes, fragments per record, bytes held in
//! memory, time per record) are enforced, each as its own error; a declared
//! length over a limit is refused from the marker alone, before any byte of
//! the body is accepted. After an error the receiver stays failed: it never
//! tries to find the next marker by scanning the payload.
//!
//! A complete record says nothing about whether it is a valid RPC message:
//! decoding XDR is not this layer's job.
//!
//! Pure: no allocation, no I/O, only `core`.

use core::fmt;

/// The marker bit that ends a record.
pub const LAST_FRAGMENT: u32 = 0x8000_0000;

/// The largest fragment length a marker can carry (2^31 - 1).
pub const MAX_FRAGMENT_LEN: u32 = 0x7fff_ffff;

/// Length of a fragment marker.
pub const MARKER_LEN: usize = 4;

/// A decoded fragment marker.
///
/// ```
/// # use rpcrdma_cm_proto::record_marking::FragmentMarker;
/// let m = FragmentMarker::new(28, true).unwrap();
/// assert_eq!(m.to_bytes(), [0x80, 0, 0, 28]);
/// assert_eq!(FragmentMarker::from_bytes([0x80, 0, 0, 28]), m);
/// assert!(FragmentMarker::new(1 << 31, false).is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FragmentMarker {
    len: u32,
    last: bool,
}

impl FragmentMarker {
    /// A marker for a fragment of `len` octets, or `None` if `len` does not
    /// fit in 31 bits.
    pub const fn new(len: u32, last: bool) -> Option<FragmentMarker> {
        if len > MAX_FRAGMENT_LEN {
            None
        } else {
            Some(FragmentMarker { len, last })
        }
    }

    /// Decode four received octets (every value is a valid marker).
    pub const fn from_bytes(b: [u8; MARKER_LEN]) -> FragmentMarker {
        let word = u32::from_be_bytes(b);
        FragmentMarker {
            len: word & MAX_FRAGMENT_LEN,
            last: word & LAST_FRAGMENT != 0,
        }
    }

    /// The four octets on the wire.
    pub const fn to_bytes(self) -> [u8; MARKER_LEN] {
        (self.len | if self.last { LAST_FRAGMENT } else { 0 }).to_be_bytes()
    }

    /// Length of the fragment body.
    pub const fn len(self) -> u32 {
        self.len
    }

    /// Whether the fragment body is empty.
    pub const fn is_empty(self) -> bool {
        self.len == 0
    }

    /// Whether this fragment ends its record.
    pub const fn is_last(self) -> bool {
        self.last
    }
}

/// Splits one message into fragments of at most `max_fragment` octets.
///
/// Yields `(marker, body)` pairs; only the final one has the last bit. An
/// empty message gives one empty last fragment.
///
/// ```
/// # use rpcrdma_cm_proto::record_marking::Fragments;
/// let frags: Vec<_> = Fragments::new(b"hello", 2).collect();
/// assert_eq!(frags.len(), 3);
/// assert_eq!(frags[2].0.to_bytes(), [0x80, 0, 0, 1]);
/// assert_eq!(frags[2].1, b"o");
/// assert_eq!(Fragments::new(b"", 2).count(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct Fragments<'a> {
    rest: &'a [u8],
    max_fragment: usize,
    done: bool,
}

impl<'a> Fragments<'a> {
    /// Fragments of `message`, each at most `max_fragment` octets
    /// (values of 0 count as 1, values above 2^31 - 1 as 2^31 - 1).
    pub fn new(message: &'a [u8], max_fragment: u32) -> Fragments<'a> {
        let max = max_fragment.clamp(1, MAX_FRAGMENT_LEN);
        Fragments {
            rest: message,
            max_fragment: usize::try_from(max).unwrap_or(usize::MAX),
            done: false,
        }
    }

    /// Total encoded length: bodies plus one marker per fragment.
    pub fn encoded_len(&self) -> usize {
        let frags = if self.rest.is_empty() {
            1
        } else {
            self.rest.len().div_ceil(self.max_fragment)
        };
        self.rest.len() + frags * MARKER_LEN
    }

    /// Write the whole encoding into `out`, returning its length, or `None`
    /// (writing nothing) if `out` is too small.
    pub fn write_to(self, out: &mut [u8]) -> Option<usize> {
        let need = self.encoded_len();
        let out = out.get_mut(..need)?;
        let mut at = 0;
        for (marker, body) in self {
            out[at..at + MARKER_LEN].copy_from_slice(&marker.to_bytes());
            at += MARKER_LEN;
            out[at..at + body.len()].copy_from_slice(body);
            at += body.len();
        }
        Some(at)
    }
}

impl<'a> Iterator for Fragments<'a> {
    type Item = (FragmentMarker, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let take = self.rest.len().min(self.max_fragment);
        let (body, rest) = self.rest.split_at(take);
        self.rest = rest;
        let last = rest.is_empty();
        self.done = last;
        // `take` is at most `max_fragment`, itself at most 2^31 - 1.
        let marker = FragmentMarker {
            len: take as u32,
            last,
        };
        Some((marker, body))
    }
}

/// Local policy limits of a [`RecordReceiver`]. These are this receiver's
/// choices, not protocol limits: RFC 5531 sets none beyond 2^31 - 1 octets
/// per fragment.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Limits {
    /// Largest record (sum of its fragment bodies) accepted.
    pub max_record_bytes: u64,
    /// Most fragments one record may have (zero-length ones included).
    pub max_fragments: u32,
    /// Most octets of an unfinished record held in memory; applies when the
    /// sink keeps the data ([`RecordSink::retains`]).
    pub max_buffered: u64,
    /// Longest time from a record's first marker octet to its end, in the
    /// units of the clock the caller passes; `None` for no limit.
    pub max_record_time: Option<u64>,
}

impl Limits {
    /// 1 MiB records, 64 fragments, 1 MiB held, no time limit.
    pub const DEFAULT: Limits = Limits {
        max_record_bytes: 1 << 20,
        max_fragments: 64,
        max_buffered: 1 << 20,
        max_record_time: None,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Where a stream ended early.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TruncatedIn {
    /// Inside a fragment marker.
    Marker,
    /// Between fragments of an unfinished record (a whole marker is missing).
    BetweenFragments,
    /// Inside a fragment body.
    Body,
}

/// Why a [`RecordReceiver`] stopped. Once returned, every later call returns
/// the same error.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum RecordError {
    /// A marker declared a fragment that would take the record over
    /// [`Limits::max_record_bytes`].
    RecordTooLarge {
        /// Record length so far plus the declared fragment length.
        declared_total: u64,
        /// The limit.
        limit: u64,
    },
    /// A record has more fragments than [`Limits::max_fragments`].
    TooManyFragments {
        /// The limit.
        limit: u32,
    },
    /// A marker declared a fragment that would take the octets held for an
    /// unfinished record over [`Limits::max_buffered`] or the sink's capacity.
    BufferLimit {
        /// Octets that would be held.
        declared_total: u64,
        /// The effective limit.
        limit: u64,
    },
    /// A record took longer than [`Limits::max_record_time`].
    TimeBudget {
        /// Time from the record's first octet to now.
        elapsed: u64,
        /// The limit.
        limit: u64,
    },
    /// End of stream inside a record.
    Truncated {
        /// Where the stream ended.
        within: TruncatedIn,
        /// Octets that were still expected (for `BetweenFragments`, the
        /// marker's 4; more would have followed).
        missing: u64,
    },
    /// The stream ended, cleanly or not; no more input is accepted.
    Finished,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RecordError::RecordTooLarge {
                declared_total,
                limit,
            } => write!(f, "record of {declared_total} octets exceeds limit {limit}"),
            RecordError::TooManyFragments { limit } => {
                write!(f, "record has more than {limit} fragments")
            }
            RecordError::BufferLimit {
                declared_total,
                limit,
            } => write!(
                f,
                "holding {declared_total} octets exceeds buffer limit {limit}"
            ),
            RecordError::TimeBudget { elapsed, limit } => {
                write!(f, "record took {elapsed}, time budget {limit}")
            }
            RecordError::Truncated { within, missing } => {
                let w = match within {
                    TruncatedIn::Marker => "a fragment marker",
                    TruncatedIn::BetweenFragments => "between fragments",
                    TruncatedIn::Body => "a fragment body",
                };
                write!(f, "stream truncated in {w}: {missing} octets missing")
            }
            RecordError::Finished => f.write_str("stream already finished"),
        }
    }
}

/// Consumer of record data.
///
/// Body octets are handed over as slices of the caller's input, without
/// copying; a record's data may come in many calls.
pub trait RecordSink {
    /// Next octets of the current record's body.
    fn data(&mut self, octets: &[u8]);

    /// The current record is complete; `len` is its total length.
    fn end_of_record(&mut self, len: u64);

    /// How many octets of one record this sink keeps in memory at most, if
    /// it keeps them at all. `None` (the default) means it streams them on.
    fn retains(&self) -> Option<u64> {
        None
    }
}

/// Receiver phase.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Collecting a marker; `have` of its 4 octets are in `buf`.
    Marker { buf: [u8; MARKER_LEN], have: u8 },
    /// Inside a body with `remaining` octets to go.
    Body { remaining: u32, last: bool },
    /// Stopped for good.
    Failed(RecordError),
}

/// Incremental record-marking receiver.
///
/// ```
/// # use rpcrdma_cm_proto::record_marking::*;
/// struct Collect(Vec<Vec<u8>>, Vec<u8>);
/// impl RecordSink for Collect {
///     fn data(&mut self, d: &[u8]) { self.1.extend_from_slice(d) }
///     fn end_of_record(&mut self, _len: u64) { self.0.push(core::mem::take(&mut self.1)) }
/// }
/// let stream = [0x80, 0, 0, 2, b'h', b'i', 0x80, 0, 0, 0];
/// let mut rx = RecordReceiver::new(Limits::DEFAULT);
/// let mut out = Collect(Vec::new(), Vec::new());
/// for b in stream.chunks(3) {
///     rx.feed(b, 0, &mut out).unwrap();
/// }
/// rx.finish().unwrap();
/// assert_eq!(out.0, vec![b"hi".to_vec(), vec![]]);
/// ```
#[derive(Clone, Debug)]
pub struct RecordReceiver {
    limits: Limits,
    phase: Phase,
    record_len: u64,
    fragments: u32,
    record_started: Option<u64>,
}

impl RecordReceiver {
    /// A receiver at a record boundary.
    pub const fn new(limits: Limits) -> RecordReceiver {
        RecordReceiver {
            limits,
            phase: Phase::Marker {
                buf: [0; MARKER_LEN],
                have: 0,
            },
            record_len: 0,
            fragments: 0,
            record_started: None,
        }
    }

    /// The limits in force.
    pub const fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The error the receiver stopped with, if any.
    pub const fn error(&self) -> Option<RecordError> {
        match self.phase {
            Phase::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the receiver sits between records (a clean place to end).
    pub const fn at_record_boundary(&self) -> bool {
        matches!(self.phase, Phase::Marker { have: 0, .. }) && self.fragments == 0
    }

    /// The clock value by which the current record must end, if a record is
    /// in progress and a time budget is set. Callers waiting for input use
    /// it to arm a timer and then call [`RecordReceiver::check_time`].
    pub fn deadline(&self) -> Option<u64> {
        match (self.record_started, self.limits.max_record_time) {
            (Some(start), Some(limit)) if self.error().is_none() => {
                Some(start.saturating_add(limit))
            }
            _ => None,
        }
    }

    fn fail(&mut self, e: RecordError) -> RecordError {
        self.phase = Phase::Failed(e);
        e
    }

    /// Enforce the time budget at clock value `now` without new input.
    pub fn check_time(&mut self, now: u64) -> Result<(), RecordError> {
        if let Some(e) = self.error() {
            return Err(e);
        }
        if let (Some(start), Some(limit)) = (self.record_started, self.limits.max_record_time) {
            let elapsed = now.saturating_sub(start);
            if elapsed > limit {
                return Err(self.fail(RecordError::TimeBudget { elapsed, limit }));
            }
        }
        Ok(())
    }

    /// Check a freshly completed marker against the limits.
    fn accept_marker(
        &mut self,
        marker: FragmentMarker,
        retains: Option<u64>,
    ) -> Result<(), RecordError> {
        let fragments = self.fragments.saturating_add(1);
        if fragments > self.limits.max_fragments {
            return Err(self.fail(RecordError::TooManyFragments {
                limit: self.limits.max_fragments,
            }));
        }
        let declared_total = self.record_len + u64::from(marker.len());
        if declared_total > self.limits.max_record_bytes {
            return Err(self.fail(RecordError::RecordTooLarge {
                declared_total,
                limit: self.limits.max_record_bytes,
            }));
        }
        if let Some(capacity) = retains {
            let limit = capacity.min(self.limits.max_buffered);
            if declared_total > limit {
                return Err(self.fail(RecordError::BufferLimit {
                    declared_total,
                    limit,
                }));
            }
        }
        self.fragments = fragments;
        Ok(())
    }

    /// Consume `input`, handing body octets and record ends to `sink`.
    ///
    /// `now` is the caller's clock (any monotonic unit matching
    /// [`Limits::max_record_time`]). All of `input` is consumed unless an
    /// error is returned; after an error the receiver refuses all input.
    pub fn feed<S: RecordSink>(
        &mut self,
        mut input: &[u8],
        now: u64,
        sink: &mut S,
    ) -> Result<(), RecordError> {
        self.check_time(now)?;
        while !input.is_empty() {
            match self.phase {
                Phase::Failed(e) => return Err(e),
                Phase::Marker { mut buf, have } => {
                    if have == 0 && self.fragments == 0 {
                        self.record_started = Some(now);
                    }
                    let have = usize::from(have);
                    let take = (MARKER_LEN - have).min(input.len());
                    buf[have..have + take].copy_from_slice(&input[..take]);
                    input = &input[take..];
                    let have = have + take;
                    if have < MARKER_LEN {
                        self.phase = Phase::Marker {
                            buf,
                            have: have as u8,
                        };
                        continue;
                    }
                    let marker = FragmentMarker::from_bytes(buf);
                    self.accept_marker(marker, sink.retains())?;
                    self.phase = Phase::Body {
                        remaining: marker.len(),
                        last: marker.is_last(),
                    };
                    self.maybe_end_fragment(sink);
                }
                Phase::Body { remaining, last } => {
                    let take = input.len().min(remaining as usize);
                    let (body, rest) = input.split_at(take);
                    input = rest;
                    sink.data(body);
                    self.record_len += take as u64;
                    self.phase = Phase::Body {
                        remaining: remaining - take as u32,
                        last,
                    };
                    self.maybe_end_fragment(sink);
                }
            }
        }
        Ok(())
    }

    /// If the current body is complete, move to the next marker and, after
    /// a last fragment, end the record.
    fn maybe_end_fragment<S: RecordSink>(&mut self, sink: &mut S) {
        if let Phase::Body { remaining: 0, last } = self.phase {
            self.phase = Phase::Marker {
                buf: [0; MARKER_LEN],
                have: 0,
            };
            if last {
                sink.end_of_record(self.record_len);
                self.record_len = 0;
                self.fragments = 0;
                self.record_started = None;
            }
        }
    }

    /// The stream has ended. `Ok` only at a record boundary; inside a record
    /// it is a truncation that says how many octets were missing. Either way
    /// the receiver accepts no more input.
    pub fn finish(&mut self) -> Result<(), RecordError> {
        let result = match self.phase {
            Phase::Failed(e) => return Err(e),
            Phase::Marker { have: 0, .. } if self.fragments == 0 => Ok(()),
            Phase::Marker { have: 0, .. } => Err(RecordError::Truncated {
                within: TruncatedIn::BetweenFragments,
                missing: MARKER_LEN as u64,
            }),
            Phase::Marker { have, .. } => Err(RecordError::Truncated {
                within: TruncatedIn::Marker,
                missing: (MARKER_LEN - usize::from(have)) as u64,
            }),
            Phase::Body { remaining, .. } => Err(RecordError::Truncated {
                within: TruncatedIn::Body,
                missing: u64::from(remaining),
            }),
        };
        self.phase = Phase::Failed(result.err().unwrap_or(RecordError::Finished));
        result
    }
}

/// A sink that assembles each record into a caller-provided buffer and hands
/// the whole record to a callback.
///
/// Its [`RecordSink::retains`] is the buffer's length, so the receiver
/// refuses a record that would not fit from its marker alone.
///
/// ```
/// # use rpcrdma_cm_proto::record_marking::*;
/// let mut buf = [0u8; 16];
/// let mut seen = 0;
/// let mut asm = Assembler::new(&mut buf, |rec: &[u8]| { assert_eq!(rec, b"abc"); seen += 1 });
/// let mut rx = RecordReceiver::new(Limits::DEFAULT);
/// rx.feed(&[0, 0, 0, 1, b'a', 0x80, 0, 0, 2, b'b', b'c'], 0, &mut asm).unwrap();
/// drop(asm);
/// assert_eq!(seen, 1);
/// ```
pub struct Assembler<'b, F: FnMut(&[u8])> {
    buf: &'b mut [u8],
    filled: usize,
    on_record: F,
}

impl<'b, F: FnMut(&[u8])> Assembler<'b, F> {
    /// Assemble into `buf`; call `on_record` with each complete record.
    pub fn new(buf: &'b mut [u8], on_record: F) -> Self {
        Assembler {
            buf,
            filled: 0,
            on_record,
        }
    }
}

impl<F: FnMut(&[u8])> RecordSink for Assembler<'_, F> {
    fn data(&mut self, octets: &[u8]) {
        // The receiver checked the declared length against `retains()`, so
        // this always fits; `get_mut` keeps it panic-free regardless.
        if let Some(dst) = self.buf.get_mut(self.filled..self.filled + octets.len()) {
            dst.copy_from_slice(octets);
            self.filled += octets.len();
        }
    }

    fn end_of_record(&mut self, _len: u64) {
        (self.on_record)(&self.buf[..self.filled]);
        self.filled = 0;
    }

    fn retains(&self) -> Option<u64> {
        Some(self.buf.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count {
        records: u32,
        octets: u64,
    }

    impl RecordSink for Count {
        fn data(&mut self, d: &[u8]) {
            self.octets += d.len() as u64;
        }
        fn end_of_record(&mut self, _len: u64) {
            self.records += 1;
        }
    }

    #[test]
    fn huge_declared_length_refused_from_marker() {
        let mut rx = RecordReceiver::new(Limits::DEFAULT);
        let mut c = Count {
            records: 0,
            octets: 0,
        };
        let e = rx.feed(&[0xff, 0xff, 0xff, 0xff], 0, &mut c).unwrap_err();
        assert!(matches!(
            e,
            RecordError::RecordTooLarge {
                declared_total: 0x7fff_ffff,
                ..
            }
        ));
        assert_eq!(rx.feed(&[0], 0, &mut c), Err(e));
        assert_eq!(c.octets, 0);
    }
}
