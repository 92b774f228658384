// SPDX-License-Identifier: GPL-2.0

//! The module's event counters (`stats`, `callback_times`): a 64-bit count
//! updated and read with relaxed atomics, no lock.
//!
//! The kernel's own atomics (`kernel::sync::atomic`, the LKMM's, which that
//! module's documentation asks kernel Rust code to use rather than Rust's),
//! where the kernel crate has them; Rust's `core::sync::atomic` where it has
//! none (an older kernel crate, out of tree). Both relaxed: a reader may see
//! one counter of a set updated and the next not yet, which is all a
//! statistic needs.

#[cfg(not(rpcrdma_cm_lkmm_atomics))]
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
#[cfg(rpcrdma_cm_lkmm_atomics)]
use kernel::sync::atomic::{Atomic, Relaxed};

/// The atomic a counter is made of.
#[cfg(rpcrdma_cm_lkmm_atomics)]
type Atomic64 = Atomic<u64>;

/// The atomic a counter is made of.
#[cfg(not(rpcrdma_cm_lkmm_atomics))]
type Atomic64 = AtomicU64;

/// A count of events, or (`raise_to`) the largest value seen; wraps at
/// 2^64 (centuries at any rate these see).
pub(crate) struct Counter(Atomic64);

impl Counter {
    /// A counter at 0.
    pub(crate) const fn new() -> Self {
        Counter(Atomic64::new(0))
    }

    /// Count one event; returns the count with it (1 for the first).
    pub(crate) fn increment(&self) -> u64 {
        self.0.fetch_add(1, Relaxed).wrapping_add(1)
    }

    /// Add `n`.
    #[cfg(rpcrdma_cm_lkmm_atomics)]
    pub(crate) fn add(&self, n: u64) {
        self.0.add(n, Relaxed);
    }

    /// Add `n`.
    #[cfg(not(rpcrdma_cm_lkmm_atomics))]
    pub(crate) fn add(&self, n: u64) {
        self.0.fetch_add(n, Relaxed);
    }

    /// Raise the value to `n` if `n` is larger.
    #[cfg(rpcrdma_cm_lkmm_atomics)]
    pub(crate) fn raise_to(&self, n: u64) {
        let mut seen = self.0.load(Relaxed);
        // The common case, not a new maximum, needs no locked update.
        while n > seen {
            match self.0.cmpxchg(seen, n, Relaxed) {
                Ok(_) => return,
                Err(now) => seen = now,
            }
        }
    }

    /// Raise the value to `n` if `n` is larger.
    #[cfg(not(rpcrdma_cm_lkmm_atomics))]
    pub(crate) fn raise_to(&self, n: u64) {
        // The common case, not a new maximum, needs no locked update.
        if n > self.0.load(Relaxed) {
            self.0.fetch_max(n, Relaxed);
        }
    }

    /// The value.
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

impl Default for Counter {
    fn default() -> Self {
        Counter::new()
    }
}
