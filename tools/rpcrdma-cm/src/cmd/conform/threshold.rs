// SPDX-License-Identifier: GPL-2.0

//! `conform`'s threshold checks (RFC 8797 sections 3.1, 4.1 and 5): the
//! Reply sizes measured, then for each kind of request whether the server
//! sends inline a Reply exactly at the threshold it must use and none an
//! XDR unit above.

use super::accept::{nonconforming_requests, ServerLimits};
use super::sizing::{measure_compounds, measure_read, verify_compounds, Probe, Sizes};
use super::{message, shown, Check, Checks, Verdict, DEFAULT_INLINE};
use crate::oncrpc::{null_call, NFS_PROGRAM};
use crate::transport::rpcrdma_session::{Answer, Budget, Refusal, Session};
use std::net::SocketAddr;

/// Measure the Reply sizes on `s` (connected with `reference`, its Accept
/// `server`): the COMPOUNDs', checked at the largest Reply the connection
/// takes inline up to 4 KB, and the READ's of `file` if one is named; said
/// as a check. The sizes if anything was measured.
pub(super) fn calibration_check(
    c: &mut Checks,
    s: &mut Session,
    reference: &[u8],
    server: ServerLimits,
    file: Option<(&str, Vec<String>)>,
) -> Option<Sizes> {
    let check_at = server.send.min(4096) / 4 * 4;
    let compound =
        measure_compounds(s).and_then(|k| verify_compounds(s, &k, check_at).map(|seen| (k, seen)));
    let named = file.as_ref().map(|(f, _)| f.to_string());
    let read = file.map(|(f, path)| measure_read(s, f, path));
    let mut got = match &compound {
        Ok((k, seen)) => format!(
            "COMPOUND: a Send of {} octets, {} more per pair, {} per further PUTROOTFH, {} per 4 octets of tag ({seen})",
            k.first, k.step, k.putrootfh, k.tag_unit
        ),
        Err(e) => format!("COMPOUND: {e}"),
    };
    match &read {
        Some(Ok(r)) => got.push_str(&format!(
            "; READ of {}: a Send of {} octets plus the octets read",
            r.file, r.empty
        )),
        Some(Err(e)) => got.push_str(&format!("; {e}")),
        None => {}
    }
    let measured = compound.is_ok() && read.as_ref().is_none_or(Result::is_ok);
    c.add(
        "calibration",
        "-",
        if named.is_some() {
            "Reply sizes measured: COMPOUNDs of PUTROOTFH + GETATTR (with more PUTROOTFH, with a tag) and READs of --file, inline"
        } else {
            "Reply sizes measured: COMPOUNDs of PUTROOTFH + GETATTR (with more PUTROOTFH, with a tag), inline"
        },
        format!(
            "{}; COMPOUNDs of 1 and 2 pairs, 1 pair and 1 PUTROOTFH, 1 pair and a 4-octet tag, one of {check_at} octets{}",
            shown(Some(reference)),
            named
                .map(|f| format!("; READs of 0 and 4 octets of {f}"))
                .unwrap_or_default()
        ),
        got,
        if measured {
            Verdict::Pass
        } else {
            Verdict::CouldNotTell
        },
    );
    let (read, read_error) = match read {
        Some(Ok(r)) => (Some(r), None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    let sizes = Sizes {
        compound: compound.ok().map(|(k, _)| k),
        read,
        read_error,
    };
    (sizes.compound.is_some() || sizes.read.is_some()).then_some(sizes)
}

/// A run against one server.
pub(super) struct Run {
    /// The checks so far.
    pub checks: Checks,
    /// The server.
    pub addr: SocketAddr,
    /// Time allowed per connection and call, and for the whole run.
    pub budget: Budget,
    /// The Reply sizes, if measured.
    pub sizes: Option<Sizes>,
    /// The first connection's Accept (for a connection refused, which has
    /// none of its own).
    pub reference: ServerLimits,
}

/// The server's answer to a call whose Reply's Send is `predicted` octets,
/// against a threshold of `threshold` octets: within it must come inline,
/// above it must not.
fn judge_reply(answer: &Answer, predicted: u32, threshold: u32) -> Verdict {
    let within = predicted <= threshold;
    match answer {
        Answer::Inline { len, .. } if *len as u32 > threshold => Verdict::Fail,
        Answer::Inline { len, .. } if within && *len as u32 == predicted => Verdict::Pass,
        // Inline, but not of the size predicted: the sizes measured no
        // longer hold (e.g. an error status, a shorter file); nothing to
        // conclude.
        Answer::Inline { .. } => Verdict::CouldNotTell,
        Answer::ErrChunk { .. } if within => Verdict::Fail,
        Answer::ErrChunk { .. } => Verdict::Pass,
        // A timeout, a lost connection, another error: nothing seen.
        _ => Verdict::CouldNotTell,
    }
}

/// The two checks of a threshold: a Reply exactly at it, and one above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edge {
    /// Within the threshold: must come inline.
    Below,
    /// Above it: must not (ERR_CHUNK without a Reply chunk).
    Above,
}

impl Edge {
    /// Both, in the order the checks are made.
    const BOTH: [Edge; 2] = [Edge::Below, Edge::Above];

    /// The last part of the check's id.
    fn name(self) -> &'static str {
        match self {
            Edge::Below => "below",
            Edge::Above => "above",
        }
    }
}

