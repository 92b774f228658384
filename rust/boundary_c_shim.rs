// SPDX-License-Identifier: GPL-2.0

//! The C-shim boundary, for kernels whose kernel crate has no module
//! parameters or debugfs (Linux 6.12), or whose `kernel::debugfs` lacks
//! the series' fix (a distribution's 7.3): both come from the module's C
//! side, `rpcrdma_cm_shim.c`. Kbuild builds it with `rpcrdma_cm_shim.o` and
//! `--cfg rpcrdma_cm_boundary_c_shim`; `boundary_kernel_crate.rs` is the
//! same interface on the kernel crate.
//!
//! This is the module's only `unsafe` code, but for the abstraction a
//! distribution's kernel gets compiled in (`rdma_cm`, its own file).

use crate::cm_private::InlineSize;
use crate::rdma_cm::Registration;
use crate::{CmState, Params, Role};
use core::fmt;
use kernel::ffi::{c_ulong, c_void};
use kernel::prelude::*;
#[cfg(not(rpcrdma_cm_time_instant))]
use kernel::time::Ktime;
#[cfg(rpcrdma_cm_time_instant)]
use kernel::time::{Instant, Monotonic};

mod ffi {
    use kernel::ffi::c_void;

    /// `struct seq_file`, opaque here.
    #[repr(C)]
    pub(super) struct SeqFile {
        _private: [u8; 0],
    }

    /// `struct rpcrdma_cm_params` of `rpcrdma_cm_shim.h`: the parameters,
    /// sizes in bytes (0: the transport's setting).
    #[repr(C)]
    #[derive(Default)]
    pub(super) struct ParamsC {
        /// `requester_send_size`.
        pub(super) requester_send_size: u32,
        /// `requester_recv_size`.
        pub(super) requester_recv_size: u32,
        /// `responder_send_size`.
        pub(super) responder_send_size: u32,
        /// `responder_recv_size`.
        pub(super) responder_recv_size: u32,
        /// `remote_invalidation`.
        pub(super) remote_invalidation: bool,
        /// `send_private_data`.
        pub(super) send_private_data: bool,
        /// `nonconforming_requester_1k`.
        pub(super) nonconforming_requester_1k: bool,
        /// `callback_times`.
        pub(super) callback_times: bool,
    }

    extern "C" {
        pub(super) fn rpcrdma_cm_params_read(params: *mut ParamsC);
        pub(super) fn rpcrdma_cm_warn_no_memory(responder: bool, count: u64);
        pub(super) fn rpcrdma_cm_debugfs_create(state: *const c_void);
        pub(super) fn rpcrdma_cm_debugfs_remove();
        pub(super) fn rpcrdma_cm_seq_write(m: *mut SeqFile, text: *const u8, len: usize);
    }
}

/// A size parameter: 0 means "not set"; the C setter admits only
/// 1024..=65536 otherwise, and the core rounds down to a multiple of 1024.
fn size(bytes: u32) -> Option<InlineSize> {
    (bytes != 0).then(|| InlineSize::from_bytes(bytes))
}

/// Take the parameters given at load.
///
/// Nothing to do here: the C setters checked them as they were set, and
/// [`params`] reads them where they are.
pub(crate) fn load_params() -> Result {
    Ok(())
}

// `ParamsC` is `struct rpcrdma_cm_params`, which the C side writes whole:
// the same size and every field at the same offset (rpcrdma_cm_shim.c
// asserts the same of the C struct).
static_assert!(core::mem::size_of::<ffi::ParamsC>() == 20);
static_assert!(core::mem::offset_of!(ffi::ParamsC, requester_send_size) == 0);
static_assert!(core::mem::offset_of!(ffi::ParamsC, requester_recv_size) == 4);
static_assert!(core::mem::offset_of!(ffi::ParamsC, responder_send_size) == 8);
static_assert!(core::mem::offset_of!(ffi::ParamsC, responder_recv_size) == 12);
static_assert!(core::mem::offset_of!(ffi::ParamsC, remote_invalidation) == 16);
static_assert!(core::mem::offset_of!(ffi::ParamsC, send_private_data) == 17);
static_assert!(core::mem::offset_of!(ffi::ParamsC, nonconforming_requester_1k) == 18);
static_assert!(core::mem::offset_of!(ffi::ParamsC, callback_times) == 19);

/// The C side's parameters, in one call.
fn params_c() -> ffi::ParamsC {
    let mut p = ffi::ParamsC::default();
    // SAFETY: `p` is valid for writes of a `struct rpcrdma_cm_params`, whose
    // layout `ParamsC` has (asserted above, and in C); the C side stores each
    // parameter read once (READ_ONCE()), the bools as 0 or 1, and may be
    // called from any context.
    unsafe { ffi::rpcrdma_cm_params_read(&mut p) };
    p
}

