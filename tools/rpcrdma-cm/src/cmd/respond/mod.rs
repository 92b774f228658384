// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm respond`: an RDMA CM listener that accepts each connect
//! with chosen private data (a conforming responder, a legacy one that
//! sends nothing, or any hostile octets) and prints what each requester
//! sent. Without `--answer-rpc` it answers no RPC: a kernel client's mount
//! against it fails after the connection, which is all a test of the
//! private data needs; with it, [`rpc`] answers.

use crate::report::{hex_or_dash, parse_hex};
pub(crate) mod rpc;

use crate::args::{positive_seconds, resolve, seconds, LimitArgs};
use crate::error::{Context, Exit, Failure};
use crate::output::{emit, json_line};
use crate::transport::rdma::NFS_RDMA_PORT;
use clap::Args;
use rdmacm::{Listener, Request, MAX_REP_PRIVATE_DATA};
use rpcrdma_cm_proto::cm_private::PrivateMessage;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Receives posted for `--answer-rpc`, and their size.
const RPC_RECEIVES: u32 = 8;
/// See [`RPC_RECEIVES`].
const RPC_RECEIVE_SIZE: usize = 65536;
/// How long `--answer-rpc` serves a connection without `--hold`.
const RPC_LIMIT: Duration = Duration::from_secs(600);

/// How long `--wait-for` waits for its file.
const WAIT_FOR_LIMIT: Duration = Duration::from_secs(120);

/// Arguments of `respond`.
#[derive(Args, Debug)]
#[command(after_help = concat!(
    "Example:\n",
    "  $ rpcrdma-cm respond --no-pdata --count 1 192.168.100.2:20050\n",
    "  listening on 192.168.100.2:20050\n",
    "  conn 0 req=f6ab0e1801010303000000... rep=-\n\n",
    "Each connection is accepted, then disconnected (after --hold); without\n",
    "--answer-rpc no RPC is answered. \"req\" is the request's private data as\n",
    "the CM delivered it (padded to 56 octets on InfiniBand and RoCE, exact\n",
    "over iWARP).\n\n",
    "Exit status: 0 every connection was established and closed, 1 one was\n",
    "not or the listener failed, 2 usage error."
))]
pub(crate) struct RespondArgs {
    /// Where to listen: ADDRESS, ADDRESS:PORT or [IPV6]:PORT (default port 20049).
    pub address: String,
    /// This side's limits, advertised as RFC 8797 private data (unless
    /// --pdata, --cases or --no-pdata).
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Accept with these octets (hex, at most 196; "-" for none); given
    /// more than once, the connects take them in turn, then from the first.
    #[arg(long, value_name = "HEX", conflicts_with_all = ["cases", "no_pdata"])]
    pub pdata: Vec<String>,
    /// Accept with the octets of the next line of FILE (as --pdata), in turn.
    #[arg(long, value_name = "FILE", conflicts_with = "no_pdata")]
    pub cases: Option<PathBuf>,
    /// Accept with no private data (a responder that predates RFC 8797).
    #[arg(long)]
    pub no_pdata: bool,
    /// Reject a request whose private data is not a conforming RFC 8797
    /// message (as RFC 8797 section 5 says a responder must not: for
    /// showing `conform` a responder that breaks it).
    #[arg(long)]
    pub reject_nonconforming: bool,
    /// Answer RPC on each connection, as a minimal RPC-over-RDMA responder
    /// that follows RFC 8797 (NULL and COMPOUNDs of PUTROOTFH, GETATTR,
    /// LOOKUP and READ, the calls `conform` makes; inline up to its send threshold,
    /// ERR_CHUNK above), until the requester disconnects (or --hold).
    #[arg(long)]
    pub answer_rpc: bool,
    /// With --answer-rpc, break one rule on purpose:
    /// refuse-above=OCTETS (ERR_CHUNK above OCTETS though the threshold
    /// allows more), threshold-off=[+|-]OCTETS (the threshold moved by
    /// that many octets), ignore-recv-size (hold Replies to its own send
    /// size only), invalidate (Send With Invalidate whatever the R bits),
    /// invalidate-previous (With Invalidate of the previous call's STag,
    /// not one of the request answered) or refuse-null (ERR_CHUNK for
    /// the NULL procedure's Reply).
    #[arg(long, requires = "answer_rpc", value_parser = rpc::fault)]
    pub fault: Option<rpc::Fault>,
    /// Stop after this many connect requests (default: until killed).
    #[arg(long, short = 'c', value_parser = clap::value_parser!(u32).range(1..))]
    pub count: Option<u32>,
    /// Keep each connection up to SECONDS, or until the requester
    /// disconnects, before disconnecting it (default: at once; with
    /// --answer-rpc up to 600 s).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0, value_parser = seconds)]
    pub hold: f64,
    /// Accept a request only once FILE exists (at most 120 s), so that a
    /// test can act while the requester waits for the accept.
    #[arg(long, value_name = "FILE")]
    pub wait_for: Option<PathBuf>,
    /// Seconds allowed for each connection to be established and closed.
    #[arg(long, short = 'W', default_value_t = 10.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Print one JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
}

/// One connect request, as printed.
#[derive(Serialize, Debug, PartialEq, Eq)]
pub(crate) struct RequestLine {
    /// Its number, from 0.
    pub conn: u32,
    /// The requester's private data as the CM delivered it, hex ("-" none).
    pub req: String,
    /// What this side accepts with, hex ("-" none).
    pub rep: String,
}

