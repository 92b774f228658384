// SPDX-License-Identifier: GPL-2.0

//! rpcrdma_cm: RFC 8797 CM private data negotiation for NFS over RDMA.
//!
//! A companion of xprtrdma (client) and svcrdma (server): through the
//! `rpcrdma_cm` hooks it builds the private data of every connect and
//! accept, parses the peer's, and hands the negotiated inline thresholds
//! and the Remote Invalidation decision to the transport. Every protocol
//! decision comes from the pure core in `proto/`, which has no kernel
//! dependency. Unloaded, the transports behave as stock.
//!
//! Module parameters, debugfs and the clock come through `boundary`.

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use kernel::alloc::{flags::GFP_KERNEL, KBox};
use kernel::prelude::*;
use kernel::rbtree::{RBTree, RBTreeNode};
#[cfg(not(rpcrdma_cm_abstraction_in_module))]
use kernel::sunrpc::rdma_cm::{self, Conn, Local, Outcome, Role, SockAddr};
use kernel::sync::SpinLock;
use kernel::{new_spinlock, ThisModule};

#[path = "proto/cm_private.rs"]
pub mod cm_private;

// A kernel whose Rust crate lacks `sunrpc::rdma_cm` (a distribution's, built
// without the series) gets the abstraction compiled into this module, from
// the same source file (scripts/distro/): it names `crate::bindings`,
// `crate::error` and `crate::prelude`, which are then these.
#[cfg(rpcrdma_cm_abstraction_in_module)]
use kernel::{error, prelude};

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
use rdma_cm::{Conn, Local, Outcome, Role, SockAddr};

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

use boundary::Stopwatch;
use cm_private::{
    negotiate, InlineSize, LocalLimits, Negotiated, Nonconformance, PrivateMessage, MESSAGE_LEN,
};

// The parameters are the C shim's (`module_param_cb` there).
#[cfg(rpcrdma_cm_boundary_c_shim)]
module! {
    type: RpcrdmaCm,
    name: "rpcrdma_cm",
    description: "RFC 8797 CM private data negotiation for NFS over RDMA",
    license: "GPL",
}

