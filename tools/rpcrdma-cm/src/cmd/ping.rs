// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm ping`: ONC RPC NULL calls (RFC 5531) over TCP or
//! RPC-over-RDMA with ping-like output.

use crate::args::{positive_seconds, resolve, seconds, PrivateDataArgs};
use crate::error::{Context, Exit, Failure};
use crate::oncrpc::{null_call, parse_reply, Reply, NFS_PROGRAM};
use crate::output::{emit, json};
use crate::transport::rdma::{RdmaConnectionReport, RdmaTransport, NFS_RDMA_PORT};
use crate::transport::tcp::{TcpTransport, NFS_TCP_PORT};
use crate::transport::{CallError, RpcTransport};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::io::Write;
use std::time::{Duration, Instant};

/// The transport of a ping.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Transport {
    /// ONC RPC over TCP with record marking (default port 2049).
    Tcp,
    /// RPC-over-RDMA version one, RDMA_MSG with empty chunk lists (default port 20049).
    Rdma,
}

/// Arguments of `ping`.
#[derive(Args, Debug, Clone)]
#[command(after_help = concat!(
    "Example:\n",
    "  $ rpcrdma-cm ping --transport rdma --count 3 --version 4 192.168.100.1\n\n",
    "Exit status: 0 every call was answered with SUCCESS, 1 otherwise,\n",
    "2 usage error."
))]
pub(crate) struct PingArgs {
    /// The server: HOST, HOST:PORT or [IPV6]:PORT.
    pub target: String,
    /// The transport.
    #[arg(long, short, value_enum, default_value_t = Transport::Tcp)]
    pub transport: Transport,
    /// Number of calls.
    #[arg(long, short, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// Seconds between calls.
    #[arg(long, short, default_value_t = 1.0, value_parser = seconds)]
    pub interval: f64,
    /// Seconds to wait for connecting and for each reply.
    #[arg(long, short = 'W', default_value_t = 5.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// RPC program number.
    #[arg(long, default_value_t = NFS_PROGRAM)]
    pub program: u32,
    /// RPC program version.
    #[arg(
        long = "version",
        short = 'V',
        default_value_t = 3,
        id = "program_version"
    )]
    pub program_version: u32,
    /// RDMA only: the private data to connect with.
    #[command(flatten)]
    pub pdata: PrivateDataArgs,
    /// Only the summary, no line per reply.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print JSON instead of text (at the end).
    #[arg(long)]
    pub json: bool,
}

/// One call's outcome.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub(crate) struct CallReport {
    /// Sequence number from 1.
    pub seq: u32,
    /// The call's xid.
    pub xid: u32,
    /// Round trip in milliseconds, if a reply came.
    pub rtt_ms: Option<f64>,
    /// `SUCCESS`, another reply status, `timeout`, or the error.
    pub result: String,
}

/// Round-trip statistics in milliseconds.
#[derive(Serialize, Debug, Clone, Copy, PartialEq)]
pub(crate) struct RttStats {
    /// Smallest.
    pub min: f64,
    /// Mean.
    pub avg: f64,
    /// Largest.
    pub max: f64,
    /// Population standard deviation, as ping prints it.
    pub stddev: f64,
}

impl RttStats {
    /// The statistics of `samples`, `None` if there are none.
    pub fn of(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let n = samples.len() as f64;
        let avg = samples.iter().sum::<f64>() / n;
        let var = samples.iter().map(|s| (s - avg) * (s - avg)).sum::<f64>() / n;
        Some(RttStats {
            min: samples.iter().copied().fold(f64::INFINITY, f64::min),
            avg,
            max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            stddev: var.sqrt(),
        })
    }
}

/// The whole ping.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub(crate) struct PingReport {
    /// The server address.
    pub target: String,
    /// The transport.
    pub transport: Transport,
    /// RPC program.
    pub program: u32,
    /// RPC program version.
    pub version: u32,
    /// Transport details (RDMA: the private data and the negotiated
    /// thresholds); `None` for TCP.
    pub connection: Option<RdmaConnectionReport>,
    /// Calls sent.
    pub sent: u32,
    /// Replies received (any status).
    pub received: u32,
    /// Replies with a status other than SUCCESS.
    pub failed: u32,
    /// Calls sent without a reply.
    pub lost: u32,
    /// Calls not sent because the connection became unusable.
    pub not_sent: u32,
    /// Round trips of the replies.
    pub rtt_ms: Option<RttStats>,
    /// Why the ping stopped early, if it did.
    pub error: Option<String>,
    /// Each call.
    pub calls: Vec<CallReport>,
}

