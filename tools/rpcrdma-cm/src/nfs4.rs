// SPDX-License-Identifier: GPL-2.0

//! The NFSv4.0 COMPOUNDs the tool sends (RFC 7530): read-only
//! PUTROOTFH + GETATTR pairs (sized to the XDR unit with more PUTROOTFH
//! and the tag) and a READ by path, AUTH_SYS, and the status of a
//! COMPOUND's reply.

use crate::oncrpc::NFS_PROGRAM;

/// XDR opaque: length, octets, padding.
pub(crate) fn xdr_opaque(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
    out.resize(out.len() + (4 - data.len() % 4) % 4, 0);
}

/// Append XDR words.
pub(crate) fn words(out: &mut Vec<u8>, w: &[u32]) {
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

/// The longest COMPOUND tag sent: Linux nfsd refuses longer ones
/// (NFSD4_MAX_TAGLEN) and echoes it in the Reply, as RFC 7530 says a
/// server does.
pub(crate) const MAX_TAG: u32 = 128;

/// The most operations in one COMPOUND: Linux nfsd before 6.13 refuses
/// COMPOUNDs of more (NFSD_MAX_OPS_PER_COMPOUND).
pub(crate) const MAX_OPS: u32 = 50;

/// The start of an ONC RPC call (xid 0, patched when sent) of an NFSv4.0
/// COMPOUND of `ops` operations, with AUTH_SYS root credentials, a tag of
/// `tag` octets ("t" each) and minor version 0; the operations follow.
fn compound_call(tag: u32, ops: u32) -> Vec<u8> {
    let mut cred = Vec::new();
    words(&mut cred, &[0]);
    xdr_opaque(&mut cred, b"rpcrdma-cm");
    words(&mut cred, &[0, 0, 0]);
    let mut c = Vec::new();
    words(&mut c, &[0, 0, 2, NFS_PROGRAM, 4, 1, 1]);
    xdr_opaque(&mut c, &cred);
    words(&mut c, &[0, 0]);
    xdr_opaque(&mut c, &vec![b't'; tag as usize]);
    words(&mut c, &[0, ops]);
    c
}

/// An ONC RPC call (xid 0, patched when sent) of an NFSv4.0 COMPOUND of
/// `pairs` PUTROOTFH + GETATTR, with AUTH_SYS root credentials.
#[cfg(test)]
pub(crate) fn getattr_compound(pairs: u32) -> Vec<u8> {
    sized_compound(pairs, 0, 0)
}

/// An ONC RPC call (xid 0, patched when sent) of an NFSv4.0 COMPOUND of
/// `pairs` PUTROOTFH + GETATTR, then `extra` PUTROOTFH, with a tag of
/// `tag` octets: read-only, and each part adds a fixed number of octets
/// to the Reply (the server echoes the tag), so that a Reply can be sized
/// to the XDR unit.
pub(crate) fn sized_compound(pairs: u32, extra: u32, tag: u32) -> Vec<u8> {
    let mut c = compound_call(tag, pairs * 2 + extra);
    for _ in 0..pairs {
        // PUTROOTFH; GETATTR with a two-word bitmap
        words(&mut c, &[24, 9, 2, GETATTR_BITMAP[0], GETATTR_BITMAP[1]]);
    }
    for _ in 0..extra {
        words(&mut c, &[24]);
    }
    c
}

/// An ONC RPC call (xid 0, patched when sent) of an NFSv4.0 COMPOUND
/// PUTROOTFH, a LOOKUP of each name of `path`, READ `count` octets from
/// offset 0 with the anonymous stateid, with AUTH_SYS root credentials.
pub(crate) fn read_compound(path: &[String], count: u32) -> Vec<u8> {
    let mut c = compound_call(0, path.len() as u32 + 2);
    // PUTROOTFH; LOOKUP each name; READ: stateid (seqid and other, zero),
    // offset, count.
    words(&mut c, &[24]);
    for name in path {
        words(&mut c, &[15]);
        xdr_opaque(&mut c, name.as_bytes());
    }
    words(&mut c, &[25, 0, 0, 0, 0, 0, 0, count]);
    c
}

/// `PATH`, a file below the server's NFSv4 root ("dir/file"), as the
/// names to LOOKUP in turn.
pub(crate) fn nfs_path(path: &str) -> Result<Vec<String>, String> {
    let names: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(str::to_owned)
        .collect();
    if names.iter().any(|n| n.is_empty() || n == "." || n == "..") {
        return Err(format!(
            "'{path}': a file below the server's NFSv4 root, as NAME or DIR/NAME"
        ));
    }
    if names.iter().any(|n| n.len() > 255) || names.len() > 16 {
        return Err(format!(
            "'{path}': names of at most 255 octets, at most 16 of them"
        ));
    }
    Ok(names)
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
        let c = read_compound(&["big".into()], 3000);
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
    fn sized_compound_layout() {
        let plain = getattr_compound(2);
        // One more PUTROOTFH: one word; a tag of 5 octets: two words.
        assert_eq!(sized_compound(2, 1, 0).len(), plain.len() + 4);
        assert_eq!(sized_compound(2, 0, 5).len(), plain.len() + 8);
        let c = sized_compound(1, 2, 4);
        let word = |i: usize| u32::from_be_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
        // The tag's length, its octets, minor version 0, 4 operations.
        let at = c.len() - 4 * 7 - 16;
        assert_eq!(word(at), 4);
        assert_eq!(&c[at + 4..at + 8], b"tttt");
        assert_eq!((word(at + 8), word(at + 12)), (0, 4));
        assert_eq!(&c[c.len() - 8..], &[0, 0, 0, 24, 0, 0, 0, 24]);
    }

    #[test]
    fn paths_are_names_below_the_root() {
        assert_eq!(nfs_path("big"), Ok(vec!["big".to_string()]));
        assert_eq!(
            nfs_path("/srv/nfs/big"),
            Ok(vec!["srv".into(), "nfs".into(), "big".into()])
        );
        for bad in ["", "a//b", "a/../b", "./a", "a/"] {
            assert!(nfs_path(bad).is_err(), "{bad}");
        }
        assert!(nfs_path(&"x".repeat(256)).is_err());
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
