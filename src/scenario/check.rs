//! Checking a scenario file: every key against its range and the chip, with errors that name
//! the file, the key and the problem, before anything is built.

use super::WaveRequest;
use crate::chip::params::Tofino2Params;
use crate::chip::trace::DEFAULT_TRACE;
use crate::scenario::host_keys::HostKeyContext;
use crate::scenario::topology::{CustomShape, IdealFct, Shape, TopologySpec, MAX_SHAPE_KEYS};
use crate::schemes::{self};
use std::path::{Path, PathBuf};
use t2_clock::Clock;
use t2_pipeline::ir::Program;
use t2_testbench::metrics::{self};
use t2_testbench::transport::Congestion;
use t2_testbench::workload::{
    ArrivalScope, Arrivals, CdfTraffic, FlowSpec, Incast, LoadOn, Sampling, SizeCdf, SizeUnit,
    Workload,
};
use t2_testbench::{host_feature, FeatureSpec, Stepping, TransportConfig};
use t2_tm::QueueConfig;
use t2_waves::TraceFilter;

use super::format::*;
use super::*;

/// The queues `[queues]` describes, checked; errors name the key.
fn port_queues(
    q: &QueuesToml,
    params: &Tofino2Params,
    link_bps: u64,
) -> Result<Vec<QueueConfig>, String> {
    let min = params.tm.default_queues_per_port as usize;
    let max = params.tm.queues_per_port_group as usize;
    if !(min..=max).contains(&q.count) {
        return Err(format!(
            "queues.count: {} is outside {min}..={max} (a port's share of its group may be less: \
             the chip says so when it is built)",
            q.count
        ));
    }
    let mut queues = vec![QueueConfig::default(); q.count];
    let mut seen = vec![false; q.count];
    for (k, t) in q.queue.iter().enumerate() {
        let key = format!("queues.queue[{k}]");
        if t.id >= q.count {
            return Err(format!(
                "{key}.id: {} is not a queue of {} (0..={})",
                t.id,
                q.count,
                q.count - 1
            ));
        }
        if std::mem::replace(&mut seen[t.id], true) {
            return Err(format!("{key}.id: queue {} is listed twice", t.id));
        }
        let d = QueueConfig::default();
        let mbps = |m: Option<u64>| m.map(|m| m.saturating_mul(1_000_000));
        let c = QueueConfig {
            priority: t.priority.unwrap_or(d.priority),
            weight: t.weight.unwrap_or(d.weight),
            min_rate_bps: mbps(t.min_rate_mbps),
            max_rate_bps: mbps(t.max_rate_mbps),
            burst_bytes: t.burst_bytes.unwrap_or(d.burst_bytes),
            limit_cells: t.limit_cells,
            pfc_priority: t.pfc_priority,
            app_pool: t.app_pool.unwrap_or(d.app_pool),
        };
        c.validate().map_err(|e| format!("{key}: {e}"))?;
        // A rate above the port's own cannot be given (a guarantee) or reached (a cap).
        for (name, rate) in [
            ("min_rate_mbps", t.min_rate_mbps),
            ("max_rate_mbps", t.max_rate_mbps),
        ] {
            if let Some(m) = rate.filter(|&m| m.saturating_mul(1_000_000) > link_bps) {
                return Err(format!(
                    "{key}.{name}: {m} is above the port's {} Mb/s (topology.link_gbps)",
                    link_bps / 1_000_000
                ));
            }
        }
        queues[t.id] = c;
    }
    Ok(queues)
}

