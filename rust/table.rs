// SPDX-License-Identifier: GPL-2.0

//! The connection table: one entry per connection from `prepare_connect`
//! or `prepare_accept` to `closed`, keyed by the transport's cookie: what
//! this side advertised, which `established` and `accepted` need, and what
//! debugfs shows. Entries are allocated and freed outside the table's lock
//! (see [`CmState`]); every user of the lock is in this file.

use crate::cm_private::{LocalLimits, Negotiated, Nonconformance, PrivateMessage, MESSAGE_LEN};
use crate::policy::applied_send_threshold;
use crate::{boundary, CmState, Conn, Role, SockAddr};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::prelude::*;
use kernel::rbtree::RBTreeNode;

/// Octets of the peer's private data kept for debugfs.
pub(crate) const RAW_KEPT: usize = MESSAGE_LEN;

/// One live connection, as debugfs shows it.
pub(crate) struct Entry {
    /// The transport's identifier of the connection, the table's key.
    pub(crate) cookie: usize,
    /// Which end this host is.
    pub(crate) role: Role,
    /// This host's address.
    pub(crate) local: SockAddr,
    /// The peer's address.
    pub(crate) peer: SockAddr,
    /// The first octets of the peer's private data.
    pub(crate) peer_raw: [u8; RAW_KEPT],
    /// The full length of the peer's private data.
    pub(crate) peer_len: usize,
    /// The peer's message, once received.
    pub(crate) peer_msg: Option<Result<PrivateMessage, Nonconformance>>,
    /// What this side sent; `None` if it sent no private data.
    pub(crate) advertised: Option<PrivateMessage>,
    /// This side's limits.
    pub(crate) limits: LocalLimits,
    /// The outcome, once known.
    pub(crate) negotiated: Option<Negotiated>,
    /// The send threshold the transport applies, once negotiated.
    pub(crate) applied_send_threshold: u32,
}

impl Entry {
    /// A connection this side has just advertised `advertised` on.
    pub(crate) fn new(
        conn: &Conn,
        limits: LocalLimits,
        advertised: Option<PrivateMessage>,
    ) -> Entry {
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
            applied_send_threshold: 0,
        }
    }

    /// Record the core's negotiation and the send threshold the transport
    /// applies with it ([`applied_send_threshold`], computed once here;
    /// debugfs only prints it).
    pub(crate) fn set_negotiated(&mut self, n: Negotiated) {
        self.applied_send_threshold = applied_send_threshold(
            self.role,
            &self.peer_msg,
            &self.limits,
            self.advertised.is_some(),
            &n,
        );
        self.negotiated = Some(n);
    }

    /// Keep the peer's raw private data and how it decoded.
    pub(crate) fn set_peer(&mut self, raw: &[u8], msg: Result<PrivateMessage, Nonconformance>) {
        let n = raw.len().min(RAW_KEPT);
        self.peer_raw[..n].copy_from_slice(&raw[..n]);
        self.peer_len = raw.len();
        self.peer_msg = Some(msg);
    }
}

/// A connection's entry, allocated before it is linked into the table.
type EntryNode = RBTreeNode<usize, Entry>;

impl CmState {
    /// Allocate the node for `entry`, outside any lock.
    ///
    /// The transports call in a NOIO scope, so `GFP_KERNEL` cannot recurse into
    /// FS or I/O reclaim here. On failure the caller leaves the connection to
    /// the stock code, which handles it correctly without this module; the
    /// role's `no_memory` counts it.
    pub(crate) fn node(&self, entry: Entry) -> Result<EntryNode> {
        let role = entry.role;
        RBTreeNode::new(entry.cookie, entry, GFP_KERNEL).inspect_err(|_| {
            let count = self.stats(role).no_memory.increment();
            // Said at the 1st, 2nd, 4th, 8th... of a role (powers of two):
            // a flood is not, the counter has the rest; no clock, no lock.
            if count.is_power_of_two() {
                boundary::warn_no_memory(role, count);
            }
        })
    }

    /// Link a connection's node into the table.
    pub(crate) fn insert(&self, node: EntryNode) {
        // A node left by a connection whose `closed` never came (its cookie,
        // an address, was reused) is replaced; it is freed after unlocking.
        let replaced = self.table.lock().insert(node);
        drop(replaced);
    }

    /// Run `f` on the entry of `cookie`, if there is one.
    pub(crate) fn with_entry<R>(
        &self,
        cookie: usize,
        f: impl FnOnce(&mut Entry) -> R,
    ) -> Option<R> {
        self.table.lock().get_mut(&cookie).map(f)
    }

    /// Run `f` on the entry of `cookie`, if there is one, without changing
    /// it (debugfs: one line under the lock).
    pub(crate) fn with_entry_ref<R>(
        &self,
        cookie: usize,
        f: impl FnOnce(&Entry) -> R,
    ) -> Option<R> {
        self.table.lock().get(&cookie).map(f)
    }

    /// Forget the connection of `cookie`; its node is freed after unlocking.
    pub(crate) fn remove(&self, cookie: usize) {
        let removed = self.table.lock().remove_node(&cookie);
        drop(removed);
    }

    /// The first cookie at or after `key`, for the debugfs iterator.
    pub(crate) fn cookie_at_or_after(&self, key: usize) -> Option<usize> {
        self.table
            .lock()
            .cursor_lower_bound(&key)
            .map(|cursor| *cursor.current().0)
    }
}
