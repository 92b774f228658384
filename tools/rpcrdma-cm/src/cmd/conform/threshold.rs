// SPDX-License-Identifier: GPL-2.0

//! `conform`'s threshold checks (RFC 8797 sections 3.1, 4.1 and 5): the
//! Reply sizes measured, then for each kind of request whether the server
//! sends inline the Replies up to the threshold it must use and none
//! above.

use super::accept::{nonconforming_requests, ServerLimits};
use super::{message, shown, Checks, Verdict, DEFAULT_INLINE};
use crate::nfs4::getattr_compound;
use crate::oncrpc::{null_call, NFS_PROGRAM};
use crate::transport::rpcrdma_session::{Answer, Budget, Refusal, Session, MAX_CALL};
use std::net::SocketAddr;

/// The most PUTROOTFH + GETATTR pairs in one COMPOUND: Linux nfsd before
/// 6.13 refuses COMPOUNDs of more than 50 operations.
const MAX_PAIRS: u32 = 24;

/// Reply sizes of the GETATTR COMPOUND, measured: the Send of `pairs`
/// pairs is `first + (pairs - 1) * step` octets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Calibration {
    /// The Send of one pair.
    pub first: u32,
    /// What each further pair adds.
    pub step: u32,
}

impl Calibration {
    /// Octets of the Send of `pairs` pairs.
    pub fn size(&self, pairs: u32) -> u32 {
        self.first + (pairs - 1) * self.step
    }

    /// The most pairs whose Reply fits `threshold`, and the fewest whose
    /// Reply exceeds it; `None` where that needs no pair or more than
    /// [`MAX_PAIRS`] (or more than a 1 KB call holds).
    pub fn around(&self, threshold: u32) -> (Option<u32>, Option<u32>) {
        let above = if threshold < self.first {
            1
        } else {
            (threshold - self.first) / self.step + 2
        };
        let fits = |p: u32| p <= MAX_PAIRS && getattr_compound(p).len() + 40 <= MAX_CALL;
        let below = above.checked_sub(1).filter(|&p| p >= 1 && fits(p));
        (below, fits(above).then_some(above))
    }
}

/// Measure the calibration on `s`.
fn calibrate(s: &mut Session) -> Result<Calibration, String> {
    let one = s.call(&getattr_compound(1), false);
    let two = s.call(&getattr_compound(2), false);
    match (&one, &two) {
        (
            Answer::Inline {
                len: a,
                status: Some(0),
                ..
            },
            Answer::Inline {
                len: b,
                status: Some(0),
                ..
            },
        ) if b > a => Ok(Calibration {
            first: *a as u32,
            step: (*b - *a) as u32,
        }),
        _ => Err(format!(
            "PUTROOTFH + GETATTR once: {}; twice: {}",
            one.describe(),
            two.describe()
        )),
    }
}

/// Measure the calibration on `s` (connected with `reference`) and say so
/// as a check; the calibration if it was measured.
pub(super) fn calibration_check(
    c: &mut Checks,
    s: &mut Session,
    reference: &[u8],
) -> Option<Calibration> {
    let cal = calibrate(s);
    c.add(
        "calibration",
        "-",
        "Reply sizes measured: PUTROOTFH + GETATTR once and twice, inline",
        format!("{}; COMPOUNDs of 1 and 2 pairs", shown(Some(reference))),
        match &cal {
            Ok(k) => format!("a Send of {} octets plus {} per pair", k.first, k.step),
            Err(e) => e.clone(),
        },
        if cal.is_ok() {
            Verdict::Pass
        } else {
            Verdict::CouldNotTell
        },
    );
    cal.ok()
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
    pub cal: Option<Calibration>,
}

/// The server's Reply to a COMPOUND of `pairs` pairs against a threshold
/// of `threshold` octets: within it must come inline, above it must not.
fn judge_reply(answer: &Answer, predicted: u32, threshold: u32) -> Verdict {
    let within = predicted <= threshold;
    match answer {
        Answer::Inline { len, .. } if *len as u32 > threshold => Verdict::Fail,
        Answer::Inline { .. } if within => Verdict::Pass,
        // Smaller than predicted yet inline: the calibration no longer
        // holds (e.g. an error status); nothing to conclude.
        Answer::Inline { .. } => Verdict::CouldNotTell,
        Answer::ErrChunk { .. } if within => Verdict::Fail,
        Answer::ErrChunk { .. } => Verdict::Pass,
        // A timeout, a lost connection, another error: nothing seen.
        _ => Verdict::CouldNotTell,
    }
}

