//! The output folder of a scenario run, made ready before the run and closed after it.
//!
//! Before anything is simulated the folder is checked (a path that is a file, or a folder
//! that cannot be written, is an error naming `--out` or `output.dir`), the files an earlier
//! run wrote there are removed (the fixed result names below and capture files), so a second
//! run never leaves the first run's files beside its own, and a marker file says the folder
//! is being written. A run that ends removes the marker; one that is interrupted (SIGINT, a
//! crash) leaves it, so what it left (a VCD cut short, a partial capture) says so.

use std::path::{Path, PathBuf};

/// The marker a run in progress leaves in its folder.
pub const INCOMPLETE: &str = "INCOMPLETE";

/// Files a scenario run writes into its folder under fixed names (results and plots).
pub const RESULT_FILES: [&str; 9] = [
    "summary.json",
    "flows.csv",
    "links.csv",
    "queues.csv",
    "pauses.csv",
    "slowdown_by_size.svg",
    "fct_cdf.svg",
    "queue_hottest_port.svg",
    "pauses_over_time.svg",
];

/// Makes `dir` ready for a run of `scenario`: `named` is where the folder came from
/// (`--out` or `output.dir`), for the errors. Returns the files of an earlier run it removed.
pub fn prepare(dir: &Path, named: &str, scenario: &str) -> Result<Vec<PathBuf>, String> {
    let bad = |problem: String| format!("{scenario}: {named}: {}: {problem}", dir.display());
    if dir.exists() && !dir.is_dir() {
        return Err(bad("is a file, not a folder".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| bad(format!("cannot create the folder: {e}")))?;
    let marker = dir.join(INCOMPLETE);
    std::fs::write(
        &marker,
        format!(
            "t2sim is writing this folder for {scenario}. A run that ends removes this file; \
             if it is here, the run did not end (interrupted or failed) and the files beside it are partial.\n"
        ),
    )
    .map_err(|e| bad(format!("cannot write in the folder: {e}")))?;
    let mut removed = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| bad(format!("cannot list: {e}")))?;
    let mut stale: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            RESULT_FILES.contains(&name) || name.ends_with(".pcapng")
        })
        .collect();
    stale.sort();
    for p in stale {
        std::fs::remove_file(&p).map_err(|e| {
            bad(format!(
                "cannot remove {} of an earlier run: {e}",
                p.display()
            ))
        })?;
        removed.push(p);
    }
    Ok(removed)
}

/// The run ended and its files are written: the marker goes.
pub fn finish(dir: &Path) -> Result<(), String> {
    let marker = dir.join(INCOMPLETE);
    std::fs::remove_file(&marker).map_err(|e| format!("{}: {e}", marker.display()))
}

/// Makes `dir` ready for a comparison of `schemes` (`--out`): as [`prepare`], and each
/// scheme's subfolder cleared of an earlier run's results; a subfolder an earlier
/// comparison wrote for a scheme not compared now (a known scheme's name holding a
/// `summary.json`) is removed, so the folder shows this comparison only. Returns what it
/// removed.
pub fn prepare_comparison(
    dir: &Path,
    schemes: &[String],
    scenario: &str,
) -> Result<Vec<PathBuf>, String> {
    let mut removed = prepare(dir, "--out", scenario)?;
    for name in crate::schemes::names() {
        let sub = dir.join(name);
        if schemes.iter().any(|s| s == name) {
            if sub.is_dir() {
                removed.extend(prepare(&sub, "--out", scenario)?);
                let _ = std::fs::remove_file(sub.join(INCOMPLETE));
            }
        } else if sub.join("summary.json").is_file() {
            std::fs::remove_dir_all(&sub).map_err(|e| {
                format!(
                    "{scenario}: --out: {}: cannot remove an earlier comparison's folder: {e}",
                    sub.display()
                )
            })?;
            removed.push(sub);
        }
    }
    Ok(removed)
}
