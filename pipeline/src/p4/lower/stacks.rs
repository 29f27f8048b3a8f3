//! Header stacks, unrolled as bf-p4c does for fixed indices: a field `H[N] s;` of the
//! headers struct becomes N header instances `s_0` ... `s_{N-1}`, and `hdr.s[i]` (i a
//! constant) names `hdr.s_i` everywhere, so the parser extracts them in states of their own
//! and the deparser emits them in order. A parser's `.next` and `.last` are first turned into
//! fixed indices by copying the states of a parser loop once per element
//! (`stack_loops.rs`). What needs a stack pointer elsewhere (`.next`, `.last`, `.lastIndex`
//! in a control, a non-constant index) or a shift of whole headers (`push_front`,
//! `pop_front`) is refused at its place with the reason.

use super::*;

/// The program with its header stacks unrolled (a rewritten copy of `decls`).
pub(super) fn unroll(src: &Source, decls: &[Decl]) -> R<Vec<Decl>> {
    let mut stacks: BTreeMap<String, u32> = BTreeMap::new();
    let mut out = decls.to_vec();
    for d in &mut out {
        let DeclKind::Struct { fields, .. } = &mut d.kind else {
            continue;
        };
        let mut unrolled = Vec::new();
        for f in fields.drain(..) {
            let Type::Stack(inner, n) = &f.ty else {
                unrolled.push(f);
                continue;
            };
            let ExprKind::Int { value, .. } = n.kind else {
                return Err(src.error(
                    n.span,
                    format!("header stack `{}`: its size must be a number here", f.name),
                ));
            };
            if value == 0 || value > 64 {
                return Err(src.error(
                    n.span,
                    format!(
                        "header stack `{}` of {value} headers: 1 to 64 are unrolled",
                        f.name
                    ),
                ));
            }
            if let Some(&m) = stacks.get(&f.name) {
                if m as u128 != value {
                    return Err(src.error(
                        f.span,
                        format!("header stack `{}` has {m} headers elsewhere", f.name),
                    ));
                }
            }
            stacks.insert(f.name.clone(), value as u32);
            for i in 0..value {
                unrolled.push(FieldDecl {
                    ty: (**inner).clone(),
                    name: format!("{}_{i}", f.name),
                    span: f.span,
                });
            }
        }
        *fields = unrolled;
    }
    if stacks.is_empty() {
        return Ok(out);
    }
    let by_name: Vec<(String, u32)> = stacks.iter().map(|(k, &n)| (k.clone(), n)).collect();
    super::stack_loops::unroll_loops(src, &mut out, &by_name)?;
    let r = Rewriter { src, stacks };
    for d in &mut out {
        r.decl(d)?;
    }
    Ok(out)
}

struct Rewriter<'s> {
    src: &'s Source,
    /// Stack field name -> its size.
    stacks: BTreeMap<String, u32>,
}

