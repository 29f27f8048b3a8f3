//! A deparser's `if (t == A) {...} else if (t == B) {...}` over one field split into one
//! `if` per case, as the architecture's idioms read them (`mirror_type`, `digest_type`,
//! `resubmit_type` each tested for one value, its emit or pack inside). The cases test one
//! path against distinct constants, so at most one holds, and their bodies only emit or
//! pack, so none changes the field: the split `if`s mean exactly what the chain means.

use super::super::ast::*;

/// Splits such chains in every control of `decls` (only deparser bodies have them).
pub fn split_else_if(decls: &mut [Decl]) {
    for d in decls.iter_mut() {
        if let DeclKind::Control { apply, .. } = &mut d.kind {
            let body = std::mem::take(apply);
            *apply = body.into_iter().flat_map(split).collect();
        }
    }
}

fn split(st: Stmt) -> Vec<Stmt> {
    let mut cases = Vec::new();
    if !chain(&st, &mut cases) {
        return vec![st];
    }
    let mut seen: Vec<(String, u128)> = Vec::new();
    for (c, _) in &cases {
        let Some(key) = tested(c) else {
            return vec![st];
        };
        if seen.iter().any(|s| s.0 != key.0 || s.1 == key.1) {
            return vec![st];
        }
        seen.push(key);
    }
    let span = st.span;
    cases
        .into_iter()
        .map(|(c, body)| Stmt {
            kind: StmtKind::If(c, body, Vec::new()),
            span,
        })
        .collect()
}

/// Collects the (condition, body) cases of an else-if chain whose bodies only emit or pack;
/// false when `st` is not one (or is a single `if`).
fn chain(st: &Stmt, out: &mut Vec<(Expr, Vec<Stmt>)>) -> bool {
    let StmtKind::If(c, t, e) = &st.kind else {
        return false;
    };
    if !t.iter().all(emits_only) {
        return false;
    }
    out.push((c.clone(), t.clone()));
    match e.as_slice() {
        [] => out.len() > 1,
        [next] => chain(next, out),
        _ => false,
    }
}

fn emits_only(st: &Stmt) -> bool {
    match &st.kind {
        StmtKind::Call(e) => match &e.kind {
            ExprKind::Call { func, .. } => {
                matches!(&func.kind, ExprKind::Member(_, m) if m == "emit" || m == "pack")
            }
            _ => false,
        },
        StmtKind::Empty => true,
        _ => false,
    }
}

/// `path == constant` (either way round): the path and the constant.
fn tested(c: &Expr) -> Option<(String, u128)> {
    let ExprKind::Binary(BinOp::Eq, a, b) = &c.kind else {
        return None;
    };
    let constant = |e: &Expr| match &e.kind {
        ExprKind::Int { value, .. } => Some(*value),
        _ => None,
    };
    match (a.path(), constant(b), b.path(), constant(a)) {
        (Some(p), Some(v), _, _) | (_, _, Some(p), Some(v)) => Some((p, v)),
        _ => None,
    }
}
