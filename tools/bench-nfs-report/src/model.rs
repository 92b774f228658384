// SPDX-License-Identifier: GPL-2.0

//! What one run directory of `make bench-nfs` holds, read and joined: the
//! configuration, what each end negotiated (their `*_cm_private`
//! tracepoints), the client's counters per workload and the capture's.

use crate::capture::{self, WireCounts};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// `config.json`, written by scripts/bench/bench-nfs.sh.
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

/// One line of `client-results.jsonl` (scripts/bench/bench_nfs_workload.py).
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
    /// Bytes xprtrdma copied into its send buffers (mountstats
    /// `pullup_copy_count`: calls sent from one buffer instead of the
    /// RPC's pages).
    pub pullup_copy_bytes: u64,
    /// Bytes xprtrdma copied out of its receive buffers into the RPC's
    /// pages (mountstats `fixup_copy_count`: inline reply payload, where a
    /// Write or Reply chunk would have placed it).
    pub fixup_copy_bytes: u64,
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

/// Receive buffers one side holds (`receive_buffers` of its memory file).
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct ReceiveBuffers {
    /// How many (allocations the trace saw and no kfree followed).
    pub count: u64,
    /// Octets of most of them.
    pub size: u64,
    /// Octets of all of them.
    pub bytes: u64,
    /// How many of each size (octets, as a string key), when known.
    #[serde(default)]
    pub sizes: BTreeMap<String, u64>,
}

/// What one side's transport keeps allocated for the memory phase's
/// connections: `client-memory.json` or `server-memory.json`
/// (scripts/bench/bench_nfs_memory.py).
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq, Default)]
pub struct Memory {
    /// The connections the phase held open (nconnect).
    pub connections: u64,
    /// Trace events lost in the window (must be 0).
    pub trace_lost: u64,
    /// The receive buffers, all connections.
    pub receive_buffers: ReceiveBuffers,
    /// Bytes the rpcrdma module allocated with kmalloc and kept, all
    /// connections (receive buffers included).
    pub rpcrdma_kmalloc_bytes: u64,
    /// The same for the RDMA core and the provider (rxe), built in.
    pub rdma_stack_kmalloc_bytes: u64,
    /// How much MemFree fell over the window (after a cache drop at both
    /// ends): everything the connections cost, and noise.
    pub memfree_drop_bytes: i64,
    /// `rdma resource show` counts before the window.
    pub rdma_resources_before: BTreeMap<String, u64>,
    /// The same after.
    pub rdma_resources_after: BTreeMap<String, u64>,
}

impl Memory {
    fn per_connection(&self, bytes: u64) -> u64 {
        bytes / self.connections.max(1)
    }

    /// Receive buffer bytes per connection.
    pub fn receive_bytes_per_connection(&self) -> u64 {
        self.per_connection(self.receive_buffers.bytes)
    }

    /// Receive buffers per connection (a mean: xprtrdma creates its
    /// buffers as each transport needs them).
    pub fn receive_buffers_per_connection(&self) -> f64 {
        self.receive_buffers.count as f64 / self.connections.max(1) as f64
    }

    /// kmalloc bytes of the transport (rpcrdma, RDMA core and provider)
    /// per connection.
    pub fn kmalloc_bytes_per_connection(&self) -> u64 {
        self.per_connection(self.rpcrdma_kmalloc_bytes + self.rdma_stack_kmalloc_bytes)
    }

    /// MemFree's fall per connection (negative when it rose).
    pub fn memfree_drop_per_connection(&self) -> i64 {
        self.memfree_drop_bytes / self.connections.max(1) as i64
    }

    /// Memory regions (`rdma resource show`) added per connection.
    pub fn mrs_per_connection(&self) -> f64 {
        let get = |m: &BTreeMap<String, u64>| m.get("mr").copied().unwrap_or(0);
        (get(&self.rdma_resources_after) as f64 - get(&self.rdma_resources_before) as f64)
            / self.connections.max(1) as f64
    }