// The parameters are read once, at load, by `boundary::load_params`; at run
// time they are set through `rpcrdma_cm/parameters/` in debugfs.
#[cfg(rpcrdma_cm_boundary_kernel_crate)]
module! {
    type: RpcrdmaCm,
    name: "rpcrdma_cm",
    description: "RFC 8797 CM private data negotiation for NFS over RDMA",
    license: "GPL",
    params: {
        requester_send_size: u32 {
            default: 0,
            description: "Client: inline send size to advertise (0: transport's; 1024..262144)",
        },
        requester_recv_size: u32 {
            default: 0,
            description: "Client: inline receive size to advertise (0: transport's; 1024..262144)",
        },
        responder_send_size: u32 {
            default: 0,
            description: "Server: inline send size to advertise (0: transport's; 1024..262144)",
        },
        responder_recv_size: u32 {
            default: 0,
            description: "Server: inline receive size to advertise (0: transport's; 1024..262144)",
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

/// Octets of the peer's private data kept for debugfs.
const RAW_KEPT: usize = MESSAGE_LEN;

/// One live connection, as debugfs shows it.
struct Entry {
    /// The transport's identifier of the connection, the table's key.
    cookie: usize,
    /// Which end this host is.
    role: Role,
    /// This host's address.
    local: SockAddr,
    /// The peer's address.
    peer: SockAddr,
    /// The first octets of the peer's private data.
    peer_raw: [u8; RAW_KEPT],
    /// The full length of the peer's private data.
    peer_len: usize,
    /// The peer's message, once received.
    peer_msg: Option<Result<PrivateMessage, Nonconformance>>,
    /// What this side sent; `None` if it sent no private data.
    advertised: Option<PrivateMessage>,
    /// This side's limits.
    limits: LocalLimits,
    /// The outcome, once known.
    negotiated: Option<Negotiated>,
}

impl Entry {
    /// A connection this side has just advertised `advertised` on.
    fn new(conn: &Conn, limits: LocalLimits, advertised: Option<PrivateMessage>) -> Entry {
        Entry {
            cookie: conn.cookie(),
            role: conn.role(),
            local: conn.local(),
            peer: conn.peer(),
            peer_raw: [0; RAW_KEPT],
            peer_len: 0,
            peer_msg: None,
            advertised,
            limits,
            negotiated: None,
        }
    }

    /// The send threshold the transport applies, as its tracepoint shows it.
    ///
    /// svcrdma does not hold a client that sent no conforming private
    /// data to RFC 8797's assumed 1 KB receive size (it may be an RFC 8166
    /// client that sizes Reply chunks by its buffers), only to what this
    /// side advertised it sends (1 KB with `nonconforming_requester_1k`),
    /// or RFC 8797's 1 KB default if this side sent nothing either.
    fn applied_send_threshold(&self, n: &Negotiated) -> u32 {
        match (self.role, &self.peer_msg) {
            (Role::Responder, Some(Err(_))) => {
                negotiating_as(&self.limits, self.advertised.is_some())
                    .max_send
                    .bytes()
            }
            _ => n.send_threshold.bytes(),
        }
    }

    /// Keep the peer's raw private data and how it decoded.
    fn set_peer(&mut self, raw: &[u8], msg: Result<PrivateMessage, Nonconformance>) {
        let n = raw.len().min(RAW_KEPT);
        self.peer_raw[..n].copy_from_slice(&raw[..n]);
        self.peer_len = raw.len();
        self.peer_msg = Some(msg);
    }
}

impl fmt::Display for Entry {
    /// One line of key=value pairs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "role={} local={} peer={} peer_pdata=",
            role_name(self.role),
            self.local,
            self.peer
        )?;
        for b in &self.peer_raw[..self.peer_len.min(RAW_KEPT)] {
            write!(f, "{:02x}", b)?;
        }
        write!(f, " peer_pdata_len={}", self.peer_len)?;
        match &self.peer_msg {
            None => f.write_str(" peer_conformance=pending")?,
            Some(Ok(m)) => write!(
                f,
                concat!(
                    " peer_conformance=ok peer_send={} peer_recv={}",
                    " peer_remote_inv={} peer_reserved={:#04x}"
                ),
                m.max_send,
                m.max_recv,
                u8::from(m.flags.remote_invalidation()),
                m.flags.reserved_bits()
            )?,
            Some(Err(why)) => write!(f, " peer_conformance={}", why.name())?,
        }
        match &self.advertised {
            None => f.write_str(" advertised=none")?,
            Some(m) => write!(
                f,
                " advertised_send={} advertised_recv={} advertised_remote_inv={}",
                m.max_send,
                m.max_recv,
                u8::from(m.flags.remote_invalidation())
            )?,
        }
        write!(
            f,
            " local_send={} local_recv={}",
            self.limits.max_send, self.limits.max_recv
        )?;
        match &self.negotiated {
            None => f.write_str(" negotiated=pending"),
            Some(n) => write!(
                f,
                " send_threshold={} recv_threshold={} remote_inv={}",
                self.applied_send_threshold(n),
                n.recv_threshold,
                u8::from(n.remote_invalidation)
            ),
        }
    }
}

/// The role as debugfs spells it.
fn role_name(role: Role) -> &'static str {
    match role {
        Role::Requester => "requester",
        Role::Responder => "responder",
    }
}

