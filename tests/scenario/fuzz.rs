//! Deterministic, seeded mutation fuzzing on stable Rust, run as ordinary tests for a fixed
//! number of executions: the scenario reader, the program IR reader (with its checks,
//! placement and report), the parameter reader (and a chip built from a valid set), and the
//! packet parsers (the header parser, the built-in parser graph's fast path against its
//! table walk, and the PFC, BFC and QCN frame codecs), and (issue 30) the `[[pktgen]]`,
//! `[[control]]` and `[[mirror_session]]` readers with the chip they configure, pcapng
//! reading with its option blocks and the replay schedule, sweep-merge's reading of shard
//! folders, and the trace glob matcher; and (issue 55) the STF and `--entries` readers
//! against the corpus programs. Each target starts from its corpus in
//! `tests/fuzz_corpus/<target>/` and must never panic.
//!
//! `T2SIM_FUZZ_EXECS=n` sets the executions per target (default 2,000 in a debug build);
//! `T2SIM_FUZZ_SEED=s` changes the seed. A panicking input is written to
//! `target/fuzz-crashes/` and the test fails naming it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use t2_pipeline::ir::Program;
use t2_pipeline::{headers, PipelineParams};
use t2_testbench::Rng;
use t2sim::scenario::IncastScenario;
use t2sim::scenario::{ScenarioFile, ScenarioText};
use t2sim::Tofino2Params;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = root().join("tests/fuzz_corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let v: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert!(!v.is_empty(), "{} is empty", dir.display());
    v
}

