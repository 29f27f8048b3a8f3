//! Waveforms: the dump says what the model did, cycle for cycle, and GTKWave's own tools
//! accept it.

use crate::common::waves::{assert_gtkwave_shows_save_file, at, parse_dump, SharedBytes};
use std::io;
use std::path::PathBuf;
use t2_clock::Cycle;
use t2_testbench::{Host, Stepping};
use t2_waves::{TraceFilter, Value};
use t2sim::scenario::{IncastScenario, WaveRequest};
use t2sim::Chip;

fn one_packet() -> IncastScenario {
    IncastScenario {
        senders: 1,
        frame_bytes: 1480,
        load_percent: 1,
        duration_cycles: 3_000,
        ..IncastScenario::default()
    }
}

/// The dump bytes, the tracer's record of changes (cycle, path, value) and the receiver's
/// records.
type TracedRun = (
    Vec<u8>,
    Vec<(Cycle, String, String)>,
    Vec<t2_testbench::Reception>,
);

/// Runs `s` with every signal traced into memory; returns the dump, the tracer's own log
/// rendered the same way, and the receiver's records.
fn traced_run(s: &IncastScenario) -> TracedRun {
    traced_run_of(s, TraceFilter::all())
}

/// [`traced_run`] tracing what `filter` selects.
fn traced_run_of(s: &IncastScenario, filter: TraceFilter) -> TracedRun {
    let mut b = s.build().unwrap();
    let buf = SharedBytes::default();
    let chip = b.net.node_mut::<Chip>(b.chip);
    chip.enable_trace(filter, Box::new(buf.clone())).unwrap();
    chip.trace_mut().unwrap().tracer_mut().keep_log();
    b.net.run_until(s.duration_cycles);
    let chip = b.net.node_mut::<Chip>(b.chip);
    chip.finish_trace(s.duration_cycles).unwrap();
    let tracer = chip.trace().unwrap().tracer();
    let log = tracer
        .log()
        .iter()
        .map(|c| {
            let v = match c.value {
                Value::Bits(b) => b.to_string(),
                Value::Text(t) => t.to_string(),
            };
            (c.cycle, tracer.signals()[c.signal.index()].path.clone(), v)
        })
        .collect();
    let rx = b.net.node::<Host>(b.receiver).received().to_vec();
    let bytes = buf.0.lock().unwrap().clone();
    (bytes, log, rx)
}

