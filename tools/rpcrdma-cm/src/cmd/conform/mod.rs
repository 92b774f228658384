// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm conform`: which requirements of RFC 8797 an NFS/RDMA server
//! meets, as far as a requester can observe them.
//!
//! Every check connects with chosen private data, looks at the Accept,
//! and sends at most a NULL call and read-only NFSv4.0 COMPOUNDs
//! (PUTROOTFH + GETATTR, repeated) of at most 1 KB each. The expectation of
//! each check is computed here from what was sent, what the server's
//! Accept said and the RFC's rules, written out in this file; the
//! protocol core's negotiation is not consulted, so that the tool judges
//! servers (and the module) independently of the code that runs in them.
//!
//! Reply sizes are measured, not guessed: a calibration COMPOUND with one
//! and with two PUTROOTFH + GETATTR pairs gives the size of the Send that
//! carries the Reply as `first + (pairs - 1) * step`, from which the
//! COMPOUNDs just below and just above each threshold are chosen.

pub(crate) mod report;
pub(crate) mod session;

pub(crate) use report::{Check, Verdict};
pub(crate) use session::{Answer, Budget, Refusal, Session};

use crate::args::{positive_seconds, seconds};
use crate::error::{Exit, Failure};
use crate::nfs4::getattr_compound;
use crate::oncrpc::{null_call, NFS_PROGRAM};
use crate::output::emit;
use crate::report::hex;
use crate::transport::rdma::NFS_RDMA_PORT;
use clap::Args;
use report::{ConformReport, Format, NoRun, Outcome, RunFacts};
use session::{ServerLimits, MAX_CALL, REPLY_CHUNK};
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime};

const MAGIC: [u8; 4] = [0xf6, 0xab, 0x0e, 0x18];

/// The magic with its octets reversed (a little-endian sender).
const MAGIC_SWAPPED: [u8; 4] = [0x18, 0x0e, 0xab, 0xf6];

/// RFC 8797's default inline threshold, both directions (RFC 8166 section 3.3.3).
const DEFAULT_INLINE: u32 = 1024;

/// The most PUTROOTFH + GETATTR pairs in one COMPOUND: Linux nfsd before
/// 6.13 refuses COMPOUNDs of more than 50 operations.
const MAX_PAIRS: u32 = 24;

