// SPDX-License-Identifier: GPL-2.0

//! `rpcrdma-cm status`: the module's connections and counters, read from
//! `<debugfs>/rpcrdma_cm/{connections,stats}` (the format is written by
//! `rust/debugfs_render.rs`: one line of `key=value` pairs per connection,
//! one line `ROLE key=value...` of counters per role).

use crate::error::{Context, Exit, Failure};
use crate::output::{emit, json};
use clap::Args;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the module's debugfs directory is when debugfs is mounted in the
/// usual place.
pub(crate) const DEFAULT_DIR: &str = "/sys/kernel/debug/rpcrdma_cm";

/// Arguments of `status`.
#[derive(Args, Debug)]
#[command(after_help = concat!(
    "Example:\n",
    "  $ rpcrdma-cm status\n",
    "  ROLE       PEER                 CONFORMANCE  PEER SEND/RECV  ADVERTISED       NEGOTIATED  RI\n",
    "  requester  192.168.100.1:20049  ok           4096/4096       4096/4096 ri=1   4096/4096   no\n\n",
    "  ROLE       CONNECTIONS  CONFORMING  ABSENT  ZEROED  SHORT  BAD_MAGIC ...\n",
    "  requester  1            1           0       0       0      0 ...\n\n",
    "Needs root (debugfs). Exit status: 0 success, 1 the module is not loaded,\n",
    "debugfs is not mounted or its files cannot be read, 2 usage error."
))]
pub(crate) struct StatusArgs {
    /// The module's debugfs directory.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DIR)]
    pub debugfs: PathBuf,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Sizes one side advertised or negotiated.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sizes {
    /// Send size or threshold, bytes.
    pub send: u32,
    /// Receive size or threshold, bytes.
    pub recv: u32,
    /// Remote Invalidation.
    pub remote_invalidation: bool,
}

/// One line of `connections`.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct Connection {
    /// `requester` (client) or `responder` (server).
    pub role: String,
    /// This side's address.
    pub local: String,
    /// The peer's address.
    pub peer: String,
    /// The first 8 octets of the peer's private data, hex.
    pub peer_pdata: String,
    /// The length of the peer's private data.
    pub peer_pdata_len: u32,
    /// `pending`, `ok` or the non-conformance's name.
    pub peer_conformance: String,
    /// What the peer advertised, if it conformed.
    pub peer_advertised: Option<Sizes>,
    /// Reserved flag bits the peer set, if it conformed.
    pub peer_reserved_flags: Option<u8>,
    /// What this side advertised; `None` if it sent no private data.
    pub advertised: Option<Sizes>,
    /// This side's limits: send, receive bytes.
    pub local_send: u32,
    /// This side's receive limit, bytes.
    pub local_recv: u32,
    /// The outcome, once known.
    pub negotiated: Option<Sizes>,
}

/// One line of `stats`.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct RoleCounters {
    /// `requester` or `responder`.
    pub role: String,
    /// The counters in the order debugfs prints them.
    pub counters: BTreeMap<String, u64>,
    /// Their order in debugfs, for the table.
    #[serde(skip)]
    pub order: Vec<String>,
}

/// Everything `status` shows.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    /// The debugfs directory read.
    pub debugfs: String,
    /// Live connections.
    pub connections: Vec<Connection>,
    /// Counters per role.
    pub stats: Vec<RoleCounters>,
}

/// `key=value` pairs of one line.
struct Pairs<'a> {
    /// The line, for messages.
    line: &'a str,
    /// The pairs in order.
    map: BTreeMap<&'a str, &'a str>,
}

impl<'a> Pairs<'a> {
    /// Split `line` into pairs; a word without `=` is an error.
    fn new(line: &'a str) -> Result<Self, String> {
        let mut map = BTreeMap::new();
        for word in line.split_whitespace() {
            let (k, v) = word
                .split_once('=')
                .ok_or_else(|| format!("'{word}' is not key=value"))?;
            map.insert(k, v);
        }
        Ok(Pairs { line, map })
    }

