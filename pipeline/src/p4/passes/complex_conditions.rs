//! Conditions of any shape in apply blocks brought down to what gateways test, as bf-p4c's
//! gateway chains do. A gateway compares one field; a conjunction without `else` nests
//! gateways (the lowering does that itself). Anything else, `a || b` or `a && b` with an
//! `else`, is evaluated first into a 1-bit variable of the control, `cond_L<line>`, by
//! gateways that each test one operand in P4's order, short-circuit included (so a
//! `t.apply().hit` operand is applied only when P4 would apply it):
//!
//! ```text
//! if (a || b) T else E      =>   if (a) { cond = 1; } else { if (b) { cond = 1; } }
//!                                 if (cond == 1) T else E
//! if (a && b) T else E      =>   if (a) { if (b) { cond = 1; } }
//!                                 if (cond == 1) T else E
//! ```
//!
//! A negation is pushed to the operands (De Morgan). Each `cond = 1` is a keyless table
//! writing the variable, and the variable a metadata field, as p4c's `act_L` tables are; the
//! PHV starts every packet at 0, so the variable needs no clearing.

use super::super::ast::*;
use std::collections::BTreeSet;

/// Rewrites the conditions of every control's apply block in `decls`.
pub fn complex_conditions(decls: &mut [Decl]) {
    for d in decls.iter_mut() {
        let DeclKind::Control {
            params,
            locals,
            apply,
            ..
        } = &mut d.kind
        else {
            continue;
        };
        let mut taken = super::names_taken(params, locals);
        let mut vars = Vec::new();
        let body = std::mem::take(apply);
        *apply = rewrite(body, &mut taken, &mut vars);
        locals.extend(vars);
    }
}

fn rewrite(body: Vec<Stmt>, taken: &mut BTreeSet<String>, vars: &mut Vec<Decl>) -> Vec<Stmt> {
    let mut out = Vec::new();
    for st in body {
        match st.kind {
            StmtKind::If(c, t, e) => {
                let t = rewrite(t, taken, vars);
                let e = rewrite(e, taken, vars);
                if !is_complex(&c, !e.is_empty()) {
                    out.push(Stmt {
                        kind: StmtKind::If(c, t, e),
                        span: st.span,
                    });
                    continue;
                }
                let var = fresh_var(taken, vars, st.span);
                let flag = flag_stmts(&c, &var, st.span);
                out.extend(rewrite(flag, taken, vars));
                let test = Expr {
                    kind: ExprKind::Binary(
                        BinOp::Eq,
                        Box::new(name(&var, c.span)),
                        Box::new(one(c.span)),
                    ),
                    span: c.span,
                };
                out.push(Stmt {
                    kind: StmtKind::If(test, t, e),
                    span: st.span,
                });
            }
            StmtKind::Block(b) => out.push(Stmt {
                kind: StmtKind::Block(rewrite(b, taken, vars)),
                span: st.span,
            }),
            StmtKind::Switch(e, cases) => out.push(Stmt {
                kind: StmtKind::Switch(
                    e,
                    cases
                        .into_iter()
                        .map(|(labels, b)| (labels, rewrite(b, taken, vars)))
                        .collect(),
                ),
                span: st.span,
            }),
            kind => out.push(Stmt {
                kind,
                span: st.span,
            }),
        }
    }
    out
}

/// Whether the lowering's gateways cannot take `c` as it is: a `||` anywhere, or a `&&`
/// with an `else` (a conjunction alone nests).
fn is_complex(c: &Expr, has_else: bool) -> bool {
    match &c.kind {
        ExprKind::Binary(BinOp::LOr, ..) => true,
        ExprKind::Binary(BinOp::LAnd, a, b) => {
            has_else || is_complex(a, false) || is_complex(b, false) || is_logic(a)
        }
        ExprKind::Unary(UnOp::Not, x) => is_logic(x),
        _ => false,
    }
}

fn is_logic(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Binary(BinOp::LOr | BinOp::LAnd, ..) => true,
        ExprKind::Unary(UnOp::Not, x) => is_logic(x),
        _ => false,
    }
}

/// Statements setting `var` to 1 exactly when `c` holds, evaluating it as P4 does.
fn flag_stmts(c: &Expr, var: &str, span: Span) -> Vec<Stmt> {
    let set = || Stmt {
        kind: StmtKind::Assign(name(var, span), one(span)),
        span,
    };
    let c = push_not(c, false);
    match c.kind {
        ExprKind::Binary(BinOp::LOr, a, b) => vec![Stmt {
            kind: StmtKind::If(*a, vec![set()], flag_stmts(&b, var, span)),
            span,
        }],
        ExprKind::Binary(BinOp::LAnd, a, b) => vec![Stmt {
            kind: StmtKind::If(*a, flag_stmts(&b, var, span), Vec::new()),
            span,
        }],
        _ => vec![Stmt {
            kind: StmtKind::If(c, vec![set()], Vec::new()),
            span,
        }],
    }
}

/// `e` (negated when `neg`) with negations moved below `&&` and `||`.
fn push_not(e: &Expr, neg: bool) -> Expr {
    let span = e.span;
    match &e.kind {
        ExprKind::Unary(UnOp::Not, x) if is_logic(x) => push_not(x, !neg),
        ExprKind::Binary(op @ (BinOp::LAnd | BinOp::LOr), a, b) => {
            let op = match (op, neg) {
                (BinOp::LAnd, true) => BinOp::LOr,
                (BinOp::LOr, true) => BinOp::LAnd,
                (op, _) => *op,
            };
            Expr {
                kind: ExprKind::Binary(op, Box::new(push_not(a, neg)), Box::new(push_not(b, neg))),
                span,
            }
        }
        _ if neg => Expr {
            kind: ExprKind::Unary(UnOp::Not, Box::new(e.clone())),
            span,
        },
        _ => e.clone(),
    }
}

fn fresh_var(taken: &mut BTreeSet<String>, vars: &mut Vec<Decl>, span: Span) -> String {
    let base = format!("cond_L{}", span.line);
    let mut v = base.clone();
    let mut k = 2;
    while taken.contains(&v) {
        v = format!("{base}_{k}");
        k += 1;
    }
    taken.insert(v.clone());
    let one_bit = Expr {
        kind: ExprKind::Int {
            value: 1,
            width: None,
        },
        span,
    };
    vars.push(Decl {
        kind: DeclKind::Var {
            ty: Type::Bit(Box::new(one_bit)),
            name: v.clone(),
            init: None,
        },
        annotations: Vec::new(),
        span,
    });
    v
}

fn name(n: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(n.to_string()),
        span,
    }
}

fn one(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Int {
            value: 1,
            width: None,
        },
        span,
    }
}
