// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm probe`: what an RPC-over-RDMA listener answers to this
//! side's CM private data: the Accept or the reject, held open, repeated
//! and timed, or one NFSv4.0 READ without chunks (`--read`).

use crate::args::{positive_seconds, resolve, seconds, PrivateDataArgs};
use crate::error::{Context, Exit, Failure};
use crate::nfs4::read_compound;
use crate::output::{emit, json};
use crate::report::{hex, LocalReport, NegotiatedReport, PrivateDataReport};
use crate::transport::rdma::NFS_RDMA_PORT;
use crate::transport::rpcrdma_session::{read_path, Answer, Budget, Refusal, Session};
use clap::Args;
use rdmacm::{ConnectOptions, Connection, Error as RdmaError};
use rpcrdma_cm_proto::cm_private::{negotiate, LocalLimits, PrivateMessage};
use serde::Serialize;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Arguments of `probe`.
#[derive(Args, Debug)]
#[command(after_help = concat!(
    "Example:\n",
    "  $ rpcrdma-cm probe 192.168.100.1\n",
    "  192.168.100.1:20049 accepted\n",
    "  sent: f6ab0e1801010303 (8 octets)\n",
    "  received:\n",
    "    raw: f6ab0e1801000303 + 188 zero octets (196 octets)\n",
    "    conforming: version 1\n",
    "    ...\n\n",
    "Exit status: 0 accepted with conforming private data, 1 rejected,\n",
    "unreachable, non-conforming or not cleanly disconnected, 2 usage error."
))]
pub(crate) struct ProbeArgs {
    /// The listener: HOST, HOST:PORT or [IPV6]:PORT (default port 20049).
    pub target: String,
    /// What to send.
    #[command(flatten)]
    pub pdata: PrivateDataArgs,
    /// Seconds allowed for resolving, connecting and disconnecting.
    #[arg(long, short = 'W', default_value_t = 5.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Connect and disconnect this many times, one after the other, and
    /// print how long connecting and disconnecting took instead of the
    /// private data (every connect must be accepted with conforming
    /// private data and disconnect cleanly).
    #[arg(long, short = 'c', default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub count: u32,
    /// Keep the connection up to SECONDS after printing the report (or
    /// until the responder disconnects), so that its state can be read
    /// meanwhile; then disconnect (exit 1 if that fails).
    #[arg(long, value_name = "SECONDS", conflicts_with = "count", value_parser = seconds)]
    pub hold: Option<f64>,
    /// Once connected, send one NFSv4.0 COMPOUND (PUTROOTFH, a LOOKUP of
    /// each name of FILE, READ COUNT octets with the anonymous stateid)
    /// without any chunk, so that the whole Reply must come inline or as
    /// RDMA_ERROR, and report how it came (read-only; FILE below the
    /// server's NFSv4 root: NAME or DIR/NAME).
    #[arg(long, value_name = "FILE:COUNT", conflicts_with_all = ["count", "hold"], value_parser = read_spec)]
    pub read: Option<ReadSpec>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Latency statistics of one phase of repeated connects, microseconds.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub(crate) struct LatencyStats {
    /// The fastest.
    pub min: f64,
    /// The median (the mean of the middle two for an even count).
    pub median: f64,
    /// The arithmetic mean.
    pub mean: f64,
    /// The 90th percentile (nearest rank).
    pub p90: f64,
    /// The slowest.
    pub max: f64,
}

impl LatencyStats {
    /// The statistics of `samples` (microseconds); `None` if there are none.
    pub fn of(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        // Nearest rank: the smallest sample with at least 90 % at or below it.
        let rank = (n * 9).div_ceil(10).max(1);
        Some(LatencyStats {
            min: s[0],
            median,
            mean: s.iter().sum::<f64>() / n as f64,
            p90: s[rank - 1],
            max: s[n - 1],
        })
    }
}

/// What `probe --count N` measured.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub(crate) struct ConnectTimingReport {
    /// The listener.
    pub target: String,
    /// Connects made (all accepted with conforming private data and
    /// cleanly disconnected, or the command fails).
    pub count: u32,
    /// From creating the CM id to the accept (address and route
    /// resolution, QP creation, REQ/REP/RTU).
    pub connect_us: LatencyStats,
    /// From the disconnect request to the QP and id destroyed.
    pub disconnect_us: LatencyStats,
    /// Connect and disconnect, each connect's sum.
    pub total_us: LatencyStats,
    /// Every connect's total, microseconds, in order.
    pub total_samples_us: Vec<f64>,
}

