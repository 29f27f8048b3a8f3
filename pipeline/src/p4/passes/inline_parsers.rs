//! Sub-parsers inlined into the parser that applies them, as p4c does: a parser type
//! instantiated in a parser (`TofinoIngressParser() tofino_parser;`) and applied in a state
//! (`tofino_parser.apply(pkt, ig_intr_md);`) splits that state at the call. The statements
//! before it stay in the state, which goes to a copy of the sub-parser's `start`; the
//! sub-parser's states are copied in as `<site>_<state>` with its parameters replaced by the
//! arguments; its `accept` goes to a new state `<state>_after_<site>` holding the statements
//! after the call and the state's own transition; its `reject` stays `reject`. Each call
//! site gets its own copy of the states (`<instance>`, then `<instance>_1`, ...); the
//! sub-parser's own locals are the instance's, `<instance>_<name>`.

use super::super::ast::*;
use super::super::preprocess::Source;
use super::super::visit;
use super::{declared_name, P4Error, MAX_NESTING};
use std::collections::{BTreeSet, HashMap};

type R<T> = Result<T, P4Error>;

/// Inlines every applied sub-parser of every parser in `decls`.
pub fn inline_parsers(src: &Source, decls: &mut [Decl]) -> R<()> {
    let parsers: HashMap<String, Decl> = decls
        .iter()
        .filter_map(|d| match &d.kind {
            DeclKind::Parser { name, .. } => Some((name.clone(), d.clone())),
            _ => None,
        })
        .collect();
    if parsers.is_empty() {
        return Ok(());
    }
    for d in decls.iter_mut() {
        if matches!(d.kind, DeclKind::Parser { .. }) {
            inline_into(src, &parsers, d, 0)?;
        }
    }
    Ok(())
}

/// A sub-parser instance of the parser being inlined into.
struct SubParser {
    ty: String,
    span: Span,
    /// Call sites so far (names the next copy of the states).
    sites: u32,
    /// Whether the sub-parser's locals were added to the caller's yet.
    locals_added: bool,
    /// The instance's constructor arguments.
    args: Vec<Expr>,
}

