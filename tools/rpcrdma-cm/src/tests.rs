// SPDX-License-Identifier: GPL-2.0

//! Argument parsing, golden text and JSON of the subcommands.

use super::*;
use crate::report::parse_hex;
use clap::CommandFactory;

/// Parse `args` (without the program name) and run the subcommand; returns
/// (exit status, stdout, error message).
pub(crate) fn cli(args: &[&str]) -> (Exit, String, String) {
    let argv = std::iter::once("rpcrdma-cm").chain(args.iter().copied());
    let parsed = match Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
            return (code, e.to_string(), String::new());
        }
    };
    let mut out = Vec::new();
    let (exit, err) = match run(parsed.command, &mut out) {
        Ok(exit) => (exit, String::new()),
        Err(f) => (f.exit, f.message),
    };
    (exit, String::from_utf8(out).unwrap(), err)
}

#[test]
fn clap_definitions_are_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn hex_parsing() {
    assert_eq!(
        parse_hex("f6:ab 0e18").unwrap(),
        vec![0xf6, 0xab, 0x0e, 0x18]
    );
    assert_eq!(parse_hex("0x0102").unwrap(), vec![1, 2]);
    assert_eq!(parse_hex("").unwrap(), Vec::<u8>::new());
    assert_eq!(
        parse_hex("abc").unwrap_err(),
        "odd number of hex digits (3)"
    );
    assert_eq!(parse_hex("zz").unwrap_err(), "not hex: 'zz'");
    // Multi-byte characters must not split or panic.
    assert!(parse_hex("éé").is_err());
}

#[test]
fn decode_conforming_golden() {
    let (exit, out, _) = cli(&["decode", "f6ab0e1801010303"]);
    assert_eq!(exit, Exit::Ok);
    assert_eq!(
        out,
        "raw: f6ab0e1801010303 (8 octets)
conforming: version 1
  remote invalidation: true
  max send: 4096 bytes
  max recv: 4096 bytes
"
    );
}

#[test]
fn decode_reserved_bits_and_longer_data() {
    let (exit, out, _) = cli(&["decode", "f6ab0e18 01 81 00 ff 0000"]);
    assert_eq!(exit, Exit::Ok);
    assert_eq!(
        out,
        "raw: f6ab0e18018100ff + 2 zero octets (10 octets)
conforming: version 1
  remote invalidation: true
  max send: 1024 bytes
  max recv: 262144 bytes
  reserved flag bits: 0x80 (ignored)
"
    );
}

#[test]
fn decode_each_nonconformance_exits_1() {
    for (data, reason) in [
        ("", "absent"),
        ("0000000000000000", "zeroed len=8"),
        ("f6ab0e", "short len=3"),
        ("f6ab0e1901010303", "bad_magic found=0xf6ab0e19"),
        ("f6ab0e1802010303", "unknown_version found=2"),
    ] {
        let (exit, out, _) = cli(&["decode", data]);
        assert_eq!(exit, Exit::Peer, "{data}");
        assert!(
            out.contains(&format!("not conforming: {reason}\n")),
            "{data}: {out}"
        );
        assert!(out.contains("  max send: 1024 bytes\n"), "{out}");
        assert!(out.contains("  remote invalidation: false\n"), "{out}");
    }
}

#[test]
fn decode_shows_nonzero_tails_in_full() {
    let (_, out, _) = cli(&["decode", "f6ab0e180101030300000001"]);
    assert!(
        out.starts_with("raw: f6ab0e180101030300000001 (12 octets)\n"),
        "{out}"
    );
    let (_, out, _) = cli(&["decode", "00000000000000000000"]);
    assert!(
        out.starts_with(
            "raw: 0000000000000000 + 2 zero octets (10 octets)\nnot conforming: zeroed len=10\n"
        ),
        "{out}"
    );
}

