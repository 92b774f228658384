// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm`: userspace companion of rpcrdma_cm.ko.
//!
//! ```text
//! rpcrdma-cm decode HEX            decode RFC 8797 private data (any length)
//! rpcrdma-cm encode [--send N] [--recv N] [--no-ri]
//!                                  print the 8 octets for those sizes
//! rpcrdma-cm negotiate --send N --recv N [--no-ri] PEER_HEX
//!                                  what this side would use against a peer
//! rpcrdma-cm ping HOST[:PORT] [--program P] [--version V] [--timeout S]
//!                                  ONC RPC NULL call over TCP (default nfs 100003 v3, port 2049)
//! ```
//!
//! Every decision comes from the protocol core (`rpcrdma-cm-proto`).

mod rpc;

use rpcrdma_cm_proto::cm_private::{negotiate, InlineSize, LocalLimits, PrivateMessage};
use std::process::ExitCode;

const USAGE: &str = "usage:
  rpcrdma-cm decode HEX
  rpcrdma-cm encode [--send BYTES] [--recv BYTES] [--no-ri]
  rpcrdma-cm negotiate [--send BYTES] [--recv BYTES] [--no-ri] PEER_HEX
  rpcrdma-cm ping HOST[:PORT] [--program P] [--version V] [--timeout SECONDS]";

/// A command-line error: printed with the usage, exit status 2.
#[derive(Debug)]
struct UsageError(String);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(UsageError(msg)) => {
            eprintln!("rpcrdma-cm: {msg}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode, UsageError> {
    let (cmd, rest) = args
        .split_first()
        .ok_or_else(|| UsageError("no command".into()))?;
    match cmd.as_str() {
        "decode" => decode(rest),
        "encode" => encode(rest),
        "negotiate" => negotiate_cmd(rest),
        "ping" => rpc::ping_cmd(rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => Err(UsageError(format!("unknown command '{other}'"))),
    }
}

/// Parse hex octets, allowing spaces, colons and a leading `0x`.
fn parse_hex(s: &str) -> Result<Vec<u8>, UsageError> {
    let s = s.trim().trim_start_matches("0x");
    let digits: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ':')
        .collect();
    if digits.len() % 2 != 0 {
        return Err(UsageError(format!(
            "odd number of hex digits ({})",
            digits.len()
        )));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&digits[i..i + 2], 16)
                .map_err(|_| UsageError(format!("not hex: '{}'", &digits[i..i + 2])))
        })
        .collect()
}

fn hex(octets: &[u8]) -> String {
    octets.iter().map(|b| format!("{b:02x}")).collect()
}

fn decode(args: &[String]) -> Result<ExitCode, UsageError> {
    let [h] = args else {
        return Err(UsageError("decode takes one hex argument".into()));
    };
    let data = parse_hex(h)?;
    match PrivateMessage::decode(&data) {
        Ok(m) => {
            println!("conforming: {m}");
            println!("  remote invalidation: {}", m.flags.remote_invalidation());
            println!("  max send: {} bytes", m.max_send);
            println!("  max recv: {} bytes", m.max_recv);
            if m.flags.reserved_bits() != 0 {
                println!(
                    "  reserved flag bits set: {:#04x} (ignored)",
                    m.flags.reserved_bits()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            println!("not conforming: {why}");
            println!("  the peer counts as: {}", PrivateMessage::RFC_DEFAULT);
            Ok(ExitCode::from(1))
        }
    }
}

/// `--send N`, `--recv N`, `--no-ri` into local limits (stock 4096/4096, RI on);
/// returns the remaining positional arguments.
fn local_limits(args: &[String]) -> Result<(LocalLimits, Vec<String>), UsageError> {
    let mut limits = LocalLimits {
        max_send: InlineSize::from_bytes(4096),
        max_recv: InlineSize::from_bytes(4096),
        remote_invalidation: true,
    };
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--send" | "--recv" => {
                let v = it
                    .next()
                    .ok_or_else(|| UsageError(format!("{a} needs a value")))?;
                let bytes: u32 = v
                    .parse()
                    .map_err(|_| UsageError(format!("{a}: '{v}' is not a byte count")))?;
                let size = InlineSize::from_bytes(bytes);
                if size.bytes() != bytes {
                    eprintln!("rpcrdma-cm: {a} {bytes} is advertised as {size} (multiples of 1024 in 1024..262144)");
                }
                if a == "--send" {
                    limits.max_send = size;
                } else {
                    limits.max_recv = size;
                }
            }
            "--no-ri" => limits.remote_invalidation = false,
            _ => rest.push(a.clone()),
        }
    }
    Ok((limits, rest))
}

fn encode(args: &[String]) -> Result<ExitCode, UsageError> {
    let (limits, rest) = local_limits(args)?;
    if !rest.is_empty() {
        return Err(UsageError(format!("unexpected '{}'", rest[0])));
    }
    println!("{}", hex(&limits.advertisement().encode()));
    Ok(ExitCode::SUCCESS)
}

fn negotiate_cmd(args: &[String]) -> Result<ExitCode, UsageError> {
    let (limits, rest) = local_limits(args)?;
    let [peer_hex] = rest.as_slice() else {
        return Err(UsageError(
            "negotiate takes the peer's private data in hex".into(),
        ));
    };
    let peer = PrivateMessage::decode(&parse_hex(peer_hex)?);
    match &peer {
        Ok(m) => println!("peer: {m}"),
        Err(why) => println!("peer: not conforming ({why}), counts as 1024/1024, no RI"),
    }
    let n = negotiate(&limits, &peer);
    println!("advertise: {}", hex(&limits.advertisement().encode()));
    println!("send threshold: {}", n.send_threshold);
    println!("recv threshold: {}", n.recv_threshold);
    println!("remote invalidation: {}", n.remote_invalidation);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn hex_parsing() {
        assert_eq!(
            parse_hex("f6:ab 0e18").unwrap(),
            vec![0xf6, 0xab, 0x0e, 0x18]
        );
        assert_eq!(parse_hex("0x0102").unwrap(), vec![1, 2]);
        assert!(parse_hex("abc").is_err());
        assert!(parse_hex("zz").is_err());
    }

    #[test]
    fn limits_from_args() {
        let (l, rest) = local_limits(&s(&["--send", "65536", "--no-ri", "x"])).unwrap();
        assert_eq!(l.max_send.bytes(), 65536);
        assert_eq!(l.max_recv.bytes(), 4096);
        assert!(!l.remote_invalidation);
        assert_eq!(rest, s(&["x"]));
        assert!(local_limits(&s(&["--recv"])).is_err());
        assert!(local_limits(&s(&["--recv", "-1"])).is_err());
        assert_eq!(hex(&l.advertisement().encode()), "f6ab0e1801003f03");
    }
}
