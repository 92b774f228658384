// SPDX-License-Identifier: GPL-2.0

//! The NFSv4.0 COMPOUNDs the tool sends (RFC 7530): read-only
//! PUTROOTFH + GETATTR pairs and a READ by name, AUTH_SYS, and the status
//! of a COMPOUND's reply.

use crate::oncrpc::NFS_PROGRAM;

/// XDR opaque: length, octets, padding.
fn xdr_opaque(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
    out.resize(out.len() + (4 - data.len() % 4) % 4, 0);
}

/// Append XDR words.
fn words(out: &mut Vec<u8>, w: &[u32]) {
    for x in w {
        out.extend_from_slice(&x.to_be_bytes());
    }
}

/// The GETATTR bitmap: attributes with fixed-size values of a directory
/// (RFC 7530 section 5), so that each pair adds the same octets.
const GETATTR_BITMAP: [u32; 2] = [
    // type, change, size, fsid, fileid, files_avail/free/total,
    // maxfilesize, maxread, maxwrite
    (1 << 1)
        | (1 << 3)
        | (1 << 4)
        | (1 << 8)
        | (1 << 20)
        | (1 << 21)
        | (1 << 22)
        | (1 << 23)
        | (1 << 27)
        | (1 << 30)
        | (1 << 31),
    // mode, numlinks, space_avail/free/total/used, time_access,
    // time_metadata, time_modify, mounted_on_fileid
    (1 << 1)
        | (1 << 3)
        | (1 << 10)
        | (1 << 11)
        | (1 << 12)
        | (1 << 13)
        | (1 << 15)
        | (1 << 20)
        | (1 << 21)
        | (1 << 23),
];

/// The start of an ONC RPC call (xid 0, patched when sent) of an NFSv4.0
/// COMPOUND of `ops` operations, with AUTH_SYS root credentials, an
/// empty tag and minor version 0; the operations follow.
fn compound_call(ops: u32) -> Vec<u8> {
    let mut cred = Vec::new();
    words(&mut cred, &[0]);
    xdr_opaque(&mut cred, b"rpcrdma-cm");
    words(&mut cred, &[0, 0, 0]);
    let mut c = Vec::new();
    words(&mut c, &[0, 0, 2, NFS_PROGRAM, 4, 1, 1]);
    xdr_opaque(&mut c, &cred);
    words(&mut c, &[0, 0]);
    xdr_opaque(&mut c, b"");
    words(&mut c, &[0, ops]);
    c
}

/// An ONC RPC call (xid 0, patched when sent) of an NFSv4.0 COMPOUND of
/// `pairs` PUTROOTFH + GETATTR, with AUTH_SYS root credentials.
pub(crate) fn getattr_compound(pairs: u32) -> Vec<u8> {
    let mut c = compound_call(pairs * 2);
    for _ in 0..pairs {
        // PUTROOTFH; GETATTR with a two-word bitmap
        words(&mut c, &[24, 9, 2, GETATTR_BITMAP[0], GETATTR_BITMAP[1]]);
    }
    c
}

/// An ONC RPC call (xid 0, patched when sent) of an NFSv4.0 COMPOUND
/// PUTROOTFH, LOOKUP `name`, READ `count` octets from offset 0 with the
/// anonymous stateid, with AUTH_SYS root credentials.
pub(crate) fn read_compound(name: &str, count: u32) -> Vec<u8> {
    let mut c = compound_call(3);
    // PUTROOTFH; LOOKUP name; READ: stateid (seqid and other, zero),
    // offset, count.
    words(&mut c, &[24, 15]);
    xdr_opaque(&mut c, name.as_bytes());
    words(&mut c, &[25, 0, 0, 0, 0, 0, 0, count]);
    c
}

/// The NFS status of a COMPOUND Reply (or the RPC's accept status when it
/// is not SUCCESS); `None` if `rpc` is too short.
pub(crate) fn nfs_status(rpc: &[u8]) -> Option<u32> {
    let word = |i: usize| {
        rpc.get(i..i + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    // xid, REPLY, MSG_ACCEPTED (a denied call has no status here),
    // verifier flavor and length.
    if word(4)? != 1 || word(8)? != 0 {
        return None;
    }
    let verf_len = word(16)? as usize;
    let at = verf_len.div_ceil(4).checked_mul(4)?.checked_add(20)?;
    let accept_stat = word(at)?;
    if accept_stat != 0 {
        return Some(accept_stat);
    }
    // A NULL Reply ends here: SUCCESS. A COMPOUND's status follows.
    if rpc.len() == at + 4 {
        return Some(0);
    }
    word(at + 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_compound_layout() {
        let c = read_compound("big", 3000);
        assert_eq!(c.len() % 4, 0);
        // The last words: READ, the anonymous stateid, offset 0, count.
        let tail: Vec<u32> = c[c.len() - 32..]
            .chunks(4)
            .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        assert_eq!(tail, [25, 0, 0, 0, 0, 0, 0, 3000]);
        // LOOKUP with the name, padded.
        let at = c.len() - 32 - 12;
        assert_eq!(&c[at..at + 4], &15u32.to_be_bytes());
        assert_eq!(&c[at + 4..at + 12], &[0, 0, 0, 3, b'b', b'i', b'g', 0]);
    }

    #[test]
    fn nfs_status_is_read_after_the_verifier() {
        let mut r = Vec::new();
        words(&mut r, &[1, 1, 0, 0, 4]);
        r.extend_from_slice(&[9; 4]);
        words(&mut r, &[0, 10006]);
        assert_eq!(nfs_status(&r), Some(10006));
        assert_eq!(nfs_status(&r[..10]), None);
    }
}