/// Counters for one role.
#[derive(Default)]
struct RoleStats {
    /// Connections negotiated (responder: accepts that went out).
    connections: AtomicU64,
    /// Of those, with a conforming message from the peer.
    conforming: AtomicU64,
    /// Of those, without one, by cause (`Nonconformance::index`).
    nonconforming: [AtomicU64; Nonconformance::COUNT],
    /// Conforming messages with reserved flag bits set.
    reserved_flags: AtomicU64,
    /// Connections that use Remote Invalidation.
    remote_inv: AtomicU64,
    /// Connections on which this side sent no private data.
    private_data_off: AtomicU64,
    /// Connections left to the stock code because their entry could not be
    /// allocated (not counted in `connections`).
    no_memory: AtomicU64,
}

impl RoleStats {
    /// Count one negotiated connection; `sent`: this side sent private data.
    fn record(&self, peer: &Result<PrivateMessage, Nonconformance>, n: &Negotiated, sent: bool) {
        self.connections.fetch_add(1, Relaxed);
        match peer {
            Ok(m) => {
                self.conforming.fetch_add(1, Relaxed);
                if m.flags.reserved_bits() != 0 {
                    self.reserved_flags.fetch_add(1, Relaxed);
                }
            }
            Err(why) => {
                self.nonconforming[why.index()].fetch_add(1, Relaxed);
            }
        }
        if n.remote_invalidation {
            self.remote_inv.fetch_add(1, Relaxed);
        }
        if !sent {
            self.private_data_off.fetch_add(1, Relaxed);
        }
    }
}

/// The hook callbacks, one per role they run in, as
/// `rpcrdma_cm/callback_times` names them.
#[derive(Clone, Copy)]
#[repr(usize)]
enum Callback {
    /// `prepare_connect` (client).
    PrepareConnect = 0,
    /// `established` (client).
    Established = 1,
    /// `closed` of a client connection.
    RequesterClosed = 2,
    /// `prepare_accept` (server).
    PrepareAccept = 3,
    /// `accepted` (server).
    Accepted = 4,
    /// `closed` of a server connection.
    ResponderClosed = 5,
}

impl Callback {
    /// Every callback, in `callback_times` order; `ALL[c as usize] == c`.
    const ALL: [Callback; 6] = [
        Callback::PrepareConnect,
        Callback::Established,
        Callback::RequesterClosed,
        Callback::PrepareAccept,
        Callback::Accepted,
        Callback::ResponderClosed,
    ];

    /// The callback's line name in `callback_times`: the role, then the
    /// callback.
    fn name(self) -> &'static str {
        match self {
            Callback::PrepareConnect => "requester prepare_connect",
            Callback::Established => "requester established",
            Callback::RequesterClosed => "requester closed",
            Callback::PrepareAccept => "responder prepare_accept",
            Callback::Accepted => "responder accepted",
            Callback::ResponderClosed => "responder closed",
        }
    }

    /// `closed` of a connection of `role`.
    fn closed(role: Role) -> Callback {
        match role {
            Role::Requester => Callback::RequesterClosed,
            Role::Responder => Callback::ResponderClosed,
        }
    }
}

// `Callback as usize` indexes `CmState::callback_times`: a variant out of
// `ALL`'s order would count one callback's time under another's name.
const _: () = {
    let mut i = 0;
    while i < Callback::ALL.len() {
        assert!(Callback::ALL[i] as usize == i);
        i += 1;
    }
};

/// The time spent in one callback, over all its calls: elapsed
/// CLOCK_MONOTONIC nanoseconds from the first to the last statement of the
/// callback's body, including any preemption and interrupts in between,
/// excluding the `rdma_cm` abstraction's conversions and the transport's
/// dispatch around the call.
///
/// The three counters are updated and read separately: a line read while a
/// callback returns may count its call without its time yet.
#[derive(Default)]
struct CallbackTime {
    /// Calls timed.
    calls: AtomicU64,
    /// Their sum (a u64 of nanoseconds wraps after centuries).
    total_ns: AtomicU64,
    /// The longest.
    max_ns: AtomicU64,
}