/// Arguments of `conform`.
#[derive(Args, Debug)]
#[command(after_help = concat!(
    "Example:\n",
    "  $ rpcrdma-cm conform 192.168.100.1\n",
    "  NOT CONFORMANT: 30 pass, 6 fail, 2 not applicable, 0 could not tell\n",
    "  192.168.100.1:20049 over InfiniBand/RoCE: Accept f6ab0e1801010303\n",
    "  pass  §4          accept.magic: the Accept's message starts with the magic ...\n",
    "        sent: private data f6ab0e180100ffff\n",
    "        got:  f6ab0e1801010303 (196 octets)\n",
    "  ...\n",
    "  FAIL  §5          request.none.above: ... no inline Reply above 1024 octets ...\n",
    "  ...\n\n",
    "It only connects, sends a NULL call and read-only NFSv4.0 COMPOUNDs\n",
    "(PUTROOTFH + GETATTR) of at most 1 KB, and disconnects: safe against a\n",
    "production server. Verdicts: pass, FAIL, n/a (not applicable here),\n",
    "? (could not tell: the tool could not observe it, e.g. no NFSv4.0).\n\n",
    "The first line of the report is the outcome: conformant, NOT CONFORMANT\n",
    "(a requirement failed, or the server rejected a conforming request),\n",
    "INCONCLUSIVE (nothing failed, something could not be told: no answer,\n",
    "no connection, the deadline) or LOCAL ERROR (this host could not do\n",
    "its part). --format json|tap|junit print the same as a document; the\n",
    "JSON always has the outcome, its exit status and schema version.\n\n",
    "Exit status: 0 conformant, 1 a requirement failed (or inconclusive\n",
    "with --strict), 2 usage error, 3 inconclusive, 4 local error (no RDMA\n",
    "device, no route, an address this host cannot use)."
))]
pub(crate) struct ConformArgs {
    /// The server: HOST, HOST:PORT or [IPV6]:PORT (default port 20049).
    pub target: String,
    /// Seconds allowed for each connection and each call.
    #[arg(long, short = 'W', default_value_t = 10.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Check the Accept's private data and that every kind of request is
    /// accepted, without any RPC (for any RDMA CM listener, e.g. one that
    /// is not an NFS server).
    #[arg(long)]
    pub accept_only: bool,
    /// Seconds allowed for the whole run: checks not made by then say
    /// "could not tell" (exit 3). 0: no deadline.
    #[arg(long, default_value_t = 600.0, value_parser = seconds)]
    pub deadline: f64,
    /// Count "could not tell" (and an inconclusive run) as a failure:
    /// exit 1 instead of 3.
    #[arg(long)]
    pub strict: bool,
    /// The report's form on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print JSON instead of text (the same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

/// An RPC-over-RDMA private data message as this tool builds it.
fn message(version: u8, flags: u8, send_code: u8, recv_code: u8) -> Vec<u8> {
    let mut m = MAGIC.to_vec();
    m.extend_from_slice(&[version, flags, send_code, recv_code]);
    m
}

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

/// A run against one server.
struct Run {
    /// The checks so far.
    checks: Checks,
    /// The server.
    addr: SocketAddr,
    /// Time allowed per connection and call, and for the whole run.
    budget: Budget,
    /// The Reply sizes, if measured.
    cal: Option<Calibration>,
}

/// Collects the checks.
struct Checks {
    /// What has been checked.
    list: Vec<Check>,
}

impl Checks {
    /// Add one.
    fn add(
        &mut self,
        id: impl Into<String>,
        section: &'static str,
        requirement: impl Into<String>,
        sent: impl Into<String>,
        got: impl Into<String>,
        verdict: Verdict,
    ) {
        self.list.push(Check {
            id: id.into(),
            requirement: requirement.into(),
            section,
            sent: sent.into(),
            got: got.into(),
            verdict,
        });
    }
}

/// Hex of private data, "none" for none.
fn shown(p: Option<&[u8]>) -> String {
    match p {
        None => "no private data".into(),
        Some(p) => format!("private data {}", hex(p)),
    }
}

/// The Accept's private data, judged (RFC 8797 section 4).
fn check_accept(c: &mut Checks, sent: &[u8], accept: &[u8], iwarp: bool) {
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
    // Private data without the magic is no RFC 8797 message at all: the
    // requester assumes the defaults (section 5), nothing to fail. Only
    // the magic in the wrong byte order is a mistake worth a flag: an
    // implementation of this RFC that forgot the big-endian rule.
    let magic = accept.get(..4).unwrap_or(accept);
    let (got_magic, magic_verdict) = if magic == MAGIC {
        (got.clone(), Verdict::Pass)
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
        &sent,
        got_magic,
        magic_verdict,
    );
    if magic != MAGIC {
        return;
    }
    // Another version is another protocol's message, which a Version One
    // requester cannot read: the defaults again (section 5), not a
    // failure of this one.
    let version = accept.get(4).copied();
    c.add(
        "accept.version",
        "§4",
        "its version is 1",
        &sent,
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
                &sent,
                got,
                Verdict::Fail,
            );
        }
        return;
    }
    c.add(
        "accept.reserved-flags",
        "§4.1",
        "the reserved flag bits (all but R) are zero",
        &sent,
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
        &sent,
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

/// `once()`, and if it could not tell (no answer, a connection that failed
/// other than by a reject: a lost message, a slow guest), once more on a
/// new connection; what came back says both tries.
fn twice_if_unseen(mut once: impl FnMut() -> (String, Verdict)) -> (String, Verdict) {
    let (got, verdict) = once();
    if verdict != Verdict::CouldNotTell {
        return (got, verdict);
    }
    let (again, verdict) = once();
    (format!("{again} (tried again; first: {got})"), verdict)
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
    } = case;
    let (addr, budget, cal) = (run.addr, run.budget, run.cal);
    let c = &mut run.checks;
    let sent = shown(pdata);
    let mut s = match Session::open(addr, pdata, budget) {
        Ok(s) => s,
        Err(r) => {
            let (got, verdict) = match r {
                Refusal::Rejected(reason, _) => {
                    (format!("rejected (reason {reason})"), Verdict::Fail)
                }
                Refusal::Local(e) | Refusal::Error(e) => (e, Verdict::CouldNotTell),
            };
            c.add(
                format!("{id}.accepted"),
                "§5",
                format!("{what}: the server accepts the connection"),
                &sent,
                got,
                verdict,
            );
            unjudged_thresholds(c, id, section, what, &sent, threshold, "no connection");
            return;
        }
    };
    let null = s.call(&null_call(0, NFS_PROGRAM, 4), false);
    c.add(
        format!("{id}.accepted"),
        "§5",
        format!("{what}: the server accepts the connection and answers a NULL call"),
        &sent,
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
                &sent,
                format!(
                    "no COMPOUND of at most {MAX_PAIRS} PUTROOTFH + GETATTR pairs and 1 KB has a Reply {} {threshold} octets",
                    if name == "above" { "above" } else { "within" }
                ),
                Verdict::CouldNotTell,
            );
            continue;
        };
        let a = s.call(&getattr_compound(p), false);
        c.add(
            format!("{id}.{name}"),
            section,
            requirement,
            format!(
                "{sent}; COMPOUND of {p} PUTROOTFH + GETATTR, Reply {} octets, no Reply chunk",
                cal.size(p)
            ),
            a.describe(),
            judge_reply(&a, cal.size(p), threshold),
        );
    }
    s.close();
}