/// The requirement of the `below` or `above` check of a threshold.
fn requirement(what: &str, edge: Edge, threshold: u32) -> String {
    match edge {
        Edge::Below => format!("{what}: a Reply of up to {threshold} octets comes inline"),
        Edge::Above => format!(
            "{what}: no inline Reply above {threshold} octets (ERR_CHUNK without a Reply chunk)"
        ),
    }
}

/// The `below` and `above` checks of `id`, "could not tell" because of
/// `why` (so that a run always has the same checks).
fn unjudged_thresholds(
    c: &mut Checks,
    case: &ThresholdCase<'_>,
    sent: &str,
    threshold: u32,
    why: &str,
) {
    for edge in Edge::BOTH {
        c.add(
            format!("{}.{}", case.id, edge.name()),
            case.section,
            requirement(case.what, edge, threshold),
            sent,
            why,
            Verdict::CouldNotTell,
        );
    }
}

/// Which threshold the server must hold a connection to, from what the
/// connection sent and the server's own Accept on it (RFC 8797 section
/// 3.1: the smaller of the responder's send size and the requester's
/// receive size; section 5: 1 KB for a requester without a conforming
/// message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    /// The server's own send size (the requester receives more).
    OwnSend,
    /// The requester receives this many octets.
    Receives(u32),
    /// No conforming message was sent: the RFC's default.
    Default,
}

impl Limit {
    /// The threshold, for a server whose Accept says `server`.
    fn of(self, server: ServerLimits) -> u32 {
        match self {
            Limit::OwnSend => server.send,
            Limit::Receives(recv) => recv.min(server.send),
            Limit::Default => DEFAULT_INLINE,
        }
    }
}

/// One threshold to judge: what a connection sends and what the server
/// may send it inline.
#[derive(Clone, Copy)]
struct ThresholdCase<'a> {
    /// The checks' id prefix.
    id: &'a str,
    /// The RFC section.
    section: &'static str,
    /// What the connection is, in words.
    what: &'a str,
    /// Its private data (`None`: none).
    pdata: Option<&'a [u8]>,
    /// The largest inline Reply the server may send it.
    limit: Limit,
    /// A known deviation this case's `above` failure matches when the
    /// inline Reply is within the server's own send size: its text.
    deviation: Option<&'static str>,
}

/// One connection with the case's private data, its threshold judged with
/// a Reply exactly at it and one 4 octets above; if something went
/// unanswered (no connection, a call without an answer), the whole of it
/// once more on a new connection (as [`super::twice_if_unseen`] does for a
/// single check), a failure on either try standing.
fn threshold_checks(run: &mut Run, case: ThresholdCase<'_>) {
    let before = run.checks.list.len();
    if !threshold_checks_once(run, case) {
        return;
    }
    let first: Vec<_> = run.checks.list.drain(before..).collect();
    threshold_checks_once(run, case);
    for (k, was) in run.checks.list[before..].iter_mut().zip(first) {
        // A failure seen on either try stands.
        if was.verdict == Verdict::Fail && k.verdict != Verdict::Fail {
            *k = Check {
                got: format!("{} (tried again: {})", was.got, k.got),
                ..was
            };
        } else {
            k.got = format!("{} (tried again; first: {})", k.got, was.got);
        }
    }
}

