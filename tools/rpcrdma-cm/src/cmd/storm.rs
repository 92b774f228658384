// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm storm`: many connects to an RPC-over-RDMA listener, each
//! with random private data (conforming messages with random sizes, flags
//! and trailing octets, wrong magics, other versions, short prefixes,
//! random octets, none), from a seed, so that a run can be repeated and its
//! cases listed without connecting (`--print-cases`).

use crate::error::{Exit, Failure};
use crate::output::emit;
use crate::report::hex_or_dash;
use clap::Args;
use rdmacm::{ConnectOptions, Connection, Error as RdmaError, MAX_REQ_PRIVATE_DATA};
use std::io::Write;
use std::time::Duration;

/// The RFC 8797 magic.
const MAGIC: [u8; 4] = [0xf6, 0xab, 0x0e, 0x18];

/// Arguments of `storm`.
#[derive(Args, Debug)]
#[command(after_help = concat!(
    "Example:\n",
    "  $ rpcrdma-cm storm --count 3 --seed 1 192.168.100.1\n",
    "  conn 0 req=f6ab0e18... rep=f6ab0e1801010303... outcome=accepted\n",
    "  ...\n",
    "  $ rpcrdma-cm storm --count 3 --seed 1 --print-cases\n\n",
    "One line per connect: what was sent, what the accept (or reject) carried,\n",
    "and the outcome. The same seed gives the same private data.\n\n",
    "Exit status: 0 every connect was accepted and cleanly disconnected,\n",
    "1 otherwise, 2 usage error."
))]
pub(crate) struct StormArgs {
    /// The listener: HOST, HOST:PORT or [IPV6]:PORT (default port 20049);
    /// not needed with --print-cases.
    #[arg(required_unless_present = "print_cases")]
    pub target: Option<String>,
    /// Connects to make.
    #[arg(long, short = 'c', default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub count: u32,
    /// The seed of the private data (the same seed, the same cases).
    #[arg(long, default_value_t = 8797)]
    pub seed: u64,
    /// At most this many octets each (56 for a REQ; 196 for cases meant
    /// for an accept, e.g. `respond --cases`).
    #[arg(long, default_value_t = MAX_REQ_PRIVATE_DATA, value_parser = max_len)]
    pub max_len: usize,
    /// Print the cases, one hex line each ("-" for none), and connect to
    /// nothing.
    #[arg(long)]
    pub print_cases: bool,
    /// Seconds allowed for each connect and disconnect.
    #[arg(long, short = 'W', default_value_t = 5.0, value_parser = crate::args::positive_seconds)]
    pub timeout: f64,
}

/// clap value parser for `--max-len`: 8..=196.
fn max_len(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (8..=196).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a length in 8..=196")),
    }
}

/// SplitMix64: a small, fixed pseudo-random sequence (no cryptographic
/// use; the point is that a seed always gives the same cases).
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    /// The sequence of `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A random octet.
    pub fn octet(&mut self) -> u8 {
        self.next_u64() as u8
    }

    /// `n` random octets.
    pub fn octets(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.octet()).collect()
    }
}

/// One random private data of at most `max_len` octets (empty: none).
pub(crate) fn random_pdata(r: &mut SplitMix64, max_len: usize) -> Vec<u8> {
    let kind = r.below(8);
    let tail_len = r.below((max_len - 7) as u64) as usize;
    let tail = r.octets(tail_len);
    let message = |version: u8, flags: u8, send: u8, recv: u8| {
        let mut m = MAGIC.to_vec();
        m.extend_from_slice(&[version, flags, send, recv]);
        m
    };
    let mut p = match kind {
        0 => return Vec::new(),
        // Conforming: random sizes and flags, any tail.
        1 | 2 => {
            let (f, s, v) = (r.octet(), r.octet(), r.octet());
            let mut m = message(1, f, s, v);
            m.extend_from_slice(&tail);
            m
        }
        // A wrong magic: byte-swapped, one bit off, random.
        3 => {
            let magic = match r.below(3) {
                0 => [0x18, 0x0e, 0xab, 0xf6],
                1 => (u32::from_be_bytes(MAGIC) ^ (1 << r.below(32))).to_be_bytes(),
                _ => (r.next_u64() as u32).to_be_bytes(),
            };
            let mut m = magic.to_vec();
            m.extend_from_slice(&[1, r.octet(), 3, 3]);
            m.extend_from_slice(&tail);
            m
        }
        // Other versions.
        4 => {
            // Never 1: 0, 2 or any of 2..=255.
            let version = match r.below(3) {
                0 => 0,
                1 => 2,
                _ => 2 + r.below(254) as u8,
            };
            let mut m = message(version, 1, 3, 3);
            m.extend_from_slice(&tail);
            m
        }
        // Short prefixes of a conforming message.
        5 => {
            let n = 1 + r.below(7) as usize;
            message(1, 1, 3, 3)[..n].to_vec()
        }
        // Random octets of random length.
        _ => {
            let n = 1 + r.below(max_len as u64) as usize;
            r.octets(n)
        }
    };
    p.truncate(max_len);
    p
}

