// SPDX-License-Identifier: GPL-2.0

//! The counters debugfs `stats` shows, one set per role: updated with
//! relaxed atomics by the callbacks, read without a lock.

use crate::cm_private::{Negotiated, Nonconformance, PrivateMessage};
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters for one role.
#[derive(Default)]
pub(crate) struct RoleStats {
    /// Connections negotiated (responder: accepts that went out).
    pub(crate) connections: AtomicU64,
    /// Of those, with a conforming message from the peer.
    pub(crate) conforming: AtomicU64,
    /// Of those, without one, by cause (`Nonconformance::index`).
    pub(crate) nonconforming: [AtomicU64; Nonconformance::COUNT],
    /// Conforming messages with reserved flag bits set.
    pub(crate) reserved_flags: AtomicU64,
    /// Connections that use Remote Invalidation.
    pub(crate) remote_inv: AtomicU64,
    /// Connections on which this side sent no private data.
    pub(crate) private_data_off: AtomicU64,
    /// Connections left to the stock code because their entry could not be
    /// allocated (not counted in `connections`).
    pub(crate) no_memory: AtomicU64,
}

impl RoleStats {
    /// Count one negotiated connection; `sent`: this side sent private data.
    pub(crate) fn record(
        &self,
        peer: &Result<PrivateMessage, Nonconformance>,
        n: &Negotiated,
        sent: bool,
    ) {
        self.connections.fetch_add(1, Relaxed);
        match peer {
            Ok(m) => {
                self.conforming.fetch_add(1, Relaxed);
                if m.flags.reserved_bits() != 0 {
                    self.reserved_flags.fetch_add(1, Relaxed);
                }
            }
            Err(why) => {
                // `index()` < `COUNT` for every cause (checked at compile
                // time in the core); `get` keeps even a slip from panicking.
                if let Some(count) = self.nonconforming.get(why.index()) {
                    count.fetch_add(1, Relaxed);
                }
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
