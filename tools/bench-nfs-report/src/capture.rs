// SPDX-License-Identifier: GPL-2.0

//! The server's capture, as tshark decoded it (`packets.tsv`: frame length,
//! UDP destination port, BTH opcode, RETH DMA length, payload in hex, one
//! packet a line), split into workloads at the client's markers and
//! counted by BTH opcode (InfiniBand Architecture Specification, 9.2).

use serde::Serialize;
use std::collections::BTreeMap;

/// The UDP port of the client's workload markers.
pub const MARKER_PORT: u16 = 47900;
/// The RoCEv2 UDP port.
pub const ROCEV2_PORT: u16 = 4791;
/// What every marker's payload begins with.
const MARKER_PREFIX: &str = "rpcrdma-bench ";

/// What one workload put on the wire (both directions, at the server).
#[derive(Serialize, Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WireCounts {
    /// RoCEv2 packets.
    pub packets: u64,
    /// Their frame lengths summed (Ethernet header to ICRC).
    pub bytes: u64,
    /// RC SEND packets without invalidation (opcodes 0-5).
    pub send_packets: u64,
    /// RC SEND_LAST/SEND_ONLY_WITH_INVALIDATE packets (22, 23).
    pub send_with_invalidate_packets: u64,
    /// RDMA WRITE operations (opcodes 6 FIRST, 10 ONLY, 11 ONLY with
    /// immediate: one per operation).
    pub rdma_write_ops: u64,
    /// Bytes the RDMA WRITEs moved (their RETH DMA lengths).
    pub rdma_write_bytes: u64,
    /// RDMA READ requests (opcode 12).
    pub rdma_read_ops: u64,
    /// Bytes the RDMA READs asked for (their RETH DMA lengths).
    pub rdma_read_bytes: u64,
}

impl WireCounts {
    /// RDMA READ and WRITE operations together.
    pub fn rdma_ops(&self) -> u64 {
        self.rdma_read_ops + self.rdma_write_ops
    }

    /// Count one RoCEv2 packet. Fails on a packet whose BTH opcode tshark
    /// did not decode, or an RDMA WRITE or READ request without its RETH
    /// DMA length: a count that skipped it could read "0 RDMA operations"
    /// on packets it never saw.
    fn add(&mut self, len: u64, opcode: Option<u8>, dma_len: Option<u64>) -> Result<(), String> {
        let opcode = opcode.ok_or("a RoCEv2 packet without a decoded BTH opcode")?;
        let reth = || dma_len.ok_or(format!("opcode {opcode} without a decoded RETH DMA length"));
        match opcode {
            0..=5 => self.send_packets += 1,
            22 | 23 => self.send_with_invalidate_packets += 1,
            6 | 10 | 11 => {
                self.rdma_write_ops += 1;
                self.rdma_write_bytes += reth()?;
            }
            12 => {
                self.rdma_read_ops += 1;
                self.rdma_read_bytes += reth()?;
            }
            _ => {}
        }
        self.packets += 1;
        self.bytes += len;
        Ok(())
    }
}

