// SPDX-License-Identifier: GPL-2.0

//! The run-time settings through configfs (`kernel::configfs`), part of the
//! kernel crate boundary (`boundary_kernel_crate.rs`): the directory
//! `rpcrdma_cm` in configfs (`/sys/kernel/config/rpcrdma_cm/`), one
//! attribute per module parameter, same name, same text forms as its sysfs
//! file on the C boundary (`kernel_crate_params.rs`'s `show` and
//! `store`).
//!
//! configfs, not debugfs: a kernel locked down (Secure Boot's
//! `lockdown=integrity`) refuses to open a debugfs file that can be
//! written, and configfs is what a kernel that must be configured there
//! offers (as sysfs is for C modules' parameters, which the kernel crate's
//! have not). debugfs only shows (`connections`, `stats`,
//! `callback_times`).
//!
//! The attributes only read and write the parameters' atomics: they hold
//! no reference into the connection state, so that removing the
//! directory first and the registration after it needs no ordering
//! between them. configfs removes the directory when the module's
//! [`configfs::Subsystem`] is dropped, which waits for the calls in
//! progress; an attribute held open after that fails its writes and the
//! reads that need a fresh value (what an earlier read buffered may still
//! be read) and runs no code of the module at close.
//!
//! This file has no `unsafe` code.

use super::kernel_crate_params::{show as show_param, store as store_param};
use kernel::configfs;
use kernel::configfs_attrs;
use kernel::page::PAGE_SIZE;
use kernel::prelude::*;
use kernel::str::Formatter;

/// The data of the `rpcrdma_cm` directory: none (the attributes reach the
/// parameters, which are statics).
#[pin_data]
pub(super) struct Settings {}

/// The `rpcrdma_cm` directory in configfs and its attributes, registered
/// when the initializer runs.
pub(super) fn subsystem() -> impl PinInit<configfs::Subsystem<Settings>, Error> {
    // The attributes' names are the parameters' and their numbers the
    // parameters' indices in `kernel_crate_params.rs` (`setting`).
    let item_type = configfs_attrs! {
        container: configfs::Subsystem<Settings>,
        data: Settings,
        attributes: [
            requester_send_size: 0,
            requester_recv_size: 1,
            responder_send_size: 2,
            responder_recv_size: 3,
            remote_invalidation: 4,
            send_private_data: 5,
            nonconforming_requester_1k: 6,
            callback_times: 7,
        ],
    };
    configfs::Subsystem::new(c"rpcrdma_cm", item_type, try_pin_init!(Settings {}))
}

/// The operations of the attribute numbered `$id`: parameter `$id`.
macro_rules! setting_attribute {
    ($($id:literal),*) => {$(
        #[vtable]
        impl configfs::AttributeOperations<$id> for Settings {
            type Data = Settings;

            fn show(_settings: &Settings, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
                let mut out = Formatter::new(page);
                show_param($id, &mut out)?;
                Ok(out.bytes_written())
            }

            fn store(_settings: &Settings, page: &[u8]) -> Result {
                store_param($id, page)
            }
        }
    )*};
}

setting_attribute!(0, 1, 2, 3, 4, 5, 6, 7);
