// SPDX-License-Identifier: GPL-2.0

//! One `kernel::debugfs` file of each of the six kinds, for
//! `debugfs_unload.sh`: `<debugfs>/debugfs_kinds/` holds `ro` (42), `rw` (7),
//! `wo`, `bin_ro` ("abcd"), `bin_wo` and `bin_rw` ("wxyz"). On unload the
//! module logs what was written to `wo` and `bin_wo`. The test holds every
//! file open across `rmmod` and closes them afterwards: the first patch of
//! the 7.3 series keeps their file operations in the kernel image.

use kernel::{
    debugfs::Scope,
    new_mutex,
    prelude::*,
    sync::{
        atomic::{Atomic, Relaxed},
        Mutex,
    },
};

module! {
    type: DebugfsKinds,
    name: "debugfs_kinds",
    authors: ["rpcrdma_cm developers"],
    description: "One kernel::debugfs file of each kind (rpcrdma_cm selftests)",
    license: "GPL",
}

/// What the files show and take.
#[pin_data]
struct Data {
    /// `ro`: a read-only text file.
    ro: u32,
    /// `rw`: a read-write text file.
    rw: Atomic<u32>,
    /// `wo`: a write-only text file.
    wo: Atomic<u32>,
    /// `bin_ro`: a read-only binary file.
    bin_ro: [u8; 4],
    /// `bin_wo`: a write-only binary file.
    #[pin]
    bin_wo: Mutex<[u8; 4]>,
    /// `bin_rw`: a read-write binary file.
    #[pin]
    bin_rw: Mutex<[u8; 4]>,
}

/// The module: the directory and its files, removed when it is dropped.
struct DebugfsKinds {
    /// The directory `debugfs_kinds/`, which owns the data.
    scope: Pin<KBox<Scope<Data>>>,
}

impl kernel::Module for DebugfsKinds {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let data = pin_init!(Data {
            ro: 42,
            rw: Atomic::new(7),
            wo: Atomic::new(0),
            bin_ro: *b"abcd",
            bin_wo <- new_mutex!([0; 4]),
            bin_rw <- new_mutex!(*b"wxyz"),
        });
        let scope = KBox::pin_init(
            Scope::dir(data, c"debugfs_kinds", |d, dir| {
                dir.read_only_file(c"ro", &d.ro);
                dir.read_write_file(c"rw", &d.rw);
                dir.write_only_file(c"wo", &d.wo);
                dir.read_binary_file(c"bin_ro", &d.bin_ro);
                dir.write_binary_file(c"bin_wo", &d.bin_wo);
                dir.read_write_binary_file(c"bin_rw", &d.bin_rw);
            }),
            GFP_KERNEL,
        )?;
        Ok(DebugfsKinds { scope })
    }
}

impl Drop for DebugfsKinds {
    fn drop(&mut self) {
        let wo = self.scope.wo.load(Relaxed);
        let bin_wo = *self.scope.bin_wo.lock();
        pr_info!("wo={} bin_wo={:?}\n", wo, bin_wo);
    }
}
