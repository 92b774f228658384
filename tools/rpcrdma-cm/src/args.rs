// SPDX-License-Identifier: GPL-2.0

//! Command-line values more than one subcommand takes: this side's inline
//! limits, octets in hex, durations, the server to reach, and the private
//! data to connect with; each with its clap value parser.

use crate::error::{Context, Failure};
use crate::report::parse_hex;
use clap::Args;
use rdmacm::MAX_REQ_PRIVATE_DATA;
use rpcrdma_cm_proto::cm_private::{InlineSize, LocalLimits, PrivateMessage};
use std::net::{SocketAddr, ToSocketAddrs};

/// This side's inline limits and Remote Invalidation.
#[derive(Args, Debug, Clone, Copy)]
pub(crate) struct LimitArgs {
    /// Largest message this side sends, bytes: at least 1024, rounded down to a multiple of 1024, at most 262144.
    #[arg(long, value_name = "BYTES", default_value_t = 4096, value_parser = inline_bytes)]
    pub send: u32,
    /// Largest message this side receives, bytes (rounded like --send).
    #[arg(long, value_name = "BYTES", default_value_t = 4096, value_parser = inline_bytes)]
    pub recv: u32,
    /// This side does not offer Remote Invalidation.
    #[arg(long)]
    pub no_ri: bool,
}

impl LimitArgs {
    /// The limits as the protocol core takes them.
    pub fn limits(&self) -> LocalLimits {
        LocalLimits {
            max_send: InlineSize::from_bytes(self.send),
            max_recv: InlineSize::from_bytes(self.recv),
            remote_invalidation: !self.no_ri,
        }
    }
}

/// Octets given in hex on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Octets(pub Vec<u8>);

/// clap value parser for [`Octets`].
pub(crate) fn octets(s: &str) -> Result<Octets, String> {
    parse_hex(s).map(Octets)
}

/// clap value parser for an inline size in bytes: a number of at least
/// 1024 (RFC 8797's smallest, size code 0: below it nothing can be
/// advertised), which the protocol core rounds down to a multiple of 1024
/// and caps at 262144.
fn inline_bytes(s: &str) -> Result<u32, String> {
    let n: u32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a byte count"))?;
    if n < InlineSize::MIN_BYTES {
        return Err(format!(
            "{n} is below 1024, the smallest size RFC 8797 encodes"
        ));
    }
    Ok(InlineSize::from_bytes(n).bytes())
}

/// clap value parser: a non-negative number of seconds.
pub(crate) fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds in 0..86400")),
    }
}

/// clap value parser: a positive number of seconds.
pub(crate) fn positive_seconds(s: &str) -> Result<f64, String> {
    match seconds(s)? {
        v if v >= 0.001 => Ok(v),
        _ => Err(format!("'{s}' is below 0.001 seconds")),
    }
}

/// Split HOST, HOST:PORT, IPV6, [IPV6] or [IPV6]:PORT into host and port
/// (`default_port` if none); `Err` says why the target is malformed.
fn split_target(target: &str, default_port: u16) -> Result<(&str, u16), String> {
    let port = |p: &str| {
        p.parse::<u16>()
            .map_err(|_| format!("'{target}': '{p}' is not a port number"))
    };
    let (host, port) = if target.parse::<std::net::Ipv6Addr>().is_ok() {
        // A bare IPv6 address.
        (target, default_port)
    } else if let Some(rest) = target.strip_prefix('[') {
        let (inside, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("'{target}': no ']' after the IPv6 address"))?;
        if inside.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("'{target}': '{inside}' is not an IPv6 address"));
        }
        let port = match after {
            "" => default_port,
            a => port(
                a.strip_prefix(':')
                    .ok_or_else(|| format!("'{target}': expected ':PORT' after ']'"))?,
            )?,
        };
        (inside, port)
    } else if let Some((host, p)) = target.split_once(':') {
        if host.contains(':') || p.contains(':') {
            return Err(format!(
                "'{target}': write an IPv6 address with a port as [ADDRESS]:PORT"
            ));
        }
        (host, port(p)?)
    } else {
        (target, default_port)
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("'{target}' is not a host name or address"));
    }
    Ok((host, port))
}

/// Resolve HOST, HOST:PORT or [IPV6]:PORT, with `default_port`. A
/// malformed target is a usage error (exit 2); a name that does not
/// resolve is the system's answer (exit 1).
pub(crate) fn resolve(target: &str, default_port: u16) -> Result<SocketAddr, Failure> {
    let (host, port) = split_target(target, default_port).map_err(Failure::usage)?;
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()
        .context(format!("cannot resolve '{target}'"))?
        .next()
        .ok_or_else(|| Failure::peer(format!("'{target}' has no address")))
}

