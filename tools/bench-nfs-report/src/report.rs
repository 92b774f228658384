// SPDX-License-Identifier: GPL-2.0

//! The numbers per workload and configuration, the targets of issue 12 and
//! where each stands, the connect cost, as Markdown and CSV.

use crate::capture::WireCounts;
use crate::model::{Memory, Run, Workload};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One workload under one configuration.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Row {
    /// The workload.
    pub workload: String,
    /// The configuration.
    pub config: String,
    /// The client's inline threshold (min of its send and receive).
    pub threshold: u32,
    /// Remote Invalidation as the client applied it.
    pub client_ri: bool,
    /// Operations.
    pub n: u64,
    /// RPCs (mountstats).
    pub rpcs: u64,
    /// RPCs marshalled (tracepoint).
    pub marshalled: u64,
    /// RPCs marshalled with no chunk.
    pub no_chunk: u64,
    /// Read chunk segments.
    pub read_chunks: u64,
    /// Write chunk segments.
    pub write_chunks: u64,
    /// Reply chunk segments.
    pub reply_chunks: u64,
    /// The client's LocalInv.
    pub local_inv: u64,
    /// Bytes the client copied (pullup into send buffers and fixup out of
    /// receive buffers, mountstats).
    pub client_copy_bytes: u64,
    /// Bytes the server copied into its send buffers (svcrdma_send_pullup).
    pub server_copy_bytes: u64,
    /// The capture's counts.
    pub wire: WireCounts,
    /// TCG wall time of the operations, seconds.
    pub seconds: f64,
    /// NFS operations by name.
    pub ops: std::collections::BTreeMap<String, u64>,
}

impl Row {
    /// Build a row from a run's workload.
    pub fn new(run: &Run, workload: &Workload) -> Self {
        let (r, w) = (&workload.client, &workload.wire);
        Row {
            workload: r.workload.clone(),
            config: run.config.name.clone(),
            threshold: run.threshold(),
            client_ri: run.client.remote_invalidation,
            n: r.n,
            rpcs: r.rpcs,
            marshalled: r.marshalled,
            no_chunk: r.marshalled_no_chunk,
            read_chunks: r.read_chunks,
            write_chunks: r.write_chunks,
            reply_chunks: r.reply_chunks,
            local_inv: r.local_inv_needed,
            client_copy_bytes: r.pullup_copy_bytes + r.fixup_copy_bytes,
            server_copy_bytes: workload.server_copies.bytes,
            wire: *w,
            seconds: r.seconds,
            ops: r.ops.clone(),
        }
    }

    /// Share of the marshalled RPCs without any chunk, percent.
    pub fn no_chunk_pct(&self) -> f64 {
        pct(self.no_chunk, self.marshalled)
    }

    /// Explicit RDMA operations (READ and WRITE) per 100 RPCs.
    pub fn rdma_ops_per_100(&self) -> f64 {
        pct(self.wire.rdma_ops(), self.rpcs)
    }

    /// Bytes on the wire per RPC.
    pub fn bytes_per_rpc(&self) -> f64 {
        ratio(self.wire.bytes, self.rpcs)
    }

    /// Bytes the client and the server copied per RPC (transport copies
    /// between RPC pages and send or receive buffers).
    pub fn copied_per_rpc(&self) -> (f64, f64) {
        (
            ratio(self.client_copy_bytes, self.rpcs),
            ratio(self.server_copy_bytes, self.rpcs),
        )
    }

    /// TCG wall time per RPC, milliseconds.
    pub fn ms_per_rpc(&self) -> f64 {
        if self.rpcs == 0 {
            0.0
        } else {
            self.seconds * 1000.0 / self.rpcs as f64
        }
    }

    /// Whether the workload's payload fits under the threshold with room
    /// for the headers (1 KB). The payload of an I/O workload is its size;
    /// READDIR's is the client's readdir buffer, 64 KB
    /// (`NFS_INIT_DTSIZE`, fs/nfs/dir.c), whatever the directory holds,
    /// so READDIR needs a Reply chunk at thresholds up to 64 KB; the other
    /// metadata workloads have none. Judged from the workload's name;
    /// whether the RPCs really went inline is what the row measures.
    pub fn payload_fits(&self) -> bool {
        let kb = match io_kb(&self.workload) {
            Some(kb) => kb,
            None if self.workload == "readdir" => READDIR_BUFFER_KB,
            None => return true,
        };
        (kb + 1) * 1024 <= u64::from(self.threshold)
    }
}

/// The client's readdir buffer, KB (`NFS_INIT_DTSIZE` in fs/nfs/dir.c).
pub const READDIR_BUFFER_KB: u64 = 64;

/// The size of an I/O workload (`read-8k`: 8), `None` for metadata.
pub fn io_kb(workload: &str) -> Option<u64> {
    let (op, size) = workload.split_once('-')?;
    if op != "read" && op != "write" {
        return None;
    }
    size.strip_suffix('k')?.parse().ok()
}

