//! `Hash`, `Register` and `RegisterAction`: hash units, and register action bodies lowered onto
//! the stateful ALU (refused with the reason when a body exceeds it).

use super::*;

impl<'a> Lowerer<'a> {
    /// `dst = h.get({fields})`: an IR hash unit named after the instance.
    pub(super) fn hash_get(
        &mut self,
        c: &Ctl<'a>,
        d: &'a Decl,
        inst: &str,
        args: &[Expr],
        dst: &FieldRef,
    ) -> R<Primitive> {
        let DeclKind::Instance {
            ty, args: cargs, ..
        } = &d.kind
        else {
            unreachable!()
        };
        let ir = self.ir_name(&c.name, inst);
        let Type::Named(_, targs) = ty else {
            unreachable!()
        };
        if let Some(w) = targs
            .first()
            .map(|t| self.resolve(t, d.span))
            .transpose()?
            .and_then(|t| t.width())
        {
            if w != dst.bits {
                return self.err(
                    d.span,
                    format!(
                        "width mismatch: hash `{inst}` gives bit<{w}> but `{}` is bit<{}>",
                        dst.ir, dst.bits
                    ),
                );
            }
        }
        let algorithm = match cargs.first().map(|e| &e.kind) {
            Some(ExprKind::Member(b, m)) if b.path().as_deref() == Some("HashAlgorithm_t") => {
                match m.as_str() {
                    "CRC16" => ir::HashAlgorithm::Crc16,
                    "CRC32" => ir::HashAlgorithm::Crc32,
                    other => {
                        return self.err(
                            cargs[0].span,
                            format!(
                            "HashAlgorithm_t.{other}: the IR's hash units compute CRC16 and CRC32"
                        ),
                        )
                    }
                }
            }
            _ => return self.err(d.span, "a Hash takes a HashAlgorithm_t (CRC16 or CRC32)"),
        };
        let items: Vec<&Expr> = match args {
            [Expr {
                kind: ExprKind::List(v),
                ..
            }] => v.iter().collect(),
            [one] => vec![one],
            _ => return self.err(d.span, "`get` takes the list of fields to hash"),
        };
        let mut inputs = Vec::new();
        for it in items {
            inputs.push(self.field(c, it)?.ir);
        }
        match self.hashes.get(&ir) {
            Some(prev) if *prev != inputs => {
                return self.err(
                    args.first().map_or(d.span, |a| a.span),
                    format!("hash `{inst}` is used on two different field lists; one IR hash unit hashes one list"),
                )
            }
            Some(_) => {}
            None => {
                self.hashes.insert(ir.clone(), inputs.clone());
                self.prog.hashes.push(ir::HashUnit {
                    name: ir.clone(),
                    algorithm,
                    polynomial: None,
                    inputs,
                });
                self.spans.push((ir.clone(), d.span));
            }
        }
        Ok(Primitive::Hash {
            dst: dst.ir.clone(),
            hash: ir,
        })
    }

