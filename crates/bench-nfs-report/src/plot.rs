// SPDX-License-Identifier: GPL-2.0

//! The plot: explicit RDMA operations per 100 RPCs by inline threshold,
//! one line per workload, as SVG (written here, no plotting library).
//! The lines join the runs with rpcrdma_cm on both ends, the first run of
//! each threshold; stock (no module on either end) is drawn as crosses.

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

/// The series to draw, from the runs and their rows.
pub fn series(runs: &[Run], rows: &[Row]) -> Vec<Series> {
    let mut plotted: Vec<&Run> = Vec::new();
    for run in runs.iter().filter(|r| !is_stock(r)) {
        if !plotted.iter().any(|p| p.threshold() == run.threshold()) {
            plotted.push(run);
        }
    }
    plotted.sort_by_key(|r| r.threshold());
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
        let point = (row.threshold, row.rdma_ops_per_100());
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

/// The SVG document.
pub fn svg(series: &[Series], title: &str) -> String {
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
        r#"<text transform="translate(22 {}) rotate(-90)" text-anchor="middle">explicit RDMA READ + WRITE operations per 100 RPCs</text>"#,
        (TOP + BOTTOM) / 2.0
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
        let doc = svg(&series, "a <title>");
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