impl ScenarioFile {
    pub(super) fn check(
        raw: ScenarioToml,
        shown: &str,
        base: &Path,
    ) -> Result<ScenarioFile, String> {
        let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
        let mut params = match &raw.params {
            Some(p) => {
                // The size cap first (the parameter reader reads without one); a missing
                // file is the reader's to name.
                if base.join(p).exists() {
                    crate::input::read_text(&base.join(p))
                        .map_err(|e| format!("{shown}: params: {e}"))?;
                }
                Tofino2Params::from_json_file(&base.join(p))
                    .map_err(|e| format!("{shown}: params: {e}"))?
            }
            None => Tofino2Params::default(),
        };
        let (program, p4) = check_program(&raw, shown, base, &params)?;
        let t = &raw.topology;
        check_buffer(t, shown, &mut params)?;
        let port_queues = match &raw.queues {
            Some(q) => Some(
                port_queues(q, &params, t.link_gbps.saturating_mul(1_000_000_000))
                    .map_err(|e| format!("{shown}: {e}"))?,
            ),
            None => None,
        };
        let clock = params.clock();
        check_duration(&raw, shown)?;
        let shape = check_shape(t, shown)?;
        let Some(link_bps) = t.link_gbps.checked_mul(1_000_000_000) else {
            return bad(
                "topology.link_gbps",
                format!("{} is too large", t.link_gbps),
            );
        };
        let mut transport = check_transport(&raw, shown, clock)?;
        let mut host_features = check_host_features(&raw, shown, clock, link_bps)?;
        let applied = apply_scheme(
            &raw,
            shown,
            &mut params,
            &shape,
            link_bps,
            (&mut transport, &mut host_features),
            (program, port_queues),
        )?;
        let SchemeApplied {
            program,
            port_queues,
            scheme,
            recirculation_mirror,
            scheme_chip,
            rdma,
        } = applied;
        transport
            .validate("transport")
            .map_err(|e| format!("{shown}: {e}"))?;
        let compare = check_compare(&raw, shown)?;
        let w = &raw.workload;
        let background = check_background(&raw, shown, base, &shape)?;
        let us = |x: u64| clock.ns_to_cycles_ceil(x.saturating_mul(1000));
        let incast = w.incast.as_ref().map(|i| Incast {
            degree: i.degree,
            size_bytes: i.size_bytes,
            first: us(i.first_us),
            period: us(i.period_us),
        });
        let fixed = w
            .flows
            .iter()
            .map(|f| FlowSpec {
                start: clock.ns_to_cycles_ceil(f.start_ns),
                id: 0,
                src: f.src,
                dst: f.dst,
                size_bytes: f.size_bytes,
            })
            .collect();
        let buckets = raw
            .output
            .buckets
            .clone()
            .unwrap_or_else(|| metrics::DEFAULT_BUCKETS.to_vec());
        if buckets.windows(2).any(|p| p[0] >= p[1]) || buckets.first() == Some(&0) {
            return bad(
                "output.buckets",
                "bounds must be above 0 and increasing".into(),
            );
        }
        let (waves, pcap) = check_output(&raw, shown, base)?;
        let ideal = ideal_of(&raw);
        let topology = TopologySpec {
            shape,
            params,
            link_bps,
            link_delay_ns: t.link_delay_ns,
            transport,
            host_features,
            rdma,
            stepping: if raw.step_every_cycle {
                Stepping::EveryCycle
            } else {
                Stepping::Jump
            },
            program,
        };
        check_sizes(&raw, shown, &topology, background.as_ref(), &waves)?;
        Ok(ScenarioFile {
            source: shown.to_string(),
            params_file: raw
                .params
                .as_ref()
                .map(|p| base.join(p).display().to_string()),
            name: raw.name.clone().unwrap_or_else(|| shown.to_string()),
            seed: raw.seed,
            duration: us(raw.duration_us),
            drain: us(raw.drain_us),
            topology,
            workload: Workload {
                background,
                incast,
                fixed,
            },
            out_dir: raw.output.dir.map(|d| base.join(d)),
            buckets,
            ideal,
            queue_sample_ns: raw.output.queue_sample_ns,
            port_queues,
            recirculation_mirror,
            scheme_chip,
            waves,
            scheme,
            compare,
            control: crate::scenario::control::ControlSetup::new(
                &raw.mirror_session,
                &raw.pktgen,
                &raw.control,
                p4.as_ref(),
                params.clock(),
                (raw.duration_us + raw.drain_us) * 1000,
            )
            .map_err(|e| format!("{shown}: {e}"))?,
            expect_control_errors: raw.expect_control_errors,
            pcap,
            threads: 1,
            vcd_as_written: raw.output.vcd.clone(),
            pcap_dir_given: raw.output.pcap_dir.is_some(),
        })
    }
}

/// Every size against the chip and t2sim's bounds, before anything is built: the topology,
/// the incast and the listed flows against its hosts, the background's expected flow count,
/// and the traced switch.
fn check_sizes(
    raw: &ScenarioToml,
    shown: &str,
    topology: &TopologySpec,
    background: Option<&CdfTraffic>,
    waves: &Option<(WaveRequest, usize)>,
) -> Result<(), String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    if let Err(e) = topology.check() {
        let keys: Vec<String> = e
            .keys
            .split(", ")
            .map(|k| match k {
                "params" => k.to_string(),
                _ => format!("topology.{k}"),
            })
            .collect();
        return bad(&keys.join(", "), e.problem);
    }
    let size = topology.check().expect("checked above");
    let hosts = size.hosts;
    check_incast(raw, shown, hosts)?;
    check_flows(raw, shown, hosts)?;
    if let Some(bg) = background {
        // The expected flow count: hosts x duration / mean gap.
        let mean_bytes = bg.cdf.mean(bg.sampling);
        let seconds = raw.duration_us as f64 / 1e6;
        let capacity = match bg.load_on {
            LoadOn::Host => hosts as f64 * topology.link_bps as f64,
            LoadOn::Core => {
                topology.shape.core_links().unwrap_or(0) as f64 * topology.link_bps as f64
            }
        };
        let expected = seconds * bg.load * capacity / (mean_bytes * 8.0);
        if expected > MAX_FLOWS as f64 / 2.0 {
            return bad(
                "workload.load",
                format!(
                    "{} hosts at load {} for {} us start about {expected:.0} flows of {mean_bytes:.0} B on average; at most {} (shorten duration_us or lower the load)",
                    hosts, bg.load, raw.duration_us, MAX_FLOWS / 2
                ),
            );
        }
    }
    if let Some((_, switch)) = &waves {
        if *switch >= size.switches {
            return bad(
                "output.trace_switch",
                format!(
                    "{switch}, but the topology has {} switches (0..={})",
                    size.switches,
                    size.switches - 1
                ),
            );
        }
    }
    Ok(())
}

