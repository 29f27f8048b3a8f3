//! The runtime control plane (the BfRt verbs a testbench uses): operations scheduled for a
//! chosen cycle, applied at the start of that cycle before any block of the chip runs, in
//! the order they were scheduled (`docs/timing.md`, Control plane).
//!
//! An operation is checked when it is scheduled (what it names must exist, its values must
//! fit); what depends on the state it meets (adding an entry whose key is already there,
//! reconfiguring the queues of a port that is not empty) is checked when it lands, and a
//! refused operation changes nothing and is kept in [`Chip::control_errors`].

use super::{Chip, ConfigError, MirrorSession, PktgenApp};
use std::collections::BTreeMap;
use std::sync::Arc;
use t2_clock::Cycle;
use t2_pipeline::ir::Program;
use t2_pipeline::ir::{Entry, KeyValue};
use t2_pipeline::{Gress, StageProgram};
use t2_tm::QueueConfig;

/// One control-plane operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlOp {
    /// Sets (or clears) mirror session `id` ([`Chip::set_mirror_session`]).
    MirrorSession {
        id: u8,
        session: Option<MirrorSession>,
    },
    /// Sets (or clears) a pktgen application ([`Chip::set_pktgen_app`]).
    Pktgen {
        pipe: usize,
        app: usize,
        config: Option<PktgenApp>,
    },
    /// Front-panel port `port` goes down: its port-down pktgen applications fire.
    PortDown { port: usize },
    /// Gives port `port` new queues ([`Chip::set_port_queues`]; the port must be empty).
    PortQueues {
        port: usize,
        queues: Vec<QueueConfig>,
    },
    /// Writes `value` into cell `index` of register array `register` of pipe `pipe`'s
    /// `gress` (ingress: the arrays ingress and ghost share).
    WriteRegister {
        pipe: usize,
        gress: Gress,
        register: String,
        index: u32,
        value: u64,
    },
    /// Adds `entry` to table `table` of the given pipes (`None`: every pipe; Tofino's
    /// asymmetric tables may differ per pipe).
    AddEntry {
        pipe: Option<usize>,
        table: String,
        entry: Entry,
    },
    /// Replaces the action (or members) of the entry whose key is `entry.key`.
    ModifyEntry {
        pipe: Option<usize>,
        table: String,
        entry: Entry,
    },
    /// Deletes the entry whose key is `key`.
    DeleteEntry {
        pipe: Option<usize>,
        table: String,
        key: Vec<KeyValue>,
    },
}

impl ControlOp {
    fn name(&self) -> &'static str {
        match self {
            ControlOp::MirrorSession { .. } => "mirror_session",
            ControlOp::Pktgen { .. } => "pktgen",
            ControlOp::PortDown { .. } => "port_down",
            ControlOp::PortQueues { .. } => "port_queues",
            ControlOp::WriteRegister { .. } => "write_register",
            ControlOp::AddEntry { .. } => "add_entry",
            ControlOp::ModifyEntry { .. } => "modify_entry",
            ControlOp::DeleteEntry { .. } => "delete_entry",
        }
    }
}

/// The control plane's state: the operations still to apply and what it needs to apply them.
pub(super) struct ControlPlane {
    /// Operations to apply: (cycle, order scheduled) -> operation.
    pub(super) ops: BTreeMap<(Cycle, u64), ControlOp>,
    pub(super) seq: u64,
    /// Operations refused when they landed, with the cycle.
    pub(super) errors: Vec<(Cycle, ConfigError)>,
    /// The program the pipes run, with the chip's routes, for table operations (`None`: the
    /// built-in forwarding).
    pub(super) program: Option<Program>,
    pub(super) runtime: Option<Runtime>,
}

impl ControlPlane {
    pub(super) fn new(program: Option<Program>) -> ControlPlane {
        ControlPlane {
            ops: BTreeMap::new(),
            seq: 0,
            errors: Vec::new(),
            program,
            runtime: None,
        }
    }
}