fn execs() -> u64 {
    std::env::var("T2SIM_FUZZ_EXECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

fn seed() -> u64 {
    std::env::var("T2SIM_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7f2_5eed)
}

/// Values that break careless arithmetic, as text.
const INTERESTING: [&str; 16] = [
    "0",
    "1",
    "-1",
    "2",
    "255",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e18",
    "-0.0",
    "1.5",
    "nan",
    "\"\"",
];

/// Bytes that name frame types, for binary inputs (EtherTypes at offset 12).
const ETHERTYPES: [u16; 6] = [0x0800, 0x8100, 0x8808, 0x88B5, 0x22E9, 0x86DD];

struct Mutator {
    rng: Rng,
    text: bool,
}

impl Mutator {
    fn below(&mut self, n: usize) -> usize {
        self.rng.below(n.max(1) as u64) as usize
    }

    /// One to four mutations of `input` (another corpus entry may be spliced in).
    fn mutate(&mut self, input: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
        let mut b = input.to_vec();
        for _ in 0..1 + self.below(4) {
            let ops = if self.text { 9 } else { 8 };
            match self.below(ops) {
                0 if !b.is_empty() => {
                    let i = self.below(b.len());
                    b[i] ^= 1 << self.below(8);
                }
                1 if !b.is_empty() => {
                    let i = self.below(b.len());
                    b[i] = self.rng.next_u64() as u8;
                }
                2 => {
                    let i = self.below(b.len() + 1);
                    let n = 1 + self.below(8);
                    let bytes: Vec<u8> = (0..n).map(|_| self.rng.next_u64() as u8).collect();
                    b.splice(i..i, bytes);
                }
                3 if !b.is_empty() => {
                    let i = self.below(b.len());
                    let n = 1 + self.below((b.len() - i).min(64));
                    b.drain(i..i + n);
                }
                4 if !b.is_empty() => {
                    let i = self.below(b.len());
                    let n = 1 + self.below((b.len() - i).min(64));
                    let copy = b[i..i + n].to_vec();
                    let at = self.below(b.len() + 1);
                    b.splice(at..at, copy);
                }
                5 => {
                    let other = &corpus[self.below(corpus.len())];
                    if !other.is_empty() {
                        let i = self.below(other.len());
                        let n = 1 + self.below((other.len() - i).min(256));
                        let at = self.below(b.len() + 1);
                        let end = (at + n).min(b.len());
                        b.splice(at..end, other[i..i + n].iter().copied());
                    }
                }
                6 => {
                    let n = self.below(b.len() + 1);
                    b.truncate(n);
                }
                7 if !self.text && b.len() >= 14 => {
                    let t = ETHERTYPES[self.below(ETHERTYPES.len())].to_be_bytes();
                    b[12..14].copy_from_slice(&t);
                }
                8 => self.replace_number(&mut b),
                _ => {}
            }
        }
        b
    }

    /// Replaces one run of digits with an interesting value.
    fn replace_number(&mut self, b: &mut Vec<u8>) {
        let runs: Vec<(usize, usize)> = {
            let mut v = Vec::new();
            let mut i = 0;
            while i < b.len() {
                if b[i].is_ascii_digit() {
                    let s = i;
                    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                        i += 1;
                    }
                    v.push((s, i));
                } else {
                    i += 1;
                }
            }
            v
        };
        if runs.is_empty() {
            return;
        }
        let (s, e) = runs[self.below(runs.len())];
        let with = INTERESTING[self.below(INTERESTING.len())];
        b.splice(s..e, with.bytes());
    }
}

/// Runs `target` on `n` mutated inputs (and the corpus itself); returns (executions, panics).
fn fuzz(name: &str, text: bool, run: impl Fn(&[u8])) -> (u64, u64) {
    let corpus = corpus(name);
    let n = execs();
    let mut m = Mutator {
        rng: Rng::new(seed()).fork(name.len() as u64 * 1_000 + name.as_bytes()[0] as u64),
        text,
    };
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut panics = Vec::new();
    let mut execs = 0;
    let inputs = corpus.clone().into_iter().chain((0..n).map(|_| {
        let base = corpus[m.below(corpus.len())].clone();
        m.mutate(&base, &corpus)
    }));
    // The input being run, so that one that aborts the process (not a panic: an allocation
    // failure) is left behind to look at.
    let current = root().join(format!("target/fuzz-current-{name}"));
    for input in inputs {
        execs += 1;
        // Long runs (T2SIM_FUZZ_EXECS in the millions) say how far they got, so that one
        // stopped early still gives its count.
        if execs % 100_000 == 0 {
            eprintln!(
                "fuzz {name}: {execs} executions so far, {} panics",
                panics.len()
            );
        }
        let _ = std::fs::write(&current, &input);
        if catch_unwind(AssertUnwindSafe(|| run(&input))).is_err() {
            panics.push(input);
        }
    }
    std::panic::set_hook(hook);
    if let Some(first) = panics.first() {
        let dir = root().join("target/fuzz-crashes");
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join(format!("{name}-{}", panics.len()));
        std::fs::write(&f, first).unwrap();
        // Show the panic itself.
        let _ = catch_unwind(AssertUnwindSafe(|| run(first)));
        panic!(
            "{name}: {} of {execs} executions panicked; the first input is in {}",
            panics.len(),
            f.display()
        );
    }
    println!("fuzz {name}: {execs} executions, 0 panics");
    (execs, panics.len() as u64)
}

#[test]
fn fuzz_the_scenario_reader() {
    let base = root().join("tests/fuzz_corpus/scenario");
    let (execs, panics) = fuzz("scenario", true, |b| {
        let source = ScenarioText {
            text: String::from_utf8_lossy(b).into_owned(),
            shown: "fuzz.toml".to_string(),
            base: base.clone(),
        };
        let _ = ScenarioFile::from_text(&source, &[]);
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

#[test]
fn fuzz_the_program_reader() {
    let params = Tofino2Params::default();
    let (execs, panics) = fuzz("program", true, |b| {
        let text = String::from_utf8_lossy(b);
        let Ok(program) = Program::from_json(&text) else {
            return;
        };
        let Ok(checked) = t2_pipeline::check::check_with(&program, &params.pipeline.phv) else {
            return;
        };
        let budget = t2_pipeline::place::Budget::tofino2();
        let placed = t2_pipeline::place::place(&checked, &budget);
        let report = t2_pipeline::report::Report::new(
            &checked,
            &placed,
            &budget,
            &params.pipeline,
            params.clock_hz,
        );
        let _ = report.to_string();
        let _ = t2sim::headroom::Headroom::new(&checked, &params).to_string();
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

#[test]
fn fuzz_the_p4_front_end() {
    // Preprocessed programs (cpp's line markers kept): the lexer, parser, type checks and
    // lowering, then the IR checks; no `cpp` per execution.
    let (execs, panics) = fuzz("p4", true, |b| {
        let text = String::from_utf8_lossy(b);
        let source = t2_pipeline::p4::preprocess::Source::plain("fuzz.p4", &text);
        let _ = t2_pipeline::p4::compile_source(&source, "fuzz");
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

/// The corpus programs that have STF tests, compiled once: (name, program).
fn stf_programs() -> Vec<(String, t2_pipeline::p4::Compiled)> {
    let dir = root().join("programs/p4");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().into_string().unwrap();
            n.strip_suffix(".stf").map(str::to_string)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let c = t2sim::stf::load(&dir.join(format!("{n}.p4")), &[], &[]).unwrap();
            (n, c)
        })
        .collect()
}

/// The program an STF or entries input is read against: the one its first line names
/// (`# program: NAME`, as every seed starts), else one picked by a hash of the input.
fn program_for<'a>(
    programs: &'a [(String, t2_pipeline::p4::Compiled)],
    text: &str,
) -> &'a t2_pipeline::p4::Compiled {
    let named = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# program: "))
        .and_then(|n| programs.iter().find(|p| p.0 == n.trim()));
    match named {
        Some(p) => &p.1,
        None => {
            let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
            });
            &programs[(h % programs.len() as u64) as usize].1
        }
    }
}

#[test]
fn fuzz_the_stf_reader() {
    // Every input is read and staged against its program (`read_stf`); one in 500 of those
    // read without error (and under 4 kB) is also run on the chip, which is too slow to
    // build for every execution.
    let programs = stf_programs();
    let accepted = std::cell::Cell::new(0u64);
    let (execs, panics) = fuzz("stf", true, |b| {
        let text = String::from_utf8_lossy(b);
        let c = program_for(&programs, &text);
        if t2sim::stf::read_stf(c, "fuzz.stf", &text).is_ok() {
            accepted.set(accepted.get() + 1);
            if accepted.get() % 500 == 1 && text.len() < 4096 {
                let _ = t2sim::stf::run_stf(c, "fuzz.stf", &text);
            }
        }
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

#[test]
fn fuzz_the_entries_reader() {
    let programs = stf_programs();
    let (execs, panics) = fuzz("entries", true, |b| {
        let text = String::from_utf8_lossy(b);
        let c = program_for(&programs, &text);
        if let Ok(program) = t2sim::stf::with_entries(c, "fuzz.txt", &text) {
            // What the reader staged must pass the IR checks or fail them cleanly.
            let _ =
                t2_pipeline::check::check_with(&program, &Tofino2Params::default().pipeline.phv);
        }
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

#[test]
fn fuzz_the_parameter_reader() {
    let (execs, panics) = fuzz("params", true, |b| {
        let text = String::from_utf8_lossy(b);
        let Ok(params) = serde_json::from_str::<Tofino2Params>(&text) else {
            return;
        };
        if params.validate().is_err() {
            return;
        }
        // A valid set builds a chip (one sender, a short run's worth of setup).
        let s = IncastScenario {
            params,
            senders: 1,
            duration_cycles: 10,
            ..IncastScenario::default()
        };
        let _ = s.build();
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

#[test]
fn fuzz_the_packet_parsers() {
    let phv_params = PipelineParams::default().phv;
    let graph = t2_pipeline::parser_check::builtin_graph();
    let (execs, panics) = fuzz("packet", false, |b| {
        let _ = headers::parse_frame(b);
        let _ = t2_pipeline::pfc::PfcFrame::parse(b);
        let _ = t2sim::schemes::bfc::wire::BfcPause::parse(b);
        let _ = t2sim::schemes::mice_elephant::qcn::cnm::Cnm::parse(b);
        // The built-in graph's fast path and its table walk must agree on every input.
        let mut fast = t2_pipeline::Phv::new(&phv_params);
        let mut walked = t2_pipeline::Phv::new(&phv_params);
        let a = graph.parse_extent(b, &mut fast);
        let w = graph.parse_by_table(b, &mut walked);
        assert_eq!(a.is_ok(), w.is_ok(), "fast path and table walk disagree");
        if a.is_ok() {
            assert!(
                fast == walked,
                "fast path and table walk fill the PHV differently"
            );
        }
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

/// A scratch file or folder of one target, reused by every execution.
fn scratch(name: &str) -> PathBuf {
    let d = root().join(format!("target/fuzz-scratch-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn fuzz_the_control_plane_readers() {
    let base = root().join("tests/fuzz_corpus/control");
    let (execs, panics) = fuzz("control", true, |b| {
        let source = ScenarioText {
            text: String::from_utf8_lossy(b).into_owned(),
            shown: "fuzz.toml".to_string(),
            base: base.clone(),
        };
        // A set-up the reader takes is given to a chip: the chip's own checks must hold too.
        if let Ok(s) = ScenarioFile::from_text(&source, &[]) {
            let _ = s.build();
        }
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

#[test]
fn fuzz_the_pcapng_reader_and_replay() {
    let file = scratch("pcapng").join("in.pcapng");
    let clock = t2_clock::Clock::tofino2();
    let (execs, panics) = fuzz("pcapng", false, |b| {
        std::fs::write(&file, b).unwrap();
        let Ok(frames) = t2sim::capture::read_capture(&file) else {
            return;
        };
        for timing in [
            t2sim::capture::ReplayTiming::Recorded,
            t2sim::capture::ReplayTiming::Paced(10_000_000_000),
        ] {
            let _ = t2sim::capture::replay_schedule(&frames, clock, 100_000_000_000, timing, 7);
        }
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

#[test]
fn fuzz_sweep_merge() {
    let dir = scratch("sweep_merge");
    let (execs, panics) = fuzz("sweep_merge", true, |b| {
        let text = String::from_utf8_lossy(b);
        let (json, csv) = text.split_once("\n--\n").unwrap_or((&text, ""));
        std::fs::write(dir.join("sweep.json"), json).unwrap();
        std::fs::write(dir.join("sweep.csv"), csv).unwrap();
        if t2sim::study::sweep::Sweep::read(&dir).is_ok() {
            if let Ok(m) = t2sim::study::sweep::merge(&[&dir]) {
                let _ = m.csv();
            }
        }
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

#[test]
fn fuzz_the_glob_matcher() {
    let (execs, panics) = fuzz("glob", true, |b| {
        let text = String::from_utf8_lossy(b);
        let mut lines = text.lines();
        let Ok(f) = t2_waves::TraceFilter::parse(lines.next().unwrap_or_default()) else {
            return;
        };
        for name in lines {
            let _ = f.selects(name);
        }
    });
    assert_eq!(panics, 0);
    assert!(execs > execs_floor());
}

fn execs_floor() -> u64 {
    execs()
}
