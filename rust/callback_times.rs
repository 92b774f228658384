// SPDX-License-Identifier: GPL-2.0

//! The time each hook callback takes, for debugfs `callback_times`, while
//! the `callback_times` setting is on (a debugging aid, off by default):
//! two clock reads and a few relaxed atomic updates (`Counter`) per call,
//! no lock, sleep or allocation. Off, a callback reads no clock and counts
//! nothing.

use crate::boundary::Stopwatch;
use crate::counter::Counter;
use crate::Role;

/// The hook callbacks, one per role they run in, as
/// `rpcrdma_cm/callback_times` names them.
#[derive(Clone, Copy)]
#[repr(usize)]
pub(crate) enum Callback {
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
    pub(crate) const ALL: [Callback; 6] = [
        Callback::PrepareConnect,
        Callback::Established,
        Callback::RequesterClosed,
        Callback::PrepareAccept,
        Callback::Accepted,
        Callback::ResponderClosed,
    ];

    /// The callback's line name in `callback_times`: the role, then the
    /// callback.
    pub(crate) fn name(self) -> &'static str {
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
    pub(crate) fn closed(role: Role) -> Callback {
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

/// The time spent in one callback, over the calls made while the setting
/// was on: elapsed
/// CLOCK_MONOTONIC nanoseconds from the first to the last statement of the
/// callback's body, including any preemption and interrupts in between,
/// excluding the `rdma_cm` abstraction's conversions and the transport's
/// dispatch around the call.
///
/// The three counters are updated and read separately: a line read while a
/// callback returns may count its call without its time yet. Turning the
/// setting off keeps what was counted.
#[derive(Default)]
pub(crate) struct CallbackTime {
    /// Calls timed.
    pub(crate) calls: Counter,
    /// Their sum (a u64 of nanoseconds wraps after centuries).
    pub(crate) total_ns: Counter,
    /// The longest.
    pub(crate) max_ns: Counter,
}

impl CallbackTime {
    /// Count one call that took `ns`.
    fn add(&self, ns: u64) {
        self.calls.increment();
        self.total_ns.add(ns);
        self.max_ns.raise_to(ns);
    }
}

/// Times one callback, if the setting was on when it began: created first
/// in the callback's body, so dropped last, after the return value is
/// computed; adds the elapsed time to its counters on every return path.
#[must_use = "the call is timed until the timer is dropped"]
pub(crate) struct CallbackTimer<'a> {
    /// Where the time goes.
    time: &'a CallbackTime,
    /// Started when the callback was entered; `None` if not timed.
    start: Option<Stopwatch>,
}

impl<'a> CallbackTimer<'a> {
    /// Start a call that adds to `time`, timed if `timed`.
    pub(crate) fn start(time: &'a CallbackTime, timed: bool) -> Self {
        CallbackTimer {
            time,
            start: timed.then(Stopwatch::start),
        }
    }
}

impl Drop for CallbackTimer<'_> {
    fn drop(&mut self) {
        if let Some(start) = &self.start {
            // CLOCK_MONOTONIC does not go back; a negative difference is
            // impossible, and would be counted as 0 rather than as 2^64 - 1.
            let ns = start.elapsed_ns();
            self.time.add(u64::try_from(ns).unwrap_or(0));
        }
    }
}
