// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm conform`: which requirements of RFC 8797 an NFS/RDMA server
//! meets, as far as a requester can observe them.
//!
//! Every check connects with chosen private data, looks at the Accept,
//! and sends at most a NULL call, read-only NFSv4.0 COMPOUNDs (PUTROOTFH +
//! GETATTR, repeated) of at most 1 KB each, and with `--file` a read-only
//! READ of that file. The expectation of each check is computed here from
//! what was sent, what the server's Accept on that connection said and
//! the RFC's rules, written out in this module; the protocol core's
//! negotiation is not consulted, so that the tool judges servers (and the
//! module) independently of the code that runs in them.
//!
//! Reply sizes are measured, not guessed ([`sizing`]): COMPOUNDs of one
//! and two PUTROOTFH + GETATTR pairs, one with a further PUTROOTFH and one
//! with a tag give the Send of any COMPOUND of that kind, so that each
//! threshold is judged with a Reply exactly at it and one XDR unit (4
//! octets) above; past the COMPOUNDs' reach, a READ of `--file`.
//!
//! The checks of the Accept and of which requests are accepted are in
//! [`accept`], the threshold checks in [`threshold`], the Remote
//! Invalidation checks in [`remote_invalidation`], the report in
//! [`report`]; the connection is [`crate::transport::rpcrdma_session`].

mod accept;
mod remote_invalidation;
pub(crate) mod report;
mod sizing;
mod threshold;

pub(crate) use report::{Check, Verdict};

use crate::args::{positive_seconds, seconds};
use crate::error::{Exit, Failure};
use crate::output::emit;
use crate::report::hex;
use crate::transport::rdma::NFS_RDMA_PORT;
use crate::transport::rpcrdma_session::{self, read_path, Budget, Refusal, Session};
use accept::{accepted_checks, check_accept, ServerLimits};
use clap::Args;
use remote_invalidation::remote_invalidation_checks;
use report::{ConformReport, Format, NoRun, Outcome, RunFacts};
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime};
use threshold::{calibration_check, every_threshold_check, Run};

/// The magic of an RPC-over-RDMA private data message (RFC 8797 section
/// 4), in big-endian order.
const MAGIC: [u8; 4] = [0xf6, 0xab, 0x0e, 0x18];

/// The magic with its octets reversed (a little-endian sender).
const MAGIC_SWAPPED: [u8; 4] = [0x18, 0x0e, 0xab, 0xf6];

/// RFC 8797's default inline threshold, both directions (RFC 8166 section 3.3.3).
const DEFAULT_INLINE: u32 = 1024;

/// Arguments of `conform`.
#[derive(Args, Debug)]
#[command(after_help = concat!(
    "Example:\n",
    "  $ rpcrdma-cm conform 192.168.100.1\n",
    "  NOT CONFORMANT: 38 pass, 6 fail, 3 not applicable, 0 could not tell (6 of the failures a known deviation, XFAIL below)\n",
    "  192.168.100.1:20049 over InfiniBand/RoCE: Accept f6ab0e1801010303\n",
    "  pass  §4          accept.magic: the Accept's message starts with the magic ...\n",
    "        sent: private data f6ab0e180100ffff\n",
    "        got:  f6ab0e1801010303 (196 octets)\n",
    "  ...\n",
    "  FAIL  §5          request.none.above: ... no inline Reply above 1024 octets ...\n",
    "  ...\n\n",
    "It only connects, sends a NULL call and read-only NFSv4.0 COMPOUNDs\n",
    "(PUTROOTFH + GETATTR) of at most 1 KB (and READs of --file), and\n",
    "disconnects: safe against a production server (but\n",
    "--include-overread-probes). Each threshold is judged with a Reply exactly\n",
    "at it and one 4 octets above; without --file, thresholds above about\n",
    "4 KB cannot be reached (could not tell). Verdicts: pass, FAIL, n/a (not applicable here),\n",
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
    /// Over iWARP, also send a request of four octets (`request.short`):
    /// svcrdma without the series' length check reads past the private
    /// data it copied (a slab out-of-bounds read), so never against a
    /// production server that may lack it.
    #[arg(long)]
    pub include_overread_probes: bool,
    /// A file below the server's NFSv4 root (NAME or DIR/NAME) that this
    /// host may read, at least 4 KB longer than the largest threshold
    /// checked (68 KB for 64 KB; up to 260 KB for a server that sends
    /// 256 KB), that no client writes: Replies the COMPOUNDs cannot reach
    /// (above about 4 KB) are sized with a READ of it (the anonymous
    /// stateid). The host must be in the export.
    #[arg(long, value_name = "PATH", value_parser = file_arg)]
    pub file: Option<(String, Vec<String>)>,
    /// The report's form on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print JSON instead of text (the same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