/// [`threshold_checks`], once; whether something went unanswered (no
/// connection, a call without an answer, a lost connection): worth a
/// second try.
fn threshold_checks_once(run: &mut Run, case: ThresholdCase<'_>) -> bool {
    let (addr, budget) = (run.addr, run.budget);
    let c = &mut run.checks;
    let sent = shown(case.pdata);
    let mut s = match Session::open(addr, case.pdata, budget) {
        Ok(s) => s,
        Err(r) => {
            let unanswered = !matches!(r, Refusal::Rejected(..));
            refused_case(c, &case, &sent, case.limit.of(run.reference), r);
            return unanswered;
        }
    };
    let mut unanswered = accepted_case(c, &case, &sent, &mut s);
    // This connection's own Accept decides its threshold.
    let server = ServerLimits::of(&s.accept);
    let threshold = case.limit.of(server);
    match &run.sizes {
        Some(sizes) => {
            unanswered |= edge_checks(c, &mut s, &case, &sent, sizes, server, threshold);
        }
        None => unjudged_thresholds(
            c,
            &case,
            &sent,
            threshold,
            "no Reply sizes (see calibration)",
        ),
    }
    s.close();
    unanswered
}

/// The case's connection (private data `sent`, in words) was refused `r`:
/// its acceptance judged, its thresholds (`threshold` by the first
/// connection's Accept) unjudged.
fn refused_case(c: &mut Checks, case: &ThresholdCase<'_>, sent: &str, threshold: u32, r: Refusal) {
    let (got, verdict) = match r {
        Refusal::Rejected(reason, _) => (format!("rejected (reason {reason})"), Verdict::Fail),
        Refusal::Local(e) | Refusal::Error(e) => (e, Verdict::CouldNotTell),
    };
    c.add(
        format!("{}.accepted", case.id),
        "§5",
        format!("{}: the server accepts the connection", case.what),
        sent,
        got,
        verdict,
    );
    unjudged_thresholds(c, case, sent, threshold, "no connection");
}

/// The case's connection `s` (private data `sent`, in words) was
/// accepted: that, and a NULL call on it, judged; whether the NULL went
/// unanswered.
fn accepted_case(c: &mut Checks, case: &ThresholdCase<'_>, sent: &str, s: &mut Session) -> bool {
    let null = s.call(&null_call(0, NFS_PROGRAM, 4), false);
    let unanswered = matches!(null, Answer::Other(_));
    c.add(
        format!("{}.accepted", case.id),
        "§5",
        format!(
            "{}: the server accepts the connection and answers a NULL call",
            case.what
        ),
        sent,
        format!(
            "accepted with {}; NULL: {}",
            shown(Some(&s.accept)),
            null.describe()
        ),
        match null {
            Answer::Inline { .. } => Verdict::Pass,
            // No answer, a lost connection: nothing seen.
            Answer::Other(_) => Verdict::CouldNotTell,
            _ => Verdict::Fail,
        },
    );
    unanswered
}

/// The case's `threshold` judged on `s` (private data `sent`, in words;
/// the server's Accept on it `server`) with a Reply whose Send is exactly
/// the threshold (in whole XDR units) and one 4 octets larger; whether a
/// call went unanswered.
fn edge_checks(
    c: &mut Checks,
    s: &mut Session,
    case: &ThresholdCase<'_>,
    sent: &str,
    sizes: &Sizes,
    server: ServerLimits,
    threshold: u32,
) -> bool {
    let mut unanswered = false;
    let at = threshold / 4 * 4;
    for (edge, target) in [(Edge::Below, at), (Edge::Above, at + 4)] {
        let id = format!("{}.{}", case.id, edge.name());
        let rule = requirement(case.what, edge, threshold);
        let Some((probe, call)) = sizes
            .probe(target)
            .and_then(|p| sizes.call(&p).map(|call| (p, call)))
        else {
            c.add(
                id,
                case.section,
                rule,
                sent,
                sizes.unreachable(target),
                Verdict::CouldNotTell,
            );
            continue;
        };
        let a = s.call(&call, false);
        unanswered |= matches!(a, Answer::Other(_));
        let verdict = judge_reply(&a, target, threshold);
        let how = match probe {
            Probe::Compound { .. } => "",
            Probe::Read { .. } => " (no COMPOUND reaches it)",
        };
        c.add(
            id,
            case.section,
            rule,
            format!(
                "{sent}; {}, a Reply of {target} octets{how}, no Reply chunk",
                sizes.describe(&probe)
            ),
            match &a {
                Answer::Inline { len, .. } if *len as u32 != target => format!(
                    "{}, not the {target} octets predicted (an error status, a file too short?)",
                    a.describe()
                ),
                _ => a.describe(),
            },
            verdict,
        );
        if let (Verdict::Fail, Answer::Inline { len, .. }, Some(why)) =
            (verdict, &a, case.deviation)
        {
            if edge == Edge::Above && *len as u32 <= server.send {
                if let Some(k) = c.list.last_mut() {
                    k.known_deviation = Some(why);
                }
            }
        }
    }
    unanswered
}