#[test]
fn one_packet_shows_where_the_model_says_it_was() {
    let (bytes, _, rx) = traced_run(&one_packet());
    let dump = parse_dump(&bytes);
    assert_eq!(rx.len(), 1);
    // Sender (port 1) and receiver (port 0) are both on pipe 0.
    let a = rx[0].sent_at + 150; // last bit reaches the chip, enters the ingress parser
    let stage0 = a + 64;
    assert_eq!(
        at(&dump, "chip.pipe0.ingress.stage00.valid", stage0 - 1),
        "0"
    );
    assert_eq!(at(&dump, "chip.pipe0.ingress.stage00.valid", stage0), "1");
    // The first packet is number 1; 0 means no packet at the stage.
    let pkt_id = "chip.pipe0.ingress.stage00.pkt_id";
    assert_eq!(at(&dump, pkt_id, stage0 - 1), "0");
    assert_eq!(at(&dump, pkt_id, stage0), "1");
    assert_eq!(at(&dump, pkt_id, stage0 + 1), "0");
    // Its frame arrived on the sender's port (device port 10) for one cycle.
    assert_eq!(at(&dump, "chip.port10.rx_pkt", a - 1), "0");
    assert_eq!(at(&dump, "chip.port10.rx_pkt", a), "1");
    assert_eq!(at(&dump, "chip.port10.rx_pkt", a + 1), "0");
    assert_eq!(
        at(&dump, "chip.pipe0.ingress.stage00.valid", stage0 + 1),
        "0"
    );
    assert_eq!(
        at(&dump, "chip.pipe0.ingress.stage01.valid", stage0 + 23),
        "1"
    );
    assert_eq!(
        at(
            &dump,
            "chip.pipe0.ingress.stage19.valid",
            stage0 + 23 + 18 * 2
        ),
        "1"
    );
    let ingress_exit = a + 189;
    assert_eq!(at(&dump, "chip.pipe0.ingress.exit", ingress_exit), "to_tm");
    assert_eq!(at(&dump, "chip.pipe0.ingress.exit", ingress_exit + 1), "-");
    assert_eq!(
        at(&dump, "chip.pipe0.ingress.occupancy", ingress_exit - 1),
        "1"
    );
    assert_eq!(at(&dump, "chip.pipe0.ingress.occupancy", ingress_exit), "0");
    // 1480 B = 9 cells from enqueue until the dequeue 300 cycles later.
    let enq = ingress_exit + 1;
    let q = "chip.tm.pipe0.port8.q0.depth_cells";
    assert_eq!(at(&dump, q, enq - 1), "0");
    assert_eq!(at(&dump, q, enq), "9");
    assert_eq!(at(&dump, q, enq + 299), "9");
    assert_eq!(at(&dump, q, enq + 300), "0");
    assert_eq!(
        at(&dump, "chip.tm.free_cells", enq),
        (393_216 - 9).to_string()
    );
    // Every queue is in application pool 0 by default.
    let pool = "chip.tm.pool0.used_cells";
    assert_eq!(at(&dump, pool, enq - 1), "0");
    assert_eq!(at(&dump, pool, enq), "9");
    assert_eq!(at(&dump, pool, enq + 300), "0");
    assert_eq!(at(&dump, "chip.tm.pool1.used_cells", enq), "0");
    let egress_entry = enq + 301;
    assert_eq!(
        at(&dump, "chip.pipe0.egress.stage00.valid", egress_entry + 64),
        "1"
    );
    let mac_start = egress_entry + 189 + 1;
    assert_eq!(at(&dump, "chip.pipe0.egress.exit", mac_start - 1), "to_mac");
    // The receiver's port is device port 8.
    for (c, busy, pkt) in [
        (mac_start - 1, "0", "0"),
        (mac_start, "1", "1"),
        (mac_start + 179, "1", "1"),
        (mac_start + 180, "0", "0"),
    ] {
        assert_eq!(at(&dump, "chip.port8.tx_busy", c), busy, "cycle {c}");
        assert_eq!(at(&dump, "chip.port8.tx_pkt", c), pkt, "cycle {c}");
    }
    // The last bit left the chip at mac_start + 180 and reached the receiver 150 later.
    assert_eq!(rx[0].received_at, mac_start + 180 + 150);
}

#[test]
fn the_dump_equals_the_model_record_and_is_deterministic() {
    let s = IncastScenario {
        senders: 4,
        frame_bytes: 700,
        duration_cycles: 6_000,
        ..IncastScenario::default()
    };
    let (bytes, log, _) = traced_run(&s);
    let dump = parse_dump(&bytes);
    let mut from_dump: Vec<(Cycle, String, String)> = dump
        .iter()
        .filter(|(path, _)| *path != "chip.cycle")
        .flat_map(|(path, changes)| {
            changes
                .iter()
                .skip(1) // the initial value in $dumpvars
                .map(move |(c, v)| (*c, path.clone(), v.clone()))
        })
        .collect();
    let mut log = log;
    from_dump.sort();
    log.sort();
    assert!(log.len() > 1000, "{}", log.len());
    assert_eq!(from_dump, log);
    let (again, _, _) = traced_run(&s);
    assert!(
        bytes == again,
        "the same run must give a byte-identical dump"
    );
}

