// SPDX-License-Identifier: GPL-2.0

//! Host build of the rpcrdma_cm protocol core.
//!
//! The part shared with the kernel lives in `rust/proto/` and is
//! compiled, unchanged, into the kernel module `rpcrdma_cm.ko` and into
//! this crate, where it is tested, fuzzed (`fuzz/`) and benchmarked. The
//! rest is the tools' and is in `src/`. All of it is `no_std`,
//! allocation-free and has no `unsafe` (this crate forbids it).
//!
//! - [`cm_private`]: the RFC 8797 CM private data message and negotiation
//!   (shared with the kernel module).
//! - [`record_marking`]: ONC RPC record marking (RFC 5531 section 11), for
//!   the tools' TCP ping; host only.
//! - [`rpcrdma_header`]: the RPC-over-RDMA Version One transport header
//!   (RFC 8166), for the tools' RDMA subcommands; host only.
//! - [`stdio`] (feature `std`): reading records from a `std::io::Read`.

#![no_std]

#[cfg(feature = "std")]
extern crate std;

#[path = "../../../rust/proto/cm_private.rs"]
pub mod cm_private;

pub mod record_marking;

pub mod rpcrdma_header;

#[cfg(feature = "std")]
pub mod stdio;
