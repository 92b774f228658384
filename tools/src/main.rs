// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm`: userspace companion of rpcrdma_cm.ko.
//!
//! Subcommands: `decode`, `encode`, `negotiate` (RFC 8797 private data),
//! `ping` (ONC RPC NULL over TCP), `status` (the module's debugfs).
//! `rpcrdma-cm --help` lists them with examples. Every protocol decision
//! comes from the protocol core (`rpcrdma-cm-proto`).
//!
//! Exit status: 0 success; 1 the peer, the data or the system answered but
//! not as it should (non-conforming private data, lost or failed calls,
//! module not loaded); 2 usage error.

mod conform;
mod rdma;
mod report;
mod respond;
mod responder;
mod rpc;
mod status;
mod storm;

use clap::{Args, Parser, Subcommand};
use report::{hex, parse_hex, NegotiateReport, PrivateDataReport};
use rpcrdma_cm_proto::cm_private::{InlineSize, LocalLimits};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// Exit status of a subcommand.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Exit {
    /// 0: everything as expected.
    Ok = 0,
    /// 1: the peer, the data or the system did not answer as it should.
    Peer = 1,
    /// 2: the command line is wrong.
    Usage = 2,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// A failure that ends a subcommand: its message goes to stderr.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Failure {
    /// The exit status.
    pub exit: Exit,
    /// What went wrong, one line.
    pub message: String,
}

impl Failure {
    /// A failure of the peer or the system (exit 1).
    pub fn peer(message: impl Into<String>) -> Self {
        Failure {
            exit: Exit::Peer,
            message: message.into(),
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            exit: Exit::Usage,
            message: message.into(),
        }
    }
}

/// The exit status paragraph shown by every `--help`.
const EXIT_STATUS: &str = "Exit status:
  0  success
  1  the peer, the data or the system did not answer as it should
     (non-conforming private data, lost or failed calls, module not loaded)
  2  usage error";

