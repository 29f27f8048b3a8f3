//! What a scenario run measured ([`RunResults`]), as the terminal summary and as the files
//! `summary.json`, `flows.csv`, `links.csv` and `queues.csv`.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use t2_clock::Cycle;
use t2_testbench::host_feature::HostCounters;
use t2_testbench::metrics::{BucketStats, Drops, FlowRecord};
use t2_testbench::transport::SENT_TTL;

/// One egress queue's depth at a sample time (only non-empty queues are listed).
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSample {
    pub time_ns: u64,
    /// Index of the switch (`switch{i}`).
    pub switch: usize,
    pub port: usize,
    pub queue: usize,
    pub depth_cells: u32,
}

/// Pause frames one node sent and received. Chips send and receive PFC; hosts receive PFC
/// (only when honouring it; otherwise such frames count as foreign) and the pause frames of
/// the schemes ([`PauseKind`], in `crate::schemes::PAUSES`: BFC's, with its host feature).
/// Written as `pfc_sent`, `pfc_received`, then each scheme kind's count under its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PauseCounts {
    pub pfc_sent: u64,
    pub pfc_received: u64,
    /// The kinds of scheme pause frame counted (`crate::schemes::PAUSES`).
    pub kinds: &'static [PauseKind],
    /// The schemes' pause frames received, by kind in the order of `kinds`.
    pub received: [u64; MAX_PAUSE_KINDS],
}

/// The most kinds of scheme pause frame the results count.
pub const MAX_PAUSE_KINDS: usize = 4;

impl PauseCounts {
    /// No frame of any kind.
    pub fn is_empty(&self) -> bool {
        self.pfc_sent == 0 && self.pfc_received == 0 && self.scheme_received() == 0
    }

    /// The schemes' pause frames received, all kinds.
    pub fn scheme_received(&self) -> u64 {
        self.received.iter().sum()
    }

    /// The count of the scheme pause frame called `name` (its [`PauseKind::name`]).
    pub fn received_as(&self, name: &str) -> Option<u64> {
        let k = self.kinds.iter().position(|p| p.name == name)?;
        Some(self.received[k])
    }
}

impl Serialize for PauseCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let kinds = self.kinds;
        let mut m = s.serialize_struct("PauseCounts", 2 + kinds.len())?;
        m.serialize_field("pfc_sent", &self.pfc_sent)?;
        m.serialize_field("pfc_received", &self.pfc_received)?;
        for (kind, n) in kinds.iter().zip(self.received) {
            m.serialize_field(kind.name, &n)?;
        }
        m.end()
    }
}

/// A pause frame of a scheme's (BFC's), counted beside PFC's in the results' pause frames:
/// registered in `crate::schemes::PAUSES`.
pub struct PauseKind {
    /// Its count in `pause_frames` (`summary.json`): frames received.
    pub name: &'static str,
    /// How plots say it (`BFC received`).
    pub label: &'static str,
    /// The count a host's feature keeps of the frames it received ([`HostCounters`]).
    pub host_count: &'static str,
    /// The frames a switch received: those its program acted on and consumed.
    pub at_switch: fn(&crate::chip::ChipCounters) -> u64,
}

impl PartialEq for PauseKind {
    fn eq(&self, other: &PauseKind) -> bool {
        self.name == other.name
    }
}

impl Eq for PauseKind {}

impl std::fmt::Debug for PauseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// How a scheme whose switches send frames back toward their sources (PABO's bounces)
/// reports them: registered in `crate::schemes::BOUNCES`.
pub struct BounceReport {
    /// What a host's counters say of the bounced data frames it received.
    pub arrivals: fn(&HostCounters) -> BounceArrivals,
    /// The host count of bounced frames a source sent again.
    pub resent: &'static str,
    /// The program's register array that counts the bounces each switch decided.
    pub counter: &'static str,
}

