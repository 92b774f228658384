// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm decode`, `encode` and `negotiate`: RFC 8797 private data
//! taken apart, made, and negotiated against, by the protocol core.

use crate::args::{octets, LimitArgs, Octets};
use crate::error::{Exit, Failure};
use crate::output::{emit, json};
use crate::report::{hex, NegotiateReport, PrivateDataReport};
use clap::Args;
use serde::Serialize;
use std::io::Write;

/// Arguments of `decode`.
#[derive(Args, Debug)]
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
#[command(after_help = concat!(
    "Example:\n",
    "  $ rpcrdma-cm encode --send 65536 --no-ri\n",
    "  f6ab0e1801003f03\n\n",
    "Exit status: 0 success, 2 usage error."
))]
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

/// `rpcrdma-cm decode`.
pub(crate) fn decode_cmd(a: &DecodeArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
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

/// `rpcrdma-cm encode`.
pub(crate) fn encode_cmd(a: &EncodeArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
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

/// `rpcrdma-cm negotiate`.
pub(crate) fn negotiate_cmd(a: &NegotiateArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
    let r = NegotiateReport::new(&a.limits.limits(), !a.no_pdata, &a.peer.0);
    emit(out, &if a.json { json(&r) } else { r.render() });
    Ok(if r.peer.conforming() {
        Exit::Ok
    } else {
        Exit::Peer
    })
}
