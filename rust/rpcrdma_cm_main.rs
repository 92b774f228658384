// SPDX-License-Identifier: GPL-2.0

//! rpcrdma_cm: RFC 8797 CM private data negotiation for NFS over RDMA.
//!
//! A companion of xprtrdma (client) and svcrdma (server): through the
//! `rpcrdma_cm` hooks it builds the private data of every connect and
//! accept with the buffer sizes the transport provisions for it, and
//! parses and records the peer's; the transport then applies what RFC
//! 8797 allows for the two messages, as the peer does, and the module
//! records the same negotiation. Every protocol decision comes from the
//! pure core in `proto/`, which has no kernel dependency. Unloaded, the
//! transports behave as stock.
//!
//! The module instance, parameters, debugfs and the clock come through
//! `boundary`. The rest, one concern a file: the connection table
//! (`table`), per-role counters (`stats`; `counter`, the counters both
//! use), callback timing
//! (`callback_times`), the policy that turns parameters and the transport's
//! settings into limits (`policy`), and the debugfs lines
//! (`debugfs_render`). This file holds the module's shared state and the
//! hook callbacks.

use kernel::new_spinlock;
use kernel::prelude::*;
use kernel::rbtree::RBTree;
#[cfg(not(rpcrdma_cm_abstraction_in_module))]
use kernel::sunrpc::rdma_cm::{self, Conn, Local, Role, SockAddr};
use kernel::sync::SpinLock;

// The protocol core, private to the module: the host crate
// (tools/rpcrdma-cm-proto) compiles the same file and uses all of its API,
// the module only part of it.
#[path = "proto/cm_private.rs"]
#[expect(
    unreachable_pub,
    dead_code,
    reason = "the core's API is the host crate's too"
)]
mod cm_private;

// A kernel whose Rust crate lacks `sunrpc::rdma_cm` (a distribution's, built
// without the series) gets the abstraction compiled into this module, from
// the same source file (scripts/distro/): it names `crate::bindings`,
// `crate::error`, `crate::prelude` and `crate::types`, which are then these.
#[cfg(rpcrdma_cm_abstraction_in_module)]
use kernel::{error, prelude, types};

#[cfg(rpcrdma_cm_abstraction_in_module)]
#[path = "hook_bindings.rs"]
mod bindings;

// rustfmt::skip: rustfmt would read the file, which exists only in the
// build directory scripts/distro/distro.sh prepares.
#[cfg(rpcrdma_cm_abstraction_in_module)]
#[path = "sunrpc_rdma_cm.rs"]
#[expect(dead_code, unreachable_pub, reason = "the kernel crate's API, used in part")]
#[rustfmt::skip]
mod rdma_cm;

#[cfg(rpcrdma_cm_abstraction_in_module)]
use rdma_cm::{Conn, Local, Role, SockAddr};

#[cfg(rpcrdma_cm_bench)]
mod bench;

#[cfg(rpcrdma_cm_boundary_c_shim)]
#[path = "boundary_c_shim.rs"]
mod boundary;

#[cfg(rpcrdma_cm_boundary_kernel_crate)]
#[path = "boundary_kernel_crate.rs"]
mod boundary;

#[cfg(not(any(rpcrdma_cm_boundary_c_shim, rpcrdma_cm_boundary_kernel_crate)))]
compile_error!("build with Kbuild: it selects the boundary (C shim or kernel crate)");

mod callback_times;
mod counter;
mod debugfs_render;
mod policy;
mod stats;
mod table;

use boundary::RpcrdmaCm;
use callback_times::{Callback, CallbackTime, CallbackTimer};
use cm_private::{negotiate, InlineSize, PrivateMessage};
use policy::{advertise, local_limits, negotiating_as, responder_limits, sizes_for};
use stats::RoleStats;
use table::Entry;

// The parameters are the C shim's (`module_param_cb` there).
#[cfg(rpcrdma_cm_boundary_c_shim)]
module! {
    type: RpcrdmaCm,
    name: "rpcrdma_cm",
    description: "RFC 8797 CM private data negotiation for NFS over RDMA",
    license: "GPL",
}

