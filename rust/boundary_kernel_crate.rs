// SPDX-License-Identifier: GPL-2.0

//! The module's contact with module parameters, debugfs and the clock,
//! through the kernel crate (`kernel::module_param`, `kernel::debugfs`): the
//! module has no C file.
//!
//! The kernel crate's module parameters are read once, at load, and have no
//! sysfs file. So [`load_params`] checks them and copies them into run-time
//! values, which [`params`] reads and which the files of
//! `rpcrdma_cm/parameters/` in debugfs show and set.
//!
//! This file has no `unsafe` code.

use crate::cm_private::InlineSize;
use crate::{module_parameters, CmState, Params};
use kernel::debugfs::{Scope, ScopedDir};
use kernel::fmt;
use kernel::module_param::ModuleParamAccess;
use kernel::prelude::*;
use kernel::str::kstrtobool_bytes;
use kernel::sunrpc::rdma_cm::Registration;
use kernel::sync::atomic::{Atomic, Relaxed};
use kernel::sync::SetOnce;
use kernel::time::{Instant, Monotonic, NSEC_PER_SEC};
use kernel::uaccess::UserSliceReader;

/// The smallest size parameter other than 0 (RFC 8797's smallest size).
const SIZE_MIN: u32 = 1024;

/// The largest size parameter (RFC 8797's largest size).
const SIZE_MAX: u32 = 256 * 1024;

/// A size parameter.
///
/// # Invariants
///
/// `value` is 0 or within `SIZE_MIN..=SIZE_MAX`.
struct SizeParam {
    /// The parameter's name, also its file's in `rpcrdma_cm/parameters/`.
    name: &'static CStr,
    /// The value given at load, or the default.
    given: &'static ModuleParamAccess<u32>,
    /// The value in effect, in bytes; 0 = the transport's setting.
    value: Atomic<u32>,
}

impl SizeParam {
    /// The parameter `name`, given at load in `given`; 0 until
    /// [`load_params`] has run.
    const fn new(name: &'static CStr, given: &'static ModuleParamAccess<u32>) -> Self {
        // INVARIANT: 0 is a valid value.
        SizeParam {
            name,
            given,
            value: Atomic::new(0),
        }
    }

    /// Set the parameter to `bytes`; `ERANGE`, and no change, if it is
    /// neither 0 nor within `SIZE_MIN..=SIZE_MAX`.
    fn set(&self, bytes: u32) -> Result {
        if bytes != 0 && !(SIZE_MIN..=SIZE_MAX).contains(&bytes) {
            return Err(ERANGE);
        }
        // INVARIANT: checked just above.
        self.value.store(bytes, Relaxed);
        Ok(())
    }

    /// The size in effect; `None` where the transport's setting applies.
    ///
    /// The core rounds it down to a multiple of 1024.
    fn get(&self) -> Option<InlineSize> {
        match self.value.load(Relaxed) {
            0 => None,
            bytes => Some(InlineSize::from_bytes(bytes)),
        }
    }
}

/// A boolean parameter.
struct BoolParam {
    /// The parameter's name, also its file's in `rpcrdma_cm/parameters/`.
    name: &'static CStr,
    /// The value given at load, or the default.
    given: &'static ModuleParamAccess<bool>,
    /// The value in effect.
    value: Atomic<bool>,
}

impl BoolParam {
    /// The parameter `name`, given at load in `given`; `default` until
    /// [`load_params`] has run.
    const fn new(
        name: &'static CStr,
        given: &'static ModuleParamAccess<bool>,
        default: bool,
    ) -> Self {
        BoolParam {
            name,
            given,
            value: Atomic::new(default),
        }
    }

    /// The value in effect.
    fn get(&self) -> bool {
        self.value.load(Relaxed)
    }
}

/// `requester_send_size`: client send size to advertise.
static REQUESTER_SEND_SIZE: SizeParam = SizeParam::new(
    c"requester_send_size",
    &module_parameters::requester_send_size,
);

