//! What the chip's pipes run: the built-in IPv4 host-route forwarding, or a program (the IR of
//! `t2_pipeline::ir`) placed under the chip's stage budgets.
//!
//! Host routes are control-plane state. With the built-in forwarding they fill its table; with
//! a program they are installed as entries of the program's exact table `ipv4_host` (keyed on
//! `ipv4.dst_addr`) calling its action `forward` with the device port, the way a control plane
//! would. Several routes to one destination (through different ports) form an ECMP group:
//! the built-in forwarding hashes each flow onto one of them (`t2_pipeline::l3`); a program
//! whose `ipv4_host` has an action selector gets each group as one entry of members (one
//! `forward` per port, the selector hashing each flow onto one), and a program without one
//! cannot take ECMP routes (a configuration error). A program that also has table
//! `ipv4_source` (exact on `ipv4.src_addr`, action `toward_source(port)`) gets the same
//! routes keyed on the source: the port back toward a packet's sender (PABO's bounce; with
//! equal-cost routes the table needs a selector, like `ipv4_host`).
//! Every pipe runs its own copy of the program (its own register contents). The ghost
//! control is placed and timed with ingress and runs in every pipe's ingress stages on the
//! TM's queue-depth updates (`t2_pipeline::ghost`), with the ingress thread's registers.

use crate::chip::ConfigError;
use std::net::Ipv4Addr;
use std::sync::Arc;
use t2_pipeline::check::{check_with, Thread};
use t2_pipeline::exec::PlacedThread;
use t2_pipeline::gress::CellWrite;
use t2_pipeline::ir::{ActionCall, Entry, KeyValue, Program};
use t2_pipeline::l3::Ipv4Forward;
use t2_pipeline::place::{place, Budget};
use t2_pipeline::{
    Cells, GhostPipeline, Gress, GressPipeline, NoTables, Phv, PipelineParams, Placement,
    StageProgram,
};

/// The table host routes go into, and the action they call.
pub const ROUTE_TABLE: &str = "ipv4_host";
pub const ROUTE_ACTION: &str = "forward";

/// The optional reverse-path table: a program that has it (exact on `ipv4.src_addr` alone,
/// offering `toward_source(port)`) gets the same host routes keyed on the packet's *source*,
/// so it can find the port back toward where a packet came from (PABO's bounce). A source
/// with equal-cost routes needs a selector on the table, as for `ipv4_host`.
pub const SOURCE_TABLE: &str = "ipv4_source";
pub const SOURCE_ACTION: &str = "toward_source";

/// One gress of one pipe: its pipeline and the program its stages run.
pub(crate) struct GressSetup {
    pub pipeline: GressPipeline,
    pub program: PipeProgram,
    /// Ingress of a program with a ghost control: its ghost thread, run by `program`.
    pub ghost: Option<GhostPipeline>,
}

/// What one gress of one pipe runs, as a type the chip can name: the built-in forwarding,
/// no tables, or a placed program's thread. The chip reaches a placed thread's own state
/// (its random streams, its tables) through [`PipeProgram::placed_mut`], not by asking a
/// trait object what it is, and the stages run without a dynamic call.
pub(crate) enum PipeProgram {
    /// The built-in IPv4 host-route forwarding (the ingress of a chip without a program).
    Forward(Ipv4Forward),
    /// A gress without tables (the egress of a chip without a program).
    Empty(NoTables),
    /// One thread of a placed program.
    Placed(Box<PlacedThread>),
}

impl PipeProgram {
    /// The placed thread, if this gress runs one.
    pub(crate) fn placed_mut(&mut self) -> Option<&mut PlacedThread> {
        match self {
            PipeProgram::Placed(run) => Some(run),
            _ => None,
        }
    }

    /// The program as the stages see it.
    fn stages(&self) -> &dyn StageProgram {
        match self {
            PipeProgram::Forward(p) => p,
            PipeProgram::Empty(p) => p,
            PipeProgram::Placed(p) => p.as_ref(),
        }
    }

    fn stages_mut(&mut self) -> &mut dyn StageProgram {
        match self {
            PipeProgram::Forward(p) => p,
            PipeProgram::Empty(p) => p,
            PipeProgram::Placed(p) => p.as_mut(),
        }
    }
}

