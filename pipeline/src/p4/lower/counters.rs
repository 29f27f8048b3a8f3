//! `Counter` and `DirectCounter`, lowered onto what the IR has: a register array and a
//! stateful-ALU program that adds to a cell.
//!
//! Tofino counts with its statistics ALUs (4 per stage, beside the 4 stateful ALUs) into
//! statistics RAMs; the IR has no statistics ALU, so a counter here costs one of a stage's
//! 4 stateful ALUs, its map RAMs and the stateful stage latency (+4 cycles) instead. What
//! it counts is the same: `PACKETS` adds 1 to the cell, `BYTES` adds the frame's length
//! (`pkt_length`, FCS included), `PACKETS_AND_BYTES` does both on a pair register (`lo`
//! packets, `hi` bytes, 32 bits each). A `DirectCounter` has a cell per entry of its table
//! (and one more, at index `size`, for what the default action counts on a miss): every
//! action of the table that counts takes a hidden action-data parameter,
//! [`ENTRY_INDEX_PARAM`], which the lowering and the control plane fill with the entry's
//! place (bf-p4c addresses a direct counter by the match address instead, at no cost in
//! action data).

use super::*;

/// The hidden action parameter carrying a `DirectCounter` cell's index (the entry's place
/// in its table; `size` for the default action).
pub const ENTRY_INDEX_PARAM: &str = "$entry_index";

/// What a counter counts (P4's `CounterType_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterKind {
    Packets,
    Bytes,
    PacketsAndBytes,
}

/// A counter as the control plane names it.
#[derive(Clone, Debug)]
pub struct CounterInfo {
    /// `Control.name`.
    pub p4_name: String,
    pub local_name: String,
    /// The IR register array holding it.
    pub register: String,
    pub kind: CounterKind,
    /// A `DirectCounter`'s IR table.
    pub direct_table: Option<String>,
    /// Cells: the counter's size (a direct counter's: its table's size, plus one).
    pub size: u32,
}

impl CounterInfo {
    /// (packets, bytes) of a cell as the register read gives it (`None` for what the
    /// counter does not count).
    pub fn split(&self, cell: u64) -> (Option<u64>, Option<u64>) {
        match self.kind {
            CounterKind::Packets => (Some(cell), None),
            CounterKind::Bytes => (None, Some(cell)),
            CounterKind::PacketsAndBytes => (Some(cell & 0xffff_ffff), Some(cell >> 32)),
        }
    }
}