#[test]
fn decode_json_golden() {
    let (exit, out, _) = cli(&["decode", "--json", "f6ab0e1801000f3f"]);
    assert_eq!(exit, Exit::Ok);
    assert_eq!(
        out,
        r#"{
  "raw": "f6ab0e1801000f3f",
  "len": 8,
  "conformance": "ok",
  "reason": null,
  "message": {
    "version": 1,
    "flags": 0,
    "remote_invalidation": false,
    "reserved_flags": 0,
    "max_send": 16384,
    "max_recv": 65536
  },
  "effective": {
    "version": 1,
    "flags": 0,
    "remote_invalidation": false,
    "reserved_flags": 0,
    "max_send": 16384,
    "max_recv": 65536
  }
}
"#
    );
    let (exit, out, _) = cli(&["decode", "--json", "f6ab0e1802"]);
    assert_eq!(exit, Exit::Peer);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["conformance"], "short");
    assert_eq!(v["reason"], "short len=5");
    assert!(v["message"].is_null());
    assert_eq!(v["effective"]["max_send"], 1024);
}

#[test]
fn decode_usage_errors_exit_2() {
    for args in [
        &["decode"][..],
        &["decode", "abc"],
        &["decode", "zz"],
        &["decode", "00", "11"],
        &["frobnicate"],
        &[],
    ] {
        let (exit, _, _) = cli(args);
        assert_eq!(exit, Exit::Usage, "{args:?}");
    }
}

#[test]
fn encode_golden() {
    assert_eq!(
        cli(&["encode"]),
        (Exit::Ok, "f6ab0e1801010303\n".into(), String::new())
    );
    assert_eq!(
        cli(&["encode", "--send", "65536", "--no-ri"]).1,
        "f6ab0e1801003f03\n"
    );
    // Rounded down to a multiple of 1024, capped at 262144 (below 1024:
    // refused, sizes_below_1k_are_refused).
    assert_eq!(
        cli(&["encode", "--send", "5000", "--recv", "1024"]).1,
        "f6ab0e1801010300\n"
    );
    assert_eq!(
        cli(&["encode", "--send", "4294967295"]).1,
        "f6ab0e180101ff03\n"
    );
    assert_eq!(
        cli(&["encode", "--json", "--recv", "8192"]).1,
        r#"{
  "advertisement": "f6ab0e1801010307",
  "max_send": 4096,
  "max_recv": 8192,
  "remote_invalidation": true
}
"#
    );
    for bad in ["-1", "4294967296", "4k", ""] {
        assert_eq!(cli(&["encode", "--send", bad]).0, Exit::Usage, "{bad}");
    }
}

#[test]
fn negotiate_golden() {
    let (exit, out, _) = cli(&["negotiate", "--send", "65536", "f6ab0e1801010f0f"]);
    assert_eq!(exit, Exit::Ok);
    assert_eq!(
        out,
        "local: send 65536 recv 4096 remote invalidation true
  advertises: f6ab0e1801013f03
peer:
  raw: f6ab0e1801010f0f (8 octets)
  conforming: version 1
    remote invalidation: true
    max send: 16384 bytes
    max recv: 16384 bytes
negotiated:
  send threshold: 16384 bytes
  recv threshold: 4096 bytes
  remote invalidation: true
"
    );
}

#[test]
fn negotiate_nonconforming_peer_and_no_pdata() {
    let (exit, out, _) = cli(&["negotiate", "--json", "--send", "65536", ""]);
    assert_eq!(exit, Exit::Peer);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["peer"]["conformance"], "absent");
    assert_eq!(v["negotiated"]["send_threshold"], 1024);
    assert_eq!(v["negotiated"]["recv_threshold"], 1024);
    assert_eq!(v["negotiated"]["remote_invalidation"], false);
    assert_eq!(v["negotiated"]["peer_conforming"], false);
    assert_eq!(v["local"]["advertisement"], "f6ab0e1801013f03");

    // Sending nothing: this side negotiates as the RFC default.
    let (exit, out, _) = cli(&["negotiate", "--json", "--no-pdata", "f6ab0e1801013f3f"]);
    assert_eq!(exit, Exit::Ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["local"]["advertisement"].is_null());
    assert_eq!(v["negotiated"]["send_threshold"], 1024);
    assert_eq!(v["negotiated"]["remote_invalidation"], false);
}

