//! `t2sim compare` and `t2sim sweep`: every scheme sees the same flows, each row is exactly
//! the scheme's own run, files and plots are written, a sharded sweep merges into exactly
//! the unsharded one, and bad names and arguments get errors that name them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use t2sim::scenario::{ScenarioFile, ScenarioText};
use t2sim::study::compare::{compare, compare_on, scheme_settings, Figures};

fn scenario() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/compare_incast.toml")
}

fn source(path: &Path) -> ScenarioText {
    ScenarioText::read(path).unwrap()
}

fn t2sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(args)
        .output()
        .expect("t2sim runs")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t2sim-compare-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn each_row_is_the_schemes_own_run_of_the_same_flows() {
    let settings = scheme_settings(&["dctcp.k_cells=80".to_string()]).unwrap();
    let heard = std::sync::Mutex::new(vec![]);
    let c = compare_on(
        &source(&scenario()),
        &names(&["droptail", "dctcp"]),
        &settings,
        1,
        |n| heard.lock().unwrap().push(n.to_string()),
    )
    .unwrap();
    assert_eq!(*heard.lock().unwrap(), ["droptail", "dctcp"]);
    assert_eq!(c.runs.len(), 2);
    assert_eq!(
        c.runs[1].params,
        BTreeMap::from([("k_cells".to_string(), 80.0)])
    );
    for run in &c.runs {
        let mut overrides = vec![(
            "scheme".to_string(),
            toml::Value::String(run.scheme.clone()),
        )];
        if run.scheme == "dctcp" {
            overrides.push(("scheme_params.k_cells".into(), toml::Value::Integer(80)));
        }
        let own = ScenarioFile::load_with(&scenario(), &overrides).unwrap();
        let results = own.run().unwrap();
        assert_eq!(
            Figures::of(&results, own.topology.params.clock()),
            run.figures,
            "{}",
            run.scheme
        );
        assert!(run.fit.fits, "{}", run.scheme);
        // The same flows: sizes, ends and starts do not depend on the scheme.
        let flows = |r: &t2sim::scenario::RunResults| -> Vec<(u64, usize, usize, u64)> {
            r.records
                .iter()
                .map(|f| (f.start, f.src, f.dst, f.size_bytes))
                .collect()
        };
        assert_eq!(flows(&run.results), flows(&c.runs[0].results));
        // Queues are sampled (the file sets 1000 ns) and never exceed the 400-cell limit.
        let max = run.figures.max_queue_cells.unwrap();
        assert!(max > 0 && max <= 400, "{max}");
    }
    // DCTCP's marking changes what happens on the chip.
    assert_ne!(c.runs[0].figures, c.runs[1].figures);
}