/// `topology.buffer_bytes` and `topology.queue_limit_cells` into the chip's parameters.
fn check_buffer(t: &TopologyToml, shown: &str, params: &mut Tofino2Params) -> Result<(), String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    if let Some(bytes) = t.buffer_bytes {
        // The papers' shared buffers (BFC's and the HPCC artifact's 12 MB) in place of
        // Tofino2's 393,216 cells; whole cells, rounded down.
        params.tm.buffer_cells = (bytes / params.tm.cell_bytes as u64).min(u32::MAX as u64) as u32;
        if let Err(e) = params.validate() {
            return bad("topology.buffer_bytes", e.problem);
        }
    }
    if let Some(cells) = t.queue_limit_cells {
        params.tm.queue_limit_cells = Some(cells);
        if let Err(e) = params.validate() {
            return bad("topology.queue_limit_cells", e.problem);
        }
    }
    Ok(())
}

/// `duration_us` and `drain_us` within t2sim's bounds.
fn check_duration(raw: &ScenarioToml, shown: &str) -> Result<(), String> {
    if raw.duration_us == 0 || raw.duration_us > 10_000_000 {
        return Err(format!(
            "{shown}: duration_us: {} is outside 1..=10000000",
            raw.duration_us
        ));
    }
    if raw.drain_us > 10_000_000 {
        return Err(format!(
            "{shown}: drain_us: {} is above 10000000",
            raw.drain_us
        ));
    }
    Ok(())
}

/// What a file's `scheme` (if any) gives the run: the switch program and queues (the file's
/// own without a scheme), the scheme's name and parameters, and its chip set-up.
struct SchemeApplied {
    program: Option<Program>,
    port_queues: Option<Vec<QueueConfig>>,
    scheme: Option<(String, SchemeParams)>,
    recirculation_mirror: Option<(u8, u32)>,
    scheme_chip: Option<schemes::ChipSetup>,
    /// The scheme's RDMA-style NICs, if its hosts have them.
    rdma: Option<t2_testbench::rdma::RdmaConfig>,
}

/// Builds the file's scheme, if it names one, for its network: the scheme's hosts go into
/// `hosts` (transport and host features) and its PFC into `params`; a key the scheme sets
/// itself (`program`, `queues`, a host behaviour) is refused when the file sets it too.
/// Without a scheme, `given` (the file's program and queues) is what runs.
fn apply_scheme(
    raw: &ScenarioToml,
    shown: &str,
    params: &mut Tofino2Params,
    shape: &Shape,
    link_bps: u64,
    hosts: (&mut TransportConfig, &mut Vec<FeatureSpec>),
    given: (Option<Program>, Option<Vec<QueueConfig>>),
) -> Result<SchemeApplied, String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    let (transport, host_features) = hosts;
    let (program, port_queues) = given;
    let t = &raw.topology;
    let tr = &raw.transport;
    match &raw.scheme {
        None => {
            if raw.scheme_params.is_some() {
                return bad("scheme_params", "needs scheme, the scheme they set".into());
            }
            Ok(SchemeApplied {
                program,
                port_queues,
                scheme: None,
                recirculation_mirror: None,
                scheme_chip: None,
                rdma: None,
            })
        }
        Some(name) => {
            let scheme = schemes::find(name).map_err(|e| format!("{shown}: scheme: {e}"))?;
            // The host keys of the schemes' features that a file may not set beside a
            // scheme (the scheme sets its hosts).
            let features = schemes::HOST_KEYS
                .iter()
                .filter(|k| !k.with_scheme)
                .map(|k| (k.key, tr.features.contains_key(k.key)));
            let own = [
                ("program", raw.program.is_some()),
                ("queues", raw.queues.is_some()),
                ("congestion", tr.congestion.is_some()),
                ("honour_pfc", tr.honour_pfc.is_some()),
            ];
            for (key, set) in own.into_iter().chain(features) {
                if set {
                    let key = match key {
                        "program" | "queues" => key.to_string(),
                        _ => format!("transport.{key}"),
                    };
                    return bad(
                        &key,
                        format!("scheme {name} sets it; remove one of the two"),
                    );
                }
            }
            // Without `[scheme_params]`, the scheme's own `[compare.params.NAME]` hold: a
            // sweep over `scheme` runs each scheme as a comparison of the file would.
            let from_compare = raw
                .compare
                .as_ref()
                .and_then(|c| c.params.get(scheme.name))
                .filter(|_| raw.scheme_params.is_none());
            let values = match from_compare {
                Some(set) => scheme
                    .resolve(set)
                    .map_err(|e| format!("{shown}: compare.params.{}.{e}", scheme.name))?,
                None => scheme
                    .resolve(&raw.scheme_params.clone().unwrap_or_default())
                    .map_err(|e| format!("{shown}: scheme_params.{e}"))?,
            };
            let setup = (scheme.build)(
                &values,
                &schemes::Target {
                    params,
                    link_bps,
                    multipath: match *shape {
                        Shape::LeafSpine { spines, .. } => spines > 1,
                        Shape::FatTree { .. } => true,
                        _ => false,
                    },
                },
            );
            setup.hosts.apply(transport, host_features);
            let rdma = setup.hosts.nic(transport);
            if rdma.is_some() && !raw.scheme_overridden {
                refuse_tcp_keys(raw, shown, name)?;
            }
            if let Some(r) = tr.recovery {
                transport.recovery = recovery_of(r);
            }
            if let Some(pfc) = setup.pfc {
                pfc.apply_on_links(&mut params.tm, link_bps, t.link_delay_ns);
                if let Err(e) = params.validate() {
                    return bad("scheme", format!("{name}: {e}"));
                }
            }
            Ok(SchemeApplied {
                program: Some(setup.program),
                port_queues: setup.port_queues,
                scheme: Some((scheme.name.to_string(), values)),
                recirculation_mirror: setup.recirculation_mirror,
                scheme_chip: setup.chip,
                rdma,
            })
        }
    }
}

