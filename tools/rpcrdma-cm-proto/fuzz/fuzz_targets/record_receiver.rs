// SPDX-License-Identifier: GPL-2.0

//! Feed arbitrary streams to the record receiver, cut at arbitrary points.
//!
//! Input: octets 0..4 choose the limits and the cut pattern; the rest is the
//! stream. The same stream fed whole and fed in pieces must give the same
//! records and the same outcome, and an assembling sink must agree with a
//! streaming one.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_cm_proto::record_marking::*;
use rpcrdma_cm_proto::stdio::RecordCollector as Collect;

fn run(stream: &[u8], limits: Limits, cut: usize, now_step: u64) -> (Collect, Result<(), RecordError>) {
    let mut rx = RecordReceiver::new(limits);
    let mut sink = Collect::default();
    let mut now = 0;
    for piece in stream.chunks(cut.max(1)) {
        if let Err(e) = rx.feed(piece, now, &mut sink) {
            assert_eq!(rx.error(), Some(e));
            return (sink, Err(e));
        }
        now += now_step;
    }
    let r = rx.finish();
    (sink, r)
}

fuzz_target!(|data: &[u8]| {
    let [rec, frags, cut, time, stream @ ..] = data else {
        return;
    };
    let limits = Limits {
        max_record_bytes: u64::from(*rec) * 8,
        max_fragments: u32::from(*frags % 32) + 1,
        max_buffered: 1 << 20,
        max_record_time: None,
    };
    let (whole, r1) = run(stream, limits, stream.len(), 0);
    let (split, r2) = run(stream, limits, usize::from(*cut % 16) + 1, 0);
    assert_eq!(r1, r2);
    assert_eq!(whole.records, split.records);
    for r in &whole.records {
        assert!(r.len() as u64 <= limits.max_record_bytes);
    }

    // Assembling into a fixed buffer agrees, or refuses from a marker.
    let mut buf = [0u8; 1024];
    let mut assembled = Vec::new();
    let mut rx = RecordReceiver::new(limits);
    let mut result = Ok(());
    {
        let mut asm = Assembler::new(&mut buf, |r: &[u8]| assembled.push(r.to_vec()));
        for piece in stream.chunks(usize::from(*cut % 7) + 1) {
            if let Err(e) = rx.feed(piece, 0, &mut asm) {
                result = Err(e);
                break;
            }
        }
    }
    if result.is_ok() {
        result = rx.finish();
    }
    match result {
        Err(RecordError::BufferLimit { .. }) => assert!(assembled.len() <= whole.records.len()),
        other => {
            assert_eq!(other, r1);
            assert_eq!(assembled, whole.records);
        }
    }

    // With a time budget and a clock that moves, the outcome is either the
    // same or a time-budget error.
    if *time != 0 {
        let timed = Limits { max_record_time: Some(u64::from(*time)), ..limits };
        let (_, r3) = run(stream, timed, usize::from(*cut % 16) + 1, 1);
        assert!(r3 == r1 || matches!(r3, Err(RecordError::TimeBudget { .. })));
    }
});
