//! Lowering a control's apply block: statements to IR statements, `if` conditions to
//! gateways, table applications with `hit`/`miss`/`action_run`, and action calls as keyless tables.

use super::*;

impl<'a> Lowerer<'a> {
    /// Lowers the apply block of a control.
    pub(super) fn lower_control(&mut self, d: &'a Decl, g: Gress) -> R<Vec<ir::Stmt>> {
        let c = self.ctl(d, g)?;
        let DeclKind::Control { apply, .. } = &d.kind else {
            unreachable!()
        };
        let body = self.block(&c, apply)?;
        self.resolve_exits(&c, body)
    }

    pub(super) fn block(&mut self, c: &Ctl<'a>, stmts: &'a [Stmt]) -> R<Vec<ir::Stmt>> {
        let mut out = Vec::new();
        let mut pending: Vec<&'a Stmt> = Vec::new();
        for st in stmts {
            match &st.kind {
                StmtKind::Call(e) => {
                    if let Some((obj, "apply", [])) = method_call(e) {
                        if let Some(t) = obj
                            .path()
                            .filter(|t| matches!(c.locals.get(t), Some(Local::Table(_))))
                        {
                            self.flush(c, &mut pending, &mut out)?;
                            out.push(ir::Stmt::Apply(self.apply_table(c, &t, st.span)?));
                            continue;
                        }
                    }
                    if let ExprKind::Call { func, args, .. } = &e.kind {
                        if let Some(a) = func.path().filter(|a| self.action_decl(c, a).is_some()) {
                            self.flush(c, &mut pending, &mut out)?;
                            out.push(ir::Stmt::Apply(self.action_table(c, &a, args, st.span)?));
                            continue;
                        }
                    }
                    if depends_on(&pending, st) {
                        self.flush(c, &mut pending, &mut out)?;
                    }
                    pending.push(st);
                }
                StmtKind::Assign(..) => {
                    // Statements in a row share one action while they can act in parallel,
                    // as one VLIW instruction; one that reads or writes what an earlier one
                    // wrote starts the next action (and its keyless table).
                    if depends_on(&pending, st) {
                        self.flush(c, &mut pending, &mut out)?;
                    }
                    pending.push(st)
                }
                StmtKind::Empty => {}
                StmtKind::Block(b) => {
                    self.flush(c, &mut pending, &mut out)?;
                    out.extend(self.block(c, b)?);
                }
                StmtKind::If(cond, then, els) => {
                    self.flush(c, &mut pending, &mut out)?;
                    let (negated, inner) = match &cond.kind {
                        ExprKind::Unary(UnOp::Not, x) => (true, &**x),
                        _ => (false, cond),
                    };
                    if let Some((t, m @ ("hit" | "miss"))) = table_result(c, inner) {
                        let (ir, field) = self.apply_flagged(c, &t, st.span, Flag::Hit)?;
                        out.push(ir::Stmt::Apply(ir));
                        let want = (m == "hit") != negated;
                        let k = ir::Condition::new(&field, Cmp::Eq, Operand::Const(want as u64));
                        let then_ir = self.block(c, then)?;
                        let else_ir = self.block(c, els)?;
                        out.push(ir::Stmt::if_(k, then_ir, else_ir));
                    } else {
                        out.extend(self.gateway(c, cond, then, els)?);
                    }
                }
                StmtKind::Switch(e, cases) => {
                    self.flush(c, &mut pending, &mut out)?;
                    let Some((t, "action_run")) = table_result(c, e) else {
                        return self.err(
                            e.span,
                            "a `switch` is supported on `t.apply().action_run` only",
                        );
                    };
                    let (ir, field) = self.apply_flagged(c, &t, st.span, Flag::ActionRun)?;
                    out.push(ir::Stmt::Apply(ir.clone()));
                    out.extend(self.switch_cases(c, &ir, &field, cases)?);
                }
                StmtKind::Exit => {
                    self.flush(c, &mut pending, &mut out)?;
                    out.push(self.exit_mark(st.span));
                }
                StmtKind::Return(_) => {
                    return self.err(st.span, "`return` in an apply block is not supported")
                }
                StmtKind::Var(_) => {
                    return self.err(
                        st.span,
                        "local variables are not supported: the IR keeps values in PHV \
                         fields; use a field of the metadata struct",
                    )
                }
            }
        }
        self.flush(c, &mut pending, &mut out)?;
        Ok(out)
    }