impl ConnectTimingReport {
    /// Build the report from each connect's (connect, disconnect) times.
    pub fn new(target: String, times: &[(Duration, Duration)]) -> Option<Self> {
        let us = |d: &Duration| d.as_secs_f64() * 1e6;
        let c: Vec<f64> = times.iter().map(|(c, _)| us(c)).collect();
        let d: Vec<f64> = times.iter().map(|(_, d)| us(d)).collect();
        let t: Vec<f64> = times.iter().map(|(c, d)| us(c) + us(d)).collect();
        Some(ConnectTimingReport {
            target,
            count: u32::try_from(times.len()).ok()?,
            connect_us: LatencyStats::of(&c)?,
            disconnect_us: LatencyStats::of(&d)?,
            total_us: LatencyStats::of(&t)?,
            total_samples_us: t,
        })
    }

    /// The text form.
    pub fn render(&self) -> String {
        let line = |what: &str, s: &LatencyStats| {
            format!(
                "  {what:<10} min {:.0}  median {:.0}  mean {:.0}  p90 {:.0}  max {:.0}\n",
                s.min, s.median, s.mean, s.p90, s.max
            )
        };
        format!(
            "{} connects to {}, all accepted and cleanly disconnected (microseconds):\n{}{}{}",
            self.count,
            self.target,
            line("connect", &self.connect_us),
            line("disconnect", &self.disconnect_us),
            line("total", &self.total_us)
        )
    }
}

/// What `probe` found.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProbeReport {
    /// The listener.
    pub target: String,
    /// The private data this side sent, hex; `None` if none.
    pub sent: Option<String>,
    /// `ok` if what this side sent conforms, otherwise the
    /// non-conformance's name (`absent` for zero octets, `short`, ...);
    /// `None` if it sent no private data.
    pub sent_conformance: Option<&'static str>,
    /// Why what this side sent does not conform, if it does not.
    pub sent_reason: Option<String>,
    /// The limits this side negotiates with (the RFC default unless it
    /// sent a conforming message).
    pub local: LocalReport,
    /// `accepted` or `rejected`.
    pub outcome: &'static str,
    /// The IB CM reject reason, if rejected.
    pub reject_reason: Option<i32>,
    /// The private data of the accept (or reject).
    pub received: PrivateDataReport,
    /// What this side, the requester, would use.
    pub requester_negotiates: Option<NegotiatedReport>,
    /// What the responder would use, from what it advertised (the RFC
    /// default if it did not conform) and what this side sent.
    pub responder_negotiates: Option<NegotiatedReport>,
    /// Whether the disconnection completed; the error otherwise.
    pub disconnect: Result<(), String>,
    /// How the server answered `--read`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadReport>,
}