/// `rpcrdma-cm storm`.
pub(crate) fn storm_cmd(args: &StormArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
    let mut r = SplitMix64::new(args.seed);
    let cases: Vec<Vec<u8>> = (0..args.count)
        .map(|_| random_pdata(&mut r, args.max_len))
        .collect();
    if args.print_cases {
        let text: String = cases.iter().map(|c| hex_or_dash(c) + "\n").collect();
        emit(out, &text);
        return Ok(Exit::Ok);
    }
    if args.max_len > MAX_REQ_PRIVATE_DATA {
        return Err(Failure::usage(format!(
            "--max-len {}: a connect carries at most {MAX_REQ_PRIVATE_DATA} octets (more only with --print-cases)",
            args.max_len
        )));
    }
    let target = args.target.as_deref().unwrap_or_default();
    let addr = crate::args::resolve(target, crate::transport::rdma::NFS_RDMA_PORT)?;
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut failed = 0u32;
    for (n, pdata) in cases.iter().enumerate() {
        let opts = ConnectOptions {
            private_data: (!pdata.is_empty()).then(|| pdata.clone()),
            timeout,
            max_recv: 1,
        };
        let (reply, outcome) = match Connection::connect(addr, &opts) {
            Ok(a) => match a.connection.disconnect(timeout) {
                Ok(()) => (a.private_data, "accepted".to_string()),
                Err(e) => (a.private_data, format!("error:disconnect:{e}")),
            },
            Err(RdmaError::Rejected { private_data, .. }) => (private_data, "rejected".into()),
            Err(e) => (Vec::new(), format!("error:{e}")),
        };
        if outcome != "accepted" {
            failed += 1;
        }
        emit(
            out,
            &format!(
                "conn {n} req={} rep={} outcome={}\n",
                hex_or_dash(pdata),
                hex_or_dash(&reply),
                outcome.replace(' ', "_")
            ),
        );
    }
    Ok(if failed == 0 { Exit::Ok } else { Exit::Peer })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_cases() {
        let run = |seed| {
            let mut r = SplitMix64::new(seed);
            (0..200)
                .map(|_| random_pdata(&mut r, 56))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(8797), run(8797));
        assert_ne!(run(8797), run(1));
    }

    #[test]
    fn every_kind_appears_within_the_length() {
        let mut r = SplitMix64::new(1);
        let cases: Vec<_> = (0..400).map(|_| random_pdata(&mut r, 56)).collect();
        assert!(cases.iter().all(|c| c.len() <= 56));
        assert!(cases.iter().any(Vec::is_empty));
        assert!(cases
            .iter()
            .any(|c| c.len() >= 8 && c[..4] == MAGIC && c[4] == 1));
        assert!(cases
            .iter()
            .any(|c| c.len() >= 4 && c[..4] == [0x18, 0x0e, 0xab, 0xf6]));
        assert!(cases
            .iter()
            .any(|c| c.len() >= 5 && c[..4] == MAGIC && c[4] != 1));
        assert!(cases
            .iter()
            .any(|c| (1..8).contains(&c.len()) && MAGIC.starts_with(&c[..c.len().min(4)])));
        let mut r = SplitMix64::new(1);
        assert!((0..400).all(|_| random_pdata(&mut r, 196).len() <= 196));
    }

    #[test]
    fn splitmix_reference_values() {
        // The published SplitMix64 sequence for seed 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }
}
