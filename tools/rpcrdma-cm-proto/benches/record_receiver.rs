// SPDX-License-Identifier: GPL-2.0

//! Record receiver throughput, printed next to a plain memcpy of the same
//! octets in the same run. Not a test: it prints numbers.
//!
//! `cargo bench -p rpcrdma-cm-proto --bench record_receiver`

use rpcrdma_cm_proto::record_marking::{Assembler, Fragments, Limits, RecordReceiver, RecordSink};
use std::hint::black_box;
use std::time::Instant;

/// Reads every body octet once (a wrapping sum, as a consumer that parses
/// in place would touch them) and counts records; keeps nothing.
struct Discard {
    octets: u64,
    records: u64,
}

/// The work a zero-copy consumer does per octet, shared with the baseline.
fn touch(d: &[u8]) -> u64 {
    d.iter().fold(0u64, |a, &b| a.wrapping_add(u64::from(b)))
}

impl RecordSink for Discard {
    fn data(&mut self, d: &[u8]) {
        self.octets = self.octets.wrapping_add(touch(black_box(d)));
    }
    fn end_of_record(&mut self, _len: u64) {
        self.records += 1;
    }
}

/// Feed `stream` in slices of `slice` octets to a fresh receiver with a
/// [`Discard`] sink; returns the number of records.
fn receive_discarding(stream: &[u8], slice: usize, limits: Limits) -> u64 {
    let mut rx = RecordReceiver::new(limits);
    let mut sink = Discard {
        octets: 0,
        records: 0,
    };
    for piece in stream.chunks(slice) {
        rx.feed(black_box(piece), 0, &mut sink).unwrap();
    }
    sink.records
}

/// A stream of `count` records of `len` octets, each in fragments of `frag`.
fn stream(count: usize, len: usize, frag: u32) -> Vec<u8> {
    let msg: Vec<u8> = (0..len).map(|i| i as u8).collect();
    let mut out = Vec::new();
    for _ in 0..count {
        for (m, body) in Fragments::new(&msg, frag) {
            out.extend_from_slice(&m.to_bytes());
            out.extend_from_slice(body);
        }
    }
    out
}

fn mib_per_s(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / (1024.0 * 1024.0)
}

/// Time `f` over `iters` passes of `bytes` octets; print MiB/s.
fn report(name: &str, bytes: usize, iters: u32, mut f: impl FnMut()) -> f64 {
    f(); // warm up
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    let secs = t.elapsed().as_secs_f64();
    let rate = mib_per_s(bytes * iters as usize, secs);
    println!(
        "{name:<48} {rate:>10.1} MiB/s  ({:.2} ns/octet)",
        secs * 1e9 / (bytes * iters as usize) as f64
    );
    rate
}

fn main() {
    let limits = Limits {
        max_record_bytes: 1 << 20,
        max_fragments: 1024,
        max_buffered: 1 << 20,
        max_record_time: Some(u64::MAX),
    };

    // 64 KiB records, one fragment each, delivered in 64 KiB reads.
    let big = stream(256, 64 * 1024, 64 * 1024);
    // Baselines over the same stream: the per-octet work alone, and a copy
    // of each 64 KiB record into one 64 KiB buffer (what assembling does).
    let touch_only = report("baseline: read every octet once", big.len(), 20, || {
        black_box(touch(black_box(&big)));
    });
    let mut dst = vec![0u8; 64 * 1024];
    let memcpy = report(
        "baseline: memcpy each record into a 64 KiB buffer",
        big.len(),
        20,
        || {
            for rec in black_box(&big).chunks(64 * 1024 + 4) {
                dst.copy_from_slice(&rec[4..]);
                black_box(&dst);
            }
        },
    );
    let zc = report(
        "receiver, zero-copy sink, 64 KiB reads",
        big.len(),
        20,
        || assert_eq!(receive_discarding(&big, 64 * 1024, limits), 256),
    );
    let mut asm_buf = vec![0u8; 64 * 1024];
    let asm = report(
        "receiver, assembling into caller buffer",
        big.len(),
        20,
        || {
            let mut rx = RecordReceiver::new(limits);
            let mut n = 0u32;
            {
                let mut sink = Assembler::new(&mut asm_buf, |r: &[u8]| {
                    black_box(r);
                    n += 1;
                });
                for chunk in big.chunks(64 * 1024) {
                    rx.feed(chunk, 0, &mut sink).unwrap();
                }
            }
            assert_eq!(n, 256);
        },
    );

    // Same 64 KiB records cut into 8 KiB fragments.
    let fragged = stream(256, 64 * 1024, 8 * 1024);
    let frag = report(
        "receiver, zero-copy sink, 8 KiB fragments",
        fragged.len(),
        20,
        || assert_eq!(receive_discarding(&fragged, 64 * 1024, limits), 256),
    );

    // Worst case: one octet per feed call.
    let small = stream(64, 1024, 1024);
    let mut dst1 = vec![0u8; small.len()];
    let memcpy1 = report("memcpy, 1-octet copies", small.len(), 5, || {
        for (d, s) in dst1.iter_mut().zip(black_box(&small).iter()) {
            *d = black_box(*s);
        }
        black_box(&dst1);
    });
    let one = report("receiver, 1-octet input slices", small.len(), 5, || {
        assert_eq!(receive_discarding(&small, 1, limits), 64)
    });

    println!();
    println!(
        "zero-copy receiver / read-only baseline, 64 KiB reads: {:.2}",
        zc / touch_only
    );
    println!(
        "zero-copy receiver / read-only baseline, 8 KiB frags:  {:.2}",
        frag / touch_only
    );
    println!(
        "assembling receiver / memcpy baseline, 64 KiB reads:   {:.2}",
        asm / memcpy
    );
    println!(
        "receiver 1-octet slices / octet-wise copy baseline:    {:.2}",
        one / memcpy1
    );
}