fn pct(a: u64, b: u64) -> f64 {
    ratio(a * 100, b)
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The column names of the table and the CSV, and what each holds.
pub const COLUMNS: &[(&str, &str)] = &[
    ("workload", "the workload (N operations)"),
    ("config", "the configuration"),
    ("thr", "the client's inline threshold, min(send, receive), from its tracepoint"),
    ("RI", "Remote Invalidation as the client applied it"),
    ("RPCs", "RPCs sent (mountstats)"),
    ("no chunk", "share of RPCs marshalled without any chunk (rpcrdma:xprtrdma_marshal)"),
    ("R/W/Reply seg", "segments of Read chunks / Write chunks / Reply chunks (mountstats counts each registered segment)"),
    ("RDMA READ", "RDMA READ operations / KB they moved (capture, BTH 12 and RETH)"),
    ("RDMA WRITE", "RDMA WRITE operations / KB they moved (capture, BTH 6, 10, 11 and RETH)"),
    ("SEND", "RC SEND packets without invalidation (BTH 0-5)"),
    ("SEND+Inv", "RC SEND_WITH_INVALIDATE packets (BTH 22, 23)"),
    ("LocalInv", "the client's local_inv_needed (mountstats)"),
    ("wire B/RPC", "RoCEv2 bytes on the wire (both directions) per RPC"),
    ("copied B/RPC", "bytes the client / the server copied per RPC between the RPC's pages and a send or receive buffer (client: mountstats pullup_copy_count + fixup_copy_count; server: rpcrdma:svcrdma_send_pullup)"),
    ("RDMA ops/100 RPCs", "explicit RDMA READ+WRITE operations per 100 RPCs"),
    ("TCG ms/RPC", "wall time per RPC under TCG (emulation, not hardware)"),
];

fn kb(bytes: u64) -> String {
    format!("{:.0}", bytes as f64 / 1024.0)
}

fn size(bytes: u32) -> String {
    if bytes % 1024 == 0 {
        format!("{}K", bytes / 1024)
    } else {
        bytes.to_string()
    }
}

/// The cells of a row, in [`COLUMNS`] order.
fn cells(r: &Row) -> Vec<String> {
    vec![
        r.workload.clone(),
        r.config.clone(),
        size(r.threshold),
        if r.client_ri { "on" } else { "off" }.into(),
        r.rpcs.to_string(),
        format!("{:.1} %", r.no_chunk_pct()),
        format!("{}/{}/{}", r.read_chunks, r.write_chunks, r.reply_chunks),
        format!("{}/{}", r.wire.rdma_read_ops, kb(r.wire.rdma_read_bytes)),
        format!("{}/{}", r.wire.rdma_write_ops, kb(r.wire.rdma_write_bytes)),
        r.wire.send_packets.to_string(),
        r.wire.send_with_invalidate_packets.to_string(),
        r.local_inv.to_string(),
        format!("{:.0}", r.bytes_per_rpc()),
        format!("{:.0}/{:.0}", r.copied_per_rpc().0, r.copied_per_rpc().1),
        format!("{:.0}", r.rdma_ops_per_100()),
        format!("{:.0}", r.ms_per_rpc()),
    ]
}

/// The rows in table order: by workload (in the order first run), then by
/// configuration (in the order given).
pub fn rows(runs: &[Run]) -> Vec<Row> {
    let mut order: Vec<String> = Vec::new();
    for run in runs {
        for w in &run.workloads {
            if !order.contains(&w.client.workload) {
                order.push(w.client.workload.clone());
            }
        }
    }
    let mut out = Vec::new();
    for w in &order {
        for run in runs {
            for x in run.workloads.iter().filter(|x| &x.client.workload == w) {
                out.push(Row::new(run, x));
            }
        }
    }
    out
}

/// The Markdown table of `rows`.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut t = String::new();
    let names: Vec<&str> = COLUMNS.iter().map(|(n, _)| *n).collect();
    let _ = writeln!(t, "| {} |", names.join(" | "));
    let _ = writeln!(
        t,
        "|{}",
        COLUMNS
            .iter()
            .enumerate()
            .map(|(i, _)| if i < 2 { " --- |" } else { " ---: |" })
            .collect::<String>()
    );
    for r in rows {
        let _ = writeln!(t, "| {} |", cells(r).join(" | "));
    }
    t
}

/// The CSV of `rows`: raw numbers, one column each.
pub fn csv(rows: &[Row]) -> String {
    let mut t = String::from(
        "workload,config,threshold,client_ri,n,rpcs,marshalled,no_chunk,read_chunks,write_chunks,\
         reply_chunks,rdma_read_ops,rdma_read_bytes,rdma_write_ops,rdma_write_bytes,send_packets,\
         send_with_invalidate_packets,local_inv_needed,wire_packets,wire_bytes,tcg_seconds,\
         client_copy_bytes,server_copy_bytes\n",
    );
    for r in rows {
        let w = &r.wire;
        let _ = writeln!(
            t,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{},{}",
            r.workload,
            r.config,
            r.threshold,
            u8::from(r.client_ri),
            r.n,
            r.rpcs,
            r.marshalled,
            r.no_chunk,
            r.read_chunks,
            r.write_chunks,
            r.reply_chunks,
            w.rdma_read_ops,
            w.rdma_read_bytes,
            w.rdma_write_ops,
            w.rdma_write_bytes,
            w.send_packets,
            w.send_with_invalidate_packets,
            r.local_inv,
            w.packets,
            w.bytes,
            r.seconds,
            r.client_copy_bytes,
            r.server_copy_bytes
        );
    }
    t
}

