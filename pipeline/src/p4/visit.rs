//! Walking the syntax tree: every expression a declaration or statement holds, reached
//! mutably, so that a pass (inlining, renaming) can rewrite names wherever they are written.

use super::ast::*;
use std::collections::HashMap;

/// Calls `f` on every outermost expression of `d` (not on their subexpressions): arguments,
/// initializers, table properties, bodies of actions, functions and apply blocks, parser
/// select keys and keysets. Type arguments and annotations are left alone.
pub fn decl_exprs(d: &mut Decl, f: &mut impl FnMut(&mut Expr)) {
    match &mut d.kind {
        DeclKind::Const { value, .. } => f(value),
        DeclKind::Instance { args, methods, .. } => {
            args.iter_mut().for_each(&mut *f);
            for m in methods {
                decl_exprs(m, f);
            }
        }
        DeclKind::Function { body, .. } | DeclKind::Action { body, .. } => stmts_exprs(body, f),
        DeclKind::Var { init, .. } => {
            if let Some(e) = init {
                f(e)
            }
        }
        DeclKind::Table { props, .. } => {
            for p in props {
                match p {
                    TableProp::Key(keys, _) => keys.iter_mut().for_each(|k| f(&mut k.expr)),
                    TableProp::Actions(acts, _) => acts.iter_mut().for_each(|a| f(&mut a.0)),
                    TableProp::Entries(entries, ..) => {
                        for e in entries {
                            e.keys.iter_mut().for_each(&mut *f);
                            f(&mut e.action);
                        }
                    }
                    TableProp::Value { value, .. } => f(value),
                }
            }
        }
        DeclKind::Parser { locals, states, .. } => {
            for l in locals {
                decl_exprs(l, f);
            }
            for s in states {
                state_exprs(s, f);
            }
        }
        DeclKind::Control { locals, apply, .. } => {
            for l in locals {
                decl_exprs(l, f);
            }
            stmts_exprs(apply, f);
        }
        DeclKind::Typedef { .. }
        | DeclKind::Header { .. }
        | DeclKind::Struct { .. }
        | DeclKind::HeaderUnion { .. }
        | DeclKind::Enum { .. }
        | DeclKind::Extern { .. }
        | DeclKind::MatchKind(_)
        | DeclKind::Error(_)
        | DeclKind::Prototype { .. } => {}
    }
}

/// [`decl_exprs`] over a parser state: its statements, select keys and keysets.
pub fn state_exprs(s: &mut State, f: &mut impl FnMut(&mut Expr)) {
    stmts_exprs(&mut s.body, f);
    if let Some(Transition::Select { keys, cases, .. }) = &mut s.transition {
        keys.iter_mut().for_each(&mut *f);
        for c in cases {
            c.keysets.iter_mut().for_each(&mut *f);
        }
    }
}

/// [`decl_exprs`] over statements.
pub fn stmts_exprs(body: &mut [Stmt], f: &mut impl FnMut(&mut Expr)) {
    for s in body {
        stmt_exprs(s, f);
    }
}

fn stmt_exprs(s: &mut Stmt, f: &mut impl FnMut(&mut Expr)) {
    match &mut s.kind {
        StmtKind::Assign(a, b) => {
            f(a);
            f(b);
        }
        StmtKind::Call(e) => f(e),
        StmtKind::If(c, t, e) => {
            f(c);
            stmts_exprs(t, f);
            stmts_exprs(e, f);
        }
        StmtKind::Block(b) => stmts_exprs(b, f),
        StmtKind::Switch(e, cases) => {
            f(e);
            for (_, body) in cases {
                stmts_exprs(body, f);
            }
        }
        StmtKind::Return(Some(e)) => f(e),
        StmtKind::Var(d) => decl_exprs(d, f),
        StmtKind::Exit | StmtKind::Return(None) | StmtKind::Empty => {}
    }
}

/// Replaces each name of `map` where it stands alone or at the root of a member chain
/// (`p` in `p.f.g`), anywhere inside `e`, by a copy of its expression.
pub fn substitute(e: &mut Expr, map: &HashMap<String, Expr>) {
    match &mut e.kind {
        ExprKind::Name(n) => {
            if let Some(by) = map.get(n.as_str()) {
                let span = e.span;
                *e = by.clone();
                // The place stays the one written, so errors point at the use.
                e.span = span;
            }
        }
        ExprKind::Member(b, _) => substitute(b, map),
        ExprKind::Index(a, b) => {
            substitute(a, map);
            substitute(b, map);
        }
        ExprKind::Slice(a, b, c) | ExprKind::Ternary(a, b, c) => {
            substitute(a, map);
            substitute(b, map);
            substitute(c, map);
        }
        ExprKind::Call { func, args, .. } => {
            substitute(func, map);
            args.iter_mut().for_each(|a| substitute(a, map));
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => substitute(a, map),
        ExprKind::Binary(_, a, b) => {
            substitute(a, map);
            substitute(b, map);
        }
        ExprKind::List(v) => v.iter_mut().for_each(|a| substitute(a, map)),
        ExprKind::Int { .. } | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::Default => {}
    }
}
