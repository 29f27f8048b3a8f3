//! Lowering a P4 parser onto the IR parser graph: states, `extract`, `select`,
//! `lookahead` and `advance`, and merging states the IR graph does not need apart.

use super::*;

impl<'a> Lowerer<'a> {
    /// Lowers a parser into an IR graph (state names kept).
    pub(super) fn lower_parser(&mut self, d: &'a Decl, g: Gress) -> R<(ir::ParserGraph, Span)> {
        let c = self.ctl(d, g)?;
        let DeclKind::Parser { states, .. } = &d.kind else {
            unreachable!()
        };
        let names: Vec<&str> = states.iter().map(|s| s.name.as_str()).collect();
        if !names.contains(&ir::START) {
            return self.err(d.span, format!("parser `{}` has no `start` state", c.name));
        }
        // The states the one extracting the intrinsic metadata goes to: they may skip the
        // port metadata (TNA's resubmit idiom selects on `resubmit_flag` first).
        let after_intrinsic = self.states_after_intrinsic(&c, states);
        let mut out = Vec::new();
        let mut value_sets: Vec<ir::ValueSet> = Vec::new();
        for s in states {
            if s.name == ir::ACCEPT || s.name == ir::REJECT {
                return self.err(s.span, format!("a state cannot be named `{}`", s.name));
            }
            for a in &s.annotations {
                if a.name != "dontmerge" {
                    continue;
                }
                // bf-p4c's `@dontmerge("ingress")`: the model runs one graph in both
                // gresses, so either gress keeps the state apart in both.
                let gress_ok = match a.args.as_slice() {
                    [] => true,
                    [e] => matches!(&e.kind, ExprKind::Str(g) if g == "ingress" || g == "egress"),
                    _ => false,
                };
                if !gress_ok {
                    return self.err(
                        a.span,
                        "@dontmerge takes no argument or \"ingress\" / \"egress\"",
                    );
                }
                self.unmerged.insert(s.name.clone());
            }
            let mut extract = Vec::new();
            let mut set: Vec<ir::ParserSet> = Vec::new();
            let mut checksum: Vec<ir::ParserChecksum> = Vec::new();
            let mut skip: Vec<ir::ParserSkip> = Vec::new();
            // Bits the state has extracted so far: where a `lookahead` reads from.
            let mut offset_bits = 0u32;
            let mut intrinsic = after_intrinsic.contains(&s.name);
            let body = self.expand_list_assigns(&c, &s.body)?;
            for st in &body {
                let bad = |l: &Self| {
                    l.err(
                        st.span,
                        "the model's parser only extracts headers and selects on their \
                         fields; this statement has no IR equivalent",
                    )
                };
                match &st.kind {
                    StmtKind::Empty => {}
                    StmtKind::Call(e) => {
                        if let Some(op) = self.parser_checksum_call(&c, e, extract.len())? {
                            checksum.push(op);
                            continue;
                        }
                        let Some((obj, m, args)) = method_call(e) else {
                            return bad(self);
                        };
                        let is_pkt = obj
                            .path()
                            .is_some_and(|p| matches!(c.params.get(&p), Some(ParamKind::Packet)));
                        if let ("setValid" | "setInvalid", []) = (m, args) {
                            // The header's valid bit, written as the parser writes a field (a
                            // header in the metadata has a 1-bit metadata field for it).
                            let dst = match self.meta_header_valid(&c, obj)? {
                                Some(v) => v,
                                None => format!("{}.$valid", self.header_of(&c, obj)?),
                            };
                            set.push(ir::ParserSet {
                                dst,
                                src: ir::ParserValue::Const((m == "setValid") as u64),
                            });
                            continue;
                        }
                        if !is_pkt {
                            return bad(self);
                        }
                        match (m, args) {
                            ("extract", [a]) => {
                                let p = a.path().unwrap_or_default();
                                let comps: Vec<&str> = p.split('.').collect();
                                match c.params.get(comps[0]) {
                                    Some(ParamKind::Intrinsic(..)) if comps.len() == 1 => {
                                        // The chip fills the intrinsic metadata itself.
                                        intrinsic = true;
                                    }
                                    Some(ParamKind::Skip(bits)) if comps.len() == 1 => {
                                        // Tofino's port metadata: 64 bits on TNA, 192 on T2NA.
                                        let skips_port_metadata = intrinsic
                                            && extract.is_empty()
                                            && matches!(bits, 64 | 192);
                                        if !skips_port_metadata {
                                            return self.err(
                                                a.span,
                                                format!(
                                                    "a parser's local header ({bits} bits) is \
                                                     extracted only to skip the port metadata (64 \
                                                     bits on TNA, 192 on T2NA) right after the \
                                                     intrinsic metadata: the model's parser keeps \
                                                     no header outside the headers struct"
                                                ),
                                            );
                                        }
                                    }
                                    Some(ParamKind::Headers(sname)) if comps.len() == 2 => {
                                        let fs = self.structs.get(sname).copied().unwrap_or(&[]);
                                        let Some(f) = fs.iter().find(|f| f.name == comps[1]) else {
                                            return self.err(
                                                a.span,
                                                format!(
                                                    "`{}` has no header `{}`",
                                                    comps[0], comps[1]
                                                ),
                                            );
                                        };
                                        let Ty::Header(h) = self.resolve(&f.ty, f.span)? else {
                                            return self
                                                .err(a.span, format!("`{p}` is not a header"));
                                        };
                                        let inst = self.instance(&f.name, &h, f.span)?;
                                        self.extract_after_sets(&set, &inst.ir, st.span)?;
                                        offset_bits += inst.fields.iter().map(|f| f.2).sum::<u32>();
                                        extract.push(inst.ir);
                                    }
                                    _ => return self.err(
                                        a.span,
                                        "only a header of the headers struct (or the intrinsic \
                                             metadata) can be extracted",
                                    ),
                                }
                            }
                            ("advance", [n]) => {
                                let bits = match self.const_value(n, &c.locals) {
                                    Ok((v, _)) if v % 8 == 0 && v > 0 && v <= 8 * 9216 => v as u32,
                                    _ => {
                                        return self.err(
                                            n.span,
                                            "`advance` by a constant number of whole bytes (1 to \
                                             a frame's 9216): the parser moves by bytes it knows \
                                             when the program loads",
                                        )
                                    }
                                };
                                // The port metadata right after the intrinsic metadata is not
                                // in the model's packet bytes: skipping it is a no-op.
                                let port_metadata = intrinsic
                                    && extract.is_empty()
                                    && skip.is_empty()
                                    && matches!(bits, 64 | 192);
                                // Nor is the intrinsic metadata: skipping it with the port
                                // metadata (64 + 64 bits on TNA, 64 + 192 on T2NA) first thing
                                // in `start` is one too.
                                let all_metadata = s.name == ir::START
                                    && !intrinsic
                                    && extract.is_empty()
                                    && skip.is_empty()
                                    && matches!(bits, 128 | 256);
                                if all_metadata {
                                    intrinsic = true;
                                } else if !port_metadata {
                                    skip.push(ir::ParserSkip {
                                        after_extracts: extract.len() as u32,
                                        bits,
                                    });
                                    offset_bits += bits;
                                }
                            }
                            ("lookahead", _) => {
                                return self.err(
                                    st.span,
                                    "`lookahead` is not supported: the model's parser selects on \
                                     extracted fields only",
                                )
                            }
                            _ => return bad(self),
                        }
                    }
                    StmtKind::Assign(lhs, rhs) => {
                        match self.parser_checksum_assign(&c, lhs, rhs, extract.len())? {
                            Some(op) => checksum.push(op),
                            None => set.push(self.parser_set(&c, lhs, rhs, offset_bits)?),
                        }
                    }
                    StmtKind::Var(_) => {
                        return self.err(
                            st.span,
                            "assignments in a parser are not supported: the model's parser \
                             only extracts headers (set metadata in a control)",
                        )
                    }
                    _ => return bad(self),
                }
            }
            let transition = match &s.transition {
                None => ir::Transition::Goto(ir::REJECT.to_string()),
                Some(Transition::Goto(n, sp)) => {
                    self.state_name(&names, n, *sp)?;
                    ir::Transition::Goto(n.clone())
                }
                Some(Transition::Select { keys, cases, span }) => {
                    let mut kf = Vec::new();
                    for k in keys {
                        let copy_type = self.lookahead_key(&c, k, !extract.is_empty())?;
                        kf.push(match copy_type {
                            Some(f) => f,
                            None => self.select_key_field(&c, k)?,
                        });
                    }
                    let mut out_cases = Vec::new();
                    let mut default = ir::REJECT.to_string();
                    for case in cases {
                        self.state_name(&names, &case.next, case.span)?;
                        if let Some(vs) = self.value_set_case(
                            &c,
                            &case.keysets,
                            &kf,
                            &case.next,
                            &mut value_sets,
                        )? {
                            out_cases.push(vs);
                            continue;
                        }
                        if case.keysets.len() == 1 && case.keysets[0].kind == ExprKind::Default {
                            default = case.next.clone();
                            // Later cases can never match.
                            break;
                        }
                        if case.keysets.len() != kf.len() {
                            return self.err(
                                case.span,
                                format!(
                                    "the case gives {} values for {} select keys",
                                    case.keysets.len(),
                                    kf.len()
                                ),
                            );
                        }
                        let mut values = Vec::new();
                        for (ks, f) in case.keysets.iter().zip(&kf) {
                            values.push(self.key_value(&c, ks, f.bits)?);
                        }
                        out_cases.push(ir::SelectCase {
                            values,
                            next: case.next.clone(),
                            value_set: None,
                        });
                    }
                    let _ = span;
                    ir::Transition::Select {
                        keys: kf.into_iter().map(|f| f.ir).collect(),
                        cases: out_cases,
                        default,
                    }
                }
            };
            out.push(ir::ParserState {
                name: s.name.clone(),
                extract,
                set,
                checksum,
                skip,
                transition,
            });
        }
        Ok((
            ir::ParserGraph {
                states: out,
                value_sets,
                emit: Vec::new(),
            },
            d.span,
        ))
    }

    pub(super) fn state_name(&self, names: &[&str], n: &str, span: Span) -> R<()> {
        if n == ir::ACCEPT || n == ir::REJECT || names.contains(&n) {
            Ok(())
        } else {
            self.err(span, format!("unknown parser state `{n}`"))
        }
    }
}