#[test]
fn compare_writes_tables_files_and_plots_identically_twice() {
    let (a, b) = (scratch("a"), scratch("b"));
    let run = |dir: &Path| {
        let out = t2sim(&[
            "compare",
            "--scenario",
            scenario().to_str().unwrap(),
            "--schemes",
            "droptail,dctcp",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let (ta, tb) = (run(&a), run(&b));
    let table = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with("wrote"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(table(&ta), table(&tb));
    assert!(
        ta.starts_with("compare          compare-incast (seed 1)"),
        "{ta}"
    );
    for file in [
        "compare.csv",
        "compare.json",
        "slowdown_by_size.svg",
        "fct_cdf.svg",
        "queue_hottest_port.svg",
        "pauses_over_time.svg",
        "droptail/summary.json",
        "droptail/pauses.csv",
        "dctcp/flows.csv",
    ] {
        let x = std::fs::read(a.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(x, std::fs::read(b.join(file)).unwrap(), "{file} differs");
        if file.ends_with(".svg") {
            assert!(x.starts_with(b"<svg"), "{file}");
        }
        assert!(ta.contains(&format!(
            "wrote            {}",
            a.join(file.split('/').next().unwrap()).display()
        )));
    }
    let csv = std::fs::read_to_string(a.join("compare.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3);
    assert!(rows[1].starts_with("droptail,,true,1,"), "{}", rows[1]);
    assert!(
        rows[2].starts_with("dctcp,k_cells=400,true,1,"),
        "{}",
        rows[2]
    );
}

#[test]
fn bad_compare_arguments_are_named() {
    let f = scenario();
    let err = |schemes: &[&str], sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        match scheme_settings(&sets) {
            Err(e) => e,
            Ok(s) => compare(&source(&f), &names(schemes), &s, |_| {}).unwrap_err(),
        }
    };
    assert_eq!(
        err(&["droptail", "nope"], &[]),
        format!(
            "no scheme `nope` (schemes: {})",
            t2sim::schemes::names().join(", ")
        )
    );
    assert_eq!(err(&["dctcp", "dctcp"], &[]), "scheme dctcp is named twice");
    assert_eq!(err(&[], &[]), "no schemes to compare");
    assert_eq!(
        err(&["droptail"], &["dctcp.k_cells=3"]),
        "--set dctcp.*: scheme dctcp is not compared"
    );
    assert_eq!(
        err(&["dctcp"], &["k_cells=3"]),
        "--set k_cells=3: expected SCHEME.PARAM=VALUE"
    );
    assert_eq!(
        err(&["dctcp"], &["dctcp.k_cells"]),
        "--set dctcp.k_cells: expected NAME=VALUE"
    );
    assert!(err(&["dctcp"], &["dctcp.k=3"])
        .ends_with("scheme_params.k: scheme dctcp has no such parameter (it has: k_cells)"));
    // A file that sets what a scheme brings cannot be compared.
    let incast = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/incast.toml");
    let e = compare(
        &source(&incast),
        &names(&["dctcp"]),
        &BTreeMap::new(),
        |_| {},
    )
    .unwrap_err();
    assert_eq!(
        e,
        format!(
            "{}: transport.congestion: scheme dctcp sets it; remove one of the two",
            incast.display()
        )
    );
}

#[test]
fn threads_change_nothing_but_the_wall_time() {
    // Runs finish out of order on several threads; tables and files come out the same.
    let src = source(&scenario());
    let schemes = names(&["droptail", "dctcp", "slytherin"]);
    let one = compare_on(&src, &schemes, &Default::default(), 1, |_| {}).unwrap();
    let three = compare_on(&src, &schemes, &Default::default(), 3, |_| {}).unwrap();
    assert_eq!(one.text(), three.text());
    assert_eq!(one.csv(), three.csv());
    let grid = [
        t2sim::study::sweep::Axis::parse("scheme=droptail,dctcp").unwrap(),
        t2sim::study::sweep::Axis::parse("transport.window_bytes=16000,32000").unwrap(),
    ];
    let a = t2sim::study::sweep::sweep_on(&src, &grid, None, 1, |_, _, _| {}).unwrap();
    let b = t2sim::study::sweep::sweep_on(&src, &grid, None, 4, |_, _, _| {}).unwrap();
    assert_eq!(a.csv(), b.csv());
    assert_eq!(a.rows.len(), 4);
}

#[test]
fn a_sharded_sweep_merges_into_exactly_the_unsharded_one() {
    let f = scenario();
    let grid = [
        "--grid",
        "scheme=droptail,dctcp",
        "--grid",
        "transport.window_bytes=16000,32000,48000",
    ];
    let run = |dir: &Path, shard: Option<&str>| {
        let mut args = vec!["sweep", "--scenario", f.to_str().unwrap()];
        args.extend(grid);
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        args.extend(["--out", dir.to_str().unwrap()]);
        let out = t2sim(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let whole = scratch("whole");
    run(&whole, None);
    let shards: Vec<PathBuf> = (1..=4).map(|i| scratch(&format!("shard{i}"))).collect();
    for (i, d) in shards.iter().enumerate() {
        run(d, Some(&format!("{}/4", i + 1)));
    }
    let merged = scratch("merged");
    let mut args = vec!["sweep-merge", "--out", merged.to_str().unwrap()];
    // Any order of shards.
    for d in shards.iter().rev() {
        args.push(d.to_str().unwrap());
    }
    let out = t2sim(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in ["sweep.csv", "sweep.json"] {
        assert_eq!(
            std::fs::read(whole.join(file)).unwrap(),
            std::fs::read(merged.join(file)).unwrap(),
            "{file}"
        );
    }
    let csv = std::fs::read_to_string(whole.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 7);
    assert!(lines[0].starts_with("point,scheme,transport.window_bytes,fits,"));
    assert!(lines[1].starts_with("0,droptail,16000,true,"));
    assert!(lines[6].starts_with("5,dctcp,48000,true,"));
    // Shard 2 of 4 holds points 1 and 5.
    let s2 = std::fs::read_to_string(shards[1].join("sweep.csv")).unwrap();
    let points: Vec<&str> = s2
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(points, ["1", "5"]);
    // A missing shard is named.
    let out = t2sim(&[
        "sweep-merge",
        "--out",
        scratch("bad").to_str().unwrap(),
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "t2sim: error: points missing from the shards: 2, 3\n"
    );
    // The same shard twice is named.
    let out = t2sim(&[
        "sweep-merge",
        "--out",
        scratch("twice").to_str().unwrap(),
        shards[0].to_str().unwrap(),
        shards[0].to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("point 0 is also in another shard"));
}

#[test]
fn bad_sweep_arguments_are_named() {
    let f = scenario();
    let sweep = |extra: &[&str]| {
        let mut args = vec!["sweep", "--scenario", f.to_str().unwrap()];
        args.extend(extra);
        let out = t2sim(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(
        sweep(&["--grid", "seed"]),
        "t2sim: error: --grid seed: expected KEY=V1,V2,...\n"
    );
    assert_eq!(
        sweep(&["--grid", "seed=1,,2"]),
        "t2sim: error: --grid seed=1,,2: an empty value\n"
    );
    assert_eq!(
        sweep(&["--grid", "seed=1", "--shard", "3/2"]),
        "t2sim: error: --shard 3/2: expected I/N with 1 <= I <= N\n"
    );
    assert_eq!(
        sweep(&["--grid", "seed=1", "--grid", "seed=2"]),
        "t2sim: error: --grid seed: the key is given twice\n"
    );
    let e = sweep(&["--grid", "workload.lode=0.5"]);
    assert!(
        e.starts_with(&format!(
            "t2sim: error: point 0 (workload.lode = 0.5): {}",
            f.display()
        )),
        "{e}"
    );
    assert!(e.contains("lode"), "{e}");
}

#[test]
fn the_files_compare_section_chooses_schemes_and_parameters() {
    // The file's [compare] names droptail and dctcp (k_cells = 400); --set overrides it.
    let out = t2sim(&[
        "compare",
        "--scenario",
        scenario().to_str().unwrap(),
        "--set",
        "dctcp.k_cells=80",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().skip(3).take(2).collect();
    assert!(rows[0].starts_with("droptail "), "{text}");
    assert!(rows[1].starts_with("dctcp "), "{text}");
    let c = compare(
        &source(&scenario()),
        &names(&["droptail", "dctcp"]),
        &scheme_settings(&["dctcp.k_cells=80".to_string()]).unwrap(),
        |_| {},
    )
    .unwrap();
    assert_eq!(
        text.lines().take(4).collect::<Vec<_>>(),
        c.text().lines().take(4).collect::<Vec<_>>()
    );
    // Bad sections name their key.
    let base = std::fs::read_to_string(scenario()).unwrap();
    let base = &base[..base.find("[compare]").unwrap()];
    let dir = scratch("sections");
    std::fs::create_dir_all(&dir).unwrap();
    let err = |section: &str| {
        let f = dir.join("s.toml");
        std::fs::write(&f, format!("{base}\n{section}")).unwrap();
        let e = ScenarioFile::load(&f).err().expect("an error");
        e[f.display().to_string().len() + 2..].to_string()
    };
    assert_eq!(
        err("[compare]\nschemes = [\"droptail\", \"nope\"]"),
        format!(
            "compare.schemes[1]: no scheme `nope` (schemes: {})",
            t2sim::schemes::names().join(", ")
        )
    );
    assert_eq!(
        err("[compare]\nschemes = []"),
        "compare.schemes: names no scheme"
    );
    assert_eq!(
        err("[compare]\nschemes = [\"dctcp\", \"dctcp\"]"),
        "compare.schemes[1]: dctcp is named twice"
    );
    assert_eq!(
        err("[compare]\nschemes = [\"droptail\"]\n[compare.params.dctcp]\nk_cells = 9"),
        "compare.params.dctcp: not a compared scheme"
    );
    assert!(
        err("[compare]\nschemes = [\"dctcp\"]\n[compare.params.dctcp]\nk_cells = 0")
            .starts_with("compare.params.dctcp.k_cells: 0 is outside 1..=524287")
    );
}

#[test]
fn compare_over_seeds_is_one_comparison_per_seed_and_their_statistics() {
    let dir = scratch("seeds");
    let out = t2sim(&[
        "compare",
        "--scenario",
        scenario().to_str().unwrap(),
        "--seeds",
        "1,2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // Each seed's comparison is the file's comparison with `seed` set to it.
    let settings = t2sim::scenario::ScenarioFile::load(&scenario())
        .unwrap()
        .compare
        .unwrap()
        .1;
    let mut completed = BTreeMap::new();
    for seed in [1u64, 2] {
        let c = t2sim::study::compare::compare_seeded(
            &source(&scenario()),
            &names(&["droptail", "dctcp"]),
            &settings,
            Some(seed),
            1,
            |_| {},
        )
        .unwrap();
        assert_eq!(c.seed, seed);
        assert!(text.contains(&c.text()), "seed {seed}:\n{text}");
        assert_eq!(
            std::fs::read_to_string(dir.join(format!("seed{seed}/compare.csv"))).unwrap(),
            c.csv()
        );
        assert!(dir.join(format!("seed{seed}/dctcp/flows.csv")).is_file());
        for r in &c.runs {
            completed
                .entry(r.scheme.clone())
                .or_insert_with(Vec::new)
                .push(r.figures.completed as f64);
        }
    }
    assert!(
        text.contains("over seeds       compare-incast (2 seeds: 1, 2); mean +- 95% interval (Student t, 1 degrees of freedom)"),
        "{text}"
    );
    // compare_seeds.csv: the mean and the half-width t(0.975, 1) x s / sqrt(2) of each column.
    let csv = std::fs::read_to_string(dir.join("compare_seeds.csv")).unwrap();
    let mut lines = csv.lines();
    let header = t2sim::study::stats::csv_fields(lines.next().unwrap());
    assert_eq!(header[..3], ["scheme", "params", "seeds"]);
    let col = header.iter().position(|h| h == "completed.mean").unwrap();
    assert_eq!(header[col + 1], "completed.ci95");
    for line in lines {
        let f = t2sim::study::stats::csv_fields(line);
        let v = &completed[&f[0]];
        assert_eq!(f[2], "2");
        let mean = (v[0] + v[1]) / 2.0;
        assert_eq!(f[col], format!("{mean:.6}"));
        let half = 12.706 * (v[0] - v[1]).abs() / 2.0;
        assert_eq!(f[col + 1], format!("{half:.6}"));
    }
    assert!(!dir.join("INCOMPLETE").exists());
    // One seed: its figures, and no interval claimed.
    let one = t2sim::study::compare::OverSeeds::run(
        &source(&scenario()),
        &names(&["droptail"]),
        &BTreeMap::new(),
        &[5],
        1,
        |_, _| {},
    )
    .unwrap();
    assert!(one.text().contains(
        "over seeds       compare-incast (1 seeds: 5); one seed: the figures themselves, no interval"
    ));
    assert!(one
        .csv()
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("droptail,,1,"));
    // A seed named twice is an error that says so.
    let out = t2sim(&[
        "compare",
        "--scenario",
        scenario().to_str().unwrap(),
        "--seeds",
        "3,3",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "t2sim: error: --seeds: seed 3 is named twice\n"
    );
}
