// SPDX-License-Identifier: GPL-2.0

//! `conform`'s Remote Invalidation checks (RFC 8797 section 3.2): no Send
//! With Invalidate unless both messages carry the R bit.

use super::accept::ServerLimits;
use super::{message, shown, twice_if_unseen, Checks, Verdict};
use crate::oncrpc::{null_call, NFS_PROGRAM};
use crate::transport::rpcrdma_session::{Answer, Budget, Refusal, Session, REPLY_CHUNK};
use std::net::SocketAddr;

/// The Remote Invalidation checks (RFC 8797 section 3.2): a Reply With
/// Invalidate only when both messages carried the R bit.
pub(super) fn remote_invalidation_checks(c: &mut Checks, addr: SocketAddr, budget: Budget) {
    // How strong each rule is: RFC 8797 writes no MUST NOT here, only
    // that "if both peers support it, then the responder MAY use RDMA Send
    // With Invalidate"; each check says so.
    for (id, r_bit, what, severity) in [
        (
            "ri.requester-without-r",
            0u8,
            "the requester's message has no R bit",
            "derived from the MAY, and an interoperability must: a requester that did not \
             advertise Remote Invalidation need not expect its STags invalidated",
        ),
        (
            "ri.server-without-r",
            1u8,
            "the requester's message has the R bit",
            "derived from the MAY only: the server's own Accept did not advertise the R bit",
        ),
    ] {
        let pdata = message(1, r_bit, 3, 3);
        let sent = format!(
            "{}; NULL with a {REPLY_CHUNK}-octet Reply chunk",
            shown(Some(&pdata))
        );
        let requirement = format!(
            "{what}: no Send With Invalidate unless both messages carry the R bit ({severity})"
        );
        let (got, verdict) =
            twice_if_unseen(|| remote_invalidation_once(addr, budget, &pdata, r_bit));
        c.add(id, "§3.2", requirement, sent, got, verdict);
    }
}

/// One Remote Invalidation check on a new connection with `pdata`: what
/// came back and the verdict.
fn remote_invalidation_once(
    addr: SocketAddr,
    budget: Budget,
    pdata: &[u8],
    r_bit: u8,
) -> (String, Verdict) {
    let mut s = match Session::open(addr, Some(pdata), budget) {
        Ok(s) => s,
        Err(Refusal::Rejected(reason, _)) => {
            return (format!("rejected (reason {reason})"), Verdict::CouldNotTell)
        }
        Err(Refusal::Local(e) | Refusal::Error(e)) => return (e, Verdict::CouldNotTell),
    };
    let server = ServerLimits::of(&s.accept);
    if r_bit == 1 && server.remote_invalidation {
        s.close();
        return (
            "the Accept carries the R bit too: the server may use Send With Invalidate".into(),
            Verdict::NotApplicable,
        );
    }
    let a = s.call(&null_call(0, NFS_PROGRAM, 4), true);
    let unreported = if a.with_invalidate() || matches!(a, Answer::Other(_)) {
        None
    } else {
        s.region_invalidated()
    };
    let verdict = match (a.with_invalidate(), &a, unreported) {
        (true, _, _) | (_, _, Some(true)) => Verdict::Fail,
        (_, Answer::Other(_), _) | (_, _, None) => Verdict::CouldNotTell,
        _ => Verdict::Pass,
    };
    let after = match unreported {
        Some(true) => "; the Reply chunk's STag was invalidated: a Send from its memory failed",
        Some(false) => "; the Reply chunk's STag is still valid",
        None => "",
    };
    s.close();
    (
        format!(
            "Accept R bit {}; {}{after}",
            u8::from(server.remote_invalidation),
            a.describe()
        ),
        verdict,
    )
}