/// Refuses, for scheme `name` whose hosts are RDMA-style NICs, the `[transport]` keys only
/// the TCP transport reads: the NICs take `mss` and `rto_us` and nothing else, so a run
/// with them was byte for byte a run without them. (Where the command sets the scheme, a
/// comparison or a sweep over `scheme`, they serve the file's other schemes and stay.)
fn refuse_tcp_keys(raw: &ScenarioToml, shown: &str, name: &str) -> Result<(), String> {
    let tr = &raw.transport;
    let set = [
        (
            "window_bytes",
            tr.window_bytes != super::format::default_window(),
        ),
        ("min_rto_us", tr.min_rto_us.is_some()),
        ("recovery", tr.recovery.is_some()),
        ("ack_every", tr.ack_every.is_some()),
        ("delayed_ack_us", tr.delayed_ack_us.is_some()),
        ("pacing", tr.pacing.is_some()),
    ];
    let features = tr.features.keys().map(|k| (k.as_str(), true));
    match set.into_iter().chain(features).find(|k| k.1) {
        Some((key, _)) => Err(format!(
            "{shown}: transport.{key}: scheme {name}'s hosts are RDMA-style NICs, which read \
             transport.mss and transport.rto_us only; the run would ignore this key (remove \
             it; a comparison with TCP schemes may keep it for them)"
        )),
        None => Ok(()),
    }
}

/// The `[compare]` section: the schemes `t2sim compare` runs when the command names none
/// (known, none twice) and their parameters (each a compared scheme's own, in range).
fn check_compare(
    raw: &ScenarioToml,
    shown: &str,
) -> Result<Option<(Vec<String>, SchemeSettings)>, String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    Ok(match &raw.compare {
        None => None,
        Some(c) => {
            if c.schemes.is_empty() {
                return bad("compare.schemes", "names no scheme".into());
            }
            for (i, name) in c.schemes.iter().enumerate() {
                schemes::find(name).map_err(|e| format!("{shown}: compare.schemes[{i}]: {e}"))?;
                if c.schemes[..i].contains(name) {
                    return bad(
                        &format!("compare.schemes[{i}]"),
                        format!("{name} is named twice"),
                    );
                }
            }
            for (name, values) in &c.params {
                if !c.schemes.contains(name) {
                    return bad(
                        &format!("compare.params.{name}"),
                        "not a compared scheme".into(),
                    );
                }
                schemes::find(name)
                    .expect("checked above")
                    .resolve(values)
                    .map_err(|e| format!("{shown}: compare.params.{name}.{e}"))?;
            }
            Some((c.schemes.clone(), c.params.clone()))
        }
    })
}

/// `[workload.incast]` against the network's `hosts` and the run's length and flow bound.
fn check_incast(raw: &ScenarioToml, shown: &str, hosts: usize) -> Result<(), String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    if let Some(i) = &raw.workload.incast {
        if i.degree == 0 || i.degree >= hosts {
            return bad(
                "workload.incast.degree",
                format!(
                    "{} is outside 1..={} (senders into one of the {hosts} hosts)",
                    i.degree,
                    hosts - 1
                ),
            );
        }
        if i.size_bytes == 0 {
            return bad("workload.incast.size_bytes", "must be above 0".into());
        }
        if i.size_bytes > u32::MAX as u64 {
            return bad(
                "workload.incast.size_bytes",
                format!(
                    "{} is above {} (a flow's bytes are counted in 32 bits)",
                    i.size_bytes,
                    u32::MAX
                ),
            );
        }
        if i.first_us >= raw.duration_us {
            return bad(
                "workload.incast.first_us",
                format!(
                    "{} is not within the run's duration_us ({}): no incast would start",
                    i.first_us, raw.duration_us
                ),
            );
        }
        if !(1..=10_000_000).contains(&i.period_us) {
            return bad(
                "workload.incast.period_us",
                format!("{} is outside 1..=10000000", i.period_us),
            );
        }
        let rounds = raw
            .duration_us
            .saturating_sub(i.first_us)
            .div_ceil(i.period_us);
        let flows = rounds.saturating_mul(i.degree as u64);
        if flows > MAX_FLOWS {
            return bad(
                "workload.incast",
                format!(
                    "{rounds} rounds of {} flows are {flows} flows; at most {MAX_FLOWS}",
                    i.degree
                ),
            );
        }
    }
    Ok(())
}

/// `[[workload.flows]]`: each flow between two distinct hosts of the network, of a size
/// counted in 32 bits, starting within the run; at most `MAX_FLOWS` of them.
fn check_flows(raw: &ScenarioToml, shown: &str, hosts: usize) -> Result<(), String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    let w = &raw.workload;
    for (k, f) in w.flows.iter().enumerate() {
        for (key, h) in [("src", f.src), ("dst", f.dst)] {
            if h >= hosts {
                return bad(
                    &format!("workload.flows[{k}].{key}"),
                    format!(
                        "host {h} is not one of the {hosts} hosts (0..={})",
                        hosts - 1
                    ),
                );
            }
        }
        if f.src == f.dst {
            return bad(
                &format!("workload.flows[{k}].dst"),
                format!("host {} sends to itself", f.src),
            );
        }
        if f.size_bytes == 0 {
            return bad(
                &format!("workload.flows[{k}].size_bytes"),
                "must be above 0".into(),
            );
        }
        if f.size_bytes > u32::MAX as u64 {
            return bad(
                &format!("workload.flows[{k}].size_bytes"),
                format!(
                    "{} is above {} (a flow's bytes are counted in 32 bits)",
                    f.size_bytes,
                    u32::MAX
                ),
            );
        }
        if f.start_ns >= raw.duration_us * 1000 {
            return bad(
                &format!("workload.flows[{k}].start_ns"),
                format!(
                    "{} is not within the run's duration_us ({} ns): the flow would never start",
                    f.start_ns,
                    raw.duration_us * 1000
                ),
            );
        }
    }
    if w.flows.len() as u64 > MAX_FLOWS {
        return bad(
            "workload.flows",
            format!("{} flows; at most {MAX_FLOWS}", w.flows.len()),
        );
    }
    Ok(())
}

