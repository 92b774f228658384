// SPDX-License-Identifier: GPL-2.0

//! The built `rpcrdma-cm` binary as a process: its exit status and where
//! its output goes (this also makes `cargo test --release` build
//! tools/target/release/rpcrdma-cm, which the guest tests run).

use std::process::{Command, Output};

/// Run the binary with `args`.
fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rpcrdma-cm"))
        .args(args)
        .output()
        .expect("run rpcrdma-cm")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit status")
}

#[test]
fn success_is_0() {
    let o = run(&["decode", "f6ab0e1801010303"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("conforming: version 1"));
    assert!(o.stderr.is_empty());
    assert_eq!(code(&run(&["--help"])), 0);
    assert_eq!(code(&run(&["--version"])), 0);
    assert_eq!(code(&run(&["ping", "--help"])), 0);
}

#[test]
fn peer_or_data_problems_are_1() {
    assert_eq!(code(&run(&["decode", "f6ab0e1802010303"])), 1);
    assert_eq!(code(&run(&["negotiate", ""])), 1);
    let o = run(&["status", "--debugfs", "/nonexistent/rpcrdma_cm"]);
    assert_eq!(code(&o), 1);
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("rpcrdma-cm: /nonexistent/rpcrdma_cm does not exist: "),
        "{err}"
    );
}

#[test]
fn usage_errors_are_2() {
    for args in [
        &[][..],
        &["decode"],
        &["decode", "xyz"],
        &["encode", "--send", "lots"],
        &["ping"],
        &["ping", "--count", "0", "127.0.0.1"],
        &["probe", "--pdata", "f6", "--no-pdata", "127.0.0.1"],
        &["no-such-command"],
    ] {
        let o = run(args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(!o.stderr.is_empty(), "{args:?}");
    }
}