/// clap value parser for `--file PATH`: the path as given and as the
/// names to look up, whose READ fits in a call of at most 1 KB.
fn file_arg(s: &str) -> Result<(String, Vec<String>), String> {
    read_path(s).map(|path| (s.to_string(), path))
}

/// What a run does beside the checks every run makes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Options<'a> {
    /// Only the Accept and which requests are accepted (no RPC).
    pub accept_only: bool,
    /// Send the short request over iWARP (`--include-overread-probes`).
    pub overread_probes: bool,
    /// The file to READ (`--file`), as given and as names.
    pub file: Option<&'a (String, Vec<String>)>,
}

/// An RPC-over-RDMA private data message as this tool builds it.
fn message(version: u8, flags: u8, send_code: u8, recv_code: u8) -> Vec<u8> {
    let mut m = MAGIC.to_vec();
    m.extend_from_slice(&[version, flags, send_code, recv_code]);
    m
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
            known_deviation: None,
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

/// The transport, the Accept (hex) and the checks of a run.
pub(crate) type Findings = (&'static str, String, Vec<Check>);

/// Run every check against `addr`; `Err` when the first, conforming,
/// connection could not be made (nothing could be checked).
pub(crate) fn conform(
    addr: SocketAddr,
    budget: Budget,
    opts: Options<'_>,
) -> Result<Findings, NoRun> {
    let mut c = Checks { list: Vec::new() };
    // The reference connection: this side can receive 256 KB, so the
    // server's own send size is what limits its Replies.
    let reference = message(1, 0, 255, 255);
    let mut s = Session::open(addr, Some(&reference), budget)
        .map_err(|r| first_refusal(addr, r, budget))?;
    let iwarp = s.is_iwarp();
    // Only iWARP delivers private data of the length sent.
    let short = iwarp && opts.overread_probes;
    let accept = s.accept.clone();
    check_accept(&mut c, &reference, &accept, iwarp);
    let transport = if iwarp { "iWARP" } else { "InfiniBand/RoCE" };
    let accept_hex = hex(&accept[..accept.len().min(8)]);
    if opts.accept_only {
        s.close();
        accepted_checks(&mut c, addr, budget, short);
        short_request_not_sent(&mut c, iwarp, short);
        return Ok((transport, accept_hex, c.list));
    }
    let file = opts.file.map(|(f, path)| (f.as_str(), path.clone()));
    let reference_server = ServerLimits::of(&accept);
    let sizes = calibration_check(&mut c, &mut s, &reference, reference_server, file);
    s.close();
    let mut run = Run {
        checks: c,
        addr,
        budget,
        sizes,
        reference: reference_server,
    };
    every_threshold_check(&mut run, &reference, short);
    let mut c = run.checks;
    short_request_not_sent(&mut c, iwarp, short);
    remote_invalidation_checks(&mut c, addr, budget);
    Ok((transport, accept_hex, c.list))
}

/// `request.short`, not applicable, when the short request was not sent
/// (`short` false): over InfiniBand and RoCE it cannot be, over iWARP only
/// with `--include-overread-probes`.
fn short_request_not_sent(c: &mut Checks, iwarp: bool, short: bool) {
    let why = match (iwarp, short) {
        (_, true) => return,
        (false, _) => {
            "InfiniBand and RoCE pad a REQ to 56 octets: a short request cannot be sent (use siw)"
        }
        (true, false) => {
            "not sent: svcrdma without the length check of the client's private data reads \
             past it (--include-overread-probes sends it)"
        }
    };
    c.add(
        "request.short",
        "§5",
        "a request shorter than eight octets is a non-conforming one",
        "-",
        why,
        Verdict::NotApplicable,
    );
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
        Ok(addr) => (
            addr.to_string(),
            conform(
                addr,
                budget,
                Options {
                    accept_only: args.accept_only,
                    overread_probes: args.include_overread_probes,
                    file: args.file.as_ref(),
                },
            ),
        ),
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
            .any(|c| c.got.contains(rpcrdma_session::DEADLINE_PASSED))
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
