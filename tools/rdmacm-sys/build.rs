// SPDX-License-Identifier: GPL-2.0

//! Link librdmacm and libibverbs (Debian: librdmacm-dev, libibverbs-dev).

fn main() {
    println!("cargo:rustc-link-lib=dylib=rdmacm");
    println!("cargo:rustc-link-lib=dylib=ibverbs");
    println!("cargo:rerun-if-changed=build.rs");
}
