// SPDX-License-Identifier: GPL-2.0

//! The module's contact with the kernel beyond the hooks, through the kernel
//! crate: the module instance (`InPlaceModule`), debugfs (`kernel::debugfs`)
//! and the clock here, the parameters (`kernel::module_param`) in
//! `kernel_crate_params.rs`, their run-time settings (`kernel::configfs`)
//! in `kernel_crate_configfs.rs`. The module has no C file.
//!
//! This file has no `unsafe` code.

use crate::debugfs_render::role_name;
use crate::{CmState, Role};
use kernel::debugfs::{Scope, ScopedDir};
use kernel::fmt;
use kernel::prelude::*;
use kernel::sunrpc::rdma_cm::Registration;
use kernel::time::{Instant, Monotonic};
use kernel::InPlaceModule;
use pin_init::pin_init_scope;

/// The parameters: given at load, checked, and set at run time through
/// the attributes of `rpcrdma_cm` in configfs.
#[path = "kernel_crate_params.rs"]
mod kernel_crate_params;

/// The run-time settings: `rpcrdma_cm` in configfs. Without configfs built
/// into the kernel (`CONFIG_CONFIGFS_FS` not `y`: the kernel crate has no
/// `kernel::configfs` then) the parameters keep the values given at load.
#[cfg(CONFIG_CONFIGFS_FS)]
#[path = "kernel_crate_configfs.rs"]
mod kernel_crate_configfs;

pub(crate) use kernel_crate_params::{callback_timing, load_params, params};

/// Say that a connection of `role` is left to the stock code because its
/// entry could not be allocated, the `count`th of that role.
pub(crate) fn warn_no_memory(role: Role, count: u64) {
    pr_warn!(
        "no memory to track a connection of the {}; left to the stock code ({} so far, stats: no_memory)\n",
        role_name(role),
        count
    );
}

/// Measures elapsed CLOCK_MONOTONIC time.
pub(crate) struct Stopwatch(Instant<Monotonic>);

impl Stopwatch {
    /// Start measuring now.
    pub(crate) fn start() -> Stopwatch {
        Stopwatch(Instant::now())
    }

    /// Nanoseconds since [`Stopwatch::start`].
    pub(crate) fn elapsed_ns(&self) -> i64 {
        self.0.elapsed().as_nanos()
    }
}

/// The module instance, initialised in place: the settings in configfs,
/// the debugfs directory `rpcrdma_cm/` and the registration whose state its
/// files show.
///
/// # Invariants
///
/// The files show the state of the registration owned by `files`, through
/// references into it that live only as long as the files: dropping the
/// `Scope` removes the directory first, which waits for the file
/// operations in progress and makes later reads and writes fail, and only
/// then drops the registration, which unregisters, waits for the callbacks
/// and frees the state.
///
/// A file still open when the module is unloaded does not keep the module
/// loaded: its reads and writes fail from then on, and its close runs no code
/// of the module, since `kernel::debugfs` serves its files from
/// `file_operations` in the kernel image.
#[pin_data(PinnedDrop)]
pub(crate) struct RpcrdmaCm {
    /// `rpcrdma_cm` in configfs: the parameters' attributes. Dropped first
    /// (fields drop in order): no setting changes during the teardown.
    #[cfg(CONFIG_CONFIGFS_FS)]
    #[pin]
    settings: kernel::configfs::Subsystem<kernel_crate_configfs::Settings>,
    /// Removes the directory, then drops the registration.
    #[pin]
    files: Scope<Registration<CmState>>,
}

impl InPlaceModule for RpcrdmaCm {
    /// Check the parameters, register, create
    /// `rpcrdma_cm/{connections,stats,callback_times}` in debugfs, then the
    /// parameters' attributes in configfs (`rpcrdma_cm/`): a registration
    /// refused (another user of the hooks, `EBUSY`) fails the load before
    /// configfs is touched.
    ///
    /// Without debugfs (`debugfs=off`, `CONFIG_DEBUG_FS=n`) there are no files
    /// and the module works all the same (`kernel::debugfs` does not tell the
    /// module, so it says nothing). Without configfs mounted the attributes
    /// are there once it is. Without configfs built into the kernel there
    /// are none, and the module says so.
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        pin_init_scope(|| {
            crate::before_registering()?;
            #[cfg(not(CONFIG_CONFIGFS_FS))]
            pr_notice!(
                "kernel built without CONFIGFS_FS=y: the parameters keep the values given at load\n"
            );
            // INVARIANT: the files are in the scope, which owns the
            // registration.
            // The fields are initialised in this order, dropped in the order
            // of their declaration.
            let init = try_pin_init!(RpcrdmaCm {
                files <- Scope::dir(Registration::new(CmState::new()), c"rpcrdma_cm", populate),
                #[cfg(CONFIG_CONFIGFS_FS)]
                settings <- kernel_crate_configfs::subsystem(),
            }? Error);
            Ok(init.pin_chain(|_| {
                crate::registered();
                Ok(())
            }))
        })
    }
}

#[pinned_drop]
impl PinnedDrop for RpcrdmaCm {
    /// Say so; then the fields drop in order: `settings` (the configfs
    /// directory), then `files` (the debugfs directory, then the
    /// registration).
    fn drop(self: Pin<&mut Self>) {
        crate::unregistering();
    }
}

/// Create the files of `dir`, `rpcrdma_cm/`, showing the state of
/// `registration`, which outlives them (`Scope`).
fn populate<'data>(registration: &'data Registration<CmState>, dir: &ScopedDir<'data, '_>) {
    let state = registration.data();
    dir.read_callback_file(c"connections", state, &show_connections);
    dir.read_callback_file(c"stats", state, &show_stats);
    dir.read_callback_file(c"callback_times", state, &show_callback_times);
}

/// `rpcrdma_cm/connections`: one line per connection, by cookie.
///
/// The table is locked for one line at a time, never across the walk, so a
/// reader holds up connection setup for one line at most however many
/// connections there are; a connection set up or closed during the walk may be
/// shown or not.
fn show_connections(state: &CmState, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let mut key = 0;
    while let Some(cookie) = state.cookie_at_or_after(key) {
        state.show_connection(cookie, f);
        let Some(next) = cookie.checked_add(1) else {
            break;
        };
        key = next;
    }
    Ok(())
}

/// `rpcrdma_cm/stats`.
fn show_stats(state: &CmState, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    state.show_stats(f);
    Ok(())
}

/// `rpcrdma_cm/callback_times`.
fn show_callback_times(state: &CmState, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    state.show_callback_times(f);
    Ok(())
}
