// SPDX-License-Identifier: GPL-2.0

//! The debugfs rendering: `connections` (one line of key=value pairs per
//! connection), `stats` and `callback_times`. It only prints what the
//! callbacks stored; `rpcrdma-cm status` parses these lines.

use crate::callback_times::Callback;
use crate::cm_private::Nonconformance;
use crate::table::{Entry, RAW_KEPT};
use crate::{CmState, Role};
use core::fmt;

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
                self.applied_send_threshold,
                n.recv_threshold,
                u8::from(n.remote_invalidation)
            ),
        }
    }
}

/// The role as debugfs (and the kernel log) spells it.
pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::Requester => "requester",
        Role::Responder => "responder",
    }
}

impl CmState {
    /// debugfs `connections`: the line of the connection of `cookie`, if it is
    /// still there.
    ///
    /// The table's lock is held for this one line only.
    pub(crate) fn show_connection(&self, cookie: usize, out: &mut dyn fmt::Write) {
        self.with_entry_ref(cookie, |e| {
            let _ = writeln!(out, "{}", e);
        });
    }

    /// debugfs `stats`: one line of counters per role.
    pub(crate) fn show_stats(&self, out: &mut dyn fmt::Write) {
        for role in [Role::Requester, Role::Responder] {
            let s = self.stats(role);
            let _ = write!(
                out,
                "{} connections={} conforming={}",
                role_name(role),
                s.connections.get(),
                s.conforming.get()
            );
            for (name, count) in Nonconformance::NAMES.iter().zip(s.nonconforming.iter()) {
                let _ = write!(out, " {}={}", name, count.get());
            }
            let _ = writeln!(
                out,
                " reserved_flags={} remote_inv={} private_data_off={} no_memory={}",
                s.reserved_flags.get(),
                s.remote_inv.get(),
                s.private_data_off.get(),
                s.no_memory.get()
            );
        }
    }

    /// debugfs `callback_times`: one line per callback.
    pub(crate) fn show_callback_times(&self, out: &mut dyn fmt::Write) {
        for (callback, t) in Callback::ALL.iter().zip(self.callback_times.iter()) {
            let _ = writeln!(
                out,
                "{} calls={} total_ns={} max_ns={}",
                callback.name(),
                t.calls.get(),
                t.total_ns.get(),
                t.max_ns.get()
            );
        }
    }
}