/// Userspace companion of rpcrdma_cm.ko: RFC 8797 private data, RPC ping, module status.
#[derive(Parser, Debug)]
#[command(name = "rpcrdma-cm", version, after_help = EXIT_STATUS)]
pub(crate) struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Decode RFC 8797 private data (any length) and say whether it conforms.
    #[command(after_help = concat!(
        "Example:\n",
        "  $ rpcrdma-cm decode f6ab0e1801010303\n",
        "  raw: f6ab0e1801010303 (8 octets)\n",
        "  conforming: version 1\n",
        "    remote invalidation: true\n",
        "    max send: 4096 bytes\n",
        "    max recv: 4096 bytes\n\n",
        "Exit status: 0 conforming, 1 not conforming, 2 usage error."
    ))]
    Decode(DecodeArgs),
    /// Print the 8 octets this side would advertise for the given limits.
    #[command(after_help = concat!(
        "Example:\n",
        "  $ rpcrdma-cm encode --send 65536 --no-ri\n",
        "  f6ab0e1801003f03\n\n",
        "Exit status: 0 success, 2 usage error."
    ))]
    Encode(EncodeArgs),
    /// Negotiate this side's limits against a peer's private data.
    #[command(after_help = concat!(
        "Example:\n",
        "  $ rpcrdma-cm negotiate --send 65536 f6ab0e1801010f0f\n",
        "  local: send 65536 recv 4096 remote invalidation true\n",
        "    advertises: f6ab0e1801013f03\n",
        "  peer:\n",
        "    raw: f6ab0e1801010f0f (8 octets)\n",
        "    ...\n",
        "  negotiated:\n",
        "    send threshold: 16384 bytes\n",
        "    recv threshold: 4096 bytes\n",
        "    remote invalidation: true\n\n",
        "Exit status: 0 the peer's data conforms, 1 it does not (the RFC default\n",
        "is used), 2 usage error."
    ))]
    Negotiate(NegotiateArgs),
    /// Connect to an RPC-over-RDMA listener with chosen CM private data and show what it answers.
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
    Probe(rdma::ProbeArgs),
    /// Check an NFS/RDMA server against RFC 8797: one verdict per requirement a requester can observe.
    #[command(after_help = concat!(
        "Example:\n",
        "  $ rpcrdma-cm conform 192.168.100.1\n",
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
        "Exit status: 0 no requirement failed, 1 one failed or the server did\n",
        "not accept a conforming request, 2 usage error."
    ))]
    Conform(conform::ConformArgs),
    /// Listen for RDMA CM connects, accept each with chosen private data and print what the requester sent.
    #[command(after_help = concat!(
        "Example:\n",
        "  $ rpcrdma-cm respond --no-pdata --count 1 192.168.100.2:20050\n",
        "  listening on 192.168.100.2:20050\n",
        "  conn 0 req=f6ab0e1801010303000000... rep=-\n\n",
        "Each connection is accepted, then disconnected (after --hold); no RPC is\n",
        "answered. \"req\" is the request's private data as the CM delivered it\n",
        "(padded to 56 octets on InfiniBand and RoCE, exact over iWARP).\n\n",
        "Exit status: 0 every connection was established and closed, 1 one was\n",
        "not or the listener failed, 2 usage error."
    ))]
    Respond(respond::RespondArgs),
    /// Many connects to an RPC-over-RDMA listener, each with random (seeded) private data.
    #[command(after_help = concat!(
        "Example:\n",
        "  $ rpcrdma-cm storm --count 3 --seed 1 192.168.100.1\n",
        "  conn 0 req=f6ab0e18... rep=f6ab0e1801010303... outcome=accepted\n",
        "  ...\n",
        "  $ rpcrdma-cm storm --count 3 --seed 1 --print-cases\n\n",
        "One line per connect: what was sent, what the accept (or reject) carried,\n",
        "and the outcome. The same seed gives the same private data.\n\n",
        "Exit status: 0 every connect was accepted and cleanly disconnected,\n",
        "1 otherwise, 2 usage error."
    ))]
    Storm(storm::StormArgs),
    /// ONC RPC NULL calls over TCP or RPC-over-RDMA, with round trips and losses.
    #[command(after_help = concat!(
        "Example:\n",
        "  $ rpcrdma-cm ping --transport rdma --count 3 --version 4 192.168.100.1\n\n",
        "Exit status: 0 every call was answered with SUCCESS, 1 otherwise,\n",
        "2 usage error."
    ))]
    Ping(rpc::PingArgs),
    /// The module's connections and counters, from its debugfs files.
    #[command(after_help = concat!(
        "Example:\n",
        "  $ rpcrdma-cm status\n",
        "  ROLE       PEER                 CONFORMANCE  PEER SEND/RECV  ADVERTISED       NEGOTIATED  RI\n",
        "  requester  192.168.100.1:20049  ok           4096/4096       4096/4096 ri=1   4096/4096   no\n\n",
        "  ROLE       CONNECTIONS  CONFORMING  ABSENT  ZEROED  SHORT  BAD_MAGIC ...\n",
        "  requester  1            1           0       0       0      0 ...\n\n",
        "Needs root (debugfs). Exit status: 0 success, 1 the module is not loaded,\n",
        "debugfs is not mounted or its files cannot be read, 2 usage error."
    ))]
    Status(status::StatusArgs),
    /// Write the manual pages (rpcrdma-cm.1, rpcrdma-cm-SUBCOMMAND.1) into a directory.
    #[command(hide = true)]
    Man {
        /// The directory (created if missing).
        out_dir: std::path::PathBuf,
    },
}

