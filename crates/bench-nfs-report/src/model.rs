// SPDX-License-Identifier: GPL-2.0

//! What one run directory of `make bench-nfs` holds, read and joined: the
//! configuration, what each end negotiated (their `*_cm_private`
//! tracepoints), the client's counters per workload and the capture's.

use crate::capture::{self, WireCounts};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// `config.json`, written by scripts/bench-nfs.sh.
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Short name (`stock-4k`, `cm-64k`, ...).
    pub name: String,
    /// What it is, one line.
    pub description: String,
    /// rpcrdma_cm's parameters on the server ("" not loaded, "-" defaults).
    pub server_params: String,
    /// The same on the client.
    pub client_params: String,
    /// Operations per workload.
    pub n: u64,
}

/// What a transport applied, from its `rpcrdma:*_cm_private` tracepoint.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// Largest inline message it sends.
    pub send_threshold: u32,
    /// Largest inline message it receives.
    pub recv_threshold: u32,
    /// Remote Invalidation in use.
    pub remote_invalidation: bool,
}

impl Negotiated {
    /// Parse the newest `*_cm_private` line of a trace file.
    pub fn from_trace(text: &str) -> Result<Self, String> {
        let line = text
            .lines()
            .rfind(|l| l.contains("_cm_private: "))
            .ok_or("no *_cm_private tracepoint line")?;
        let value = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
                .ok_or_else(|| format!("no {key}= in the tracepoint line"))
        };
        let num = |key: &str| -> Result<u32, String> {
            value(key)?
                .parse()
                .map_err(|_| format!("{key} is not a number"))
        };
        Ok(Negotiated {
            send_threshold: num("send_threshold")?,
            recv_threshold: num("recv_threshold")?,
            remote_invalidation: match value("remote_inv")? {
                "on" => true,
                "off" => false,
                v => return Err(format!("remote_inv={v}")),
            },
        })
    }
}

/// One line of `client-results.jsonl` (scripts/bench_nfs_workload.py).
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
pub struct ClientRecord {
    /// The workload.
    pub workload: String,
    /// Operations.
    pub n: u64,
    /// Wall time of the operations under TCG, seconds.
    pub seconds: f64,
    /// RPCs sent (mountstats).
    pub rpcs: u64,
    /// Read chunk segments (mountstats `read_chunk_count`).
    pub read_chunks: u64,
    /// Write chunk segments (mountstats `write_chunk_count`).
    pub write_chunks: u64,
    /// Reply chunk segments (mountstats `reply_chunk_count`).
    pub reply_chunks: u64,
    /// MRs the client invalidated itself (mountstats `local_inv_needed`).
    pub local_inv_needed: u64,
    /// RPCs marshalled (`rpcrdma:xprtrdma_marshal` events).
    pub marshalled: u64,
    /// Of those, with no chunk at all (read list and write list/reply
    /// chunk types inline).
    pub marshalled_no_chunk: u64,
    /// Trace events lost while the workload ran (must be 0).
    pub trace_lost: u64,
    /// NFS operations by name (mountstats per-op counts).
    pub ops: BTreeMap<String, u64>,
}

/// One configuration's run.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Run {
    /// The configuration.
    pub config: Config,
    /// What the client's transport applied.
    pub client: Negotiated,
    /// What the server's transport applied.
    pub server: Negotiated,
    /// Per workload, in the order run.
    pub workloads: Vec<(ClientRecord, WireCounts)>,
}

fn read(dir: &Path, file: &str) -> Result<String, String> {
    let p = dir.join(file);
    std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
}