    /// Connections whose transport kmalloc memory fits in 1 GiB.
    pub fn connections_per_gib(&self) -> u64 {
        (1u64 << 30) / self.kmalloc_bytes_per_connection().max(1)
    }

    fn load(dir: &Path, file: &str) -> Result<Self, String> {
        let m: Memory =
            serde_json::from_str(&read(dir, file)?).map_err(|e| format!("{file}: {e}"))?;
        if m.connections == 0 || m.trace_lost != 0 || m.receive_buffers.count == 0 {
            return Err(format!(
                "{file}: {} connections, {} trace events lost, {} receive buffers: not a measurement",
                m.connections, m.trace_lost, m.receive_buffers.count
            ));
        }
        Ok(m)
    }
}

/// What svcrdma copied while one workload ran (`svcrdma_send_pullup`
/// events between the workload's markers in `server-copies`).
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerCopies {
    /// Replies svcrdma copied into its send buffer.
    pub pullups: u64,
    /// Bytes of RPC message it copied for them.
    pub bytes: u64,
}

/// Split `server-copies` (trace lines: the markers bench_nfs_markers.py
/// wrote and the svcrdma_send_pullup events) into workloads.
pub fn server_copies(text: &str) -> Result<BTreeMap<String, ServerCopies>, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, ServerCopies)> = None;
    for line in text.lines() {
        if let Some((_, rest)) = line.split_once("tracing_mark_write: rpcrdma-bench ") {
            let (what, workload) = rest
                .trim()
                .split_once(' ')
                .ok_or_else(|| format!("server-copies: marker '{rest}'"))?;
            match (what, current.take()) {
                ("begin", None) => current = Some((workload.into(), ServerCopies::default())),
                ("end", Some((w, c))) if w == workload => {
                    out.insert(w, c);
                }
                (_, open) => {
                    return Err(format!(
                        "server-copies: marker '{rest}' while in {}",
                        open.map_or("no workload".into(), |(w, _)| w)
                    ))
                }
            }
        } else if line.contains("svcrdma_send_pullup: ") {
            let msg = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("msg="))
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| format!("server-copies: no msg= in '{line}'"))?;
            if let Some((_, c)) = current.as_mut() {
                c.pullups += 1;
                c.bytes += msg;
            }
        }
    }
    match current {
        Some((w, _)) => Err(format!("server-copies: workload {w} has no end marker")),
        None => Ok(out),
    }
}