impl PingReport {
    /// The report of a ping of `target` with `args` before any call.
    fn start(target: String, args: &PingArgs, connection: Option<RdmaConnectionReport>) -> Self {
        PingReport {
            target,
            transport: args.transport,
            program: args.program,
            version: args.program_version,
            connection,
            sent: 0,
            received: 0,
            failed: 0,
            lost: 0,
            not_sent: 0,
            rtt_ms: None,
            error: None,
            calls: Vec::new(),
        }
    }

    /// Count the `result` of call `seq` (xid `xid`), which took `rtt`
    /// milliseconds with a timeout of `timeout` seconds, and return its
    /// report (with the round trip if a reply came).
    fn record(
        &mut self,
        seq: u32,
        xid: u32,
        result: Result<Vec<u8>, CallError>,
        rtt: f64,
        timeout: f64,
    ) -> CallReport {
        match result {
            Ok(rec) => match parse_reply(&rec, xid) {
                Ok(reply) => {
                    self.received += 1;
                    if reply != Reply::Success {
                        self.failed += 1;
                    }
                    CallReport {
                        seq,
                        xid,
                        rtt_ms: Some(rtt),
                        result: reply.to_string(),
                    }
                }
                Err(why) => {
                    self.lost += 1;
                    self.error = Some(format!("malformed reply: {why}"));
                    CallReport {
                        seq,
                        xid,
                        rtt_ms: None,
                        result: format!("malformed reply: {why}"),
                    }
                }
            },
            Err(CallError::Timeout) => {
                self.lost += 1;
                CallReport {
                    seq,
                    xid,
                    rtt_ms: None,
                    result: format!("timeout after {timeout:.3} s"),
                }
            }
            Err(CallError::Fatal(why)) => {
                self.lost += 1;
                self.error = Some(why.clone());
                CallReport {
                    seq,
                    xid,
                    rtt_ms: None,
                    result: why,
                }
            }
        }
    }

    /// The ping-like line for one call.
    pub fn call_line(&self, c: &CallReport) -> String {
        match c.rtt_ms {
            Some(ms) => format!(
                "reply from {}: seq={} xid={:#010x} {} time={ms:.3} ms\n",
                self.target, c.seq, c.xid, c.result
            ),
            None => format!("no reply: seq={} xid={:#010x} {}\n", c.seq, c.xid, c.result),
        }
    }

    /// The summary at the end.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "--- {} rpc ping statistics ({}, program {} version {}) ---\n",
            self.target,
            match self.transport {
                Transport::Tcp => "tcp",
                Transport::Rdma => "rdma",
            },
            self.program,
            self.version
        );
        let lost_pct = if self.sent == 0 {
            0.0
        } else {
            f64::from(self.lost) * 100.0 / f64::from(self.sent)
        };
        s.push_str(&format!(
            "{} calls sent, {} replies, {} not SUCCESS, {} lost ({lost_pct:.0}% loss)",
            self.sent, self.received, self.failed, self.lost
        ));
        if self.not_sent > 0 {
            s.push_str(&format!(", {} not sent", self.not_sent));
        }
        s.push('\n');
        if let Some(r) = &self.rtt_ms {
            s.push_str(&format!(
                "rtt min/avg/max/stddev = {:.3}/{:.3}/{:.3}/{:.3} ms\n",
                r.min, r.avg, r.max, r.stddev
            ));
        }
        if let Some(e) = &self.error {
            s.push_str(&format!("stopped: {e}\n"));
        }
        s
    }

    /// 0 if every call was answered with SUCCESS.
    pub fn exit(&self) -> Exit {
        if self.error.is_none() && self.lost == 0 && self.failed == 0 && self.not_sent == 0 {
            Exit::Ok
        } else {
            Exit::Peer
        }
    }
}

