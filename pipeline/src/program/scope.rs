//! Which thread may name which intrinsic metadata.
//!
//! Tofino2 gives each gress its own intrinsic metadata: `ig_*` exists in ingress, `eg_*` in
//! egress, `ghost_md.*` in the ghost thread ([`crate::hw::fields::only_in`]). The gresses
//! have separate PHVs, and the model keeps some fields of one gress in containers the other
//! gress uses for its own, so a field named in the wrong thread would read another field's
//! bits (or 0). [`check_scopes`] refuses it, naming the field, where it is named and the
//! thread that would run it.

use crate::hw::fields;
use crate::program::error::{err, IrError};
use crate::program::ir::{self, Operand, Primitive, SaluOperand, Stmt};
use std::collections::BTreeMap;

/// The thread names in the order of `check::Thread::ALL`.
const THREADS: [&str; 3] = ["ingress", "egress", "ghost"];

fn operand_field(o: &Operand) -> Option<&str> {
    match o {
        Operand::Field(n) => Some(n),
        _ => None,
    }
}

fn salu_field(o: &SaluOperand) -> Option<&str> {
    match o {
        SaluOperand::Field(n) => Some(n),
        _ => None,
    }
}

/// The fields a primitive names, with the path (below the primitive) where each is named.
fn primitive_fields<'a>(p: &'a ir::Program, prim: &'a Primitive) -> Vec<(String, &'a str)> {
    let here = |n: &'a str| (String::new(), n);
    if let Some((_, b)) = prim.binary() {
        let mut v = vec![here(&b.dst)];
        v.extend([&b.a, &b.b].into_iter().filter_map(operand_field).map(here));
        return v;
    }
    match prim {
        Primitive::Set { dst, src } => {
            let mut v = vec![here(dst)];
            v.extend(operand_field(src).map(here));
            v
        }
        Primitive::Hash { dst, hash } => {
            let mut v = vec![here(dst)];
            if let Some((i, h)) = p.hashes.iter().enumerate().find(|(_, h)| &h.name == hash) {
                let path = format!(" via hashes[{i}] ({})", h.name);
                v.extend(h.inputs.iter().map(|n| (path.clone(), n.as_str())));
            }
            v
        }
        Primitive::SetEgressPort { port } => operand_field(port).map(here).into_iter().collect(),
        Primitive::SetQid { qid } => operand_field(qid).map(here).into_iter().collect(),
        Primitive::Mirror { session } => operand_field(session).map(here).into_iter().collect(),
        Primitive::Random { dst } => vec![here(dst)],
        Primitive::Execute {
            register_action,
            index,
        } => {
            let mut v: Vec<(String, &str)> = operand_field(index).map(here).into_iter().collect();
            let found = p
                .register_actions
                .iter()
                .enumerate()
                .find(|(_, ra)| &ra.name == register_action);
            if let Some((i, ra)) = found {
                let base = format!(" via register_actions[{i}] ({})", ra.name);
                for (k, c) in ra.conditions.iter().enumerate() {
                    let path = format!("{base}.conditions[{k}]");
                    for n in [&c.a, &c.b].into_iter().filter_map(salu_field) {
                        v.push((path.clone(), n));
                    }
                }
                for (k, u) in ra.updates.iter().enumerate() {
                    let path = format!("{base}.updates[{k}]");
                    for n in [&u.a, &u.b].into_iter().filter_map(salu_field) {
                        v.push((path.clone(), n));
                    }
                }
                for (k, o) in ra.outputs.iter().enumerate() {
                    v.push((format!("{base}.outputs[{k}]"), o.dst.as_str()));
                }
            }
            v
        }
        _ => Vec::new(),
    }
}

/// The error for `name`, named at `path` and run by `thread`, if it is not of that thread.
fn refuse(path: &str, name: &str, thread: &str, by: &str) -> Result<(), IrError> {
    match fields::only_in(name) {
        Some(only) if only != thread => err(
            path,
            format!(
                "field `{name}` exists only in {only}, but {by} runs in {thread} (Tofino2 gives \
                 each gress its own intrinsic metadata)"
            ),
        ),
        _ => Ok(()),
    }
}

/// Tables applied per thread, and each gateway's path with the fields it compares.
fn walk<'a>(
    thread: usize,
    path: &str,
    body: &'a [Stmt],
    tables: &mut BTreeMap<&'a str, usize>,
    gateways: &mut Vec<(String, usize, Vec<&'a str>)>,
) {
    for (k, s) in body.iter().enumerate() {
        let sp = format!("{path}[{k}]");
        match s {
            Stmt::Apply(t) => {
                tables.entry(t).or_insert(thread);
            }
            Stmt::If {
                name,
                cond,
                then,
                otherwise,
            } => {
                let gp = match name {
                    Some(n) => format!("{sp} ({n})"),
                    None => sp.clone(),
                };
                let mut names = vec![cond.field.as_str()];
                names.extend(operand_field(&cond.value));
                gateways.push((gp, thread, names));
                walk(thread, &format!("{sp}.then"), then, tables, gateways);
                walk(thread, &format!("{sp}.else"), otherwise, tables, gateways);
            }
        }
    }
}

/// Refuses intrinsic metadata named in a thread that does not have it: in a gateway, a
/// table's keys or selector inputs, or (through the tables that run it) an action's
/// primitives, the hash units and RegisterActions they use.
pub fn check_scopes(p: &ir::Program) -> Result<(), IrError> {
    let mut tables = BTreeMap::new();
    let mut gateways = Vec::new();
    for (th, body) in [&p.ingress, &p.egress, &p.ghost].into_iter().enumerate() {
        walk(th, THREADS[th], body, &mut tables, &mut gateways);
    }
    for (gp, th, names) in &gateways {
        for n in names {
            refuse(gp, n, THREADS[*th], "the gateway")?;
        }
    }
    for (i, t) in p.tables.iter().enumerate() {
        let Some(&th) = tables.get(t.name.as_str()) else {
            continue;
        };
        let path = format!("tables[{i}] ({})", t.name);
        let by = format!("table `{}`", t.name);
        for k in &t.keys {
            refuse(&format!("{path}.keys"), k, THREADS[th], &by)?;
        }
        for n in t.selector.iter().flat_map(|s| &s.inputs) {
            refuse(&format!("{path}.selector.inputs"), n, THREADS[th], &by)?;
        }
    }
    for (i, a) in p.actions.iter().enumerate() {
        for t in p.tables.iter().filter(|t| t.actions.contains(&a.name)) {
            let Some(&th) = tables.get(t.name.as_str()) else {
                continue;
            };
            let by = format!("the action (of table `{}`)", t.name);
            for (k, prim) in a.primitives.iter().enumerate() {
                for (below, n) in primitive_fields(p, prim) {
                    let path = format!("actions[{i}] ({}).primitives[{k}]{below}", a.name);
                    refuse(&path, n, THREADS[th], &by)?;
                }
            }
        }
    }
    Ok(())
}
