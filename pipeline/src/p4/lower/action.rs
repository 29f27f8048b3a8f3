//! Lowering action bodies onto VLIW primitives: assignments, operands, widths, and the
//! extern calls an action makes.

use super::*;

impl<'a> Lowerer<'a> {
    /// The IR name of action `a` as control `c` sees it, lowering it the first time.
    pub(super) fn ensure_action(&mut self, c: &Ctl<'a>, a: &str, span: Span) -> R<String> {
        let local = matches!(c.locals.get(a), Some(Local::Action(_)));
        let key = (
            if local { c.name.clone() } else { String::new() },
            a.to_string(),
        );
        if let Some(ir) = self.lowered_actions.get(&key) {
            self.check_action_exit_control(c, ir, span)?;
            return Ok(ir.clone());
        }
        let Some(d) = self.action_decl(c, a) else {
            return self.err(span, format!("unknown action `{a}`"));
        };
        let DeclKind::Action { name, params, body } = &d.kind else {
            unreachable!()
        };
        let ir = if local {
            self.ir_name(&c.name, name)
        } else {
            name.clone()
        };
        self.lowered_actions.insert(key, ir.clone());
        let mut ps = Vec::new();
        let mut pmap = HashMap::new();
        for p in params {
            if p.dir != Dir::None {
                return self.err(
                    p.span,
                    "directional action parameters are not supported: action data is \
                     directionless",
                );
            }
            let Some(w) = self.resolve(&p.ty, p.span)?.width() else {
                return self.err(p.span, "an action parameter is a bit<N>");
            };
            // Over 32 bits the IR's check holds a parameter to `set`s of fields of its
            // width, cut where their containers are.
            if !(1..=crate::program::check::WIDE_MAX_BITS).contains(&w) {
                return self.err(
                    p.span,
                    format!(
                        "parameter `{}` is {w} bits; the IR's action data are 1 to {} bits",
                        p.name,
                        crate::program::check::WIDE_MAX_BITS
                    ),
                );
            }
            ps.push(ir::Param {
                name: p.name.clone(),
                bits: w as u8,
            });
            pmap.insert(p.name.clone(), w);
        }
        let prims = self.action_body(c, &ir, &pmap, body, &d.annotations)?;
        let mut ir_params = ps.clone();
        if let Some((_, _, bits)) = self.direct_counted.get(&ir) {
            // The entry's place, which a DirectCounter's cell is (see `counters`).
            ir_params.push(ir::Param {
                name: ENTRY_INDEX_PARAM.to_string(),
                bits: *bits as u8,
            });
        }
        self.prog.actions.push(ir::Action {
            name: ir.clone(),
            params: ir_params,
            primitives: prims,
        });
        self.spans.push((ir.clone(), d.span));
        self.actions.push(ActionInfo {
            p4_name: if local {
                format!("{}.{name}", c.name)
            } else {
                name.clone()
            },
            local_name: name.clone(),
            ir_name: ir.clone(),
            params: ps.iter().map(|p| (p.name.clone(), p.bits as u32)).collect(),
        });
        Ok(ir)
    }