/// The program key: a JSON or P4 program file, read and checked now so that its errors name
/// the file (a scheme brings its own program instead).
fn check_program(
    raw: &ScenarioToml,
    shown: &str,
    base: &Path,
    params: &Tofino2Params,
) -> Result<(Option<Program>, Option<t2_pipeline::p4::Compiled>), String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    if let (Some(name), Some(_)) = (&raw.scheme, &raw.program) {
        return bad(
            "program",
            format!("scheme {name} sets it; remove one of the two"),
        );
    }
    let is_p4 = raw
        .program
        .as_ref()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "p4"));
    for (key, set) in [
        ("p4_include", !raw.p4_include.is_empty()),
        ("p4_define", !raw.p4_define.is_empty()),
    ] {
        if set && !is_p4 {
            return bad(
                key,
                "applies only to a P4 program (program = \"FILE.p4\")".into(),
            );
        }
    }
    Ok(match &raw.program {
        None => (None, None),
        // A P4 program (`program = "x.p4"`), lowered onto the IR (docs/p4.md), with the
        // file's -I and -D.
        Some(p) if is_p4 => {
            let path = base.join(p);
            let include: Vec<PathBuf> = raw.p4_include.iter().map(|d| base.join(d)).collect();
            // The compiled form too: `[[control]]` names its tables by their P4 names.
            let c = crate::stf::load(&path, &include, &raw.p4_define)
                .map_err(|e| format!("{shown}: program: {e}"))?;
            (Some(c.program.clone()), Some(c))
        }
        Some(p) => {
            let path = base.join(p);
            // Capped: `/dev/zero` here was read until memory ran out.
            let text =
                crate::input::read_text(&path).map_err(|e| format!("{shown}: program: {e}"))?;
            let program = Program::from_json(&text)
                .map_err(|e| format!("{shown}: program: {}: {e}", path.display()))?;
            // Checked now, so that its errors name the file (the chip names the
            // program's `name`), and before the network is built.
            t2_pipeline::check::check_with(&program, &params.pipeline.phv)
                .map_err(|e| format!("{shown}: program: {}: {e}", path.display()))?;
            (Some(program), None)
        }
    })
}

/// The topology's kind and the size keys that kind takes (each one it needs, none other).
fn check_shape(t: &TopologyToml, shown: &str) -> Result<Shape, String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    // Which topology keys each kind takes.
    let values = [
        t.hosts,
        t.hosts_per_side,
        t.leaves,
        t.spines,
        t.hosts_per_leaf,
        t.k,
        t.hosts_per_edge,
    ];
    let given: Vec<(&str, Option<usize>)> = SHAPE_KEYS.iter().copied().zip(values).collect();
    let custom = schemes::SHAPES.iter().copied().find(|s| s.kind == t.kind);
    let wants: &[&str] = match (t.kind.as_str(), custom) {
        ("single_chip", _) => &["hosts"],
        ("dumbbell", _) => &["hosts_per_side"],
        ("leaf_spine", _) => &["leaves", "spines", "hosts_per_leaf"],
        ("fat_tree", _) => &["k"],
        (_, Some(kind)) => kind.keys,
        (other, None) => {
            let kinds: Vec<&str> = BUILT_IN_SHAPES
                .iter()
                .copied()
                .chain(schemes::SHAPES.iter().map(|s| s.kind))
                .collect();
            return bad(
                "topology.kind",
                format!("`{other}` is not one of {}", kinds.join(", ")),
            );
        }
    };
    for &(key, value) in &given {
        match (wants.contains(&key), value) {
            (true, None) => {
                return bad(
                    &format!("topology.{key}"),
                    format!("missing (kind {} needs it)", t.kind),
                )
            }
            (false, Some(_)) => {
                return bad(
                    &format!("topology.{key}"),
                    format!("not used by kind {}", t.kind),
                )
            }
            _ => {}
        }
    }
    let v = |key: &str| {
        given
            .iter()
            .find(|g| g.0 == key)
            .and_then(|g| g.1)
            .unwrap_or(0)
    };
    if let Some(kind) = custom {
        let mut values = [0; MAX_SHAPE_KEYS];
        for (slot, key) in values.iter_mut().zip(kind.keys) {
            *slot = v(key);
        }
        return Ok(Shape::Custom(CustomShape { kind, values }));
    }
    Ok(match t.kind.as_str() {
        "single_chip" => Shape::SingleChip { hosts: v("hosts") },
        "dumbbell" => Shape::Dumbbell {
            hosts_per_side: v("hosts_per_side"),
        },
        "leaf_spine" => Shape::LeafSpine {
            leaves: v("leaves"),
            spines: v("spines"),
            hosts_per_leaf: v("hosts_per_leaf"),
        },
        _ => Shape::FatTree { k: v("k") },
    })
}

