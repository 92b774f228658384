// SPDX-License-Identifier: GPL-2.0

//! What `conform` found, as a document: the verdicts, the run's outcome
//! and exit status, and its forms (text, JSON, TAP, JUnit XML).
//!
//! The outcome is decided here from the verdicts alone: any "fail" makes
//! the server not conformant (exit 1); otherwise any "could not tell"
//! makes the run inconclusive (exit 3, 1 with `--strict`); a run that
//! could not start because of this host is a local error (exit 4).

use crate::error::Exit;
use crate::output::json;
use clap::ValueEnum;
use serde::Serialize;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The version of the JSON document's layout: raised when a field changes
/// meaning or goes away (new fields do not raise it).
pub(crate) const SCHEMA: u32 = 1;

/// The verdict of one check.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    /// The server meets the requirement.
    Pass,
    /// The server breaks it.
    Fail,
    /// The requirement does not apply to this server or transport.
    NotApplicable,
    /// The tool could not observe what the requirement is about.
    CouldNotTell,
}

impl Verdict {
    /// The word printed.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::NotApplicable => "n/a",
            Verdict::CouldNotTell => "?",
        }
    }
}

/// One requirement, checked.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Check {
    /// A short stable name.
    pub id: String,
    /// The requirement, in a sentence.
    pub requirement: String,
    /// Where RFC 8797 (or RFC 8166) says it.
    pub section: &'static str,
    /// What this tool sent.
    pub sent: String,
    /// What came back.
    pub got: String,
    /// The verdict.
    pub verdict: Verdict,
    /// A failure that matches a known deviation of a widespread
    /// implementation, named (the text's and TAP's "XFAIL"); still a
    /// failure, still counted. `null` otherwise.
    pub known_deviation: Option<&'static str>,
}

/// How a run ended, from its verdicts (or from why it could not start).
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// Every check passed or did not apply.
    Conformant,
    /// A check failed, or the server rejected a conforming request.
    NotConformant,
    /// Nothing failed, but something could not be told: a check "could
    /// not tell", no connection could be made, the deadline was reached.
    Inconclusive,
    /// This host could not do its part: no RDMA device, no route, an
    /// address it cannot use. Nothing is known of the server.
    LocalError,
}

impl Outcome {
    /// The exit status (`strict`: an inconclusive run fails).
    pub(crate) fn exit(self, strict: bool) -> Exit {
        match self {
            Outcome::Conformant => Exit::Ok,
            Outcome::NotConformant => Exit::Peer,
            Outcome::Inconclusive if strict => Exit::Peer,
            Outcome::Inconclusive => Exit::Inconclusive,
            Outcome::LocalError => Exit::Local,
        }
    }

    /// The summary line's first word(s).
    fn headline(self) -> &'static str {
        match self {
            Outcome::Conformant => "conformant",
            Outcome::NotConformant => "NOT CONFORMANT",
            Outcome::Inconclusive => "INCONCLUSIVE",
            Outcome::LocalError => "LOCAL ERROR",
        }
    }
}

/// The form of the report on stdout.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// The summary line, then one block per check.
    Text,
    /// One JSON document (schema [`SCHEMA`]).
    Json,
    /// TAP version 13: n/a as SKIP, "could not tell" as TODO (a plain
    /// failure with --strict).
    Tap,
    /// JUnit XML: one testcase per check, n/a and "could not tell" as
    /// skipped (a failure with --strict).
    Junit,
}