/// What this side sends as private data.
#[derive(Args, Debug, Clone)]
pub(crate) struct PrivateDataArgs {
    /// This side's limits, advertised as RFC 8797 private data.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Send these octets (hex, at most 56) as private data instead.
    #[arg(long, value_name = "HEX", value_parser = octets, conflicts_with = "no_pdata")]
    pub pdata: Option<Octets>,
    /// Send no private data.
    #[arg(long)]
    pub no_pdata: bool,
}

impl PrivateDataArgs {
    /// The octets to send (`None`: none) and the limits this side then
    /// negotiates with: its own if it sends a conforming message, the RFC
    /// 8797 default otherwise (the peer assumes the default then).
    pub fn choose(&self) -> Result<(Option<Vec<u8>>, LocalLimits), Failure> {
        let sent = if self.no_pdata {
            None
        } else if let Some(Octets(p)) = &self.pdata {
            if p.len() > MAX_REQ_PRIVATE_DATA {
                return Err(Failure::usage(format!(
                    "--pdata: {} octets, the RDMA CM carries at most {MAX_REQ_PRIVATE_DATA}",
                    p.len()
                )));
            }
            Some(p.clone())
        } else {
            Some(self.limits.limits().advertisement().encode().to_vec())
        };
        let effective = match PrivateMessage::decode(sent.as_deref().unwrap_or(&[])) {
            Ok(m) => LocalLimits {
                max_send: m.max_send,
                max_recv: m.max_recv,
                remote_invalidation: m.flags.remote_invalidation(),
            },
            Err(_) => LocalLimits::RFC_DEFAULT,
        };
        Ok((sent, effective))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Exit;
    use crate::report::hex;
    use crate::tests::{cli, pdata_args};

    #[test]
    fn target_forms() {
        assert_eq!(
            resolve("127.0.0.1", 2049).unwrap().to_string(),
            "127.0.0.1:2049"
        );
        assert_eq!(
            resolve("127.0.0.1:7", 2049).unwrap().to_string(),
            "127.0.0.1:7"
        );
        assert_eq!(resolve("::1", 2049).unwrap().to_string(), "[::1]:2049");
        assert_eq!(resolve("[::1]", 20049).unwrap().to_string(), "[::1]:20049");
        assert_eq!(resolve("[::1]:9", 2049).unwrap().to_string(), "[::1]:9");
        assert_eq!(
            resolve("no such host.invalid", 1).unwrap_err().exit,
            Exit::Usage
        );
        // A well-formed name that does not resolve is the system's answer
        // (exit 1); a malformed target is a usage error (exit 2).
        let e = resolve("nosuchhost.invalid", 1).unwrap_err();
        assert_eq!(e.exit, Exit::Peer, "{}", e.message);
        assert!(e
            .message
            .starts_with("cannot resolve 'nosuchhost.invalid': "));
        assert_eq!(
            resolve("nosuchhost.invalid:7", 1).unwrap_err().exit,
            Exit::Peer
        );
        for bad in [
            "h:port", "h:70000", "[::1", "[::1]x", "[h]:1", "a:b:c", "", ":7", "[::1]:",
        ] {
            let e = resolve(bad, 1).unwrap_err();
            assert_eq!(e.exit, Exit::Usage, "'{bad}': {}", e.message);
        }
    }

    #[test]
    fn private_data_choice() {
        let (sent, l) = pdata_args(&[]).choose().unwrap();
        assert_eq!(hex(&sent.unwrap()), "f6ab0e1801010303");
        assert_eq!(l.max_send.bytes(), 4096);
        let (sent, l) = pdata_args(&["--send", "65536", "--no-ri"])
            .choose()
            .unwrap();
        assert_eq!(hex(&sent.unwrap()), "f6ab0e1801003f03");
        assert!(!l.remote_invalidation);
        let (sent, l) = pdata_args(&["--no-pdata"]).choose().unwrap();
        assert_eq!(sent, None);
        assert_eq!(l, LocalLimits::RFC_DEFAULT);
        // Odd private data: sent as given; this side counts as the default.
        let (sent, l) = pdata_args(&["--pdata", "f6ab0e"]).choose().unwrap();
        assert_eq!(sent, Some(vec![0xf6, 0xab, 0x0e]));
        assert_eq!(l, LocalLimits::RFC_DEFAULT);
        let (_, l) = pdata_args(&["--pdata", "f6ab0e1801010f0f"])
            .choose()
            .unwrap();
        assert_eq!(l.max_recv.bytes(), 16384);
        let long = "00".repeat(57);
        let e = pdata_args(&["--pdata", &long]).choose().unwrap_err();
        assert_eq!(e.exit, Exit::Usage);
        assert_eq!(
            cli(&["probe", "--pdata", "00", "--no-pdata", "h"]).0,
            Exit::Usage
        );
        assert_eq!(cli(&["probe", "--pdata", "0", "h"]).0, Exit::Usage);
        assert_eq!(
            cli(&["probe", "--pdata", &long, "127.0.0.1"]).0,
            Exit::Usage
        );
    }
}