/// The Remote Invalidation checks (RFC 8797 section 3.2): a Reply With
/// Invalidate only when both messages carried the R bit.
fn remote_invalidation_checks(c: &mut Checks, addr: SocketAddr, budget: Budget) {
    for (id, r_bit, what) in [
        (
            "ri.requester-without-r",
            0u8,
            "the requester's message has no R bit",
        ),
        (
            "ri.server-without-r",
            1u8,
            "the requester's message has the R bit",
        ),
    ] {
        let pdata = message(1, r_bit, 3, 3);
        let sent = format!(
            "{}; NULL with a {REPLY_CHUNK}-octet Reply chunk",
            shown(Some(&pdata))
        );
        let requirement =
            format!("{what}: no Send With Invalidate unless both messages carry the R bit");
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

/// A request the RFC's default covers (section 5): what it is and its
/// octets (`None`: no private data).
pub(crate) fn nonconforming_requests(
    iwarp: bool,
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
    if iwarp {
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
fn accepted_checks(c: &mut Checks, addr: SocketAddr, budget: Budget, iwarp: bool) {
    let mut requests = vec![(
        "request.reserved-flags",
        "a version 1 request with reserved flags set",
        Some(message(1, 0xfe, 3, 3)),
    )];
    requests.extend(nonconforming_requests(iwarp));
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

/// The transport, the Accept (hex) and the checks of a run.
pub(crate) type Findings = (&'static str, String, Vec<Check>);

/// Run every check against `addr`; `Err` when the first, conforming,
/// connection could not be made (nothing could be checked).
pub(crate) fn conform(
    addr: SocketAddr,
    budget: Budget,
    accept_only: bool,
) -> Result<Findings, NoRun> {
    let mut c = Checks { list: Vec::new() };
    // The reference connection: this side can receive 256 KB, so the
    // server's own send size is what limits its Replies.
    let reference = message(1, 0, 255, 255);
    let mut s = Session::open(addr, Some(&reference), budget)
        .map_err(|r| first_refusal(addr, r, budget))?;
    let iwarp = s.is_iwarp();
    let accept = s.accept.clone();
    check_accept(&mut c, &reference, &accept, iwarp);
    let transport = if iwarp { "iWARP" } else { "InfiniBand/RoCE" };
    let accept_hex = hex(&accept[..accept.len().min(8)]);
    if accept_only {
        s.close();
        accepted_checks(&mut c, addr, budget, iwarp);
        return Ok((transport, accept_hex, c.list));
    }
    let server = ServerLimits::of(&accept);
    let cal = calibrate(&mut s);
    c.add(
        "calibration",
        "-",
        "Reply sizes measured: PUTROOTFH + GETATTR once and twice, inline",
        format!("{}; COMPOUNDs of 1 and 2 pairs", shown(Some(&reference))),
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
    let cal = cal.ok();
    s.close();
    let mut run = Run {
        checks: c,
        addr,
        budget,
        cal,
    };
    // The server never sends more inline than its own send size.
    threshold_checks(
        &mut run,
        ThresholdCase {
            id: "threshold.own-send",
            section: "§3.1",
            what: &format!("requester receives 256 KB, server sends {}", server.send),
            pdata: Some(&reference),
            threshold: server.send,
        },
    );
    // The requester's receive size, at every size code edge.
    for (code, name) in [(0u8, "1k"), (3, "4k"), (63, "64k")] {
        let p = message(1, 0, code, code);
        let recv = (u32::from(code) + 1) * 1024;
        threshold_checks(
            &mut run,
            ThresholdCase {
                id: &format!("threshold.{name}"),
                section: "§3.1",
                what: &format!("requester receives {recv}"),
                pdata: Some(&p),
                threshold: recv.min(server.send),
            },
        );
    }
    // A version 1 message with reserved bits set is still version 1.
    let reserved = message(1, 0xfe, 3, 3);
    threshold_checks(
        &mut run,
        ThresholdCase {
            id: "request.reserved-flags",
            section: "§4.1",
            what: "a version 1 request with reserved flags set, receiving 4096",
            pdata: Some(&reserved),
            threshold: 4096u32.min(server.send),
        },
    );
    // Requests the RFC default covers: 1 KB.
    for (id, what, pdata) in nonconforming_requests(iwarp) {
        threshold_checks(
            &mut run,
            ThresholdCase {
                id,
                section: "§5",
                what: &format!("{what} (the server must assume 1 KB)"),
                pdata: pdata.as_deref(),
                threshold: DEFAULT_INLINE,
            },
        );
    }
    let mut c = run.checks;
    if !iwarp {
        c.add(
            "request.short",
            "§5",
            "a request shorter than eight octets is a non-conforming one",
            "-",
            "InfiniBand and RoCE pad a REQ to 56 octets: a short request cannot be sent (use siw)",
            Verdict::NotApplicable,
        );
    }
    remote_invalidation_checks(&mut c, addr, budget);
    Ok((transport, accept_hex, c.list))
}

/// Why the first, conforming, connection failed, as the run's outcome.
/// A reject is the server refusing a conforming request only if it
/// accepts a request without private data (RFC 8797 section 5 says it
/// must): a listener that rejects both (none on that port for this host,
/// a listener of another kind, the CM's own reject) tells nothing of its
/// conformance. A timeout or an unreachable peer tells nothing either; a
/// failure of this host is its own.
fn first_refusal(addr: SocketAddr, r: Refusal, budget: Budget) -> NoRun {
    match r {
        Refusal::Rejected(reason, _) => match Session::open(addr, None, budget) {
            Ok(s) => {
                s.close();
                NoRun {
                    outcome: Outcome::NotConformant,
                    error: format!(
                        "{addr}: the server rejected a conforming request (reason {reason}) but accepted one without private data"
                    ),
                }
            }
            Err(again) => NoRun {
                outcome: Outcome::Inconclusive,
                error: format!(
                    "{addr}: the connection was rejected (reason {reason}), and one without private data too ({}): no RPC-over-RDMA listener for this host there",
                    refusal_text(&again)
                ),
            },
        },
        Refusal::Local(e) => NoRun {
            outcome: Outcome::LocalError,
            error: format!("this host could not connect to {addr}: {e}"),
        },
        Refusal::Error(e) => NoRun {
            outcome: Outcome::Inconclusive,
            error: format!("{addr}: no connection: {e}"),
        },
    }
}

/// A refusal in words.
fn refusal_text(r: &Refusal) -> String {
    match r {
        Refusal::Rejected(reason, _) => format!("rejected, reason {reason}"),
        Refusal::Local(e) | Refusal::Error(e) => e.clone(),
    }
}

/// `rpcrdma-cm conform`.
pub(crate) fn conform_cmd(args: &ConformArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
    let started = SystemTime::now();
    let clock = Instant::now();
    let deadline = (args.deadline > 0.0).then(|| Duration::from_secs_f64(args.deadline));
    let budget = Budget {
        each: Duration::from_secs_f64(args.timeout),
        deadline: deadline.map(|d| Instant::now() + d),
    };
    // A malformed target is a usage error (exit 2, no report); a name
    // this host cannot resolve is its own failure, reported.
    let (target, found) = match crate::args::resolve(&args.target, NFS_RDMA_PORT) {
        Ok(addr) => (addr.to_string(), conform(addr, budget, args.accept_only)),
        Err(f) if f.exit == Exit::Usage => return Err(f),
        Err(f) => (
            args.target.clone(),
            Err(NoRun {
                outcome: Outcome::LocalError,
                error: f.message,
            }),
        ),
    };
    let deadline_reached = found.as_ref().is_ok_and(|(_, _, checks)| {
        checks
            .iter()
            .any(|c| c.got.contains(session::DEADLINE_PASSED))
    });
    let r = ConformReport::new(
        RunFacts {
            target,
            started,
            seconds: clock.elapsed().as_secs_f64(),
            deadline,
            deadline_reached,
            strict: args.strict,
        },
        found,
    );
    let format = if args.json { Format::Json } else { args.format };
    emit(out, &r.format(format));
    if let (Some(e), false) = (&r.error, format == Format::Text) {
        eprintln!("rpcrdma-cm: conform: {e}");
    }
    Ok(r.exit_status())
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