/// The whole report.
#[derive(Serialize, Debug)]
pub(crate) struct ConformReport {
    /// The document's layout version ([`SCHEMA`]).
    pub schema: u32,
    /// The tool and its version.
    pub tool: String,
    /// The server.
    pub target: String,
    /// When the run started and ended, RFC 3339 UTC.
    pub started: String,
    /// See [`ConformReport::started`].
    pub finished: String,
    /// How long the run took, seconds.
    pub seconds: f64,
    /// The deadline the run had, seconds (`null`: none).
    pub deadline_seconds: Option<f64>,
    /// Whether the deadline was reached before every check was made.
    pub deadline_reached: bool,
    /// Whether "could not tell" counts as a failure (`--strict`).
    pub strict: bool,
    /// The outcome.
    pub outcome: Outcome,
    /// The exit status the tool ends with.
    pub exit: u8,
    /// Why the run could not start (no checks then).
    pub error: Option<String>,
    /// "iWARP" (exact private data lengths) or "InfiniBand/RoCE" (padded);
    /// `null` when no connection was made.
    pub transport: Option<&'static str>,
    /// The Accept's private data on a conforming request, hex (first
    /// eight octets); `null` when no connection was made.
    pub accept: Option<String>,
    /// Every check, in order.
    pub checks: Vec<Check>,
    /// How many of each verdict.
    pub pass: usize,
    /// See [`ConformReport::pass`].
    pub fail: usize,
    /// See [`ConformReport::pass`].
    pub not_applicable: usize,
    /// See [`ConformReport::pass`].
    pub could_not_tell: usize,
    /// How many failures match a known deviation (counted in `fail` too).
    pub known_deviations: usize,
}

/// How the run went, as [`ConformReport::new`] takes it.
pub(crate) struct RunFacts {
    /// The server.
    pub target: String,
    /// When it started.
    pub started: SystemTime,
    /// How long it took, seconds (a monotonic clock).
    pub seconds: f64,
    /// The deadline it had.
    pub deadline: Option<Duration>,
    /// Whether the deadline was reached.
    pub deadline_reached: bool,
    /// `--strict`.
    pub strict: bool,
}

/// Why a run made no checks, as [`ConformReport::new`] takes it.
pub(crate) struct NoRun {
    /// The outcome that follows (not conformant, inconclusive or local).
    pub outcome: Outcome,
    /// What happened, one line.
    pub error: String,
}

impl ConformReport {
    /// The report of a run: `found` is its transport, the Accept and the
    /// checks, or why there are none.
    pub(crate) fn new(facts: RunFacts, found: Result<super::Findings, NoRun>) -> Self {
        let finished = facts.started + Duration::from_secs_f64(facts.seconds);
        let (transport, accept, checks, error, outcome) = match found {
            Ok((transport, accept, checks)) => {
                let outcome = outcome_of(&checks);
                (Some(transport), Some(accept), checks, None, outcome)
            }
            Err(no) => (None, None, Vec::new(), Some(no.error), no.outcome),
        };
        let count = |v: Verdict| checks.iter().filter(|k| k.verdict == v).count();
        ConformReport {
            schema: SCHEMA,
            tool: concat!("rpcrdma-cm ", env!("CARGO_PKG_VERSION")).into(),
            target: facts.target,
            started: rfc3339(facts.started),
            finished: rfc3339(finished),
            seconds: facts.seconds,
            deadline_seconds: facts.deadline.map(|d| d.as_secs_f64()),
            deadline_reached: facts.deadline_reached,
            strict: facts.strict,
            exit: outcome.exit(facts.strict) as u8,
            outcome,
            error,
            transport,
            accept,
            pass: count(Verdict::Pass),
            fail: count(Verdict::Fail),
            not_applicable: count(Verdict::NotApplicable),
            could_not_tell: count(Verdict::CouldNotTell),
            known_deviations: checks
                .iter()
                .filter(|k| k.verdict == Verdict::Fail && k.known_deviation.is_some())
                .count(),
            checks,
        }
    }

    /// The exit status.
    pub(crate) fn exit_status(&self) -> Exit {
        self.outcome.exit(self.strict)
    }

    /// The report in `format`.
    pub(crate) fn format(&self, format: Format) -> String {
        match format {
            Format::Text => self.render(),
            Format::Json => json(self),
            Format::Tap => self.tap(),
            Format::Junit => self.junit(),
        }
    }