/// Each call goes to the variant's own program.
impl StageProgram for PipeProgram {
    fn active_stages(&self) -> Vec<usize> {
        self.stages().active_stages()
    }
    fn apply(&mut self, stage: usize, phv: &mut Phv) {
        match self {
            PipeProgram::Forward(p) => p.apply(stage, phv),
            PipeProgram::Empty(p) => p.apply(stage, phv),
            PipeProgram::Placed(p) => p.apply(stage, phv),
        }
    }
    fn ghost_stages(&self) -> Vec<usize> {
        self.stages().ghost_stages()
    }
    fn apply_ghost(&mut self, stage: usize, phv: &mut Phv) {
        self.stages_mut().apply_ghost(stage, phv)
    }
    fn registers(&self) -> Option<&[Cells]> {
        self.stages().registers()
    }
    fn register_names(&self) -> Vec<String> {
        self.stages().register_names()
    }
    fn register_shape(&self, r: usize) -> (u32, u32) {
        self.stages().register_shape(r)
    }
    fn stages_commute(&self) -> bool {
        self.stages().stages_commute()
    }
    fn write_register(&mut self, r: usize, index: u32, value: u64) {
        self.stages_mut().write_register(r, index, value)
    }
    fn ghost_writes_are_its_own(&self) -> bool {
        self.stages().ghost_writes_are_its_own()
    }
    fn ghost_uses(&self, name: &str) -> bool {
        self.stages().ghost_uses(name)
    }
    fn log_register_writes(&mut self, on: bool) {
        self.stages_mut().log_register_writes(on)
    }
    fn take_register_writes(&mut self, out: &mut Vec<CellWrite>) {
        self.stages_mut().take_register_writes(out)
    }
}

fn err(what: String, problem: String) -> ConfigError {
    ConfigError { what, problem }
}

/// Builds the ingress and egress of `pipes` pipes, running `program` (or the built-in
/// forwarding when `None`) with `routes` (destination, device port) installed.
pub(crate) fn build_pipes(
    params: &PipelineParams,
    pipes: usize,
    program: Option<&Program>,
    routes: &[(Ipv4Addr, u16)],
) -> Result<Vec<[GressSetup; 2]>, ConfigError> {
    match program {
        None => builtin_pipes(params, pipes, routes),
        Some(p) => placed_pipes(params, pipes, p, routes),
    }
}

fn builtin_pipes(
    params: &PipelineParams,
    pipes: usize,
    routes: &[(Ipv4Addr, u16)],
) -> Result<Vec<[GressSetup; 2]>, ConfigError> {
    let mut forward = Ipv4Forward::new();
    for (k, (dst, ports)) in ecmp_groups(routes).into_iter().enumerate() {
        forward
            .add_ecmp_route(dst, &ports)
            .map_err(|e| err(format!("route {k}"), e.to_string()))?;
    }
    let placement = Placement::shortest(params.stages as usize);
    let gress = |gress, program: PipeProgram| GressSetup {
        pipeline: GressPipeline::new(
            gress,
            params,
            &placement,
            &program.active_stages(),
            t2_pipeline::program::parser_check::builtin_graph(),
        ),
        program,
        ghost: None,
    };
    Ok((0..pipes)
        .map(|_| {
            [
                gress(Gress::Ingress, PipeProgram::Forward(forward.clone())),
                gress(Gress::Egress, PipeProgram::Empty(NoTables)),
            ]
        })
        .collect())
}