impl Run {
    /// Read a run directory. Every workload the client ran must be in the
    /// capture, no trace event may have been lost, and the trace must have
    /// seen at least as many RPCs marshalled as mountstats counted NFS
    /// operations.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let at = |e: String| format!("{}: {e}", dir.display());
        let config: Config = serde_json::from_str(&read(dir, "config.json")?)
            .map_err(|e| at(format!("config.json: {e}")))?;
        let client = Negotiated::from_trace(&read(dir, "client-trace")?)
            .map_err(|e| at(format!("client-trace: {e}")))?;
        let server = Negotiated::from_trace(&read(dir, "server-trace")?)
            .map_err(|e| at(format!("server-trace: {e}")))?;
        let mut wire = capture::split(&read(dir, "packets.tsv")?).map_err(at)?;
        let mut workloads = Vec::new();
        for (i, line) in read(dir, "client-results.jsonl")?.lines().enumerate() {
            let r: ClientRecord = serde_json::from_str(line)
                .map_err(|e| at(format!("client-results.jsonl line {}: {e}", i + 1)))?;
            if r.trace_lost != 0 {
                return Err(at(format!(
                    "{}: the trace lost {} events",
                    r.workload, r.trace_lost
                )));
            }
            // Every NFS operation mountstats counted was marshalled at least
            // once inside the trace's window, which scripts/bench_nfs_workload.py
            // opens before and closes after the counters' (the trace also sees
            // retransmissions; mountstats' sends also count backchannel
            // replies, which are not marshalled, so neither count equals the
            // other). A trace that was off, or saw fewer, must not judge the
            // chunks.
            let ops: u64 = r.ops.values().sum();
            if ops == 0 || r.marshalled < ops {
                return Err(at(format!(
                    "{}: rpcrdma:xprtrdma_marshal saw {} RPCs, fewer than the {} NFS operations mountstats counted",
                    r.workload, r.marshalled, ops
                )));
            }
            let w = wire
                .remove(&r.workload)
                .ok_or_else(|| at(format!("{}: not in the capture", r.workload)))?;
            workloads.push((r, w));
        }
        if workloads.is_empty() {
            return Err(at("no workload results".into()));
        }
        Ok(Run {
            config,
            client,
            server,
            workloads,
        })
    }

    /// The threshold that decides whether an RPC travels inline: the
    /// smaller of what the client sends and receives.
    pub fn threshold(&self) -> u32 {
        self.client.send_threshold.min(self.client.recv_threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiated_from_the_newest_line() {
        let t = "x: xprtrdma_cm_private: a -> b by=stock send_threshold=1024 recv_threshold=1024 remote_inv=on\n\
                 x: xprtrdma_cm_private: a -> b by=module sent=f6 send_threshold=65536 recv_threshold=4096 remote_inv=off\n";
        assert_eq!(
            Negotiated::from_trace(t).unwrap(),
            Negotiated {
                send_threshold: 65536,
                recv_threshold: 4096,
                remote_invalidation: false
            }
        );
        assert_eq!(
            Negotiated::from_trace("").unwrap_err(),
            "no *_cm_private tracepoint line"
        );
        let bad = "x: svcrdma_cm_private: send_threshold=4k recv_threshold=1 remote_inv=on";
        assert_eq!(
            Negotiated::from_trace(bad).unwrap_err(),
            "send_threshold is not a number"
        );
        let bad = "x: svcrdma_cm_private: send_threshold=1 recv_threshold=1 remote_inv=maybe";
        assert_eq!(Negotiated::from_trace(bad).unwrap_err(), "remote_inv=maybe");
    }

    #[test]
    fn a_marshal_count_below_mountstats_operations_fails_the_run() {
        let dir = std::env::temp_dir().join(format!("bench-nfs-model-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let put = |f: &str, text: &str| std::fs::write(dir.join(f), text).unwrap();
        put(
            "config.json",
            r#"{"name":"cm-64k","description":"d","server_params":"","client_params":"","n":2}"#,
        );
        let trace =
            "x: xprtrdma_cm_private: send_threshold=65536 recv_threshold=65536 remote_inv=on\n";
        put("client-trace", trace);
        put("server-trace", trace);
        let marker = |what: &str| {
            let hex: String = format!("rpcrdma-bench {what}")
                .bytes()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("70\t47900\t\t\t{hex}")
        };
        put(
            "packets.tsv",
            &[
                marker("begin create"),
                "300\t4791\t4\t\t".into(),
                marker("end create"),
            ]
            .join("\n"),
        );
        let record = |marshalled: u64| {
            format!(
                r#"{{"workload":"create","n":2,"seconds":1.0,"rpcs":5,"read_chunks":0,"write_chunks":0,"reply_chunks":0,"local_inv_needed":0,"marshalled":{marshalled},"marshalled_no_chunk":{marshalled},"trace_lost":0,"ops":{{"OPEN":2,"CLOSE":2}}}}"#
            )
        };
        // 4 operations, marshalled 4 or 6 times (retransmissions), sent 5
        // times (a backchannel reply): all fine.
        put("client-results.jsonl", &record(4));
        assert!(Run::load(&dir).is_ok());
        put("client-results.jsonl", &record(6));
        assert!(Run::load(&dir).is_ok());
        // The marshal tracepoint was off: 0 marshalled, 0 without a chunk.
        put("client-results.jsonl", &record(0));
        let e = Run::load(&dir).unwrap_err();
        assert!(
            e.ends_with("create: rpcrdma:xprtrdma_marshal saw 0 RPCs, fewer than the 4 NFS operations mountstats counted"),
            "{e}"
        );
        put("client-results.jsonl", &record(3));
        assert!(Run::load(&dir).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