/// `requester_recv_size`: client receive size to advertise.
static REQUESTER_RECV_SIZE: SizeParam = SizeParam::new(
    c"requester_recv_size",
    &module_parameters::requester_recv_size,
);

/// `responder_send_size`: server send size to advertise.
static RESPONDER_SEND_SIZE: SizeParam = SizeParam::new(
    c"responder_send_size",
    &module_parameters::responder_send_size,
);

/// `responder_recv_size`: server receive size to advertise.
static RESPONDER_RECV_SIZE: SizeParam = SizeParam::new(
    c"responder_recv_size",
    &module_parameters::responder_recv_size,
);

/// `remote_invalidation`: offer (client) or use (server) Remote
/// Invalidation.
static REMOTE_INVALIDATION: BoolParam = BoolParam::new(
    c"remote_invalidation",
    &module_parameters::remote_invalidation,
    true,
);

/// `send_private_data`: send RFC 8797 private data at all.
static SEND_PRIVATE_DATA: BoolParam = BoolParam::new(
    c"send_private_data",
    &module_parameters::send_private_data,
    true,
);

/// `nonconforming_requester_1k`: hold a requester without conforming
/// private data to RFC 8797's 1 KB.
static NONCONFORMING_REQUESTER_1K: BoolParam = BoolParam::new(
    c"nonconforming_requester_1k",
    &module_parameters::nonconforming_requester_1k,
    false,
);

/// The size parameters, in the order of their files.
static SIZE_PARAMS: [&SizeParam; 4] = [
    &REQUESTER_SEND_SIZE,
    &REQUESTER_RECV_SIZE,
    &RESPONDER_SEND_SIZE,
    &RESPONDER_RECV_SIZE,
];

/// The boolean parameters, in the order of their files.
static BOOL_PARAMS: [&BoolParam; 3] = [
    &REMOTE_INVALIDATION,
    &SEND_PRIVATE_DATA,
    &NONCONFORMING_REQUESTER_1K,
];

/// Take the parameters given at load: check each size as [`SizeParam::set`]
/// does and put every value in effect.
///
/// Fails with `EINVAL`, saying which, if a size is neither 0 nor within
/// 1024..262144.
pub(crate) fn load_params() -> Result {
    let mut result = Ok(());
    for p in SIZE_PARAMS {
        let bytes = p.given.value();
        if p.set(bytes).is_err() {
            pr_err!(
                "`{}' invalid for parameter `{}' (0 = transport setting, else {}..{})\n",
                bytes,
                p.name,
                SIZE_MIN,
                SIZE_MAX
            );
            result = Err(EINVAL);
        }
    }
    for p in BOOL_PARAMS {
        p.value.store(p.given.value(), Relaxed);
    }
    result
}

/// Read all parameters.
///
/// Each is loaded on its own: a write racing with this may show up in one
/// decision and not yet in another field of the same copy, and every
/// combination is a valid configuration.
pub(crate) fn params() -> Params {
    Params {
        requester_send: REQUESTER_SEND_SIZE.get(),
        requester_recv: REQUESTER_RECV_SIZE.get(),
        responder_send: RESPONDER_SEND_SIZE.get(),
        responder_recv: RESPONDER_RECV_SIZE.get(),
        remote_invalidation: REMOTE_INVALIDATION.get(),
        send_private_data: SEND_PRIVATE_DATA.get(),
        nonconforming_requester_1k: NONCONFORMING_REQUESTER_1K.get(),
    }
}

/// Limits a message to a burst of [`RateLimit::BURST`] per
/// [`RateLimit::INTERVAL_NS`], as `pr_warn_ratelimited()` does with its
/// defaults, which the kernel crate lacks.
///
/// Races between callers may let a message more or less through, never corrupt
/// anything.
struct RateLimit {
    /// When the current window began, in ns since [`RateLimit::origin`].
    begin_ns: Atomic<i64>,
    /// Messages let through in the current window.
    printed: Atomic<u32>,
    /// Messages held back in the current window.
    missed: Atomic<u32>,
    /// The time the windows are counted from: the first call.
    origin: SetOnce<Stopwatch>,
}

