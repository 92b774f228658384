// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm`: userspace companion of rpcrdma_cm.ko.
//!
//! Subcommands (one module each under `cmd/`): `decode`, `encode`,
//! `negotiate` (RFC 8797 private data), `probe`, `conform`, `respond`,
//! `storm` (RDMA CM peers), `ping` (ONC RPC NULL over TCP or RDMA),
//! `status` (the module's debugfs). `rpcrdma-cm --help` lists them with
//! examples. The transports are in `transport/`, the messages in
//! `oncrpc` and `nfs4`; every negotiation is the protocol core's
//! (`rpcrdma-cm-proto`), except `conform`'s, which judges servers by its
//! own reading of the RFC.
//!
//! Exit status: 0 success; 1 the peer, the data or the system answered but
//! not as it should (non-conforming private data, lost or failed calls,
//! module not loaded); 2 usage error.

mod args;
mod cmd;
mod error;
mod nfs4;
mod oncrpc;
mod output;
mod report;
mod transport;

use clap::{Parser, Subcommand};
use cmd::{codec, conform, ping, probe, respond, status, storm};
use error::{Context, Exit, Failure};
use std::io::Write;
use std::process::ExitCode;

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
    Decode(codec::DecodeArgs),
    /// Print the 8 octets this side would advertise for the given limits.
    #[command(after_help = concat!(
        "Example:\n",
        "  $ rpcrdma-cm encode --send 65536 --no-ri\n",
        "  f6ab0e1801003f03\n\n",
        "Exit status: 0 success, 2 usage error."
    ))]
    Encode(codec::EncodeArgs),
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
    Negotiate(codec::NegotiateArgs),
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
    Probe(probe::ProbeArgs),
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
    Ping(ping::PingArgs),
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

/// Run one subcommand, writing what it prints on stdout to `out`.
pub(crate) fn run(command: Command, out: &mut dyn Write) -> Result<Exit, Failure> {
    match command {
        Command::Decode(a) => codec::decode_cmd(&a, out),
        Command::Encode(a) => codec::encode_cmd(&a, out),
        Command::Negotiate(a) => codec::negotiate_cmd(&a, out),
        Command::Ping(a) => ping::ping_cmd(&a, out),
        Command::Probe(a) => probe::probe_cmd(&a, out),
        Command::Conform(a) => conform::conform_cmd(&a, out),
        Command::Respond(a) => respond::respond_cmd(&a, out),
        Command::Storm(a) => storm::storm_cmd(&a, out),
        Command::Status(a) => status::status_cmd(&a, out),
        Command::Man { out_dir } => {
            use clap::CommandFactory;
            std::fs::create_dir_all(&out_dir)
                .and_then(|()| clap_mangen::generate_to(Cli::command(), &out_dir))
                .context(out_dir.display())?;
            Ok(Exit::Ok)
        }
    }
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
