// SPDX-License-Identifier: GPL-2.0

//! ONC RPC NULL ping over TCP (RFC 5531), record-marked by the protocol core.

use crate::UsageError;
use rpcrdma_cm_proto::record_marking::{Fragments, Limits};
use rpcrdma_cm_proto::stdio::RecordReader;
use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// NFS program number.
const NFS_PROGRAM: u32 = 100_003;

/// The NULL procedure CALL for `program`/`version` with AUTH_NONE.
pub(crate) fn null_call(xid: u32, program: u32, version: u32) -> Vec<u8> {
    let words = [
        xid, 0, // CALL
        2, // RPC version
        program, version, 0, // procedure NULL
        0, 0, // credential AUTH_NONE, empty
        0, 0, // verifier AUTH_NONE, empty
    ];
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

/// What a reply to the NULL call said.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// Accepted, SUCCESS.
    Success,
    /// Accepted with another status (1 PROG_UNAVAIL, 2 PROG_MISMATCH with
    /// the supported range, 3 PROC_UNAVAIL, 4 GARBAGE_ARGS, 5 SYSTEM_ERR).
    NotSuccess {
        accept_stat: u32,
        range: Option<(u32, u32)>,
    },
    /// Denied: reject_stat 0 RPC_MISMATCH, 1 AUTH_ERROR.
    Denied { reject_stat: u32 },
}

/// Decode a reply record; `Err` says why it is not a reply to `xid`.
pub(crate) fn parse_reply(rec: &[u8], xid: u32) -> Result<Reply, String> {
    let mut words = rec
        .chunks(4)
        .map(|c| <[u8; 4]>::try_from(c).map(u32::from_be_bytes));
    let mut next = |what: &str| -> Result<u32, String> {
        match words.next() {
            Some(Ok(w)) => Ok(w),
            _ => Err(format!("reply ends before {what} ({} octets)", rec.len())),
        }
    };
    let got_xid = next("xid")?;
    if got_xid != xid {
        return Err(format!("xid {got_xid:#x}, expected {xid:#x}"));
    }
    if next("message type")? != 1 {
        return Err("not a REPLY".into());
    }
    match next("reply status")? {
        0 => {
            next("verifier flavor")?;
            let len = next("verifier length")?;
            if len > 400 {
                return Err(format!("verifier length {len} exceeds 400"));
            }
            for _ in 0..len.div_ceil(4) {
                next("verifier body")?;
            }
            match next("accept status")? {
                0 => Ok(Reply::Success),
                2 => {
                    let low = next("low version")?;
                    let high = next("high version")?;
                    Ok(Reply::NotSuccess {
                        accept_stat: 2,
                        range: Some((low, high)),
                    })
                }
                s => Ok(Reply::NotSuccess {
                    accept_stat: s,
                    range: None,
                }),
            }
        }
        1 => Ok(Reply::Denied {
            reject_stat: next("reject status")?,
        }),
        s => Err(format!("reply status {s} is neither accepted nor denied")),
    }
}

pub(crate) fn ping_cmd(args: &[String]) -> Result<ExitCode, UsageError> {
    let mut target = None;
    let (mut program, mut version, mut timeout) = (NFS_PROGRAM, 3u32, 10u64);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |name: &str| -> Result<u64, UsageError> {
            let v = it
                .next()
                .ok_or_else(|| UsageError(format!("{name} needs a value")))?;
            v.parse()
                .map_err(|_| UsageError(format!("{name}: '{v}' is not a number")))
        };
        match a.as_str() {
            "--program" => program = num("--program")? as u32,
            "--version" => version = num("--version")? as u32,
            "--timeout" => timeout = num("--timeout")?.max(1),
            _ if target.is_none() => target = Some(a.clone()),
            _ => return Err(UsageError(format!("unexpected '{a}'"))),
        }
    }
    let target = target.ok_or_else(|| UsageError("ping needs HOST[:PORT]".into()))?;
    let target = if target.contains(':') {
        target
    } else {
        format!("{target}:2049")
    };
    match ping(&target, program, version, Duration::from_secs(timeout)) {
        Ok((Reply::Success, rtt)) => {
            println!(
                "{target}: program {program} version {version} NULL ok in {:.1} ms",
                rtt.as_secs_f64() * 1e3
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok((other, _)) => {
            println!("{target}: program {program} version {version}: {other:?}");
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            eprintln!("rpcrdma-cm: ping {target}: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn ping(
    target: &str,
    program: u32,
    version: u32,
    timeout: Duration,
) -> Result<(Reply, Duration), String> {
    let addr = target
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve: {e}"))?
        .next()
        .ok_or("no address")?;
    let start = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let xid = std::process::id() ^ 0x5250_4321;
    let call = null_call(xid, program, version);
    let mut wire = vec![0; Fragments::new(&call, u32::MAX).encoded_len()];
    Fragments::new(&call, u32::MAX)
        .write_to(&mut wire)
        .ok_or("encode")?;
    s.write_all(&wire).map_err(|e| format!("send: {e}"))?;
    let limits = Limits {
        max_record_bytes: 64 * 1024,
        max_fragments: 16,
        max_buffered: 64 * 1024,
        max_record_time: Some(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)),
    };
    let mut reader = RecordReader::new(s, limits);
    let rec = reader
        .next_record()
        .map_err(|e| format!("receive: {e}"))?
        .ok_or("connection closed before a reply")?;
    Ok((parse_reply(&rec, xid)?, start.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn null_call_layout() {
        let c = null_call(7, NFS_PROGRAM, 3);
        assert_eq!(c.len(), 40);
        assert_eq!(&c[12..16], &100_003u32.to_be_bytes());
    }

    #[test]
    fn reply_parsing() {
        let w = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_be_bytes()).collect() };
        assert_eq!(parse_reply(&w(&[9, 1, 0, 0, 0, 0]), 9), Ok(Reply::Success));
        assert_eq!(
            parse_reply(&w(&[9, 1, 0, 0, 0, 2, 2, 4]), 9),
            Ok(Reply::NotSuccess {
                accept_stat: 2,
                range: Some((2, 4))
            })
        );
        assert_eq!(
            parse_reply(&w(&[9, 1, 1, 1]), 9),
            Ok(Reply::Denied { reject_stat: 1 })
        );
        assert!(parse_reply(&w(&[8, 1, 0]), 9).is_err());
        assert!(parse_reply(&w(&[9, 1, 0, 0, 0xffff_ffff]), 9).is_err());
        assert!(parse_reply(&[0, 0, 0], 9).is_err());
    }

    /// A one-shot server on loopback that answers with `reply` split into
    /// two fragments and cut into tiny writes.
    #[test]
    fn ping_against_loopback_server() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut r = RecordReader::new(c.try_clone().unwrap(), Limits::DEFAULT);
            let call = r.next_record().unwrap().unwrap();
            let xid = u32::from_be_bytes(call[..4].try_into().unwrap());
            let reply: Vec<u8> = [xid, 1, 0, 0, 0, 0]
                .iter()
                .flat_map(|x| x.to_be_bytes())
                .collect();
            let mut wire = vec![0; 64];
            let n = Fragments::new(&reply, 10).write_to(&mut wire).unwrap();
            for b in wire[..n].chunks(3) {
                c.write_all(b).unwrap();
            }
        });
        let (reply, _) = ping(&addr.to_string(), NFS_PROGRAM, 3, Duration::from_secs(5)).unwrap();
        assert_eq!(reply, Reply::Success);
        server.join().unwrap();
    }
}