/// One side's cells of the memory table: receive buffers per connection
/// (count x size = KiB), transport kmalloc KiB per connection, MemFree's
/// fall per connection, MRs per connection, connections per GiB.
fn memory_cells(m: &Memory) -> [String; 5] {
    let count = m.receive_buffers_per_connection();
    let octets = |s: &str| size(s.parse().unwrap_or(u32::MAX));
    // One size, or the sizes there are (a client keeps the buffer it posted
    // before the connection was established at the size it advertised).
    let sizes = if m.receive_buffers.sizes.len() > 1 {
        let all: Vec<String> = m.receive_buffers.sizes.keys().map(|s| octets(s)).collect();
        all.join("/")
    } else {
        size(u32::try_from(m.receive_buffers.size).unwrap_or(u32::MAX))
    };
    [
        format!(
            "{} x {sizes} = {}",
            if count.fract() == 0.0 {
                format!("{count:.0}")
            } else {
                format!("{count:.2}")
            },
            kb(m.receive_bytes_per_connection())
        ),
        kb(m.kmalloc_bytes_per_connection()),
        format!("{:.0}", m.memfree_drop_per_connection() as f64 / 1024.0),
        format!("{:.1}", m.mrs_per_connection()),
        m.connections_per_gib().to_string(),
    ]
}

/// The memory table: per configuration and side, what the transport
/// keeps per connection (the memory phase of each run).
pub fn memory_table(runs: &[Run]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "| config | thr | side | receive buffers (count x size = KiB) | transport kmalloc KiB | MemFree drop KiB | MRs | connections per GiB |"
    );
    let _ = writeln!(t, "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |");
    for run in runs {
        for (side, m) in [
            ("client", &run.client_memory),
            ("server", &run.server_memory),
        ] {
            let _ = writeln!(
                t,
                "| {} | {} | {side} | {} |",
                run.config.name,
                size(run.threshold()),
                memory_cells(m).join(" | ")
            );
        }
    }
    t
}

/// The memory figures as CSV (`memory.csv`): one row per configuration
/// and side, bytes per connection.
pub fn memory_csv(runs: &[Run]) -> String {
    let mut t = String::from(
        "config,threshold,side,connections,receive_buffers,receive_buffer_size,receive_bytes,\
         rpcrdma_kmalloc_bytes,rdma_stack_kmalloc_bytes,kmalloc_bytes,memfree_drop_bytes,mrs,\
         connections_per_gib\n",
    );
    for run in runs {
        for (side, m) in [
            ("client", &run.client_memory),
            ("server", &run.server_memory),
        ] {
            let c = m.connections.max(1);
            let _ = writeln!(
                t,
                "{},{},{side},{},{:.2},{},{},{},{},{},{},{:.1},{}",
                run.config.name,
                run.threshold(),
                m.connections,
                m.receive_buffers_per_connection(),
                m.receive_buffers.size,
                m.receive_bytes_per_connection(),
                m.rpcrdma_kmalloc_bytes / c,
                m.rdma_stack_kmalloc_bytes / c,
                m.kmalloc_bytes_per_connection(),
                m.memfree_drop_per_connection(),
                m.mrs_per_connection(),
                m.connections_per_gib()
            );
        }
    }
    t
}

/// Where one target stands.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Target {
    /// The target, as the issue states it.
    pub target: String,
    /// `met`, `missed` or `not measured`.
    pub status: &'static str,
    /// The evidence, one line.
    pub detail: String,
}

fn judged(target: &str, bad: &[String], what: usize, none: &str) -> Target {
    let (status, detail) = if what == 0 {
        ("not measured", none.to_string())
    } else if bad.is_empty() {
        ("met", format!("all {what} hold"))
    } else {
        (
            "missed",
            format!("{} of {what}: {}", bad.len(), bad.join("; ")),
        )
    };
    Target {
        target: target.into(),
        status,
        detail,
    }
}

/// The RPC-level targets, judged on `rows`.
pub fn targets(rows: &[Row]) -> Vec<Target> {
    let mut out = Vec::new();
    // 1. No chunk for RPCs that fit: every workload whose payload fits
    // at 64 KB, and the I/O workloads whose payload fits at any threshold.
    let fit: Vec<&Row> = rows
        .iter()
        .filter(|r| r.payload_fits() && (r.threshold >= 65536 || io_kb(&r.workload).is_some()))
        .collect();
    let bad: Vec<String> = fit
        .iter()
        .filter(|r| r.no_chunk != r.marshalled)
        .map(|r| format!("{} {} {:.1} %", r.workload, r.config, r.no_chunk_pct()))
        .collect();
    out.push(judged(
        "100 % of RPCs with no chunk where call and reply fit (every workload at 64 KB but READDIR, whose 64 KB reply buffer does not fit; I/O of less than the threshold minus 1 KB at any)",
        &bad,
        fit.len(),
        "no run at 64 KB and no I/O that fits",
    ));
    // 2. No explicit RDMA at 64 KB.
    let at64: Vec<&Row> = rows
        .iter()
        .filter(|r| r.threshold >= 65536 && r.payload_fits())
        .collect();
    let bad: Vec<String> = at64
        .iter()
        .filter(|r| r.wire.rdma_ops() != 0)
        .map(|r| format!("{} {} {} ops", r.workload, r.config, r.wire.rdma_ops()))
        .collect();
    out.push(judged(
        "0 explicit RDMA operations per RPC at 64 KB for every workload whose RPCs fit",
        &bad,
        at64.len(),
        "no run at 64 KB",
    ));
    // 3. No LocalInv for chunked READs with Remote Invalidation.
    let reads: Vec<&Row> = rows
        .iter()
        .filter(|r| r.client_ri && r.workload.starts_with("read-") && r.write_chunks > 0)
        .collect();
    let bad: Vec<String> = reads
        .iter()
        .filter(|r| r.local_inv != 0)
        .map(|r| {
            format!(
                "{} {} {:.2} per chunked READ",
                r.workload,
                r.config,
                ratio(r.local_inv, r.write_chunks)
            )
        })
        .collect();
    out.push(judged(
        "0 client LocalInv per chunked READ with Remote Invalidation negotiated",
        &bad,
        reads.len(),
        "no chunked READ with Remote Invalidation negotiated",
    ));
    out
}

