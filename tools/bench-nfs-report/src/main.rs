// SPDX-License-Identifier: GPL-2.0

//! `bench-nfs-report`: the report of `make bench-nfs`.
//!
//! Reads the run directories scripts/bench/bench-nfs.sh leaves (one per
//! configuration: `config.json`, `client-results.jsonl`, `client-trace`,
//! `server-trace`, `packets.tsv`; and `connect-cost/` with the
//! `rpcrdma-cm probe --count --json` output of both sides; each
//! configuration's `server-copies` and `client-memory.json` /
//! `server-memory.json`) and writes `table.md`, `results.csv`,
//! `memory.csv`, `results.json`, `plot.svg` and `plot-costs.svg` into the
//! output directory; prints the Markdown report.
//!
//! Exit status: 0 success, every target met or not measured; 1 a run
//! directory could not be read (the report is still written from the
//! others, if any); 2 usage error; 3 the report was written and a target
//! was missed.

mod capture;
mod model;
mod plot;
mod report;

use clap::Parser;
use model::Run;
use report::{CallbackCost, ConnectCost, ProbeTiming};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The report of 'make bench-nfs': tables, CSV, JSON and a plot from its run directories.
#[derive(Parser, Debug)]
#[command(
    name = "bench-nfs-report",
    version,
    after_help = "Example:\n  $ bench-nfs-report --out build/bench build/bench/runs/stock-4k build/bench/runs/cm-64k\n\n\
                  Exit status: 0 success (every target met or not measured), 1 a run directory could not be \
                  read, 2 usage error, 3 a target was missed."
)]
struct Cli {
    /// Where table.md, results.csv, memory.csv, results.json, plot.svg and plot-costs.svg go.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The run directories, in the order the table lists them (a directory
    /// named connect-cost holds the connect timings).
    #[arg(required = true, value_name = "RUN_DIR")]
    runs: Vec<PathBuf>,
}

/// `results.json`.
#[derive(Serialize)]
struct Results<'a> {
    runs: &'a [Run],
    rows: &'a [report::Row],
    targets: &'a [report::Target],
    connect_cost: Option<&'a ConnectCost>,
}

/// The connect timings of both sides: every `unloaded-*.json` and
/// `loaded-*.json` of DIR, pooled; with the module's callback times when
/// DIR has the loaded rounds' `callbacks-*.txt` (`rpcrdma_cm/callback_times`,
/// one per `loaded-*.json`). A problem with the callback times alone is
/// returned beside the connect cost, which stands without them.
fn connect_cost(dir: &Path) -> Result<(ConnectCost, Option<String>), String> {
    let mut sides = (Vec::new(), Vec::new());
    let mut callback_files = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    for p in names {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with("callbacks-") && name.ends_with(".txt") {
            callback_files.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).map_err(|e| e.to_string()),
            ));
            continue;
        }
        let side = if name.starts_with("unloaded-") && name.ends_with(".json") {
            &mut sides.0
        } else if name.starts_with("loaded-") && name.ends_with(".json") {
            &mut sides.1
        } else {
            continue;
        };
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let t: ProbeTiming =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        side.extend(t.total_samples_us);
    }
    let mut cost = ConnectCost::new(sides.0, sides.1).ok_or_else(|| {
        format!(
            "{}: no connect timings, or not as many loaded as not loaded",
            dir.display()
        )
    })?;
    if callback_files.is_empty() {
        return Ok((cost, None));
    }
    let parsed: Result<Vec<_>, String> = callback_files
        .into_iter()
        .map(|(name, text)| {
            text.and_then(|t| report::parse_callback_times(&t))
                .map(|lines| (name.clone(), lines))
                .map_err(|e| format!("{name}: {e}"))
        })
        .collect();
    match parsed.and_then(|files| CallbackCost::new(&files)) {
        Ok(cb) if cb.connections as usize == cost.connects => {
            cost.callbacks = Some(cb);
            Ok((cost, None))
        }
        Ok(cb) => {
            let e = format!(
                "{}: callbacks-*.txt count {} connections, the loaded rounds {}: callback times left out",
                dir.display(),
                cb.connections,
                cost.connects
            );
            Ok((cost, Some(e)))
        }
        Err(e) => Ok((cost, Some(format!("{e}: callback times left out")))),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    let p = dir.join(name);
    std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut failed = false;
    let mut runs = Vec::new();
    let mut cost = None;
    for dir in &cli.runs {
        let result = if dir.file_name().is_some_and(|n| n == "connect-cost") {
            connect_cost(dir).map(|(c, callback_error)| {
                if let Some(e) = callback_error {
                    eprintln!("bench-nfs-report: {e}");
                    failed = true;
                }
                cost = Some(c)
            })
        } else {
            Run::load(dir).map(|r| runs.push(r))
        };
        if let Err(e) = result {
            eprintln!("bench-nfs-report: {e}");
            failed = true;
        }
    }
    if runs.is_empty() {
        eprintln!("bench-nfs-report: no configuration could be read: no report written");
        return ExitCode::from(1);
    }
    let rows = report::rows(&runs);
    let mut targets = report::targets(&rows);
    targets.push(report::memory_target(&runs));
    if let Some(c) = &cost {
        targets.push(c.target());
    }
    let table = report::markdown(&runs, &rows, &targets, cost.as_ref());
    let n = runs.first().map_or(0, |r| r.config.n);
    let doc = plot::svg(
        &plot::series(&runs, &rows),
        &format!("NFSv4.2 over RDMA (soft-RoCE): explicit RDMA operations per 100 RPCs, N = {n}"),
        "explicit RDMA READ + WRITE operations per 100 RPCs",
    );
    let costs = plot::costs_svg(&runs, &rows);
    let results = Results {
        runs: &runs,
        rows: &rows,
        targets: &targets,
        connect_cost: cost.as_ref(),
    };
    let json = serde_json::to_string_pretty(&results).unwrap_or_default() + "\n";
    let written = std::fs::create_dir_all(&cli.out)
        .map_err(|e| format!("{}: {e}", cli.out.display()))
        .and_then(|()| write(&cli.out, "table.md", &table))
        .and_then(|()| write(&cli.out, "results.csv", &report::csv(&rows)))
        .and_then(|()| write(&cli.out, "results.json", &json))
        .and_then(|()| write(&cli.out, "plot.svg", &doc))
        .and_then(|()| write(&cli.out, "plot-costs.svg", &costs))
        .and_then(|()| write(&cli.out, "memory.csv", &report::memory_csv(&runs)));
    if let Err(e) = written {
        eprintln!("bench-nfs-report: {e}");
        return ExitCode::from(1);
    }
    print!("{table}");
    exit_status(failed, &targets)
}

