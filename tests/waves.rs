//! Waveforms: the dump says what the model did, cycle for cycle, and GTKWave's own tools
//! accept it.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use t2_clock::Cycle;
use t2_testbench::{Host, Stepping};
use t2_waves::{TraceFilter, Value};
use t2sim::scenario::{IncastScenario, WaveRequest};
use t2sim::Chip;
use vcd::{Command, ScopeItem};

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Every change in a dump: path -> [(cycle, value as text)], the cycle read from `chip.cycle`.
fn parse_dump(bytes: &[u8]) -> BTreeMap<String, Vec<(Cycle, String)>> {
    let mut parser = vcd::Parser::new(io::BufReader::new(bytes));
    let header = parser.parse_header().unwrap();
    let mut names = BTreeMap::new();
    fn walk(items: &[ScopeItem], prefix: &str, names: &mut BTreeMap<vcd::IdCode, String>) {
        for item in items {
            match item {
                ScopeItem::Scope(s) => walk(&s.items, &format!("{prefix}{}.", s.identifier), names),
                ScopeItem::Var(v) => {
                    names.insert(v.code, format!("{prefix}{}", v.reference));
                }
                _ => {}
            }
        }
    }
    walk(&header.items, "", &mut names);
    let mut out: BTreeMap<String, Vec<(Cycle, String)>> = BTreeMap::new();
    let mut cycle = 0;
    for cmd in parser {
        let (id, text) = match cmd.unwrap() {
            Command::ChangeScalar(id, v) => (id, v.to_string()),
            Command::ChangeVector(id, v) => {
                let n = v
                    .iter()
                    .fold(0u64, |acc, b| acc << 1 | (b == vcd::Value::V1) as u64);
                (id, n.to_string())
            }
            Command::ChangeString(id, s) => (id, s),
            _ => continue,
        };
        let name = names[&id].clone();
        if name == "chip.cycle" {
            cycle = text.parse().unwrap();
        }
        out.entry(name).or_default().push((cycle, text));
    }
    out
}

/// The value of `path` at the end of `cycle`.
fn at(dump: &BTreeMap<String, Vec<(Cycle, String)>>, path: &str, cycle: Cycle) -> String {
    dump[path]
        .iter()
        .rev()
        .find(|(c, _)| *c <= cycle)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("{path} has no value at {cycle}"))
}

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
    let buf = Shared::default();
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
    assert_eq!(at(&dump, "chip.pipe0.ingress.stage00.pkt_id", stage0), "0");
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
    let q = "chip.tm.pipe0.port0.q0.depth_cells";
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
    assert_eq!(at(&dump, "chip.port0.tx_busy", mac_start - 1), "0");
    assert_eq!(at(&dump, "chip.port0.tx_busy", mac_start), "1");
    assert_eq!(at(&dump, "chip.port0.tx_busy", mac_start + 179), "1");
    assert_eq!(at(&dump, "chip.port0.tx_busy", mac_start + 180), "0");
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
            filter: TraceFilter::parse(t2sim::trace::DEFAULT_TRACE).unwrap(),
        }),
        ..IncastScenario::default()
    };
    let summary = s.run().unwrap();
    assert!(summary.traced_signals.unwrap() > 10);
    let gtkw = std::fs::read_to_string(dir.join("incast.gtkw")).unwrap();
    assert!(gtkw.contains(&format!("[dumpfile] \"{}\"", vcd.display())));
    assert!(gtkw.contains("chip.tm.pipe0.port0.depth_cells[18:0]"));
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
    let default = TraceFilter::parse(t2sim::trace::DEFAULT_TRACE).unwrap();
    assert!(!default.selects("chip.ghost.pipe0.valid"));
    // The save file shows each TM pipe's updates as a group.
    let dir = temp_dir("ghost");
    let vcd = dir.join("ghost.vcd");
    let with_file = IncastScenario {
        waves: Some(WaveRequest {
            vcd: vcd.clone(),
            filter: TraceFilter::parse("chip.ghost.**").unwrap(),
        }),
        ..s
    };
    assert_eq!(with_file.run().unwrap().traced_signals, Some(4 * 5));
    let gtkw = std::fs::read_to_string(dir.join("ghost.gtkw")).unwrap();
    assert!(gtkw.contains("@800200\n-ghost.pipe0\n"), "{gtkw}");
    assert!(gtkw.contains("chip.ghost.pipe0.qlength[17:0]"), "{gtkw}");
    std::fs::remove_dir_all(&dir).unwrap();
}
