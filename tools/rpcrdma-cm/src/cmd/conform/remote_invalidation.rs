// SPDX-License-Identifier: GPL-2.0

//! `conform`'s Remote Invalidation checks (RFC 8797 section 3.2): no Send
//! With Invalidate unless both messages carry the R bit, none for a
//! requester without a conforming message (section 5), and the STag a Send
//! With Invalidate names is one of the request it answers.

use super::accept::ServerLimits;
use super::{message, refusal_text, shown, twice_if_unseen, Checks, Verdict};
use crate::oncrpc::{null_call, NFS_PROGRAM};
use crate::transport::rpcrdma_session::{Answer, Budget, Session, REPLY_CHUNK};
use rdmacm::RegionKind;
use std::net::SocketAddr;

/// How strong a rule derived from the section's MAY is when the requester
/// did not advertise Remote Invalidation.
const REQUESTER_MUST: &str = "derived from the MAY, and an interoperability must: a requester \
                              that did not advertise Remote Invalidation need not expect its \
                              STags invalidated";

/// The same for a requester without a Version One message: section 5's
/// MUST makes it one whose R bit is clear.
const NO_MESSAGE_MUST: &str = "section 5: the server MUST assume flag bit 8 clear; then as \
                               ri.requester-without-r, an interoperability must";

/// The Remote Invalidation checks (RFC 8797 section 3.2): a Reply With
/// Invalidate only when both messages carried the R bit, and only of an
/// STag of the request.
pub(super) fn remote_invalidation_checks(c: &mut Checks, addr: SocketAddr, budget: Budget) {
    // How strong each rule is: RFC 8797 writes no MUST NOT here, only
    // that "if both peers support it, then the responder MAY use RDMA Send
    // With Invalidate"; each check says so.
    for (id, section, pdata, requester_r, what, severity) in [
        (
            "ri.requester-without-r",
            "§3.2",
            Some(message(1, 0, 3, 3)),
            false,
            "the requester's message has no R bit",
            REQUESTER_MUST,
        ),
        (
            "ri.requester-without-message",
            "§3.2, §5",
            None,
            false,
            "the requester sent no private data",
            NO_MESSAGE_MUST,
        ),
        (
            "ri.nonconforming-with-r",
            "§3.2, §5",
            Some(message(2, 1, 3, 3)),
            false,
            "the requester's private data is version 2 with flag bit 8 (Remote Invalidation) \
             set: no Version One message",
            NO_MESSAGE_MUST,
        ),
        (
            "ri.server-without-r",
            "§3.2",
            Some(message(1, 1, 3, 3)),
            true,
            "the requester's message has the R bit",
            "derived from the MAY only: the server's own Accept did not advertise the R bit",
        ),
    ] {
        let sent = format!(
            "{}; NULL with a {REPLY_CHUNK}-octet Reply chunk",
            shown(pdata.as_deref())
        );
        let requirement = format!(
            "{what}: no Send With Invalidate unless both messages carry the R bit ({severity})"
        );
        let (got, verdict) = twice_if_unseen(|| {
            remote_invalidation_once(addr, budget, pdata.as_deref(), requester_r)
        });
        c.add(id, section, requirement, sent, got, verdict);
    }
    offered_stag_check(c, addr, budget);
}

/// One Remote Invalidation check on a new connection with `pdata`
/// (`requester_r`: whether it carries the R bit): what came back and the
/// verdict.
fn remote_invalidation_once(
    addr: SocketAddr,
    budget: Budget,
    pdata: Option<&[u8]>,
    requester_r: bool,
) -> (String, Verdict) {
    let mut s = match Session::open(addr, pdata, budget) {
        Ok(s) => s,
        Err(refusal) => return (refusal_text(&refusal), Verdict::CouldNotTell),
    };
    let server = ServerLimits::of(&s.accept);
    if requester_r && server.remote_invalidation {
        s.close();
        return (
            "the Accept carries the R bit too: the server may use Send With Invalidate".into(),
            Verdict::NotApplicable,
        );
    }
    let a = s.call(&null_call(0, NFS_PROGRAM, 4), true);
    let chunk = offered(&s);
    let unreported = if a.with_invalidate() || matches!(a, Answer::Other(_)) {
        None
    } else {
        unreported_invalidation(&mut s)
    };
    let verdict = match (a.with_invalidate(), &a, unreported) {
        (true, _, _) | (_, _, Some(true)) => Verdict::Fail,
        (_, Answer::Other(_), _) | (_, _, None) => Verdict::CouldNotTell,
        _ => Verdict::Pass,
    };
    s.close();
    (
        format!(
            "Accept R bit {}; {chunk}; {}{}",
            u8::from(server.remote_invalidation),
            a.describe(),
            unreported_text(unreported)
        ),
        verdict,
    )
}