impl RateLimit {
    /// Messages per window (`DEFAULT_RATELIMIT_BURST`).
    const BURST: u32 = 10;

    /// The window (`DEFAULT_RATELIMIT_INTERVAL`, 5 s).
    const INTERVAL_NS: i64 = 5 * NSEC_PER_SEC;

    /// No message yet.
    const fn new() -> Self {
        RateLimit {
            begin_ns: Atomic::new(0),
            printed: Atomic::new(0),
            missed: Atomic::new(0),
            origin: SetOnce::new(),
        }
    }

    /// Whether to print a message now; at the start of a window, says how
    /// many `what` messages the last one held back.
    fn allow(&self, what: &str) -> bool {
        // Only the first call sets the origin.
        self.origin.populate(Stopwatch::start());
        let now = self.origin.as_ref().map_or(0, Stopwatch::elapsed_ns);
        let begin = self.begin_ns.load(Relaxed);
        if now - begin >= Self::INTERVAL_NS && self.begin_ns.cmpxchg(begin, now, Relaxed).is_ok() {
            let missed = self.missed.xchg(0, Relaxed);
            if missed > 0 {
                pr_warn!("{}: {} callbacks suppressed\n", what, missed);
            }
            self.printed.store(0, Relaxed);
        }
        if self.printed.fetch_add(1, Relaxed) < Self::BURST {
            true
        } else {
            self.missed.fetch_add(1, Relaxed);
            false
        }
    }
}

/// The rate limit of [`warn_no_memory`].
static NO_MEMORY_WARNINGS: RateLimit = RateLimit::new();