/// The mixed-fleet configurations (a server configured for 64 KB, a client
/// advertising 4 KB) and the 4 KB configuration each is held to.
pub const MIXED_FLEET: [(&str, &str); 2] = [("stock-64k-4k", "stock-4k"), ("cm-64k-4k", "cm-4k")];

/// The memory target of memory that follows the negotiation: a server
/// configured for 64 KB keeps, for a client advertising 4 KB, at most 1.1
/// times what a 4 KB server keeps per connection (transport kmalloc), and
/// at least 700 such connections fit in a GiB.
pub fn memory_target(runs: &[Run]) -> Target {
    let server = |name: &str| {
        runs.iter()
            .find(|r| r.config.name == name)
            .map(|r| &r.server_memory)
    };
    let mut bad = Vec::new();
    let mut what = 0;
    for (mixed, base) in MIXED_FLEET {
        let (Some(m), Some(b)) = (server(mixed), server(base)) else {
            continue;
        };
        what += 1;
        let ratio = m.kmalloc_bytes_per_connection() as f64
            / b.kmalloc_bytes_per_connection().max(1) as f64;
        if ratio > 1.1 || m.connections_per_gib() < 700 {
            bad.push(format!(
                "{mixed}: {:.2} x {base}, {} per GiB",
                ratio,
                m.connections_per_gib()
            ));
        }
    }
    judged(
        "server memory per connection, 64 KB server and 4 KB client, at most 1.1 x a 4 KB server's, at least 700 per GiB",
        &bad,
        what,
        "no mixed-fleet configuration beside its 4 KB one",
    )
}

/// One side's connect timing, as `rpcrdma-cm probe --count --json` prints it.
#[derive(Deserialize, Debug, Clone)]
pub struct ProbeTiming {
    /// Every connect's connect + disconnect time, microseconds.
    pub total_samples_us: Vec<f64>,
}

/// The connect cost: module loaded against not loaded.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ConnectCost {
    /// Connects timed per side.
    pub connects: usize,
    /// Median connect + disconnect, rpcrdma_cm not loaded, microseconds.
    pub unloaded_median_us: f64,
    /// The same, loaded.
    pub loaded_median_us: f64,
    /// Means, not loaded and loaded.
    pub unloaded_mean_us: f64,
    /// See `unloaded_mean_us`.
    pub loaded_mean_us: f64,
    /// loaded / not loaded, medians.
    pub ratio_median: f64,
    /// loaded / not loaded, means.
    pub ratio_mean: f64,
    /// The module's own time in its callbacks, when the run kept it.
    pub callbacks: Option<CallbackCost>,
}

/// One line of `rpcrdma_cm/callback_times`: a callback's calls and the
/// time spent in them (nanoseconds), summed over files by [`add`](Self::add).
#[derive(Serialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct CallbackTime {
    /// The role and the callback, as the module names them
    /// (`responder prepare_accept`).
    pub name: String,
    /// Calls timed.
    pub calls: u64,
    /// Their total time.
    pub total_ns: u64,
    /// The longest call.
    pub max_ns: u64,
}

impl CallbackTime {
    /// Fold another file's line of the same callback in; an error if a sum
    /// overflows.
    fn add(&mut self, other: &CallbackTime) -> Result<(), String> {
        let overflow = || format!("{}: the sum overflows", self.name);
        self.calls = self.calls.checked_add(other.calls).ok_or_else(overflow)?;
        self.total_ns = self
            .total_ns
            .checked_add(other.total_ns)
            .ok_or_else(overflow)?;
        self.max_ns = self.max_ns.max(other.max_ns);
        Ok(())
    }

    /// Mean time per call, nanoseconds (0 without calls).
    pub fn mean_ns(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.total_ns as f64 / self.calls as f64
        }
    }
}

/// Parse the text of `rpcrdma_cm/callback_times`: lines of
/// `ROLE CALLBACK calls=N total_ns=N max_ns=N`, each key once, each
/// callback once.
pub fn parse_callback_times(text: &str) -> Result<Vec<CallbackTime>, String> {
    let mut out: Vec<CallbackTime> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let [role, callback, counters @ ..] = words.as_slice() else {
            return Err(format!(
                "'{line}': want ROLE CALLBACK calls=N total_ns=N max_ns=N"
            ));
        };
        let mut values: [Option<u64>; 3] = [None; 3];
        for w in counters {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| format!("'{line}': '{w}' is not KEY=VALUE"))?;
            let slot = match k {
                "calls" => &mut values[0],
                "total_ns" => &mut values[1],
                "max_ns" => &mut values[2],
                _ => return Err(format!("'{line}': unknown key '{k}'")),
            };
            if slot.is_some() {
                return Err(format!("'{line}': '{k}' twice"));
            }
            *slot = Some(
                v.parse()
                    .map_err(|_| format!("'{line}': '{v}' is not a count"))?,
            );
        }
        let [Some(calls), Some(total_ns), Some(max_ns)] = values else {
            return Err(format!("'{line}': want calls, total_ns and max_ns"));
        };
        let name = format!("{role} {callback}");
        if out.iter().any(|t| t.name == name) {
            return Err(format!("'{line}': {name} twice"));
        }
        out.push(CallbackTime {
            name,
            calls,
            total_ns,
            max_ns,
        });
    }
    Ok(out)
}