/// The results of a run, as written to `summary.json`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct RunResults {
    pub name: String,
    pub seed: u64,
    pub hosts: usize,
    pub switches: usize,
    pub duration_cycles: Cycle,
    pub end_cycle: Cycle,
    pub flows: usize,
    pub completed: usize,
    /// Payload offered over the arrival window, as a share of the hosts' links.
    pub offered_load: f64,
    /// The payload of the flows that cross the core, as a share of the core's capacity
    /// (`Shape::core_links`); none without a core.
    pub offered_core_load: Option<f64>,
    /// What `workload.load` was a share of.
    pub load_on: t2_testbench::workload::LoadOn,
    /// Who drew the arrivals (none without CDF traffic).
    pub arrival_process: Option<t2_testbench::workload::ArrivalScope>,
    /// The ideal FCT the slowdowns divide by.
    pub ideal: crate::scenario::topology::IdealFct,
    pub buckets: Vec<BucketStats>,
    /// The same statistics by flow-size decile of the flows run (BFC's paper's x axis:
    /// `metrics::by_size_percentile` at `metrics::DECILES`).
    pub size_deciles: Vec<BucketStats>,
    /// Drops by reason over the whole network.
    pub drops: Drops,
    /// The same drops by where they happened (`switch{i}`, `host{i}`, `network`), places
    /// with none left out.
    pub drops_by_node: BTreeMap<String, Drops>,
    pub timeouts: u64,
    pub retransmitted_segments: u64,
    pub duplicate_segments: u64,
    pub reordered_segments: u64,
    pub mean_reorder_entropy: f64,
    /// Frames the hosts put on links, and where each one is at the end.
    pub frames: FrameCensus,
    /// Queue-depth sampling period, ns, if sampled.
    pub queue_sample_ns: Option<u64>,
    /// Pause frames by node (`switch{i}`, `host{i}`), nodes with none left out.
    pub pause_frames: BTreeMap<String, PauseCounts>,
    /// Packets the switches' recirculation ports fed back into their ingress.
    pub recirculated: u64,
    /// `[[control]]` operations the switches refused when they landed (`cycle N: chip
    /// switch{i}: ...`), in switch then time order; left out when there are none. A run with any is an error
    /// unless the file sets `expect_control_errors = true`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub control_errors: Vec<String>,
    /// Signals in the VCD dump, when `output.vcd` asked for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traced_signals: Option<usize>,
    /// The bounces, when any frame was bounced (left out otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounces: Option<BounceCounts>,
    /// Capture files written (`output.pcap`); listed by the command, not in summary.json.
    #[serde(skip)]
    pub pcap_files: Vec<crate::capture::CaptureFile>,
    #[serde(skip)]
    pub queue_samples: Vec<QueueSample>,
    /// Pause frames sent so far (as `pause_frames` counts them, summed) at each queue
    /// sampling instant: `(time_ns, frames)`.
    #[serde(skip)]
    pub pause_samples: Vec<(u64, u64)>,
    #[serde(skip)]
    pub records: Vec<FlowRecord>,
    #[serde(skip)]
    pub reorder_entropy: BTreeMap<u32, f64>,
    #[serde(skip)]
    pub links: Vec<LinkRow>,
}

/// The bounces (PABO's: [`BounceReport`]) as the hosts saw them: data frames that reached
/// their receiver bounced at least once on the way and frames bounced all the way back to
/// their source and sent again.
#[derive(Serialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct BounceCounts {
    /// Data frames the receivers got (duplicates included).
    pub data_frames_received: u64,
    /// Of those, the ones that had been bounced, with their shims' figures.
    pub bounced: BounceArrivals,
    /// Frames that came back to their source and were sent again.
    pub resent_by_sources: u64,
    /// Bounces decided by each switch (`switch{i}`), from the program's register array
    /// that counts them ([`BounceReport::counter`]) summed over pipes; empty when the
    /// program has none.
    pub by_switch: BTreeMap<String, u64>,
}

/// What the receivers saw of the frames a switch had sent back toward their source (PABO's
/// bounces, as its shims say; frames never bounced are not counted here).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BounceArrivals {
    /// Data frames that arrived bounced.
    pub frames: u64,
    /// The sum of their bounce counts `n_p`.
    pub bounces: u64,
    /// The largest `n_p` and `max_hop` (hops back toward the source) among them.
    pub max_n_p: u8,
    pub max_hop: u8,
    /// Every data frame received, bounced or not, by the switch passes it made.
    pub switch_passes: SwitchPasses,
}

/// Data frames by the switch passes they made on their way, bounces and trips back to their
/// source included: `SENT_TTL` less their IPv4 TTL on arrival (every pass lowers it by one;
/// a source resends a bounced frame as it came back). Entry `k` counts the frames that made
/// `k` passes; written as a map of the non-zero entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchPasses(pub [u64; SENT_TTL as usize + 1]);

impl Default for SwitchPasses {
    fn default() -> SwitchPasses {
        SwitchPasses([0; SENT_TTL as usize + 1])
    }
}

impl SwitchPasses {
    /// A data frame that arrived with IPv4 TTL `ttl`.
    pub fn add(&mut self, ttl: u8) {
        // A TTL above the one sent cannot come from this transport's hosts; count it as 0.
        self.0[SENT_TTL.saturating_sub(ttl) as usize] += 1;
    }

    fn merge(&mut self, o: &SwitchPasses) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}

impl Serialize for SwitchPasses {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for (passes, &n) in self.0.iter().enumerate().filter(|(_, &n)| n > 0) {
            m.serialize_entry(&passes, &n)?;
        }
        m.end()
    }
}

