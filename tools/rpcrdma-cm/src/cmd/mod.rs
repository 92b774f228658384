// SPDX-License-Identifier: GPL-2.0

//! The subcommands, one module each; each takes its clap arguments and
//! writes what it prints to the `out` it is given.

pub(crate) mod codec;
pub(crate) mod conform;
pub(crate) mod ping;
pub(crate) mod probe;
pub(crate) mod respond;
pub(crate) mod status;
pub(crate) mod storm;