/// The topology kinds t2sim builds itself, as scenario files name them (the schemes add
/// theirs: `crate::schemes::SHAPES`).
const BUILT_IN_SHAPES: &[&str] = &["single_chip", "dumbbell", "leaf_spine", "fat_tree"];

/// The size keys of `[topology]`, in the order of `TopologyToml`'s fields: the built-in
/// kinds' and those the registered shapes take.
const SHAPE_KEYS: [&str; 7] = [
    "hosts",
    "hosts_per_side",
    "leaves",
    "spines",
    "hosts_per_leaf",
    "k",
    "hosts_per_edge",
];

/// The transport section: segment size, window, the RFC 6298 timer's keys, loss recovery,
/// delayed ACKs and congestion control (the host features are [`check_host_features`]).
fn check_transport(
    raw: &ScenarioToml,
    shown: &str,
    clock: Clock,
) -> Result<TransportConfig, String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    let tr = &raw.transport;
    let max_mss = 9216 - t2_testbench::transport::SEGMENT_OVERHEAD;
    if !(1..=max_mss).contains(&tr.mss) {
        return bad(
            "transport.mss",
            format!("{} is outside 1..={max_mss} (a 9216 B frame)", tr.mss),
        );
    }
    if !(tr.mss..=MAX_WINDOW_BYTES).contains(&tr.window_bytes) {
        return bad(
            "transport.window_bytes",
            format!(
                "{} is outside {}..={MAX_WINDOW_BYTES} (at least one segment)",
                tr.window_bytes, tr.mss
            ),
        );
    }
    // `rto_us` alone is both the initial timeout and its floor (what a file that set it
    // asked for before the timer followed RFC 6298); with neither key, both are the
    // data-center default.
    let min_rto_us = tr
        .min_rto_us
        .or(tr.rto_us)
        .unwrap_or(super::format::DEFAULT_MIN_RTO_US);
    // Each key the file sets is checked under its own name (the derived values are
    // then in range too).
    for (key, us) in [
        ("transport.rto_us", tr.rto_us),
        ("transport.min_rto_us", tr.min_rto_us),
    ] {
        let Some(us) = us else { continue };
        if !(1..=10_000_000).contains(&us) {
            return bad(key, format!("{us} is outside 1..=10000000 (10 s)"));
        }
    }
    let min_rto = clock.ns_to_cycles_ceil(min_rto_us * 1000);
    let rto = clock.ns_to_cycles_ceil(tr.rto_us.unwrap_or(min_rto_us) * 1000);
    let max_every = t2_testbench::transport::MAX_ACK_EVERY;
    let ack_every = tr.ack_every.unwrap_or(1);
    if !(1..=max_every).contains(&ack_every) {
        return bad(
            "transport.ack_every",
            format!("{ack_every} is outside 1..={max_every} (data segments per ACK)"),
        );
    }
    let delayed_ack_us = tr
        .delayed_ack_us
        .unwrap_or(t2_testbench::transport::DEFAULT_DELAYED_ACK_US);
    if !(1..=500_000).contains(&delayed_ack_us) {
        return bad(
            "transport.delayed_ack_us",
            format!("{delayed_ack_us} is outside 1..=500000 (RFC 1122 §4.2.3.2: under 0.5 s)"),
        );
    }
    if tr.delayed_ack_us.is_some() && ack_every == 1 {
        return bad(
            "transport.delayed_ack_us",
            "applies only with ack_every above 1 (ACKs are not delayed)".into(),
        );
    }
    Ok(TransportConfig {
        mss: tr.mss,
        window_bytes: tr.window_bytes,
        rto,
        min_rto,
        // RFC 6298 §2.5 allows any maximum of at least 60 s; 64 doublings of the larger
        // of the two keeps a backed-off timer within a run's scale.
        max_rto: rto.max(min_rto).saturating_mul(64),
        recovery: recovery_of(tr.recovery.unwrap_or(super::format::RecoveryToml::Sack)),
        congestion: congestion_of(tr.congestion.as_deref()),
        ack_every,
        delayed_ack: clock.ns_to_cycles_ceil(delayed_ack_us * 1000),
        pacing: tr.pacing.unwrap_or(false),
    })
}

/// The host features a file's `[transport]` asks for without a scheme: PFC
/// (`honour_pfc`), then those of the keys the schemes register (`crate::schemes::HOST_KEYS`,
/// in that order); a key that is neither theirs nor `[transport]`'s own is an error.
fn check_host_features(
    raw: &ScenarioToml,
    shown: &str,
    clock: Clock,
    link_bps: u64,
) -> Result<Vec<FeatureSpec>, String> {
    let tr = &raw.transport;
    if let Some(unknown) = tr
        .features
        .keys()
        .find(|k| !schemes::HOST_KEYS.iter().any(|h| h.key == k.as_str()))
    {
        let known: Vec<String> = TRANSPORT_KEYS
            .iter()
            .copied()
            .chain(schemes::HOST_KEYS.iter().map(|h| h.key))
            .map(|k| format!("`{k}`"))
            .collect();
        return Err(format!(
            "{shown}: transport: unknown field `{unknown}`, expected one of {}",
            known.join(", ")
        ));
    }
    let mut features = Vec::new();
    if tr.honour_pfc == Some(true) {
        features.push(host_feature::pfc::spec());
    }
    let cx = HostKeyContext { clock, link_bps };
    for key in schemes::HOST_KEYS {
        if let Some(value) = tr.features.get(key.key) {
            if let Some(spec) = (key.build)(value, &cx).map_err(|e| format!("{shown}: {e}"))? {
                features.push(spec);
            }
        }
    }
    Ok(features)
}