#[test]
fn help_has_examples_and_exit_status() {
    for sub in ["decode", "encode", "negotiate", "ping", "probe", "status"] {
        let (exit, out, _) = cli(&[sub, "--help"]);
        assert_eq!(exit, Exit::Ok, "{sub}");
        assert!(out.contains("Example:"), "{sub}: {out}");
        assert!(out.contains("Exit status:"), "{sub}: {out}");
    }
    let (exit, out, _) = cli(&["--help"]);
    assert_eq!(exit, Exit::Ok);
    assert!(out.contains("Exit status:"));
}

#[test]
fn ping_arguments() {
    let parse = |args: &[&str]| {
        Cli::try_parse_from(std::iter::once("rpcrdma-cm").chain(args.iter().copied()))
    };
    let Command::Ping(p) = parse(&["ping", "-c", "100", "-i", "0", "--version", "4", "h"])
        .unwrap()
        .command
    else {
        panic!("not ping");
    };
    assert_eq!(
        (p.count, p.interval, p.program_version, p.program),
        (100, 0.0, 4, crate::oncrpc::NFS_PROGRAM)
    );
    assert_eq!(p.transport, ping::Transport::Tcp);
    for bad in [
        &["ping"][..],
        &["ping", "-c", "0", "h"],
        &["ping", "-i", "-1", "h"],
        &["ping", "-W", "0", "h"],
        &["ping", "-W", "nan", "h"],
        &["ping", "-t", "udp", "h"],
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn man_pages_carry_examples_and_exit_status() {
    let dir = std::env::temp_dir().join(format!("rpcrdma-cm-man-{}", std::process::id()));
    let (exit, _, err) = cli(&["man", dir.to_str().unwrap()]);
    assert_eq!(exit, Exit::Ok, "{err}");
    for page in [
        "rpcrdma-cm",
        "rpcrdma-cm-decode",
        "rpcrdma-cm-encode",
        "rpcrdma-cm-negotiate",
        "rpcrdma-cm-probe",
        "rpcrdma-cm-ping",
        "rpcrdma-cm-status",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{page}.1"))).unwrap();
        assert!(
            text.starts_with(".ie \\n(.g .ds Aq"),
            "{page}: {}",
            &text[..40]
        );
        assert!(text.contains("Exit status"), "{page}");
    }
    assert!(!dir.join("rpcrdma-cm-man.1").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The private data arguments of `probe h ARGS`.
pub(crate) fn pdata_args(args: &[&str]) -> crate::args::PrivateDataArgs {
    use clap::Parser;
    let argv = ["rpcrdma-cm", "probe", "h"].iter().chain(args.iter());
    match crate::Cli::try_parse_from(argv).unwrap().command {
        crate::Command::Probe(p) => p.pdata,
        _ => unreachable!(),
    }
}

/// Sizes below RFC 8797's smallest (1024) are refused, not turned into
/// 1024 silently; others are rounded down to a multiple of 1024 and capped
/// at 262144, as the help says.
#[test]
fn sizes_below_1k_are_refused() {
    for bad in ["0", "1", "1023"] {
        for cmd in [
            &["encode", "--send", bad][..],
            &["encode", "--recv", bad][..],
        ] {
            let (exit, text, _) = cli(cmd);
            assert_eq!(exit, Exit::Usage, "{cmd:?}: {text}");
            assert!(text.contains("below 1024"), "{cmd:?}: {text}");
        }
        let (exit, text, _) = cli(&["negotiate", "--send", bad, "f6ab0e1801010303"]);
        assert_eq!(exit, Exit::Usage, "negotiate --send {bad}: {text}");
    }
    assert_eq!(
        cli(&["encode", "--send", "1024", "--recv", "1024"]).1,
        "f6ab0e1801010000\n"
    );
    assert_eq!(
        cli(&["encode", "--send", "2047", "--recv", "300000"]).1,
        "f6ab0e18010100ff\n"
    );
}