impl CallbackTime {
    /// Count one call that took `ns`.
    fn add(&self, ns: u64) {
        self.calls.fetch_add(1, Relaxed);
        self.total_ns.fetch_add(ns, Relaxed);
        // The common case, not a new maximum, needs no locked update.
        if ns > self.max_ns.load(Relaxed) {
            self.max_ns.fetch_max(ns, Relaxed);
        }
    }
}

/// Times one callback: created first in the callback's body, so dropped
/// last, after the return value is computed; adds the elapsed time to its
/// counters on every return path.
#[must_use = "the call is timed until the timer is dropped"]
struct CallbackTimer<'a> {
    /// Where the time goes.
    time: &'a CallbackTime,
    /// Started when the callback was entered.
    start: Stopwatch,
}

impl<'a> CallbackTimer<'a> {
    /// Start timing a call that adds to `time`.
    fn start(time: &'a CallbackTime) -> Self {
        CallbackTimer {
            time,
            start: Stopwatch::start(),
        }
    }
}

impl Drop for CallbackTimer<'_> {
    fn drop(&mut self) {
        // CLOCK_MONOTONIC does not go back; a negative difference is
        // impossible, and would be counted as 0 rather than as 2^64 - 1.
        let ns = self.start.elapsed_ns();
        self.time.add(u64::try_from(ns).unwrap_or(0));
    }
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
/// reader cannot hold up the work queue. Timing each callback
/// (`callback_times`) adds two `ktime_get()` and a few relaxed atomic
/// updates, no lock, sleep or allocation.
#[pin_data]
struct CmState {
    /// Live connections, keyed by their cookie.
    #[pin]
    table: SpinLock<RBTree<usize, Entry>>,
    /// Counters of the client side.
    requester: RoleStats,
    /// Counters of the server side.
    responder: RoleStats,
    /// Time spent in each callback, in `Callback::ALL` order.
    callback_times: [CallbackTime; Callback::ALL.len()],
}

/// The names of the nonconformance causes, in `Nonconformance::index` order.
const CAUSES: [&str; Nonconformance::COUNT] = [
    Nonconformance::Absent.name(),
    Nonconformance::Zeroed { len: 0 }.name(),
    Nonconformance::Short { len: 0 }.name(),
    Nonconformance::BadMagic { found: 0 }.name(),
    Nonconformance::UnknownVersion { found: 0 }.name(),
];