    /// The primitives of an action body.
    pub(super) fn action_body(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        body: &[Stmt],
        annotations: &[Annotation],
    ) -> R<Vec<Primitive>> {
        let mut out = Vec::new();
        let mut written: Written = HashMap::new();
        let mut flat: Vec<&Stmt> = Vec::new();
        fn flatten<'s>(b: &'s [Stmt], out: &mut Vec<&'s Stmt>) {
            for s in b {
                match &s.kind {
                    StmtKind::Block(x) => flatten(x, out),
                    _ => out.push(s),
                }
            }
        }
        let expanded = self.expand_list_assigns(c, body)?;
        flatten(&expanded, &mut flat);
        let reason = match annotations.iter().find(|a| a.name == "drop_reason") {
            None => ir::ProgramDrop::NoRoute,
            Some(a) => match a.args.first().map(|e| &e.kind) {
                Some(ExprKind::Str(s)) => match s.as_str() {
                    "not_ipv4" => ir::ProgramDrop::NotIpv4,
                    "no_route" => ir::ProgramDrop::NoRoute,
                    "ttl_expired" => ir::ProgramDrop::TtlExpired,
                    "consumed" => ir::ProgramDrop::Consumed,
                    other => {
                        return self.err(
                            a.span,
                            format!("@drop_reason(\"{other}\"): expected not_ipv4, no_route, ttl_expired or consumed"),
                        )
                    }
                },
                _ => return self.err(a.span, "@drop_reason takes a string"),
            },
        };
        let mut mirrors: Vec<(MirrorIdiom, Span)> = Vec::new();
        let mut exited = false;
        for st in flat {
            if exited && !matches!(st.kind, StmtKind::Empty) {
                return self.err(
                    st.span,
                    format!("this statement of action `{action}` comes after its `exit`, so it never runs"),
                );
            }
            match &st.kind {
                StmtKind::Empty => {}
                StmtKind::Assign(lhs, rhs) if resubmit::is_resubmit_type(c, lhs) => {
                    out.push(self.resubmit_for(c, rhs, st.span)?);
                }
                StmtKind::Assign(lhs, rhs) if digests::is_digest_type(c, lhs) => {
                    out.push(self.digest_type_for(c, rhs, st.span)?);
                }
                StmtKind::Assign(lhs, rhs) if is_mirror_type(c, lhs) => {
                    let Ok((t, _)) = self.const_value(rhs, &c.locals) else {
                        return self.err(rhs.span, "mirror_type is set to a constant");
                    };
                    let Some(m) = self
                        .mirrors
                        .iter()
                        .find(|m| m.gress == c.gress && m.mirror_type == t)
                        .cloned()
                    else {
                        return self.err(
                            st.span,
                            format!(
                                "mirror type {t}: the {} deparser has no `if (...mirror_type == \
                                 {t}) mirror.emit(session);` for it",
                                c.gress.name()
                            ),
                        );
                    };
                    mirrors.push((m, st.span));
                }
                StmtKind::Assign(lhs, rhs)
                    if matches!(rhs.kind, ExprKind::Binary(BinOp::Concat, ..)) =>
                {
                    // `dst = a ++ b`: each part is a move into its slice of `dst`.
                    let dst = self.field(c, lhs)?;
                    let mut parts = Vec::new();
                    concat_parts(rhs, &mut parts);
                    let mut widths = Vec::new();
                    for p in &parts {
                        let w = match self.const_value(p, &c.locals) {
                            Ok((_, Some(w))) => w,
                            Ok((_, None)) => {
                                return self
                                    .err(p.span, "a constant in `++` needs a width (such as 8w0)")
                            }
                            Err(_) => match self.width_of(c, params, p) {
                                Some(w) => w,
                                None => {
                                    return self.err(
                                        p.span,
                                        "`++` joins fields, action data and sized constants",
                                    )
                                }
                            },
                        };
                        widths.push(w);
                    }
                    let total: u32 = widths.iter().sum();
                    if total != dst.bits {
                        return self.err(
                            rhs.span,
                            format!("width mismatch: the concatenation is bit<{total}> but `{}` is bit<{}>", expr_text(lhs), dst.bits),
                        );
                    }
                    let mut hi = dst.bits;
                    for (p, w) in parts.iter().zip(widths) {
                        let part = FieldRef {
                            ir: slice_name(&dst.ir, hi - 1, hi - w),
                            bits: w,
                        };
                        hi -= w;
                        if let Some(prim) =
                            self.assignment(c, action, params, &part, p, &written, reason)?
                        {
                            written.insert(part.ir.clone(), None);
                            out.push(prim);
                        }
                    }
                }
                StmtKind::Assign(lhs, rhs) => {
                    let dst = self.field(c, lhs)?;
                    let p = self.assignment(c, action, params, &dst, rhs, &written, reason)?;
                    if let Some(p) = p {
                        let simple = match &p {
                            Primitive::Set { src, .. } => Some(src.clone()),
                            _ => None,
                        };
                        written.insert(dst.ir.clone(), simple);
                        out.push(p);
                    }
                }
                StmtKind::Call(e) => {
                    let p = self.call_stmt(c, action, params, e, &written)?;
                    out.extend(p);
                }
                StmtKind::If(cond, then, els) => {
                    // ECN marking: `if (hdr.ipv4.ecn != 0) hdr.ipv4.ecn = 3;`.
                    let ok =
                        els.is_empty() && then.len() == 1 && self.is_ecn_mark(c, cond, &then[0]);
                    if !ok {
                        return self.err(
                            st.span,
                            "an `if` inside an action is not supported: the model's actions \
                             have no conditions (put the `if` in the apply block; only ECN \
                             marking `if (hdr.ipv4.ecn != 0) hdr.ipv4.ecn = 3;` maps onto a \
                             primitive)",
                        );
                    }
                    written.insert("ipv4.ecn".to_string(), None);
                    out.push(Primitive::MarkEcn);
                }
                StmtKind::Exit => {
                    exited = true;
                    out.push(self.action_exit(c, action, st.span));
                }
                _ => {
                    return self.err(
                        st.span,
                        "this statement is not supported in an action (assignments and extern \
                         calls only)",
                    )
                }
            }
        }
        // A mirror reads its session as the action leaves it (the session field may be set
        // after mirror_type).
        for (m, span) in mirrors {
            let session = match m.session {
                MirrorSession::Const(v) => Operand::Const(v),
                MirrorSession::Meta(sty, field) => {
                    let Some(p) = c
                        .params
                        .iter()
                        .find(|(_, k)| matches!(k, ParamKind::Meta(s) if *s == sty))
                        .map(|(n, _)| n.clone())
                    else {
                        return self.err(
                            span,
                            format!("the mirror session is a field of `{sty}`, which `{}` does not take", c.name),
                        );
                    };
                    let e = Expr {
                        kind: ExprKind::Member(
                            Box::new(Expr {
                                kind: ExprKind::Name(p),
                                span,
                            }),
                            field,
                        ),
                        span,
                    };
                    self.operand(c, action, params, &e, None, &written)?
                }
            };
            out.push(match m.header {
                None => Primitive::Mirror { session },
                Some((header, _)) => Primitive::MirrorWithHeader { session, header },
            });
        }
        Ok(out)
    }

    pub(super) fn is_ecn_mark(&mut self, c: &Ctl<'a>, cond: &Expr, st: &Stmt) -> bool {
        let ExprKind::Binary(op @ (BinOp::Ne | BinOp::Gt), f, z) = &cond.kind else {
            return false;
        };
        let _ = op;
        let StmtKind::Assign(lhs, three) = &st.kind else {
            return false;
        };
        let is_ecn = |l: &mut Self, e: &Expr| {
            // The ECN bits of the built-in IPv4, however the program declares its TOS byte.
            l.field(c, e)
                .is_ok_and(|f| f.ir == "ipv4.ecn" || f.ir == "ipv4.diffserv[1:0]")
        };
        is_ecn(self, f)
            && is_ecn(self, lhs)
            && self.const_value(z, &c.locals).is_ok_and(|v| v.0 == 0)
            && self.const_value(three, &c.locals).is_ok_and(|v| v.0 == 3)
    }

    /// An operand an action reads, checked against the width `want` it must have.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn operand(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        e: &Expr,
        want: Option<u32>,
        written: &Written,
    ) -> R<Operand> {
        let text = expr_text(e);
        let mismatch = |l: &Self, got: u32| {
            l.err(
                e.span,
                format!(
                    "width mismatch: `{text}` is bit<{got}> but bit<{}> is needed (P4 needs an \
                     explicit cast)",
                    want.unwrap_or(0)
                ),
            )
        };
        if let Ok((v, w)) = self.const_value(e, &c.locals) {
            if let (Some(w), Some(d)) = (w, want) {
                if w != d {
                    return mismatch(self, w);
                }
            }
            if let Some(d) = want {
                if d < 128 && v >> d != 0 {
                    return self.err(e.span, format!("constant {v} does not fit in bit<{d}>"));
                }
            }
            if v > u32::MAX as u128 {
                return self.err(
                    e.span,
                    format!("constant {v:#x} is wider than the ALU's 32 bits"),
                );
            }
            return Ok(Operand::Const(v as u64));
        }
        match &e.kind {
            ExprKind::Name(n) if params.contains_key(n) => {
                let w = params[n];
                if want.is_some_and(|d| d != w) {
                    return mismatch(self, w);
                }
                Ok(Operand::Param(n.clone()))
            }
            ExprKind::Cast(t, inner) => {
                let Some(w) = self.resolve(t, e.span)?.width() else {
                    return self.err(e.span, "a cast to a non-bit type");
                };
                if want.is_some_and(|d| d != w) {
                    return mismatch(self, w);
                }
                // Widening is what the ALU does; narrowing only where the destination
                // truncates the same bits.
                let inner_w = self.width_of(c, params, inner);
                if inner_w.is_some_and(|iw| iw > w) && want.is_none_or(|d| d > w) {
                    return self.err(
                        e.span,
                        "a narrowing cast inside an operation is not supported",
                    );
                }
                self.operand(c, action, params, inner, None, written)
            }
            _ if e.path().is_some() || matches!(e.kind, ExprKind::Slice(..)) => {
                let f = self.field(c, e)?;
                if want.is_some_and(|d| d != f.bits) {
                    return mismatch(self, f.bits);
                }
                let base = |n: &str| n.split('[').next().unwrap_or(n).to_string();
                let overlapping = written.iter().find(|(w, _)| base(w) == base(&f.ir));
                let state = match (written.get(&f.ir), overlapping) {
                    (Some(v), _) => Some(v.clone()),
                    // Part of a field written whole (or the other way round): no copy to
                    // forward.
                    (None, Some(_)) => Some(None),
                    (None, None) => None,
                };
                match state {
                    None => Ok(Operand::Field(f.ir)),
                    Some(Some(v)) => Ok(v),
                    Some(None) => self.err(
                        e.span,
                        format!(
                            "action `{action}` reads `{text}` after computing it: an action's \
                             statements run in parallel in one VLIW instruction, so compute it \
                             in an earlier table's action"
                        ),
                    ),
                }
            }
            _ => self.err(
                e.span,
                format!(
                    "`{text}` is not an operand the VLIW ALU reads (a field, an action \
                     parameter or a constant); one operation per assignment"
                ),
            ),
        }
    }

    pub(super) fn width_of(
        &mut self,
        c: &Ctl<'a>,
        params: &HashMap<String, u32>,
        e: &Expr,
    ) -> Option<u32> {
        match &e.kind {
            ExprKind::Name(n) if params.contains_key(n) => Some(params[n]),
            _ => self.field(c, e).ok().map(|f| f.bits),
        }
    }

    /// The primitive of `dst = rhs` (`None` when it needs none).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn assignment(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        dst: &FieldRef,
        rhs: &Expr,
        written: &Written,
        reason: ir::ProgramDrop,
    ) -> R<Option<Primitive>> {
        if let Some((wide, op)) = self.narrowed_operation(c, params, dst, rhs)? {
            return self.assignment(c, action, params, &wide, op, written, reason);
        }
        let w = Some(dst.bits);
        if written.contains_key(&dst.ir) {
            return self.err(
                rhs.span,
                format!(
                    "action `{action}` writes `{}` twice; a VLIW instruction writes a field once",
                    dst.ir
                ),
            );
        }
        match dst.ir.as_str() {
            "ig_intr_tm_md.ucast_egress_port" => {
                let port = self.operand(c, action, params, rhs, w, written)?;
                return Ok(Some(Primitive::SetEgressPort { port }));
            }
            "ig_intr_tm_md.qid" => {
                let qid = self.operand(c, action, params, rhs, w, written)?;
                return Ok(Some(Primitive::SetQid { qid }));
            }
            "ig_intr_dprsr_md.drop_ctl" => {
                let Ok((v, _)) = self.const_value(rhs, &c.locals) else {
                    return self.err(rhs.span, "drop_ctl is set to a constant");
                };
                if v == 0 {
                    // Keeps a packet an earlier action dropped.
                    return Ok(Some(Primitive::Set {
                        dst: dst.ir.clone(),
                        src: Operand::Const(0),
                    }));
                }
                if v & 1 == 0 {
                    return self.err(
                        rhs.span,
                        "drop_ctl values without bit 0 (2: disable unicast, 4: disable \
                         mirroring) are not supported: the model drops on bit 0 only",
                    );
                }
                return Ok(Some(Primitive::Drop { reason }));
            }
            _ => {}
        }
        if let Some((obj, m, args)) = method_call(rhs) {
            let inst = obj.path().unwrap_or_default();
            if let Some(Local::Extern(d, ext)) = c.locals.get(&inst).cloned() {
                return match (ext.as_str(), m) {
                    ("Hash", "get") => self.hash_get(c, d, &inst, args, dst).map(Some),
                    ("Random", "get") if args.is_empty() => {
                        self.check_result_width(c, d, 0, dst, rhs.span)?;
                        Ok(Some(Primitive::Random {
                            dst: dst.ir.clone(),
                        }))
                    }
                    ("RegisterAction", "execute") if args.len() == 1 => {
                        self.check_result_width(c, d, 2, dst, rhs.span)?;
                        let (ra, index) = self.execute(
                            c,
                            action,
                            params,
                            d,
                            &inst,
                            &args[0],
                            Some(dst),
                            written,
                            rhs.span,
                        )?;
                        Ok(Some(Primitive::Execute {
                            register_action: ra,
                            index,
                        }))
                    }
                    _ => self.err(rhs.span, format!("`{inst}.{m}` is not supported here")),
                };
            }
        }
        if let ExprKind::Call { func, args, .. } = &rhs.kind {
            if let (Some(n @ ("min" | "max")), [a, b]) = (func.path().as_deref(), args.as_slice()) {
                let signed = self.is_signed(c, a) || self.is_signed(c, b);
                let op = match (n, signed) {
                    ("min", false) => ir::AluOp::Min,
                    ("min", true) => ir::AluOp::SMin,
                    (_, false) => ir::AluOp::Max,
                    (_, true) => ir::AluOp::SMax,
                };
                let a = self.operand(c, action, params, a, w, written)?;
                let b = self.operand(c, action, params, b, w, written)?;
                return Ok(Some(Primitive::alu(op, &dst.ir, a, b)));
            }
        }
        // `~a ^ k` (or `k ^ ~a`) with `k` a constant is `a ^ ~k`: one xor with the
        // complemented constant, cut to the destination's width.
        if let ExprKind::Binary(BinOp::Xor, x, y) = &rhs.kind {
            fn not_of(e: &Expr) -> Option<&Expr> {
                match &e.kind {
                    ExprKind::Unary(UnOp::BitNot, inner) => Some(inner),
                    _ => None,
                }
            }
            let folded = match (not_of(x), not_of(y)) {
                (Some(inner), None) => Some((inner, &**y)),
                (None, Some(inner)) => Some((inner, &**x)),
                _ => None,
            };
            if let Some((inner, k)) = folded {
                if let Ok((k, _)) = self.const_value(k, &c.locals) {
                    let ones = if dst.bits >= 32 {
                        u32::MAX as u128
                    } else {
                        (1u128 << dst.bits) - 1
                    };
                    let a = self.operand(c, action, params, inner, w, written)?;
                    return Ok(Some(Primitive::alu(
                        ir::AluOp::Xor,
                        &dst.ir,
                        a,
                        Operand::Const((!k & ones) as u64),
                    )));
                }
            }
        }
        match &rhs.kind {
            ExprKind::Binary(op, a, b) => {
                let alu = match op {
                    BinOp::Add => ir::AluOp::Add,
                    BinOp::Sub => ir::AluOp::Sub,
                    BinOp::And => ir::AluOp::And,
                    BinOp::Or => ir::AluOp::Or,
                    BinOp::Xor => ir::AluOp::Xor,
                    BinOp::Shl => ir::AluOp::Shl,
                    BinOp::Shr if self.is_signed(c, a) => ir::AluOp::Sar,
                    BinOp::Shr => ir::AluOp::Shr,
                    other => {
                        let why = match other {
                            BinOp::SatAdd | BinOp::SatSub => {
                                "the IR's VLIW ALU has no saturating arithmetic"
                            }
                            BinOp::Mul | BinOp::Div | BinOp::Mod => {
                                "the VLIW ALU has no multiplier or divider"
                            }
                            BinOp::Concat => {
                                "the IR has no concatenation (assign the two slices separately)"
                            }
                            _ => "it does not compute a value the ALU writes",
                        };
                        return self.err(
                            rhs.span,
                            format!("operator `{}` in an action: {why}", other.text()),
                        );
                    }
                };
                let shift = matches!(op, BinOp::Shl | BinOp::Shr);
                let a = self.operand(c, action, params, a, w, written)?;
                let b =
                    self.operand(c, action, params, b, if shift { None } else { w }, written)?;
                Ok(Some(Primitive::alu(alu, &dst.ir, a, b)))
            }
            ExprKind::Unary(UnOp::BitNot, a) => {
                let a = self.operand(c, action, params, a, w, written)?;
                let ones = if dst.bits >= 32 {
                    u32::MAX as u64
                } else {
                    (1u64 << dst.bits) - 1
                };
                Ok(Some(Primitive::alu(
                    ir::AluOp::Xor,
                    &dst.ir,
                    a,
                    Operand::Const(ones),
                )))
            }
            _ => {
                let src = self.operand(c, action, params, rhs, w, written)?;
                Ok(Some(Primitive::set(&dst.ir, src)))
            }
        }
    }

    /// Checks that type argument `k` of extern instance `d` (its result type) is `dst`'s width.
    pub(super) fn check_result_width(
        &self,
        _c: &Ctl<'a>,
        d: &Decl,
        k: usize,
        dst: &FieldRef,
        span: Span,
    ) -> R<()> {
        let DeclKind::Instance {
            ty: Type::Named(_, targs),
            ..
        } = &d.kind
        else {
            return Ok(());
        };
        if let Some(t) = targs.get(k) {
            if let Some(w) = self.resolve(t, d.span)?.width() {
                if w != dst.bits {
                    return self.err(
                        span,
                        format!(
                            "width mismatch: the result is bit<{w}> but `{}` is bit<{}>",
                            dst.ir, dst.bits
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// A call statement in an action.
    pub(super) fn call_stmt(
        &mut self,
        c: &Ctl<'a>,
        action: &str,
        params: &HashMap<String, u32>,
        e: &Expr,
        written: &Written,
    ) -> R<Vec<Primitive>> {
        if let Some((obj, m, args)) = method_call(e) {
            if m == "setValid" || m == "setInvalid" {
                let header = self.header_of(c, obj)?;
                return Ok(vec![if m == "setValid" {
                    Primitive::SetValid { header }
                } else {
                    Primitive::SetInvalid { header }
                }]);
            }
            let inst = obj.path().unwrap_or_default();
            if let Some(Local::Extern(d, ext)) = c.locals.get(&inst).cloned() {
                if ext == "RegisterAction" && m == "execute" && args.len() == 1 {
                    let (ra, index) =
                        self.execute(c, action, params, d, &inst, &args[0], None, written, e.span)?;
                    return Ok(vec![Primitive::Execute {
                        register_action: ra,
                        index,
                    }]);
                }
                if (ext == "Counter" || ext == "DirectCounter") && m == "count" {
                    return self
                        .counter_count(c, action, params, d, &inst, &ext, args, written, e.span);
                }
                if ext == "Register" {
                    return self.err(
                        e.span,
                        format!("`{inst}.{m}` in the data plane: read and write a Register through a RegisterAction"),
                    );
                }
                return self.err(
                    e.span,
                    format!("`{inst}.{m}(...)` as a statement is not supported"),
                );
            }
        }
        if let ExprKind::Call { func, .. } = &e.kind {
            if func.path().as_deref() == Some("NoAction") {
                return Ok(Vec::new());
            }
            if let Some(n) = func.path() {
                if self.action_decl(c, &n).is_some() {
                    return self.err(
                        e.span,
                        format!("calling action `{n}` from an action is not supported"),
                    );
                }
                return self.err(e.span, format!("unknown function or extern `{n}`"));
            }
        }
        self.err(e.span, "this call is not supported in an action")
    }
}