impl ProbeReport {
    /// The text form.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("{} {}\n", self.target, self.outcome));
        if let Some(r) = self.reject_reason {
            out.push_str(&format!("  reject reason: {r}\n"));
        }
        out.push_str(&format!(
            "sent: {}\n",
            match &self.sent {
                Some(h) if h.is_empty() => "nothing (zero octets)".to_string(),
                Some(h) => match &self.sent_reason {
                    Some(why) => format!("{h} ({} octets, not conforming: {why})", h.len() / 2),
                    None => format!("{h} ({} octets)", h.len() / 2),
                },
                None => "no private data".to_string(),
            }
        ));
        out.push_str("received:\n");
        self.received.render(&mut out, "  ");
        if let Some(n) = &self.requester_negotiates {
            out.push_str("this side (requester) negotiates:\n");
            n.render(&mut out, "  ");
        }
        if let Some(n) = &self.responder_negotiates {
            out.push_str("the responder negotiates:\n");
            n.render(&mut out, "  ");
        }
        if let Some(r) = &self.read {
            out.push_str(&format!("read {} {}: {}\n", r.file, r.count, r.reply));
        }
        if let Err(e) = &self.disconnect {
            out.push_str(&format!("disconnect: {e}\n"));
        }
        out
    }

    /// 0 if accepted with conforming private data and cleanly disconnected.
    pub fn exit(&self) -> Exit {
        if self.outcome == "accepted" && self.received.conforming() && self.disconnect.is_ok() {
            Exit::Ok
        } else {
            Exit::Peer
        }
    }
}

/// How the server answered `probe --read`.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadReport {
    /// The file read.
    pub file: String,
    /// The octets asked for.
    pub count: u32,
    /// The RPC-over-RDMA procedure of the answer: 0 RDMA_MSG, 1
    /// RDMA_NOMSG, 4 RDMA_ERROR; `None` if none came.
    pub procedure: Option<u32>,
    /// The RDMA_ERROR code (2 ERR_CHUNK), 0 otherwise.
    pub error: u32,
    /// Octets of the Send that carried the answer.
    pub len: usize,
    /// The COMPOUND's NFS status of an inline Reply.
    pub nfs_status: Option<u32>,
    /// The answer in words.
    pub reply: String,
}

impl ReadReport {
    /// The report of `answer` to a READ of `count` octets of `file`.
    pub fn new(file: &str, count: u32, answer: &Answer) -> Self {
        let (procedure, error, len, nfs_status) = match answer {
            Answer::Inline { len, status, .. } => (Some(0), 0, *len, *status),
            Answer::InChunk { .. } => (Some(1), 0, 0, None),
            Answer::ErrChunk { len, .. } => (Some(4), 2, *len, None),
            Answer::InvalidateRefused | Answer::Other(_) => (None, 0, 0, None),
        };
        ReadReport {
            file: file.into(),
            count,
            procedure,
            error,
            len,
            nfs_status,
            reply: answer.describe(),
        }
    }
}

/// What `--read FILE:COUNT` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReadSpec {
    /// The file, as given.
    pub file: String,
    /// The file as the names to look up.
    pub path: Vec<String>,
    /// Octets to read.
    pub count: u32,
}

/// clap value parser for `--read FILE:COUNT`.
fn read_spec(s: &str) -> Result<ReadSpec, String> {
    let (file, count) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("'{s}' is not FILE:COUNT"))?;
    let path = read_path(file)?;
    let count = count
        .parse()
        .map_err(|_| format!("'{count}' is not an octet count"))?;
    Ok(ReadSpec {
        file: file.into(),
        path,
        count,
    })
}