/// `transport.congestion` (read as one of `congestion_names`): `fixed` (also when unset),
/// `reno`, or a window algorithm a scheme registers (`crate::schemes::WINDOWS`).
fn congestion_of(name: Option<&str>) -> Congestion {
    match name.unwrap_or("fixed") {
        "fixed" => Congestion::Fixed,
        "reno" => Congestion::Reno,
        other => Congestion::Window(
            *schemes::WINDOWS
                .iter()
                .find(|w| w.name == other)
                .expect("the file's reader checked the name"),
        ),
    }
}

/// `output.ideal` (read as one of `ideal_names`): `plain_forwarding` (also when unset),
/// `scheme_pipeline`, or a rule a scheme registers (`crate::schemes::IDEALS`).
fn ideal_of(raw: &ScenarioToml) -> IdealFct {
    match raw.output.ideal.as_deref().unwrap_or("plain_forwarding") {
        "plain_forwarding" => IdealFct::PlainForwarding,
        "scheme_pipeline" => IdealFct::SchemePipeline,
        other => IdealFct::Rule(
            schemes::IDEALS
                .iter()
                .copied()
                .find(|r| r.name == other)
                .expect("the file's reader checked the name"),
        ),
    }
}

/// The workload's background traffic: a flow-size CDF file with its unit, sampling, load
/// (on host or core links), arrival gaps and process; none of those keys without a CDF.
fn check_background(
    raw: &ScenarioToml,
    shown: &str,
    base: &Path,
    shape: &Shape,
) -> Result<Option<CdfTraffic>, String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    let w = &raw.workload;
    Ok(match &w.cdf {
        None => {
            for (key, set) in [
                ("size_unit_packets", w.size_unit_packets.is_some()),
                ("sampling", w.sampling.is_some()),
                ("load", w.load.is_some()),
                ("arrivals", w.arrivals.is_some()),
                ("sigma", w.sigma.is_some()),
                ("load_on", w.load_on.is_some()),
                ("arrival_process", w.arrival_process.is_some()),
            ] {
                if set {
                    return bad(&format!("workload.{key}"), "needs workload.cdf".into());
                }
            }
            None
        }
        Some(file) => {
            if let Some(b) = w.size_unit_packets.filter(|b| !(1..=9216).contains(b)) {
                return bad(
                    "workload.size_unit_packets",
                    format!("{b} is outside 1..=9216 (bytes of a packet)"),
                );
            }
            let unit = w
                .size_unit_packets
                .map_or(SizeUnit::Bytes, SizeUnit::Packets);
            let cdf = SizeCdf::load(&base.join(file), unit)
                .map_err(|e| format!("{shown}: workload.cdf: {e}"))?;
            let Some(load) = w.load else {
                return bad(
                    "workload.load",
                    "missing (a CDF workload needs a load)".into(),
                );
            };
            if !(load > 0.0 && load <= 1.0) {
                return bad("workload.load", format!("{load} is outside (0, 1]"));
            }
            let arrivals = match (w.arrivals.unwrap_or(ArrivalsToml::Poisson), w.sigma) {
                (ArrivalsToml::Poisson, None) => Arrivals::Poisson,
                (ArrivalsToml::Poisson, Some(_)) => {
                    return bad(
                        "workload.sigma",
                        "only log_normal arrivals take sigma".into(),
                    )
                }
                (ArrivalsToml::LogNormal, Some(sigma)) if sigma > 0.0 && sigma < 10.0 => {
                    Arrivals::LogNormal { sigma }
                }
                (ArrivalsToml::LogNormal, Some(sigma)) => {
                    return bad("workload.sigma", format!("{sigma} is outside (0, 10)"))
                }
                (ArrivalsToml::LogNormal, None) => {
                    return bad(
                        "workload.sigma",
                        "missing (log_normal arrivals need it)".into(),
                    )
                }
            };
            Some(CdfTraffic {
                cdf,
                sampling: match w.sampling.unwrap_or(SamplingToml::Linear) {
                    SamplingToml::Linear => Sampling::Linear,
                    SamplingToml::Step => Sampling::Step,
                },
                arrivals,
                load,
                load_on: match w.load_on.unwrap_or(LoadOnToml::Host) {
                    LoadOnToml::Host => LoadOn::Host,
                    LoadOnToml::Core => {
                        if shape.core_links().is_none() {
                            return bad(
                                "workload.load_on",
                                "core, but this topology has no core links (leaf_spine, fat_tree and dumbbell have)".into(),
                            );
                        }
                        LoadOn::Core
                    }
                },
                scope: match w.arrival_process.unwrap_or(ArrivalProcessToml::PerHost) {
                    ArrivalProcessToml::PerHost => ArrivalScope::PerHost,
                    ArrivalProcessToml::Global => ArrivalScope::Global,
                },
            })
        }
    })
}