// The parameters are read once, at load, by `boundary::load_params`; at run
// time they are set through the attributes of `rpcrdma_cm` in configfs
// (which a locked-down kernel lets root write, unlike debugfs). The module
// instance, `RpcrdmaCm`, is the boundary's.
#[cfg(rpcrdma_cm_boundary_kernel_crate)]
module! {
    type: RpcrdmaCm,
    name: "rpcrdma_cm",
    description: "RFC 8797 CM private data negotiation for NFS over RDMA",
    license: "GPL",
    params: {
        requester_send_size: u32 {
            default: 0,
            description: "Client: inline send size to advertise (0: transport's; 1024..65536)",
        },
        requester_recv_size: u32 {
            default: 0,
            description: "Client: inline receive size to advertise (0: transport's; 1024..65536)",
        },
        responder_send_size: u32 {
            default: 0,
            description: "Server: inline send size to advertise (0: transport's; 1024..65536)",
        },
        responder_recv_size: u32 {
            default: 0,
            description: "Server: inline receive size to advertise (0: transport's; 1024..65536)",
        },
        remote_invalidation: bool {
            default: true,
            description: "Offer (client), use (server) Remote Invalidation if the peer allows (Y)",
        },
        send_private_data: bool {
            default: true,
            description: "Send RFC 8797 private data; N: as an RFC 8166 peer without it (Y)",
        },
        nonconforming_requester_1k: bool {
            default: false,
            description: "Server: hold clients without RFC 8797 private data to 1KB inline (N)",
        },
        callback_times: bool {
            default: false,
            description: "Debugging: time each hook callback, for debugfs callback_times (N)",
        },
    },
}

/// A copy of the parameters, taken once per decision (`boundary::params()`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    /// Client send size to advertise; `None` = the transport's setting.
    pub(crate) requester_send: Option<InlineSize>,
    /// Client receive size to advertise; `None` = the transport's setting.
    pub(crate) requester_recv: Option<InlineSize>,
    /// Server send size to advertise; `None` = the transport's setting.
    pub(crate) responder_send: Option<InlineSize>,
    /// Server receive size to advertise; `None` = the transport's setting.
    pub(crate) responder_recv: Option<InlineSize>,
    /// Offer (client) or use (server) Remote Invalidation.
    pub(crate) remote_invalidation: bool,
    /// Send RFC 8797 private data at all.
    pub(crate) send_private_data: bool,
    /// Server: hold a requester without conforming private data to 1 KB.
    ///
    /// RFC 8797's default (section 5), by advertising a 1 KB send size to
    /// it, instead of this side's own send size.
    pub(crate) nonconforming_requester_1k: bool,
}

/// Everything the hook callbacks and debugfs share.
///
/// Calling context: the callbacks run on paths that memory reclaim can wait
/// for (see `kernel::sunrpc::rdma_cm`), in a NOIO allocation scope set by
/// the transports, on a CM work queue other ULPs share. So nothing is
/// allocated, and nothing sleeps, while `table` is locked: a connection's
/// node is allocated before the lock is taken and freed after it is
/// released, and every operation under the lock is a lookup, link or
/// unlink in the tree, O(log n) in the number of live connections, or the
/// formatting of one debugfs line. A spinlock, so that a preempted debugfs
/// reader cannot hold up the work queue. Timing each callback (the
/// `callback_times` setting, off by default) adds two `ktime_get()` and a
/// few relaxed atomic updates, no lock, sleep or allocation.
#[pin_data]
struct CmState {
    /// Live connections, keyed by their cookie.
    #[pin]
    table: SpinLock<RBTree<usize, Entry>>,
    /// Counters of the client side.
    requester: RoleStats,
    /// Counters of the server side.
    responder: RoleStats,
    /// Time spent in each callback while timed, in `Callback::ALL` order.
    callback_times: [CallbackTime; Callback::ALL.len()],
}

impl CmState {
    /// Empty table, zero counters.
    fn new() -> impl PinInit<Self> {
        pin_init!(CmState {
            table <- new_spinlock!(RBTree::new(), "rpcrdma_cm::table"),
            requester: RoleStats::default(),
            responder: RoleStats::default(),
            callback_times: Default::default(),
        })
    }