/// Build the probe report from what happened.
pub(crate) fn probe_report(
    target: String,
    sent: Option<Vec<u8>>,
    effective: &LocalLimits,
    result: Result<Vec<u8>, (i32, Vec<u8>)>,
    disconnect: Result<(), String>,
) -> ProbeReport {
    let sent_hex = sent.as_deref().map(hex);
    let sent_decoded = sent.as_deref().map(PrivateMessage::decode);
    let sent_conformance = sent_decoded.as_ref().map(|d| match d {
        Ok(_) => "ok",
        Err(why) => why.name(),
    });
    let sent_reason = sent_decoded
        .as_ref()
        .and_then(|d| d.as_ref().err())
        .map(|why| why.to_string());
    let local = LocalReport::from_sent(effective, sent.as_deref());
    match result {
        Ok(received) => {
            let decoded = PrivateMessage::decode(&received);
            let peer = match &decoded {
                Ok(m) => *m,
                Err(_) => PrivateMessage::RFC_DEFAULT,
            };
            let responder = LocalLimits {
                max_send: peer.max_send,
                max_recv: peer.max_recv,
                remote_invalidation: peer.flags.remote_invalidation(),
            };
            let ours = PrivateMessage::decode(sent.as_deref().unwrap_or(&[]));
            ProbeReport {
                target,
                sent: sent_hex,
                sent_conformance,
                sent_reason,
                local,
                outcome: "accepted",
                reject_reason: None,
                received: PrivateDataReport::from_decoded(&received, &decoded),
                requester_negotiates: Some(negotiate(effective, &decoded).into()),
                responder_negotiates: Some(negotiate(&responder, &ours).into()),
                disconnect,
                read: None,
            }
        }
        Err((reason, data)) => ProbeReport {
            target,
            sent: sent_hex,
            sent_conformance,
            sent_reason,
            local,
            outcome: "rejected",
            reject_reason: Some(reason),
            received: PrivateDataReport::new(&data),
            requester_negotiates: None,
            responder_negotiates: None,
            disconnect,
            read: None,
        },
    }
}

/// `rpcrdma-cm probe`.
pub(crate) fn probe_cmd(args: &ProbeArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
    let (sent, effective) = args.pdata.choose()?;
    let addr = resolve(&args.target, NFS_RDMA_PORT)?;
    let timeout = Duration::from_secs_f64(args.timeout);
    let opts = ConnectOptions {
        private_data: sent.clone(),
        timeout,
        max_recv: 1,
    };
    if args.count > 1 {
        return probe_repeated(args, addr, &opts, sent, &effective, out);
    }
    if let Some(hold) = args.hold {
        return probe_held(args, addr, &opts, sent, &effective, hold, out);
    }
    if let Some(spec) = &args.read {
        return probe_read(args, addr, sent, &effective, spec, out);
    }
    let (result, disconnect) = match Connection::connect(addr, &opts) {
        Ok(a) => (
            Ok(a.private_data),
            a.connection.disconnect(timeout).map_err(|e| e.to_string()),
        ),
        Err(RdmaError::Rejected {
            status,
            private_data,
        }) => (Err((status, private_data)), Ok(())),
        Err(e) => return Err(Failure::peer(format!("probe {addr}: {e}"))),
    };
    let r = probe_report(addr.to_string(), sent, &effective, result, disconnect);
    emit(out, &if args.json { json(&r) } else { r.render() });
    Ok(r.exit())
}

/// `probe --read FILE:COUNT`: the report with how the READ was answered.
fn probe_read(
    args: &ProbeArgs,
    addr: SocketAddr,
    sent: Option<Vec<u8>>,
    effective: &LocalLimits,
    spec: &ReadSpec,
    out: &mut dyn Write,
) -> Result<Exit, Failure> {
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut s = match Session::open(addr, sent.as_deref(), Budget::per_step(timeout)) {
        Ok(s) => s,
        Err(Refusal::Rejected(status, private_data)) => {
            let r = probe_report(
                addr.to_string(),
                sent,
                effective,
                Err((status, private_data)),
                Ok(()),
            );
            emit(out, &if args.json { json(&r) } else { r.render() });
            return Ok(r.exit());
        }
        Err(Refusal::Local(e)) => return Err(Failure::local(format!("probe {addr}: {e}"))),
        Err(Refusal::Error(e)) => return Err(Failure::peer(format!("probe {addr}: {e}"))),
    };
    let answer = s.call(&read_compound(&spec.path, spec.count), false);
    let accept = s.accept.clone();
    let disconnect = s.close_checked();
    let mut r = probe_report(addr.to_string(), sent, effective, Ok(accept), disconnect);
    r.read = Some(ReadReport::new(&spec.file, spec.count, &answer));
    emit(out, &if args.json { json(&r) } else { r.render() });
    Ok(if r.read.as_ref().is_some_and(|k| k.procedure.is_some()) {
        r.exit()
    } else {
        Exit::Peer
    })
}