    /// Statements of an apply block outside any table become an action of their own, run
    /// by a keyless table (as p4c does): `act_L<line>` and `tbl_act_L<line>`.
    pub(super) fn flush(
        &mut self,
        c: &Ctl<'a>,
        pending: &mut Vec<&'a Stmt>,
        out: &mut Vec<ir::Stmt>,
    ) -> R<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let span = pending[0].span;
        let mut name = format!("act_L{}", span.line);
        let mut k = 1;
        while self.prog.actions.iter().any(|a| a.name == name) {
            k += 1;
            name = format!("act_L{}_{k}", span.line);
        }
        let stmts: Vec<Stmt> = pending.drain(..).cloned().collect();
        let prims = self.action_body(c, &name, &HashMap::new(), &stmts, &[])?;
        self.prog.actions.push(ir::Action {
            name: name.clone(),
            params: Vec::new(),
            primitives: prims,
        });
        self.spans.push((name.clone(), span));
        let tname = format!("tbl_{name}");
        self.push_keyless(&tname, &name, &[], span);
        out.push(ir::Stmt::Apply(tname));
        Ok(())
    }

    pub(super) fn push_keyless(&mut self, tname: &str, action: &str, args: &[u64], span: Span) {
        self.prog.tables.push(
            ir::Table::new(tname, MatchKind::Exact, &[], 0)
                .action(action)
                .default_action(action, args),
        );
        self.spans.push((tname.to_string(), span));
        self.applied.insert(tname.to_string(), span);
    }

    /// An action called directly in an apply block: a keyless table `tbl_<action>`.
    pub(super) fn action_table(
        &mut self,
        c: &Ctl<'a>,
        a: &str,
        args: &[Expr],
        span: Span,
    ) -> R<String> {
        let ir = self.ensure_action(c, a, span)?;
        if let Some((dc, t, _)) = self.direct_counted.get(&ir) {
            return self.err(
                span,
                format!("action `{a}` counts DirectCounter `{dc}` of table `{t}`: run it through that table"),
            );
        }
        let vals = self.action_args(c, &ir, args, span)?;
        let mut tname = format!("tbl_{ir}");
        let mut k = 1;
        while self.prog.tables.iter().any(|t| t.name == tname) {
            k += 1;
            tname = format!("tbl_{ir}_{k}");
        }
        self.push_keyless(&tname, &ir, &vals, span);
        Ok(tname)
    }

    pub(super) fn action_decl(&self, c: &Ctl<'a>, a: &str) -> Option<&'a Decl> {
        match c.locals.get(a) {
            Some(Local::Action(d)) => Some(d),
            _ => self.top_actions.get(a).copied(),
        }
    }

    /// The constant arguments of a call of IR action `ir`.
    pub(super) fn action_args(
        &self,
        c: &Ctl<'a>,
        ir: &str,
        args: &[Expr],
        span: Span,
    ) -> R<Vec<u64>> {
        let params = self
            .prog
            .actions
            .iter()
            .find(|a| a.name == ir)
            .map(|a| a.params.clone())
            .unwrap_or_default();
        // A DirectCounter's index is the entry's place, not an argument.
        let params: Vec<ir::Param> = params
            .into_iter()
            .filter(|p| p.name != ENTRY_INDEX_PARAM)
            .collect();
        if params.len() != args.len() {
            return self.err(
                span,
                format!(
                    "action `{ir}` takes {} arguments, {} given",
                    params.len(),
                    args.len()
                ),
            );
        }
        let mut out = Vec::new();
        for (p, a) in params.iter().zip(args) {
            let (v, _) = self.const_value(a, &c.locals)?;
            if v >> p.bits != 0 {
                return self.err(
                    a.span,
                    format!(
                        "argument {v} does not fit parameter `{}` (bit<{}>)",
                        p.name, p.bits
                    ),
                );
            }
            out.push(v as u64);
        }
        Ok(out)
    }

    /// `if` in an apply block: IR gateways (a conjunction without `else` nests).
    pub(super) fn gateway(
        &mut self,
        c: &Ctl<'a>,
        cond: &'a Expr,
        then: &'a [Stmt],
        els: &'a [Stmt],
    ) -> R<Vec<ir::Stmt>> {
        match &cond.kind {
            ExprKind::Binary(BinOp::LAnd, a, b) => {
                if !els.is_empty() {
                    return self.err(
                        cond.span,
                        "`&&` with an `else`: the IR's gateways test one comparison each, and \
                         the `else` would need its tables in two places",
                    );
                }
                let inner_cond = self.condition(c, a)?;
                let inner = self.gateway(c, b, then, &[])?;
                Ok(vec![ir::Stmt::if_(inner_cond, inner, Vec::new())])
            }
            ExprKind::Binary(BinOp::LOr, ..) => self.err(
                cond.span,
                "`||` is not supported: the IR's gateways test one comparison each (and a \
                 table is applied in one place)",
            ),
            ExprKind::Unary(UnOp::Not, inner)
                if matches!(inner.kind, ExprKind::Binary(BinOp::LAnd | BinOp::LOr, ..)) =>
            {
                self.gateway(c, inner, els, then)
            }
            _ => {
                if let Some((obj, m @ ("hit" | "miss"), _)) = match &cond.kind {
                    ExprKind::Member(o, m) => Some((o, m.as_str(), ())),
                    _ => None,
                } {
                    let _ = obj;
                    return self.err(
                        cond.span,
                        format!(
                            "`.{m}` of a table apply is not supported: the IR's gateways test \
                             fields, not table results (set a metadata field in the actions)"
                        ),
                    );
                }
                let k = self.condition(c, cond)?;
                let t = self.block(c, then)?;
                let e = self.block(c, els)?;
                Ok(vec![ir::Stmt::if_(k, t, e)])
            }
        }
    }

    /// A gateway condition: `isValid()`, or a field compared with a constant or a field.
    pub(super) fn condition(&mut self, c: &Ctl<'a>, e: &Expr) -> R<ir::Condition> {
        let unsupported = |l: &Self| {
            l.err(
                e.span,
                "this condition is not one the model's gateways evaluate: a gateway compares \
                 one field with a constant or another field, or tests `isValid()`",
            )
        };
        if let Some((obj, "isValid", [])) = method_call(e) {
            let h = self.header_of(c, obj)?;
            return Ok(ir::Condition::new(
                &format!("{h}.$valid"),
                Cmp::Eq,
                Operand::Const(1),
            ));
        }
        if let ExprKind::Unary(UnOp::Not, inner) = &e.kind {
            let mut k = self.condition(c, inner)?;
            k.cmp = match k.cmp {
                Cmp::Eq => Cmp::Ne,
                Cmp::Ne => Cmp::Eq,
                Cmp::Lt => Cmp::Ge,
                Cmp::Ge => Cmp::Lt,
                Cmp::Le => Cmp::Gt,
                Cmp::Gt => Cmp::Le,
            };
            // `!isValid()` reads better as `== 0`.
            if k.field.ends_with(".$valid") && k.cmp == Cmp::Ne && k.value == Operand::Const(1) {
                k.cmp = Cmp::Eq;
                k.value = Operand::Const(0);
            }
            return Ok(k);
        }
        match &e.kind {
            ExprKind::Binary(op, a, b) => {
                let Some(cmp) = cmp_of(*op) else {
                    return unsupported(self);
                };
                let is_const = |x: &Expr| self.const_value(x, &c.locals).is_ok();
                let (fa, cmp, other) = if is_const(a) && !is_const(b) {
                    (b, flip(cmp), a)
                } else {
                    (a, cmp, b)
                };
                let f = self.compared_field(c, fa)?;
                if let Ok((v, w)) = self.const_value(other, &c.locals) {
                    if let Some(w) = w.filter(|&w| w != f.bits) {
                        return self.err(
                            other.span,
                            format!(
                                "width mismatch: comparing bit<{}> `{}` with a bit<{w}> constant",
                                f.bits,
                                fa.path().unwrap_or_default()
                            ),
                        );
                    }
                    if f.bits < 128 && v >> f.bits != 0 {
                        return self.err(
                            other.span,
                            format!("constant {v} does not fit in bit<{}>", f.bits),
                        );
                    }
                    return Ok(ir::Condition::new(&f.ir, cmp, Operand::Const(v as u64)));
                }
                let g = self.compared_field(c, other)?;
                if g.bits != f.bits {
                    return self.err(
                        other.span,
                        format!(
                            "width mismatch: comparing bit<{}> with bit<{}>",
                            f.bits, g.bits
                        ),
                    );
                }
                Ok(ir::Condition::new(&f.ir, cmp, Operand::Field(g.ir)))
            }
            ExprKind::Name(_) | ExprKind::Member(..) => {
                let f = self.field(c, e)?;
                if f.bits != 1 {
                    return unsupported(self);
                }
                Ok(ir::Condition::new(&f.ir, Cmp::Eq, Operand::Const(1)))
            }
            _ => unsupported(self),
        }
    }

    /// The IR header an expression (`hdr.ipv4`) names, which the program thereby uses.
    pub(super) fn header_of(&mut self, c: &Ctl<'a>, obj: &Expr) -> R<String> {
        let ir = self.header_named(c, obj)?;
        self.used_headers.insert(ir.clone());
        Ok(ir)
    }

    /// [`Self::header_of`] without counting it as a use (a deparser's emit).
    pub(super) fn header_named(&mut self, c: &Ctl<'a>, obj: &Expr) -> R<String> {
        let p = obj.path().unwrap_or_default();
        let comps: Vec<&str> = p.split('.').collect();
        if let (Some(ParamKind::Headers(s)), 2) = (c.params.get(comps[0]), comps.len()) {
            let fs = self.structs.get(s).copied().unwrap_or(&[]);
            if let Some(f) = fs.iter().find(|f| f.name == comps[1]) {
                if let Ty::Header(h) = self.resolve(&f.ty, f.span)? {
                    return Ok(self.instance(&f.name, &h, f.span)?.ir);
                }
            }
        }
        self.err(
            obj.span,
            format!("`{p}` is not a header of the headers struct"),
        )
    }

    /// Applies table `t` whose result the program tests: its actions become copies that
    /// record it in a hidden 1-bit (`.hit`) or action-index (`.action_run`) metadata field,
    /// since the IR's gateways test fields. Gives the IR table and the field.
    pub(super) fn apply_flagged(
        &mut self,
        c: &Ctl<'a>,
        t: &str,
        span: Span,
        flag: Flag,
    ) -> R<(String, String)> {
        let ir = self.apply_table(c, t, span)?;
        let (suffix, bits) = match flag {
            Flag::Hit => ("hit", 1u32),
            Flag::ActionRun => {
                let n = self.prog.tables.last().map_or(0, |t| t.actions.len()) as u32;
                ("action_run", 32 - n.leading_zeros())
            }
        };
        let field = format!("p4.{ir}.{suffix}");
        self.meta_used.insert(field.clone(), bits.max(1) as u8);
        self.meta_order.push(field.clone());
        let table_span = self.spans.iter().find(|x| x.0 == ir).map_or(span, |x| x.1);
        let mut table = self.prog.tables.pop().expect("just applied");
        let info = self
            .tables
            .iter_mut()
            .find(|i| i.ir_name == ir)
            .expect("just lowered");
        let mut renamed: Vec<(String, String)> = Vec::new();
        for (k, a) in table.actions.clone().iter().enumerate() {
            let base = self
                .prog
                .actions
                .iter()
                .find(|x| &x.name == a)
                .cloned()
                .expect("lowered");
            let mut copy = base.clone();
            copy.name = format!("{a}@{ir}");
            let value = match flag {
                Flag::Hit => 1,
                Flag::ActionRun => k as u64 + 1,
            };
            copy.primitives
                .push(Primitive::set(&field, Operand::Const(value)));
            renamed.push((a.clone(), copy.name.clone()));
            self.spans.push((copy.name.clone(), table_span));
            self.prog.actions.push(copy);
        }
        let rename = |n: &str| {
            renamed
                .iter()
                .find(|r| r.0 == n)
                .map_or(n.to_string(), |r| r.1.clone())
        };
        for e in &mut table.entries {
            e.action.action = rename(&e.action.action);
        }
        let original_default = table.default_action.action.clone();
        table.actions = renamed.iter().map(|r| r.1.clone()).collect();
        for a in &mut info.actions {
            a.1 = rename(&a.1);
        }
        match flag {
            // A miss runs the default action as written: it records no hit.
            Flag::Hit => {
                if !table.actions.contains(&original_default) {
                    table.actions.push(original_default);
                }
            }
            Flag::ActionRun => {
                table.default_action.action = rename(&original_default);
                for a in &mut info.default_actions {
                    a.1 = rename(&a.1);
                }
            }
        }
        self.prog.tables.push(table);
        Ok((ir, field))
    }

    /// The gateways of `switch (t.apply().action_run)`: one per case, in order.
    pub(super) fn switch_cases(
        &mut self,
        c: &Ctl<'a>,
        ir: &str,
        field: &str,
        cases: &'a [SwitchCase],
    ) -> R<Vec<ir::Stmt>> {
        let Some((case, rest)) = cases.split_first() else {
            return Ok(Vec::new());
        };
        let (labels, body) = case;
        if labels.len() != 1 {
            return self.err(
                labels[0].1,
                "case labels that share a body are not supported: a gateway tests one value",
            );
        }
        let (label, span) = &labels[0];
        let SwitchLabel::Name(a) = label else {
            if !rest.is_empty() {
                return self.err(*span, "`default` must be the last case");
            }
            return self.block(c, body);
        };
        let info = self
            .tables
            .iter()
            .find(|t| t.ir_name == ir)
            .expect("lowered");
        let Some(k) = info.actions.iter().position(|x| &x.0 == a) else {
            return self.err(
                *span,
                format!("`{a}` is not an action of table `{}`", info.p4_name),
            );
        };
        let then = self.block(c, body)?;
        let otherwise = self.switch_cases(c, ir, field, rest)?;
        Ok(vec![ir::Stmt::if_(
            ir::Condition::new(field, Cmp::Eq, Operand::Const(k as u64 + 1)),
            then,
            otherwise,
        )])
    }

    /// Applies table `t` of control `c` (once in the program).
    pub(super) fn apply_table(&mut self, c: &Ctl<'a>, t: &str, span: Span) -> R<String> {
        let ir = self.ir_name(&c.name, t);
        if let Some(first) = self.applied.get(&ir) {
            let f = &self.src.files[first.file as usize];
            return self.err(
                span,
                format!(
                    "table `{}.{t}` is applied a second time (first at {f}:{}:{}); a Tofino \
                     table sits in one place of the pipeline, so a program applies it once",
                    c.name, first.line, first.col
                ),
            );
        }
        self.applied.insert(ir.clone(), span);
        let Some(Local::Table(d)) = c.locals.get(t) else {
            unreachable!("checked by the caller")
        };
        let d = *d;
        let table = self.lower_table(c, d, &ir)?;
        self.prog.tables.push(table);
        self.spans.push((ir.clone(), d.span));
        Ok(ir)
    }
}