    /// Whether `key` is present.
    fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// The value of `key`; its absence is an error.
    fn str(&self, key: &str) -> Result<&'a str, String> {
        self.map
            .get(key)
            .copied()
            .ok_or_else(|| format!("no {key}= in '{}'", self.line))
    }

    /// The value of `key` as a number (decimal, or hex with `0x`).
    fn num<T: std::str::FromStr>(&self, key: &str) -> Result<T, String> {
        let v = self.str(key)?;
        let v_dec = v.strip_prefix("0x");
        match v_dec {
            Some(h) => u64::from_str_radix(h, 16)
                .ok()
                .and_then(|n| n.to_string().parse().ok()),
            None => v.parse().ok(),
        }
        .ok_or_else(|| format!("{key}={v} is not a number"))
    }

    /// The value of `key` as a flag, 0 or 1.
    fn flag(&self, key: &str) -> Result<bool, String> {
        match self.str(key)? {
            "0" => Ok(false),
            "1" => Ok(true),
            v => Err(format!("{key}={v} is not 0 or 1")),
        }
    }

    /// Send and receive sizes and the RI flag from three keys.
    fn sizes(&self, send: &str, recv: &str, ri: &str) -> Result<Sizes, String> {
        Ok(Sizes {
            send: self.num(send)?,
            recv: self.num(recv)?,
            remote_invalidation: self.flag(ri)?,
        })
    }
}

/// Parse one line of `connections`.
fn parse_connection(line: &str) -> Result<Connection, String> {
    let p = Pairs::new(line)?;
    let conformance = p.str("peer_conformance")?;
    let peer_ok = conformance == "ok";
    Ok(Connection {
        role: p.str("role")?.to_string(),
        local: p.str("local")?.to_string(),
        peer: p.str("peer")?.to_string(),
        peer_pdata: p.str("peer_pdata")?.to_string(),
        peer_pdata_len: p.num("peer_pdata_len")?,
        peer_conformance: conformance.to_string(),
        peer_advertised: if peer_ok {
            Some(p.sizes("peer_send", "peer_recv", "peer_remote_inv")?)
        } else {
            None
        },
        peer_reserved_flags: if peer_ok {
            Some(p.num("peer_reserved")?)
        } else {
            None
        },
        advertised: if p.str("advertised").ok() == Some("none") {
            None
        } else {
            Some(p.sizes(
                "advertised_send",
                "advertised_recv",
                "advertised_remote_inv",
            )?)
        },
        local_send: p.num("local_send")?,
        local_recv: p.num("local_recv")?,
        negotiated: if p.has("negotiated") {
            None
        } else {
            Some(p.sizes("send_threshold", "recv_threshold", "remote_inv")?)
        },
    })
}

/// Parse one line of `stats`.
fn parse_stats(line: &str) -> Result<RoleCounters, String> {
    let (role, rest) = line
        .split_once(' ')
        .ok_or_else(|| format!("'{line}' has no counters"))?;
    let p = Pairs::new(rest)?;
    let mut counters = BTreeMap::new();
    let mut order = Vec::new();
    for word in rest.split_whitespace() {
        let key = word.split_once('=').map_or(word, |(k, _)| k);
        counters.insert(key.to_string(), p.num(key)?);
        order.push(key.to_string());
    }
    Ok(RoleCounters {
        role: role.to_string(),
        counters,
        order,
    })
}

/// Parse the two files' contents.
pub(crate) fn parse(dir: &Path, connections: &str, stats: &str) -> Result<Status, String> {
    let lines = |text: &str, file: &str, f: &dyn Fn(&str) -> Result<(), String>| {
        for (i, line) in text.lines().enumerate() {
            if !line.trim().is_empty() {
                f(line).map_err(|e| format!("{file} line {}: {e}", i + 1))?;
            }
        }
        Ok::<(), String>(())
    };
    let conns = std::cell::RefCell::new(Vec::new());
    lines(connections, "connections", &|l| {
        conns.borrow_mut().push(parse_connection(l)?);
        Ok(())
    })?;
    let roles = std::cell::RefCell::new(Vec::new());
    lines(stats, "stats", &|l| {
        roles.borrow_mut().push(parse_stats(l)?);
        Ok(())
    })?;
    Ok(Status {
        debugfs: dir.display().to_string(),
        connections: conns.into_inner(),
        stats: roles.into_inner(),
    })
}

