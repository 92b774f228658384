// SPDX-License-Identifier: GPL-2.0

//! The module's parameters through the kernel crate (`kernel::module_param`),
//! part of the kernel crate boundary (`boundary_kernel_crate.rs`).
//!
//! The kernel crate's module parameters are read once, at load, and have no
//! sysfs file. So [`load_params`] checks them and copies them into run-time
//! values, which [`params`] reads and which [`show`] and [`store`] show and
//! set in their text forms (the attributes of `rpcrdma_cm` in configfs,
//! `kernel_crate_configfs.rs`).
//!
//! This file has no `unsafe` code.

use crate::cm_private::InlineSize;
use crate::{module_parameters, Params};
use kernel::c_str;
#[cfg(CONFIG_CONFIGFS_FS)]
use kernel::fmt;
use kernel::module_param::ModuleParamAccess;
use kernel::prelude::*;
#[cfg(CONFIG_CONFIGFS_FS)]
use kernel::str::parse_int::ParseInt;
#[cfg(CONFIG_CONFIGFS_FS)]
use kernel::str::{kstrtobool_bytes, BStr};
use kernel::sync::atomic::{Atomic, AtomicType, Relaxed};

/// The smallest size parameter other than 0 (RFC 8797's smallest size).
const SIZE_MIN: u32 = 1024;

/// The largest size parameter: the most either transport allocates for an
/// inline message (xprtrdma's `RPCRDMA_MAX_INLINE`, svcrdma's
/// `RPCRDMA_MAX_INLINE_THRESH`, both 64 KiB), so that a parameter takes
/// effect as given. RFC 8797's format carries up to 256 KiB; a value above
/// this would be capped at each connection, so it is refused instead. The
/// transport's `ceiling` still caps each connection.
const SIZE_MAX: u32 = 64 * 1024;

/// A parameter: what was given at load and the value in effect.
///
/// # Invariants
///
/// A size parameter's (`Param<u32>`) `value` is 0 or within
/// `SIZE_MIN..=SIZE_MAX`.
struct Param<T: AtomicType + 'static> {
    /// The parameter's name, also its attribute's in configfs.
    name: &'static CStr,
    /// The value given at load, or the default.
    given: &'static ModuleParamAccess<T>,
    /// The value in effect (a size: in bytes, 0 = the transport's setting).
    value: Atomic<T>,
}

/// A size parameter, in bytes.
type SizeParam = Param<u32>;

