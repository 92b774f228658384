// SPDX-License-Identifier: GPL-2.0

//! Record marking receiver: split-point invariance, limits, truncation.

use proptest::prelude::*;
use rpcrdma_cm_proto::record_marking::*;
use rpcrdma_cm_proto::stdio::RecordCollector as Collect;

fn encode(messages: &[&[u8]], frag: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        let f = Fragments::new(m, frag);
        let mut buf = vec![0; f.encoded_len()];
        let n = f.write_to(&mut buf).unwrap();
        assert_eq!(n, buf.len());
        out.extend_from_slice(&buf);
    }
    out
}

fn run(stream: &[u8], cuts: &[usize], limits: Limits) -> (Collect, Result<(), RecordError>) {
    let mut rx = RecordReceiver::new(limits);
    let mut sink = Collect::default();
    let mut at = 0;
    for &c in cuts.iter().chain([stream.len()].iter()) {
        let c = c.clamp(at, stream.len());
        if let Err(e) = rx.feed(&stream[at..c], 0, &mut sink) {
            return (sink, Err(e));
        }
        at = c;
    }
    let r = rx.finish();
    (sink, r)
}

/// The article's scenario: half a marker, then the rest of it with the body
/// and the start of two more messages. Every split point, one and two cuts.
#[test]
fn article_scenario_every_split() {
    let call: Vec<u8> = (0..40u8).collect();
    let second: Vec<u8> = b"second message".to_vec();
    let third: Vec<u8> = vec![0xaa; 300];
    let stream = encode(&[&call, &second, &third], 128);
    let want = vec![call.clone(), second.clone(), third.clone()];
    let (whole, r) = run(&stream, &[], Limits::DEFAULT);
    r.unwrap();
    assert_eq!(whole.records, want);
    for a in 0..=stream.len() {
        let (s, r) = run(&stream, &[a], Limits::DEFAULT);
        r.unwrap();
        assert_eq!(s.records, want, "cut at {a}");
        for b in (a..=stream.len()).step_by(7) {
            let (s, r) = run(&stream, &[a, b], Limits::DEFAULT);
            r.unwrap();
            assert_eq!(s.records, want, "cuts at {a},{b}");
        }
    }
    // Specifically: 2 octets of marker, then the rest plus body plus the
    // start of the next two messages in one read.
    let (s, r) = run(&stream, &[2, 4 + 40 + 4 + 14 + 4 + 10], Limits::DEFAULT);
    r.unwrap();
    assert_eq!(s.records, want);
}

#[test]
fn zero_length_fragments_and_records() {
    // A record of an empty non-last fragment, a 3-octet one, an empty last one.
    let stream = [
        0, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 0x80, 0, 0, 0, 0x80, 0, 0, 0,
    ];
    for cut in 0..=stream.len() {
        let (s, r) = run(&stream, &[cut], Limits::DEFAULT);
        r.unwrap();
        assert_eq!(s.records, vec![vec![1, 2, 3], vec![]]);
    }
    assert_eq!(encode(&[b""], 10), vec![0x80, 0, 0, 0]);
}

#[test]
fn max_declared_length_refused_without_reservation() {
    struct Retaining(u64);
    impl RecordSink for Retaining {
        fn data(&mut self, _: &[u8]) {
            panic!("no body octet may be delivered");
        }
        fn end_of_record(&mut self, _: u64) {
            panic!("no record");
        }
        fn retains(&self) -> Option<u64> {
            Some(self.0)
        }
    }
    let marker = FragmentMarker::new(MAX_FRAGMENT_LEN, true)
        .unwrap()
        .to_bytes();
    let mut rx = RecordReceiver::new(Limits {
        max_record_bytes: u64::MAX,
        ..Limits::DEFAULT
    });
    let e = rx
        .feed(
            &[marker[0], marker[1], marker[2], marker[3], 0, 0],
            0,
            &mut Retaining(4096),
        )
        .unwrap_err();
    assert_eq!(
        e,
        RecordError::BufferLimit {
            declared_total: 0x7fff_ffff,
            limit: 4096
        }
    );
    let mut rx = RecordReceiver::new(Limits::DEFAULT);
    let e = rx.feed(&marker, 0, &mut Retaining(u64::MAX)).unwrap_err();
    assert!(matches!(
        e,
        RecordError::RecordTooLarge {
            declared_total: 0x7fff_ffff,
            limit: 1_048_576
        }
    ));
    // Cumulative: two fragments that together exceed the record limit.
    let limits = Limits {
        max_record_bytes: 10,
        ..Limits::DEFAULT
    };
    let stream = [0, 0, 0, 6, 1, 1, 1, 1, 1, 1, 0x80, 0, 0, 5];
    let (s, r) = run(&stream, &[], limits);
    assert_eq!(
        r,
        Err(RecordError::RecordTooLarge {
            declared_total: 11,
            limit: 10
        })
    );
    assert!(s.records.is_empty());
}