/// Read all parameters, in one call.
///
/// Each is loaded on its own: a write racing with this may show up in one
/// decision and not yet in another field of the same copy, and every
/// combination is a valid configuration.
pub(crate) fn params() -> Params {
    let p = params_c();
    Params {
        requester_send: size(p.requester_send_size),
        requester_recv: size(p.requester_recv_size),
        responder_send: size(p.responder_send_size),
        responder_recv: size(p.responder_recv_size),
        remote_invalidation: p.remote_invalidation,
        send_private_data: p.send_private_data,
        nonconforming_requester_1k: p.nonconforming_requester_1k,
    }
}

/// Whether the callbacks are timed (`callback_times`, a debugging aid, not
/// part of [`Params`]), for every callback.
pub(crate) fn callback_timing() -> bool {
    params_c().callback_times
}

/// Say that a connection of `role` is left to the stock code because its
/// entry could not be allocated, the `count`th of that role.
pub(crate) fn warn_no_memory(role: Role, count: u64) {
    // SAFETY: takes a bool and a number and may be called from any context.
    unsafe { ffi::rpcrdma_cm_warn_no_memory(matches!(role, Role::Responder), count) };
}

/// Measures elapsed CLOCK_MONOTONIC time (Linux 6.12's kernel crate:
/// `Ktime`).
#[cfg(not(rpcrdma_cm_time_instant))]
pub(crate) struct Stopwatch(Ktime);

#[cfg(not(rpcrdma_cm_time_instant))]
impl Stopwatch {
    /// Start measuring now.
    pub(crate) fn start() -> Stopwatch {
        Stopwatch(Ktime::ktime_get())
    }

    /// Nanoseconds since [`Stopwatch::start`].
    pub(crate) fn elapsed_ns(&self) -> i64 {
        (Ktime::ktime_get() - self.0).to_ns()
    }
}

/// Measures elapsed CLOCK_MONOTONIC time (a later kernel crate, as a
/// distribution's Linux 7.3: `Instant<Monotonic>`).
#[cfg(rpcrdma_cm_time_instant)]
pub(crate) struct Stopwatch(Instant<Monotonic>);

#[cfg(rpcrdma_cm_time_instant)]
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

/// The module instance: the debugfs files, which own the registration and
/// remove themselves before it unregisters, waits and frees the state.
pub(crate) struct RpcrdmaCm {
    /// The files and the registration.
    _debugfs: Debugfs,
}

impl kernel::Module for RpcrdmaCm {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        crate::before_registering()?;
        let registration = KBox::pin_init(Registration::new(CmState::new()), GFP_KERNEL)
            .inspect_err(|e| pr_err!("registration failed (error {})\n", e.to_errno()))?;
        let debugfs = Debugfs::create(registration);
        crate::registered();
        Ok(RpcrdmaCm { _debugfs: debugfs })
    }
}

impl Drop for RpcrdmaCm {
    /// Say so; then `_debugfs` drops: the files, then the registration.
    fn drop(&mut self) {
        crate::unregistering();
    }
}

/// The debugfs files, and the registration whose state they show.
///
/// # Invariants
///
/// While `_registration` is alive, the C side may hand the address of its
/// `CmState` to the show callbacks below; dropping removes the files (and
/// waits for readers) before `_registration` is dropped.
struct Debugfs {
    /// Unregisters and frees the state, after the files are removed.
    _registration: Pin<KBox<Registration<CmState>>>,
}

impl Debugfs {
    /// Create `rpcrdma_cm/{connections,stats,callback_times}` showing the state
    /// of `registration`, which the returned value owns from now on.
    ///
    /// Without debugfs (`debugfs=off`, `CONFIG_DEBUG_FS=n`) there are no files
    /// and the module works all the same.
    fn create(registration: Pin<KBox<Registration<CmState>>>) -> Debugfs {
        let ptr: *const CmState = registration.data();
        // SAFETY: the C side keeps the pointer for the show callbacks
        // below; the state is pinned in `registration`, which the returned
        // value owns and drops only after removing the files.
        unsafe { ffi::rpcrdma_cm_debugfs_create(ptr.cast()) };
        // INVARIANT: the files show the state of the registration owned here.
        Debugfs {
            _registration: registration,
        }
    }
}