impl SizeParam {
    /// The parameter `name`, given at load in `given`; 0 until
    /// [`load_params`] has run.
    const fn new(name: &'static CStr, given: &'static ModuleParamAccess<u32>) -> Self {
        // INVARIANT: 0 is a valid value.
        Param {
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
type BoolParam = Param<bool>;

impl BoolParam {
    /// The parameter `name`, given at load in `given`; `false` until
    /// [`load_params`] has run (before the module registers or creates the
    /// parameter's attribute, so that no one sees it).
    const fn new(name: &'static CStr, given: &'static ModuleParamAccess<bool>) -> Self {
        Param {
            name,
            given,
            value: Atomic::new(false),
        }
    }

    /// The value in effect.
    fn get(&self) -> bool {
        self.value.load(Relaxed)
    }
}

/// The [`SizeParam`] of the module parameter `$name` (`module!` in the
/// crate root), whose attribute has the same name.
macro_rules! size_param {
    ($name:ident) => {
        SizeParam::new(c_str!(stringify!($name)), &module_parameters::$name)
    };
}

/// The [`BoolParam`] of the module parameter `$name`, whose attribute has
/// the same name.
macro_rules! bool_param {
    ($name:ident) => {
        BoolParam::new(c_str!(stringify!($name)), &module_parameters::$name)
    };
}

/// `requester_send_size`: client send size to advertise.
static REQUESTER_SEND_SIZE: SizeParam = size_param!(requester_send_size);

/// `requester_recv_size`: client receive size to advertise.
static REQUESTER_RECV_SIZE: SizeParam = size_param!(requester_recv_size);

/// `responder_send_size`: server send size to advertise.
static RESPONDER_SEND_SIZE: SizeParam = size_param!(responder_send_size);

/// `responder_recv_size`: server receive size to advertise.
static RESPONDER_RECV_SIZE: SizeParam = size_param!(responder_recv_size);

/// `remote_invalidation`: offer (client) or use (server) Remote
/// Invalidation.
static REMOTE_INVALIDATION: BoolParam = bool_param!(remote_invalidation);

/// `send_private_data`: send RFC 8797 private data at all.
static SEND_PRIVATE_DATA: BoolParam = bool_param!(send_private_data);

/// `nonconforming_requester_1k`: hold a requester without conforming
/// private data to RFC 8797's 1 KB.
static NONCONFORMING_REQUESTER_1K: BoolParam = bool_param!(nonconforming_requester_1k);

/// `callback_times`: time each hook callback (debugging).
static CALLBACK_TIMES: BoolParam = bool_param!(callback_times);

/// The size parameters: indices 0 to 3 of [`show`] and [`store`].
static SIZE_PARAMS: [&SizeParam; 4] = [
    &REQUESTER_SEND_SIZE,
    &REQUESTER_RECV_SIZE,
    &RESPONDER_SEND_SIZE,
    &RESPONDER_RECV_SIZE,
];

/// The boolean parameters: indices 4 to 7 of [`show`] and [`store`].
static BOOL_PARAMS: [&BoolParam; 4] = [
    &REMOTE_INVALIDATION,
    &SEND_PRIVATE_DATA,
    &NONCONFORMING_REQUESTER_1K,
    &CALLBACK_TIMES,
];

/// Take the parameters given at load: check each size as [`SizeParam::set`]
/// does and put every value in effect.
///
/// Fails with `ERANGE`, saying which, if a size is neither 0 nor within
/// 1024..65536 (65536: what the transports allocate at most), as a write of
/// the attribute does.
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
            result = Err(ERANGE);
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

/// Whether the callbacks are timed (`callback_times`, a debugging aid, not
/// part of [`Params`]): one load, for every callback.
pub(crate) fn callback_timing() -> bool {
    CALLBACK_TIMES.get()
}

/// A parameter by its index: the size parameters, then the boolean ones,
/// each in its array's order (`SIZE_PARAMS`, `BOOL_PARAMS`).
#[cfg(CONFIG_CONFIGFS_FS)]
enum Setting {
    /// A size, in bytes.
    Size(&'static SizeParam),
    /// A boolean.
    Bool(&'static BoolParam),
}

/// The parameter `index` names: 0 to 3 the sizes, 4 to 7 the booleans;
/// `EINVAL` past them.
#[cfg(CONFIG_CONFIGFS_FS)]
fn setting(index: usize) -> Result<Setting> {
    if let Some(&p) = SIZE_PARAMS.get(index) {
        return Ok(Setting::Size(p));
    }
    index
        .checked_sub(SIZE_PARAMS.len())
        .and_then(|i| BOOL_PARAMS.get(i))
        .copied()
        .map(Setting::Bool)
        .ok_or(EINVAL)
}

/// Show parameter `index` ([`setting`]) as the C boundary's sysfs file
/// shows it: a size in bytes, a boolean as `Y` or `N`; then a newline.
#[cfg(CONFIG_CONFIGFS_FS)]
pub(super) fn show(index: usize, out: &mut impl fmt::Write) -> Result {
    let written = match setting(index)? {
        Setting::Size(p) => writeln!(out, "{}", p.value.load(Relaxed)),
        Setting::Bool(p) => writeln!(out, "{}", if p.get() { 'Y' } else { 'N' }),
    };
    written.map_err(|_| EINVAL)
}

/// Set parameter `index` ([`setting`]) from `text`, one write to its
/// attribute, taken as the C boundary's sysfs file takes it: up to the
/// first NUL (the string the C setter gets); a size as [`parse_size`] reads
/// it and [`SizeParam::set`] checks it (`ERANGE` out of range), a boolean
/// as `kstrtobool()` (`param_set_bool()`). No change on an error.
#[cfg(CONFIG_CONFIGFS_FS)]
pub(super) fn store(index: usize, text: &[u8]) -> Result {
    let text = text.split(|&b| b == 0).next().unwrap_or(text);
    match setting(index)? {
        Setting::Size(p) => p.set(parse_size(text)?),
        Setting::Bool(p) => {
            p.value.store(kstrtobool_bytes(text)?, Relaxed);
            Ok(())
        }
    }
}

/// Parse `text` as `kstrtouint(text, 0, ...)` does, the sysfs files' parser
/// (the C boundary's): an optional `+`, then hex after `0x`, octal after
/// `0`, else decimal, then at most a newline; `ERANGE` past `u32`, `EINVAL`
/// for anything else.
///
/// The digits go to the kernel crate's `parse_int`, which alone would also
/// take a sign after the `+`, `0o`/`0b` and a `+` after `0x`: those are
/// refused first, so that both boundaries take the same forms. One errno
/// differs: `parse_int` says `EINVAL` for a number past 64 bits, where
/// kstrtouint says `ERANGE` (refused either way).
#[cfg(CONFIG_CONFIGFS_FS)]
fn parse_size(text: &[u8]) -> Result<u32> {
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    let digits = text.strip_prefix(b"+").unwrap_or(text);
    if !digits.iter().all(u8::is_ascii_alphanumeric)
        || matches!(digits, [b'0', b'o' | b'O' | b'b' | b'B', ..])
    {
        return Err(EINVAL);
    }
    let value = u64::from_str(BStr::from_bytes(digits))?;
    u32::try_from(value).map_err(|_| ERANGE)
}
