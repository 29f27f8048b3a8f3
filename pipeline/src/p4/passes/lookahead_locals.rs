//! A parser state's local initialized by a look-ahead (`mirror_h m = pkt.lookahead<mirror_h>();
//! transition select(m.pkt_type) {...}`, the TNA idiom for telling mirrored copies apart)
//! replaced by the look-ahead itself wherever the state uses it, as p4c's copy propagation
//! leaves it: nothing is extracted after it in the state, so the bytes it names are the same
//! at every use.

use super::super::ast::*;
use super::super::visit;
use std::collections::HashMap;

/// Propagates the look-ahead locals of every parser state in `decls`.
pub fn lookahead_locals(decls: &mut [Decl]) {
    for d in decls.iter_mut() {
        let DeclKind::Parser { states, .. } = &mut d.kind else {
            continue;
        };
        for s in states {
            propagate(s);
        }
    }
}

fn propagate(s: &mut State) {
    let mut i = 0;
    while i < s.body.len() {
        let StmtKind::Var(decl) = &s.body[i].kind else {
            i += 1;
            continue;
        };
        let DeclKind::Var {
            name,
            init: Some(init),
            ..
        } = &decl.kind
        else {
            i += 1;
            continue;
        };
        let moves_on = s.body[i + 1..].iter().any(moves_the_cursor);
        if !is_lookahead(init) || moves_on {
            i += 1;
            continue;
        }
        let map: HashMap<String, Expr> = [(name.clone(), init.clone())].into();
        s.body.remove(i);
        let mut rest = State {
            annotations: Vec::new(),
            name: String::new(),
            body: s.body.split_off(i),
            transition: s.transition.take(),
            span: s.span,
        };
        visit::state_exprs(&mut rest, &mut |e| visit::substitute(e, &map));
        s.body.append(&mut rest.body);
        s.transition = rest.transition;
    }
}

fn is_lookahead(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call { func, args, .. }
        if args.is_empty() && matches!(&func.kind, ExprKind::Member(_, m) if m == "lookahead"))
}

/// An `extract` or `advance`: the packet's cursor moves on.
fn moves_the_cursor(st: &Stmt) -> bool {
    matches!(&st.kind, StmtKind::Call(e) if matches!(&e.kind, ExprKind::Call { func, .. }
        if matches!(&func.kind, ExprKind::Member(_, m) if m == "extract" || m == "advance")))
}