/// The exit status: 1 when a run directory could not be read, else 3 when
/// a target was missed, else 0.
fn exit_status(failed: bool, targets: &[report::Target]) -> ExitCode {
    if failed {
        ExitCode::from(1)
    } else if targets.iter().any(|t| t.status == "missed") {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn a_missed_target_exits_3() {
        let t = |status| report::Target {
            target: "t".into(),
            status,
            detail: String::new(),
        };
        assert_eq!(
            exit_status(false, &[t("met"), t("not measured")]),
            ExitCode::SUCCESS
        );
        assert_eq!(
            exit_status(false, &[t("met"), t("missed")]),
            ExitCode::from(3)
        );
        assert_eq!(exit_status(true, &[t("missed")]), ExitCode::from(1));
    }

    #[test]
    fn clap_definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn connect_cost_pools_the_rounds_of_each_side() {
        let dir = std::env::temp_dir().join(format!("bench-nfs-report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let side = |name: &str, samples: &str| {
            std::fs::write(
                dir.join(name),
                format!("{{\"count\": 2, \"total_samples_us\": [{samples}]}}"),
            )
            .unwrap();
        };
        side("unloaded-1.json", "100, 300");
        side("unloaded-2.json", "200, 400");
        side("loaded-1.json", "110, 290");
        side("loaded-2.json", "210, 390");
        std::fs::write(dir.join("loaded-1.err"), "").unwrap();
        let (c, _) = connect_cost(&dir).unwrap();
        assert_eq!(c.connects, 4);
        assert_eq!((c.unloaded_median_us, c.loaded_median_us), (250.0, 250.0));
        // A side with fewer connects than the other is an error.
        side("loaded-3.json", "1");
        let e = connect_cost(&dir).unwrap_err();
        assert!(e.ends_with("not as many loaded as not loaded"), "{e}");
        side("loaded-3.json", "not json");
        assert!(connect_cost(&dir).unwrap_err().contains("loaded-3.json"));
        std::fs::remove_file(dir.join("loaded-3.json")).unwrap();
        // The callback times of the loaded rounds, summed.
        assert_eq!(connect_cost(&dir).unwrap().0.callbacks, None);
        for (r, ns) in [(1, 100), (2, 300)] {
            std::fs::write(
                dir.join(format!("callbacks-{r}.txt")),
                format!(
                    "responder prepare_accept calls=2 total_ns={ns} max_ns={ns}\n\
                     responder accepted calls=2 total_ns=10 max_ns=5\n\
                     responder closed calls=2 total_ns=10 max_ns=5\n"
                ),
            )
            .unwrap();
        }
        let (c, e) = connect_cost(&dir).unwrap();
        assert_eq!(e, None);
        let cb = c.callbacks.unwrap();
        assert_eq!((cb.connections, cb.per_connection_ns), (4, 110.0));
        // A bad file: the connect cost stands, the error names the file.
        std::fs::write(dir.join("callbacks-3.txt"), "responder closed calls=oops").unwrap();
        let (c, e) = connect_cost(&dir).unwrap();
        assert_eq!(c.callbacks, None);
        assert!(e
            .unwrap()
            .contains("callbacks-3.txt: 'responder closed calls=oops'"));
        // A stale file: more connections than the loaded rounds timed.
        std::fs::write(
            dir.join("callbacks-3.txt"),
            "responder prepare_accept calls=2 total_ns=1 max_ns=1\n\
             responder accepted calls=2 total_ns=1 max_ns=1\n\
             responder closed calls=2 total_ns=1 max_ns=1\n",
        )
        .unwrap();
        let (c, e) = connect_cost(&dir).unwrap();
        assert_eq!(c.callbacks, None);
        assert!(e
            .unwrap()
            .contains("count 6 connections, the loaded rounds 4"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