    /// The summary: the outcome and the counts (or the error), the server.
    pub(crate) fn summary(&self) -> String {
        let mut t = format!("{}: ", self.outcome.headline());
        match &self.error {
            Some(e) => t += e,
            None => {
                t += &format!(
                    "{} pass, {} fail, {} not applicable, {} could not tell",
                    self.pass, self.fail, self.not_applicable, self.could_not_tell
                );
                if self.known_deviations > 0 {
                    t += &format!(
                        " ({} of the failures a known deviation, XFAIL below)",
                        self.known_deviations
                    );
                }
            }
        }
        if self.deadline_reached {
            t += &format!(
                "; the deadline of {} s was reached",
                self.deadline_seconds.unwrap_or_default()
            );
        }
        if self.strict && self.outcome == Outcome::Inconclusive {
            t += " (--strict: a failure)";
        }
        t
    }

    /// Text: the summary line first, then the server and one block per
    /// check.
    pub(crate) fn render(&self) -> String {
        let mut t = self.summary() + "\n";
        if let (Some(transport), Some(accept)) = (self.transport, &self.accept) {
            t += &format!("{} over {transport}: Accept {accept}\n", self.target);
        }
        for c in &self.checks {
            t += &format!(
                "{:<4}  {:<10}  {}: {}\n      sent: {}\n      got:  {}\n",
                c.verdict.word(),
                c.section,
                c.id,
                c.requirement,
                c.sent,
                c.got
            );
            if let Some(d) = c.known_deviation {
                t += &format!("      XFAIL: {d}\n");
            }
        }
        t
    }

    /// TAP version 13.
    fn tap(&self) -> String {
        let mut t = String::from("TAP version 13\n");
        if let Some(e) = &self.error {
            let e = one_line(e);
            return t + &match self.outcome {
                Outcome::LocalError => format!("Bail out! {e}\n"),
                Outcome::Inconclusive if !self.strict => {
                    format!("1..1\nnot ok 1 - connection # TODO could not tell: {e}\n")
                }
                _ => format!("1..1\nnot ok 1 - connection\n# {e}\n"),
            };
        }
        t += &format!("1..{}\n", self.checks.len());
        for (i, c) in self.checks.iter().enumerate() {
            let (result, directive) = match c.verdict {
                Verdict::Pass => ("ok", String::new()),
                Verdict::Fail => ("not ok", String::new()),
                Verdict::NotApplicable => ("ok", format!(" # SKIP {}", one_line(&c.got))),
                Verdict::CouldNotTell if self.strict => ("not ok", String::new()),
                Verdict::CouldNotTell => (
                    "not ok",
                    format!(" # TODO could not tell: {}", one_line(&c.got)),
                ),
            };
            t += &format!("{result} {} - {} ({}){directive}\n", i + 1, c.id, c.section);
            if matches!(c.verdict, Verdict::Fail | Verdict::CouldNotTell) {
                t += &format!(
                    "# {}\n#   sent: {}\n#   got:  {}\n",
                    one_line(&c.requirement),
                    one_line(&c.sent),
                    one_line(&c.got)
                );
            }
            if let Some(d) = c.known_deviation {
                t += &format!("#   XFAIL: {}\n", one_line(d));
            }
        }
        t + &format!("# {}\n", one_line(&self.summary()))
    }

