// SPDX-License-Identifier: GPL-2.0

//! `conform`'s checks of the Accept (RFC 8797 section 4) and of which
//! requests a server accepts (section 5), and its reading of the Accept.

use super::{
    message, shown, twice_if_unseen, Checks, Verdict, DEFAULT_INLINE, MAGIC, MAGIC_SWAPPED,
};
use crate::report::hex;
use crate::transport::rpcrdma_session::{Budget, Refusal, Session};
use std::net::SocketAddr;

/// What a server's Accept says, read by this tool's own rules (RFC 8797
/// section 4): a message when the first four octets are the magic and the
/// version is 1; otherwise the RFC default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ServerLimits {
    /// Whether the Accept carried a version 1 message.
    pub message: bool,
    /// The largest Send it makes (1 KB without a message).
    pub send: u32,
    /// The largest Send it receives (1 KB without a message).
    pub recv: u32,
    /// Its R bit.
    pub remote_invalidation: bool,
}

impl ServerLimits {
    /// Read `accept`.
    pub fn of(accept: &[u8]) -> Self {
        if accept.len() >= 8 && accept[..4] == MAGIC && accept[4] == 1 {
            ServerLimits {
                message: true,
                send: (u32::from(accept[6]) + 1) * 1024,
                recv: (u32::from(accept[7]) + 1) * 1024,
                remote_invalidation: accept[5] & 1 != 0,
            }
        } else {
            ServerLimits {
                message: false,
                send: DEFAULT_INLINE,
                recv: DEFAULT_INLINE,
                remote_invalidation: false,
            }
        }
    }
}

/// The Accept's private data, judged (RFC 8797 section 4).
pub(super) fn check_accept(c: &mut Checks, sent: &[u8], accept: &[u8], iwarp: bool) {
    let sent = shown(Some(sent));
    let absent = accept.iter().all(|&b| b == 0);
    if absent {
        c.add(
            "accept.message",
            "§4",
            "the Accept carries an RPC-over-RDMA Version One message (optional: absent, the server is taken to use 1 KB and no Remote Invalidation)",
            sent,
            format!("none ({} octets, all zero): a server that predates RFC 8797", accept.len()),
            Verdict::NotApplicable,
        );
        return;
    }
    let got = format!(
        "{} ({} octets)",
        hex(&accept[..accept.len().min(8)]),
        accept.len()
    );
    if check_magic(c, &sent, accept, &got) && check_version(c, &sent, accept, &got) {
        check_flags_and_length(c, &sent, accept, &got, iwarp);
    }
}

/// The Accept's magic (`got`: the Accept in words); whether it is the
/// magic, so that the message can be read further.
fn check_magic(c: &mut Checks, sent: &str, accept: &[u8], got: &str) -> bool {
    // Private data without the magic is no RFC 8797 message at all: the
    // requester assumes the defaults (section 5), nothing to fail. Only
    // the magic in the wrong byte order is a mistake worth a flag: an
    // implementation of this RFC that forgot the big-endian rule.
    let magic = accept.get(..4).unwrap_or(accept);
    let (got_magic, magic_verdict) = if magic == MAGIC {
        (got.to_owned(), Verdict::Pass)
    } else if magic == MAGIC_SWAPPED {
        (
            format!("{got}: the magic in little-endian order (taken as no message: 1 KB, no Remote Invalidation)"),
            Verdict::Fail,
        )
    } else {
        (
            format!("{got}: no RFC 8797 message; the server is taken to use 1 KB each way and no Remote Invalidation (§5)"),
            Verdict::NotApplicable,
        )
    };
    c.add(
        "accept.magic",
        "§4",
        "the Accept's message starts with the magic 0xf6ab0e18 in big-endian order",
        sent,
        got_magic,
        magic_verdict,
    );
    magic == MAGIC
}