/// A connection's entry, allocated before it is linked into the table.
type EntryNode = RBTreeNode<usize, Entry>;

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

    /// Start timing a call of `callback`; the time is counted when the
    /// returned timer is dropped.
    fn time(&self, callback: Callback) -> CallbackTimer<'_> {
        CallbackTimer::start(&self.callback_times[callback as usize])
    }

    /// The counters of `role`.
    fn stats(&self, role: Role) -> &RoleStats {
        match role {
            Role::Requester => &self.requester,
            Role::Responder => &self.responder,
        }
    }

    /// Allocate the node for `entry`, outside any lock.
    ///
    /// The transports call in a NOIO scope, so `GFP_KERNEL` cannot recurse into
    /// FS or I/O reclaim here. On failure the caller leaves the connection to
    /// the stock code, which handles it correctly without this module; the
    /// role's `no_memory` counts it.
    fn node(&self, entry: Entry) -> Result<EntryNode> {
        let role = entry.role;
        RBTreeNode::new(entry.cookie, entry, GFP_KERNEL).inspect_err(|_| {
            self.stats(role).no_memory.fetch_add(1, Relaxed);
            boundary::warn_no_memory();
        })
    }

    /// Link a connection's node into the table.
    fn insert(&self, node: EntryNode) {
        // A node left by a connection whose `closed` never came (its cookie,
        // an address, was reused) is replaced; it is freed after unlocking.
        let replaced = self.table.lock().insert(node);
        drop(replaced);
    }

    /// Run `f` on the entry of `cookie`, if there is one.
    fn with_entry<R>(&self, cookie: usize, f: impl FnOnce(&mut Entry) -> R) -> Option<R> {
        self.table.lock().get_mut(&cookie).map(f)
    }

    /// Forget the connection of `cookie`; its node is freed after unlocking.
    fn remove(&self, cookie: usize) {
        let removed = self.table.lock().remove_node(&cookie);
        drop(removed);
    }

    /// The first cookie at or after `key`, for the debugfs iterator.
    fn cookie_at_or_after(&self, key: usize) -> Option<usize> {
        self.table
            .lock()
            .cursor_lower_bound(&key)
            .map(|cursor| *cursor.current().0)
    }

    /// debugfs `connections`: the line of the connection of `cookie`, if it is
    /// still there.
    ///
    /// The lock is held for this one line only.
    fn show_connection(&self, cookie: usize, out: &mut dyn fmt::Write) {
        if let Some(e) = self.table.lock().get(&cookie) {
            let _ = writeln!(out, "{}", e);
        }
    }

    /// debugfs `stats`: one line of counters per role.
    fn show_stats(&self, out: &mut dyn fmt::Write) {
        for role in [Role::Requester, Role::Responder] {
            let s = self.stats(role);
            let _ = write!(
                out,
                "{} connections={} conforming={}",
                role_name(role),
                s.connections.load(Relaxed),
                s.conforming.load(Relaxed)
            );
            for (name, count) in CAUSES.iter().zip(s.nonconforming.iter()) {
                let _ = write!(out, " {}={}", name, count.load(Relaxed));
            }
            let _ = writeln!(
                out,
                " reserved_flags={} remote_inv={} private_data_off={} no_memory={}",
                s.reserved_flags.load(Relaxed),
                s.remote_inv.load(Relaxed),
                s.private_data_off.load(Relaxed),
                s.no_memory.load(Relaxed)
            );
        }
    }

    /// debugfs `callback_times`: one line per callback.
    fn show_callback_times(&self, out: &mut dyn fmt::Write) {
        for (callback, t) in Callback::ALL.iter().zip(self.callback_times.iter()) {
            let _ = writeln!(
                out,
                "{} calls={} total_ns={} max_ns={}",
                callback.name(),
                t.calls.load(Relaxed),
                t.total_ns.load(Relaxed),
                t.max_ns.load(Relaxed)
            );
        }
    }
}

/// The size parameters (send, receive) that apply to `role`; `None` where
/// the transport's own setting applies.
fn sizes_for(p: &Params, role: Role) -> (Option<InlineSize>, Option<InlineSize>) {
    match role {
        Role::Requester => (p.requester_send, p.requester_recv),
        Role::Responder => (p.responder_send, p.responder_recv),
    }
}

/// This side's limits: the size parameters where set, else the transport's
/// setting, never above what the transport can allocate.
fn local_limits(
    local: &Local,
    (send, recv): (Option<InlineSize>, Option<InlineSize>),
    remote_invalidation: bool,
) -> LocalLimits {
    let ceiling = InlineSize::from_bytes(local.ceiling());
    LocalLimits {
        max_send: send
            .unwrap_or(InlineSize::from_bytes(local.max_send))
            .min(ceiling),
        max_recv: recv
            .unwrap_or(InlineSize::from_bytes(local.max_recv))
            .min(ceiling),
        remote_invalidation: remote_invalidation && local.remote_invalidation,
    }
}

/// The responder's limits for a requester that sent `peer`.
///
/// With `nonconforming_requester_1k` and private data sent, a requester
/// without a conforming message gets a send size of 1 KB, which the Accept
/// advertises and the transport applies (RFC 8797 section 5: the responder
/// MUST assume the requester's 1 KB default). Otherwise `limits` as they
/// are: the transport then holds such a requester to the send size
/// advertised, or to 1 KB if this side sends no message either
/// (`rpcrdma_cm_bound()`, for RFC 8166 clients).
fn responder_limits(
    limits: LocalLimits,
    peer: &Result<PrivateMessage, Nonconformance>,
    p: &Params,
) -> LocalLimits {
    if p.nonconforming_requester_1k && p.send_private_data && peer.is_err() {
        limits.with_default_send()
    } else {
        limits
    }
}