/// Say (rate-limited) that a connection is left to the stock code because
/// its entry could not be allocated.
pub(crate) fn warn_no_memory() {
    if NO_MEMORY_WARNINGS.allow("warn_no_memory") {
        pr_warn!("no memory to track a connection; the stock code negotiates it\n");
    }
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

/// The registration, which the debugfs directory owns while it exists.
type OwnedRegistration = Pin<KBox<Registration<CmState>>>;

/// The debugfs files, and the registration whose state they show.
///
/// # Invariants
///
/// The files show the state of the registration owned here, through
/// references into it that live only as long as the files: with
/// [`Files::Shown`], the `Scope` owns both the directory `rpcrdma_cm/`, with
/// every file in it, and the registration, and dropping it removes the
/// directory first, which waits for the file operations in progress and
/// makes later reads and writes fail, and only then drops the registration,
/// which unregisters, waits for the callbacks and frees the state.
///
/// A file still open when the module is unloaded does not keep the module
/// loaded: its reads and writes fail from then on, and its close runs no code
/// of the module, with the first patch of the 7.3 series (which moves
/// `kernel::debugfs`'s file operations into the kernel image).
pub(crate) struct Debugfs {
    /// The files and the registration, or the registration alone.
    _files: Files,
}

/// What [`Debugfs`] holds.
enum Files {
    /// The directory, which owns the registration.
    Shown {
        /// Removes the directory, then drops the registration.
        _scope: Pin<KBox<Scope<OwnedRegistration>>>,
    },
    /// No memory for the directory's handle: the registration alone.
    Absent {
        /// Unregisters and frees the state.
        _registration: OwnedRegistration,
    },
}

impl Debugfs {
    /// Create `rpcrdma_cm/{connections,stats,callback_times}` showing the state
    /// of `registration`, which the returned value owns from now on, and
    /// `rpcrdma_cm/parameters/`.
    ///
    /// Without debugfs (`debugfs=off`, `CONFIG_DEBUG_FS=n`) there are no files
    /// and the module works all the same.
    pub(crate) fn create(registration: OwnedRegistration) -> Debugfs {
        let Ok(slot) = KBox::<Scope<OwnedRegistration>>::new_uninit(GFP_KERNEL) else {
            pr_info!("no debugfs files (error {})\n", ENOMEM.to_errno());
            return Debugfs {
                _files: Files::Absent {
                    _registration: registration,
                },
            };
        };
        let scope = match slot.write_pin_init(Scope::dir(registration, c"rpcrdma_cm", populate)) {
            Ok(scope) => scope,
            Err(never) => match never {},
        };
        // INVARIANT: the files are in the scope, which owns the registration.
        Debugfs {
            _files: Files::Shown { _scope: scope },
        }
    }
}

/// Create the files of `dir`, `rpcrdma_cm/`, showing the state of
/// `registration`, which outlives them (`Scope`).
fn populate<'data>(registration: &'data OwnedRegistration, dir: &ScopedDir<'data, '_>) {
    let state = registration.data();
    dir.read_callback_file(c"connections", state, &show_connections);
    dir.read_callback_file(c"stats", state, &show_stats);
    dir.read_callback_file(c"callback_times", state, &show_callback_times);
    let parameters = dir.dir(c"parameters");
    for p in SIZE_PARAMS {
        parameters.read_write_callback_file(p.name, p, &show_size, &store_size);
    }
    for p in BOOL_PARAMS {
        parameters.read_write_callback_file(p.name, p, &show_bool, &store_bool);
    }
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

/// Reading a size parameter's file: the value in bytes, as sysfs shows it.
fn show_size(p: &SizeParam, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", p.value.load(Relaxed))
}

/// Writing a size parameter's file: what `kstrtouint(s, 0, ...)` accepts,
/// set with [`SizeParam::set`] (`ERANGE` out of range).
fn store_size(p: &SizeParam, reader: &mut UserSliceReader) -> Result {
    let mut buf = [0; WRITE_MAX];
    p.set(parse_uint(read_text(reader, &mut buf)?)?)
}

/// Reading a boolean parameter's file: `Y` or `N`, as sysfs shows it.
fn show_bool(p: &BoolParam, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", if p.get() { 'Y' } else { 'N' })
}

/// Writing a boolean parameter's file: what `kstrtobool()` accepts, as
/// `param_set_bool()`.
fn store_bool(p: &BoolParam, reader: &mut UserSliceReader) -> Result {
    let mut buf = [0; WRITE_MAX];
    let value = kstrtobool_bytes(read_text(reader, &mut buf)?)?;
    p.value.store(value, Relaxed);
    Ok(())
}

/// The longest write a parameter's file takes.
const WRITE_MAX: usize = 128;

/// The text of one write to a parameter's file, up to its first NUL (as
/// the string the C setter gets); `EINVAL` if longer than `buf`.
fn read_text<'a>(reader: &mut UserSliceReader, buf: &'a mut [u8]) -> Result<&'a [u8]> {
    let n = reader.len();
    let buf = buf.get_mut(..n).ok_or(EINVAL)?;
    reader.read_slice(buf)?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(n);
    Ok(&buf[..end])
}

/// Parse `text` as `kstrtouint(text, 0, ...)` does: an optional `+`, then hex
/// after `0x`, octal after `0`, else decimal, then at most a newline.
///
/// `ERANGE` if the number does not fit, `EINVAL` if it is not one.
fn parse_uint(text: &[u8]) -> Result<u32> {
    let text = text.strip_prefix(b"+").unwrap_or(text);
    let (radix, digits) = match text {
        [b'0', b'x' | b'X', rest @ ..] if rest.first().is_some_and(u8::is_ascii_hexdigit) => {
            (16, rest)
        }
        [b'0', ..] => (8, text),
        _ => (10, text),
    };
    let mut value: u64 = 0;
    let mut overflow = false;
    let mut len = 0;
    for digit in digits.iter().map_while(|&c| char::from(c).to_digit(radix)) {
        match value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(digit)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        len += 1;
    }
    if overflow {
        return Err(ERANGE);
    }
    if len == 0 {
        return Err(EINVAL);
    }
    let rest = &digits[len..];
    if !rest.strip_prefix(b"\n").unwrap_or(rest).is_empty() {
        return Err(EINVAL);
    }
    u32::try_from(value).map_err(|_| ERANGE)
}
