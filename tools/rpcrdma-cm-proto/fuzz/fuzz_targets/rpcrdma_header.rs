// SPDX-License-Identifier: GPL-2.0

//! Decode arbitrary octets as an RPC-over-RDMA Version One header.
//!
//! Input: any octets, as a received Send. The decoder must not panic; an
//! RDMA_MSG's payload offset lies within the input and equals the length
//! its chunk lists add up to; a header without chunks re-encodes to the
//! same 28 octets.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_cm_proto::rpcrdma_header::*;

fuzz_target!(|data: &[u8]| {
    let Ok(h) = Header::decode(data) else {
        return;
    };
    assert_eq!(h.version, VERSION_ONE);
    assert_eq!(&data[..4], &h.xid.to_be_bytes());
    if let Body::Msg {
        chunks,
        payload_offset,
    } = h.body
    {
        assert!(payload_offset <= data.len());
        // 4 fixed words, 3 list terminators, a discriminator and 5 words per
        // Read segment, a discriminator and count per Write chunk and 4
        // words per RDMA segment, a count for a Reply chunk.
        let words = 7
            + 6 * chunks.read_segments as usize
            + 2 * chunks.write_chunks as usize
            + 4 * chunks.write_segments as usize
            + chunks.reply_segments.map_or(0, |n| 1 + 4 * n as usize);
        assert_eq!(payload_offset, 4 * words);
        if chunks.is_empty() {
            let mut again = [0u8; MSG_HEADER_LEN];
            encode_msg(h.xid, h.credits, &mut again).unwrap();
            assert_eq!(&data[..MSG_HEADER_LEN], &again[..]);
        }
    }
});
