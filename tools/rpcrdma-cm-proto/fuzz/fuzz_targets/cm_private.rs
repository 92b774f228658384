// SPDX-License-Identifier: GPL-2.0

//! Decode arbitrary private data and negotiate against it from both roles.
//!
//! Input: octet 0 and 1 are this side's send/recv sizes (encoded), octet 2
//! bit 0 its Remote Invalidation capability; the rest is the peer's private
//! data, any length.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_cm_proto::cm_private::*;

fuzz_target!(|data: &[u8]| {
    let [send, recv, ri, peer_data @ ..] = data else {
        return;
    };
    let local = LocalLimits {
        max_send: InlineSize::from_encoded(*send),
        max_recv: InlineSize::from_encoded(*recv),
        remote_invalidation: ri & 1 == 1,
    };
    let peer = PrivateMessage::decode(peer_data);
    let n = negotiate(&local, &peer);
    assert!(n.send_threshold <= local.max_send);
    assert!(n.recv_threshold <= local.max_recv);
    assert!(!n.remote_invalidation || local.remote_invalidation);
    match peer {
        Ok(m) => {
            assert!(peer_data.len() >= MESSAGE_LEN);
            assert!(n.peer_conforming);
            assert!(n.send_threshold <= m.max_recv && n.recv_threshold <= m.max_send);
            assert_eq!(n.remote_invalidation, local.remote_invalidation && m.flags.remote_invalidation());
            // Re-encoding gives the received octets with reserved bits cleared.
            let mut want = [0u8; MESSAGE_LEN];
            want.copy_from_slice(&peer_data[..MESSAGE_LEN]);
            want[5] &= Flags::REMOTE_INVALIDATION;
            assert_eq!(m.encode(), want);
            assert_eq!(PrivateMessage::decode(&m.encode()), Ok(PrivateMessage::new(Flags::new(m.flags.remote_invalidation()), m.max_send, m.max_recv)));
            // The peer's view of us is symmetric.
            let peer_limits = LocalLimits { max_send: m.max_send, max_recv: m.max_recv, remote_invalidation: m.flags.remote_invalidation() };
            let back = negotiate(&peer_limits, &PrivateMessage::decode(&local.advertisement().encode()));
            assert_eq!(back.send_threshold, n.recv_threshold);
            assert_eq!(back.recv_threshold, n.send_threshold);
            assert_eq!(back.remote_invalidation, n.remote_invalidation);
        }
        Err(why) => {
            assert!(!n.peer_conforming);
            assert_eq!(n.send_threshold, InlineSize::MIN);
            assert_eq!(n.recv_threshold, InlineSize::MIN);
            assert!(!n.remote_invalidation);
            assert!(why.index() < Nonconformance::COUNT);
        }
    }
});
