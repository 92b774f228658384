// SPDX-License-Identifier: GPL-2.0

//! ONC RPC messages (RFC 5531) the tool sends and reads: the NULL call
//! and its reply.

pub(crate) const NFS_PROGRAM: u32 = 100_003;

/// The NULL procedure CALL for `program`/`version` with AUTH_NONE.
pub(crate) fn null_call(xid: u32, program: u32, version: u32) -> Vec<u8> {
    let words = [
        xid, 0, // CALL
        2, // RPC version
        program, version, 0, // procedure NULL
        0, 0, // credential AUTH_NONE, empty
        0, 0, // verifier AUTH_NONE, empty
    ];
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

/// What a reply to the NULL call said.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) enum Reply {
    /// Accepted, SUCCESS.
    Success,
    /// Accepted with another status (1 PROG_UNAVAIL, 2 PROG_MISMATCH with
    /// the supported range, 3 PROC_UNAVAIL, 4 GARBAGE_ARGS, 5 SYSTEM_ERR).
    NotSuccess {
        /// The accept_stat.
        accept_stat: u32,
        /// For PROG_MISMATCH: the lowest and highest version supported.
        range: Option<(u32, u32)>,
    },
    /// Denied: reject_stat 0 RPC_MISMATCH, 1 AUTH_ERROR.
    Denied {
        /// The reject_stat.
        reject_stat: u32,
    },
}

impl std::fmt::Display for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Reply::Success => f.write_str("SUCCESS"),
            Reply::NotSuccess {
                range: Some((lo, hi)),
                ..
            } => write!(f, "PROG_MISMATCH (versions {lo}..{hi})"),
            Reply::NotSuccess { accept_stat, .. } => f.write_str(match accept_stat {
                1 => "PROG_UNAVAIL",
                3 => "PROC_UNAVAIL",
                4 => "GARBAGE_ARGS",
                5 => "SYSTEM_ERR",
                _ => "accept_stat unknown",
            }),
            Reply::Denied { reject_stat: 0 } => f.write_str("MSG_DENIED RPC_MISMATCH"),
            Reply::Denied { reject_stat: 1 } => f.write_str("MSG_DENIED AUTH_ERROR"),
            Reply::Denied { reject_stat } => write!(f, "MSG_DENIED reject_stat {reject_stat}"),
        }
    }
}

/// The xid of an RPC message, if it has one.
pub(crate) fn xid_of(msg: &[u8]) -> Option<u32> {
    msg.get(..4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Decode a reply record; `Err` says why it is not a reply to `xid`.
pub(crate) fn parse_reply(rec: &[u8], xid: u32) -> Result<Reply, String> {
    let mut words = rec
        .chunks(4)
        .map(|c| <[u8; 4]>::try_from(c).map(u32::from_be_bytes));
    let mut next = |what: &str| -> Result<u32, String> {
        match words.next() {
            Some(Ok(w)) => Ok(w),
            _ => Err(format!("reply ends before {what} ({} octets)", rec.len())),
        }
    };
    let got_xid = next("xid")?;
    if got_xid != xid {
        return Err(format!("xid {got_xid:#x}, expected {xid:#x}"));
    }
    if next("message type")? != 1 {
        return Err("not a REPLY".into());
    }
    match next("reply status")? {
        0 => {
            next("verifier flavor")?;
            let len = next("verifier length")?;
            if len > 400 {
                return Err(format!("verifier length {len} exceeds 400"));
            }
            for _ in 0..len.div_ceil(4) {
                next("verifier body")?;
            }
            match next("accept status")? {
                0 => Ok(Reply::Success),
                2 => {
                    let low = next("low version")?;
                    let high = next("high version")?;
                    Ok(Reply::NotSuccess {
                        accept_stat: 2,
                        range: Some((low, high)),
                    })
                }
                s => Ok(Reply::NotSuccess {
                    accept_stat: s,
                    range: None,
                }),
            }
        }
        1 => Ok(Reply::Denied {
            reject_stat: next("reject status")?,
        }),
        s => Err(format!("reply status {s} is neither accepted nor denied")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Big-endian XDR words.
    fn words(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    #[test]
    fn null_call_layout() {
        let c = null_call(7, NFS_PROGRAM, 3);
        assert_eq!(c.len(), 40);
        assert_eq!(&c[12..16], &100_003u32.to_be_bytes());
    }

    #[test]
    fn reply_parsing() {
        assert_eq!(
            parse_reply(&words(&[9, 1, 0, 0, 0, 0]), 9),
            Ok(Reply::Success)
        );
        assert_eq!(
            parse_reply(&words(&[9, 1, 0, 0, 0, 2, 2, 4]), 9),
            Ok(Reply::NotSuccess {
                accept_stat: 2,
                range: Some((2, 4))
            })
        );
        assert_eq!(
            parse_reply(&words(&[9, 1, 1, 1]), 9),
            Ok(Reply::Denied { reject_stat: 1 })
        );
        assert!(parse_reply(&words(&[8, 1, 0]), 9).is_err());
        assert!(parse_reply(&words(&[9, 0, 0]), 9).is_err());
        assert!(parse_reply(&words(&[9, 1, 2]), 9).is_err());
        assert!(parse_reply(&words(&[9, 1, 0, 0, 0xffff_ffff]), 9).is_err());
        assert!(parse_reply(&words(&[9, 1, 0, 0, 8, 1]), 9).is_err());
        assert!(parse_reply(&[0, 0, 0], 9).is_err());
    }
}