/// Why the debugfs directory cannot be read, in words an admin can act on.
pub(crate) fn diagnose(dir: &Path, module_loaded: bool, debugfs_mounted: bool) -> String {
    if !module_loaded {
        format!(
            "{} does not exist: the rpcrdma_cm module is not loaded (modprobe rpcrdma_cm)",
            dir.display()
        )
    } else if !debugfs_mounted {
        format!(
            "{} does not exist: debugfs is not mounted (mount -t debugfs none /sys/kernel/debug)",
            dir.display()
        )
    } else {
        format!(
            "{} does not exist although rpcrdma_cm is loaded and debugfs is mounted (--debugfs DIR?)",
            dir.display()
        )
    }
}

/// Whether debugfs is mounted anywhere, per /proc/mounts.
fn debugfs_mounted() -> bool {
    std::fs::read_to_string("/proc/mounts")
        .map(|m| {
            m.lines()
                .any(|l| l.split_whitespace().nth(2) == Some("debugfs"))
        })
        .unwrap_or(false)
}

/// Why `dir` cannot be used, given the error of looking it up (`None`: it
/// exists but is no directory). Only a missing directory is explained by
/// the module and debugfs; /sys/kernel/debug is mode 0700, so for anyone
/// but root the lookup fails with "permission denied" instead.
pub(crate) fn diagnose_lookup(
    dir: &Path,
    error: Option<&std::io::Error>,
    module_loaded: impl FnOnce() -> bool,
    debugfs_mounted: impl FnOnce() -> bool,
) -> String {
    match error {
        Some(e) if e.kind() == std::io::ErrorKind::PermissionDenied => format!(
            "cannot read {}: {e} (debugfs is readable by root only)",
            dir.display()
        ),
        Some(e) if e.kind() == std::io::ErrorKind::NotFound => {
            diagnose(dir, module_loaded(), debugfs_mounted())
        }
        Some(e) => format!("cannot read {}: {e}", dir.display()),
        None => format!("{} is not a directory", dir.display()),
    }
}

/// Read and parse the directory.
pub(crate) fn read(dir: &Path) -> Result<Status, Failure> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        r => {
            return Err(Failure::peer(diagnose_lookup(
                dir,
                r.as_ref().err(),
                || Path::new("/sys/module/rpcrdma_cm").exists(),
                debugfs_mounted,
            )))
        }
    }
    let file = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::PermissionDenied {
                " (debugfs is readable by root only)"
            } else {
                ""
            };
            Failure::peer(format!("cannot read {}: {e}{hint}", path.display()))
        })
    };
    let (c, s) = (file("connections")?, file("stats")?);
    parse(dir, &c, &s)
        .map_err(Failure::peer)
        .context(dir.display())
}

/// `send/recv` of `s`, or `-`.
fn sizes_cell(s: Option<Sizes>) -> String {
    s.map_or_else(|| "-".into(), |s| format!("{}/{}", s.send, s.recv))
}

/// Columns padded to the widest cell; the last column is not padded.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 < r.len() {
                line.push_str(&format!("{cell:<w$}  ", w = widths[c]));
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