impl<'a> Lowerer<'a> {
    /// `c.count(index)` (a `Counter`) or `dc.count()` (a `DirectCounter`) in action
    /// `action`: an `execute` of the counter's stateful-ALU program.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn counter_count(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        d: &'a Decl,
        inst: &str,
        ext: &str,
        args: &[Expr],
        written: &Written,
        span: Span,
    ) -> R<Vec<Primitive>> {
        let direct = ext == "DirectCounter";
        let index = if direct {
            if !args.is_empty() {
                return self.err(span, format!("`{inst}.count()` of a DirectCounter takes no index: the entry that matched is its cell"));
            }
            let Some((table, size)) = self.direct_counter_table(c, inst) else {
                return self.err(
                    span,
                    format!("DirectCounter `{inst}` is counted in action `{action}`, but no table of `{}` names it in `counters = {inst}`", c.name),
                );
            };
            let bits = (32 - size.leading_zeros()).max(1);
            if let Some(prev) = self.direct_counted.get(action) {
                if prev.0 != inst {
                    return self.err(
                        span,
                        format!(
                            "action `{action}` counts two DirectCounters; an entry addresses one"
                        ),
                    );
                }
            }
            self.direct_counted
                .insert(action.to_string(), (inst.to_string(), table, bits));
            Operand::Param(ENTRY_INDEX_PARAM.to_string())
        } else {
            match args {
                [i] => self.operand(c, action, params, i, None, written)?,
                [_, adjust] => {
                    return self.err(
                        adjust.span,
                        "`count(index, adjust_byte_count)`: the byte adjustment is not modelled",
                    )
                }
                _ => {
                    return self.err(
                        span,
                        format!("`{inst}.count(index)` takes the cell's index"),
                    )
                }
            }
        };
        let ra = self.ensure_counter(c, d, inst, direct)?;
        Ok(vec![Primitive::Execute {
            register_action: ra,
            index,
        }])
    }

    /// The table of control `c` whose `counters` property names `inst`, and its size.
    fn direct_counter_table(&self, c: &Ctl<'a>, inst: &str) -> Option<(String, u32)> {
        for (tname, l) in &c.locals {
            let Local::Table(t) = l else { continue };
            let DeclKind::Table { props, .. } = &t.kind else {
                continue;
            };
            let names_it = props.iter().any(|p| {
                matches!(p, TableProp::Value { name, value, .. }
                    if name == "counters" && value.path().as_deref() == Some(inst))
            });
            if !names_it {
                continue;
            }
            let keyless = props
                .iter()
                .all(|p| !matches!(p, TableProp::Key(ks, _) if !ks.is_empty()));
            let size = props
                .iter()
                .find_map(|p| match p {
                    TableProp::Value { name, value, .. } if name == "size" => self
                        .const_value(value, &c.locals)
                        .ok()
                        .map(|v| v.0.min(u32::MAX as u128 - 1) as u32),
                    _ => None,
                })
                .unwrap_or(if keyless { 0 } else { 512 });
            return Some((self.ir_name(&c.name, tname), size));
        }
        None
    }

    /// The register array and stateful-ALU program of counter `inst`, made the first time.
    fn ensure_counter(&mut self, c: &Ctl<'a>, d: &'a Decl, inst: &str, direct: bool) -> R<String> {
        let reg = self.ir_name(&c.name, inst);
        let ra_name = format!("{reg}$count");
        if self.prog.registers.iter().any(|r| r.name == reg) {
            return Ok(ra_name);
        }
        let DeclKind::Instance {
            ty: Type::Named(_, targs),
            args,
            ..
        } = &d.kind
        else {
            unreachable!("a counter is an extern instance")
        };
        let width = match targs.first() {
            // `Counter<_, I>` leaves the width to the compiler: our choice is 32-bit cells
            // (a PACKETS_AND_BYTES counter takes a pair of them whatever the width).
            Some(Type::Named(n, a)) if n == "_" && a.is_empty() => Some(32),
            Some(t) => self.resolve(t, d.span)?.width(),
            None => None,
        };
        if !matches!(width, Some(32 | 64)) {
            let what = if direct { "DirectCounter" } else { "Counter" };
            let cells = width.map_or("these".to_string(), |w| format!("bit<{w}>"));
            return self.err(
                d.span,
                format!("a {what} of {cells} cells: counters are lowered onto stateful-ALU cells of bit<32> or bit<64>"),
            );
        }
        let width = width.unwrap();
        let (size, ty) = if direct {
            let Some((_, size)) = self.direct_counter_table(c, inst) else {
                return self.err(
                    d.span,
                    format!("no table names DirectCounter `{inst}` in `counters`"),
                );
            };
            (size + 1, args.first())
        } else {
            let Some(s) = args.first() else {
                return self.err(d.span, "a Counter takes its size and CounterType_t");
            };
            let (v, _) = self.const_value(s, &c.locals)?;
            (v.min(u32::MAX as u128) as u32, args.get(1))
        };
        let kind = match ty.map(|e| &e.kind) {
            Some(ExprKind::Member(b, m)) if b.path().as_deref() == Some("CounterType_t") => {
                match m.as_str() {
                    "PACKETS" => CounterKind::Packets,
                    "BYTES" => CounterKind::Bytes,
                    "PACKETS_AND_BYTES" => CounterKind::PacketsAndBytes,
                    other => {
                        return self.err(
                            d.span,
                            format!("CounterType_t.{other} is not a counter type"),
                        )
                    }
                }
            }
            _ => {
                return self.err(
                    d.span,
                    "a counter's type is CounterType_t.PACKETS, BYTES or PACKETS_AND_BYTES",
                )
            }
        };
        let length = match c.gress {
            Gress::Egress => "eg_intr_md.pkt_length",
            _ => "ig_intr_md.pkt_length",
        };
        let add =
            |b: ir::SaluOperand| ir::SaluUpdate::new(ir::SaluOp::Add, ir::SaluOperand::Cell, b);
        let (cell_bits, pair, updates) = match kind {
            CounterKind::Packets => (width, false, vec![add(ir::SaluOperand::Const(1))]),
            CounterKind::Bytes => (
                width,
                false,
                vec![add(ir::SaluOperand::Field(length.to_string()))],
            ),
            CounterKind::PacketsAndBytes => (
                32,
                true,
                vec![
                    add(ir::SaluOperand::Const(1)),
                    ir::SaluUpdate::new(
                        ir::SaluOp::Add,
                        ir::SaluOperand::CellHi,
                        ir::SaluOperand::Field(length.to_string()),
                    )
                    .hi(),
                ],
            ),
        };
        self.prog.registers.push(ir::RegisterArray {
            name: reg.clone(),
            cell_bits: cell_bits as u8,
            size,
            pair,
            signed: false,
        });
        let mut ra = ir::RegisterAction::new(&ra_name, &reg);
        ra.updates = updates;
        self.prog.register_actions.push(ra);
        self.spans.push((reg.clone(), d.span));
        self.spans.push((ra_name.clone(), d.span));
        let direct_table = if direct {
            self.direct_counter_table(c, inst).map(|t| t.0)
        } else {
            None
        };
        self.counters.push(CounterInfo {
            p4_name: format!("{}.{inst}", c.name),
            local_name: inst.to_string(),
            register: reg,
            kind,
            direct_table,
            size,
        });
        Ok(ra_name)
    }

    /// The value of the hidden [`ENTRY_INDEX_PARAM`] for an entry at `place` of table
    /// `table` running IR action `action` (`None`: the action takes none).
    pub(super) fn entry_index(&self, action: &str, place: u32) -> Option<u64> {
        self.direct_counted.get(action).map(|_| place as u64)
    }

    /// Checks `counters = X` of table `table`: a DirectCounter of the control, counted only by
    /// the table's actions.
    pub(super) fn check_counters_property(
        &self,
        c: &Ctl<'a>,
        table: &str,
        value: &Expr,
        span: Span,
        actions: &[(String, String)],
    ) -> R<()> {
        let inst = value.path().unwrap_or_default();
        match c.locals.get(&inst) {
            Some(Local::Extern(_, e)) if e == "DirectCounter" => {}
            Some(Local::Extern(_, e)) => {
                return self.err(
                    span,
                    format!("`counters = {inst}`: `{inst}` is a {e}, not a DirectCounter"),
                )
            }
            _ => {
                return self.err(
                    span,
                    format!(
                        "`counters = {inst}`: no DirectCounter `{inst}` in `{}`",
                        c.name
                    ),
                )
            }
        }
        for (ir, (dc, t, _)) in &self.direct_counted {
            if dc == &inst && t != table && actions.iter().any(|a| &a.1 == ir) {
                return self.err(span, format!("action `{ir}` counts DirectCounter `{inst}` of table `{t}`; an action of two tables cannot count one table's entries"));
            }
        }
        Ok(())
    }
}
