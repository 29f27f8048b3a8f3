//! Passes over the syntax tree that bring a P4 program down to the shapes the lowering
//! reads, each small and named for what it does, as p4c's front and mid ends are. They run
//! in this order, each on the output of the one before:
//!
//! 1. [`inline_parsers`]: a parser instantiated in a parser and applied in a state
//!    (`TofinoIngressParser() tofino_parser; ... tofino_parser.apply(pkt, ig_intr_md);`)
//!    becomes states of the caller (p4c's parser inlining).
//! 2. [`inline_controls`]: a control instantiated in a control and applied
//!    (`BypassEgress() bypass; ... bypass.apply(ig_tm_md);`) becomes the caller's actions,
//!    tables and statements (p4c's `InlineControlFlow`).
//! 3. [`inline_actions`]: an action called in an action, or in an apply block with
//!    directional parameters, becomes its body (p4c's `InlineActions`).
//! 4. [`move_declarations`]: variables declared in apply blocks and actions become the
//!    control's, and initializers become assignments where they stood (p4c's
//!    `MoveDeclarations` and `MoveInitializers`).
//! 5. [`complex_conditions`]: `||`, and `&&` with an `else`, evaluated into a 1-bit variable
//!    by a chain of one-comparison gateways, short-circuit kept (bf-p4c's gateway chains).
//! 6. [`split_else_if`]: a deparser's else-if chain over one field (`digest_type == 1`,
//!    `== 2`, ...) as the separate `if`s the architecture's idioms are.
//! 7. [`lookahead_locals`]: a parser state's local set by a look-ahead replaced by the
//!    look-ahead where the state uses it (TNA's mirror-type idiom).
//!
//! Names a pass makes are kept apart from the program's own: a sub-parser's states are
//! `<instance>_<state>`, a sub-control's objects `<instance>.<name>` (the control-plane
//! name p4c gives them under the caller).

mod complex_conditions;
mod inline_actions;
mod inline_controls;
mod inline_parsers;
mod lookahead_locals;
mod move_declarations;
mod split_else_if;

use super::ast::{Decl, DeclKind, Expr, Param, Span};
use super::preprocess::Source;
use super::visit;
use super::P4Error;
use std::collections::{BTreeSet, HashMap};

pub use complex_conditions::complex_conditions;
pub use inline_actions::inline_actions;
pub use inline_controls::inline_controls;
pub use inline_parsers::inline_parsers;
pub use lookahead_locals::lookahead_locals;
pub use move_declarations::move_declarations;
pub use split_else_if::split_else_if;

/// Every pass in order over a copy of `decls`.
pub fn run(src: &Source, decls: &[Decl]) -> Result<Vec<Decl>, P4Error> {
    let mut out = decls.to_vec();
    inline_parsers(src, &mut out)?;
    inline_controls(src, &mut out)?;
    inline_actions(src, &mut out)?;
    move_declarations(&mut out);
    complex_conditions(&mut out);
    split_else_if(&mut out);
    lookahead_locals(&mut out);
    Ok(out)
}

/// How deep one parser or control may instantiate another (one instantiating itself, even
/// through others, would never end).
const MAX_NESTING: u32 = 16;

/// `callee` (a parser or control type) with its constructor parameters replaced by an
/// instance's arguments `args` (`Learn(3) learn;`), checked for their number at `at`.
fn bind_constructor(
    src: &Source,
    callee: &mut Decl,
    args: &[Expr],
    at: Span,
) -> Result<(), P4Error> {
    let (DeclKind::Parser {
        name, ctor_params, ..
    }
    | DeclKind::Control {
        name, ctor_params, ..
    }) = &mut callee.kind
    else {
        return Ok(());
    };
    if ctor_params.len() != args.len() {
        return Err(src.error(
            at,
            format!(
                "`{name}` takes {} constructor arguments; the instance gives {}",
                ctor_params.len(),
                args.len()
            ),
        ));
    }
    let map: HashMap<String, Expr> = std::mem::take(ctor_params)
        .into_iter()
        .map(|p| p.name)
        .zip(args.iter().cloned())
        .collect();
    if !map.is_empty() {
        visit::decl_exprs(callee, &mut |e| visit::substitute(e, &map));
    }
    Ok(())
}

/// The name a local declaration introduces.
fn declared_name(d: &Decl) -> Option<&str> {
    match &d.kind {
        DeclKind::Instance { name, .. }
        | DeclKind::Var { name, .. }
        | DeclKind::Const { name, .. }
        | DeclKind::Action { name, .. }
        | DeclKind::Table { name, .. } => Some(name),
        _ => None,
    }
}

/// The names a block's parameters and declarations take (a name a pass makes avoids them).
fn names_taken(params: &[Param], locals: &[Decl]) -> BTreeSet<String> {
    let mut taken: BTreeSet<String> = params.iter().map(|p| p.name.clone()).collect();
    taken.extend(locals.iter().filter_map(declared_name).map(str::to_string));
    taken
}

/// `prefix` put before the name a local declaration introduces.
fn prefix_local(d: &mut Decl, prefix: &str) {
    if let DeclKind::Instance { name, .. }
    | DeclKind::Var { name, .. }
    | DeclKind::Const { name, .. }
    | DeclKind::Action { name, .. }
    | DeclKind::Table { name, .. } = &mut d.kind
    {
        name.insert_str(0, prefix);
    }
}