impl BounceArrivals {
    /// Adds another host's counts.
    pub fn merge(&mut self, o: BounceArrivals) {
        self.frames += o.frames;
        self.bounces += o.bounces;
        self.max_n_p = self.max_n_p.max(o.max_n_p);
        self.max_hop = self.max_hop.max(o.max_hop);
        self.switch_passes.merge(&o.switch_passes);
    }
}

impl BounceCounts {
    /// Share of the data frames received that had been bounced at least once.
    pub fn share(&self) -> f64 {
        if self.data_frames_received == 0 {
            0.0
        } else {
            self.bounced.frames as f64 / self.data_frames_received as f64
        }
    }
}

/// Where every frame the hosts sent is: received by a host, dropped (counted with a reason),
/// inside a chip, or on a link. `unaccounted` must be 0.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameCensus {
    pub sent: u64,
    pub received: u64,
    pub dropped: u64,
    pub inside_chips: u64,
    pub on_links: u64,
    pub unaccounted: i64,
}

/// One direction of one link: what left `node` port `port`.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct LinkRow {
    pub node: String,
    pub port: usize,
    pub frames: u64,
    pub bytes: u64,
    pub gbps: f64,
}

impl RunResults {
    /// The terminal summary.
    pub fn text(&self, clock: t2_clock::Clock) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "scenario         {} (seed {})", self.name, self.seed);
        let _ = writeln!(
            s,
            "network          {} hosts, {} switches",
            self.hosts, self.switches
        );
        let _ = writeln!(
            s,
            "simulated        {} ns (flows start in the first {} ns)",
            clock.format_ns(self.end_cycle),
            clock.format_ns(self.duration_cycles)
        );
        let _ = writeln!(
            s,
            "flows            {} completed of {}, offered load {:.3}",
            self.completed, self.flows, self.offered_load
        );
        let core = match self.offered_core_load {
            Some(c) => format!(", {c:.3} of the core by the flows crossing it"),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "definitions      load on {} links{core}; arrivals {}; ideal FCT {}",
            match self.load_on {
                t2_testbench::workload::LoadOn::Host => "host",
                t2_testbench::workload::LoadOn::Core => "core",
            },
            match self.arrival_process {
                Some(t2_testbench::workload::ArrivalScope::PerHost) => "per host",
                Some(t2_testbench::workload::ArrivalScope::Global) => "one global process",
                None => "given",
            },
            self.ideal.name()
        );
        let _ = writeln!(
            s,
            "retransmission   {} timeouts, {} segments resent, {} duplicates received",
            self.timeouts, self.retransmitted_segments, self.duplicate_segments
        );
        let _ = writeln!(
            s,
            "reordering       {} segments displaced, mean entropy {:.4}",
            self.reordered_segments, self.mean_reorder_entropy
        );
        if let Some(b) = &self.bounces {
            let _ = writeln!(
                s,
                "bounces          {} of {} data frames arrived bounced ({:.2}%), n_p {} in all, max {}; {} resent by their sources",
                b.bounced.frames,
                b.data_frames_received,
                100.0 * b.share(),
                b.bounced.bounces,
                b.bounced.max_n_p,
                b.resent_by_sources
            );
        }
        if !self.control_errors.is_empty() {
            let _ = writeln!(
                s,
                "control          {} operations refused when they landed",
                self.control_errors.len()
            );
            for e in &self.control_errors {
                let _ = writeln!(s, "  {e}");
            }
        }
        let f = &self.frames;
        let _ = writeln!(
            s,
            "frames           {} sent = {} received + {} dropped + {} in chips + {} on links ({} unaccounted)",
            f.sent, f.received, f.dropped, f.inside_chips, f.on_links, f.unaccounted
        );
        let _ = writeln!(s, "drops            {}", self.drops.total());
        for (reason, n) in &self.drops.0 {
            let _ = writeln!(s, "  {reason:<30} {n}");
        }
        for (node, d) in &self.drops_by_node {
            let by: Vec<String> = d.0.iter().map(|(r, n)| format!("{r} {n}")).collect();
            let _ = writeln!(s, "  at {node:<27} {}", by.join(", "));
        }
        let _ = writeln!(
            s,
            "slowdown by size  flows  done    mean     p50     p95     p99"
        );
        for b in &self.buckets {
            let label = match (b.lower, b.upper) {
                (0, None) => "all".to_string(),
                (lo, None) => format!(">= {lo} B"),
                (lo, Some(hi)) => format!("{lo}..{hi} B"),
            };
            let _ = writeln!(
                s,
                "  {label:<16} {:>5} {:>5} {:>7} {:>7} {:>7} {:>7}",
                b.flows,
                b.completed,
                opt(b.mean_slowdown),
                opt(b.p50_slowdown),
                opt(b.p95_slowdown),
                opt(b.p99_slowdown)
            );
        }
        let mut fcts: Vec<Cycle> = self.records.iter().filter_map(|r| r.fct()).collect();
        fcts.sort_unstable();
        if !fcts.is_empty() {
            // Nearest rank: the p-th percentile of n values is the ceil(p x n / 100)-th.
            let rank = |p: usize| fcts[(p * fcts.len()).div_ceil(100).max(1) - 1];
            let (p50, p99, max) = (rank(50), rank(99), fcts[fcts.len() - 1]);
            let _ = writeln!(
                s,
                "fct              p50 / p99 / max {p50} / {p99} / {max} cycles = {} / {} / {} ns",
                clock.format_ns(p50),
                clock.format_ns(p99),
                clock.format_ns(max)
            );
        }
        let ports: Vec<&LinkRow> = self
            .links
            .iter()
            .filter(|l| l.node.starts_with("switch") && l.frames > 0)
            .collect();
        if !ports.is_empty() {
            let _ = writeln!(s, "throughput       switch ports, sent over the run");
            for l in ports {
                let _ = writeln!(
                    s,
                    "  {:<16} {:>9.3} Gb/s  {:>8} frames",
                    format!("{}:{}", l.node, l.port),
                    l.gbps,
                    l.frames
                );
            }
        }
        s
    }

    /// Writes `summary.json`, `flows.csv` and `links.csv` into `dir`, and `queues.csv` and
    /// `pauses.csv` (pause frames so far at each sampling instant) when
    /// queue depths were sampled.
    pub fn write(&self, dir: &Path, clock: t2_clock::Clock) -> Result<Vec<PathBuf>, String> {
        let mut written = Vec::new();
        let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let json = serde_json::to_string_pretty(self).expect("results serialize");
        let p = dir.join("summary.json");
        std::fs::write(&p, json + "\n").map_err(|e| io(&p, e))?;
        written.push(p);
        let mut csv = String::from(
            "id,src,dst,size_bytes,start_cycle,finish_cycle,fct_cycles,ideal_cycles,slowdown,throughput_gbps,reorder_entropy,start_ns,finish_ns,fct_ns,ideal_ns\n",
        );
        for r in &self.records {
            let cell = |v: Option<String>| v.unwrap_or_default();
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                r.id,
                r.src,
                r.dst,
                r.size_bytes,
                r.start,
                cell(r.finish.map(|f| f.to_string())),
                cell(r.fct().map(|f| f.to_string())),
                r.ideal,
                cell(r.slowdown().map(|x| format!("{x:.4}"))),
                cell(r.throughput_bps(clock).map(|x| format!("{:.4}", x / 1e9))),
                cell(self.reorder_entropy.get(&r.id).map(|x| format!("{x:.6}"))),
                // ns = cycles x 1e9 / clock_hz, to the picosecond (rounded to nearest).
                clock.format_ns(r.start),
                cell(r.finish.map(|f| clock.format_ns(f))),
                cell(r.fct().map(|f| clock.format_ns(f))),
                clock.format_ns(r.ideal),
            );
        }
        let p = dir.join("flows.csv");
        std::fs::write(&p, csv).map_err(|e| io(&p, e))?;
        written.push(p);
        let mut csv = String::from("node,port,frames,bytes,gbps\n");
        for l in &self.links {
            let _ = writeln!(
                csv,
                "{},{},{},{},{:.4}",
                l.node, l.port, l.frames, l.bytes, l.gbps
            );
        }
        let p = dir.join("links.csv");
        std::fs::write(&p, csv).map_err(|e| io(&p, e))?;
        written.push(p);
        if self.queue_sample_ns.is_some() {
            // Rows at multiples of the period; a queue without a row was empty then.
            let mut csv = String::from("time_ns,node,port,queue,depth_cells\n");
            for q in &self.queue_samples {
                let _ = writeln!(
                    csv,
                    "{},switch{},{},{},{}",
                    q.time_ns, q.switch, q.port, q.queue, q.depth_cells
                );
            }
            let p = dir.join("queues.csv");
            std::fs::write(&p, csv).map_err(|e| io(&p, e))?;
            written.push(p);
            let mut csv = String::from("time_ns,pause_frames_so_far\n");
            for (time, frames) in &self.pause_samples {
                let _ = writeln!(csv, "{time},{frames}");
            }
            let p = dir.join("pauses.csv");
            std::fs::write(&p, csv).map_err(|e| io(&p, e))?;
            written.push(p);
        }
        Ok(written)
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}"))
}