impl Status {
    /// The text form: a table of connections and one of counters.
    pub fn render(&self) -> String {
        let mut rows = vec![[
            "ROLE",
            "PEER",
            "CONFORMANCE",
            "PEER SEND/RECV",
            "ADVERTISED",
            "NEGOTIATED",
            "RI",
        ]
        .map(String::from)
        .to_vec()];
        for c in &self.connections {
            rows.push(vec![
                c.role.clone(),
                c.peer.clone(),
                c.peer_conformance.clone(),
                sizes_cell(c.peer_advertised),
                c.advertised.map_or_else(
                    || "none".into(),
                    |a| {
                        format!(
                            "{}/{} ri={}",
                            a.send,
                            a.recv,
                            u8::from(a.remote_invalidation)
                        )
                    },
                ),
                sizes_cell(c.negotiated),
                c.negotiated.map_or_else(
                    || "-".into(),
                    |n| if n.remote_invalidation { "yes" } else { "no" }.into(),
                ),
            ]);
        }
        let mut out = if self.connections.is_empty() {
            "no connections\n".to_string()
        } else {
            table(&rows)
        };
        if let Some(first) = self.stats.first() {
            out.push('\n');
            let mut header = vec!["ROLE".to_string()];
            header.extend(first.order.iter().map(|k| k.to_uppercase()));
            let mut rows = vec![header];
            for r in &self.stats {
                let mut row = vec![r.role.clone()];
                row.extend(
                    first
                        .order
                        .iter()
                        .map(|k| r.counters.get(k).map_or_else(|| "-".into(), u64::to_string)),
                );
                rows.push(row);
            }
            out.push_str(&table(&rows));
        }
        out
    }
}