    /// JUnit XML: one testsuite, one testcase per check.
    fn junit(&self) -> String {
        let unknown_fails = usize::from(self.strict) * self.could_not_tell;
        let no_run = |o: Outcome| usize::from(self.error.is_some() && self.outcome == o);
        let no_run_failed = usize::from(
            self.error.is_some()
                && (self.outcome == Outcome::NotConformant
                    || (self.strict && self.outcome == Outcome::Inconclusive)),
        );
        let no_run_skipped = usize::from(!self.strict) * no_run(Outcome::Inconclusive);
        let mut t = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"rpcrdma-cm conform {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\" timestamp=\"{}\">\n",
            xml(&self.target),
            self.checks.len().max(usize::from(self.error.is_some())),
            self.fail + unknown_fails + no_run_failed,
            no_run(Outcome::LocalError),
            self.not_applicable + self.could_not_tell - unknown_fails + no_run_skipped,
            self.seconds,
            xml(&self.started)
        );
        if let Some(e) = &self.error {
            let element = match self.outcome {
                Outcome::LocalError => "error",
                Outcome::Inconclusive if !self.strict => "skipped",
                _ => "failure",
            };
            t += &format!(
                "  <testcase classname=\"rfc8797\" name=\"connection\">\n    <{element} message=\"{}\"/>\n  </testcase>\n",
                xml(e)
            );
        }
        for c in &self.checks {
            t += &format!(
                "  <testcase classname=\"rfc8797.{}\" name=\"{}\">\n",
                xml(c.section),
                xml(&c.id)
            );
            let mut detail = format!("{}; sent: {}; got: {}", c.requirement, c.sent, c.got);
            if let Some(d) = c.known_deviation {
                detail += &format!("; XFAIL: {d}");
            }
            t += &match c.verdict {
                Verdict::Pass => String::new(),
                Verdict::Fail => format!("    <failure message=\"{}\"/>\n", xml(&detail)),
                Verdict::CouldNotTell if self.strict => format!(
                    "    <failure message=\"could not tell: {}\"/>\n",
                    xml(&detail)
                ),
                Verdict::CouldNotTell => format!(
                    "    <skipped message=\"could not tell: {}\"/>\n",
                    xml(&detail)
                ),
                Verdict::NotApplicable => format!(
                    "    <skipped message=\"not applicable: {}\"/>\n",
                    xml(&c.got)
                ),
            };
            t += "  </testcase>\n";
        }
        t + "</testsuite>\n"
    }
}

/// The outcome of a run that made `checks`.
pub(crate) fn outcome_of(checks: &[Check]) -> Outcome {
    if checks.iter().any(|c| c.verdict == Verdict::Fail) {
        Outcome::NotConformant
    } else if checks.iter().any(|c| c.verdict == Verdict::CouldNotTell) {
        Outcome::Inconclusive
    } else {
        Outcome::Conformant
    }
}

/// `s` on one line (TAP lines and comments may not break).
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// `s` escaped for an XML attribute.
fn xml(s: &str) -> String {
    let mut t = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => t += "&amp;",
            '<' => t += "&lt;",
            '>' => t += "&gt;",
            '"' => t += "&quot;",
            '\'' => t += "&apos;",
            '\n' | '\r' | '\t' => t.push(' '),
            c if (c as u32) < 0x20 => {}
            c => t.push(c),
        }
    }
    t
}