/// The routes grouped by destination, in the order each destination first appears; a group's
/// ports keep their order (it decides which member a hash value picks).
fn ecmp_groups(routes: &[(Ipv4Addr, u16)]) -> Vec<(Ipv4Addr, Vec<u16>)> {
    let mut groups: Vec<(Ipv4Addr, Vec<u16>)> = Vec::new();
    let mut at = std::collections::HashMap::new();
    for &(dst, port) in routes {
        let i = *at.entry(dst).or_insert_with(|| {
            groups.push((dst, Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(port);
    }
    groups
}

/// `program` with `routes` added to its route table (`ipv4_host`); a program without one is
/// returned as it is: it forwards as its own tables and entries say.
pub fn with_routes(program: &Program, routes: &[(Ipv4Addr, u16)]) -> Result<Program, ConfigError> {
    let mut p = program.clone();
    if routes.is_empty() {
        return Ok(p);
    }
    let what = || format!("program {}", program.name);
    // Host routes are a convenience a program opts into by having the table: one without
    // it forwards as its own tables and the entries the control plane gives it say.
    let Some(table) = p.tables.iter_mut().find(|t| t.name == ROUTE_TABLE) else {
        return Ok(p);
    };
    if table.keys != ["ipv4.dst_addr"] || !table.actions.iter().any(|a| a == ROUTE_ACTION) {
        return Err(err(
            what(),
            format!(
                "table `{ROUTE_TABLE}` must be keyed on `ipv4.dst_addr` alone and offer action `{ROUTE_ACTION}(port)` for host routes"
            ),
        ));
    }
    let groups = ecmp_groups(routes);
    for (dst, ports) in &groups {
        if let Some(p) = ports
            .iter()
            .enumerate()
            .find(|(i, p)| ports[..*i].contains(p))
        {
            return Err(err(
                what(),
                format!("a route to {dst} via device port {} already exists", p.1),
            ));
        }
    }
    for (dst, ports) in &groups {
        let own = table.entries.iter().position(|e| {
            e.key.len() == 1 && e.key[0].mask.is_none() && e.key[0].value == u32::from(*dst) as u64
        });
        if let Some(i) = own {
            return Err(err(
                what(),
                format!(
                    "table `{ROUTE_TABLE}` already holds an entry for {dst} (entries[{i}]), which is the address of a host here (route to device port {}); the chip installs a route for every host, so remove the program's own `{ROUTE_TABLE}` entries (they are examples for `t2sim report`) to run it",
                    ports[0]
                ),
            ));
        }
    }
    let has_selector = table.selector.is_some();
    if let Some((dst, ports)) = groups.iter().find(|g| g.1.len() > 1 && !has_selector) {
        return Err(err(
            what(),
            format!(
                "{dst} has {} equal-cost routes (ECMP, device ports {ports:?}), but table `{ROUTE_TABLE}` has no selector and holds one port per destination; give it a selector, run the built-in forwarding, or use a topology without equal-cost paths",
                ports.len()
            ),
        ));
    }
    if let Some(source) = p.tables.iter_mut().find(|t| t.name == SOURCE_TABLE) {
        if source.keys != ["ipv4.src_addr"] || !source.actions.iter().any(|a| a == SOURCE_ACTION) {
            return Err(err(
                what(),
                format!(
                    "table `{SOURCE_TABLE}` must be keyed on `ipv4.src_addr` alone and offer action `{SOURCE_ACTION}(port)` for reverse routes"
                ),
            ));
        }
        for (addr, ports) in &groups {
            if ports.len() > 1 && source.selector.is_none() {
                return Err(err(
                    what(),
                    format!(
                        "table `{SOURCE_TABLE}` has no selector and holds one port per source, but {addr} has {} equal-cost routes (device ports {ports:?})",
                        ports.len()
                    ),
                ));
            }
            let key = vec![KeyValue {
                value: u32::from(*addr) as u64,
                mask: None,
            }];
            let call = |port: u16| ActionCall::new(SOURCE_ACTION, &[port as u64]);
            // Any of the equal-cost ports leads back toward the source: the selector hashes
            // each flow onto one, as for forward routes.
            source.entries.push(if ports.len() > 1 {
                Entry {
                    key,
                    action: ActionCall::default(),
                    members: ports.iter().copied().map(call).collect(),
                }
            } else {
                Entry {
                    key,
                    action: call(ports[0]),
                    members: Vec::new(),
                }
            });
        }
    }
    let table = p
        .tables
        .iter_mut()
        .find(|t| t.name == ROUTE_TABLE)
        .expect("found above");
    for (dst, ports) in groups {
        let key = vec![KeyValue {
            value: u32::from(dst) as u64,
            mask: None,
        }];
        let call = |port: u16| ActionCall::new(ROUTE_ACTION, &[port as u64]);
        // A destination with several routes is a selector group, one member per port.
        table.entries.push(if ports.len() > 1 {
            Entry {
                key,
                action: ActionCall::default(),
                members: ports.into_iter().map(call).collect(),
            }
        } else {
            Entry {
                key,
                action: call(ports[0]),
                members: Vec::new(),
            }
        });
    }
    Ok(p)
}

fn placed_pipes(
    params: &PipelineParams,
    pipes: usize,
    program: &Program,
    routes: &[(Ipv4Addr, u16)],
) -> Result<Vec<[GressSetup; 2]>, ConfigError> {
    let what = || format!("program {}", program.name);
    let program = with_routes(program, routes)?;
    let checked = check_with(&program, &params.phv).map_err(|e| err(what(), e.to_string()))?;
    let budget = Budget {
        stages: params.stages as usize,
        ..Budget::tofino2()
    };
    let placed = place(&checked, &budget);
    if let Some(failure) = &placed.failure {
        return Err(err(
            what(),
            format!("does not fit on the chip: {failure} (see `t2sim report --program`)"),
        ));
    }
    let checked = Arc::new(checked);
    // Compiled once; every pipe runs a sibling with registers of its own.
    let threads = [Thread::Ingress, Thread::Egress]
        .map(|thread| PlacedThread::new(Arc::clone(&checked), &placed, thread));
    Ok((0..pipes)
        .map(|pipe| {
            [Thread::Ingress, Thread::Egress].map(|thread| {
                let mut run = threads[thread.index()].sibling();
                // Each pipe and gress draws its own random numbers, deterministically.
                run.state.seed((pipe as u64) << 1 | thread.index() as u64);
                GressSetup {
                    pipeline: run.pipeline(&placed, params),
                    ghost: run.ghost_pipeline(&placed, params),
                    program: PipeProgram::Placed(Box::new(run)),
                }
            })
        })
        .collect())
}
