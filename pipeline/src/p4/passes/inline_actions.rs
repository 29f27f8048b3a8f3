//! Actions called as functions inlined where they are called, as p4c's `InlineActions`
//! does: an action called inside another action (`forward(2);` in an action body), and an
//! action called in an apply block with directional parameters (`in bit<8> val`, bound at the
//! call), become their bodies with the parameters replaced by the arguments. An action called
//! in an apply block with action data only (no directions) stays a call: the lowering runs it
//! from a keyless table with its arguments as the table's action data, as p4c does.

use super::super::ast::*;
use super::super::preprocess::Source;
use super::super::visit;
use super::{P4Error, MAX_NESTING};
use std::collections::HashMap;

type R<T> = Result<T, P4Error>;

/// Inlines the action calls of every control in `decls`.
pub fn inline_actions(src: &Source, decls: &mut [Decl]) -> R<()> {
    let top: HashMap<String, Decl> = decls
        .iter()
        .filter_map(|d| match &d.kind {
            DeclKind::Action { name, .. } => Some((name.clone(), d.clone())),
            _ => None,
        })
        .collect();
    for d in decls.iter_mut() {
        let DeclKind::Control { locals, apply, .. } = &mut d.kind else {
            continue;
        };
        let mut actions = top.clone();
        for l in locals.iter() {
            if let DeclKind::Action { name, .. } = &l.kind {
                actions.insert(name.clone(), l.clone());
            }
        }
        for l in locals.iter_mut() {
            if let DeclKind::Action { body, .. } = &mut l.kind {
                inline_in(src, &actions, body, true, 0)?;
            }
        }
        inline_in(src, &actions, apply, false, 0)?;
    }
    Ok(())
}

/// Inlines the calls in `body` (an action's when `in_action`, else an apply block's).
fn inline_in(
    src: &Source,
    actions: &HashMap<String, Decl>,
    body: &mut [Stmt],
    in_action: bool,
    depth: u32,
) -> R<()> {
    for st in body.iter_mut() {
        match &mut st.kind {
            StmtKind::Call(e) => {
                let Some((callee, args)) = called_action(e, actions) else {
                    continue;
                };
                let DeclKind::Action {
                    params,
                    body: cbody,
                    ..
                } = &callee.kind
                else {
                    unreachable!("actions holds actions")
                };
                if !in_action && params.iter().all(|p| p.dir == Dir::None) {
                    continue;
                }
                if depth >= MAX_NESTING {
                    return Err(src.error(
                        st.span,
                        format!(
                            "actions call actions more than {MAX_NESTING} deep (an action that \
                             calls itself?)"
                        ),
                    ));
                }
                if params.len() != args.len() {
                    return Err(src.error(
                        st.span,
                        format!(
                            "the call gives {} arguments; the action takes {}",
                            args.len(),
                            params.len()
                        ),
                    ));
                }
                let map: HashMap<String, Expr> = params
                    .iter()
                    .map(|p| p.name.clone())
                    .zip(args.iter().cloned())
                    .collect();
                let mut inlined = cbody.clone();
                visit::stmts_exprs(&mut inlined, &mut |e| visit::substitute(e, &map));
                inline_in(src, actions, &mut inlined, true, depth + 1)?;
                st.kind = StmtKind::Block(inlined);
            }
            StmtKind::If(_, t, e) => {
                inline_in(src, actions, t, in_action, depth)?;
                inline_in(src, actions, e, in_action, depth)?;
            }
            StmtKind::Block(b) => inline_in(src, actions, b, in_action, depth)?,
            StmtKind::Switch(_, cases) => {
                for (_, b) in cases {
                    inline_in(src, actions, b, in_action, depth)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `a(args)` where `a` names an action: the action and the arguments.
fn called_action<'e, 'a>(
    e: &'e Expr,
    actions: &'a HashMap<String, Decl>,
) -> Option<(&'a Decl, &'e [Expr])> {
    let ExprKind::Call { func, args, .. } = &e.kind else {
        return None;
    };
    let ExprKind::Name(n) = &func.kind else {
        return None;
    };
    actions.get(n).map(|d| (d, args.as_slice()))
}
