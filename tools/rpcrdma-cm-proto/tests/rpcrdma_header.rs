// SPDX-License-Identifier: GPL-2.0

//! The RPC-over-RDMA Version One header codec: round trips, every
//! truncation, every malformed field.

use proptest::prelude::*;
use rpcrdma_cm_proto::rpcrdma_header::*;

/// XDR words as octets.
fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_be_bytes()).collect()
}

/// An `RDMA_MSG`/`RDMA_NOMSG` header with the given chunk shape: `reads`
/// Read segments, one Write chunk per entry of `writes` with that many
/// segments, and a Reply chunk of `reply` segments. Segment contents are
/// arbitrary but deterministic.
fn header_with_chunks(
    proc: u32,
    xid: u32,
    reads: u32,
    writes: &[u32],
    reply: Option<u32>,
) -> Vec<u8> {
    let mut w = vec![xid, VERSION_ONE, 8, proc];
    for i in 0..reads {
        w.extend_from_slice(&[1, i * 4, 0x1000 + i, 512, 0, 0x2000]);
    }
    w.push(0);
    for &n in writes {
        w.extend_from_slice(&[1, n]);
        for i in 0..n {
            w.extend_from_slice(&[0x3000 + i, 4096, 1, 0]);
        }
    }
    w.push(0);
    match reply {
        None => w.push(0),
        Some(n) => {
            w.extend_from_slice(&[1, n]);
            for i in 0..n {
                w.extend_from_slice(&[0x4000 + i, 1024, 0, 0]);
            }
        }
    }
    words(&w)
}

#[test]
fn encode_msg_golden() {
    let mut buf = [0xffu8; 40];
    assert_eq!(encode_msg(0x0102_0304, 32, &mut buf), Some(28));
    assert_eq!(
        &buf[..28],
        &words(&[0x0102_0304, 1, 32, RDMA_MSG, 0, 0, 0])[..]
    );
    // The rest is untouched.
    assert_eq!(buf[28..], [0xff; 12]);
    assert_eq!(encode_msg(1, 1, &mut [0u8; 27]), None);
}

#[test]
fn msg_round_trip_with_payload() {
    let mut buf = vec![0u8; 28];
    encode_msg(0xdead_beef, 1, &mut buf).unwrap();
    buf.extend_from_slice(b"rpc message");
    let h = Header::decode(&buf).unwrap();
    assert_eq!(
        h,
        Header {
            xid: 0xdead_beef,
            version: 1,
            credits: 1,
            body: Body::Msg {
                chunks: Chunks::NONE,
                payload_offset: 28
            }
        }
    );
    assert_eq!(&buf[28..], b"rpc message");
}

#[test]
fn every_truncation_of_an_empty_msg_header() {
    let mut full = [0u8; 28];
    encode_msg(5, 2, &mut full).unwrap();
    let fields = [
        "xid",
        "credit value",
        "procedure",
        "read list",
        "write list",
        "reply chunk",
    ];
    for len in 0..28 {
        match Header::decode(&full[..len]) {
            Err(HeaderError::Truncated { field, need, have }) => {
                assert_eq!(have, len);
                assert_eq!(need, (len / 4 + 1) * 4, "len {len}");
                let expected = match len / 4 {
                    0 => "xid",
                    1 => "version",
                    n => fields[n - 1],
                };
                assert_eq!(field, expected, "len {len}");
            }
            other => panic!("len {len}: {other:?}"),
        }
    }
    assert!(Header::decode(&full).is_ok());
}

#[test]
fn chunk_lists_are_counted() {
    let buf = header_with_chunks(RDMA_MSG, 9, 2, &[1, 3], Some(2));
    let h = Header::decode(&buf).unwrap();
    assert_eq!(
        h.body,
        Body::Msg {
            chunks: Chunks {
                read_segments: 2,
                write_chunks: 2,
                write_segments: 4,
                reply_segments: Some(2)
            },
            payload_offset: buf.len()
        }
    );
    let buf = header_with_chunks(RDMA_NOMSG, 9, 0, &[], Some(1));
    assert_eq!(
        Header::decode(&buf).unwrap().body,
        Body::NoMsg {
            chunks: Chunks {
                reply_segments: Some(1),
                ..Chunks::NONE
            }
        }
    );
    assert!(!Chunks {
        reply_segments: Some(0),
        ..Chunks::NONE
    }
    .is_empty());
}

#[test]
fn every_truncation_of_a_header_with_chunks() {
    let buf = header_with_chunks(RDMA_MSG, 9, 2, &[1, 3], Some(2));
    for len in 0..buf.len() {
        match Header::decode(&buf[..len]) {
            Err(HeaderError::Truncated { need, have, .. }) => {
                assert_eq!(have, len);
                assert!(need > len && need <= buf.len(), "len {len}: need {need}");
            }
            other => panic!("len {len}: {other:?}"),
        }
    }
}

#[test]
fn versions_other_than_one() {
    for v in [0, 2, u32::MAX] {
        assert_eq!(
            Header::decode(&words(&[1, v, 1, RDMA_MSG, 0, 0, 0])),
            Err(HeaderError::Version { found: v })
        );
    }
    assert_eq!(
        HeaderError::Version { found: 2 }.to_string(),
        "version 2, expected 1"
    );
}

#[test]
fn procedures() {
    assert_eq!(
        Header::decode(&words(&[1, 1, 1, RDMA_DONE])).unwrap().body,
        Body::Done
    );
    for p in [RDMA_MSGP, 5, u32::MAX] {
        assert_eq!(
            Header::decode(&words(&[1, 1, 1, p, 0, 0, 0])),
            Err(HeaderError::Procedure { found: p })
        );
    }
    assert_eq!(
        HeaderError::Procedure { found: 2 }.to_string(),
        "procedure RDMA_MSGP (deprecated) not supported"
    );
    assert_eq!(
        HeaderError::Procedure { found: 9 }.to_string(),
        "unknown procedure 9"
    );
}

