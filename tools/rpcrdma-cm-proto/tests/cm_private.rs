// SPDX-License-Identifier: GPL-2.0

//! Exhaustive and property tests of the RFC 8797 codec and negotiation.

use rpcrdma_cm_proto::cm_private::*;

fn msg(version: u8, flags: u8, send: u8, recv: u8) -> [u8; 8] {
    [0xf6, 0xab, 0x0e, 0x18, version, flags, send, recv]
}

#[test]
fn golden_vectors() {
    // Stock Linux client: 4 KB / 4 KB, Remote Invalidation.
    let c = PrivateMessage::decode(&msg(1, 1, 3, 3)).unwrap();
    assert_eq!((c.max_send.bytes(), c.max_recv.bytes()), (4096, 4096));
    assert!(c.flags.remote_invalidation());
    // Stock Linux server: flags 0.
    let s = PrivateMessage::decode(&msg(1, 0, 3, 3)).unwrap();
    assert!(!s.flags.remote_invalidation());
    // Extremes.
    let m = PrivateMessage::new(Flags::new(false), InlineSize::MIN, InlineSize::MAX);
    assert_eq!(m.encode(), msg(1, 0, 0, 255));
    // The RFC default is what "both Size fields contain the value zero" means.
    assert_eq!(PrivateMessage::RFC_DEFAULT.encode(), msg(1, 0, 0, 0));
    // Magic byte order: the little-endian reading must not be accepted.
    let le = [0x18, 0x0e, 0xab, 0xf6, 1, 1, 3, 3];
    assert_eq!(
        PrivateMessage::decode(&le),
        Err(Nonconformance::BadMagic { found: 0x180e_abf6 })
    );
}

#[test]
fn every_header_octet_value() {
    for version in 0..=255u8 {
        for flags in 0..=255u8 {
            for send in 0..=255u8 {
                // recv is covered by the symmetric loop below; keep this one cubic.
                let wire = msg(version, flags, send, send ^ 0x5a);
                let r = PrivateMessage::decode(&wire);
                if version != 1 {
                    assert_eq!(r, Err(Nonconformance::UnknownVersion { found: version }));
                    continue;
                }
                let m = r.unwrap();
                assert_eq!(m.flags.octet(), flags);
                assert_eq!(m.flags.remote_invalidation(), flags & 1 == 1);
                assert_eq!(m.flags.reserved_bits(), flags & 0xfe);
                assert_eq!(m.max_send.bytes(), (u32::from(send) + 1) * 1024);
                assert_eq!(m.max_recv.encoded(), send ^ 0x5a);
                // Re-encoding keeps everything but reserved bits.
                let again = m.encode();
                assert_eq!(again, msg(1, flags & 1, send, send ^ 0x5a));
            }
        }
    }
    for send in 0..=255u8 {
        for recv in 0..=255u8 {
            let m = PrivateMessage::decode(&msg(1, 0, send, recv)).unwrap();
            assert_eq!(m.max_send.encoded(), send);
            assert_eq!(m.max_recv.encoded(), recv);
            assert_eq!(m.encode(), msg(1, 0, send, recv));
        }
    }
}

#[test]
fn every_buffer_length_up_to_rep_size() {
    let good = msg(1, 1, 15, 63);
    for len in 0..=196usize {
        // A conforming message followed by padding.
        let mut buf = [0u8; 196];
        buf[..8.min(len)].copy_from_slice(&good[..8.min(len)]);
        // Trailing octets are ignored whatever they hold.
        for (i, b) in buf.iter_mut().enumerate().skip(8) {
            *b = i as u8;
        }
        let r = PrivateMessage::decode(&buf[..len]);
        match len {
            0 => assert_eq!(r, Err(Nonconformance::Absent)),
            1..=7 => assert_eq!(r, Err(Nonconformance::Short { len: len as u32 })),
            _ => assert_eq!(r.unwrap().encode(), good),
        }
        // Zero padding alone, as IB delivers when the peer sent nothing.
        let zeros = [0u8; 196];
        let z = PrivateMessage::decode(&zeros[..len]);
        if len == 0 {
            assert_eq!(z, Err(Nonconformance::Absent));
        } else {
            assert_eq!(z, Err(Nonconformance::Zeroed { len: len as u32 }));
        }
    }
}

#[test]
fn inline_size_conversions() {
    for octet in 0..=255u8 {
        let s = InlineSize::from_encoded(octet);
        assert_eq!(InlineSize::from_bytes(s.bytes()), s);
        assert_eq!(InlineSize::from_exact_bytes(s.bytes()), Some(s));
        assert_eq!(InlineSize::from_bytes(s.bytes() + 1023), s, "rounds down");
    }
    for bytes in (0..1024).chain([u32::MAX, 262_145, 1 << 20]) {
        let s = InlineSize::from_bytes(bytes);
        assert!(s == InlineSize::MIN || s == InlineSize::MAX);
        assert_eq!(InlineSize::from_exact_bytes(bytes), None);
    }
    // Never above the input unless clamped up to the 1 KiB floor.
    for bytes in (0..=300_000u32).step_by(7) {
        let s = InlineSize::from_bytes(bytes);
        assert!(s.bytes() <= bytes.max(1024));
        assert!(s.bytes() <= InlineSize::MAX_BYTES);
        assert!(!(1024..=InlineSize::MAX_BYTES).contains(&bytes) || bytes - s.bytes() < 1024);
    }
}