/// Apply `limits` to the transport and write the advertisement, if any.
fn advertise(
    limits: &LocalLimits,
    send_private_data: bool,
    local: &mut Local,
    pdata: &mut [u8],
) -> Result<(usize, Option<PrivateMessage>)> {
    local.max_send = limits.max_send.bytes();
    local.max_recv = limits.max_recv.bytes();
    local.remote_invalidation = limits.remote_invalidation;
    if !send_private_data {
        return Ok((0, None));
    }
    let msg = limits.advertisement();
    pdata
        .get_mut(..MESSAGE_LEN)
        .ok_or(EINVAL)?
        .copy_from_slice(&msg.encode());
    Ok((MESSAGE_LEN, Some(msg)))
}

/// The limits this side negotiates with: its own if it advertised them,
/// else what the peer assumes about a side that sent nothing.
fn negotiating_as(limits: &LocalLimits, advertised: bool) -> &LocalLimits {
    if advertised {
        limits
    } else {
        &LocalLimits::RFC_DEFAULT
    }
}

/// What the transport applies, from the core's negotiation.
fn outcome(n: &Negotiated) -> Outcome {
    Outcome {
        send_threshold: n.send_threshold.bytes(),
        recv_threshold: n.recv_threshold.bytes(),
        remote_invalidation: n.remote_invalidation,
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

    fn established(
        &self,
        conn: &Conn,
        _local: &Local,
        peer_pdata: &[u8],
        bound: &Outcome,
    ) -> Outcome {
        let _timer = self.time(Callback::Established);
        let peer = PrivateMessage::decode(peer_pdata);
        // Negotiate with what this side advertised and record the outcome,
        // under one lock. The transports call this only for connections
        // whose `prepare_connect` this registration answered, which all
        // have an entry.
        let tracked = self.with_entry(conn.cookie(), |e| {
            let sent = e.advertised.is_some();
            let n = negotiate(negotiating_as(&e.limits, sent), &peer);
            e.set_peer(peer_pdata, peer);
            e.negotiated = Some(n);
            (n, sent)
        });
        let Some((n, sent)) = tracked else {
            // Not reached; the transport's bound is what RFC 8797 allows
            // for the octets sent.
            return *bound;
        };
        self.stats(Role::Requester).record(&peer, &n, sent);
        outcome(&n)
    }

    fn prepare_accept(
        &self,
        conn: &Conn,
        peer_pdata: &[u8],
        local: &mut Local,
        pdata: &mut [u8],
    ) -> Result<(usize, Outcome)> {
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
        entry.negotiated = Some(n);
        let node = self.node(entry)?;
        *local = proposed;
        self.insert(node);
        // Counted in `accepted`, once the accept has really gone out.
        Ok((len, outcome(&n)))
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

/// The module instance: the debugfs files, which own the registration and
/// remove themselves before it unregisters, waits and frees the state.
struct RpcrdmaCm {
    _debugfs: boundary::Debugfs,
}

impl kernel::Module for RpcrdmaCm {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        boundary::load_params()?;
        #[cfg(rpcrdma_cm_bench)]
        bench::run()?;
        let registration = KBox::pin_init(
            rdma_cm::Registration::<CmState>::new(CmState::new()),
            GFP_KERNEL,
        )?;
        let debugfs = boundary::Debugfs::create(registration);
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
        Ok(RpcrdmaCm { _debugfs: debugfs })
    }
}

impl Drop for RpcrdmaCm {
    fn drop(&mut self) {
        pr_info!("unregistering\n");
    }
}