/// Send `args.count` NULL calls over `transport`, printing a line per reply
/// unless `quiet`/`json`, and return the report.
pub(crate) fn ping_over(
    transport: &mut dyn RpcTransport,
    args: &PingArgs,
    target: String,
    connection: Option<RdmaConnectionReport>,
    out: &mut dyn Write,
) -> PingReport {
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut report = PingReport::start(target, args, connection);
    let first_xid = std::process::id().rotate_left(16) ^ 0x5250_4300;
    let mut rtts = Vec::new();
    for seq in 1..=args.count {
        if seq > 1 && args.interval > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(args.interval));
        }
        let xid = first_xid.wrapping_add(seq);
        let call = null_call(xid, args.program, args.program_version);
        let start = Instant::now();
        report.sent += 1;
        let result = transport.call(xid, &call, start + timeout);
        let rtt = start.elapsed().as_secs_f64() * 1e3;
        let c = report.record(seq, xid, result, rtt, args.timeout);
        rtts.extend(c.rtt_ms);
        if !args.quiet && !args.json {
            emit(out, &report.call_line(&c));
        }
        report.calls.push(c);
        if report.error.is_some() {
            // The connection is unusable.
            report.not_sent = args.count - seq;
            break;
        }
    }
    report.rtt_ms = RttStats::of(&rtts);
    report
}