/// `t` as RFC 3339 UTC, to the second (e.g. 2026-12-06T05:50:34Z).
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date `days` days after 1970-01-01 (the
/// well-known era arithmetic: 400-year eras of 146097 days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(id: &str, verdict: Verdict) -> Check {
        Check {
            id: id.into(),
            requirement: "r".into(),
            section: "§4",
            sent: "s".into(),
            got: "g <&>".into(),
            verdict,
            known_deviation: None,
        }
    }

    fn facts(strict: bool) -> RunFacts {
        RunFacts {
            target: "192.0.2.1:20049".into(),
            started: SystemTime::now(),
            seconds: 1.5,
            deadline: Some(Duration::from_secs(60)),
            deadline_reached: false,
            strict,
        }
    }

    #[test]
    fn dates_are_utc_calendar_dates() {
        // Known instants: the epoch, a leap day, the end of a century year.
        for (secs, want) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (978_307_199, "2000-12-31T23:59:59Z"),
            (1_796_536_234, "2026-12-06T05:50:34Z"),
        ] {
            assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(secs)), want);
        }
    }

    #[test]
    fn a_known_deviation_is_named_and_still_a_failure() {
        let mut xfail = check("request.none.above", Verdict::Fail);
        xfail.known_deviation = Some("the known one");
        let checks = vec![check("a", Verdict::Pass), xfail];
        let r = ConformReport::new(facts(false), Ok(("iWARP", "f6".into(), checks)));
        assert_eq!(
            (r.outcome, r.exit, r.fail, r.known_deviations),
            (Outcome::NotConformant, 1, 1, 1)
        );
        let text = r.render();
        assert!(text
            .lines()
            .next()
            .is_some_and(|l| l.contains("1 of the failures a known deviation")));
        assert!(text.contains("      XFAIL: the known one\n"));
        let tap = r.format(Format::Tap);
        assert!(tap.contains("not ok 2 - request.none.above"));
        assert!(tap.contains("#   XFAIL: the known one\n"));
        assert!(r
            .format(Format::Junit)
            .contains("; XFAIL: the known one\"/>"));
        let json: serde_json::Value = serde_json::from_str(&r.format(Format::Json)).unwrap();
        assert_eq!(json["checks"][1]["known_deviation"], "the known one");
        assert!(json["checks"][0]["known_deviation"].is_null());
        assert_eq!(json["known_deviations"], 1);
    }

    #[test]
    fn outcome_and_exit_follow_the_verdicts() {
        let cases = [
            (
                vec![Verdict::Pass, Verdict::NotApplicable],
                Outcome::Conformant,
                0,
                0,
            ),
            (
                vec![Verdict::Pass, Verdict::CouldNotTell],
                Outcome::Inconclusive,
                3,
                1,
            ),
            (
                vec![Verdict::CouldNotTell, Verdict::Fail],
                Outcome::NotConformant,
                1,
                1,
            ),
        ];
        for (verdicts, outcome, exit, strict_exit) in cases {
            let checks: Vec<Check> = verdicts.iter().map(|&v| check("x", v)).collect();
            let r = ConformReport::new(facts(false), Ok(("iWARP", "f6".into(), checks.clone())));
            assert_eq!((r.outcome, r.exit), (outcome, exit));
            let r = ConformReport::new(facts(true), Ok(("iWARP", "f6".into(), checks)));
            assert_eq!(r.exit, strict_exit);
            assert!(r.render().starts_with(outcome.headline()));
        }
        let local = ConformReport::new(
            facts(true),
            Err(NoRun {
                outcome: Outcome::LocalError,
                error: "no RDMA device".into(),
            }),
        );
        assert_eq!(local.exit, 4);
        assert_eq!(local.render(), "LOCAL ERROR: no RDMA device\n");
        assert!(local
            .format(Format::Tap)
            .contains("Bail out! no RDMA device\n"));
        assert!(local
            .format(Format::Junit)
            .contains("tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\""));
        // No connection at all: skipped (a failure with --strict); the
        // server refusing: a failure.
        for (outcome, strict, counts) in [
            (
                Outcome::Inconclusive,
                false,
                "failures=\"0\" errors=\"0\" skipped=\"1\"",
            ),
            (
                Outcome::Inconclusive,
                true,
                "failures=\"1\" errors=\"0\" skipped=\"0\"",
            ),
            (
                Outcome::NotConformant,
                false,
                "failures=\"1\" errors=\"0\" skipped=\"0\"",
            ),
        ] {
            let r = ConformReport::new(
                facts(strict),
                Err(NoRun {
                    outcome,
                    error: "e".into(),
                }),
            );
            assert!(
                r.format(Format::Junit).contains(counts),
                "{outcome:?} {strict}"
            );
        }
    }

    #[test]
    fn every_format_says_every_check() {
        let checks = vec![
            check("a", Verdict::Pass),
            check("b", Verdict::Fail),
            check("c", Verdict::NotApplicable),
            check("d", Verdict::CouldNotTell),
        ];
        let r = ConformReport::new(facts(false), Ok(("iWARP", "f6".into(), checks)));
        let tap = r.format(Format::Tap);
        assert!(tap.contains("1..4\nok 1 - a (§4)\nnot ok 2 - b (§4)\n"));
        assert!(tap.contains("ok 3 - c (§4) # SKIP g <&>\n"));
        assert!(tap.contains("not ok 4 - d (§4) # TODO could not tell: g <&>\n"));
        let xml = r.format(Format::Junit);
        assert!(xml.contains("tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"2\""));
        assert!(xml.contains("got: g &lt;&amp;&gt;"));
        let v: serde_json::Value = serde_json::from_str(&r.format(Format::Json)).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["outcome"], "not_conformant");
        assert_eq!(v["exit"], 1);
        assert_eq!(v["deadline_seconds"], 60.0);
        assert_eq!(v["checks"].as_array().map(Vec::len), Some(4));
    }
}
