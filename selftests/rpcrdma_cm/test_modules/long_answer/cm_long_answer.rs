// SPDX-License-Identifier: GPL-2.0

//! A `kernel::sunrpc::rdma_cm` hook, for `cm_long_answer.sh` only, whose
//! `prepare_connect` and `prepare_accept` record the connection and answer
//! a length one octet longer than the buffer they were given: an answer
//! the transport must refuse, and report with `closed()`, so that what the
//! hook recorded goes. The module logs each answer and each `closed()`,
//! and on unload how many connections it still holds (0 if every refused
//! answer was reported). It is named `rpcrdma_cm` (its Kbuild says why).

use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use kernel::{
    prelude::*,
    sunrpc::rdma_cm::{self, Conn, Local, Registration},
};

#[cfg(module_authors_list)]
module! {
    type: LongAnswer,
    name: "rpcrdma_cm",
    authors: ["rpcrdma_cm developers"],
    description: "CM private data hook answering too long a length (rpcrdma_cm selftests)",
    license: "GPL",
}

#[cfg(not(module_authors_list))]
module! {
    type: LongAnswer,
    name: "rpcrdma_cm",
    author: "rpcrdma_cm developers",
    description: "CM private data hook answering too long a length (rpcrdma_cm selftests)",
    license: "GPL",
}

/// The hook's state: how many connections it answered and still holds.
#[pin_data]
struct Held {
    /// Connections answered and not yet reported by `closed()`.
    held: AtomicUsize,
}

impl Held {
    /// No connection held yet.
    fn new() -> impl PinInit<Self> {
        pin_init!(Held {
            held: AtomicUsize::new(0),
        })
    }
}

#[vtable]
impl rdma_cm::Operations for Held {
    fn prepare_connect(&self, _conn: &Conn, _local: &mut Local, pdata: &mut [u8]) -> Result<usize> {
        self.held.fetch_add(1, Relaxed);
        pr_info!("answered a connect with {} octets\n", pdata.len() + 1);
        Ok(pdata.len() + 1)
    }

    fn established(&self, _conn: &Conn, _local: &Local, _peer: &[u8]) {
        // Not reached: the connect was refused, so it is not this hook's.
    }

    fn prepare_accept(
        &self,
        _conn: &Conn,
        _peer: &[u8],
        _local: &mut Local,
        pdata: &mut [u8],
    ) -> Result<usize> {
        self.held.fetch_add(1, Relaxed);
        pr_info!("answered an accept with {} octets\n", pdata.len() + 1);
        Ok(pdata.len() + 1)
    }

    fn closed(&self, conn: &Conn) {
        self.held.fetch_sub(1, Relaxed);
        pr_info!("closed: {:?}\n", conn.role());
    }
}

/// The module: the registration, dropped (unregistered) on unload.
struct LongAnswer {
    registration: Pin<KBox<Registration<Held>>>,
}

impl kernel::Module for LongAnswer {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let registration = KBox::pin_init(Registration::new(Held::new()), GFP_KERNEL)?;
        Ok(LongAnswer { registration })
    }
}

impl Drop for LongAnswer {
    fn drop(&mut self) {
        pr_info!(
            "unloading; connections still held: {}\n",
            self.registration.data().held.load(Relaxed)
        );
    }
}