/// The `below` and `above` checks of `id`, "could not tell" because of
/// `why` (so that a run always has the same checks).
fn unjudged_thresholds(
    c: &mut Checks,
    id: &str,
    section: &'static str,
    what: &str,
    sent: &str,
    threshold: u32,
    why: &str,
) {
    for (name, rule) in [
        (
            "below",
            format!("a Reply of up to {threshold} octets comes inline"),
        ),
        (
            "above",
            format!("no inline Reply above {threshold} octets (ERR_CHUNK without a Reply chunk)"),
        ),
    ] {
        c.add(
            format!("{id}.{name}"),
            section,
            format!("{what}: {rule}"),
            sent,
            why,
            Verdict::CouldNotTell,
        );
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
    threshold: u32,
    /// A known deviation this case's `above` failure matches when the
    /// inline Reply is within the size given: its text.
    deviation: Option<(u32, &'static str)>,
}

/// One connection with the case's private data, its threshold judged with
/// the COMPOUNDs just below and just above it; if a check could not tell,
/// the whole of it once more on a new connection (as [`twice_if_unseen`]
/// does for a single check).
fn threshold_checks(run: &mut Run, case: ThresholdCase<'_>) {
    let before = run.checks.list.len();
    threshold_checks_once(run, case);
    let unseen = run.checks.list[before..]
        .iter()
        .any(|k| k.verdict == Verdict::CouldNotTell);
    if unseen {
        let first: Vec<String> = run.checks.list.drain(before..).map(|k| k.got).collect();
        threshold_checks_once(run, case);
        for (k, was) in run.checks.list[before..].iter_mut().zip(first) {
            k.got = format!("{} (tried again; first: {was})", k.got);
        }
    }
}

/// [`threshold_checks`], once.
fn threshold_checks_once(run: &mut Run, case: ThresholdCase<'_>) {
    let ThresholdCase {
        id,
        section,
        what,
        pdata,
        threshold,
        ..
    } = case;
    let (addr, budget, cal) = (run.addr, run.budget, run.cal);
    let c = &mut run.checks;
    let sent = shown(pdata);
    let mut s = match Session::open(addr, pdata, budget) {
        Ok(s) => s,
        Err(r) => {
            refused_case(c, case, &sent, r);
            return;
        }
    };
    accepted_case(c, case, &sent, &mut s);
    let Some(cal) = cal else {
        unjudged_thresholds(
            c,
            id,
            section,
            what,
            &sent,
            threshold,
            "no calibration (see calibration)",
        );
        s.close();
        return;
    };
    edge_checks(c, &mut s, case, &sent, cal);
    s.close();
}

/// The case's connection (private data `sent`, in words) was refused `r`:
/// its acceptance judged, its thresholds unjudged.
fn refused_case(c: &mut Checks, case: ThresholdCase<'_>, sent: &str, r: Refusal) {
    let ThresholdCase {
        id,
        section,
        what,
        threshold,
        ..
    } = case;
    let (got, verdict) = match r {
        Refusal::Rejected(reason, _) => (format!("rejected (reason {reason})"), Verdict::Fail),
        Refusal::Local(e) | Refusal::Error(e) => (e, Verdict::CouldNotTell),
    };
    c.add(
        format!("{id}.accepted"),
        "§5",
        format!("{what}: the server accepts the connection"),
        sent,
        got,
        verdict,
    );
    unjudged_thresholds(c, id, section, what, sent, threshold, "no connection");
}

/// The case's connection `s` (private data `sent`, in words) was
/// accepted: that, and a NULL call on it, judged.
fn accepted_case(c: &mut Checks, case: ThresholdCase<'_>, sent: &str, s: &mut Session) {
    let ThresholdCase { id, what, .. } = case;
    let null = s.call(&null_call(0, NFS_PROGRAM, 4), false);
    c.add(
        format!("{id}.accepted"),
        "§5",
        format!("{what}: the server accepts the connection and answers a NULL call"),
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
}

/// The case's threshold judged on `s` (private data `sent`, in words)
/// with the COMPOUNDs that `cal` says are just below and just above it.
fn edge_checks(
    c: &mut Checks,
    s: &mut Session,
    case: ThresholdCase<'_>,
    sent: &str,
    cal: Calibration,
) {
    let ThresholdCase {
        id,
        section,
        what,
        threshold,
        ..
    } = case;
    let (below, above) = cal.around(threshold);
    for (name, pairs, rule) in [
        ("below", below, "comes inline"),
        ("above", above, "does not come inline"),
    ] {
        let requirement = format!(
            "{what}: a Reply of up to {threshold} octets {rule}",
            what = what
        );
        let requirement = if name == "above" {
            format!("{what}: no inline Reply above {threshold} octets (ERR_CHUNK without a Reply chunk)")
        } else {
            requirement
        };
        let Some(p) = pairs else {
            c.add(
                format!("{id}.{name}"),
                section,
                requirement,
                sent,
                format!(
                    "no COMPOUND of at most {MAX_PAIRS} PUTROOTFH + GETATTR pairs and 1 KB has a Reply {} {threshold} octets",
                    if name == "above" { "above" } else { "within" }
                ),
                Verdict::CouldNotTell,
            );
            continue;
        };
        let a = s.call(&getattr_compound(p), false);
        let verdict = judge_reply(&a, cal.size(p), threshold);
        c.add(
            format!("{id}.{name}"),
            section,
            requirement,
            format!(
                "{sent}; COMPOUND of {p} PUTROOTFH + GETATTR, Reply {} octets, no Reply chunk",
                cal.size(p)
            ),
            a.describe(),
            verdict,
        );
        if let (Verdict::Fail, Answer::Inline { len, .. }, Some((within, why))) =
            (verdict, &a, case.deviation)
        {
            if name == "above" && *len as u32 <= within {
                if let Some(k) = c.list.last_mut() {
                    k.known_deviation = Some(why);
                }
            }
        }
    }
}

/// What Linux's svcrdma does with a requester that sent no conforming
/// message, RFC 8797 section 5 notwithstanding.
const LINUX_HOLDS_TO_OWN_SEND: &str = "Linux's svcrdma (with or without rpcrdma_cm) holds a \
     requester without a conforming message to the server's own send size, not 1 KB (RFC 8166 \
     clients size Reply chunks by their own buffers); rpcrdma_cm nonconforming_requester_1k=Y \
     removes it";

/// Every threshold check of a run, in order: the server's own send size
/// (connected with `reference`), the requester's receive size at each
/// size code edge, a request with reserved flags, and each request the
/// RFC default covers (`short`: the short one too, see
/// [`nonconforming_requests`]).
pub(super) fn every_threshold_check(
    run: &mut Run,
    reference: &[u8],
    server: ServerLimits,
    short: bool,
) {
    // The server never sends more inline than its own send size.
    threshold_checks(
        run,
        ThresholdCase {
            id: "threshold.own-send",
            section: "§3.1",
            what: &format!("requester receives 256 KB, server sends {}", server.send),
            pdata: Some(reference),
            threshold: server.send,
            deviation: None,
        },
    );
    // The requester's receive size, at every size code edge.
    for (code, name) in [(0u8, "1k"), (3, "4k"), (63, "64k")] {
        let p = message(1, 0, code, code);
        let recv = (u32::from(code) + 1) * 1024;
        threshold_checks(
            run,
            ThresholdCase {
                id: &format!("threshold.{name}"),
                section: "§3.1",
                what: &format!("requester receives {recv}"),
                pdata: Some(&p),
                threshold: recv.min(server.send),
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
            threshold: 4096u32.min(server.send),
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
                threshold: DEFAULT_INLINE,
                deviation: Some((server.send, LINUX_HOLDS_TO_OWN_SEND)),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_brackets_each_threshold() {
        let k = Calibration {
            first: 300,
            step: 250,
        };
        assert_eq!(k.size(1), 300);
        // 1024: 3 pairs = 800 fit, 4 pairs = 1050 do not.
        assert_eq!(k.around(1024), (Some(3), Some(4)));
        // Below the first reply: nothing fits, one pair is above.
        assert_eq!(k.around(200), (None, Some(1)));
        // Beyond the pairs a COMPOUND may hold: nothing above.
        assert_eq!(k.around(100_000).1, None);
    }

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
        assert_eq!(judge_reply(&inline(1000), 1000, 1024), Verdict::Pass);
        assert_eq!(judge_reply(&inline(1100), 1100, 1024), Verdict::Fail);
        assert_eq!(judge_reply(&chunk, 1100, 1024), Verdict::Pass);
        assert_eq!(judge_reply(&chunk, 1000, 1024), Verdict::Fail);
        assert_eq!(judge_reply(&inline(200), 1100, 1024), Verdict::CouldNotTell);
        assert_eq!(
            judge_reply(&Answer::Other("x".into()), 1100, 1024),
            Verdict::CouldNotTell
        );
        assert_eq!(
            judge_reply(&Answer::Other("x".into()), 1000, 1024),
            Verdict::CouldNotTell
        );
    }
}
