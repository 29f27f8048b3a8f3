//! Sub-controls inlined into the control that applies them, as p4c's `InlineControlFlow`
//! does: a control type instantiated in a control (`BypassEgress() bypass;`) and applied
//! (`bypass.apply(ig_tm_md);`) puts its actions, tables, externs and variables among the
//! caller's, named `<instance>.<name>` (the name p4c's control plane gives them under the
//! caller, `Ingress.bypass.bypass_egress`), and its apply block, with its parameters replaced
//! by the arguments, where the call stood. An instance is applied once (its tables sit in one
//! place on the chip); one never applied adds nothing.

use super::super::ast::*;
use super::super::preprocess::Source;
use super::super::visit;
use super::declared_name;
use super::{P4Error, MAX_NESTING};
use std::collections::HashMap;

type R<T> = Result<T, P4Error>;

/// Inlines every applied sub-control of every control in `decls`.
pub fn inline_controls(src: &Source, decls: &mut [Decl]) -> R<()> {
    let controls: HashMap<String, Decl> = decls
        .iter()
        .filter_map(|d| match &d.kind {
            DeclKind::Control { name, .. } => Some((name.clone(), d.clone())),
            _ => None,
        })
        .collect();
    if controls.is_empty() {
        return Ok(());
    }
    for d in decls.iter_mut() {
        if matches!(d.kind, DeclKind::Control { .. }) {
            inline_into(src, &controls, d, 0)?;
        }
    }
    Ok(())
}

fn inline_into(src: &Source, controls: &HashMap<String, Decl>, d: &mut Decl, depth: u32) -> R<()> {
    let DeclKind::Control { locals, apply, .. } = &mut d.kind else {
        return Ok(());
    };
    // (instance, control type, place, constructor arguments) in declaration order.
    let subs: Vec<(String, String, Span, Vec<Expr>)> = locals
        .iter()
        .filter_map(|l| match &l.kind {
            DeclKind::Instance {
                ty: Type::Named(t, _),
                name,
                methods,
                args,
            } if controls.contains_key(t) && methods.is_empty() => {
                Some((name.clone(), t.clone(), l.span, args.clone()))
            }
            _ => None,
        })
        .collect();
    if subs.is_empty() {
        return Ok(());
    }
    if depth >= MAX_NESTING {
        return Err(src.error(
            subs[0].2,
            format!(
                "controls instantiate controls more than {MAX_NESTING} deep (a control that \
                 instantiates itself?)"
            ),
        ));
    }
    for (inst, ty, span, ctor_args) in subs {
        let at = locals
            .iter()
            .position(|l| l.span == span && declared_name(l) == Some(inst.as_str()))
            .expect("the instance is a local");
        locals.remove(at);
        let Some(args) = first_apply_args(apply, &inst) else {
            continue;
        };
        let mut callee = controls[&ty].clone();
        super::bind_constructor(src, &mut callee, &ctor_args, span)?;
        inline_into(src, controls, &mut callee, depth + 1)?;
        let DeclKind::Control {
            params: cparams,
            locals: clocals,
            apply: cbody,
            ..
        } = callee.kind
        else {
            unreachable!("controls holds controls")
        };
        if cparams.len() != args.len() {
            return Err(src.error(
                args.first().map_or(span, |a| a.span),
                format!(
                    "`{inst}.apply` gives {} arguments; control `{ty}` takes {}",
                    args.len(),
                    cparams.len()
                ),
            ));
        }
        let mut map: HashMap<String, Expr> = cparams
            .iter()
            .map(|p| p.name.clone())
            .zip(args.iter().cloned())
            .collect();
        for l in &clocals {
            if let Some(n) = declared_name(l) {
                map.insert(
                    n.to_string(),
                    Expr {
                        kind: ExprKind::Name(format!("{inst}.{n}")),
                        span: l.span,
                    },
                );
            }
        }
        let mut added = Vec::new();
        for mut l in clocals {
            visit::decl_exprs(&mut l, &mut |e| visit::substitute(e, &map));
            super::prefix_local(&mut l, &format!("{inst}."));
            added.push(l);
        }
        locals.splice(at..at, added);
        let mut body = cbody;
        visit::stmts_exprs(&mut body, &mut |e| visit::substitute(e, &map));
        replace_applies(src, apply, &inst, &body)?;
    }
    Ok(())
}

/// The arguments of the first `inst.apply(...)` in `body`, in statement order.
fn first_apply_args(body: &[Stmt], inst: &str) -> Option<Vec<Expr>> {
    for s in body {
        let found = match &s.kind {
            StmtKind::Call(e) => apply_args(e, inst).map(|a| a.to_vec()),
            StmtKind::If(_, t, e) => {
                first_apply_args(t, inst).or_else(|| first_apply_args(e, inst))
            }
            StmtKind::Block(b) => first_apply_args(b, inst),
            StmtKind::Switch(_, cases) => cases.iter().find_map(|(_, b)| first_apply_args(b, inst)),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn apply_args<'e>(e: &'e Expr, inst: &str) -> Option<&'e [Expr]> {
    let ExprKind::Call { func, args, .. } = &e.kind else {
        return None;
    };
    match &func.kind {
        ExprKind::Member(obj, m) if m == "apply" => match &obj.kind {
            ExprKind::Name(n) if n == inst => Some(args),
            _ => None,
        },
        _ => None,
    }
}

/// Each `inst.apply(args)` statement in `body` becomes a block of `inlined`; a second one is
/// an error (the instance's tables would be applied twice).
fn replace_applies(src: &Source, body: &mut [Stmt], inst: &str, inlined: &[Stmt]) -> R<()> {
    let mut seen = false;
    fn walk(
        src: &Source,
        body: &mut [Stmt],
        inst: &str,
        inlined: &[Stmt],
        seen: &mut bool,
    ) -> R<()> {
        for s in body {
            match &mut s.kind {
                StmtKind::Call(e) if apply_args(e, inst).is_some() => {
                    if *seen {
                        return Err(src.error(
                            s.span,
                            format!(
                                "control instance `{inst}` is applied a second time: its tables \
                                 sit in one place on the chip (instantiate the control twice)"
                            ),
                        ));
                    }
                    *seen = true;
                    s.kind = StmtKind::Block(inlined.to_vec());
                }
                StmtKind::If(_, t, e) => {
                    walk(src, t, inst, inlined, seen)?;
                    walk(src, e, inst, inlined, seen)?;
                }
                StmtKind::Block(b) => walk(src, b, inst, inlined, seen)?,
                StmtKind::Switch(_, cases) => {
                    for (_, b) in cases {
                        walk(src, b, inst, inlined, seen)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
    walk(src, body, inst, inlined, &mut seen)
}
