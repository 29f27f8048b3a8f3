//! Reading dumps and save files back, and asking GTKWave itself what it shows: shared by the
//! waveform tests and by each scheme's story test.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use t2_clock::Cycle;
use t2sim::scenario::{RunResults, ScenarioFile};
use vcd::{Command, ScopeItem};

/// A dump destination in memory that the test keeps a handle on after the chip took it.
#[derive(Clone, Default)]
pub struct SharedBytes(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl io::Write for SharedBytes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Every change in a dump: path -> [(cycle, value as text)], the cycle read from `chip.cycle`.
pub type Dump = BTreeMap<String, Vec<(Cycle, String)>>;

pub fn parse_dump(bytes: &[u8]) -> Dump {
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
    let mut out: Dump = BTreeMap::new();
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
pub fn at(dump: &Dump, path: &str, cycle: Cycle) -> String {
    dump[path]
        .iter()
        .rev()
        .find(|(c, _)| *c <= cycle)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("{path} has no value at {cycle}"))
}

/// The numeric changes of `path` as (cycle, value).
pub fn numbers(dump: &Dump, path: &str) -> Vec<(Cycle, u64)> {
    dump.get(path)
        .unwrap_or_else(|| panic!("the dump has no {path}"))
        .iter()
        .map(|(c, v)| (*c, v.parse().unwrap()))
        .collect()
}

/// The first cycle `path` takes a value for which `pred` holds, with that value.
pub fn first(dump: &Dump, path: &str, pred: impl Fn(u64) -> bool) -> Option<(Cycle, u64)> {
    numbers(dump, path).into_iter().find(|&(_, v)| pred(v))
}

/// A save file's groups in order: (title, the variable names of its traces).
pub fn save_file_groups(save: &str) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut open = false;
    let mut flags = "";
    for line in save.lines() {
        if let Some(f) = line.strip_prefix('@') {
            flags = f;
        } else if let Some(title) = line.strip_prefix('-').filter(|t| !t.is_empty()) {
            // A group opens with flags 800200 and closes with 1000200, both naming it.
            open = flags == "800200";
            if open {
                groups.push((title.to_string(), Vec::new()));
            }
        } else if open {
            if let Some((_, name)) = line.strip_prefix("+{").and_then(|l| l.split_once("} ")) {
                groups.last_mut().unwrap().1.push(name.to_string());
            } else if !line.is_empty() && !line.starts_with(['[', '*', '-']) {
                groups.last_mut().unwrap().1.push(line.to_string());
            }
        }
    }
    groups
}

/// Runs GTKWave itself (under Xvfb) on a dump and its save file and lists the traces it
/// shows as (shown name, flags in hex); `None` (with a message) outside CI without GTKWave.
pub fn gtkwave_traces(dir: &Path, vcd: &Path, gtkw: &Path) -> Option<Vec<(String, String)>> {
    let script = dir.join("traces.tcl");
    std::fs::write(
        &script,
        "set n [gtkwave::getTotalNumTraces]\n\
         for {set i 0} {$i < $n} {incr i} {\n\
           puts \"TRACE\\t[gtkwave::getTraceNameFromIndex $i]\\t[format %x [gtkwave::getTraceFlagsFromIndex $i]]\"\n\
         }\n\
         gtkwave::/File/Quit\n",
    )
    .unwrap();
    let out = std::process::Command::new("xvfb-run")
        .args(["-a", "gtkwave", "-S"])
        .arg(&script)
        .arg(vcd)
        .arg(gtkw)
        .output();
    match out {
        Ok(out) if out.status.success() || !out.stdout.is_empty() => Some(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| l.strip_prefix("TRACE\t"))
                .map(|l| {
                    let (name, flags) = l.rsplit_once('\t').unwrap();
                    (name.to_string(), flags.to_string())
                })
                .collect(),
        ),
        Ok(out) if std::env::var_os("CI").is_some() => {
            panic!("gtkwave failed: {}", String::from_utf8_lossy(&out.stderr))
        }
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("xvfb-run and gtkwave must be installed in CI: {e}")
        }
        _ => {
            eprintln!("SKIPPED: gtkwave under xvfb-run is not available here; .ci/run installs it");
            None
        }
    }
}

/// Asserts that GTKWave shows, in order, every trace of the save file (by its last segment or
/// its alias) with the save file's flags, the cycle counter first, and the blank rows that
/// make analog traces tall. GTKWave silently drops a trace whose name the dump lacks, so this
/// is what proves a save file and its dump agree. Skipped (with a message) without GTKWave
/// outside CI.
pub fn assert_gtkwave_shows_save_file(dir: &Path, vcd: &Path, gtkw: &Path) {
    let Some(shown) = gtkwave_traces(dir, vcd, gtkw) else {
        return;
    };
    let save = std::fs::read_to_string(gtkw).unwrap();
    let expected = t2_waves::gtkw::save_file_traces(&save);
    let signals: Vec<(String, String)> = shown
        .iter()
        .filter(|(n, f)| !n.is_empty() && !f.ends_with("00200"))
        .cloned()
        .collect();
    assert_eq!(signals.len(), expected.len(), "{shown:?}");
    for ((name, flags), (want, want_flags)) in signals.iter().zip(&expected) {
        let leaf = want.rsplit('.').next().unwrap();
        let path = want.split('[').next().unwrap();
        // Aliases: TM totals by their path inside the TM, story traces by their whole path.
        let aliases = [
            path.strip_prefix("chip.tm.").map(|a| a.replace('.', "_")),
            path.strip_prefix("chip.").map(|a| a.replace('.', "_")),
        ];
        assert!(
            name == leaf || aliases.iter().any(|a| a.as_ref() == Some(name)),
            "GTKWave shows {name} where the save file has {want}"
        );
        assert_eq!(flags, want_flags, "{want}");
    }
    assert_eq!(signals[0], ("cycle".to_string(), "24".to_string()));
    let blanks = shown.iter().filter(|(_, f)| f == "20000").count();
    let analog = expected.iter().filter(|(_, f)| f == "8024").count();
    assert_eq!(blanks, analog * (t2_waves::gtkw::ANALOG_ROWS - 1));
}

/// A scheme's story scenario run once: its results, its dump (parsed) and its save file.
pub struct Story {
    pub dir: PathBuf,
    pub vcd: PathBuf,
    pub gtkw: PathBuf,
    pub results: RunResults,
    pub dump: Dump,
    pub groups: Vec<(String, Vec<String>)>,
}

/// Runs `scenarios/<name>.toml` (which must ask for a dump) with its output in a fresh
/// temporary folder.
pub fn run_story(name: &str) -> Story {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    let dir = std::env::temp_dir().join(format!("t2sim-story-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut scenario = ScenarioFile::load(&file).unwrap();
    scenario.set_out_dir(dir.clone());
    let results = scenario.run().unwrap();
    let vcd = scenario
        .waves
        .as_ref()
        .expect("a story asks for a dump")
        .0
        .vcd
        .clone();
    let gtkw = vcd.with_extension("gtkw");
    let dump = parse_dump(&std::fs::read(&vcd).unwrap());
    let groups = save_file_groups(&std::fs::read_to_string(&gtkw).unwrap());
    Story {
        dir,
        vcd,
        gtkw,
        results,
        dump,
        groups,
    }
}