/// `rpcrdma-cm ping`.
pub(crate) fn ping_cmd(args: &PingArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
    let timeout = Duration::from_secs_f64(args.timeout);
    let report = match args.transport {
        Transport::Tcp => {
            let addr = resolve(&args.target, NFS_TCP_PORT)?;
            let mut t = TcpTransport::connect(addr, timeout).context(format!("ping {addr}"))?;
            ping_over(&mut t, args, addr.to_string(), None, out)
        }
        Transport::Rdma => {
            let addr = resolve(&args.target, NFS_RDMA_PORT)?;
            let (sent, effective) = args.pdata.choose().context(format!("ping {addr}"))?;
            let (mut t, conn) = RdmaTransport::connect(addr, sent, &effective, timeout)
                .context(format!("ping {addr}"))?;
            if !args.quiet && !args.json {
                emit(
                    out,
                    &format!(
                        "connected to {addr}: responder sent {} ({}); send threshold {}, recv threshold {}, remote invalidation {}\n",
                        conn.received.raw.get(..16).unwrap_or(&conn.received.raw),
                        conn.received.conformance,
                        conn.negotiated.send_threshold,
                        conn.negotiated.recv_threshold,
                        conn.negotiated.remote_invalidation
                    ),
                );
            }
            let mut report = ping_over(&mut t, args, addr.to_string(), Some(conn), out);
            if let Err(e) = t.disconnect(timeout) {
                if report.error.is_none() {
                    report.error = Some(format!("disconnect: {e}"));
                }
            }
            report
        }
    };
    emit(
        out,
        &if args.json {
            json(&report)
        } else {
            report.summary()
        },
    );
    Ok(report.exit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oncrpc::xid_of;
    use rpcrdma_cm_proto::record_marking::{Fragments, Limits};
    use rpcrdma_cm_proto::stdio::RecordReader;
    use std::net::TcpStream;

    use crate::tests::cli;

    use rpcrdma_cm_proto::record_marking::FragmentMarker;

    use std::io::Read;

    use std::net::{Shutdown, TcpListener};

    /// Big-endian XDR words.
    fn words(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    /// A marker as four octets.
    fn marker(len: u32, last: bool) -> [u8; 4] {
        FragmentMarker::new(len, last).unwrap().to_bytes()
    }

    /// A SUCCESS reply to the call record `call`.
    fn success_to(call: &[u8]) -> Vec<u8> {
        words(&[xid_of(call).unwrap(), 1, 0, 0, 0, 0])
    }

    /// An RPC server on loopback for one connection: for each call record
    /// it receives, `answer` writes whatever it likes to the socket and
    /// says whether to go on. Returns the address to ping.
    fn server(
        answer: impl Fn(&mut TcpStream, &[u8], u32) -> bool + Send + 'static,
    ) -> (String, std::thread::JoinHandle<()>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let handle = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut r = RecordReader::new(c.try_clone().unwrap(), Limits::DEFAULT);
            let mut n = 0;
            while let Ok(Some(call)) = r.next_record() {
                n += 1;
                if !answer(&mut c, &call, n) {
                    break;
                }
            }
            let _ = c.shutdown(Shutdown::Both);
        });
        (addr, handle)
    }

    /// Write `octets` a few at a time, so markers and bodies arrive split.
    fn dribble(c: &mut TcpStream, octets: &[u8], piece: usize) {
        for p in octets.chunks(piece) {
            c.write_all(p).unwrap();
            c.flush().unwrap();
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn ping(addr: &str, extra: &[&str]) -> (Exit, String, String) {
        let mut args = vec!["ping", "-i", "0", "-W", "2", addr];
        args.extend_from_slice(extra);
        cli(&args)
    }

    #[test]
    fn rtt_statistics() {
        assert_eq!(RttStats::of(&[]), None);
        let s = RttStats::of(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!((s.min, s.avg, s.max), (1.0, 2.5, 4.0));
        assert!((s.stddev - 1.118_034).abs() < 1e-6);
    }

    #[test]
    fn split_markers_and_fragments_are_reassembled() {
        let (addr, h) = server(|c, call, _| {
            let reply = success_to(call);
            let mut wire = vec![0; 64];
            let n = Fragments::new(&reply, 5).write_to(&mut wire).unwrap();
            dribble(c, &wire[..n], 3);
            true
        });
        let (exit, out, err) = ping(&addr, &["-c", "3"]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Ok, "{out}{err}");
        assert_eq!(out.matches("SUCCESS time=").count(), 3, "{out}");
        assert!(
            out.contains("3 calls sent, 3 replies, 0 not SUCCESS, 0 lost (0% loss)\n"),
            "{out}"
        );
        assert!(out.contains("rtt min/avg/max/stddev = "), "{out}");
    }

    #[test]
    fn zero_length_fragments_are_accepted() {
        let (addr, h) = server(|c, call, _| {
            let reply = success_to(call);
            let mut wire = Vec::new();
            for _ in 0..3 {
                wire.extend_from_slice(&marker(0, false));
            }
            wire.extend_from_slice(&marker(8, false));
            wire.extend_from_slice(&reply[..8]);
            wire.extend_from_slice(&marker(0, false));
            wire.extend_from_slice(&marker(16, true));
            wire.extend_from_slice(&reply[8..]);
            c.write_all(&wire).unwrap();
            true
        });
        let (exit, out, _) = ping(&addr, &["-c", "2", "--json"]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Ok, "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (v["sent"].as_u64(), v["received"].as_u64()),
            (Some(2), Some(2))
        );
        assert_eq!(v["lost"], 0);
        assert_eq!(v["transport"], "tcp");
        assert_eq!(v["calls"][1]["result"], "SUCCESS");
        assert!(v["rtt_ms"]["avg"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn endless_zero_length_fragments_hit_the_fragment_limit() {
        let (addr, h) = server(|c, _, _| {
            let wire: Vec<u8> = (0..100).flat_map(|_| marker(0, false)).collect();
            let _ = c.write_all(&wire);
            false
        });
        let (exit, out, _) = ping(&addr, &["-c", "3"]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Peer, "{out}");
        assert!(
            out.contains("stopped: malformed record: record has more than 16 fragments\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "1 calls sent, 0 replies, 0 not SUCCESS, 1 lost (100% loss), 2 not sent\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn oversized_fragment_marker_is_refused() {
        let (addr, h) = server(|c, _, _| {
            let _ = c.write_all(&marker(0x7fff_ffff, true));
            // Keep the connection open: the client must not wait for the body.
            std::thread::sleep(Duration::from_millis(300));
            false
        });
        let start = Instant::now();
        let (exit, out, _) = ping(&addr, &["-c", "2"]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Peer, "{out}");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "waited for the body"
        );
        assert!(
            out.contains(
                "stopped: malformed record: record of 2147483647 octets exceeds limit 65536\n"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "1 calls sent, 0 replies, 0 not SUCCESS, 1 lost (100% loss), 1 not sent\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn eof_mid_record_is_reported() {
        let (addr, h) = server(|c, call, _| {
            let reply = success_to(call);
            let mut wire = marker(24, true).to_vec();
            wire.extend_from_slice(&reply[..10]);
            c.write_all(&wire).unwrap();
            false
        });
        let (exit, out, _) = ping(&addr, &["-c", "2"]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Peer, "{out}");
        assert!(
            out.contains(
                "stopped: malformed record: stream truncated in a fragment body: 14 octets missing\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn eof_between_records_is_reported() {
        let (addr, h) = server(|_, _, _| false);
        let (exit, out, _) = ping(&addr, &["-c", "2"]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Peer, "{out}");
        assert!(
            out.contains("stopped: the server closed the connection\n"),
            "{out}"
        );
    }

    #[test]
    fn silent_server_times_out_without_hanging() {
        let (addr, h) = server(|_, _, n| n < 3);
        let start = Instant::now();
        let (exit, out, _) = cli(&["ping", "-c", "2", "-i", "0", "-W", "0.2", &addr]);
        assert!(start.elapsed() < Duration::from_secs(2));
        assert_eq!(exit, Exit::Peer, "{out}");
        assert_eq!(out.matches("timeout after 0.200 s").count(), 2, "{out}");
        assert!(
            out.contains("2 calls sent, 0 replies, 0 not SUCCESS, 2 lost (100% loss)"),
            "{out}"
        );
        drop(h);
    }

    #[test]
    fn late_reply_is_skipped_by_xid() {
        // Call 1 is answered only together with call 2; its late reply
        // must not be taken for call 2's.
        let (addr, h) = server(|c, call, n| {
            if n == 2 {
                let mut stale = success_to(call);
                let xid = xid_of(call).unwrap() - 1;
                stale[..4].copy_from_slice(&xid.to_be_bytes());
                let mut wire = marker(24, true).to_vec();
                wire.extend_from_slice(&stale);
                wire.extend_from_slice(&marker(24, true));
                wire.extend_from_slice(&success_to(call));
                c.write_all(&wire).unwrap();
            }
            true
        });
        let (exit, out, _) = cli(&["ping", "-c", "2", "-i", "0", "-W", "0.3", &addr]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Peer, "{out}");
        assert!(
            out.contains("2 calls sent, 1 replies, 0 not SUCCESS, 1 lost (50% loss)"),
            "{out}"
        );
    }

    #[test]
    fn prog_mismatch_is_a_failure() {
        let (addr, h) = server(|c, call, _| {
            let reply = words(&[xid_of(call).unwrap(), 1, 0, 0, 0, 2, 3, 4]);
            let mut wire = marker(32, true).to_vec();
            wire.extend_from_slice(&reply);
            c.write_all(&wire).unwrap();
            true
        });
        let (exit, out, _) = ping(&addr, &["-c", "1", "--version", "9"]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Peer, "{out}");
        assert!(out.contains("PROG_MISMATCH (versions 3..4) time="), "{out}");
        assert!(
            out.contains("1 calls sent, 1 replies, 1 not SUCCESS, 0 lost"),
            "{out}"
        );
    }

    #[test]
    fn malformed_reply_body_is_reported() {
        let (addr, h) = server(|c, call, _| {
            let reply = words(&[xid_of(call).unwrap(), 1, 7]);
            let mut wire = marker(12, true).to_vec();
            wire.extend_from_slice(&reply);
            c.write_all(&wire).unwrap();
            true
        });
        let (exit, out, _) = ping(&addr, &["-c", "1"]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Peer, "{out}");
        assert!(
            out.contains("stopped: malformed reply: reply status 7 is neither accepted nor denied"),
            "{out}"
        );
    }

    #[test]
    fn refused_connection_exits_1() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        drop(l);
        let (exit, _, err) = ping(&addr, &["-c", "1"]);
        assert_eq!(exit, Exit::Peer);
        assert!(err.starts_with(&format!("ping {addr}: connect: ")), "{err}");
    }

    #[test]
    fn reads_whole_call_from_server_side() {
        // The call the server sees is the NULL call record-marked once.
        let (addr, h) = server(|c, call, _| {
            assert_eq!(call.len(), 40);
            assert_eq!(&call[4..24], &words(&[0, 2, NFS_PROGRAM, 4, 0])[..]);
            let reply = success_to(call);
            let mut wire = marker(24, true).to_vec();
            wire.extend_from_slice(&reply);
            c.write_all(&wire).unwrap();
            let mut rest = [0u8; 1];
            let _ = c.read(&mut rest);
            true
        });
        let (exit, out, _) = ping(&addr, &["-c", "1", "-V", "4", "-q"]);
        h.join().unwrap();
        assert_eq!(exit, Exit::Ok, "{out}");
        assert!(!out.contains("reply from"), "{out}");
    }
}