impl Chip {
    /// Schedules `op` for the start of cycle `at` (before the chip's blocks run in that
    /// cycle). Fails, naming the operation and the problem, if what it names does not exist
    /// or `at` is before the cycle the chip has reached. Schedule before running, or wake the
    /// chip afterwards (`Network::wake_all`), so that the kernel visits `at`.
    pub fn schedule(&mut self, at: Cycle, op: ControlOp) -> Result<(), ConfigError> {
        let what = format!("chip {}: {} at cycle {at}", self.name, op.name());
        let bad = |problem: String| ConfigError {
            what: what.clone(),
            problem,
        };
        if at < self.now {
            return Err(bad(format!(
                "cycle {at} has passed (the chip is at {})",
                self.now
            )));
        }
        match &op {
            ControlOp::MirrorSession { id, session } => {
                self.check_mirror_session(*id, session)?;
            }
            ControlOp::Pktgen { pipe, app, config } => {
                self.check_pktgen_app(at, *pipe, *app, config.as_ref())?;
            }
            ControlOp::PortDown { port } => {
                if *port >= self.front_ports {
                    return Err(bad(format!(
                        "port {port} is not a front-panel port (the chip has 0..{})",
                        self.front_ports
                    )));
                }
            }
            ControlOp::PortQueues { port, .. } => {
                if *port >= self.ports.len() {
                    return Err(bad(format!(
                        "port {port} does not exist (the chip has {})",
                        self.ports.len()
                    )));
                }
            }
            ControlOp::WriteRegister {
                pipe,
                gress,
                register,
                index,
                value,
            } => {
                self.register_cell(*pipe, *gress, register, *index, Some(*value), false)
                    .map_err(bad)?;
            }
            ControlOp::AddEntry { pipe, table, .. }
            | ControlOp::ModifyEntry { pipe, table, .. }
            | ControlOp::DeleteEntry { pipe, table, .. } => {
                self.check_table_op(*pipe, table).map_err(bad)?;
            }
        }
        self.control.ops.insert((at, self.control.seq), op);
        self.control.seq += 1;
        Ok(())
    }

    /// Mirror session `id` as it is now.
    pub fn mirror_session(&self, id: u8) -> Option<MirrorSession> {
        self.mirror.sessions[id as usize]
    }

    /// Operations refused when they landed: (cycle, error).
    pub fn control_errors(&self) -> &[(Cycle, ConfigError)] {
        &self.control.errors
    }

    /// Applies the operations scheduled for cycle `now`.
    pub(super) fn control_plane(&mut self, now: Cycle) {
        self.now = now;
        while let Some(entry) = self.control.ops.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let op = entry.remove();
            if self.ghost_shared() && self.splits_ghost_threads(&op) {
                self.run_ghost_in_every_pipe();
            }
            let name = op.name();
            let result = match op {
                ControlOp::MirrorSession { id, session } => self.set_mirror_session(id, session),
                ControlOp::Pktgen { pipe, app, config } => {
                    self.set_pktgen_app(now, pipe, app, config)
                }
                ControlOp::PortDown { port } => {
                    self.fire_port_down(now, port);
                    Ok(())
                }
                ControlOp::PortQueues { port, queues } => self.set_port_queues(port, &queues),
                ControlOp::WriteRegister {
                    pipe,
                    gress,
                    register,
                    index,
                    value,
                } => self
                    .register_cell(pipe, gress, &register, index, Some(value), true)
                    .map(|_| ())
                    .map_err(|problem| ConfigError {
                        what: format!("chip {}: {name}", self.name),
                        problem,
                    }),
                ControlOp::AddEntry { pipe, table, entry } => {
                    // The adds due now to the same table and pipes go in together.
                    let mut entries = vec![entry];
                    while let Some(next) = self.control.ops.first_entry() {
                        match next.get() {
                            ControlOp::AddEntry {
                                pipe: p, table: t, ..
                            } if next.key().0 <= now && *p == pipe && *t == table => {
                                if let ControlOp::AddEntry { entry, .. } = next.remove() {
                                    entries.push(entry);
                                }
                            }
                            _ => break,
                        }
                    }
                    let mut results = self.add_entries(pipe, &table, entries);
                    let last = results.pop().expect("one result an entry");
                    for e in results.into_iter().filter_map(Result::err) {
                        self.control.errors.push((now, e));
                    }
                    last
                }
                ControlOp::ModifyEntry { pipe, table, entry } => {
                    self.table_op(pipe, &table, TableOp::Modify(entry))
                }
                ControlOp::DeleteEntry { pipe, table, key } => {
                    self.table_op(pipe, &table, TableOp::Delete(key))
                }
            };
            if let Err(e) = result {
                self.control.errors.push((now, e));
            }
        }
    }

    /// Whether `op` could make the pipes' ghost threads differ, so that they can no longer
    /// share pipe 0's (`ghost.rs`): a write into an array the ghost units touch, or a table
    /// entry for one pipe of a table the ghost thread applies.
    fn splits_ghost_threads(&self, op: &ControlOp) -> bool {
        let uses = |name: &str| self.pipes[0].ingress_program.ghost_uses(name);
        match op {
            ControlOp::WriteRegister {
                gress: Gress::Ingress,
                register,
                ..
            } => uses(register),
            ControlOp::AddEntry {
                pipe: Some(_),
                table,
                ..
            }
            | ControlOp::ModifyEntry {
                pipe: Some(_),
                table,
                ..
            }
            | ControlOp::DeleteEntry {
                pipe: Some(_),
                table,
                ..
            } => uses(table),
            _ => false,
        }
    }

    /// The next cycle an operation is scheduled for.
    pub(super) fn control_next_event(&self) -> Option<Cycle> {
        self.control.ops.keys().next().map(|&(c, _)| c)
    }

    /// Cell `index` of register array `register` of pipe `pipe`'s `gress`: its value, after
    /// writing `write` into it when given and `apply` (without `apply`, only checked). The
    /// problem, if the pipe, array or cell does not exist or the value does not fit the cell.
    fn register_cell(
        &mut self,
        pipe: usize,
        gress: Gress,
        register: &str,
        index: u32,
        write: Option<u64>,
        apply: bool,
    ) -> Result<u64, String> {
        let pipes = self.pipes.len();
        let p = self
            .pipes
            .get_mut(pipe)
            .ok_or_else(|| format!("pipe {pipe} does not exist (the chip has 0..{pipes})"))?;
        let program = match gress {
            Gress::Ingress => &mut p.ingress_program,
            Gress::Egress => &mut p.egress_program,
        };
        let names = program.register_names();
        let r = names
            .iter()
            .position(|n| n == register)
            .ok_or_else(|| format!("pipe {pipe}'s program has no register array `{register}`"))?;
        let (bits, size) = program.register_shape(r);
        if index >= size {
            return Err(format!(
                "register `{register}` has cells 0..{size}, not {index}"
            ));
        }
        if let Some(v) = write {
            if bits < 64 && v >> bits != 0 {
                return Err(format!(
                    "value {v} does not fit register `{register}`'s {bits}-bit cells"
                ));
            }
            if apply {
                program.write_register(r, index, v);
            }
        }
        Ok(program.registers().expect("a program with register arrays")[r].get(index as usize))
    }

    /// Reads cell `index` of register array `register` of pipe `pipe`'s `gress` (BfRt's
    /// register read; a pair's `hi` half is above its `lo` half).
    pub fn read_register(
        &mut self,
        pipe: usize,
        gress: Gress,
        register: &str,
        index: u32,
    ) -> Result<u64, ConfigError> {
        self.register_cell(pipe, gress, register, index, None, false)
            .map_err(|problem| ConfigError {
                what: format!("chip {}: read_register", self.name),
                problem,
            })
    }
}

