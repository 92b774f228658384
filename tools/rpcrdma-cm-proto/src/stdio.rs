// SPDX-License-Identifier: GPL-2.0

//! `std::io` adapter: read whole records from a byte stream.

use crate::record_marking::{Limits, RecordError, RecordReceiver, RecordSink};
use std::boxed::Box;
use std::collections::VecDeque;
use std::io::{self, Read};
use std::string::ToString;
use std::time::Instant;
use std::vec;
use std::vec::Vec;

/// Reads ONC RPC records from a stream (a TCP socket, say), enforcing the
/// receiver's limits. The time budget is measured in milliseconds.
///
/// ```
/// # use rpcrdma_cm_proto::{stdio::RecordReader, record_marking::Limits};
/// let stream: &[u8] = &[0x80, 0, 0, 3, 1, 2, 3];
/// let mut r = RecordReader::new(stream, Limits::DEFAULT);
/// assert_eq!(r.next_record().unwrap(), Some(vec![1, 2, 3]));
/// assert_eq!(r.next_record().unwrap(), None);
/// ```
pub struct RecordReader<R> {
    inner: R,
    rx: RecordReceiver,
    epoch: Instant,
    buf: Box<[u8]>,
    pending: Vec<u8>,
    done: VecDeque<Vec<u8>>,
    eof: bool,
}

/// Collects body octets and completed records.
struct Collect<'a> {
    current: &'a mut Vec<u8>,
    done: &'a mut VecDeque<Vec<u8>>,
    retain_limit: u64,
}

impl RecordSink for Collect<'_> {
    fn data(&mut self, octets: &[u8]) {
        self.current.extend_from_slice(octets);
    }

    fn end_of_record(&mut self, _len: u64) {
        self.done.push_back(std::mem::take(self.current));
    }

    fn retains(&self) -> Option<u64> {
        Some(self.retain_limit)
    }
}

/// A sink that keeps every completed record as a `Vec<u8>`, for callers
/// that feed a [`RecordReceiver`] themselves (tests, fuzzing).
///
/// ```
/// # use rpcrdma_cm_proto::{stdio::RecordCollector, record_marking::*};
/// let mut rx = RecordReceiver::new(Limits::DEFAULT);
/// let mut sink = RecordCollector::default();
/// rx.feed(&[0x80, 0, 0, 2, 7, 8], 0, &mut sink).unwrap();
/// assert_eq!(sink.records, vec![vec![7, 8]]);
/// ```
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RecordCollector {
    /// The completed records, oldest first.
    pub records: Vec<Vec<u8>>,
    /// The octets of the record in progress.
    pub current: Vec<u8>,
}

impl RecordSink for RecordCollector {
    fn data(&mut self, octets: &[u8]) {
        self.current.extend_from_slice(octets);
    }

    /// # Panics
    ///
    /// If `len` is not the number of octets delivered for the record: the
    /// receiver broke its contract.
    fn end_of_record(&mut self, len: u64) {
        assert_eq!(len, self.current.len() as u64, "record length");
        self.records.push(std::mem::take(&mut self.current));
    }
}

impl<R: Read> RecordReader<R> {
    /// A reader over `inner` with the given limits.
    pub fn new(inner: R, limits: Limits) -> Self {
        RecordReader {
            inner,
            rx: RecordReceiver::new(limits),
            epoch: Instant::now(),
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            pending: Vec::new(),
            done: Default::default(),
            eof: false,
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The next whole record, `None` at a clean end of stream. Truncation
    /// and limit violations are `InvalidData` errors carrying the
    /// [`RecordError`] text.
    pub fn next_record(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(r) = self.done.pop_front() {
                return Ok(Some(r));
            }
            if self.eof {
                return Ok(None);
            }
            let n = match self.inner.read(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                self.eof = true;
                self.rx.finish().map_err(invalid)?;
                continue;
            }
            let now = self.now_ms();
            let mut sink = Collect {
                current: &mut self.pending,
                done: &mut self.done,
                retain_limit: self.rx.limits().max_buffered,
            };
            self.rx
                .feed(&self.buf[..n], now, &mut sink)
                .map_err(invalid)?;
        }
    }
}

fn invalid(e: RecordError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}