/// `probe --hold SECONDS`: the report once connected, then the connection
/// held before it is disconnected.
fn probe_held(
    args: &ProbeArgs,
    addr: SocketAddr,
    opts: &ConnectOptions,
    sent: Option<Vec<u8>>,
    effective: &LocalLimits,
    hold: f64,
    out: &mut dyn Write,
) -> Result<Exit, Failure> {
    let (result, conn) = match Connection::connect(addr, opts) {
        Ok(a) => (Ok(a.private_data), Some(a.connection)),
        Err(RdmaError::Rejected {
            status,
            private_data,
        }) => (Err((status, private_data)), None),
        Err(e) => return Err(Failure::peer(format!("probe {addr}: {e}"))),
    };
    let r = probe_report(addr.to_string(), sent, effective, result, Ok(()));
    emit(out, &if args.json { json(&r) } else { r.render() });
    let Some(mut conn) = conn else {
        return Ok(r.exit());
    };
    let deadline = Instant::now() + Duration::from_secs_f64(hold);
    let closed = match conn.wait_peer_disconnect(deadline) {
        Ok(true) => Ok(()),
        Ok(false) => conn.close(opts.timeout),
        Err(e) => Err(e),
    };
    closed.context(format!("probe {addr}: disconnect after holding"))?;
    Ok(r.exit())
}