/// What Linux's svcrdma does with a requester that sent no conforming
/// message, RFC 8797 section 5 notwithstanding.
const LINUX_HOLDS_TO_OWN_SEND: &str = "Linux's svcrdma (with or without rpcrdma_cm) holds a \
     requester without a conforming message to the server's own send size, not 1 KB (RFC 8166 \
     clients size Reply chunks by their own buffers); rpcrdma_cm nonconforming_requester_1k=Y \
     removes it";

/// Every threshold check of a run, in order: the server's own send size
/// (connected with `reference`), the requester's receive size at 1, 4, 16
/// and 64 KB, a request with reserved flags, and each request the RFC
/// default covers (`short`: the short one too, see
/// [`nonconforming_requests`]). Each connection is held to the threshold
/// its own Accept gives.
pub(super) fn every_threshold_check(run: &mut Run, reference: &[u8], short: bool) {
    // The server never sends more inline than its own send size.
    threshold_checks(
        run,
        ThresholdCase {
            id: "threshold.own-send",
            section: "§3.1",
            what: "requester receives 256 KB",
            pdata: Some(reference),
            limit: Limit::OwnSend,
            deviation: None,
        },
    );
    // The requester's receive size.
    for (code, name) in [(0u8, "1k"), (3, "4k"), (15, "16k"), (63, "64k")] {
        let p = message(1, 0, code, code);
        let recv = (u32::from(code) + 1) * 1024;
        threshold_checks(
            run,
            ThresholdCase {
                id: &format!("threshold.{name}"),
                section: "§3.1",
                what: &format!("requester receives {recv}"),
                pdata: Some(&p),
                limit: Limit::Receives(recv),
                deviation: None,
            },
        );
    }
    // A version 1 message with reserved bits set is still version 1.
    let reserved = message(1, 0xfe, 3, 3);
    threshold_checks(
        run,
        ThresholdCase {
            id: "request.reserved-flags",
            section: "§4.1",
            what: "a version 1 request with reserved flags set, receiving 4096",
            pdata: Some(&reserved),
            limit: Limit::Receives(4096),
            deviation: None,
        },
    );
    // Requests the RFC default covers: 1 KB.
    for (id, what, pdata) in nonconforming_requests(short) {
        threshold_checks(
            run,
            ThresholdCase {
                id,
                section: "§5",
                what: &format!("{what} (the server must assume 1 KB)"),
                pdata: pdata.as_deref(),
                limit: Limit::Default,
                deviation: Some(LINUX_HOLDS_TO_OWN_SEND),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_judged_against_the_threshold() {
        let inline = |len| Answer::Inline {
            len,
            status: Some(0),
            invalidated: None,
        };
        let chunk = Answer::ErrChunk {
            len: 36,
            invalidated: None,
        };
        // Exactly at the threshold, and one XDR unit above.
        assert_eq!(judge_reply(&inline(1024), 1024, 1024), Verdict::Pass);
        assert_eq!(judge_reply(&chunk, 1024, 1024), Verdict::Fail);
        assert_eq!(judge_reply(&inline(1028), 1028, 1024), Verdict::Fail);
        assert_eq!(judge_reply(&chunk, 1028, 1024), Verdict::Pass);
        // Inline but not the size predicted: the sizes no longer hold,
        // unless it is above the threshold anyway.
        assert_eq!(
            judge_reply(&inline(1000), 1024, 1024),
            Verdict::CouldNotTell
        );
        assert_eq!(judge_reply(&inline(1100), 1028, 1024), Verdict::Fail);
        assert_eq!(judge_reply(&inline(1100), 1024, 1024), Verdict::Fail);
        assert_eq!(judge_reply(&inline(200), 1028, 1024), Verdict::CouldNotTell);
        assert_eq!(
            judge_reply(&Answer::Other("x".into()), 1028, 1024),
            Verdict::CouldNotTell
        );
        assert_eq!(
            judge_reply(&Answer::Other("x".into()), 1024, 1024),
            Verdict::CouldNotTell
        );
    }

    #[test]
    fn each_connection_held_to_its_own_accept() {
        let server = |send| ServerLimits {
            message: true,
            send,
            recv: 1024,
            remote_invalidation: false,
        };
        assert_eq!(Limit::OwnSend.of(server(4096)), 4096);
        assert_eq!(Limit::Receives(65536).of(server(4096)), 4096);
        assert_eq!(Limit::Receives(16384).of(server(65536)), 16384);
        assert_eq!(Limit::Receives(1024).of(server(65536)), 1024);
        assert_eq!(Limit::Default.of(server(65536)), DEFAULT_INLINE);
    }
}