impl RequestLine {
    /// The text line: `conn N req=HEX rep=HEX`.
    pub fn render(&self) -> String {
        format!("conn {} req={} rep={}\n", self.conn, self.req, self.rep)
    }
}

/// Parse one case: hex octets, "-" or "" for none, at most what an
/// accept carries.
pub(crate) fn parse_case(s: &str) -> Result<Vec<u8>, String> {
    let s = s.trim();
    if s == "-" {
        return Ok(Vec::new());
    }
    let octets = parse_hex(s)?;
    if octets.len() > MAX_REP_PRIVATE_DATA {
        return Err(format!(
            "{} octets: an accept carries at most {MAX_REP_PRIVATE_DATA}",
            octets.len()
        ));
    }
    Ok(octets)
}

/// The private data of each accept, in turn.
pub(crate) fn cases(args: &RespondArgs) -> Result<Vec<Vec<u8>>, Failure> {
    if args.no_pdata {
        return Ok(vec![Vec::new()]);
    }
    if let Some(path) = &args.cases {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::usage(format!("--cases {}: {e}", path.display())))?;
        let cases = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                parse_case(l)
                    .map_err(|e| Failure::usage(format!("{}:{}: {e}", path.display(), i + 1)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if cases.is_empty() {
            return Err(Failure::usage(format!(
                "--cases {}: no case",
                path.display()
            )));
        }
        return Ok(cases);
    }
    if !args.pdata.is_empty() {
        return args
            .pdata
            .iter()
            .map(|p| parse_case(p).map_err(|e| Failure::usage(format!("--pdata {p}: {e}"))))
            .collect();
    }
    Ok(vec![args.limits.limits().advertisement().encode().to_vec()])
}

/// Wait until `path` exists, at most [`WAIT_FOR_LIMIT`].
fn wait_for(path: &Path) -> Result<(), Failure> {
    let deadline = Instant::now() + WAIT_FOR_LIMIT;
    while !path.exists() {
        if Instant::now() >= deadline {
            return Err(Failure::peer(format!(
                "{} did not appear within {} s",
                path.display(),
                WAIT_FOR_LIMIT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Accept `request` with `rep`, then answer RPC on the connection (with
/// `--answer-rpc`) or hold it for `hold` (unless the requester
/// disconnects first), and disconnect.
fn accept_and_serve(
    args: &RespondArgs,
    request: Request<'_>,
    rep: &[u8],
    timeout: Duration,
    hold: Duration,
) -> Result<(), rdmacm::Error> {
    let request_pdata = request.private_data.clone();
    let receives = if args.answer_rpc { RPC_RECEIVES } else { 0 };
    // Receives hold what this side advertised it receives, at least.
    let receive_size = PrivateMessage::decode(rep).map_or(RPC_RECEIVE_SIZE, |m| {
        RPC_RECEIVE_SIZE.max(m.max_recv.bytes() as usize)
    });
    request
        .accept(rep, receives, receive_size, timeout)
        .and_then(|mut conn| {
            if args.answer_rpc {
                let own = PrivateMessage::decode(rep).ok();
                let until = Instant::now() + if hold.is_zero() { RPC_LIMIT } else { hold };
                rpc::serve(&mut conn, own.as_ref(), &request_pdata, args.fault, until)?;
            } else if !hold.is_zero() && conn.wait_peer_disconnect(Instant::now() + hold)? {
                return Ok(());
            }
            conn.close(timeout)
        })
}

/// `rpcrdma-cm respond`.
pub(crate) fn respond_cmd(args: &RespondArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
    let cases = cases(args)?;
    let addr = resolve(&args.address, NFS_RDMA_PORT)?;
    let timeout = Duration::from_secs_f64(args.timeout);
    let hold = Duration::from_secs_f64(args.hold);
    let mut listener = Listener::bind(addr).context(format!("listen on {addr}"))?;
    if args.json {
        emit(out, &format!("{{\"listening\":\"{addr}\"}}\n"));
    } else {
        emit(out, &format!("listening on {addr}\n"));
    }
    let mut failed = 0u32;
    let mut n = 0u32;
    while args.count.is_none_or(|c| n < c) {
        // Until killed (or --count): an hour at a time.
        let request = match listener.next_request(Instant::now() + Duration::from_secs(3600)) {
            Ok(r) => r,
            Err(rdmacm::Error::Timeout { .. }) => continue,
            Err(e) => return Err(Failure::peer(format!("listen on {addr}: {e}"))),
        };
        let rep = &cases[n as usize % cases.len()];
        let line = RequestLine {
            conn: n,
            req: hex_or_dash(&request.private_data),
            rep: hex_or_dash(rep),
        };
        emit(
            out,
            &if args.json {
                json_line(&line)
            } else {
                line.render()
            },
        );
        n += 1;
        if let Some(path) = &args.wait_for {
            wait_for(path)?;
        }
        if args.reject_nonconforming && PrivateMessage::decode(&request.private_data).is_err() {
            if let Err(e) = request.reject(&[]) {
                failed += 1;
                eprintln!("rpcrdma-cm: conn {}: {e}", n - 1);
            }
            continue;
        }
        if let Err(e) = accept_and_serve(args, request, rep, timeout, hold) {
            // A requester that gives up is what some tests provoke: said,
            // counted, and the listener goes on.
            failed += 1;
            eprintln!("rpcrdma-cm: conn {}: {e}", n - 1);
        }
    }
    Ok(if failed == 0 { Exit::Ok } else { Exit::Peer })
}
