// SPDX-License-Identifier: GPL-2.0

//! The plots, as SVG (written here, no plotting library): `plot.svg`,
//! explicit RDMA operations per 100 RPCs by inline threshold, one line per
//! workload; `plot-costs.svg`, what the thresholds cost beside what they
//! save: memory per connection of each side, bytes copied per RPC, and the
//! RDMA operations per RPC again. The lines join the runs with rpcrdma_cm
//! on both ends, the first run of each threshold; stock (no module on
//! either end) is drawn as crosses.

use crate::model::Run;
use crate::report::{io_kb, Row};
use std::fmt::Write as _;

const W: f64 = 980.0;
const H: f64 = 560.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = W - 250.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = H - 70.0;

/// Colours of the metadata workloads and of the I/O sizes.
const META_COLOURS: &[&str] = &["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e"];
const IO_COLOURS: &[&str] = &[
    "#a6cee3", "#1f78b4", "#b2df8a", "#33a02c", "#fb9a99", "#e31a1c", "#6a3d9a",
];

/// One workload's line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The workload.
    pub workload: String,
    /// (threshold, RDMA ops per 100 RPCs) of the module runs, by threshold.
    pub points: Vec<(u32, f64)>,
    /// The stock run's point, if any.
    pub stock: Option<(u32, f64)>,
}

/// A run is stock when rpcrdma_cm is loaded on neither end.
fn is_stock(run: &Run) -> bool {
    run.config.server_params.is_empty() && run.config.client_params.is_empty()
}

/// The series of RDMA operations per 100 RPCs, from the runs and their
/// rows.
pub fn series(runs: &[Run], rows: &[Row]) -> Vec<Series> {
    series_of(runs, rows, Row::rdma_ops_per_100)
}

/// The series of bytes copied per RPC (client and server together).
pub fn copy_series(runs: &[Run], rows: &[Row]) -> Vec<Series> {
    series_of(runs, rows, |r| {
        let (c, s) = r.copied_per_rpc();
        c + s
    })
}

/// The runs a line joins: with rpcrdma_cm, the first of each threshold,
/// by threshold.
fn plotted(runs: &[Run]) -> Vec<&Run> {
    let mut plotted: Vec<&Run> = Vec::new();
    for run in runs.iter().filter(|r| !is_stock(r)) {
        if !plotted.iter().any(|p| p.threshold() == run.threshold()) {
            plotted.push(run);
        }
    }
    plotted.sort_by_key(|r| r.threshold());
    plotted
}

/// The memory series: per side, receive buffers and all transport
/// kmalloc, KiB per connection.
pub fn memory_series(runs: &[Run]) -> Vec<Series> {
    type Value = fn(&Run) -> u64;
    let lines: [(&str, Value); 4] = [
        ("server, all kmalloc", |r| {
            r.server_memory.kmalloc_bytes_per_connection()
        }),
        ("server, receive buffers", |r| {
            r.server_memory.receive_bytes_per_connection()
        }),
        ("client, all kmalloc", |r| {
            r.client_memory.kmalloc_bytes_per_connection()
        }),
        ("client, receive buffers", |r| {
            r.client_memory.receive_bytes_per_connection()
        }),
    ];
    let on_lines = plotted(runs);
    let stock = runs.iter().find(|r| is_stock(r));
    lines
        .iter()
        .map(|(name, value)| {
            let kib = |r: &Run| value(r) as f64 / 1024.0;
            Series {
                workload: (*name).into(),
                points: on_lines.iter().map(|r| (r.threshold(), kib(r))).collect(),
                stock: stock.map(|r| (r.threshold(), kib(r))),
            }
        })
        .collect()
}

/// One value per row, as series by workload.
fn series_of(runs: &[Run], rows: &[Row], value: impl Fn(&Row) -> f64) -> Vec<Series> {
    let plotted = plotted(runs);
    let stock: Vec<&str> = runs
        .iter()
        .filter(|r| is_stock(r))
        .map(|r| r.config.name.as_str())
        .collect();
    let mut out: Vec<Series> = Vec::new();
    for row in rows {
        let i = match out.iter().position(|s| s.workload == row.workload) {
            Some(i) => i,
            None => {
                out.push(Series {
                    workload: row.workload.clone(),
                    points: Vec::new(),
                    stock: None,
                });
                out.len() - 1
            }
        };
        let point = (row.threshold, value(row));
        if stock.first() == Some(&row.config.as_str()) {
            out[i].stock = Some(point);
        } else if plotted.iter().any(|r| r.config.name == row.config) {
            out[i].points.push(point);
        }
    }
    for s in &mut out {
        s.points.sort_by_key(|p| p.0);
    }
    out
}

