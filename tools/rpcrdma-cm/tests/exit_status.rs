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

/// Whether this host has an RDMA device (rxe, siw or hardware).
fn host_has_rdma_device() -> bool {
    std::fs::read_dir("/sys/class/infiniband").is_ok_and(|mut d| d.next().is_some())
}

#[test]
fn conform_without_an_rdma_device_is_a_local_error_4() {
    if host_has_rdma_device() {
        // The guest tests (conform_tool.sh) check the "no route" kind of
        // local error where devices exist.
        eprintln!("skipped: this host has an RDMA device");
        return;
    }
    for format in ["text", "json", "tap", "junit"] {
        let o = run(&["conform", "--format", format, "192.0.2.1"]);
        assert_eq!(code(&o), 4, "{format}");
        let err = String::from_utf8_lossy(&o.stderr);
        let out = String::from_utf8_lossy(&o.stdout);
        match format {
            "text" => assert!(
                out.starts_with("LOCAL ERROR: this host could not connect to 192.0.2.1:20049: ")
                    && out.contains("no RDMA device"),
                "{out}"
            ),
            "json" => {
                let v: serde_json::Value = serde_json::from_str(&out).expect("a JSON document");
                assert_eq!(v["outcome"], "local_error");
                assert_eq!(v["exit"], 4);
                assert_eq!(v["schema"], 1);
            }
            _ => assert!(err.contains("this host could not connect"), "{err}"),
        }
    }
}