fn inline_into(src: &Source, parsers: &HashMap<String, Decl>, d: &mut Decl, depth: u32) -> R<()> {
    let DeclKind::Parser { locals, states, .. } = &mut d.kind else {
        return Ok(());
    };
    let mut subs: HashMap<String, SubParser> = HashMap::new();
    locals.retain(|l| match &l.kind {
        DeclKind::Instance {
            ty: Type::Named(t, _),
            name,
            methods,
            args,
        } if parsers.contains_key(t) && methods.is_empty() => {
            subs.insert(
                name.clone(),
                SubParser {
                    ty: t.clone(),
                    span: l.span,
                    sites: 0,
                    locals_added: false,
                    args: args.clone(),
                },
            );
            false
        }
        _ => true,
    });
    if subs.is_empty() {
        return Ok(());
    }
    if depth >= MAX_NESTING {
        let at = subs
            .values()
            .map(|s| s.span)
            .min_by_key(|s| s.pos)
            .unwrap_or(d.span);
        return Err(src.error(
            at,
            format!(
                "parsers instantiate parsers more than {MAX_NESTING} deep (a parser that \
                 instantiates itself?)"
            ),
        ));
    }
    let mut taken: BTreeSet<String> = states.iter().map(|s| s.name.clone()).collect();
    let mut work: Vec<State> = std::mem::take(states);
    work.reverse();
    let mut out = Vec::new();
    let mut new_locals = Vec::new();
    while let Some(mut s) = work.pop() {
        let Some(k) = s
            .body
            .iter()
            .position(|st| applied_sub(st, &subs).is_some())
        else {
            out.push(s);
            continue;
        };
        let (inst, args, call_span) = applied_sub(&s.body[k], &subs).expect("found above");
        let (inst, args) = (inst.to_string(), args.to_vec());
        let sub = subs.get_mut(&inst).expect("a sub-parser instance");
        let site = match sub.sites {
            0 => inst.clone(),
            n => format!("{inst}_{n}"),
        };
        sub.sites += 1;
        let mut callee = parsers[&sub.ty].clone();
        super::bind_constructor(src, &mut callee, &sub.args, sub.span)?;
        inline_into(src, parsers, &mut callee, depth + 1)?;
        let DeclKind::Parser {
            params: cparams,
            locals: clocals,
            states: cstates,
            ..
        } = callee.kind
        else {
            unreachable!("parsers holds parsers")
        };
        if cparams.len() != args.len() {
            return Err(src.error(
                call_span,
                format!(
                    "`{inst}.apply` gives {} arguments; parser `{}` takes {}",
                    args.len(),
                    sub.ty,
                    cparams.len()
                ),
            ));
        }
        let mut map: HashMap<String, Expr> =
            cparams.iter().map(|p| p.name.clone()).zip(args).collect();
        for l in &clocals {
            if let Some(n) = declared_name(l) {
                let span = l.span;
                map.insert(
                    n.to_string(),
                    Expr {
                        kind: ExprKind::Name(format!("{inst}_{n}")),
                        span,
                    },
                );
            }
        }
        if !sub.locals_added {
            sub.locals_added = true;
            for mut l in clocals {
                visit::decl_exprs(&mut l, &mut |e| visit::substitute(e, &map));
                super::prefix_local(&mut l, &format!("{inst}_"));
                new_locals.push(l);
            }
        }
        let cont = fresh(&mut taken, format!("{}_after_{site}", s.name));
        let renamed: HashMap<String, String> = cstates
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    fresh(&mut taken, format!("{site}_{}", c.name)),
                )
            })
            .collect();
        let Some(start) = renamed.get("start").cloned() else {
            return Err(src.error(
                sub.span,
                format!("parser `{}` has no `start` state", sub.ty),
            ));
        };
        let mut copies = Vec::new();
        for mut c in cstates {
            visit::state_exprs(&mut c, &mut |e| visit::substitute(e, &map));
            c.name = renamed[&c.name].clone();
            retarget(&mut c, |t| match t {
                "accept" => cont.clone(),
                _ => renamed.get(t).cloned().unwrap_or_else(|| t.to_string()),
            });
            copies.push(c);
        }
        let rest = State {
            annotations: Vec::new(),
            name: cont,
            body: s.body.split_off(k + 1),
            transition: s.transition.take(),
            span: call_span,
        };
        s.body.pop();
        s.transition = Some(Transition::Goto(start, call_span));
        out.push(s);
        // The rest may apply another sub-parser: it is looked at next.
        work.push(rest);
        out.extend(copies);
    }
    *states = out;
    locals.extend(new_locals);
    Ok(())
}

/// `inst.apply(args)` of a sub-parser instance: (instance, arguments, place).
fn applied_sub<'s>(
    st: &'s Stmt,
    subs: &HashMap<String, SubParser>,
) -> Option<(&'s str, &'s [Expr], Span)> {
    let StmtKind::Call(e) = &st.kind else {
        return None;
    };
    let ExprKind::Call { func, args, .. } = &e.kind else {
        return None;
    };
    let ExprKind::Member(obj, m) = &func.kind else {
        return None;
    };
    match &obj.kind {
        ExprKind::Name(n) if m == "apply" && subs.contains_key(n) => Some((n, args, st.span)),
        _ => None,
    }
}

/// `name`, or `name_2`, `name_3`, ... when taken; the one returned is then taken.
fn fresh(taken: &mut BTreeSet<String>, name: String) -> String {
    let mut n = name.clone();
    let mut k = 2;
    while taken.contains(&n) {
        n = format!("{name}_{k}");
        k += 1;
    }
    taken.insert(n.clone());
    n
}

/// Every state a transition of `s` names, replaced by `f` of it.
fn retarget(s: &mut State, f: impl Fn(&str) -> String) {
    match &mut s.transition {
        Some(Transition::Goto(t, _)) => *t = f(t),
        Some(Transition::Select { cases, .. }) => {
            for c in cases {
                c.next = f(&c.next);
            }
        }
        None => {}
    }
}
