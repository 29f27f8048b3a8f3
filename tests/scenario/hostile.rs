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

fn block(t: u32, mut body: Vec<u8>) -> Vec<u8> {
    body.resize(body.len().div_ceil(4) * 4, 0);
    let n = (12 + body.len()) as u32;
    let mut b = t.to_le_bytes().to_vec();
    b.extend(n.to_le_bytes());
    b.extend(body);
    b.extend(n.to_le_bytes());
    b
}

/// A pcapng file: one interface with `if_tsresol` = `resol`, two 60-byte frames stamped 1
/// and 2 units.
fn pcapng(resol: u8) -> Vec<u8> {
    pcapng_orig(resol, 60)
}

/// [`pcapng`] whose packets say their frames had `orig` bytes.
fn pcapng_orig(resol: u8, orig: u32) -> Vec<u8> {
    let mut shb = 0x1A2B_3C4Du32.to_le_bytes().to_vec();
    shb.extend([1, 0, 0, 0]);
    shb.extend((-1i64).to_le_bytes());
    let mut idb = vec![1, 0, 0, 0, 0, 0, 0, 0];
    idb.extend([9, 0, 1, 0, resol, 0, 0, 0, 0, 0, 0, 0]);
    let mut f = block(0x0A0D_0D0A, shb);
    f.extend(block(1, idb));
    for ts in [1u32, 2] {
        let mut epb = vec![0; 4];
        epb.extend(0u32.to_le_bytes());
        epb.extend(ts.to_le_bytes());
        epb.extend(60u32.to_le_bytes());
        epb.extend(orig.to_le_bytes());
        let mut frame = vec![0u8; 60];
        frame[12] = 0x08;
        epb.extend(frame);
        f.extend(block(6, epb));
    }
    f
}

/// Cases 2 and 19: time resolutions finer than a picosecond (0xFF and 0xC0 divided by
/// zero; 20 overflowed), a pcap version other than 2.4, and a captured length above the
/// original are refused naming the file.
#[test]
fn capture_headers_that_cannot_be_meant_are_refused() {
    let d = scratch("captures");
    let p = d.join("c.pcapng");
    for (resol, shown) in [(0xFFu8, "0xff"), (0xC0, "0xc0"), (20, "0x14"), (13, "0x0d")] {
        std::fs::write(&p, pcapng(resol)).unwrap();
        assert_eq!(
            t2sim::capture::read_capture(&p).unwrap_err(),
            format!(
                "{}: interface 0: if_tsresol {shown} is finer than the picosecond t2sim takes \
                 (at most 10^-12 s: 12, or 2^-40 s: 0xa8)",
                p.display()
            )
        );
    }
    // The finest taken, both ways, replay at the right cycle: 1 unit apart.
    for resol in [12u8, 0xa8] {
        std::fs::write(&p, pcapng(resol)).unwrap();
        let frames = t2sim::capture::read_capture(&p).unwrap();
        let at = t2sim::capture::replay_schedule(
            &frames,
            t2_clock::Clock::tofino2(),
            100_000_000_000,
            t2sim::capture::ReplayTiming::Recorded,
            1000,
        )
        .unwrap();
        // Stamped 1 ps (or 2^-40 s) apart: the line-rate floor spaces them, 64 + 20 B at
        // 100G being 10.08 cycles, less the cycle of rounding the schedule allows.
        assert_eq!(at, [1000, 1010], "{resol}");
    }
    // pcap: version 9.4, then a captured length above the original.
    let mut pcap = 0xa1b2_c3d4u32.to_le_bytes().to_vec();
    pcap.extend(9u16.to_le_bytes());
    pcap.extend(4u16.to_le_bytes());
    pcap.extend([0; 8]);
    pcap.extend(65535u32.to_le_bytes());
    pcap.extend(1u32.to_le_bytes());
    let mut rec = vec![0; 8];
    rec.extend(60u32.to_le_bytes());
    rec.extend(59u32.to_le_bytes());
    rec.extend([0; 60]);
    let q = d.join("c.pcap");
    std::fs::write(&q, [pcap.clone(), rec.clone()].concat()).unwrap();
    assert_eq!(
        t2sim::capture::read_capture(&q).unwrap_err(),
        format!(
            "{}: pcap version 9.4; t2sim reads version 2.4 (the only one there is)",
            q.display()
        )
    );
    pcap[4] = 2;
    std::fs::write(&q, [pcap, rec].concat()).unwrap();
    assert_eq!(
        t2sim::capture::read_capture(&q).unwrap_err(),
        format!(
            "{}: packet 1: Invalid field value: PacketHeader incl_len > orig_len",
            q.display()
        )
    );
    std::fs::write(&p, pcapng_orig(9, 59)).unwrap();
    assert_eq!(
        t2sim::capture::read_capture(&p).unwrap_err(),
        format!(
            "{}: packet 1 has 60 bytes captured but says the frame had 59: the lengths \
             contradict each other",
            p.display()
        )
    );
}