/// What the output section asks for: a waveform of one switch (with its story groups) and
/// captures.
type OutputRequests = (
    Option<(WaveRequest, usize)>,
    Option<crate::capture::PcapRequest>,
);

/// The output section: the waveform request and the switch it traces, the capture points,
/// and the queue-sampling interval against the run's length.
fn check_output(raw: &ScenarioToml, shown: &str, base: &Path) -> Result<OutputRequests, String> {
    let bad = |key: &str, problem: String| Err(format!("{shown}: {key}: {problem}"));
    let o = &raw.output;
    if o.vcd.is_none()
        && (o.trace.is_some() || o.trace_switch.is_some() || !o.wave_group.is_empty())
    {
        let key = if o.trace.is_some() {
            "output.trace"
        } else if o.trace_switch.is_some() {
            "output.trace_switch"
        } else {
            "output.wave_group"
        };
        return bad(key, "needs output.vcd, the dump to write".into());
    }
    let mut groups = Vec::new();
    for (i, g) in o.wave_group.iter().enumerate() {
        let key = format!("output.wave_group[{i}]");
        if g.title.trim().is_empty() {
            return bad(&format!("{key}.title"), "is empty".into());
        }
        if g.title.chars().any(char::is_control) {
            return bad(
                &format!("{key}.title"),
                "has a control character (a newline would split the save file's line)".into(),
            );
        }
        if o.wave_group[..i].iter().any(|h| h.title == g.title) {
            return bad(
                &format!("{key}.title"),
                format!("`{}` names an earlier group too", g.title),
            );
        }
        if g.signals.is_empty() {
            return bad(&format!("{key}.signals"), "lists no signal pattern".into());
        }
        let patterns = g
            .signals
            .iter()
            .map(|p| TraceFilter::parse(p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{shown}: {key}.signals: {e}"))?;
        groups.push(crate::chip::trace::WaveGroup {
            title: g.title.clone(),
            patterns,
        });
    }
    let waves = match &o.vcd {
        None => None,
        Some(vcd) => {
            // Story groups trace what they show; with them and no `trace`, nothing else.
            let mut spec: Vec<&str> = o
                .wave_group
                .iter()
                .flat_map(|g| g.signals.iter().map(String::as_str))
                .collect();
            match (&o.trace, spec.is_empty()) {
                (Some(t), _) => spec.push(t),
                (None, true) => spec.push(DEFAULT_TRACE),
                (None, false) => {}
            }
            let filter = TraceFilter::parse(&spec.join(","))
                .map_err(|e| format!("{shown}: output.trace: {e}"))?;
            // With an output folder, a relative dump goes into it.
            let folder = o.dir.as_ref().map_or(base.to_path_buf(), |d| base.join(d));
            let request = WaveRequest {
                vcd: folder.join(vcd),
                filter,
                groups,
            };
            Some((request, o.trace_switch.unwrap_or(0)))
        }
    };
    let pcap = match (&o.pcap, &o.pcap_dir) {
        (None, None) => None,
        (None, Some(_)) => return bad("output.pcap_dir", "needs output.pcap".into()),
        (Some(points), dir) => {
            let specs = crate::capture::CaptureSpec::parse_list(points)
                .map_err(|e| format!("{shown}: output.pcap: {e}"))?;
            // With neither folder the captures go where `--out` says; a run without
            // one either is refused when it starts (`ScenarioFile::run`).
            let dir = dir.as_ref().or(o.dir.as_ref());
            Some(crate::capture::PcapRequest {
                specs,
                dir: dir.map_or_else(PathBuf::new, |d| base.join(d)),
            })
        }
    };
    if let Some(ns) = raw.output.queue_sample_ns {
        if ns == 0 {
            return bad("output.queue_sample_ns", "must be above 0".into());
        }
        let run_ns = (raw.duration_us + raw.drain_us).saturating_mul(1000);
        let samples = run_ns / ns + 1;
        if samples > MAX_QUEUE_SAMPLES {
            return bad(
                "output.queue_sample_ns",
                format!(
                    "{ns} ns over a {run_ns} ns run takes {samples} samples; at most {MAX_QUEUE_SAMPLES}"
                ),
            );
        }
    }
    Ok((waves, pcap))
}

/// The transport's recovery for a scenario's `transport.recovery`.
fn recovery_of(r: super::format::RecoveryToml) -> t2_testbench::Recovery {
    match r {
        super::format::RecoveryToml::Sack => t2_testbench::Recovery::Sack,
        super::format::RecoveryToml::Newreno => t2_testbench::Recovery::NewReno,
        super::format::RecoveryToml::GoBackN => t2_testbench::Recovery::GoBackN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registered_extensions_have_keys_and_names_the_file_can_give() {
        for shape in schemes::SHAPES {
            assert!(shape.keys.len() <= MAX_SHAPE_KEYS, "{}", shape.kind);
            assert!(!BUILT_IN_SHAPES.contains(&shape.kind), "{}", shape.kind);
            for key in shape.keys {
                assert!(SHAPE_KEYS.contains(key), "{}: {key}", shape.kind);
            }
        }
        for key in schemes::HOST_KEYS {
            assert!(!TRANSPORT_KEYS.contains(&key.key), "{}", key.key);
        }
        // Each name once: the transport's and the run's own first, then the schemes'.
        for names in [congestion_names(), ideal_names()] {
            let mut sorted = names.to_vec();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), names.len(), "{names:?}");
        }
    }
}