/// Whether `st` cannot share one VLIW instruction with `pending`: it writes a whole field
/// one of them writes, or reads a field one of them computes (a plain copy is forwarded by
/// the action's lowering, so reading it is fine). Paths compare as P4 writes them: a field,
/// or the header or struct holding it.
fn depends_on(pending: &[&Stmt], st: &Stmt) -> bool {
    let overlaps = |w: &str, p: &str| {
        w == p
            || p.strip_prefix(w).is_some_and(|r| r.starts_with('.'))
            || w.strip_prefix(p).is_some_and(|r| r.starts_with('.'))
    };
    let mut reads = Vec::new();
    let mut whole_write = None;
    match &st.kind {
        StmtKind::Assign(lhs, rhs) => {
            paths_in(rhs, &mut reads);
            if !matches!(lhs.kind, ExprKind::Slice(..)) {
                whole_write = lhs.path();
            }
        }
        StmtKind::Call(e) => paths_in(e, &mut reads),
        _ => {}
    }
    pending.iter().any(|p| {
        let Some(w) = written_path(p) else {
            return false;
        };
        let is_copy = matches!(&p.kind, StmtKind::Assign(_, rhs) if rhs.path().is_some());
        let rewritten = whole_write.as_deref().is_some_and(|x| overlaps(&w, x));
        rewritten || (!is_copy && reads.iter().any(|r| overlaps(&w, r)))
    })
}