/// What a table operation does to a table's entries.
pub(super) enum TableOp {
    Add(Entry),
    Modify(Entry),
    Delete(Vec<KeyValue>),
}

/// What the control plane keeps to change table entries: each pipe's program as IR (its
/// entries as the control plane last set them) and the placement every pipe shares. Made on
/// the first table operation.
pub(super) struct Runtime {
    programs: Vec<Program>,
    placed: t2_pipeline::place::Placed,
}

impl Chip {
    /// Sets cell `index` of register array `register` of pipe `pipe`'s `gress` now (an
    /// initial value, before a run; at a chosen cycle use [`ControlOp::WriteRegister`]).
    pub fn write_register(
        &mut self,
        pipe: usize,
        gress: Gress,
        register: &str,
        index: u32,
        value: u64,
    ) -> Result<(), ConfigError> {
        self.register_cell(pipe, gress, register, index, Some(value), true)
            .map(|_| ())
            .map_err(|problem| ConfigError {
                what: format!("chip {}: write_register", self.name),
                problem,
            })
    }

    /// The pipes a table operation names, and the table's existence, checked.
    fn check_table_op(&mut self, pipe: Option<usize>, table: &str) -> Result<(), String> {
        if let Some(p) = pipe {
            if p >= self.pipes.len() {
                return Err(format!(
                    "pipe {p} does not exist (the chip has 0..{})",
                    self.pipes.len()
                ));
            }
        }
        let rt = self.runtime()?;
        if !rt.programs[0].tables.iter().any(|t| t.name == table) {
            return Err(format!("the program has no table `{table}`"));
        }
        Ok(())
    }