#[test]
fn fragment_count_limit() {
    let limits = Limits {
        max_fragments: 3,
        ..Limits::DEFAULT
    };
    let ok = encode(&[b"abc"], 1);
    let (s, r) = run(&ok, &[], limits);
    r.unwrap();
    assert_eq!(s.records, vec![b"abc".to_vec()]);
    let too_many = encode(&[b"abcd"], 1);
    let (_, r) = run(&too_many, &[], limits);
    assert_eq!(r, Err(RecordError::TooManyFragments { limit: 3 }));
    // Empty fragments count too: an endless run of them is refused.
    let empties = [0u8; 4 * 100];
    let (_, r) = run(&empties, &[], limits);
    assert_eq!(r, Err(RecordError::TooManyFragments { limit: 3 }));
}

#[test]
fn time_budget() {
    let limits = Limits {
        max_record_time: Some(100),
        ..Limits::DEFAULT
    };
    let mut rx = RecordReceiver::new(limits);
    let mut sink = Collect::default();
    rx.feed(&[0x80, 0, 0, 4, 1], 1000, &mut sink).unwrap();
    assert_eq!(rx.deadline(), Some(1100));
    rx.feed(&[2], 1100, &mut sink).unwrap();
    // No input, but the clock moved: the caller's timer fires.
    assert_eq!(
        rx.check_time(1101),
        Err(RecordError::TimeBudget {
            elapsed: 101,
            limit: 100
        })
    );
    assert_eq!(
        rx.feed(&[3, 4], 1101, &mut sink),
        Err(RecordError::TimeBudget {
            elapsed: 101,
            limit: 100
        })
    );
    assert!(sink.records.is_empty());
    // The clock starts at each record's first octet; idle time between
    // records does not count.
    let mut rx = RecordReceiver::new(limits);
    let mut sink = Collect::default();
    rx.feed(&[0x80, 0, 0, 1, 9], 0, &mut sink).unwrap();
    assert_eq!(rx.deadline(), None);
    rx.feed(&[0x80, 0, 0, 1, 9], 5000, &mut sink).unwrap();
    assert_eq!(sink.records.len(), 2);
}

#[test]
fn truncation() {
    let stream = encode(&[b"hello world"], 4);
    // Clean ends only at record boundaries.
    for cut in 0..stream.len() {
        let mut rx = RecordReceiver::new(Limits::DEFAULT);
        let mut sink = Collect::default();
        rx.feed(&stream[..cut], 0, &mut sink).unwrap();
        let r = rx.finish();
        if cut == 0 {
            r.unwrap();
            continue;
        }
        let e = r.unwrap_err();
        let RecordError::Truncated { within, missing } = e else {
            panic!("{e:?}")
        };
        // Fragments of 4: 8 octets each (marker + body), last one 4 + 3.
        let off = cut % 8;
        match within {
            TruncatedIn::Marker => assert_eq!(missing, 4 - off as u64),
            TruncatedIn::Body => assert!((1..=4).contains(&missing)),
            TruncatedIn::BetweenFragments => assert_eq!((off, missing), (0, 4)),
        }
        assert!(
            sink.records.is_empty(),
            "a truncated record is never delivered"
        );
        // A finished receiver refuses more input.
        assert_eq!(rx.feed(&[0], 0, &mut sink), Err(e));
    }
    let mut rx = RecordReceiver::new(Limits::DEFAULT);
    let mut sink = Collect::default();
    rx.feed(&[0x80, 0, 0, 10, 1, 2], 0, &mut sink).unwrap();
    assert_eq!(
        rx.finish(),
        Err(RecordError::Truncated {
            within: TruncatedIn::Body,
            missing: 8
        })
    );
    let mut rx = RecordReceiver::new(Limits::DEFAULT);
    rx.finish().unwrap();
    assert_eq!(rx.feed(&[0], 0, &mut sink), Err(RecordError::Finished));
}