    /// Start timing a call of `callback` if the `callback_times` setting is
    /// on; the time is counted when the returned timer is dropped.
    fn time(&self, callback: Callback) -> CallbackTimer<'_> {
        CallbackTimer::start(
            &self.callback_times[callback as usize],
            boundary::callback_timing(),
        )
    }

    /// The counters of `role`.
    fn stats(&self, role: Role) -> &RoleStats {
        match role {
            Role::Requester => &self.requester,
            Role::Responder => &self.responder,
        }
    }
}

#[vtable]
impl rdma_cm::Operations for CmState {
    fn prepare_connect(&self, conn: &Conn, local: &mut Local, pdata: &mut [u8]) -> Result<usize> {
        let _timer = self.time(Callback::PrepareConnect);
        let p = boundary::params();
        let limits = local_limits(local, sizes_for(&p, Role::Requester), p.remote_invalidation);
        let mut proposed = *local;
        let (len, advertised) = advertise(&limits, p.send_private_data, &mut proposed, pdata)?;
        // Allocated before `local` changes: on failure the stock code
        // builds the connect, as if this module were not loaded.
        let node = self.node(Entry::new(conn, limits, advertised))?;
        *local = proposed;
        self.insert(node);
        Ok(len)
    }

    fn established(&self, conn: &Conn, _local: &Local, peer_pdata: &[u8]) {
        let _timer = self.time(Callback::Established);
        let peer = PrivateMessage::decode(peer_pdata);
        // Negotiate with what this side advertised and record the outcome,
        // under one lock: the transport computes the same thresholds from
        // the same octets (RFC 8797). The transports call this only for
        // connections whose `prepare_connect` this registration answered,
        // which all have an entry.
        let tracked = self.with_entry(conn.cookie(), |e| {
            let sent = e.advertised.is_some();
            let n = negotiate(negotiating_as(&e.limits, sent), &peer);
            e.set_peer(peer_pdata, peer);
            e.set_negotiated(n);
            (n, sent)
        });
        if let Some((n, sent)) = tracked {
            self.stats(Role::Requester).record(&peer, &n, sent);
        }
    }

    fn prepare_accept(
        &self,
        conn: &Conn,
        peer_pdata: &[u8],
        local: &mut Local,
        pdata: &mut [u8],
    ) -> Result<usize> {
        let _timer = self.time(Callback::PrepareAccept);
        let p = boundary::params();
        let peer = PrivateMessage::decode(peer_pdata);
        let limits = responder_limits(
            local_limits(local, sizes_for(&p, Role::Responder), p.remote_invalidation),
            &peer,
            &p,
        );
        let mut proposed = *local;
        let (len, advertised) = advertise(&limits, p.send_private_data, &mut proposed, pdata)?;
        let n = negotiate(negotiating_as(&limits, advertised.is_some()), &peer);
        let mut entry = Entry::new(conn, limits, advertised);
        entry.set_peer(peer_pdata, peer);
        entry.set_negotiated(n);
        let node = self.node(entry)?;
        *local = proposed;
        self.insert(node);
        // Counted in `accepted`, once the accept has really gone out.
        Ok(len)
    }

    fn accepted(&self, conn: &Conn) {
        let _timer = self.time(Callback::Accepted);
        self.with_entry(conn.cookie(), |e| {
            if let (Some(peer), Some(n)) = (&e.peer_msg, &e.negotiated) {
                self.stats(Role::Responder)
                    .record(peer, n, e.advertised.is_some());
            }
        });
    }

    fn closed(&self, conn: &Conn) {
        let _timer = self.time(Callback::closed(conn.role()));
        self.remove(conn.cookie());
    }
}

/// Before registering, at load: the parameters checked (and, in the
/// benchmark build, the table benchmark run).
fn before_registering() -> Result {
    boundary::load_params()?;
    #[cfg(rpcrdma_cm_bench)]
    bench::run()?;
    Ok(())
}

/// Registered, at load: say so, with the settings that change behaviour.
fn registered() {
    let p = boundary::params();
    pr_info!(
        "registered; private data {}, remote invalidation {}{}\n",
        if p.send_private_data { "on" } else { "off" },
        if p.remote_invalidation { "on" } else { "off" },
        if p.nonconforming_requester_1k {
            ", clients without private data held to 1KB"
        } else {
            ""
        }
    );
}

/// About to unregister, at unload: say so.
fn unregistering() {
    pr_info!("unregistering\n");
}
