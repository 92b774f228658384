// SPDX-License-Identifier: GPL-2.0

//! rpcrdma_cm: RFC 8797 CM private data negotiation for NFS over RDMA.
//!
//! A companion of xprtrdma (client) and svcrdma (server). The protocol
//! decisions come from the pure core in `proto/`, shared with the host
//! crate that tests it; the module's parameters live in a small C file.

use kernel::prelude::*;

#[path = "proto/cm_private.rs"]
pub mod cm_private;

#[path = "proto/record_marking.rs"]
pub mod record_marking;

mod params;

use cm_private::{InlineSize, LocalLimits};

module! {
    type: RpcrdmaCm,
    name: "rpcrdma_cm",
    author: "rpcrdma_cm developers",
    description: "RFC 8797 CM private data negotiation for NFS over RDMA",
    license: "GPL",
}

/// The module instance.
struct RpcrdmaCm;

/// The stock transports' default inline size (xprtrdma's inline sysctls and
/// svcrdma's max_req_size all default to 4096).
const STOCK_INLINE: InlineSize = InlineSize::from_bytes(4096);

impl kernel::Module for RpcrdmaCm {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = params::snapshot();
        let requester = LocalLimits {
            max_send: p.requester_send.unwrap_or(STOCK_INLINE),
            max_recv: p.requester_recv.unwrap_or(STOCK_INLINE),
            remote_invalidation: p.remote_invalidation,
        };
        let responder = LocalLimits {
            max_send: p.responder_send.unwrap_or(STOCK_INLINE),
            max_recv: p.responder_recv.unwrap_or(STOCK_INLINE),
            remote_invalidation: p.remote_invalidation,
        };
        pr_info!(
            "loaded; requester would advertise {:02x?}, responder {:02x?}, private data {}\n",
            requester.advertisement().encode(),
            responder.advertisement().encode(),
            if p.send_private_data { "on" } else { "off" }
        );
        Ok(RpcrdmaCm)
    }
}

impl Drop for RpcrdmaCm {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