impl Rewriter<'_> {
    /// The stack `e` names (`hdr.s`), if it names one.
    fn stack_of(&self, e: &Expr) -> Option<(&str, u32)> {
        match &e.kind {
            ExprKind::Member(_, m) => self.stacks.get_key_value(m).map(|(k, &n)| (k.as_str(), n)),
            _ => None,
        }
    }

    fn decl(&self, d: &mut Decl) -> R<()> {
        for a in &mut d.annotations {
            self.exprs(&mut a.args)?;
        }
        match &mut d.kind {
            DeclKind::Const { value, .. } => self.expr(value)?,
            DeclKind::Parser { locals, states, .. } => {
                for l in locals {
                    self.decl(l)?;
                }
                for s in states {
                    self.stmts(&mut s.body)?;
                    if let Some(Transition::Select { keys, cases, .. }) = &mut s.transition {
                        self.exprs(keys)?;
                        for c in cases {
                            self.exprs(&mut c.keysets)?;
                        }
                    }
                }
            }
            DeclKind::Control { locals, apply, .. } => {
                for l in locals {
                    self.decl(l)?;
                }
                self.stmts(apply)?;
            }
            DeclKind::Action { body, .. } | DeclKind::Function { body, .. } => self.stmts(body)?,
            DeclKind::Table { props, .. } => {
                for p in props {
                    match p {
                        TableProp::Key(ks, _) => {
                            for k in ks {
                                self.expr(&mut k.expr)?;
                            }
                        }
                        TableProp::Actions(list, _) => {
                            for (e, _) in list {
                                self.expr(e)?;
                            }
                        }
                        TableProp::Entries(list, ..) => {
                            for en in list {
                                self.exprs(&mut en.keys)?;
                                self.expr(&mut en.action)?;
                            }
                        }
                        TableProp::Value { value, .. } => self.expr(value)?,
                    }
                }
            }
            DeclKind::Instance { args, methods, .. } => {
                self.exprs(args)?;
                for m in methods {
                    self.decl(m)?;
                }
            }
            DeclKind::Var { init: Some(e), .. } => self.expr(e)?,
            _ => {}
        }
        Ok(())
    }

    fn stmts(&self, body: &mut [Stmt]) -> R<()> {
        for s in body {
            match &mut s.kind {
                StmtKind::Assign(a, b) => {
                    self.expr(a)?;
                    self.expr(b)?;
                }
                StmtKind::Call(e) | StmtKind::Return(Some(e)) => self.expr(e)?,
                StmtKind::If(c, t, e) => {
                    self.expr(c)?;
                    self.stmts(t)?;
                    self.stmts(e)?;
                }
                StmtKind::Block(b) => self.stmts(b)?,
                StmtKind::Switch(e, cases) => {
                    self.expr(e)?;
                    for (_, b) in cases {
                        self.stmts(b)?;
                    }
                }
                StmtKind::Var(d) => self.decl(d)?,
                StmtKind::Exit | StmtKind::Return(None) | StmtKind::Empty => {}
            }
        }
        Ok(())
    }

    fn exprs(&self, es: &mut [Expr]) -> R<()> {
        for e in es {
            self.expr(e)?;
        }
        Ok(())
    }

    fn expr(&self, e: &mut Expr) -> R<()> {
        let span = e.span;
        match &mut e.kind {
            ExprKind::Index(base, idx) => {
                if let Some((name, n)) = self.stack_of(base) {
                    let name = name.to_string();
                    let ExprKind::Int { value, .. } = idx.kind else {
                        return Err(self.src.error(
                            idx.span,
                            format!("header stack `{name}` indexed by a variable: the model's parser and MAU name each header of an unrolled stack by a constant index"),
                        ));
                    };
                    if value >= n as u128 {
                        return Err(self.src.error(
                            idx.span,
                            format!("index {value} is past header stack `{name}` of {n} headers"),
                        ));
                    }
                    let ExprKind::Member(owner, _) = &mut base.kind else {
                        unreachable!("stack_of matched a member")
                    };
                    self.expr(owner)?;
                    let owner = std::mem::replace(
                        &mut **owner,
                        Expr {
                            kind: ExprKind::Default,
                            span,
                        },
                    );
                    e.kind = ExprKind::Member(Box::new(owner), format!("{name}_{value}"));
                    return Ok(());
                }
                self.expr(base)?;
                self.expr(idx)?;
            }
            ExprKind::Member(base, m) => {
                if let Some((name, _)) = self.stack_of(base) {
                    let why = match m.as_str() {
                        "next" | "last" => "a stack pointer exists in the parser only, where `pkt.extract(hdr.s.next)` and `hdr.s.last` in select keys are unrolled; elsewhere name fixed indices (`hdr.s[0]`, `hdr.s[1]`, ...)",
                        "lastIndex" => "the model's MAU has no stack pointer; name fixed indices (`hdr.s[0]`, `hdr.s[1]`, ...)",
                        "push_front" | "pop_front" => "the model's MAU does not shift whole headers; set the unrolled headers valid or invalid instead",
                        _ => "an unrolled stack is used through its headers (`hdr.s[i]`)",
                    };
                    return Err(self.src.error(
                        span,
                        format!("header stack `{name}`: `.{m}` is not supported: {why}"),
                    ));
                }
                self.expr(base)?;
            }
            ExprKind::Slice(a, b, c) | ExprKind::Ternary(a, b, c) => {
                self.expr(a)?;
                self.expr(b)?;
                self.expr(c)?;
            }
            ExprKind::Call { func, args, .. } => {
                self.expr(func)?;
                self.exprs(args)?;
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => self.expr(a)?,
            ExprKind::Binary(_, a, b) => {
                self.expr(a)?;
                self.expr(b)?;
            }
            ExprKind::List(es) => self.exprs(es)?,
            ExprKind::Int { .. }
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Name(_)
            | ExprKind::Default => {}
        }
        Ok(())
    }
}