/// A round upper limit for the y axis, at least 10.
fn y_limit(max: f64) -> f64 {
    let mut step = 10.0;
    loop {
        for m in [1.0, 1.5, 2.0, 3.0, 5.0] {
            if max <= step * m {
                return step * m;
            }
        }
        step *= 10.0;
    }
}

fn style(workload: &str, index: usize) -> (&'static str, &'static str) {
    match io_kb(workload) {
        Some(kb) => {
            let i = [1, 2, 4, 8, 16, 32, 60]
                .iter()
                .position(|&k| k == kb)
                .unwrap_or(index);
            let dash = if workload.starts_with("read") {
                "6,3"
            } else {
                "2,3"
            };
            (IO_COLOURS[i % IO_COLOURS.len()], dash)
        }
        None => (META_COLOURS[index % META_COLOURS.len()], ""),
    }
}

/// The three panels of `plot-costs.svg`, one above the other: memory per
/// connection, bytes copied per RPC, RDMA operations per 100 RPCs.
pub fn costs_svg(runs: &[Run], rows: &[Row]) -> String {
    let n = runs.first().map_or(0, |r| r.config.n);
    let conns = runs.first().map_or(0, |r| r.client_memory.connections);
    let panels = [
        svg(
            &memory_series(runs),
            &format!("Cost: transport memory per connection ({conns} connections per run)"),
            "KiB per connection",
        ),
        svg(
            &copy_series(runs, rows),
            &format!("Cost: bytes copied per RPC, client + server (N = {n})"),
            "bytes copied per RPC",
        ),
        svg(
            &series(runs, rows),
            &format!("Saving: explicit RDMA READ + WRITE per 100 RPCs (N = {n})"),
            "RDMA operations per 100 RPCs",
        ),
    ];
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{0}" viewBox="0 0 {W} {0}">"#,
        H * 3.0
    );
    for (i, p) in panels.iter().enumerate() {
        // Each panel is a complete document; nested, it is placed by y.
        let _ = write!(
            s,
            "{}",
            p.replacen("<svg ", &format!("<svg y=\"{}\" ", H * i as f64), 1)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The SVG document: SERIES by threshold under TITLE, the y axis named
/// Y_LABEL.
pub fn svg(series: &[Series], title: &str, y_label: &str) -> String {
    let mut thresholds: Vec<u32> = series
        .iter()
        .flat_map(|s| s.points.iter().chain(s.stock.iter()).map(|p| p.0))
        .collect();
    thresholds.sort_unstable();
    thresholds.dedup();
    let (lo, hi) = match (thresholds.first(), thresholds.last()) {
        (Some(&a), Some(&b)) if a < b => (f64::from(a).log2(), f64::from(b).log2()),
        (Some(&a), _) => (f64::from(a).log2() - 1.0, f64::from(a).log2() + 1.0),
        _ => (10.0, 16.0),
    };
    let ymax = y_limit(
        series
            .iter()
            .flat_map(|s| s.points.iter().chain(s.stock.iter()).map(|p| p.1))
            .fold(0.0, f64::max),
    );
    let x = |t: u32| LEFT + 20.0 + (f64::from(t).log2() - lo) / (hi - lo) * (RIGHT - LEFT - 40.0);
    let y = |v: f64| BOTTOM - v / ymax * (BOTTOM - TOP);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="28" text-anchor="middle" font-size="16">{}</text>"#,
        (LEFT + RIGHT) / 2.0,
        escape(title)
    );
    // Axes, grid and ticks.
    for i in 0..=5 {
        let v = ymax * f64::from(i) / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{RIGHT}" y2="{0:.1}" stroke="#ddd"/><text x="{1}" y="{2:.1}" text-anchor="end">{3}</text>"##,
            y(v),
            LEFT - 6.0,
            y(v) + 4.0,
            v
        );
    }
    for &t in &thresholds {
        let _ = writeln!(
            s,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{BOTTOM}" stroke="#eee"/><text x="{0:.1}" y="{1}" text-anchor="middle">{2} KB</text>"##,
            x(t),
            BOTTOM + 18.0,
            t / 1024
        );
    }
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        RIGHT - LEFT,
        BOTTOM - TOP
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">negotiated inline threshold (client, min of send and receive; log scale)</text>"#,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 42.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(22 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (TOP + BOTTOM) / 2.0,
        escape(y_label)
    );
    // Lines, points, stock crosses and the legend.
    for (i, se) in series.iter().enumerate() {
        let (colour, dash) = style(&se.workload, i);
        let pts: Vec<String> = se
            .points
            .iter()
            .map(|&(t, v)| format!("{:.1},{:.1}", x(t), y(v)))
            .collect();
        if pts.len() > 1 {
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
                pts.join(" ")
            );
        }
        for &(t, v) in &se.points {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{colour}"/>"#,
                x(t),
                y(v)
            );
        }
        if let Some((t, v)) = se.stock {
            let (cx, cy) = (x(t) + 8.0, y(v));
            let _ = writeln!(
                s,
                r#"<path d="M{:.1},{:.1} l8,8 m0,-8 l-8,8" stroke="{colour}" stroke-width="2"/>"#,
                cx - 4.0,
                cy - 4.0
            );
        }
        let ly = TOP + 8.0 + 20.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{0}" y1="{1:.1}" x2="{2}" y2="{1:.1}" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{3}" y="{4:.1}">{5}</text>"#,
            RIGHT + 20.0,
            ly,
            RIGHT + 50.0,
            RIGHT + 58.0,
            ly + 4.0,
            escape(&se.workload)
        );
    }
    let ly = TOP + 8.0 + 20.0 * series.len() as f64 + 10.0;
    let _ = writeln!(
        s,
        r#"<path d="M{0},{1:.1} l8,8 m0,-8 l-8,8" stroke="black" stroke-width="2"/><text x="{2}" y="{3:.1}">stock (no module)</text>"#,
        RIGHT + 31.0,
        ly - 4.0,
        RIGHT + 58.0,
        ly + 4.0
    );
    s.push_str("</svg>\n");
    s
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_plot_has_three_panels_with_memory_by_side() {
        let mut runs = Vec::new();
        for (name, thr, stock) in [
            ("stock-4k", 4096u32, true),
            ("cm-1k", 1024, false),
            ("cm-64k", 65536, false),
        ] {
            let neg = crate::model::Negotiated {
                send_threshold: thr,
                recv_threshold: thr,
                remote_invalidation: false,
            };
            let mem = |count: u64| crate::model::Memory {
                connections: 4,
                receive_buffers: crate::model::ReceiveBuffers {
                    count,
                    size: thr.into(),
                    bytes: count * u64::from(thr),
                    sizes: Default::default(),
                },
                rpcrdma_kmalloc_bytes: count * u64::from(thr),
                ..Default::default()
            };
            runs.push(Run {
                config: crate::model::Config {
                    name: name.into(),
                    description: String::new(),
                    server_params: if stock { String::new() } else { "-".into() },
                    client_params: String::new(),
                    n: 5,
                },
                client: neg,
                server: neg,
                workloads: Vec::new(),
                client_memory: mem(4 * 65),
                server_memory: mem(4 * 144),
            });
        }
        let m = memory_series(&runs);
        assert_eq!(m.len(), 4);
        assert_eq!(m[1].workload, "server, receive buffers");
        // 144 buffers per connection: 144 KiB at 1 KB, 9216 KiB at 64 KB.
        assert_eq!(m[1].points, vec![(1024, 144.0), (65536, 9216.0)]);
        assert_eq!(m[1].stock, Some((4096, 576.0)));
        let doc = costs_svg(&runs, &[]);
        assert!(doc.starts_with("<svg ") && doc.ends_with("</svg>\n"));
        assert_eq!(doc.matches("<svg ").count(), 4);
        assert!(doc.contains(r#"<svg y="1120" "#));
        for label in [
            "KiB per connection",
            "bytes copied per RPC",
            ">client, receive buffers<",
        ] {
            assert!(doc.contains(label), "{label}");
        }
    }

    #[test]
    fn y_limits_are_round() {
        assert_eq!(y_limit(0.0), 10.0);
        assert_eq!(y_limit(10.0), 10.0);
        assert_eq!(y_limit(10.5), 15.0);
        assert_eq!(y_limit(258.0), 300.0);
        assert_eq!(y_limit(450.0), 500.0);
    }

    #[test]
    fn svg_has_a_line_per_workload_and_the_stock_crosses() {
        let series = vec![
            Series {
                workload: "read-8k".into(),
                points: vec![(4096, 100.0), (16384, 0.0), (65536, 0.0)],
                stock: Some((4096, 100.0)),
            },
            Series {
                workload: "create".into(),
                points: vec![(1024, 0.0), (65536, 0.0)],
                stock: Some((4096, 50.0)),
            },
        ];
        let doc = svg(&series, "a <title>", "ops");
        assert!(doc.starts_with("<svg "));
        assert!(doc.ends_with("</svg>\n"));
        assert_eq!(doc.matches("<polyline ").count(), 2);
        assert_eq!(doc.matches("<circle ").count(), 5);
        // Two stock crosses and the legend's.
        assert_eq!(doc.matches("l8,8 m0,-8 l-8,8").count(), 3);
        assert!(doc.contains("a &lt;title&gt;"));
        for label in ["1 KB", "4 KB", "16 KB", "64 KB", ">read-8k<", ">create<"] {
            assert!(doc.contains(label), "{label}");
        }
        // The highest point is on the top grid line (y axis 0..100).
        assert!(doc.contains(&format!("cy=\"{TOP:.1}\"")));
    }
}