/// The version of an Accept that has the magic (`got`: the Accept in
/// words), and the length of one too short to hold it or its sizes;
/// whether it is a version 1 message of at least eight octets, so that
/// its flags can be read.
fn check_version(c: &mut Checks, sent: &str, accept: &[u8], got: &str) -> bool {
    // Another version is another protocol's message, which a Version One
    // requester cannot read: the defaults again (section 5), not a
    // failure of this one.
    let version = accept.get(4).copied();
    c.add(
        "accept.version",
        "§4",
        "its version is 1",
        sent,
        match version {
            Some(1) => "version 1".into(),
            Some(v) => format!("version {v}: not a Version One message; the server is taken to use 1 KB each way and no Remote Invalidation (§5)"),
            None => "version missing".into(),
        },
        match version {
            Some(1) => Verdict::Pass,
            Some(_) => Verdict::NotApplicable,
            None => Verdict::Fail,
        },
    );
    if version != Some(1) || accept.len() < 8 {
        if accept.len() < 8 && matches!(version, None | Some(1)) {
            c.add(
                "accept.length",
                "§4",
                "a version 1 message has all eight octets",
                sent,
                got,
                Verdict::Fail,
            );
        }
        return false;
    }
    true
}

/// The flags and the length of a version 1 Accept of at least eight
/// octets (`got`: the Accept in words).
fn check_flags_and_length(c: &mut Checks, sent: &str, accept: &[u8], got: &str, iwarp: bool) {
    c.add(
        "accept.reserved-flags",
        "§4.1",
        "the reserved flag bits (all but R) are zero",
        sent,
        format!("flags {:#04x}", accept[5]),
        if accept[5] & !1 == 0 {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
    );
    // The sizes are not a check: every code decodes to 1 KB..256 KB
    // (section 4.2); the report's header shows the Accept.
    c.add(
        "accept.length",
        "§4",
        "a version 1 message is exactly eight octets (checkable over iWARP only: InfiniBand and RoCE pad the REP to 196)",
        sent,
        got,
        if !iwarp {
            Verdict::NotApplicable
        } else if accept.len() == 8 {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
    );
}

/// A request the RFC's default covers (section 5): what it is and its
/// octets (`None`: no private data); `short`: also one of four octets
/// (only iWARP delivers it as sent; it makes svcrdma without the series'
/// length check read past its copy).
pub(crate) fn nonconforming_requests(
    short: bool,
) -> Vec<(&'static str, &'static str, Option<Vec<u8>>)> {
    // Each carries 4 KB sizes and the R bit where it has fields, so that
    // a server that honours them anyway is seen doing so.
    let mut swapped = MAGIC_SWAPPED.to_vec();
    swapped.extend_from_slice(&[1, 1, 3, 3]);
    let mut bad = message(1, 1, 3, 3);
    bad[3] ^= 0x01;
    let mut v = vec![
        ("request.none", "a request without private data", None),
        (
            "request.zeroed",
            "a request of eight zero octets",
            Some(vec![0; 8]),
        ),
        (
            "request.bad-magic",
            "a request whose magic is wrong",
            Some(bad),
        ),
        (
            "request.swapped-magic",
            "a request whose magic is little-endian",
            Some(swapped),
        ),
        (
            "request.version-0",
            "a request of version 0",
            Some(message(0, 1, 3, 3)),
        ),
        (
            "request.version-2",
            "a request of version 2",
            Some(message(2, 1, 3, 3)),
        ),
    ];
    if short {
        v.push((
            "request.short",
            "a request of the first four octets only (iWARP)",
            Some(MAGIC.to_vec()),
        ));
    }
    v
}

/// `--accept-only`: each request the RFC default covers, and a version 1
/// request with reserved flags, is accepted (RFC 8797 section 5: the
/// responder assumes the default and goes on), without any RPC.
pub(super) fn accepted_checks(c: &mut Checks, addr: SocketAddr, budget: Budget, short: bool) {
    let mut requests = vec![(
        "request.reserved-flags",
        "a version 1 request with reserved flags set",
        Some(message(1, 0xfe, 3, 3)),
    )];
    requests.extend(nonconforming_requests(short));
    for (id, what, pdata) in requests {
        let once = || match Session::open(addr, pdata.as_deref(), budget) {
            Ok(s) => {
                let got = format!("accepted with {}", shown(Some(&s.accept)));
                s.close();
                (got, Verdict::Pass)
            }
            Err(Refusal::Rejected(reason, _)) => {
                (format!("rejected (reason {reason})"), Verdict::Fail)
            }
            Err(Refusal::Local(e) | Refusal::Error(e)) => (e, Verdict::CouldNotTell),
        };
        // E.g. a reset racing an iWARP reject.
        let (got, verdict) = twice_if_unseen(once);
        c.add(
            format!("{id}.accepted"),
            "§5",
            format!("{what}: the server accepts the connection"),
            shown(pdata.as_deref()),
            got,
            verdict,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_short_request_only_when_asked() {
        let ids = |short| -> Vec<&str> {
            nonconforming_requests(short)
                .into_iter()
                .map(|(id, _, _)| id)
                .collect()
        };
        assert!(!ids(false).contains(&"request.short"));
        let with = nonconforming_requests(true);
        let short = with.iter().find(|(id, _, _)| *id == "request.short");
        // Four octets: the magic alone, shorter than the message.
        assert_eq!(short.and_then(|(_, _, p)| p.clone()), Some(MAGIC.to_vec()));
        assert_eq!(ids(true).len(), ids(false).len() + 1);
    }

    #[test]
    fn server_limits_read_by_the_rfc() {
        let s = ServerLimits::of(&[0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 63]);
        assert_eq!(
            (s.message, s.send, s.recv, s.remote_invalidation),
            (true, 4096, 65536, true)
        );
        for a in [
            &[][..],
            &[0; 196],
            &[0x18, 0x0e, 0xab, 0xf6, 1, 1, 3, 3],
            &[0xf6, 0xab, 0x0e, 0x18, 2, 1, 3, 3],
        ] {
            let s = ServerLimits::of(a);
            assert_eq!(
                (s.message, s.send, s.recv, s.remote_invalidation),
                (false, 1024, 1024, false)
            );
        }
    }

    #[test]
    fn accept_checks() {
        let run = |accept: &[u8], iwarp| {
            let mut c = Checks { list: Vec::new() };
            check_accept(&mut c, &message(1, 0, 3, 3), accept, iwarp);
            c.list
                .iter()
                .map(|k| (k.id.clone(), k.verdict))
                .collect::<Vec<_>>()
        };
        let mut padded = message(1, 0, 3, 3);
        padded.resize(196, 0);
        let ids = run(&padded, false);
        assert!(ids.iter().all(|(_, v)| *v != Verdict::Fail), "{ids:?}");
        assert_eq!(ids.last().unwrap().1, Verdict::NotApplicable);
        assert_eq!(
            run(&message(1, 0, 3, 3), true).last().unwrap().1,
            Verdict::Pass
        );
        assert_eq!(run(&padded, true).last().unwrap().1, Verdict::Fail);
        assert_eq!(
            run(&[0; 196], false),
            vec![("accept.message".into(), Verdict::NotApplicable)]
        );
        assert_eq!(
            run(&[0x18, 0x0e, 0xab, 0xf6, 1, 0, 3, 3], false)[0].1,
            Verdict::Fail
        );
        // RFC 8797 section 5: no message (another magic, another
        // version) is the defaults, not a failure; a magic without its
        // version is a broken Version One message.
        assert!(run(&message(2, 0, 3, 3), false)
            .contains(&("accept.version".into(), Verdict::NotApplicable)));
        assert_eq!(
            run(&[0x00, 0x11, 0x22, 0x33, 1, 0, 3, 3], false),
            vec![("accept.magic".into(), Verdict::NotApplicable)]
        );
        assert!(run(&MAGIC, true).contains(&("accept.version".into(), Verdict::Fail)));
        assert!(run(&message(1, 0x81, 3, 3), false)
            .contains(&("accept.reserved-flags".into(), Verdict::Fail)));
    }
}
