//! Lowering a P4 table declaration: keys and match kinds, actions, size, default action
//! and `const entries`.

use super::*;

impl<'a> Lowerer<'a> {
    pub(super) fn lower_table(&mut self, c: &Ctl<'a>, d: &'a Decl, ir_name: &str) -> R<ir::Table> {
        let DeclKind::Table { name, props } = &d.kind else {
            unreachable!()
        };
        let mut keys: Vec<KeyInfo> = Vec::new();
        let mut kinds = Vec::new();
        let mut actions: Vec<(String, String)> = Vec::new();
        let mut default: Option<(&Expr, Span)> = None;
        let mut size: Option<u32> = None;
        let mut entries: Option<&Vec<EntryDecl>> = None;
        let mut const_entries = false;
        let mut selector_inputs: Vec<(String, Span)> = Vec::new();
        let mut implementation: Option<(&Expr, Span)> = None;
        let mut counters: Option<(&Expr, Span)> = None;
        for p in props {
            match p {
                TableProp::Key(ks, _) => {
                    for k in ks {
                        let f = match method_call(&k.expr) {
                            Some((obj, "isValid", [])) => FieldRef {
                                ir: format!("{}.$valid", self.header_of(c, obj)?),
                                bits: 1,
                            },
                            _ => self.field(c, &k.expr)?,
                        };
                        if k.kind == "selector" {
                            // Hashed by the table's ActionSelector to pick a group member.
                            selector_inputs.push((f.ir, k.span));
                            continue;
                        }
                        if !["exact", "ternary", "lpm"].contains(&k.kind.as_str()) {
                            let why = match k.kind.as_str() {
                                "range" => "the IR's tables match exact, ternary or lpm (expand a range into ternary entries)",
                                _ => "unknown match kind",
                            };
                            return self.err(k.span, format!("match kind `{}`: {why}", k.kind));
                        }
                        let cp_name = k
                            .annotations
                            .iter()
                            .find(|a| a.name == "name")
                            .and_then(|a| match a.args.first().map(|e| &e.kind) {
                                Some(ExprKind::Str(s)) => Some(s.clone()),
                                _ => None,
                            })
                            .unwrap_or_else(|| expr_text(&k.expr));
                        kinds.push((k.kind.clone(), k.span));
                        keys.push(KeyInfo {
                            name: cp_name,
                            ir_field: f.ir,
                            bits: f.bits,
                            kind: k.kind.clone(),
                        });
                    }
                }
                TableProp::Actions(list, _) => {
                    for (e, sp) in list {
                        let Some(a) = e.path() else {
                            return self.err(*sp, "expected an action name");
                        };
                        let ir = self.ensure_action(c, &a, *sp)?;
                        actions.push((a, ir));
                    }
                }
                TableProp::Entries(list, _, is_const) => {
                    entries = Some(list);
                    const_entries = *is_const;
                }
                TableProp::Value {
                    name: pn,
                    value,
                    span,
                    ..
                } => match pn.as_str() {
                    "default_action" => default = Some((value, *span)),
                    "implementation" => implementation = Some((value, *span)),
                    "counters" => counters = Some((value, *span)),
                    "size" => {
                        let (v, _) = self.const_value(value, &c.locals)?;
                        size = Some(v.min(u32::MAX as u128) as u32);
                    }
                    other => {
                        return self.err(
                            *span,
                            format!(
                                "table property `{other}` is not supported (the IR's tables have \
                                 keys, actions, size, default_action, entries and, through a \
                                 register array, counters)"
                            ),
                        )
                    }
                },
            }
        }
        // The IR's match kind: exact; ternary when any key is ternary; lpm when the last key
        // is lpm and the others exact.
        let n_lpm = kinds.iter().filter(|k| k.0 == "lpm").count();
        let any_ternary = kinds.iter().any(|k| k.0 == "ternary");
        let kind = if any_ternary {
            MatchKind::Ternary
        } else if n_lpm == 0 {
            MatchKind::Exact
        } else if n_lpm == 1 && kinds.last().is_some_and(|k| k.0 == "lpm") {
            MatchKind::Lpm
        } else if n_lpm == 1 {
            let at = kinds.iter().find(|k| k.0 == "lpm").map_or(d.span, |k| k.1);
            return self.err(
                at,
                "an lpm key must be the last key: the IR matches the other keys exactly and the \
                 last by prefix",
            );
        } else {
            MatchKind::Ternary
        };
        let mut t = ir::Table::new(
            ir_name,
            kind,
            &keys.iter().map(|k| k.ir_field.as_str()).collect::<Vec<_>>(),
            if keys.is_empty() {
                0
            } else {
                // `size` is a lower bound (P4 spec 14.2.1.5): const entries beyond it grow
                // the table, as p4c sizes it.
                let consts = entries.map_or(0, |l| l.len() as u32);
                size.unwrap_or(512).max(consts)
            },
        );
        for (_, ir) in &actions {
            t.actions.push(ir.clone());
        }
        // The default action: as given, else NoAction.
        let (dname, dargs, dspan) = match default {
            Some((e, sp)) => match &e.kind {
                ExprKind::Call { func, args, .. } => (func.path(), args.as_slice(), sp),
                _ => (e.path(), &[][..], sp),
            },
            None => (Some("NoAction".to_string()), &[][..], d.span),
        };
        let Some(dname) = dname else {
            return self.err(dspan, "expected an action call");
        };
        let dir = match actions.iter().find(|a| a.0 == dname) {
            Some(a) => a.1.clone(),
            None if dname == "NoAction" => {
                let ir = self.ensure_action(c, "NoAction", dspan)?;
                t.actions.push(ir.clone());
                actions.push(("NoAction".into(), ir.clone()));
                ir
            }
            None => {
                return self.err(
                    dspan,
                    format!("default action `{dname}` is not in the table's `actions`"),
                )
            }
        };
        if let Some((e, sp)) = counters {
            self.check_counters_property(c, ir_name, e, sp, &actions)?;
        }
        for (a, ir) in &actions {
            if let Some((dc, table, _)) = self.direct_counted.get(ir) {
                if table != ir_name {
                    return self.err(d.span, format!("action `{a}` counts DirectCounter `{dc}` of table `{table}`; an action of two tables cannot count one table's entries"));
                }
            }
        }
        let mut dvals = self.action_args(c, &dir, dargs, dspan)?;
        // A miss counts in the cell after the entries' (see `counters`).
        dvals.extend(self.entry_index(&dir, t.size));
        t.default_action = ir::ActionCall::new(&dir, &dvals);
        if let Some(list) = entries {
            for en in list {
                if en.keys.len() != keys.len() {
                    return self.err(
                        en.span,
                        format!(
                            "the entry gives {} key values for {} keys",
                            en.keys.len(),
                            keys.len()
                        ),
                    );
                }
                let mut kv = Vec::new();
                for (e, k) in en.keys.iter().zip(&keys) {
                    let mut v = self.key_value(c, e, k.bits)?;
                    if kind != MatchKind::Exact && v.mask.is_none() && k.kind != "exact" {
                        v.mask = Some(if k.bits >= 64 {
                            u64::MAX
                        } else {
                            (1 << k.bits) - 1
                        });
                    }
                    if kind == MatchKind::Exact && v.mask.is_some() {
                        return self.err(e.span, "a mask in an entry of an exact table");
                    }
                    kv.push(v);
                }
                let (aname, aargs) = match &en.action.kind {
                    ExprKind::Call { func, args, .. } => (func.path(), args.as_slice()),
                    _ => (en.action.path(), &[][..]),
                };
                let Some(a) = aname.and_then(|a| actions.iter().find(|x| x.0 == a)) else {
                    return self.err(
                        en.action.span,
                        "the entry's action is not in the table's `actions`",
                    );
                };
                let mut vals = self.action_args(c, &a.1, aargs, en.action.span)?;
                vals.extend(self.entry_index(&a.1, t.entries.len() as u32));
                t.entries.push(ir::Entry {
                    key: kv,
                    action: ir::ActionCall::new(&a.1, &vals),
                    members: Vec::new(),
                });
            }
        }
        // An ActionSelector: the selector keys are what it hashes; its group count and size
        // what placement sizes it for.
        match (implementation, selector_inputs.is_empty()) {
            (None, true) => {}
            (None, false) => {
                return self.err(
                    selector_inputs[0].1,
                    "a `selector` key needs the table's `implementation = <ActionSelector>`",
                )
            }
            (Some((_, sp)), true) => {
                return self.err(sp, "an `implementation` needs `selector` keys to hash")
            }
            (Some((e, sp)), false) => {
                let sel = e.path().and_then(|n| match c.locals.get(&n) {
                    Some(Local::Extern(d, k)) if k == "ActionSelector" => Some(*d),
                    _ => None,
                });
                let Some(DeclKind::Instance { args, .. }) = sel.map(|d| &d.kind) else {
                    return self.err(
                        sp,
                        "`implementation` must be an ActionSelector (action profiles alone are \
                         not lowered)",
                    );
                };
                let [_, _, _, max, groups] = args.as_slice() else {
                    return self.err(
                        sp,
                        "ActionSelector(profile, hash, mode, max_group_size, num_groups) takes \
                         five arguments",
                    );
                };
                let (max, _) = self.const_value(max, &c.locals)?;
                let (groups, _) = self.const_value(groups, &c.locals)?;
                t.selector = Some(ir::Selector {
                    inputs: selector_inputs.into_iter().map(|x| x.0).collect(),
                    groups: groups.min(u32::MAX as u128) as u32,
                    max_members: max.min(u32::MAX as u128) as u32,
                });
            }
        }
        if let Some(a) = d.annotation("stage") {
            let (v, _) = match a.args.first() {
                Some(e) => self.const_value(e, &c.locals)?,
                None => return self.err(a.span, "@stage needs a stage number"),
            };
            // A number past 32 bits would wrap onto a small stage; placement judges the rest.
            let Ok(stage) = u32::try_from(v) else {
                return self.err(a.span, format!("@stage({v}): not a stage number"));
            };
            t.stage = Some(stage);
        }
        for a in &d.annotations {
            if [
                "placement_priority",
                "ignore_table_dependency",
                "pack",
                "ways",
            ]
            .contains(&a.name.as_str())
            {
                return self.err(
                    a.span,
                    format!(
                        "@{} is not supported: the IR's placement has no such control",
                        a.name
                    ),
                );
            }
        }
        self.tables.push(TableInfo {
            p4_name: format!("{}.{name}", c.name),
            local_name: name.clone(),
            ir_name: ir_name.to_string(),
            kind,
            keys,
            default_actions: actions.clone(),
            actions,
            const_entries,
        });
        Ok(t)
    }

    /// A keyset (of a select case or a table entry) for a key of `bits` bits.
    pub(super) fn key_value(&self, c: &Ctl<'a>, e: &Expr, bits: u32) -> R<ir::KeyValue> {
        let full = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let num = |l: &Self, x: &Expr| -> R<u64> {
            let (v, _) = l.const_value(x, &c.locals)?;
            if bits < 128 && v >> bits != 0 {
                return l.err(
                    x.span,
                    format!("value {v:#x} does not fit in the {bits}-bit key"),
                );
            }
            Ok(v as u64)
        };
        Ok(match &e.kind {
            ExprKind::Default => ir::KeyValue {
                value: 0,
                mask: Some(0),
            },
            ExprKind::Binary(BinOp::Mask, v, m) => ir::KeyValue {
                value: num(self, v)?,
                mask: Some(num(self, m)? & full),
            },
            ExprKind::Binary(BinOp::Range, ..) => {
                return self.err(
                    e.span,
                    "range keysets are not supported: the model matches value/mask only",
                )
            }
            _ => ir::KeyValue {
                value: num(self, e)?,
                mask: None,
            },
        })
    }
}