    fn runtime(&mut self) -> Result<&mut Runtime, String> {
        if self.control.runtime.is_none() {
            let Some(program) = self.control.program.clone() else {
                return Err(
                    "the built-in forwarding has no program tables (give the chip a program)"
                        .into(),
                );
            };
            let checked = t2_pipeline::check::check_with(&program, &self.params.pipeline.phv)
                .map_err(|e| e.to_string())?;
            let budget = t2_pipeline::place::Budget {
                stages: self.params.pipeline.stages as usize,
                ..t2_pipeline::place::Budget::tofino2()
            };
            let placed = t2_pipeline::place::place(&checked, &budget);
            self.control.runtime = Some(Runtime {
                programs: vec![program; self.pipes.len()],
                placed,
            });
        }
        Ok(self.control.runtime.as_mut().expect("made above"))
    }

    /// Applies a table operation to `pipe` (or every pipe): all of them or none.
    fn table_op(
        &mut self,
        pipe: Option<usize>,
        table: &str,
        op: TableOp,
    ) -> Result<(), ConfigError> {
        self.table_ops(pipe, table, std::slice::from_ref(&op))
    }

    /// Adds `entries`, due in the same cycle, to `table` of `pipe` (or every pipe), with one
    /// check of the program for all of them; the result of each. Adding entries together
    /// succeeds exactly when adding them one by one would (an add depends on the entries
    /// before it only through the key it must not repeat and the table's size, both
    /// checked on the way), so only a failure is worked out again one entry at a time, for
    /// each entry's own error.
    fn add_entries(
        &mut self,
        pipe: Option<usize>,
        table: &str,
        entries: Vec<Entry>,
    ) -> Vec<Result<(), ConfigError>> {
        let ops: Vec<TableOp> = entries.into_iter().map(TableOp::Add).collect();
        if ops.len() > 1 && self.table_ops(pipe, table, &ops).is_ok() {
            return vec![Ok(()); ops.len()];
        }
        ops.into_iter()
            .map(|op| self.table_op(pipe, table, op))
            .collect()
    }

    /// Applies table operations, in order, to `pipe` (or every pipe): all of them or none.
    fn table_ops(
        &mut self,
        pipe: Option<usize>,
        table: &str,
        ops: &[TableOp],
    ) -> Result<(), ConfigError> {
        let name = self.name.clone();
        let what = |p: usize| {
            let verb = match ops {
                [TableOp::Add(_)] => "add_entry",
                [TableOp::Modify(_)] => "modify_entry",
                [TableOp::Delete(_)] => "delete_entry",
                _ => "add_entry (several)",
            };
            format!("chip {name}: pipe {p} {verb} in `{table}`")
        };
        let pipes: Vec<usize> = match pipe {
            Some(p) => vec![p],
            None => (0..self.pipes.len()).collect(),
        };
        let phv = self.params.pipeline.phv;
        self.runtime().map_err(|problem| ConfigError {
            what: what(0),
            problem,
        })?;
        let rt = self.control.runtime.as_mut().expect("made above");
        let mut changed = Vec::new();
        for &p in &pipes {
            let bad = |problem: String| ConfigError {
                what: what(p),
                problem,
            };
            let mut program = rt.programs[p].clone();
            let t = program
                .tables
                .iter_mut()
                .find(|t| t.name == table)
                .expect("checked when scheduled");
            for op in ops {
                let at = |key: &[KeyValue]| t.entries.iter().position(|e| e.key == key);
                match op {
                    TableOp::Add(e) => {
                        if at(&e.key).is_some() {
                            return Err(bad(format!(
                                "an entry with key {:?} is already there (modify it instead)",
                                e.key
                            )));
                        }
                        t.entries.push(e.clone());
                    }
                    TableOp::Modify(e) => {
                        let k = at(&e.key)
                            .ok_or_else(|| bad(format!("no entry has key {:?}", e.key)))?;
                        t.entries[k] = e.clone();
                    }
                    TableOp::Delete(key) => {
                        let k = at(key).ok_or_else(|| bad(format!("no entry has key {key:?}")))?;
                        t.entries.remove(k);
                    }
                }
            }
            let checked =
                t2_pipeline::check::check_with(&program, &phv).map_err(|e| bad(e.to_string()))?;
            changed.push((p, program, Arc::new(checked)));
        }
        for (p, program, checked) in changed {
            let t = checked
                .tables
                .iter()
                .position(|x| x.name == table)
                .expect("the table exists");
            let egress = checked.flat[t2_pipeline::check::Thread::Egress.index()]
                .iter()
                .any(|u| u.unit == t2_pipeline::check::Unit::Table(t));
            let gress = if egress {
                &mut self.pipes[p].egress_program
            } else {
                &mut self.pipes[p].ingress_program
            };
            gress
                .placed_mut()
                .expect("a program's pipes run placed threads")
                .reprogram(checked, &rt.placed);
            rt.programs[p] = program;
        }
        Ok(())
    }
}
