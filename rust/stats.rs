// SPDX-License-Identifier: GPL-2.0

//! The counters debugfs `stats` shows, one set per role: updated by the
//! callbacks, read without a lock (`Counter`).

use crate::cm_private::{Negotiated, Nonconformance, PrivateMessage};
use crate::counter::Counter;

/// Counters for one role.
#[derive(Default)]
pub(crate) struct RoleStats {
    /// Connections negotiated (responder: accepts that went out).
    pub(crate) connections: Counter,
    /// Of those, with a conforming message from the peer.
    pub(crate) conforming: Counter,
    /// Of those, without one, by cause (`Nonconformance::index`).
    pub(crate) nonconforming: [Counter; Nonconformance::COUNT],
    /// Conforming messages with reserved flag bits set.
    pub(crate) reserved_flags: Counter,
    /// Connections that use Remote Invalidation.
    pub(crate) remote_inv: Counter,
    /// Connections on which this side sent no private data.
    pub(crate) private_data_off: Counter,
    /// Connections left to the stock code because their entry could not be
    /// allocated (not counted in `connections`).
    pub(crate) no_memory: Counter,
}

impl RoleStats {
    /// Count one negotiated connection; `sent`: this side sent private data.
    pub(crate) fn record(
        &self,
        peer: &Result<PrivateMessage, Nonconformance>,
        n: &Negotiated,
        sent: bool,
    ) {
        self.connections.increment();
        match peer {
            Ok(m) => {
                self.conforming.increment();
                if m.flags.reserved_bits() != 0 {
                    self.reserved_flags.increment();
                }
            }
            Err(why) => {
                // `index()` < `COUNT` for every cause (checked at compile
                // time in the core); `get` keeps even a slip from panicking.
                if let Some(count) = self.nonconforming.get(why.index()) {
                    count.increment();
                }
            }
        }
        if n.remote_invalidation {
            self.remote_inv.increment();
        }
        if !sent {
            self.private_data_off.increment();
        }
    }
}
