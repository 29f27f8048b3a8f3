//! Variables declared inside an apply block or an action moved to the control's own
//! declarations, and every initializer made an assignment where it stood, as p4c's
//! `MoveDeclarations` and `MoveInitializers` do: `bit<16> t = a + 1;` in an apply block is a
//! control variable `t` and the statement `t = a + 1;` there; `bit<8> x = 3;` among the
//! control's declarations is the variable and `x = 3;` at the start of the apply block. A
//! variable whose name is taken (by another block's variable, a parameter or a declaration of
//! the control) is renamed `<name>_<k>` within its scope. The lowering then keeps each
//! variable in a metadata field of its own.

use super::super::ast::*;
use super::super::visit;
use std::collections::{BTreeSet, HashMap};

/// Moves the declarations of every control in `decls`.
pub fn move_declarations(decls: &mut [Decl]) {
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
        let mut moved = Vec::new();
        // Initializers of the control's own variables run first, in declaration order.
        let mut inits = Vec::new();
        for l in locals.iter_mut() {
            if let DeclKind::Var { name, init, .. } = &mut l.kind {
                if let Some(e) = init.take() {
                    inits.push(assign(name, e, l.span));
                }
            }
        }
        for l in locals.iter_mut() {
            if let DeclKind::Action { body, .. } = &mut l.kind {
                hoist(body, &mut taken, &mut moved);
            }
        }
        hoist(apply, &mut taken, &mut moved);
        if !inits.is_empty() {
            inits.append(apply);
            *apply = inits;
        }
        locals.extend(moved);
    }
}

fn assign(name: &str, value: Expr, span: Span) -> Stmt {
    Stmt {
        kind: StmtKind::Assign(
            Expr {
                kind: ExprKind::Name(name.to_string()),
                span,
            },
            value,
        ),
        span,
    }
}

/// Moves the variables declared in `body` (and the blocks inside it) into `moved`.
fn hoist(body: &mut [Stmt], taken: &mut BTreeSet<String>, moved: &mut Vec<Decl>) {
    for i in 0..body.len() {
        match &mut body[i].kind {
            StmtKind::Var(d) => {
                let span = body[i].span;
                let mut d = d.clone();
                let DeclKind::Var { name, init, .. } = &mut d.kind else {
                    // A constant or instance in a block: left for the lowering to judge.
                    continue;
                };
                let old = name.clone();
                let mut new = old.clone();
                let mut k = 1;
                while taken.contains(&new) {
                    new = format!("{old}_{k}");
                    k += 1;
                }
                taken.insert(new.clone());
                *name = new.clone();
                let init = init.take();
                body[i].kind = match init {
                    Some(e) => assign(&new, e, span).kind,
                    None => StmtKind::Empty,
                };
                if new != old {
                    let map: HashMap<String, Expr> = [(
                        old,
                        Expr {
                            kind: ExprKind::Name(new),
                            span,
                        },
                    )]
                    .into();
                    // The initializer is in scope of the outer name; what follows, of this one.
                    visit::stmts_exprs(&mut body[i + 1..], &mut |e| visit::substitute(e, &map));
                }
                moved.push(d);
            }
            StmtKind::If(_, t, e) => {
                hoist(t, taken, moved);
                hoist(e, taken, moved);
            }
            StmtKind::Block(b) => hoist(b, taken, moved),
            StmtKind::Switch(_, cases) => {
                for (_, b) in cases {
                    hoist(b, taken, moved);
                }
            }
            _ => {}
        }
    }
}