/// `rpcrdma-cm status`.
pub(crate) fn status_cmd(args: &StatusArgs, out: &mut dyn Write) -> Result<Exit, Failure> {
    let s = read(&args.debugfs)?;
    emit(out, &if args.json { json(&s) } else { s.render() });
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::cli;

    /// A fixture directory under tools/rpcrdma-cm/testdata.
    fn fixture(name: &str) -> String {
        format!("{}/testdata/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn table_golden() {
        let (exit, out, err) = cli(&["status", "--debugfs", &fixture("debugfs-mount")]);
        assert_eq!(exit, Exit::Ok, "{err}");
        assert_eq!(
            out,
            "\
ROLE       PEER                        CONFORMANCE  PEER SEND/RECV  ADVERTISED        NEGOTIATED  RI
requester  192.168.100.1:20049         ok           4096/4096       4096/4096 ri=1    4096/4096   no
responder  [fd00:0:0:0:0:0:0:2]:40123  bad_magic    -               none              1024/1024   no
requester  192.168.100.1:20049         pending      -               65536/16384 ri=1  -           -

ROLE       CONNECTIONS  CONFORMING  ABSENT  ZEROED  SHORT  BAD_MAGIC  UNKNOWN_VERSION  RESERVED_FLAGS  REMOTE_INV  PRIVATE_DATA_OFF
requester  2            1           0       0       0      0          0                0               0           0
responder  1            0           0       0       0      1          0                0               0           1
"
        );
    }

    #[test]
    fn json_golden_fields() {
        let (exit, out, _) = cli(&["status", "--json", "--debugfs", &fixture("debugfs-mount")]);
        assert_eq!(exit, Exit::Ok);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let c = &v["connections"];
        assert_eq!(c.as_array().unwrap().len(), 3);
        assert_eq!(c[0]["role"], "requester");
        assert_eq!(c[0]["peer"], "192.168.100.1:20049");
        assert_eq!(c[0]["local"], "192.168.100.2:33187");
        assert_eq!(c[0]["peer_pdata"], "f6ab0e1801000303");
        assert_eq!(c[0]["peer_advertised"]["send"], 4096);
        assert_eq!(c[0]["peer_advertised"]["remote_invalidation"], false);
        assert_eq!(c[0]["peer_reserved_flags"], 0);
        assert_eq!(c[0]["advertised"]["remote_invalidation"], true);
        assert_eq!(c[0]["negotiated"]["send"], 4096);
        assert_eq!(c[1]["peer_pdata_len"], 56);
        assert_eq!(c[1]["peer_conformance"], "bad_magic");
        assert!(c[1]["peer_advertised"].is_null());
        assert!(c[1]["advertised"].is_null());
        assert_eq!(c[1]["negotiated"]["recv"], 1024);
        assert_eq!(c[2]["peer_conformance"], "pending");
        assert!(c[2]["negotiated"].is_null());
        assert_eq!(c[2]["advertised"]["send"], 65536);
        assert_eq!(v["stats"][1]["role"], "responder");
        assert_eq!(v["stats"][1]["counters"]["bad_magic"], 1);
        assert_eq!(v["stats"][1]["counters"]["private_data_off"], 1);
        assert_eq!(v["stats"][0]["counters"]["connections"], 2);
    }

    #[test]
    fn no_connections() {
        let (exit, out, _) = cli(&["status", "--debugfs", &fixture("debugfs-empty")]);
        assert_eq!(exit, Exit::Ok);
        assert!(out.starts_with("no connections\n\nROLE "), "{out}");
    }

    #[test]
    fn missing_directory_says_why() {
        let (exit, out, err) = cli(&["status", "--debugfs", "/nonexistent/rpcrdma_cm"]);
        assert_eq!(exit, Exit::Peer);
        assert!(out.is_empty());
        assert!(
            err.starts_with("/nonexistent/rpcrdma_cm does not exist: "),
            "{err}"
        );
        let d = Path::new("/sys/kernel/debug/rpcrdma_cm");
        assert_eq!(
            diagnose(d, false, true),
            "/sys/kernel/debug/rpcrdma_cm does not exist: the rpcrdma_cm module is not loaded (modprobe rpcrdma_cm)"
        );
        assert_eq!(
            diagnose(d, true, false),
            "/sys/kernel/debug/rpcrdma_cm does not exist: debugfs is not mounted (mount -t debugfs none /sys/kernel/debug)"
        );
        assert!(diagnose(d, true, true).contains("--debugfs DIR"));
    }

    #[test]
    fn unreadable_debugfs_is_not_reported_missing() {
        // /sys/kernel/debug is mode 0700: a user other than root gets
        // EACCES looking up the directory, whether or not it exists.
        let d = Path::new("/sys/kernel/debug/rpcrdma_cm");
        let denied = std::io::Error::from_raw_os_error(13);
        assert_eq!(
            diagnose_lookup(d, Some(&denied), || true, || true),
            "cannot read /sys/kernel/debug/rpcrdma_cm: Permission denied (os error 13) (debugfs is readable by root only)"
        );
        let missing = std::io::Error::from_raw_os_error(2);
        assert_eq!(
            diagnose_lookup(d, Some(&missing), || true, || false),
            diagnose(d, true, false)
        );
        assert_eq!(
            diagnose_lookup(d, None, || true, || true),
            "/sys/kernel/debug/rpcrdma_cm is not a directory"
        );
        // Running as root the tests cannot see EACCES from the file
        // system; a regular file stands in for "not a directory".
        let f = std::env::temp_dir().join(format!("rpcrdma-cm-notdir-{}", std::process::id()));
        std::fs::write(&f, "").unwrap();
        let (exit, _, err) = cli(&["status", "--debugfs", f.to_str().unwrap()]);
        std::fs::remove_file(&f).unwrap();
        assert_eq!(exit, Exit::Peer);
        assert!(err.ends_with(" is not a directory"), "{err}");
    }

    #[test]
    fn missing_file_and_garbage_are_errors() {
        let dir = std::env::temp_dir().join(format!("rpcrdma-cm-status-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.to_str().unwrap().to_string();
        std::fs::write(dir.join("connections"), "").unwrap();
        let (exit, _, err) = cli(&["status", "--debugfs", &d]);
        assert_eq!(exit, Exit::Peer);
        assert!(
            err.starts_with(&format!("cannot read {d}/stats: ")),
            "{err}"
        );
        std::fs::write(dir.join("stats"), "requester connections=x\n").unwrap();
        let (exit, _, err) = cli(&["status", "--debugfs", &d]);
        assert_eq!(exit, Exit::Peer);
        assert_eq!(
            err,
            format!("{d}: stats line 1: connections=x is not a number")
        );
        std::fs::write(dir.join("stats"), "").unwrap();
        std::fs::write(dir.join("connections"), "role=requester garbage\n").unwrap();
        let (_, _, err) = cli(&["status", "--debugfs", &d]);
        assert_eq!(
            err,
            format!("{d}: connections line 1: 'garbage' is not key=value")
        );
        std::fs::write(dir.join("connections"), "role=requester local=a peer=b\n").unwrap();
        let (_, _, err) = cli(&["status", "--debugfs", &d]);
        assert!(
            err.contains("connections line 1: no peer_conformance="),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