/// The P4 path a statement writes: an assignment's destination (its field, for a slice),
/// or the object of a method call (`hdr.h` of `hdr.h.setValid()`).
fn written_path(st: &Stmt) -> Option<String> {
    match &st.kind {
        StmtKind::Assign(lhs, _) => base_path(lhs),
        StmtKind::Call(e) => match &e.kind {
            ExprKind::Call { func, .. } => match &func.kind {
                ExprKind::Member(obj, _) => obj.path(),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

fn base_path(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Slice(b, ..) | ExprKind::Index(b, _) => base_path(b),
        _ => e.path(),
    }
}

/// Every name or member chain `e` reads.
fn paths_in(e: &Expr, out: &mut Vec<String>) {
    if let Some(p) = e.path() {
        out.push(p);
        return;
    }
    match &e.kind {
        ExprKind::Member(b, _) | ExprKind::Unary(_, b) | ExprKind::Cast(_, b) => paths_in(b, out),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            paths_in(a, out);
            paths_in(b, out);
        }
        ExprKind::Slice(a, b, c) | ExprKind::Ternary(a, b, c) => {
            paths_in(a, out);
            paths_in(b, out);
            paths_in(c, out);
        }
        ExprKind::Call { func, args, .. } => {
            paths_in(func, out);
            args.iter().for_each(|a| paths_in(a, out));
        }
        ExprKind::List(v) => v.iter().for_each(|a| paths_in(a, out)),
        _ => {}
    }
}