/// Decode hex (tshark's `data.data`) to text; `None` if it is not hex or
/// not UTF-8.
fn hex_text(hex: &str) -> Option<String> {
    let hex = hex.replace(':', "");
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// The first of tshark's comma-separated values of a field, parsed.
fn first<T: std::str::FromStr>(field: &str) -> Option<T> {
    field.split(',').next()?.trim().parse().ok()
}

/// Split `packets.tsv` into workloads at the markers and count each.
/// Packets outside any begin/end pair (mount, unmount, set-up between
/// workloads) are not counted. Fails, saying where, on a line that is not
/// a packet, a marker out of order, or a workload begun and not ended.
pub fn split(tsv: &str) -> Result<BTreeMap<String, WireCounts>, String> {
    let mut out: BTreeMap<String, WireCounts> = BTreeMap::new();
    let mut current: Option<String> = None;
    for (i, line) in tsv.lines().enumerate() {
        let at = || format!("packets.tsv line {}", i + 1);
        let f: Vec<&str> = line.split('\t').collect();
        let len: u64 = f
            .first()
            .and_then(|s| first(s))
            .ok_or_else(|| format!("{}: no frame length in '{line}'", at()))?;
        let port: Option<u16> = f.get(1).and_then(|s| first(s));
        if port == Some(MARKER_PORT) {
            let text = f
                .get(4)
                .and_then(|h| hex_text(h))
                .ok_or_else(|| format!("{}: a marker without a readable payload", at()))?;
            let rest = text
                .strip_prefix(MARKER_PREFIX)
                .ok_or_else(|| format!("{}: not a marker: '{text}'", at()))?;
            match (rest.split_once(' '), &current) {
                (Some(("begin", w)), None) => {
                    if out.contains_key(w) {
                        return Err(format!("{}: workload {w} begins twice", at()));
                    }
                    out.insert(w.to_string(), WireCounts::default());
                    current = Some(w.to_string());
                }
                (Some(("end", w)), Some(c)) if c == w => current = None,
                _ => {
                    return Err(format!(
                        "{}: marker '{rest}' while in {}",
                        at(),
                        current.as_deref().unwrap_or("no workload")
                    ))
                }
            }
            continue;
        }
        if port != Some(ROCEV2_PORT) {
            return Err(format!("{}: neither RoCEv2 nor a marker: '{line}'", at()));
        }
        if let Some(w) = &current {
            let opcode = f.get(2).and_then(|s| first(s));
            let dma_len = f.get(3).and_then(|s| first(s));
            if let Some(c) = out.get_mut(w) {
                c.add(len, opcode, dma_len)
                    .map_err(|e| format!("{}: {e}: '{line}'", at()))?;
            }
        }
    }
    if let Some(w) = current {
        return Err(format!("packets.tsv: workload {w} has no end marker"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(what: &str) -> String {
        let hex: String = format!("rpcrdma-bench {what}")
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("70\t47900\t\t\t{hex}")
    }

    #[test]
    fn counts_by_opcode_between_markers() {
        let tsv = [
            "120\t4791\t4\t\t".to_string(), // before any workload: not counted
            marker("begin read-8k"),
            "300\t4791\t4\t\t".into(),       // SEND ONLY (the call)
            "1100\t4791\t10\t8192\t".into(), // RDMA WRITE ONLY
            "1100\t4791\t6\t60000\t".into(), // RDMA WRITE FIRST
            "1100\t4791\t7\t\t".into(),      // MIDDLE: same operation
            "200\t4791\t23\t\t".into(),      // SEND ONLY WITH INVALIDATE
            "90\t4791\t12\t4096\t".into(),   // RDMA READ REQUEST
            "1100\t4791\t16\t\t".into(),     // READ RESPONSE ONLY
            "60\t4791\t17\t\t".into(),       // ACK
            "100\t4791\t0,1\t\t".into(),     // SEND FIRST (first value)
            marker("end read-8k"),
            "120\t4791\t4\t\t".into(), // after: not counted
            marker("begin create"),
            marker("end create"),
        ]
        .join("\n");
        let m = split(&tsv).unwrap();
        assert_eq!(
            m["read-8k"],
            WireCounts {
                packets: 9,
                bytes: 300 + 3 * 1100 + 200 + 90 + 1100 + 60 + 100,
                send_packets: 2,
                send_with_invalidate_packets: 1,
                rdma_write_ops: 2,
                rdma_write_bytes: 68192,
                rdma_read_ops: 1,
                rdma_read_bytes: 4096,
            }
        );
        assert_eq!(m["read-8k"].rdma_ops(), 3);
        assert_eq!(m["create"], WireCounts::default());
    }

    #[test]
    fn broken_captures_are_errors() {
        let begin = marker("begin create");
        assert!(split(&begin).unwrap_err().contains("no end marker"));
        let two = [begin.clone(), begin.clone()].join("\n");
        assert!(split(&two)
            .unwrap_err()
            .contains("marker 'begin create' while in create"));
        let stray = marker("end create");
        assert!(split(&stray).unwrap_err().contains("while in no workload"));
        assert!(split("x\t4791\t4\t\t")
            .unwrap_err()
            .contains("no frame length"));
        assert!(split("60\t53\t\t\t")
            .unwrap_err()
            .contains("neither RoCEv2"));
        assert!(split("60\t47900\t\t\tzz")
            .unwrap_err()
            .contains("readable payload"));
        let again = [
            marker("begin create"),
            marker("end create"),
            marker("begin create"),
        ]
        .join("\n");
        assert!(split(&again).unwrap_err().contains("begins twice"));
        let in_create = |packet: &str| {
            [
                marker("begin create"),
                packet.to_string(),
                marker("end create"),
            ]
            .join("\n")
        };
        assert!(split(&in_create("300\t4791\t\t\t"))
            .unwrap_err()
            .contains("line 2: a RoCEv2 packet without a decoded BTH opcode"));
        assert!(split(&in_create("1100\t4791\t10\t\t"))
            .unwrap_err()
            .contains("opcode 10 without a decoded RETH DMA length"));
        assert!(split(&in_create("90\t4791\t12\t\t"))
            .unwrap_err()
            .contains("opcode 12 without"));
    }

    #[test]
    fn hex_payloads() {
        assert_eq!(hex_text("6869").as_deref(), Some("hi"));
        assert_eq!(hex_text("68:69").as_deref(), Some("hi"));
        assert_eq!(hex_text("686"), None);
        assert_eq!(hex_text("ff"), None);
    }
}
