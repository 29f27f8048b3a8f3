//! Issue 30's hostile inputs to the sweep tools and the capture reader: each refused with
//! the file and the key, before anything is sized from it.

use std::path::{Path, PathBuf};
use t2sim::study::sweep::{fnv1a, merge, Axis, Sweep, SweepInfo};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t2sim-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A shard folder as `sweep --shard` writes it: grid seed = 1,2,3 (3 points).
fn shard(dir: &Path, points: usize, shard: Option<[usize; 2]>, text: &str, rows: &[&str]) {
    let info = SweepInfo {
        scenario: "s.toml".into(),
        grid: vec![Axis::parse("seed=1,2,3").unwrap()],
        points,
        shard,
        scenario_fnv1a: fnv1a(text),
    };
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("sweep.json"),
        serde_json::to_string_pretty(&info).unwrap(),
    )
    .unwrap();
    let mut csv = String::from("point,seed,flows,completed\n");
    for r in rows {
        csv += r;
        csv += "\n";
    }
    std::fs::write(dir.join("sweep.csv"), csv).unwrap();
}

fn merged(rows_a: &[&str], rows_b: &[&str], text_b: &str) -> Result<Sweep, String> {
    let d = scratch("merge");
    let (a, b) = (d.join("a"), d.join("b"));
    shard(&a, 3, Some([1, 2]), "seed = 1", rows_a);
    shard(&b, 3, Some([2, 2]), text_b, rows_b);
    merge(&[&a, &b]).map_err(|e| e.replace(&d.display().to_string(), "D"))
}

/// Cases 7 and 14: what sweep.json claims is checked on read (before anything is sized
/// from it), and every row against the point it claims.
#[test]
fn sweep_merge_checks_every_row_and_the_point_count() {
    let good = merged(&["0,1,5,5", "2,3,5,4"], &["1,2,5,5"], "seed = 1").unwrap();
    assert_eq!(good.rows.len(), 3);
    assert!(good.info.shard.is_none());
    let d = scratch("huge");
    shard(&d, 100_000_000, None, "", &[]);
    let t = std::time::Instant::now();
    let e = Sweep::read(&d).err().unwrap();
    assert_eq!(
        e,
        format!(
            "{}: points: 100000000 is above the 100000-point limit",
            d.join("sweep.json").display()
        )
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(1));
    shard(&d, 4, None, "", &[]);
    assert!(Sweep::read(&d)
        .err()
        .unwrap()
        .ends_with("sweep.json: points: 4 is not the number of points of its grid (3)"));
    let e = |a: &[&str], b: &[&str], text: &str| merged(a, b, text).err().unwrap();
    assert_eq!(
        e(&["0,1,5,5", "2,3,5"], &["1,2,5,5"], "seed = 1"),
        "D/a/sweep.csv: line 3: 3 fields; the header has 4 (a cut or damaged row)"
    );
    assert_eq!(
        e(&["0,1,5,5", "2,3,5,4"], &["1,3,5,5"], "seed = 1"),
        "D/b/sweep.csv: line 2: point 1 has seed = 3, but the grid's point 1 has 2"
    );
    assert_eq!(
        e(&["0,1,5,5", "1,2,5,4"], &["2,3,5,5"], "seed = 1"),
        "D/a/sweep.csv: line 3: point 1 is not one of shard 1/2's"
    );
    assert_eq!(
        e(&["0,1,5,5", "0,1,5,5"], &["1,2,5,5"], "seed = 1"),
        "D/a/sweep.csv: line 3: point 0 is listed twice"
    );
    assert_eq!(
        e(&["0,1,5,5", "2,3,5,4"], &["1,2,5,5"], "seed = 2"),
        format!(
            "D/b: sweep.json: scenario_fnv1a: {} ran a different file named s.toml than D/a ({})",
            fnv1a("seed = 2"),
            fnv1a("seed = 1")
        )
    );
}

/// Case 3: a 60,000-segment dotted key overflowed the stack; it is refused by its size.
#[test]
fn a_grid_key_deeper_than_any_scenario_key_is_refused() {
    let key = vec!["a"; 60_000].join(".");
    let e = Axis::parse(&format!("{key}=1")).err().unwrap();
    assert_eq!(
        e,
        format!(
            "--grid {}...: the key has 60000 segments; a scenario's keys have at most 4",
            &key[..40]
        )
    );
    assert!(Axis::parse("compare.params.bfc.refresh_ns=1").is_ok());
}