#[test]
fn failed_receiver_never_resyncs() {
    let limits = Limits {
        max_record_bytes: 8,
        ..Limits::DEFAULT
    };
    let mut rx = RecordReceiver::new(limits);
    let mut sink = Collect::default();
    let e = rx.feed(&[0x80, 0, 0, 9], 0, &mut sink).unwrap_err();
    // Input that would be a perfect record is still refused.
    assert_eq!(rx.feed(&[0x80, 0, 0, 1, 7], 0, &mut sink), Err(e));
    assert_eq!(rx.check_time(0), Err(e));
    assert_eq!(rx.finish(), Err(e));
    assert_eq!(rx.error(), Some(e));
    assert!(sink.records.is_empty());
}

#[test]
fn assembler_matches_streaming() {
    let msgs: [&[u8]; 3] = [b"one", &[7; 1000], b""];
    let stream = encode(&msgs, 100);
    let mut buf = [0u8; 1000];
    let mut got = Vec::new();
    let mut rx = RecordReceiver::new(Limits::DEFAULT);
    {
        let mut asm = Assembler::new(&mut buf, |r: &[u8]| got.push(r.to_vec()));
        for c in stream.chunks(13) {
            rx.feed(c, 0, &mut asm).unwrap();
        }
    }
    rx.finish().unwrap();
    assert_eq!(got, msgs.iter().map(|m| m.to_vec()).collect::<Vec<_>>());
    // One octet more than the buffer is refused from the marker.
    let mut small = [0u8; 999];
    let mut rx = RecordReceiver::new(Limits::DEFAULT);
    let mut asm = Assembler::new(&mut small, |_: &[u8]| panic!("no record"));
    let e = rx
        .feed(&encode(&[&[7; 1000]], 2000), 0, &mut asm)
        .unwrap_err();
    assert_eq!(
        e,
        RecordError::BufferLimit {
            declared_total: 1000,
            limit: 999
        }
    );
}

#[test]
fn std_reader() {
    use rpcrdma_cm_proto::stdio::RecordReader;
    let stream = encode(&[b"a", b"bc"], 1);
    let mut r = RecordReader::new(&stream[..], Limits::DEFAULT);
    assert_eq!(r.next_record().unwrap().unwrap(), b"a");
    assert_eq!(r.next_record().unwrap().unwrap(), b"bc");
    assert_eq!(r.next_record().unwrap(), None);
    let mut r = RecordReader::new(&stream[..stream.len() - 1], Limits::DEFAULT);
    r.next_record().unwrap();
    let e = r.next_record().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    assert!(e.to_string().contains("truncated"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// However the stream is cut, the same records come out.
    #[test]
    fn split_invariance(
        msgs in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..6),
        frag in 1u32..64,
        mut cuts in prop::collection::vec(0usize..2000, 0..20),
    ) {
        let refs: Vec<&[u8]> = msgs.iter().map(|m| m.as_slice()).collect();
        let stream = encode(&refs, frag);
        cuts.sort_unstable();
        let (s, r) = run(&stream, &cuts, Limits { max_fragments: 1000, ..Limits::DEFAULT });
        prop_assert_eq!(r, Ok(()));
        prop_assert_eq!(s.records, msgs);
    }

    /// Arbitrary octets never panic; the outcome is independent of the cuts.
    #[test]
    fn arbitrary_input(
        stream in prop::collection::vec(any::<u8>(), 0..400),
        mut cuts in prop::collection::vec(0usize..400, 0..10),
    ) {
        let limits = Limits { max_record_bytes: 200, max_fragments: 8, ..Limits::DEFAULT };
        let (whole, r1) = run(&stream, &[], limits);
        cuts.sort_unstable();
        let (split, r2) = run(&stream, &cuts, limits);
        prop_assert_eq!(r1, r2);
        prop_assert_eq!(whole.records, split.records);
    }
}