/// Case 15: the points of a sweep write their captures (and dumps) into their own folders,
/// never into one file side by side.
#[test]
fn sweep_points_write_their_own_captures() {
    let d = scratch("sweep_pcap");
    let caps = d.join("caps");
    let text = format!(
        "seed = 1\nduration_us = 5\n[topology]\nkind = \"single_chip\"\nhosts = 2\n[workload]\n\
         [[workload.flows]]\nsrc = 0\ndst = 1\nsize_bytes = 3000\n[output]\npcap = \"host0\"\n\
         pcap_dir = \"{}\"\nvcd = \"{}\"\n",
        caps.display(),
        d.join("w.vcd").display()
    );
    let src = t2sim::scenario::ScenarioText {
        text,
        shown: "s.toml".into(),
        base: d.clone(),
    };
    let grid = [Axis::parse("seed=1,2").unwrap()];
    let s = t2sim::study::sweep::sweep_on(&src, &grid, None, 2, |_, _, _| {}).unwrap();
    assert_eq!(s.rows.len(), 2);
    for n in 0..2 {
        let cap = std::fs::read(caps.join(format!("point{n}/host0-0.pcapng"))).unwrap();
        // A whole capture (written big-endian): block after block, each closed by its own
        // length, to the end.
        let mut at = 0;
        let word = |i: usize| u32::from_be_bytes(cap[i..i + 4].try_into().unwrap()) as usize;
        while at < cap.len() {
            let len = word(at + 4);
            assert_eq!(word(at + len - 4), len, "point {n}: block at {at}");
            at += len;
        }
        assert_eq!(at, cap.len(), "point {n}");
        assert!(d.join(format!("point{n}/w.vcd")).exists(), "point {n}");
    }
    assert!(!caps.join("host0-0.pcapng").exists());
    assert!(!d.join("w.vcd").exists());
}

/// Issue 55: a key sweep.json does not have (a hand-edited or foreign file) is an error
/// naming it, in the file and in each grid axis; it was ignored.
#[test]
fn sweep_json_with_a_key_of_its_own_is_refused() {
    let d = scratch("extra_key");
    shard(&d, 3, None, "", &["0,1,5,5", "1,2,5,5", "2,3,5,5"]);
    assert!(Sweep::read(&d).is_ok());
    let json = d.join("sweep.json");
    let text = std::fs::read_to_string(&json).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["extra"] = serde_json::json!(1);
    std::fs::write(&json, v.to_string()).unwrap();
    let e = Sweep::read(&d).err().unwrap();
    assert!(e.contains("unknown field `extra`"), "{e}");
    v.as_object_mut().unwrap().remove("extra");
    v["grid"][0]["step"] = serde_json::json!(2);
    std::fs::write(&json, v.to_string()).unwrap();
    let e = Sweep::read(&d).err().unwrap();
    assert!(e.contains("unknown field `step`"), "{e}");
    assert!(e.starts_with(&json.display().to_string()), "{e}");
}