/// `ri.offered-stag`: a Send With Invalidate names an STag of the request
/// it answers. Derived: RFC 8797 section 3.2's Responder's Choice lets the
/// responder "invalidate any STag in an RPC-over-RDMA request", and a
/// requester can only match an invalidated STag to the request answered
/// (Linux's xprtrdma compares it with that request's registrations). Two
/// NULL calls on one connection whose message has the R bit, each with a
/// Reply chunk of its own: a stale STag (the previous call's) is seen too.
fn offered_stag_check(c: &mut Checks, addr: SocketAddr, budget: Budget) {
    let pdata = message(1, 1, 3, 3);
    let sent = format!(
        "{}; two NULL calls on one connection, each with a {REPLY_CHUNK}-octet Reply chunk of \
         its own",
        shown(Some(&pdata))
    );
    let (got, verdict) = twice_if_unseen(|| offered_stag_once(addr, budget, &pdata));
    c.add(
        "ri.offered-stag",
        "§3.2",
        "a Send With Invalidate invalidates an STag of the request it answers (derived from \
         Responder's Choice, \"any STag in an RPC-over-RDMA request\", and an \
         interoperability must: a requester matches the STag invalidated to the request \
         answered)",
        sent,
        got,
        verdict,
    );
}

/// One `ri.offered-stag` check on a new connection with `pdata`.
fn offered_stag_once(addr: SocketAddr, budget: Budget, pdata: &[u8]) -> (String, Verdict) {
    let mut s = match Session::open(addr, Some(pdata), budget) {
        Ok(s) => s,
        Err(refusal) => return (refusal_text(&refusal), Verdict::CouldNotTell),
    };
    let server = ServerLimits::of(&s.accept);
    let mut seen = Vec::new();
    let mut invalidated = false;
    let iwarp = s.is_iwarp();
    for call in 1..=2 {
        let a = s.call(&null_call(0, NFS_PROGRAM, 4), true);
        let Some(region) = s.last_region() else {
            s.close();
            return (
                format!("call {call}: {}", a.describe()),
                Verdict::CouldNotTell,
            );
        };
        let chunk = offered(&s);
        let said = format!("call {call}: {chunk}; {}", a.describe());
        let verdict = match (&a, a.invalidated(), region.kind) {
            (Answer::Other(_), _, _) => Some(Verdict::CouldNotTell),
            (_, Some(k), _) if k != region.handle => Some(Verdict::Fail),
            (_, Some(_), _) => {
                invalidated = true;
                None
            }
            // The receive failed as a remote invalid request: with a window
            // offered (an STag the device invalidates remotely), the STag
            // named was another (rxe uses the status for a Send longer
            // than the receive buffer too: 260 KB here, for a NULL call).
            (Answer::InvalidateRefused, _, RegionKind::Window) => Some(Verdict::Fail),
            // A memory region's own rkey, which a hardware HCA (and rxe)
            // may refuse to invalidate: nothing is learnt.
            (Answer::InvalidateRefused, _, RegionKind::Region) => Some(Verdict::CouldNotTell),
            (_, None, RegionKind::Region) if iwarp => {
                // siw: an invalidation is not reported; a Send from the
                // chunk's memory fails if its STag was the one invalidated
                // (the connection ends then: one call is all it shows).
                let unreported = s.region_invalidated();
                seen.push(format!("{said}{}", unreported_text(unreported)));
                s.close();
                return match unreported {
                    Some(true) => (seen.join("; "), Verdict::Pass),
                    Some(false) => (
                        format!(
                            "{}; no Send With Invalidate of the offered STag seen (this \
                             provider does not report one of another STag)",
                            seen.join("; ")
                        ),
                        Verdict::NotApplicable,
                    ),
                    None => (seen.join("; "), Verdict::CouldNotTell),
                };
            }
            (_, None, _) => None,
        };
        seen.push(said);
        if let Some(verdict) = verdict {
            s.close();
            return (seen.join("; "), verdict);
        }
    }
    s.close();
    let head = format!("Accept R bit {}", u8::from(server.remote_invalidation));
    if invalidated {
        (format!("{head}; {}", seen.join("; ")), Verdict::Pass)
    } else {
        (
            format!(
                "{head}; {}; no Send With Invalidate: the server MAY use one, it did not",
                seen.join("; ")
            ),
            Verdict::NotApplicable,
        )
    }
}

/// The Reply chunk the last call offered, as the report says it.
fn offered(s: &Session) -> String {
    match s.last_region() {
        Some(r) => format!(
            "Reply chunk STag {:#x} ({})",
            r.handle,
            match r.kind {
                RegionKind::Window => "a type 2 memory window",
                RegionKind::Region => "a memory region's own rkey",
            }
        ),
        None => "no Reply chunk".into(),
    }
}

/// Whether the last call's Reply chunk was invalidated though no
/// completion said so. Asked only where its STag is a memory region's
/// (siw): a window's invalidation is reported in the receive completion
/// (`Some(false)` when none was), and a Send from its memory uses the
/// region's own key, which the window's invalidation leaves valid.
fn unreported_invalidation(s: &mut Session) -> Option<bool> {
    match s.last_region()?.kind {
        RegionKind::Window => Some(false),
        RegionKind::Region => s.region_invalidated(),
    }
}

/// What [`unreported_invalidation`] found, as the report says it.
fn unreported_text(unreported: Option<bool>) -> &'static str {
    match unreported {
        Some(true) => "; the Reply chunk's STag was invalidated: a Send from its memory failed",
        Some(false) => "; the Reply chunk's STag is still valid",
        None => "",
    }
}