/// The server's callbacks, one connection's worth of each.
pub const RESPONDER_CALLBACKS: [&str; 3] = [
    "responder prepare_accept",
    "responder accepted",
    "responder closed",
];

/// The module's time in the responder's callbacks over the connect-cost
/// run's loaded rounds.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct CallbackCost {
    /// Connections (calls of `prepare_accept`).
    pub connections: u64,
    /// The responder callbacks' total time per connection, nanoseconds.
    pub per_connection_ns: f64,
    /// Each responder callback, summed over the rounds.
    pub callbacks: Vec<CallbackTime>,
}

impl CallbackCost {
    /// From the `callback_times` files of the rounds, each with its name
    /// for the errors. An error names the file where a callback is
    /// missing, or where a connection was prepared but not closed (or
    /// accepted more often than prepared).
    pub fn new(files: &[(String, Vec<CallbackTime>)]) -> Result<Self, String> {
        let mut callbacks: Vec<CallbackTime> = RESPONDER_CALLBACKS
            .iter()
            .map(|n| CallbackTime {
                name: (*n).to_string(),
                ..Default::default()
            })
            .collect();
        for (file, lines) in files {
            let mut calls = [0u64; 3];
            for (sum, c) in callbacks.iter_mut().zip(calls.iter_mut()) {
                let t = lines
                    .iter()
                    .find(|t| t.name == sum.name)
                    .ok_or_else(|| format!("{file}: no line for {}", sum.name))?;
                sum.add(t).map_err(|e| format!("{file}: {e}"))?;
                *c = t.calls;
            }
            // An accept that failed is prepared and closed, not accepted.
            let [prepared, accepted, closed] = calls;
            if closed != prepared || accepted > prepared {
                return Err(format!(
                    "{file}: {prepared} prepared, {accepted} accepted, {closed} closed: \
                     want as many closed as prepared, no more accepted"
                ));
            }
        }
        let connections = callbacks[0].calls;
        if connections == 0 {
            return Err("no connection was timed".into());
        }
        let total = callbacks.iter().map(|c| c.total_ns as f64).sum::<f64>();
        Ok(CallbackCost {
            connections,
            per_connection_ns: total / connections as f64,
            callbacks,
        })
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl ConnectCost {
    /// From the pooled samples of both sides; `None` if a side has none.
    pub fn new(mut unloaded: Vec<f64>, mut loaded: Vec<f64>) -> Option<Self> {
        if unloaded.is_empty() || loaded.is_empty() || unloaded.len() != loaded.len() {
            return None;
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (um, lm) = (mean(&unloaded), mean(&loaded));
        let (ud, ld) = (median(&mut unloaded), median(&mut loaded));
        Some(ConnectCost {
            connects: unloaded.len(),
            unloaded_median_us: ud,
            loaded_median_us: ld,
            unloaded_mean_us: um,
            loaded_mean_us: lm,
            ratio_median: ld / ud,
            ratio_mean: lm / um,
            callbacks: None,
        })
    }

    /// The target and where it stands (on the medians).
    pub fn target(&self) -> Target {
        Target {
            target: "module connect-cost ratio (loaded / not loaded) at most 1.01".into(),
            status: if self.ratio_median <= 1.01 {
                "met"
            } else {
                "missed"
            },
            detail: format!(
                "median {:.3} ({:.0} / {:.0} us), mean {:.3} ({:.0} / {:.0} us), {} connects each",
                self.ratio_median,
                self.loaded_median_us,
                self.unloaded_median_us,
                self.ratio_mean,
                self.loaded_mean_us,
                self.unloaded_mean_us,
                self.connects
            ),
        }
    }
}

/// The whole Markdown report.
pub fn markdown(
    runs: &[Run],
    rows: &[Row],
    targets: &[Target],
    cost: Option<&ConnectCost>,
) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "Configurations (what each transport applied, from its tracepoint):\n"
    );
    let _ = writeln!(
        t,
        "| config | what | client send/recv, RI | server send/recv, RI |"
    );
    let _ = writeln!(t, "| --- | --- | --- | --- |");
    for run in runs {
        let side = |n: &crate::model::Negotiated| {
            format!(
                "{}/{}, {}",
                match n.send_threshold {
                    0 => "unlimited".to_string(),
                    t => size(t),
                },
                size(n.recv_threshold),
                if n.remote_invalidation { "on" } else { "off" }
            )
        };
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} |",
            run.config.name,
            run.config.description,
            side(&run.client),
            side(&run.server)
        );
    }
    let n = runs.first().map_or(0, |r| r.config.n);
    let _ = writeln!(
        t,
        "\nPer workload (N = {n} operations each) and configuration:\n"
    );
    t.push_str(&markdown_table(rows));
    let _ = writeln!(t, "\nColumns:\n");
    for (name, what) in COLUMNS {
        let _ = writeln!(t, "- {name}: {what}");
    }
    let conns = runs.first().map_or(0, |r| r.client_memory.connections);
    let _ = writeln!(
        t,
        "\nMemory per connection ({conns} connections (nconnect) opened after the workloads; \
         what each side's transport allocated with kmalloc and kept, from the kernel's \
         kmem:kmalloc/kfree trace; MemFree's fall, after cache drops, as the coarse cross-check; \
         memory regions from `rdma resource show`):\n"
    );
    t.push_str(&memory_table(runs));
    let _ = writeln!(
        t,
        "\nConnections per GiB: 1 GiB over the transport kmalloc per connection \
         (receive buffers and the rest of rpcrdma's and the RDMA stack's allocations; \
         the provider's queues, vmalloc'd by rxe and in device memory on hardware, are not in it)."
    );
    if let Some(c) = cost {
        let _ = writeln!(
            t,
            "\nConnect cost ({} connects + disconnects per side from a userspace requester, \
             one guest, alternating rounds; microseconds under TCG):\n",
            c.connects
        );
        let _ = writeln!(t, "| rpcrdma_cm | median | mean |");
        let _ = writeln!(t, "| --- | ---: | ---: |");
        let _ = writeln!(
            t,
            "| not loaded | {:.0} | {:.0} |",
            c.unloaded_median_us, c.unloaded_mean_us
        );
        let _ = writeln!(
            t,
            "| loaded | {:.0} | {:.0} |",
            c.loaded_median_us, c.loaded_mean_us
        );
        let _ = writeln!(t, "| ratio | {:.3} | {:.3} |", c.ratio_median, c.ratio_mean);
        if let Some(cb) = &c.callbacks {
            let _ = writeln!(
                t,
                "\nThe module's callbacks on the server (debugfs `callback_times`, \
                 {} connections of the loaded rounds; nanoseconds under TCG): \
                 {:.0} ns per connection, {:.2} % of the loaded median connect + disconnect.\n",
                cb.connections,
                cb.per_connection_ns,
                100.0 * cb.per_connection_ns / (c.loaded_median_us * 1000.0)
            );
            let _ = writeln!(t, "| callback | calls | mean ns | max ns |");
            let _ = writeln!(t, "| --- | ---: | ---: | ---: |");
            for x in &cb.callbacks {
                let _ = writeln!(
                    t,
                    "| {} | {} | {:.0} | {} |",
                    x.name,
                    x.calls,
                    x.mean_ns(),
                    x.max_ns
                );
            }
        }
    }
    let _ = writeln!(t, "\nTargets:\n");
    for g in targets {
        let _ = writeln!(t, "- [{}] {}: {}", g.status, g.target, g.detail);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClientRecord, Config, Negotiated, ReceiveBuffers, ServerCopies};

    fn memory(count: u64, size: u64, kmalloc: u64) -> Memory {
        Memory {
            connections: 4,
            receive_buffers: ReceiveBuffers {
                count,
                size,
                bytes: count * size,
                sizes: Default::default(),
            },
            rpcrdma_kmalloc_bytes: kmalloc,
            rdma_stack_kmalloc_bytes: 4096,
            memfree_drop_bytes: 8 << 20,
            rdma_resources_before: [("mr".to_string(), 2)].into(),
            rdma_resources_after: [("mr".to_string(), 10)].into(),
            ..Default::default()
        }
    }

    fn run(name: &str, thr: u32, ri: bool, recs: Vec<(ClientRecord, WireCounts)>) -> Run {
        let neg = Negotiated {
            send_threshold: thr,
            recv_threshold: thr,
            remote_invalidation: ri,
        };
        Run {
            config: Config {
                name: name.into(),
                description: format!("{name} config"),
                server_params: String::new(),
                client_params: String::new(),
                n: 10,
            },
            client: neg,
            server: neg,
            workloads: recs
                .into_iter()
                .map(|(client, wire)| Workload {
                    server_copies: ServerCopies {
                        pullups: client.rpcs,
                        bytes: client.rpcs * 100,
                    },
                    client,
                    wire,
                })
                .collect(),
            client_memory: memory(4 * 65, u64::from(thr), 4 * 65 * u64::from(thr) + 4096),
            server_memory: memory(4 * 144, u64::from(thr), 4 * 144 * u64::from(thr) + 8192),
        }
    }

    fn rec(w: &str, rpcs: u64, no_chunk: u64, reply: u64, write: u64, inv: u64) -> ClientRecord {
        ClientRecord {
            workload: w.into(),
            n: 10,
            seconds: 1.0,
            rpcs,
            read_chunks: 0,
            write_chunks: write,
            reply_chunks: reply,
            local_inv_needed: inv,
            pullup_copy_bytes: rpcs * 10,
            fixup_copy_bytes: write * 8192,
            marshalled: rpcs,
            marshalled_no_chunk: no_chunk,
            trace_lost: 0,
            ops: Default::default(),
        }
    }

    fn wire(writes: u64, bytes: u64) -> WireCounts {
        WireCounts {
            packets: 10,
            bytes,
            send_packets: 20,
            rdma_write_ops: writes,
            rdma_write_bytes: writes * 8192,
            ..Default::default()
        }
    }

    fn sample() -> Vec<Run> {
        vec![
            run(
                "stock-4k",
                4096,
                false,
                vec![
                    (rec("create", 20, 10, 10, 0, 0), wire(10, 4000)),
                    (rec("read-8k", 10, 0, 0, 10, 10), wire(10, 100000)),
                ],
            ),
            run(
                "cm-64k",
                65536,
                true,
                vec![
                    (rec("create", 20, 20, 0, 0, 0), wire(0, 2000)),
                    (rec("read-8k", 10, 10, 0, 0, 0), wire(0, 90000)),
                ],
            ),
        ]
    }

    #[test]
    fn rows_by_workload_then_config() {
        let r = rows(&sample());
        let order: Vec<(&str, &str)> = r
            .iter()
            .map(|r| (r.workload.as_str(), r.config.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("create", "stock-4k"),
                ("create", "cm-64k"),
                ("read-8k", "stock-4k"),
                ("read-8k", "cm-64k")
            ]
        );
        assert_eq!(r[0].no_chunk_pct(), 50.0);
        assert_eq!(r[0].rdma_ops_per_100(), 50.0);
        assert_eq!(r[0].bytes_per_rpc(), 200.0);
        assert_eq!(r[0].ms_per_rpc(), 50.0);
    }

    #[test]
    fn table_and_csv_golden() {
        let r = rows(&sample());
        let t = markdown_table(&r[..1]);
        assert_eq!(
            t,
            "| workload | config | thr | RI | RPCs | no chunk | R/W/Reply seg | RDMA READ | RDMA WRITE | SEND | SEND+Inv | LocalInv | wire B/RPC | copied B/RPC | RDMA ops/100 RPCs | TCG ms/RPC |\n\
             | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n\
             | create | stock-4k | 4K | off | 20 | 50.0 % | 0/0/10 | 0/0 | 10/80 | 20 | 0 | 0 | 200 | 10/100 | 50 | 50 |\n"
        );
        let c = csv(&r[1..2]);
        assert_eq!(
            c.lines().nth(1).unwrap(),
            "create,cm-64k,65536,1,10,20,20,20,0,0,0,0,0,0,0,20,0,0,10,2000,1.000,200,2000"
        );
        assert_eq!(c.lines().count(), 2);
    }

    #[test]
    fn memory_per_connection_table_and_csv() {
        let runs = sample();
        let t = memory_table(&runs);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 2 + 2 * runs.len());
        // 144 receive buffers of 64 KB per connection on the server: 9 MiB;
        // plus 2 KiB of other kmalloc per connection and 1 KiB of the stack.
        assert_eq!(
            lines[5],
            "| cm-64k | 64K | server | 144 x 64K = 9216 | 9219 | 2048 | 2.0 | 113 |"
        );
        assert_eq!(
            lines[2],
            "| stock-4k | 4K | client | 65 x 4K = 260 | 262 | 2048 | 2.0 | 4002 |"
        );
        let c = memory_csv(&runs);
        assert_eq!(
            c.lines().nth(4).unwrap(),
            "cm-64k,65536,server,4,144.00,65536,9437184,9439232,1024,9440256,2097152,2.0,113"
        );
        assert_eq!(c.lines().count(), 1 + 2 * runs.len());
        // 258 buffers over 4 transports: the mean and the bytes agree.
        let mut m = runs[1].server_memory.clone();
        m.receive_buffers.count = 258;
        m.receive_buffers.bytes = 258 * 65536;
        assert_eq!(memory_cells(&m)[0], "64.50 x 64K = 4128");
        // Buffers of two sizes: both named, the bytes as they are.
        m.receive_buffers.count = 8;
        m.receive_buffers.bytes = 65536 + 7 * 1024;
        m.receive_buffers.sizes = [("1024".to_string(), 7), ("65536".to_string(), 1)].into();
        assert_eq!(memory_cells(&m)[0], "2 x 1K/64K = 18");
    }

    #[test]
    fn memory_target_met_missed_and_not_measured() {
        // Without a mixed-fleet configuration: not measured.
        assert_eq!(memory_target(&sample()).status, "not measured");
        // A 64 KB server whose buffers followed a 4 KB client: the same
        // memory as the 4 KB server, 4 x 144 x 4 KB + 8 KB over 4
        // connections, with 1 KiB of the stack = 579 KiB, 1811 per GiB.
        let base = run("stock-4k", 4096, false, vec![]);
        let mut mixed = run("stock-64k-4k", 4096, false, vec![]);
        let t = memory_target(&[base.clone(), mixed.clone()]);
        assert_eq!((t.status, t.detail.as_str()), ("met", "all 1 hold"));
        // Buffers of 64 KB for it: 16 times, 113 per GiB: missed.
        mixed.server_memory = memory(4 * 144, 65536, 4 * 144 * 65536 + 8192);
        let t = memory_target(&[base.clone(), mixed.clone()]);
        assert_eq!(t.status, "missed");
        assert_eq!(
            t.detail,
            "1 of 1: stock-64k-4k: 15.92 x stock-4k, 113 per GiB"
        );
        // 1.1 x is the limit: 10 % more passes, 11 % does not.
        let at = |extra: u64| {
            let mut m = mixed.clone();
            let b = 4 * 144 * 4096 + 8192;
            m.server_memory = memory(4 * 144, 4096, b + b * extra / 100);
            memory_target(&[base.clone(), m]).status
        };
        assert_eq!((at(10), at(11)), ("met", "missed"));
    }

    #[test]
    fn targets_met_and_missed() {
        let r = rows(&sample());
        let t = targets(&r);
        assert_eq!(t.len(), 3);
        assert_eq!((t[0].status, t[1].status), ("met", "met"));
        // No chunked READ with RI in the sample.
        assert_eq!(t[2].status, "not measured");
        // A chunk and an RDMA WRITE at 64 KB, LocalInv with RI.
        let mut runs = sample();
        runs[1].workloads[1].client = rec("read-8k", 10, 9, 0, 1, 1);
        runs[1].workloads[1].wire = wire(1, 90000);
        let t = targets(&rows(&runs));
        assert_eq!(t[0].status, "missed");
        assert_eq!(t[0].detail, "1 of 2: read-8k cm-64k 90.0 %");
        assert_eq!(t[1].detail, "1 of 2: read-8k cm-64k 1 ops");
        assert_eq!(t[2].detail, "1 of 1: read-8k cm-64k 1.00 per chunked READ");
    }

    #[test]
    fn payload_fit_and_io_sizes() {
        assert_eq!(io_kb("read-60k"), Some(60));
        assert_eq!(io_kb("write-1k"), Some(1));
        assert_eq!(io_kb("create"), None);
        assert_eq!(io_kb("rename-2k"), None);
        let mut r = rows(&sample()).remove(2); // read-8k at 4K
        assert!(!r.payload_fits());
        r.threshold = 9216;
        assert!(r.payload_fits());
        r.threshold = 9215;
        assert!(!r.payload_fits());
        r.workload = "readdir".into();
        assert!(!r.payload_fits());
        r.threshold = 66560;
        assert!(r.payload_fits());
        r.workload = "create".into();
        r.threshold = 1024;
        assert!(r.payload_fits());
    }

    #[test]
    fn callback_times_parse_and_sum() {
        let round = |n: u64, ns: u64| {
            let text = format!(
                "requester prepare_connect calls=0 total_ns=0 max_ns=0\n\
                 requester closed calls=5 total_ns=50 max_ns=20\n\
                 responder prepare_accept calls={n} total_ns={ns} max_ns={ns}\n\
                 responder accepted calls={n} total_ns={} max_ns=7\n\
                 responder closed calls={n} total_ns={} max_ns=9\n",
                ns / 2,
                ns / 4
            );
            parse_callback_times(&text).unwrap()
        };
        let files = [
            ("a".to_string(), round(2, 400)),
            ("b".to_string(), round(2, 800)),
        ];
        let c = CallbackCost::new(&files).unwrap();
        assert_eq!(c.connections, 4);
        assert_eq!(c.callbacks[0].total_ns, 1200);
        assert_eq!(c.callbacks[0].max_ns, 800);
        assert_eq!(c.callbacks[1].total_ns, 600);
        assert_eq!(c.callbacks[2].max_ns, 9);
        // (1200 + 600 + 300) / 4; the requester's closed is not counted.
        assert_eq!(c.per_connection_ns, 525.0);
        assert_eq!(c.callbacks[1].mean_ns(), 150.0);

        // A failed accept: prepared and closed, not accepted.
        let mut failed_accept = round(2, 400);
        failed_accept[3].calls = 1;
        assert!(CallbackCost::new(&[("f".into(), failed_accept)]).is_ok());
        // A connection not closed, or accepted twice, names its file.
        let mut unclosed = round(2, 400);
        unclosed[4].calls = 1;
        let e = CallbackCost::new(&[("r3.txt".into(), unclosed)]).unwrap_err();
        assert!(
            e.starts_with("r3.txt: 2 prepared, 2 accepted, 1 closed"),
            "{e}"
        );
        let mut twice = round(2, 400);
        twice[3].calls = 3;
        twice[4].calls = 2;
        assert!(CallbackCost::new(&[("t".into(), twice)]).is_err());
        let missing =
            parse_callback_times("responder prepare_accept calls=1 total_ns=1 max_ns=1").unwrap();
        let e = CallbackCost::new(&[("m.txt".into(), missing)]).unwrap_err();
        assert_eq!(e, "m.txt: no line for responder accepted");
        assert!(CallbackCost::new(&[("z".into(), round(0, 0))]).is_err());
        assert!(CallbackCost::new(&[]).is_err());
        // Sums that overflow are an error, not a panic or a wrap.
        let big = |ns: &str| {
            parse_callback_times(&format!(
                "responder prepare_accept calls=1 total_ns={ns} max_ns=1\n\
                 responder accepted calls=1 total_ns=1 max_ns=1\n\
                 responder closed calls=1 total_ns=1 max_ns=1\n"
            ))
            .unwrap()
        };
        let e = CallbackCost::new(&[
            ("x".into(), big("18446744073709551615")),
            ("y".into(), big("1")),
        ])
        .unwrap_err();
        assert_eq!(e, "y: responder prepare_accept: the sum overflows");

        // Malformed text.
        for bad in [
            "responder closed calls=x total_ns=1 max_ns=1",
            "responder closed calls=1 total_ns=1",
            "responder closed calls=1 total_ns=1 max_ns=1 extra=2",
            "responder closed calls=1 calls=2 calls=3",
            "responder closed calls",
            "closed",
            "responder closed calls=1 total_ns=1 max_ns=1\nresponder closed calls=1 total_ns=1 max_ns=1",
        ] {
            assert!(parse_callback_times(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn connect_cost_ratio() {
        let c = ConnectCost::new(vec![100.0, 200.0, 300.0], vec![101.0, 202.0, 303.0]).unwrap();
        assert_eq!(c.connects, 3);
        assert_eq!(c.unloaded_median_us, 200.0);
        assert!((c.ratio_median - 1.01).abs() < 1e-12);
        assert_eq!(c.target().status, "met");
        let c = ConnectCost::new(vec![100.0, 100.0], vec![110.0, 120.0]).unwrap();
        assert_eq!(c.target().status, "missed");
        assert!((c.ratio_median - 1.15).abs() < 1e-12);
        assert_eq!(ConnectCost::new(vec![], vec![]), None);
        assert_eq!(ConnectCost::new(vec![1.0], vec![1.0, 2.0]), None);
    }
}