fn limits(send: u8, recv: u8, ri: bool) -> LocalLimits {
    LocalLimits {
        max_send: InlineSize::from_encoded(send),
        max_recv: InlineSize::from_encoded(recv),
        remote_invalidation: ri,
    }
}

#[test]
fn negotiation_exact_min_symmetry_and_bounds() {
    // The threshold RFC 8797 section 5 asks for, computed from the encoded
    // octets alone: the smaller encoded value, (value + 1) * 1024 bytes.
    fn min_bytes(a: u8, b: u8) -> u32 {
        (u32::from(a.min(b)) + 1) * 1024
    }
    // Every pair of sizes on a grid that covers both ends and the middle.
    let grid: Vec<u8> = (0..=255u8).step_by(3).chain([255]).collect();
    for &rq_send in &grid {
        for &rq_recv in &grid {
            for &rs_send in &grid {
                for &rs_recv in [0u8, 3, 15, 63, 127, 255].iter() {
                    for (rq_ri, rs_ri) in
                        [(false, false), (false, true), (true, false), (true, true)]
                    {
                        let rq = limits(rq_send, rq_recv, rq_ri);
                        let rs = limits(rs_send, rs_recv, rs_ri);
                        let rq_sees = PrivateMessage::decode(&rs.advertisement().encode());
                        let rs_sees = PrivateMessage::decode(&rq.advertisement().encode());
                        let a = negotiate(&rq, &rq_sees);
                        let b = negotiate(&rs, &rs_sees);
                        // Exactly min() of one side's send and the other's receive size.
                        assert_eq!(a.send_threshold.bytes(), min_bytes(rq_send, rs_recv));
                        assert_eq!(a.recv_threshold.bytes(), min_bytes(rq_recv, rs_send));
                        assert_eq!(b.send_threshold.bytes(), min_bytes(rs_send, rq_recv));
                        assert_eq!(b.recv_threshold.bytes(), min_bytes(rs_recv, rq_send));
                        // What the requester sends, the responder expects, and back.
                        assert_eq!(a.send_threshold, b.recv_threshold);
                        assert_eq!(a.recv_threshold, b.send_threshold);
                        // Never above either side's own limit.
                        assert!(a.send_threshold <= rq.max_send && a.send_threshold <= rs.max_recv);
                        assert!(b.send_threshold <= rs.max_send && b.send_threshold <= rq.max_recv);
                        // Remote Invalidation only when both allow it, and both agree.
                        assert_eq!(a.remote_invalidation, rq_ri && rs_ri);
                        assert_eq!(b.remote_invalidation, a.remote_invalidation);
                        assert!(a.peer_conforming && b.peer_conforming);
                    }
                }
            }
        }
    }
}

#[test]
fn nonconforming_peer_gets_rfc_defaults() {
    let me = limits(63, 63, true);
    let bad: [&[u8]; 6] = [
        &[],
        &[0; 56],
        &[0xf6, 0xab, 0x0e],
        &[0xf6, 0xab, 0x0e, 0x19, 1, 1, 255, 255],
        &[0xf6, 0xab, 0x0e, 0x18, 2, 1, 255, 255],
        &[0xf6, 0xab, 0x0e, 0x18, 0, 1, 255, 255],
    ];
    for (i, b) in bad.iter().enumerate() {
        let peer = PrivateMessage::decode(b);
        let cause = peer.unwrap_err();
        assert!(cause.index() < Nonconformance::COUNT);
        assert!(!cause.name().is_empty());
        let n = negotiate(&me, &peer);
        assert_eq!(n.send_threshold, InlineSize::DEFAULT, "case {i}");
        assert_eq!(n.recv_threshold, InlineSize::DEFAULT, "case {i}");
        assert!(!n.remote_invalidation);
        assert!(!n.peer_conforming);
    }
}

#[test]
fn cause_names_are_one_table() {
    // Every cause decode can produce, in index order.
    let each: [&[u8]; Nonconformance::COUNT] = [
        &[],
        &[0; 56],
        &[0xf6, 0xab, 0x0e],
        &[0xf6, 0xab, 0x0e, 0x19, 1, 1, 255, 255],
        &[0xf6, 0xab, 0x0e, 0x18, 2, 1, 255, 255],
    ];
    for (i, b) in each.iter().enumerate() {
        let cause = PrivateMessage::decode(b).unwrap_err();
        assert_eq!(cause.index(), i);
        assert_eq!(cause.name(), Nonconformance::NAMES[i]);
        let shown = cause.to_string();
        assert_eq!(shown.split(' ').next(), Some(cause.name()), "{shown}");
    }
    let mut names = Nonconformance::NAMES.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), Nonconformance::COUNT);
}

#[test]
fn display_forms() {
    let m = PrivateMessage::decode(&msg(1, 0x81, 3, 15)).unwrap();
    assert_eq!(m.to_string(), "v1 send=4096 recv=16384 ri=1 reserved=0x80");
    assert_eq!(
        PrivateMessage::decode(&[1, 2, 3, 4, 1, 0, 0, 0])
            .unwrap_err()
            .to_string(),
        "bad_magic found=0x01020304"
    );
}