    /// `[dst =] ra.execute(index)`: lowers the RegisterAction (once) and gives its IR name
    /// and the index operand.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn execute(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        d: &'a Decl,
        inst: &str,
        index: &Expr,
        dst: Option<&FieldRef>,
        written: &Written,
        span: Span,
    ) -> R<(String, Operand)> {
        let ir = self.ir_name(&c.name, inst);
        let index = self.operand(c, action, params, index, None, written)?;
        let out_dst = dst.map(|f| f.ir.clone());
        if let Some(prev) = self.ra_outputs.get(&ir) {
            if *prev != out_dst {
                return self.err(
                    span,
                    format!(
                        "RegisterAction `{inst}` is executed with its result going to two \
                         places; the stateful ALU's output goes to one field"
                    ),
                );
            }
            return Ok((ir, index));
        }
        self.ra_outputs.insert(ir.clone(), out_dst.clone());
        let DeclKind::Instance {
            args: cargs,
            methods,
            ..
        } = &d.kind
        else {
            unreachable!()
        };
        let reg = match cargs.first().and_then(|e| e.path()) {
            Some(r) => r,
            None => return self.err(d.span, "a RegisterAction takes its Register"),
        };
        let Some(Local::Extern(rd, rext)) = c.locals.get(&reg).cloned() else {
            return self.err(d.span, format!("`{reg}` is not a Register of `{}`", c.name));
        };
        if rext != "Register" {
            return self.err(d.span, format!("`{reg}` is a {rext}, not a Register"));
        }
        let reg_ir = self.ensure_register(c, rd, &reg)?;
        let apply = methods.iter().find_map(|m| match &m.kind {
            DeclKind::Function {
                name, params, body, ..
            } if name == "apply" => Some((m, params, body)),
            _ => None,
        });
        let Some((m, aparams, body)) = apply else {
            return self.err(
                d.span,
                format!("RegisterAction `{inst}` has no `apply` method"),
            );
        };
        let value = aparams.first().map(|p| p.name.clone()).unwrap_or_default();
        let halves = match self.prog.registers.iter().find(|r| r.name == reg_ir) {
            Some(r) if r.pair => {
                let ty = aparams
                    .first()
                    .map(|p| self.resolve(&p.ty, p.span))
                    .transpose()?;
                let Some(Ty::Struct(sn)) = ty else {
                    return self.err(m.span, format!("`{reg}` is a pair register: the apply method's cell is its pair struct"));
                };
                let fs = self.structs.get(&sn).copied().unwrap_or(&[]);
                match fs {
                    [lo, hi] => Some((lo.name.clone(), hi.name.clone())),
                    _ => return self.err(m.span, format!("struct `{sn}` is not a pair")),
                }
            }
            _ => None,
        };
        let cell = CellNames { value, halves };
        let rv = aparams.get(1).map(|p| p.name.clone());
        let mut sb = SaluBody {
            conditions: Vec::new(),
            updates: Vec::new(),
            rv: None,
        };
        self.salu_stmts(c, inst, &cell, rv.as_deref(), body, &[], &mut sb)?;
        use crate::program::check::{SALU_MAX_CONDITIONS, SALU_MAX_UPDATES};
        if sb.conditions.len() > SALU_MAX_CONDITIONS {
            return self.err(
                m.span,
                format!(
                    "RegisterAction `{inst}` needs {} conditions; a Tofino2 stateful ALU has {SALU_MAX_CONDITIONS} comparators",
                    sb.conditions.len()
                ),
            );
        }
        for half in [ir::Half::Lo, ir::Half::Hi] {
            let n = sb.updates.iter().filter(|u| u.half == half).count();
            if n > SALU_MAX_UPDATES {
                let what = match (&cell.halves, half) {
                    (None, _) => "the cell".to_string(),
                    (Some((lo, _)), ir::Half::Lo) => format!("`{}.{lo}`", cell.value),
                    (Some((_, hi)), ir::Half::Hi) => format!("`{}.{hi}`", cell.value),
                };
                return self.err(
                    m.span,
                    format!(
                        "RegisterAction `{inst}` writes {what} in {n} different ways; a Tofino2 stateful ALU has {SALU_MAX_UPDATES} update ALUs per half"
                    ),
                );
            }
        }
        let mut ra = ir::RegisterAction::new(&ir, &reg_ir);
        ra.conditions = sb.conditions;
        ra.updates = sb.updates;
        if let Some(dst) = out_dst {
            let Some(v) = sb.rv else {
                return self.err(
                    span,
                    format!(
                        "RegisterAction `{inst}` never sets `rv`, so `execute` returns nothing"
                    ),
                );
            };
            ra.outputs.push(ir::SaluOutput { dst, value: v });
        }
        self.prog.register_actions.push(ra);
        self.spans.push((ir.clone(), d.span));
        Ok((ir, index))
    }

    /// Lowers a RegisterAction body under `guards`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn salu_stmts(
        &mut self,
        c: &Ctl<'a>,
        inst: &str,
        cell: &CellNames,
        rv: Option<&str>,
        body: &[Stmt],
        guards: &[ir::Guard],
        sb: &mut SaluBody,
    ) -> R<()> {
        let value = cell.value.as_str();
        for st in body {
            match &st.kind {
                StmtKind::Empty => {}
                StmtKind::Block(b) => self.salu_stmts(c, inst, cell, rv, b, guards, sb)?,
                StmtKind::Assign(lhs, _)
                    if lhs.path().as_deref() == Some(value) && cell.halves.is_some() =>
                {
                    return self.err(
                        lhs.span,
                        format!("the cell of a pair register is written half by half (`{value}.{}`, `{value}.{}`)",
                            cell.halves.as_ref().map_or("", |h| h.0.as_str()),
                            cell.halves.as_ref().map_or("", |h| h.1.as_str())),
                    );
                }
                StmtKind::Assign(lhs, rhs) if cell.half(lhs).is_some() => {
                    let half = cell.half(lhs).unwrap_or(ir::Half::Lo);
                    let exclusive = |u: &ir::SaluUpdate| {
                        u.when.iter().any(|g| {
                            guards
                                .iter()
                                .any(|h| h.condition == g.condition && h.holds != g.holds)
                        })
                    };
                    if sb.updates.iter().any(|u| u.half == half && !exclusive(u)) {
                        return self.err(
                            st.span,
                            format!("RegisterAction `{inst}` writes `{}` twice on one path; a stateful ALU writes the cell once", expr_text(lhs)),
                        );
                    }
                    let (op, a, b) = self.salu_expr(c, cell, rhs)?;
                    sb.updates.push(ir::SaluUpdate {
                        when: guards.to_vec(),
                        half,
                        op,
                        a,
                        b,
                    });
                }
                StmtKind::Assign(lhs, rhs) if rv.is_some() && lhs.path().as_deref() == rv => {
                    if !guards.is_empty() {
                        return self.err(
                            st.span,
                            format!("RegisterAction `{inst}` sets `rv` under a condition; the model's output ALU returns the cell unconditionally"),
                        );
                    }
                    if let Some((obj, "predicate", args)) = method_call(rhs) {
                        if obj.path().as_deref() == Some("this") {
                            sb.rv = Some(self.salu_predicate(c, inst, cell, rhs, args, sb)?);
                            continue;
                        }
                    }
                    let Some(half) = cell.half(rhs) else {
                        return self.err(
                            rhs.span,
                            format!("`rv` is set to the cell (`{value}`, or a pair's half, before or after its update) or to `this.predicate(...)`; other outputs are not supported"),
                        );
                    };
                    let updated = sb.updates.iter().any(|u| u.half == half);
                    sb.rv = Some(match (half, updated) {
                        (ir::Half::Lo, false) => ir::SaluOutputValue::Old,
                        (ir::Half::Lo, true) => ir::SaluOutputValue::New,
                        (ir::Half::Hi, false) => ir::SaluOutputValue::OldHi,
                        (ir::Half::Hi, true) => ir::SaluOutputValue::NewHi,
                    });
                }
                StmtKind::If(cond, then, els) => {
                    let mut conds = Vec::new();
                    let mut e = cond;
                    while let ExprKind::Binary(BinOp::LAnd, a, b) = &e.kind {
                        if !els.is_empty() {
                            return self.err(
                                cond.span,
                                "`&&` with an `else` in a RegisterAction is not supported",
                            );
                        }
                        conds.push(&**a);
                        e = b;
                    }
                    conds.push(e);
                    let mut g = guards.to_vec();
                    let mut last = 0;
                    for k in conds {
                        let idx = self.salu_comparator(c, cell, k, sb)?;
                        g.push(ir::Guard {
                            condition: idx,
                            holds: true,
                        });
                        last = idx;
                    }
                    self.salu_stmts(c, inst, cell, rv, then, &g, sb)?;
                    let mut ge = guards.to_vec();
                    ge.push(ir::Guard {
                        condition: last,
                        holds: false,
                    });
                    self.salu_stmts(c, inst, cell, rv, els, &ge, sb)?;
                }
                _ => {
                    return self.err(
                        st.span,
                        "a RegisterAction body assigns the cell, sets `rv` or branches on a \
                         comparison; this statement has no stateful-ALU equivalent",
                    )
                }
            }
        }
        Ok(())
    }

    /// The comparator of condition `k`, shared with an equal one already in `sb`.
    pub(super) fn salu_comparator(
        &mut self,
        c: &Ctl<'a>,
        cell: &CellNames,
        k: &Expr,
        sb: &mut SaluBody,
    ) -> R<usize> {
        let sc = self.salu_condition(c, cell, k)?;
        Ok(match sb.conditions.iter().position(|x| *x == sc) {
            Some(i) => i,
            None => {
                sb.conditions.push(sc);
                sb.conditions.len() - 1
            }
        })
    }

    /// `rv = this.predicate(c0, c1, ...)` (T2NA's RegisterAction `predicate`): the
    /// comparators' results as the IR's predicate output, bit i for comparator i. The
    /// arguments must be comparators 0, 1, ... in order, and come before any write of the
    /// cell (the comparators see the cell as read, which in P4's order is the cell before
    /// the writes).
    pub(super) fn salu_predicate(
        &mut self,
        c: &Ctl<'a>,
        inst: &str,
        cell: &CellNames,
        call: &Expr,
        args: &[Expr],
        sb: &mut SaluBody,
    ) -> R<ir::SaluOutputValue> {
        if args.is_empty() {
            return self.err(
                call.span,
                "`this.predicate()` takes the comparisons it reports (`this.predicate(value >= X)`); the model's predicate output is bit i for comparator i",
            );
        }
        if !sb.updates.is_empty() {
            return self.err(
                call.span,
                format!("RegisterAction `{inst}` takes `this.predicate(...)` after writing the cell; the comparators see the cell as read, so set `rv` before the writes"),
            );
        }
        for (i, a) in args.iter().enumerate() {
            let idx = self.salu_comparator(c, cell, a, sb)?;
            if idx != i {
                return self.err(
                    a.span,
                    format!("argument {} of `this.predicate` is comparator {idx}; the model's predicate output is bit i for comparator i, so its arguments are the comparators in order (first use)", i + 1),
                );
            }
        }
        Ok(ir::SaluOutputValue::Predicate)
    }

    pub(super) fn salu_operand(
        &mut self,
        c: &Ctl<'a>,
        cell: &CellNames,
        e: &Expr,
    ) -> R<ir::SaluOperand> {
        if let Some(h) = cell.half(e) {
            return Ok(match h {
                ir::Half::Lo => ir::SaluOperand::Cell,
                ir::Half::Hi => ir::SaluOperand::CellHi,
            });
        }
        if cell.halves.is_some() && e.path().as_deref() == Some(cell.value.as_str()) {
            return self.err(e.span, "a pair register's cell is read half by half");
        }
        if let Ok((v, _)) = self.const_value(e, &c.locals) {
            if v >> 34 != 0 {
                return self.err(e.span, "a stateful ALU constant is at most 34 bits");
            }
            return Ok(ir::SaluOperand::Const(v as u64));
        }
        if let ExprKind::Cast(_, inner) = &e.kind {
            return self.salu_operand(c, cell, inner);
        }
        Ok(ir::SaluOperand::Field(self.field(c, e)?.ir))
    }

    pub(super) fn salu_expr(
        &mut self,
        c: &Ctl<'a>,
        cell: &CellNames,
        e: &Expr,
    ) -> R<(ir::SaluOp, ir::SaluOperand, ir::SaluOperand)> {
        let zero = ir::SaluOperand::Const(0);
        if let ExprKind::Call { func, args, .. } = &e.kind {
            if let (Some(n @ ("min" | "max")), [a, b]) = (func.path().as_deref(), args.as_slice()) {
                let op = if n == "min" {
                    ir::SaluOp::Min
                } else {
                    ir::SaluOp::Max
                };
                return Ok((
                    op,
                    self.salu_operand(c, cell, a)?,
                    self.salu_operand(c, cell, b)?,
                ));
            }
        }
        if let ExprKind::Binary(op, a, b) = &e.kind {
            let op = match op {
                BinOp::Add => ir::SaluOp::Add,
                BinOp::Sub => ir::SaluOp::Sub,
                BinOp::And => ir::SaluOp::And,
                BinOp::Or => ir::SaluOp::Or,
                BinOp::Xor => ir::SaluOp::Xor,
                other => {
                    return self.err(
                        e.span,
                        format!("operator `{}` in a RegisterAction: the stateful ALU adds, subtracts, takes min/max and does bitwise logic", other.text()),
                    )
                }
            };
            return Ok((
                op,
                self.salu_operand(c, cell, a)?,
                self.salu_operand(c, cell, b)?,
            ));
        }
        Ok((ir::SaluOp::Set, self.salu_operand(c, cell, e)?, zero))
    }

    pub(super) fn salu_condition(
        &mut self,
        c: &Ctl<'a>,
        cell: &CellNames,
        e: &Expr,
    ) -> R<ir::SaluCondition> {
        let ExprKind::Binary(op, a, b) = &e.kind else {
            return self.err(e.span, "a RegisterAction condition compares two operands");
        };
        let Some(cmp) = cmp_of(*op) else {
            return self.err(
                e.span,
                "a RegisterAction condition compares two operands (==, !=, <, <=, >, >=)",
            );
        };
        Ok(ir::SaluCondition {
            a: self.salu_operand(c, cell, a)?,
            cmp,
            b: self.salu_operand(c, cell, b)?,
        })
    }

    /// The halves of a pair register's cell struct `sn`: two fields of one width, the first
    /// the stateful ALU's `lo` half, the second its `hi` (width, signed) each.
    pub(super) fn pair_halves(&self, sn: &str, span: Span) -> R<((u32, bool), (u32, bool))> {
        let fs = self.structs.get(sn).copied().unwrap_or(&[]);
        let mut ws = Vec::new();
        for f in fs {
            match self.resolve(&f.ty, f.span)? {
                Ty::Bits(w, s) => ws.push((w, s)),
                _ => ws.push((0, false)),
            }
        }
        match ws.as_slice() {
            [lo, hi] if lo.0 == hi.0 && lo.0 != 0 => Ok((*lo, *hi)),
            _ => self.err(
                span,
                format!(
                    "struct `{sn}` as a Register cell: a pair register's cell is a struct of \
                     two bit<N> (or int<N>) fields of the same width (the stateful ALU's lo \
                     and hi halves)"
                ),
            ),
        }
    }

    /// The IR register array of `Register` instance `d` (named `reg`), declared once.
    pub(super) fn ensure_register(&mut self, c: &Ctl<'a>, d: &'a Decl, reg: &str) -> R<String> {
        let ir = self.ir_name(&c.name, reg);
        if self.prog.registers.iter().any(|r| r.name == ir) {
            return Ok(ir);
        }
        let DeclKind::Instance {
            ty: Type::Named(_, targs),
            args,
            ..
        } = &d.kind
        else {
            unreachable!()
        };
        let cell = match targs.first() {
            Some(t) => self.resolve(t, d.span)?,
            None => return self.err(d.span, "a Register needs its cell type"),
        };
        let (bits, signed, pair) = match cell {
            Ty::Bits(w, s) => (w, s, false),
            Ty::Struct(sn) => {
                let (lo, hi) = self.pair_halves(&sn, d.span)?;
                (lo.0, lo.1 || hi.1, true)
            }
            _ => {
                return self.err(
                    d.span,
                    "a Register's cells are bit<N>, int<N> or a pair struct",
                )
            }
        };
        if pair && ![8, 16, 32].contains(&bits) {
            return self.err(
                d.span,
                format!("a pair Register of bit<{bits}> halves: Tofino2's stateful ALU pairs halves of 8, 16 or 32 bits"),
            );
        }
        if ![1, 8, 16, 32, 64].contains(&bits) {
            return self.err(
                d.span,
                format!("a Register of bit<{bits}>: Tofino2's stateful ALU holds cells of 1, 8, 16, 32 or 64 bits"),
            );
        }
        // The index type was never looked at: `bit<100000>` passed.
        if let Some(t) = targs.get(1) {
            match self.resolve(t, d.span)? {
                Ty::Bits(w, false) if (1..=32).contains(&w) => {}
                Ty::Bits(w, s) => {
                    return self.err(
                        d.span,
                        format!(
                            "a Register indexed by {}<{w}>: the index is a bit<N> of 1 to 32 \
                             bits (a register array holds at most 2^32 cells)",
                            if s { "int" } else { "bit" }
                        ),
                    )
                }
                _ => return self.err(d.span, "a Register's index type is bit<N>"),
            }
        }
        let size = match args.first() {
            Some(e) => self.const_value(e, &c.locals)?.0,
            None => return self.err(d.span, "a Register needs its size"),
        };
        if let Some(init) = args.get(1) {
            if self.const_value(init, &c.locals)?.0 != 0 {
                return self.err(init.span, "the model's register cells start at 0; a non-zero initial value is not supported");
            }
        }
        self.prog.registers.push(ir::RegisterArray {
            name: ir.clone(),
            cell_bits: bits as u8,
            size: size.min(u32::MAX as u128) as u32,
            pair,
            signed,
        });
        self.spans.push((ir.clone(), d.span));
        self.registers
            .push((format!("{}.{reg}", c.name), ir.clone()));
        Ok(ir)
    }
}