/// One workload of a run: the client's record, the capture's counts and
/// what the server copied.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Workload {
    /// The client's counters.
    pub client: ClientRecord,
    /// The capture's counts.
    pub wire: WireCounts,
    /// svcrdma's copies.
    pub server_copies: ServerCopies,
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
    pub workloads: Vec<Workload>,
    /// The client's transport memory (memory phase).
    pub client_memory: Memory,
    /// The server's.
    pub server_memory: Memory,
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
        let lost = read(dir, "server-copies-lost")?;
        if lost.trim() != "0" {
            return Err(at(format!(
                "server-copies: the server's trace lost {} events",
                lost.trim()
            )));
        }
        let mut copies = server_copies(&read(dir, "server-copies")?).map_err(at)?;
        let client_memory = Memory::load(dir, "client-memory.json").map_err(at)?;
        let server_memory = Memory::load(dir, "server-memory.json").map_err(at)?;
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
            // once inside the trace's window, which scripts/bench/bench_nfs_workload.py
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
            let c = copies
                .remove(&r.workload)
                .ok_or_else(|| at(format!("{}: not in server-copies", r.workload)))?;
            workloads.push(Workload {
                client: r,
                wire: w,
                server_copies: c,
            });
        }
        if workloads.is_empty() {
            return Err(at("no workload results".into()));
        }
        Ok(Run {
            config,
            client,
            server,
            workloads,
            client_memory,
            server_memory,
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
    fn server_copies_by_workload() {
        let t = "a: tracing_mark_write: rpcrdma-bench begin create\n\
                 b: svcrdma_send_pullup: cq.id=1 cid=2 hdr=28 msg=48 (total 76)\n\
                 b: svcrdma_send_pullup: cq.id=1 cid=3 hdr=28 msg=52 (total 80)\n\
                 a: tracing_mark_write: rpcrdma-bench end create\n\
                 b: svcrdma_send_pullup: cq.id=1 cid=4 hdr=28 msg=1 (total 29)\n\
                 a: tracing_mark_write: rpcrdma-bench begin read-1k\n\
                 a: tracing_mark_write: rpcrdma-bench end read-1k\n";
        let c = server_copies(t).unwrap();
        assert_eq!(
            c["create"],
            ServerCopies {
                pullups: 2,
                bytes: 100
            }
        );
        assert_eq!(c["read-1k"], ServerCopies::default());
        assert_eq!(c.len(), 2);
        let open = "a: tracing_mark_write: rpcrdma-bench begin create\n";
        assert!(server_copies(open)
            .unwrap_err()
            .ends_with("create has no end marker"));
        let bad = "b: svcrdma_send_pullup: cq.id=1 cid=4 hdr=28 msg=x\n";
        assert!(server_copies(bad).unwrap_err().contains("no msg="));
        let nested = format!("{open}{open}");
        assert!(server_copies(&nested)
            .unwrap_err()
            .contains("while in create"));
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
        put("server-copies-lost", "0\n");
        put(
            "server-copies",
            "x: tracing_mark_write: rpcrdma-bench begin create\n\
             x: svcrdma_send_pullup: cq.id=1 cid=2 hdr=28 msg=48 (total 76)\n\
             x: tracing_mark_write: rpcrdma-bench end create\n",
        );
        let memory = r#"{"side":"client","connections":4,"trace_lost":0,
            "receive_buffers":{"count":4,"size":65536,"bytes":262144},
            "rpcrdma_kmalloc_bytes":300000,"rdma_stack_kmalloc_bytes":1000,
            "memfree_drop_bytes":400000,"rdma_resources_before":{"mr":0},
            "rdma_resources_after":{"mr":8},"groups":[]}"#;
        put("client-memory.json", memory);
        put("server-memory.json", memory);
        let record = |marshalled: u64| {
            format!(
                r#"{{"workload":"create","n":2,"seconds":1.0,"rpcs":5,"read_chunks":0,"write_chunks":0,"reply_chunks":0,"local_inv_needed":0,"pullup_copy_bytes":0,"fixup_copy_bytes":0,"marshalled":{marshalled},"marshalled_no_chunk":{marshalled},"trace_lost":0,"ops":{{"OPEN":2,"CLOSE":2}}}}"#
            )
        };
        // 4 operations, marshalled 4 or 6 times (retransmissions), sent 5
        // times (a backchannel reply): all fine.
        put("client-results.jsonl", &record(4));
        let run = Run::load(&dir).unwrap();
        assert_eq!(
            run.workloads[0].server_copies,
            ServerCopies {
                pullups: 1,
                bytes: 48
            }
        );
        assert_eq!(run.client_memory.receive_bytes_per_connection(), 65536);
        assert_eq!(run.client_memory.mrs_per_connection(), 2.0);
        // A lossy server trace, or a memory file without receive buffers,
        // is no measurement.
        put("server-copies-lost", "3\n");
        assert!(Run::load(&dir)
            .unwrap_err()
            .ends_with("the server's trace lost 3 events"));
        put("server-copies-lost", "0\n");
        put(
            "server-memory.json",
            &memory.replace(r#""count":4"#, r#""count":0"#),
        );
        assert!(Run::load(&dir)
            .unwrap_err()
            .contains("0 receive buffers: not a measurement"));
        put("server-memory.json", memory);
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
