//! What a scenario run tells the user: the seed it ran, FCTs in cycles and ns, throughput per
//! switch port, the files it wrote and where, the VCD dump next to the results.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn t2sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(args)
        .output()
        .expect("t2sim runs")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t2sim-results-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SCENARIO: &str =
    "seed = 1\nduration_us = 20\n[topology]\nkind = \"single_chip\"\nhosts = 3\n\
    [workload]\n[[workload.flows]]\nsrc = 0\ndst = 2\nsize_bytes = 30000\n\
    [[workload.flows]]\nsrc = 1\ndst = 2\nsize_bytes = 20000\n\
    [[workload.flows]]\nsrc = 2\ndst = 0\nsize_bytes = 1000\n[output]\n";

fn write_scenario(dir: &Path, output: &str) -> PathBuf {
    let p = dir.join("s.toml");
    std::fs::write(&p, format!("{SCENARIO}{output}")).unwrap();
    p
}

fn stdout_of(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// ns of `cycles` at 1.5 GHz as `t2sim` writes them: to the picosecond, rounded to nearest.
fn ns(cycles: u64) -> String {
    let ps = (cycles as u128 * 1_000_000_000_000 + 750_000_000) / 1_500_000_000;
    format!("{}.{:03}", ps / 1000, ps % 1000)
}

#[test]
fn seed_fct_in_ns_throughput_and_the_files_written() {
    let dir = scratch("files");
    let file = write_scenario(&dir, "dir = \"out\"\nvcd = \"sw.vcd\"\n");
    let f = file.to_str().unwrap();
    let text = stdout_of(t2sim(&["run", "--scenario", f, "--seed", "42"]));
    assert!(
        text.contains(&format!("scenario         {f} (seed 42)\n")),
        "{text}"
    );
    let out = dir.join("out");
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"seed\": 42,"), "{summary}");
    // The run lists every file it wrote; the dump is in the output folder.
    for name in ["summary.json", "flows.csv", "links.csv"] {
        let line = format!("wrote            {}\n", out.join(name).display());
        assert!(text.contains(&line), "{text}");
        assert!(out.join(name).exists());
    }
    assert!(out.join("sw.vcd").exists() && out.join("sw.gtkw").exists());
    assert!(!dir.join("sw.vcd").exists());
    // flows.csv: FCT in cycles and in ns, the same time.
    let csv = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut fcts = Vec::new();
    for row in lines {
        let cells: Vec<&str> = row.split(',').collect();
        for (cycles, in_ns) in [
            ("start_cycle", "start_ns"),
            ("finish_cycle", "finish_ns"),
            ("fct_cycles", "fct_ns"),
            ("ideal_cycles", "ideal_ns"),
        ] {
            let c: u64 = cells[col(cycles)].parse().unwrap();
            assert_eq!(cells[col(in_ns)], ns(c), "{cycles} in {row}");
        }
        fcts.push(cells[col("fct_cycles")].parse::<u64>().unwrap());
    }
    assert_eq!(fcts.len(), 3);
    // The summary's FCT percentiles: nearest rank over the 3 flows (p50 the 2nd, p99 the 3rd).
    fcts.sort_unstable();
    let line = format!(
        "fct              p50 / p99 / max {} / {} / {} cycles = {} / {} / {} ns\n",
        fcts[1],
        fcts[2],
        fcts[2],
        ns(fcts[1]),
        ns(fcts[2]),
        ns(fcts[2])
    );
    assert!(text.contains(&line), "{text}");
    // Throughput per switch port, as links.csv has it (to 3 decimals).
    let links = std::fs::read_to_string(out.join("links.csv")).unwrap();
    let mut shown = 0;
    for row in links.lines().skip(1) {
        let c: Vec<&str> = row.split(',').collect();
        if !c[0].starts_with("switch") || c[2] == "0" {
            continue;
        }
        let gbps: f64 = c[4].parse().unwrap();
        let line = format!(
            "  {:<16} {:>9.3} Gb/s  {:>8} frames\n",
            format!("{}:{}", c[0], c[1]),
            gbps,
            c[2]
        );
        assert!(text.contains(&line), "{line:?} in {text}");
        shown += 1;
    }
    assert_eq!(shown, 3, "{links}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_moves_results_dump_and_captures_and_no_folder_is_said() {
    let dir = scratch("out");
    let file = write_scenario(&dir, "dir = \"out\"\nvcd = \"sw.vcd\"\npcap = \"host0\"\n");
    let f = file.to_str().unwrap();
    let elsewhere = dir.join("elsewhere");
    let e = elsewhere.to_str().unwrap();
    let text = stdout_of(t2sim(&["run", "--scenario", f, "--out", e]));
    for name in ["summary.json", "sw.vcd", "sw.gtkw", "host0-0.pcapng"] {
        assert!(elsewhere.join(name).exists(), "{name}: {text}");
    }
    assert!(!dir.join("out").exists());
    // Without a folder the run says that nothing was written, and how to write it.
    let bare = write_scenario(&dir, "");
    let text = stdout_of(t2sim(&["run", "--scenario", bare.to_str().unwrap()]));
    assert!(
        text.ends_with(
            "results          not written (no output.dir in the file; --out DIR writes them)\n"
        ),
        "{text}"
    );
    // --seed needs a scenario file.
    assert_eq!(t2sim(&["run", "--seed", "3"]).status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}