impl Drop for Debugfs {
    /// Remove the files, then (as fields drop after this) the registration.
    fn drop(&mut self) {
        // SAFETY: the directory was created by `create` (or is absent, which
        // the C side handles); removal waits for the file operations in
        // progress and makes later ones fail, so no show callback uses the
        // state afterwards (open files pin the module through `.owner`).
        unsafe { ffi::rpcrdma_cm_debugfs_remove() };
    }
}

/// Formats text into a `struct seq_file`.
///
/// # Invariants
///
/// `self.0` is the seq_file of a show callback that is running for as long
/// as the writer exists.
struct SeqWriter(*mut ffi::SeqFile);

impl SeqWriter {
    /// A writer into `m`.
    ///
    /// # Safety
    ///
    /// `m` must be a live `struct seq_file` of a show callback that runs for
    /// as long as the writer is used.
    unsafe fn new(m: *mut c_void) -> SeqWriter {
        // INVARIANT: per the function's contract.
        SeqWriter(m.cast())
    }
}

impl fmt::Write for SeqWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // SAFETY: by the type's invariant `self.0` is the seq_file of a
        // running show callback, and `s` is valid for reads of its length.
        unsafe { ffi::rpcrdma_cm_seq_write(self.0, s.as_ptr(), s.len()) };
        Ok(())
    }
}

/// The state behind the debugfs files.
///
/// # Safety
///
/// `state` must be the pointer given to `rpcrdma_cm_debugfs_create`, still
/// valid (see [`Debugfs::create`]).
unsafe fn state<'a>(state: *const c_void) -> &'a CmState {
    // SAFETY: per the function's contract, `state` points at a live `CmState`.
    unsafe { &*state.cast::<CmState>() }
}

/// For the `rpcrdma_cm/connections` iterator: the first connection whose
/// cookie is at least `key`, written to `found`; false if there is none.
///
/// # Safety
///
/// Called by the C side with the state pointer it was given at creation and
/// a `found` valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn rpcrdma_cm_conn_at_or_after(
    state: *const c_void,
    key: c_ulong,
    found: *mut c_ulong,
) -> bool {
    // SAFETY: as documented above.
    let state = unsafe { self::state(state) };
    // The kernel's `c_ulong` is `usize`, the cookies' type.
    match state.cookie_at_or_after(key) {
        Some(cookie) => {
            // SAFETY: `found` is valid for writes, as documented above.
            unsafe { found.write(cookie) };
            true
        }
        None => false,
    }
}

/// Show the line of the connection of `cookie` in `rpcrdma_cm/connections`.
///
/// # Safety
///
/// `m` must be a live `struct seq_file` for the duration of the call, and
/// `state` the pointer given to `rpcrdma_cm_debugfs_create`, valid until
/// `rpcrdma_cm_debugfs_remove` has returned (the C side calls it so).
#[no_mangle]
pub(crate) unsafe extern "C" fn rpcrdma_cm_show_connection(
    m: *mut c_void,
    state: *const c_void,
    cookie: c_ulong,
) {
    // SAFETY: `state` is the pointer given at creation, as documented above.
    let state = unsafe { self::state(state) };
    // SAFETY: `m` is the seq_file of this running show callback.
    let mut out = unsafe { SeqWriter::new(m) };
    state.show_connection(cookie, &mut out);
}

/// Show callback of `rpcrdma_cm/stats`.
///
/// # Safety
///
/// `m` must be a live `struct seq_file` for the duration of the call, and
/// `state` the pointer given to `rpcrdma_cm_debugfs_create`, valid until
/// `rpcrdma_cm_debugfs_remove` has returned (the C side calls it so).
#[no_mangle]
pub(crate) unsafe extern "C" fn rpcrdma_cm_show_stats(m: *mut c_void, state: *const c_void) {
    // SAFETY: `state` is the pointer given at creation, as documented above.
    let state = unsafe { self::state(state) };
    // SAFETY: `m` is the seq_file of this running show callback.
    let mut out = unsafe { SeqWriter::new(m) };
    state.show_stats(&mut out);
}

/// Show callback of `rpcrdma_cm/callback_times`.
///
/// # Safety
///
/// `m` must be a live `struct seq_file` for the duration of the call, and
/// `state` the pointer given to `rpcrdma_cm_debugfs_create`, valid until
/// `rpcrdma_cm_debugfs_remove` has returned (the C side calls it so).
#[no_mangle]
pub(crate) unsafe extern "C" fn rpcrdma_cm_show_callback_times(
    m: *mut c_void,
    state: *const c_void,
) {
    // SAFETY: `state` is the pointer given at creation, as documented above.
    let state = unsafe { self::state(state) };
    // SAFETY: `m` is the seq_file of this running show callback.
    let mut out = unsafe { SeqWriter::new(m) };
    state.show_callback_times(&mut out);
}
