// SPDX-License-Identifier: GPL-2.0

//! Connection table micro-benchmark, built only with `RPCRDMA_CM_BENCH=1`
//! (`make bench-table`); the module users load has none of it.
//!
//! For each number of live connections in [`LIVE`], a private table (not the
//! registered one) is filled with that many entries, then [`CYCLES`]
//! connect+teardown cycles run the table operations the hooks run for one
//! connection: allocate its node, link it, look it up and record the
//! negotiation as `established` does, look it up again as `accepted` does,
//! and unlink and free it. The time per cycle is printed for each count; a
//! table whose operations grow with the number of live connections shows
//! here as a growing time. It measures the table only, on one thread
//! without contention: not the SRCU section, the NOIO scope, the parameter
//! reads or the decoding of the connection the real callbacks also do.
//! A time that stays flat from 10 to 10000 live connections is what the
//! red-black tree promises; one that grows with them is a regression.

use crate::boundary::Stopwatch;
use crate::cm_private::{negotiate, InlineSize, LocalLimits, PrivateMessage};
use crate::rdma_cm::{Role, SockAddr};
use crate::table::{Entry, RAW_KEPT};
use crate::CmState;
use kernel::alloc::{flags::GFP_KERNEL, KBox};
use kernel::prelude::*;

/// Live connection counts measured.
const LIVE: [usize; 3] = [10, 1000, 10000];

/// Connect+teardown cycles timed per count.
const CYCLES: usize = 20000;

/// Runs of [`CYCLES`] per count; the fastest and the slowest are reported.
const RUNS: usize = 5;

/// Spreads synthetic cookies over the key space the way addresses are.
fn cookie(i: usize) -> usize {
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15_u64 as usize) | 1
}

/// A synthetic connection entry with the limits of a 64 KB configuration.
fn entry(cookie: usize) -> Entry {
    let size = InlineSize::from_bytes(65536);
    let limits = LocalLimits {
        max_send: size,
        max_recv: size,
        remote_invalidation: true,
    };
    Entry {
        cookie,
        role: Role::Requester,
        local: SockAddr::Other(0),
        peer: SockAddr::Other(0),
        peer_raw: [0; RAW_KEPT],
        peer_len: 0,
        peer_msg: None,
        advertised: Some(limits.advertisement()),
        limits,
        negotiated: None,
        applied_send_threshold: 0,
    }
}

/// One connect+teardown cycle on `state`.
fn cycle(state: &CmState, cookie: usize, peer_pdata: &[u8]) -> Result {
    state.insert(state.node(entry(cookie))?);
    let peer = PrivateMessage::decode(peer_pdata);
    state.with_entry(cookie, |e| {
        let n = negotiate(&e.limits, &peer);
        e.set_peer(peer_pdata, peer);
        e.set_negotiated(n);
    });
    state.with_entry(cookie, |e| e.negotiated.is_some());
    state.remove(cookie);
    Ok(())
}

/// Time of the fastest of [`RUNS`] runs of `cycles` calls of `f`, in ns per
/// call, and of the slowest.
fn time_runs(cycles: usize, mut f: impl FnMut(usize) -> Result) -> Result<(i64, i64)> {
    let (mut best, mut worst) = (i64::MAX, 0);
    for run in 0..RUNS {
        let start = Stopwatch::start();
        for c in 0..cycles {
            f(run * cycles + c)?;
        }
        let took = start.elapsed_ns();
        best = best.min(took);
        worst = worst.max(took);
    }
    Ok((best / cycles as i64, worst / cycles as i64))
}

/// Runs the benchmark and prints one line per live connection count.
pub(crate) fn run() -> Result {
    let peer = PrivateMessage::RFC_DEFAULT.encode();
    for live in LIVE {
        let state = KBox::pin_init(CmState::new(), GFP_KERNEL)?;
        for i in 0..live {
            state.insert(state.node(entry(cookie(i)))?);
        }
        let (best, worst) = time_runs(CYCLES, |i| cycle(&state, cookie(live + i), &peer))?;
        pr_info!(
            "bench: live={} cycles={} runs={} table_ns_per_cycle_best={} table_ns_per_cycle_worst={}\n",
            live,
            CYCLES,
            RUNS,
            best,
            worst
        );
    }
    Ok(())
}