#[test]
fn jumping_and_stepping_give_the_same_dump() {
    let s = IncastScenario {
        senders: 3,
        frame_bytes: 200,
        duration_cycles: 4_000,
        ..IncastScenario::default()
    };
    let (jump, _, _) = traced_run(&s);
    let (step, _, _) = traced_run(&IncastScenario {
        stepping: Stepping::EveryCycle,
        ..s
    });
    assert!(jump == step);
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t2sim-waves-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn gtkwave_accepts_the_dump() {
    let dir = temp_dir("fst");
    let vcd = dir.join("incast.vcd");
    let s = IncastScenario {
        duration_cycles: 20_000,
        waves: Some(WaveRequest {
            vcd: vcd.clone(),
            filter: TraceFilter::parse(t2sim::chip::trace::DEFAULT_TRACE).unwrap(),
            groups: Vec::new(),
        }),
        ..IncastScenario::default()
    };
    let summary = s.run().unwrap();
    assert!(summary.traced_signals.unwrap() > 10);
    let gtkw = std::fs::read_to_string(dir.join("incast.gtkw")).unwrap();
    assert!(gtkw.contains(&format!("[dumpfile] \"{}\"", vcd.display())));
    assert!(gtkw.contains("chip.tm.pipe0.port8.depth_cells[18:0]"));
    match std::process::Command::new("vcd2fst")
        .arg(&vcd)
        .arg(dir.join("incast.fst"))
        .output()
    {
        Ok(out) => {
            assert!(
                out.status.success(),
                "vcd2fst failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(std::fs::metadata(dir.join("incast.fst")).unwrap().len() > 0);
        }
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!(
                "SKIPPED: vcd2fst (GTKWave) is not installed here ({e}); .ci/run installs it"
            );
        }
        Err(e) => panic!("vcd2fst must be installed in CI: {e}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ghost_updates_are_pulses_in_their_delivery_cycles() {
    // One 1480-byte frame (9 cells) into queue 0 of port 0 (device port 8: ghost qid MAC 1,
    // queue 0 = 128) in cycle a + 189 + 1; the dequeue 300 cycles later empties it. Each
    // change is delivered 100 cycles later, as a one-cycle pulse of TM pipe 0's signals;
    // ping_pong alternates between the queue's updates. The built-in program has no ghost
    // control: tracing the updates is what makes their cycles events.
    let s = one_packet();
    let filter = TraceFilter::parse("chip.ghost.**").unwrap();
    let (bytes, _, rx) = traced_run_of(&s, filter.clone());
    let dump = parse_dump(&bytes);
    let enqueued = rx[0].sent_at + 150 + 189 + 1;
    let (first, second) = (enqueued + 100, enqueued + 300 + 100);
    let pipe0 = |signal: &str, c: Cycle| at(&dump, &format!("chip.ghost.pipe0.{signal}"), c);
    for (c, valid) in [(first - 1, "0"), (first, "1"), (first + 1, "0")] {
        assert_eq!(pipe0("valid", c), valid, "cycle {c}");
    }
    assert_eq!(pipe0("updates", first), "1");
    assert_eq!(pipe0("qid", first), "128");
    assert_eq!(pipe0("qlength", first), "9");
    assert_eq!(pipe0("ping_pong", first), "0");
    assert_eq!(pipe0("valid", second - 1), "0");
    assert_eq!(pipe0("valid", second), "1");
    assert_eq!(pipe0("qlength", second), "0");
    assert_eq!(pipe0("ping_pong", second), "1");
    // Only those two updates, and nothing from the other TM pipes.
    let pulses: Vec<Cycle> = dump["chip.ghost.pipe0.valid"]
        .iter()
        .filter(|(_, v)| v == "1")
        .map(|(c, _)| *c)
        .collect();
    assert_eq!(pulses, [first, second]);
    assert!(dump["chip.ghost.pipe1.valid"].iter().all(|(_, v)| v == "0"));
    // Jumping writes the same dump as stepping.
    let stepped = IncastScenario {
        stepping: Stepping::EveryCycle,
        ..s.clone()
    };
    assert_eq!(traced_run_of(&stepped, filter).0, bytes);
    // The default set leaves them out.
    let default = TraceFilter::parse(t2sim::chip::trace::DEFAULT_TRACE).unwrap();
    assert!(!default.selects("chip.ghost.pipe0.valid"));
    // The save file shows each TM pipe's updates as a group.
    let dir = temp_dir("ghost");
    let vcd = dir.join("ghost.vcd");
    let with_file = IncastScenario {
        waves: Some(WaveRequest {
            vcd: vcd.clone(),
            filter: TraceFilter::parse("chip.ghost.**").unwrap(),
            groups: Vec::new(),
        }),
        ..s
    };
    assert_eq!(with_file.run().unwrap().traced_signals, Some(4 * 5));
    let gtkw = std::fs::read_to_string(dir.join("ghost.gtkw")).unwrap();
    assert!(gtkw.contains("@800200\n-ghost.pipe0\n"), "{gtkw}");
    assert!(gtkw.contains("chip.ghost.pipe0.qlength[17:0]"), "{gtkw}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn back_to_back_packets_are_told_apart_and_every_arrival_is_marked() {
    // Eight senders at line rate, two per pipe: their frames arrive in the same cycles and
    // enter the ingress in consecutive ones.
    let s = IncastScenario {
        senders: 8,
        frame_bytes: 64,
        duration_cycles: 3_000,
        ..IncastScenario::default()
    };
    let (bytes, _, _) = traced_run(&s);
    let dump = parse_dump(&bytes);
    // Every arrival is marked on its port with a new number: 1, 2, 3 ... each exactly once.
    let mut arrivals: Vec<u64> = dump
        .iter()
        .filter(|(path, _)| path.ends_with(".rx_pkt"))
        .flat_map(|(_, changes)| changes.iter().map(|(_, v)| v.parse::<u64>().unwrap()))
        .filter(|&n| n != 0)
        .collect();
    arrivals.sort_unstable();
    assert!(arrivals.len() > 20, "{}", arrivals.len());
    assert_eq!(arrivals, (1..=arrivals.len() as u64).collect::<Vec<_>>());
    // Where stage 0 holds a packet in two consecutive cycles, the numbers differ.
    let mut pairs = 0;
    for p in 0..4 {
        let valid = format!("chip.pipe{p}.ingress.stage00.valid");
        let pkt = format!("chip.pipe{p}.ingress.stage00.pkt_id");
        for &(c, ref v) in &dump[&valid] {
            if v == "1" && at(&dump, &valid, c + 1) == "1" {
                let (a, b) = (at(&dump, &pkt, c), at(&dump, &pkt, c + 1));
                assert!(a != "0" && b != "0" && a != b, "cycle {c}: {a} then {b}");
                pairs += 1;
            }
        }
        // And a stage with no packet shows 0.
        for &(c, ref v) in &dump[&valid] {
            if v == "0" {
                assert_eq!(at(&dump, &pkt, c), "0", "{pkt} at {c}");
            }
        }
    }
    assert!(pairs > 0, "no back-to-back packets in this run");
    // Back-to-back frames on a MAC show each packet's number in turn.
    let tx: Vec<&String> = dump["chip.port8.tx_pkt"]
        .iter()
        .map(|(_, v)| v)
        .filter(|v| *v != "0")
        .collect();
    let mut distinct = tx.clone();
    distinct.dedup();
    assert_eq!(tx.len(), distinct.len(), "each frame is its own value");
    assert!(tx.len() > 10, "{}", tx.len());
}

/// A default-set and an everything dump with their save files, in a fresh directory.
fn dump_with_save_file(name: &str, filter: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let vcd = dir.join(format!("{name}.vcd"));
    let s = IncastScenario {
        senders: 2,
        duration_cycles: 3_000,
        waves: Some(WaveRequest {
            vcd: vcd.clone(),
            filter: TraceFilter::parse(filter).unwrap(),
            groups: Vec::new(),
        }),
        ..IncastScenario::default()
    };
    s.run().unwrap();
    let gtkw = vcd.with_extension("gtkw");
    (dir, vcd, gtkw)
}

#[test]
fn the_save_file_asks_for_the_names_gtkwave_gives_the_dump() {
    for (name, filter) in [
        ("names_default", t2sim::chip::trace::DEFAULT_TRACE),
        ("names_all", "**"),
    ] {
        let (dir, vcd, gtkw) = dump_with_save_file(name, filter);
        let names =
            t2_waves::gtkw::dump_names(io::BufReader::new(std::fs::File::open(&vcd).unwrap()))
                .unwrap();
        let save = std::fs::read_to_string(&gtkw).unwrap();
        let traces = t2_waves::gtkw::save_file_traces(&save);
        // Every dump variable is shown once, the cycle counter first.
        let mut shown: Vec<&str> = traces.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(shown[0], "chip.cycle");
        shown.sort_unstable();
        let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
        all.sort_unstable();
        assert_eq!(shown, all, "{name}");
        // Queue depths and free cells are analog steps; bits binary; the rest decimal.
        for (n, flags) in &traces {
            let expected = if n.contains("depth_cells")
                || n.contains("free_cells")
                || n.contains("used_cells")
            {
                "8024"
            } else if ["valid", "paused", "tx_busy", "ping_pong"]
                .iter()
                .any(|b| n.ends_with(b))
            {
                "28"
            } else {
                "24"
            };
            assert_eq!(flags, expected, "{n}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn groups_follow_the_data_flow() {
    let (dir, _, gtkw) = dump_with_save_file("groups", t2sim::chip::trace::DEFAULT_TRACE);
    let save = std::fs::read_to_string(&gtkw).unwrap();
    let titles: Vec<&str> = save
        .split("@800200\n-")
        .skip(1)
        .map(|g| g.split('\n').next().unwrap())
        .collect();
    // Two senders: device ports 10 (pipe 0) and 136 (pipe 1); the receiver is port 8.
    let expected = [
        "chip",
        "port8.rx",
        "port10.rx",
        "port136.rx",
        "recirc.pipe0.rx",
        "recirc.pipe1.rx",
        "recirc.pipe2.rx",
        "recirc.pipe3.rx",
        "pipe0.ingress",
        "pipe1.ingress",
        "pipe2.ingress",
        "pipe3.ingress",
        "tm",
        "pipe0.egress",
        "pipe1.egress",
        "pipe2.egress",
        "pipe3.egress",
        "port8.tx",
        "port10.tx",
        "port136.tx",
        "recirc.pipe0.tx",
        "recirc.pipe1.tx",
        "recirc.pipe2.tx",
        "recirc.pipe3.tx",
    ];
    assert_eq!(titles, expected);
    // Each group appears once.
    assert_eq!(save.matches("@800200\n-chip\n").count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gtkwave_shows_every_trace_of_the_save_file() {
    let (dir, vcd, gtkw) = dump_with_save_file("gtkwave", t2sim::chip::trace::DEFAULT_TRACE);
    assert_gtkwave_shows_save_file(&dir, &vcd, &gtkw);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn frames_the_chip_makes_never_show_an_old_packet_number() {
    // Lossless class 0 with a low XOFF threshold: the chip sends PFC frames out of the
    // senders' ports, in pool slots that packets which left or were dropped had used. Those
    // frames are not packets the chip numbered: their ports show tx_busy with tx_pkt 0.
    let mut s = IncastScenario {
        senders: 4,
        frame_bytes: 1500,
        duration_cycles: 12_000,
        ..IncastScenario::default()
    };
    s.params.tm.pfc_lossless_classes = 1;
    s.params.tm.pfc_xoff_cells = 200;
    s.params.tm.pfc_xon_cells = 100;
    s.params.tm.pfc_headroom_cells = 50;
    s.params.tm.queue_limit_cells = Some(100);
    let (bytes, _, _) = traced_run_of(&s, TraceFilter::parse("chip.port*.**").unwrap());
    let dump = parse_dump(&bytes);
    let mut pfc_frames = 0;
    for port in [
        "chip.port10",
        "chip.port136",
        "chip.port264",
        "chip.port392",
    ] {
        let busy = &dump[&format!("{port}.tx_busy")];
        pfc_frames += busy.iter().filter(|(_, v)| v == "1").count();
        let shown: Vec<&(Cycle, String)> = dump[&format!("{port}.tx_pkt")]
            .iter()
            .filter(|(_, v)| v != "0")
            .collect();
        assert!(shown.is_empty(), "{port}: {shown:?}");
    }
    assert!(pfc_frames >= 4, "{pfc_frames}");
}