/// `probe --count N`: N connects and disconnects, timed. The first that is
/// not a conforming accept with a clean disconnect ends the run (exit 1,
/// with its probe report).
fn probe_repeated(
    args: &ProbeArgs,
    addr: SocketAddr,
    opts: &ConnectOptions,
    sent: Option<Vec<u8>>,
    effective: &LocalLimits,
    out: &mut dyn Write,
) -> Result<Exit, Failure> {
    let mut times = Vec::with_capacity(args.count as usize);
    for i in 1..=args.count {
        let started = Instant::now();
        let (result, connected, disconnect) = match Connection::connect(addr, opts) {
            Ok(a) => {
                let connected = started.elapsed();
                let d = a
                    .connection
                    .disconnect(opts.timeout)
                    .map_err(|e| e.to_string());
                (Ok(a.private_data), connected, d)
            }
            Err(RdmaError::Rejected {
                status,
                private_data,
            }) => (Err((status, private_data)), started.elapsed(), Ok(())),
            Err(e) => return Err(Failure::peer(format!("probe {addr}, connect {i}: {e}"))),
        };
        let total = started.elapsed();
        let r = probe_report(
            addr.to_string(),
            sent.clone(),
            effective,
            result,
            disconnect,
        );
        if r.exit() != Exit::Ok {
            emit(out, &if args.json { json(&r) } else { r.render() });
            return Err(Failure::peer(format!(
                "probe {addr}: connect {i} of {} was not a conforming accept with a clean disconnect",
                args.count
            )));
        }
        times.push((connected, total - connected));
    }
    let r = ConnectTimingReport::new(addr.to_string(), &times)
        .ok_or_else(|| Failure::peer("no connect was timed"))?;
    emit(out, &if args.json { json(&r) } else { r.render() });
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::pdata_args;

    use crate::tests::cli;

    #[test]
    fn probe_report_accepted_golden() {
        let limits = LocalLimits {
            max_send: rpcrdma_cm_proto::cm_private::InlineSize::from_bytes(65536),
            max_recv: rpcrdma_cm_proto::cm_private::InlineSize::from_bytes(4096),
            remote_invalidation: true,
        };
        let mut rep = vec![0xf6, 0xab, 0x0e, 0x18, 1, 1, 0x0f, 0x0f];
        rep.resize(196, 0);
        let r = probe_report(
            "192.0.2.1:20049".into(),
            Some(limits.advertisement().encode().to_vec()),
            &limits,
            Ok(rep),
            Ok(()),
        );
        assert_eq!(r.exit(), Exit::Ok);
        assert_eq!(
            r.render(),
            "192.0.2.1:20049 accepted
sent: f6ab0e1801013f03 (8 octets)
received:
  raw: f6ab0e1801010f0f + 188 zero octets (196 octets)
  conforming: version 1
    remote invalidation: true
    max send: 16384 bytes
    max recv: 16384 bytes
this side (requester) negotiates:
  send threshold: 16384 bytes
  recv threshold: 4096 bytes
  remote invalidation: true
the responder negotiates:
  send threshold: 4096 bytes
  recv threshold: 16384 bytes
  remote invalidation: true
"
        );
        let v: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
        assert_eq!(v["outcome"], "accepted");
        assert_eq!(v["received"]["message"]["flags"], 1);
        assert_eq!(v["received"]["len"], 196);
        assert_eq!(v["requester_negotiates"]["send_threshold"], 16384);
        assert_eq!(v["responder_negotiates"]["recv_threshold"], 16384);
        assert_eq!(v["disconnect"]["Ok"], serde_json::Value::Null);
    }

    #[test]
    fn probe_report_stock_server_and_rejects() {
        // A stock server: conforming, flags 0, so no Remote Invalidation.
        let r = probe_report(
            "192.0.2.1:20049".into(),
            None,
            &LocalLimits::RFC_DEFAULT,
            Ok(vec![0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3]),
            Ok(()),
        );
        assert_eq!(r.exit(), Exit::Ok);
        assert!(r.render().contains("sent: no private data\n"));
        let n = r.requester_negotiates.unwrap();
        assert_eq!((n.send_threshold, n.remote_invalidation), (1024, false));
        // The responder sees no private data: it uses 1024 both ways.
        let n = r.responder_negotiates.unwrap();
        assert_eq!((n.send_threshold, n.recv_threshold), (1024, 1024));
        // Non-conforming reply: exit 1.
        let r = probe_report(
            "x".into(),
            None,
            &LocalLimits::RFC_DEFAULT,
            Ok(vec![0; 196]),
            Ok(()),
        );
        assert_eq!(r.exit(), Exit::Peer);
        let r = probe_report(
            "x".into(),
            Some(vec![]),
            &LocalLimits::RFC_DEFAULT,
            Err((28, vec![])),
            Ok(()),
        );
        assert_eq!(r.exit(), Exit::Peer);
        assert!(r
            .render()
            .starts_with("x rejected\n  reject reason: 28\nsent: nothing (zero octets)\n"));
        let r = probe_report(
            "x".into(),
            None,
            &LocalLimits::RFC_DEFAULT,
            Ok(vec![0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3]),
            Err("timed out".into()),
        );
        assert_eq!(r.exit(), Exit::Peer);
    }

    #[test]
    fn probe_reports_the_private_data_actually_sent() {
        let rep = Ok(vec![0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3]);
        // --pdata f6ab0e: this side counts as the RFC default, but it did
        // not advertise the default's encoding; it sent three octets.
        let (sent, l) = pdata_args(&["--pdata", "f6ab0e"]).choose().unwrap();
        let r = probe_report("x".into(), sent, &l, rep.clone(), Ok(()));
        assert_eq!(r.local.advertisement, None);
        assert_eq!(r.sent.as_deref(), Some("f6ab0e"));
        assert_eq!(r.sent_conformance, Some("short"));
        assert!(r
            .render()
            .contains("\nsent: f6ab0e (3 octets, not conforming: short"));
        let v: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
        assert_eq!(v["local"]["advertisement"], serde_json::Value::Null);
        assert_eq!(v["sent_conformance"], "short");
        // A conforming --pdata is advertised as sent, reserved bits and all.
        let (sent, l) = pdata_args(&["--pdata", "f6ab0e1801810f0f"])
            .choose()
            .unwrap();
        let r = probe_report("x".into(), sent, &l, rep, Ok(()));
        assert_eq!(r.local.advertisement.as_deref(), Some("f6ab0e1801810f0f"));
        assert_eq!((r.sent_conformance, r.sent_reason), (Some("ok"), None));
    }

    #[test]
    fn latency_stats_exact() {
        let s = LatencyStats::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!(
            s,
            LatencyStats {
                min: 1.0,
                median: 3.0,
                mean: 3.0,
                p90: 5.0,
                max: 5.0
            }
        );
        // Even count: the median is the mean of the middle two; p90 of
        // 1..=10 is 9 (nearest rank).
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = LatencyStats::of(&ten).unwrap();
        assert_eq!((s.median, s.p90, s.mean), (5.5, 9.0, 5.5));
        assert_eq!(LatencyStats::of(&[]), None);
    }

    #[test]
    fn connect_timing_report_golden() {
        let ms = Duration::from_millis;
        let r = ConnectTimingReport::new(
            "10.0.2.15:20049".into(),
            &[(ms(2), ms(1)), (ms(4), ms(1)), (ms(3), ms(2))],
        )
        .unwrap();
        assert_eq!(r.count, 3);
        assert_eq!(r.total_samples_us, vec![3000.0, 5000.0, 5000.0]);
        assert_eq!(
            r.render(),
            "3 connects to 10.0.2.15:20049, all accepted and cleanly disconnected (microseconds):
  connect    min 2000  median 3000  mean 3000  p90 4000  max 4000
  disconnect min 1000  median 1000  mean 1333  p90 2000  max 2000
  total      min 3000  median 5000  mean 4333  p90 5000  max 5000
"
        );
        let v: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
        assert_eq!(v["connect_us"]["median"], 3000.0);
        assert_eq!(v["total_us"]["max"], 5000.0);
        assert_eq!(ConnectTimingReport::new("x".into(), &[]), None);
    }

    #[test]
    fn read_spec_forms() {
        let spec = |file: &str, path: &[&str], count| ReadSpec {
            file: file.into(),
            path: path.iter().map(|n| n.to_string()).collect(),
            count,
        };
        assert_eq!(read_spec("big:3000"), Ok(spec("big", &["big"], 3000)));
        assert!(read_spec("big").is_err());
        assert!(read_spec(":3").is_err());
        assert_eq!(read_spec("a/b:3"), Ok(spec("a/b", &["a", "b"], 3)));
        assert!(read_spec(&format!("{}:3", vec!["n".repeat(250); 4].join("/"))).is_err());
        assert!(read_spec("a/../b:3").is_err());
        assert!(read_spec("big:-1").is_err());
    }

    #[test]
    fn probe_count_is_checked() {
        let (exit, out, _) = cli(&["probe", "--count", "0", "127.0.0.1"]);
        assert_eq!(exit, Exit::Usage);
        assert!(out.contains("--count"), "{out}");
        // Repeated probes fail like one when nothing listens.
        let (exit, _, err) = cli(&["probe", "-W", "1", "--count", "3", "127.0.0.1:1"]);
        assert_eq!(exit, Exit::Peer);
        assert!(err.starts_with("probe 127.0.0.1:1, connect 1: "), "{err}");
    }

    #[test]
    fn probe_without_a_device_fails_cleanly() {
        // No RDMA listener (or no RDMA device at all) on this address:
        // a clear error and exit 1, within the timeout.
        let start = Instant::now();
        let (exit, _, err) = cli(&["probe", "-W", "1", "127.0.0.1:1"]);
        assert_eq!(exit, Exit::Peer);
        assert!(err.starts_with("probe 127.0.0.1:1: "), "{err}");
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
