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
//! module not loaded); 2 usage error; 3 `conform` could not judge something
//! and nothing failed; 4 `conform` or `probe --read` failed on this host
//! (no RDMA device, no route).

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
  2  usage error
  3  conform: nothing failed, but something could not be told
     (no answer, no connection, the deadline; --strict makes it 1)
  4  conform, probe --read: this host could not do its part
     (no RDMA device, no route, an address it cannot use)";

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
    Decode(codec::DecodeArgs),
    /// Print the 8 octets this side would advertise for the given limits.
    Encode(codec::EncodeArgs),
    /// Negotiate this side's limits against a peer's private data.
    Negotiate(codec::NegotiateArgs),
    /// Connect to an RPC-over-RDMA listener with chosen CM private data and show what it answers.
    Probe(probe::ProbeArgs),
    /// Check an NFS/RDMA server against RFC 8797: one verdict per requirement a requester can observe.
    Conform(conform::ConformArgs),
    /// Listen for RDMA CM connects, accept each with chosen private data and print what the requester sent.
    Respond(respond::RespondArgs),
    /// Many connects to an RPC-over-RDMA listener, each with random (seeded) private data.
    Storm(storm::StormArgs),
    /// ONC RPC NULL calls over TCP or RPC-over-RDMA, with round trips and losses.
    Ping(ping::PingArgs),
    /// The module's connections and counters, from its debugfs files.
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