/// Arguments of `decode`.
#[derive(Args, Debug)]
pub(crate) struct DecodeArgs {
    /// The private data in hex (spaces, colons and a leading 0x allowed; "" for none).
    #[arg(value_parser = octets, allow_hyphen_values = true)]
    pub data: Octets,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `encode`.
#[derive(Args, Debug)]
pub(crate) struct EncodeArgs {
    /// This side's limits.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `negotiate`.
#[derive(Args, Debug)]
pub(crate) struct NegotiateArgs {
    /// This side's limits.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// This side sends no private data (it then negotiates as the RFC default).
    #[arg(long)]
    pub no_pdata: bool,
    /// The peer's private data in hex ("" for none).
    #[arg(value_parser = octets, allow_hyphen_values = true)]
    pub peer: Octets,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// This side's inline limits and Remote Invalidation.
#[derive(Args, Debug, Clone, Copy)]
pub(crate) struct LimitArgs {
    /// Largest message this side sends, bytes (rounded down to 1024..262144, multiples of 1024).
    #[arg(long, value_name = "BYTES", default_value_t = 4096, value_parser = inline_bytes)]
    pub send: u32,
    /// Largest message this side receives, bytes (rounded like --send).
    #[arg(long, value_name = "BYTES", default_value_t = 4096, value_parser = inline_bytes)]
    pub recv: u32,
    /// This side does not offer Remote Invalidation.
    #[arg(long)]
    pub no_ri: bool,
}

impl LimitArgs {
    /// The limits as the protocol core takes them.
    pub fn limits(&self) -> LocalLimits {
        LocalLimits {
            max_send: InlineSize::from_bytes(self.send),
            max_recv: InlineSize::from_bytes(self.recv),
            remote_invalidation: !self.no_ri,
        }
    }
}

/// Octets given in hex on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Octets(pub Vec<u8>);

/// clap value parser for [`Octets`].
fn octets(s: &str) -> Result<Octets, String> {
    parse_hex(s).map(Octets)
}

/// clap value parser for an inline size in bytes: a number, which the
/// protocol core rounds to what the encoding can carry.
fn inline_bytes(s: &str) -> Result<u32, String> {
    let n: u32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a byte count"))?;
    Ok(InlineSize::from_bytes(n).bytes())
}

/// Print `value` as pretty JSON followed by a newline.
pub(crate) fn json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("\"{e}\""));
    s.push('\n');
    s
}

/// `value` as one line of JSON followed by a newline (for streams of
/// objects, one a line).
pub(crate) fn json_line<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string(value).unwrap_or_else(|e| format!("\"{e}\""));
    s.push('\n');
    s
}

/// `encode --json`.
#[derive(Serialize, Debug)]
struct EncodeReport {
    /// The 8 octets, hex.
    advertisement: String,
    /// Largest message sent, bytes.
    max_send: u32,
    /// Largest message received, bytes.
    max_recv: u32,
    /// Remote Invalidation offered.
    remote_invalidation: bool,
}

/// Run one subcommand, writing what it prints on stdout to `out`.
pub(crate) fn run(command: Command, out: &mut dyn Write) -> Result<Exit, Failure> {
    match command {
        Command::Decode(a) => {
            let r = PrivateDataReport::new(&a.data.0);
            let text = if a.json {
                json(&r)
            } else {
                let mut t = String::new();
                r.render(&mut t, "");
                t
            };
            emit(out, &text);
            Ok(if r.conforming() { Exit::Ok } else { Exit::Peer })
        }
        Command::Encode(a) => {
            let limits = a.limits.limits();
            let advertisement = hex(&limits.advertisement().encode());
            let text = if a.json {
                json(&EncodeReport {
                    advertisement,
                    max_send: limits.max_send.bytes(),
                    max_recv: limits.max_recv.bytes(),
                    remote_invalidation: limits.remote_invalidation,
                })
            } else {
                format!("{advertisement}\n")
            };
            emit(out, &text);
            Ok(Exit::Ok)
        }
        Command::Negotiate(a) => {
            let r = NegotiateReport::new(&a.limits.limits(), !a.no_pdata, &a.peer.0);
            emit(out, &if a.json { json(&r) } else { r.render() });
            Ok(if r.peer.conforming() {
                Exit::Ok
            } else {
                Exit::Peer
            })
        }
        Command::Ping(a) => rpc::ping_cmd(&a, out),
        Command::Probe(a) => rdma::probe_cmd(&a, out),
        Command::Conform(a) => conform::conform_cmd(&a, out),
        Command::Respond(a) => respond::respond_cmd(&a, out),
        Command::Storm(a) => storm::storm_cmd(&a, out),
        Command::Status(a) => status::status_cmd(&a, out),
        Command::Man { out_dir } => {
            use clap::CommandFactory;
            std::fs::create_dir_all(&out_dir)
                .and_then(|()| clap_mangen::generate_to(Cli::command(), &out_dir))
                .map_err(|e| Failure::peer(format!("{}: {e}", out_dir.display())))?;
            Ok(Exit::Ok)
        }
    }
}

/// Write `text` to `out` and flush it; a closed stdout is not an error
/// worth more than the exit status the subcommand already has.
pub(crate) fn emit(out: &mut dyn Write, text: &str) {
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut stdout = std::io::stdout().lock();
    match run(cli.command, &mut stdout) {
        Ok(exit) => exit.into(),
        Err(f) => {
            eprintln!("rpcrdma-cm: {}", f.message);
            f.exit.into()
        }
    }
}

#[cfg(test)]
mod tests;