#[test]
fn bad_discriminators() {
    for (at, list) in [(4, "read list"), (5, "write list"), (6, "reply chunk")] {
        let mut w = vec![1, 1, 1, RDMA_MSG, 0, 0, 0];
        w[at] = 2;
        assert_eq!(
            Header::decode(&words(&w)),
            Err(HeaderError::Discriminator { list, found: 2 })
        );
    }
    // After a present Read segment, the next discriminator is checked too.
    let mut w = vec![1, 1, 1, RDMA_MSG, 1, 0, 1, 2, 0, 0, 7];
    w.extend_from_slice(&[0, 0]);
    assert_eq!(
        Header::decode(&words(&w)),
        Err(HeaderError::Discriminator {
            list: "read list",
            found: 7
        })
    );
}

#[test]
fn huge_segment_counts_are_truncation_not_overflow() {
    for count in [u32::MAX, 0x1000_0000, 2] {
        let w = [1, 1, 1, RDMA_MSG, 0, 1, count, 0, 0];
        match Header::decode(&words(&w)) {
            Err(HeaderError::Truncated { field, .. }) => assert_eq!(field, "write chunk"),
            other => panic!("{count}: {other:?}"),
        }
        let w = [1, 1, 1, RDMA_MSG, 0, 0, 1, count];
        match Header::decode(&words(&w)) {
            Err(HeaderError::Truncated { field, .. }) => assert_eq!(field, "reply chunk"),
            other => panic!("{count}: {other:?}"),
        }
    }
}

#[test]
fn rdma_error_bodies() {
    let h = Header::decode(&words(&[3, 1, 0, RDMA_ERROR, ERR_VERS, 1, 1])).unwrap();
    assert_eq!(h.body, Body::Error(RdmaError::Version { low: 1, high: 1 }));
    assert_eq!(
        RdmaError::Version { low: 1, high: 1 }.to_string(),
        "ERR_VERS (responder supports versions 1..1)"
    );
    let h = Header::decode(&words(&[3, 1, 0, RDMA_ERROR, ERR_CHUNK])).unwrap();
    assert_eq!(h.body, Body::Error(RdmaError::Chunk));
    let h = Header::decode(&words(&[3, 1, 0, RDMA_ERROR, 7])).unwrap();
    assert_eq!(h.body, Body::Error(RdmaError::Other(7)));
    for (w, field) in [
        (&[3, 1, 0, RDMA_ERROR][..], "error code"),
        (&[3, 1, 0, RDMA_ERROR, ERR_VERS], "lowest version"),
        (&[3, 1, 0, RDMA_ERROR, ERR_VERS, 1], "highest version"),
    ] {
        match Header::decode(&words(w)) {
            Err(HeaderError::Truncated { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{w:?}: {other:?}"),
        }
    }
}

#[test]
fn error_messages() {
    assert_eq!(
        HeaderError::Truncated {
            field: "write list",
            need: 24,
            have: 20
        }
        .to_string(),
        "header truncated in write list: needs 24 octets, 20 received"
    );
    assert_eq!(
        HeaderError::Discriminator {
            list: "reply chunk",
            found: 2
        }
        .to_string(),
        "reply chunk discriminator 2, expected 0 or 1"
    );
}

proptest! {
    #[test]
    fn encode_decode_round_trip(xid: u32, credits: u32, payload in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut buf = vec![0u8; MSG_HEADER_LEN];
        encode_msg(xid, credits, &mut buf).unwrap();
        buf.extend_from_slice(&payload);
        let h = Header::decode(&buf).unwrap();
        prop_assert_eq!(h.xid, xid);
        prop_assert_eq!(h.credits, credits);
        prop_assert_eq!(h.body, Body::Msg { chunks: Chunks::NONE, payload_offset: MSG_HEADER_LEN });
    }

    #[test]
    fn chunk_shapes_round_trip(reads in 0u32..4, writes in proptest::collection::vec(0u32..4, 0..3), reply in proptest::option::of(0u32..4)) {
        let buf = header_with_chunks(RDMA_MSG, 1, reads, &writes, reply);
        let h = Header::decode(&buf).unwrap();
        prop_assert_eq!(h.body, Body::Msg {
            chunks: Chunks {
                read_segments: reads,
                write_chunks: writes.len() as u32,
                write_segments: writes.iter().sum(),
                reply_segments: reply,
            },
            payload_offset: buf.len(),
        });
    }

    #[test]
    fn arbitrary_octets_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..128)) {
        if let Ok(Header { body: Body::Msg { payload_offset, .. }, .. }) = Header::decode(&buf) {
            prop_assert!(payload_offset <= buf.len());
        }
    }

    #[test]
    fn arbitrary_words_never_panic(w in proptest::collection::vec(prop_oneof![0u32..3, any::<u32>()], 0..40)) {
        let buf = words(&w);
        if let Ok(Header { body: Body::Msg { chunks, payload_offset }, .. }) = Header::decode(&buf) {
            prop_assert!(payload_offset <= buf.len());
            // The payload starts where the counted chunk lists end (the
            // same check as fuzz/fuzz_targets/rpcrdma_header.rs).
            let words = 7
                + 6 * chunks.read_segments as usize
                + 2 * chunks.write_chunks as usize
                + 4 * chunks.write_segments as usize
                + chunks.reply_segments.map_or(0, |n| 1 + 4 * n as usize);
            prop_assert_eq!(payload_offset, 4 * words);
        }
    }
}
