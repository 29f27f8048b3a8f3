//! The deparser: emits checked against the parser's headers, and TNA's mirror idiom.

use super::*;

impl<'a> Lowerer<'a> {
    /// Checks a deparser: it emits the headers the parser extracts, in parse order, and
    /// updates at most the built-in IPv4 checksum (which the model's deparser recomputes).
    pub(super) fn check_deparser(&mut self, d: &'a Decl, graph: &ir::ParserGraph) -> R<()> {
        let gress = Gress::Ingress;
        let c = self.ctl(d, gress)?;
        let DeclKind::Control { apply, .. } = &d.kind else {
            unreachable!()
        };
        let mut emitted: Vec<String> = Vec::new();
        for st in apply {
            if self.mirror_idiom(&c, st)?.is_some()
                || self.resubmit_idiom(&c, st)?.is_some()
                || digests::is_digest_idiom(&c, st)
            {
                continue;
            }
            match &st.kind {
                StmtKind::Empty => {}
                StmtKind::Call(e) => {
                    let Some((_, "emit", [arg])) = method_call(e) else {
                        return self.err(
                            st.span,
                            "a deparser here only emits headers (`pkt.emit(hdr)`)",
                        );
                    };
                    let p = arg.path().unwrap_or_default();
                    let comps: Vec<&str> = p.split('.').collect();
                    match (c.params.get(comps[0]).cloned(), comps.len()) {
                        (Some(ParamKind::Headers(s)), 1) => {
                            let fs = self.structs.get(&s).copied().unwrap_or(&[]);
                            for f in fs {
                                if let Ty::Header(h) = self.resolve(&f.ty, f.span)? {
                                    emitted.push(self.instance(&f.name, &h, f.span)?.ir);
                                }
                            }
                        }
                        (Some(ParamKind::Headers(_)), 2) => emitted.push(self.header_of(&c, arg)?),
                        _ => {
                            return self.err(
                                arg.span,
                                "`emit` takes the headers struct or one of its headers",
                            )
                        }
                    }
                }
                StmtKind::Assign(lhs, rhs) => {
                    let ok = matches!(method_call(rhs), Some((obj, "update", _))
                        if obj.path().is_some_and(|o| matches!(c.locals.get(&o), Some(Local::Extern(_, e)) if e == "Checksum")));
                    let f = self.field(&c, lhs)?;
                    if !ok || f.ir != "ipv4.hdr_checksum" {
                        return self.err(
                            st.span,
                            "the only deparser computation supported is the IPv4 header \
                             checksum of the built-in ipv4 header (`hdr.ipv4.hdr_checksum = \
                             csum.update({...})`), which the model's deparser recomputes",
                        );
                    }
                }
                _ => {
                    return self.err(
                        st.span,
                        "this deparser statement is not supported (a deparser here emits \
                         headers, has the mirror, resubmit and digest idioms and updates the \
                         IPv4 checksum)",
                    )
                }
            }
        }
        // Headers in parse order: every header the graph extracts (first seen in a
        // depth-first walk from `start`), and which header comes before which on some path.
        // One visit per state, so that a graph of many paths costs no more than its states;
        // a loop is refused where the parser is lowered (`parse_walk`).
        let walk = parse_walk(graph).map_err(|_| {
            self.src.error(
                d.span,
                "the parser graph has a loop; the model's parser graph is loop-free",
            )
        })?;
        let mut order: Vec<String> = Vec::new();
        for &s in &walk.preorder {
            for h in &graph.states[s].extract {
                if !order.contains(h) {
                    order.push(h.clone());
                }
            }
        }
        // Headers extracted on some path into each state, in topological order.
        let mut into: Vec<BTreeSet<&String>> = vec![BTreeSet::new(); graph.states.len()];
        let mut before: BTreeSet<(String, String)> = BTreeSet::new();
        for &s in &walk.topological {
            let st = &graph.states[s];
            let mut seen = std::mem::take(&mut into[s]);
            for h in &st.extract {
                for g in &seen {
                    before.insert(((*g).clone(), h.clone()));
                }
                seen.insert(h);
            }
            for n in successors(st) {
                if let Some(&t) = walk.index.get(n) {
                    into[t].extend(seen.iter().copied());
                }
            }
        }
        for h in &order {
            if !emitted.contains(h) {
                return self.err(
                    d.span,
                    format!("header `{h}` is extracted but the deparser never emits it; the model's deparser emits every valid header"),
                );
            }
        }
        let misordered = emitted.iter().enumerate().any(|(i, a)| {
            emitted[i + 1..]
                .iter()
                .any(|b| before.contains(&(b.clone(), a.clone())))
        });
        if misordered {
            return self.err(
                d.span,
                "the deparser emits headers in another order than the parser extracts them; the \
                 model's deparser emits them in parse order",
            );
        }
        Ok(())
    }

    /// Records the mirrors a deparser emits: `if (md.mirror_type == T) { m.emit(S); }`.
    pub(super) fn scan_mirrors(&mut self, d: &'a Decl, gress: Gress) -> R<()> {
        let c = self.ctl(d, gress)?;
        let DeclKind::Control { apply, .. } = &d.kind else {
            unreachable!()
        };
        for st in apply {
            if let Some(mut m) = self.mirror_idiom(&c, st)? {
                m.gress = gress;
                self.mirrors.push(m);
            }
        }
        Ok(())
    }

    /// The mirror type and session of a deparser statement that is the mirror idiom.
    pub(super) fn mirror_idiom(&mut self, c: &Ctl<'a>, st: &Stmt) -> R<Option<MirrorIdiom>> {
        let StmtKind::If(cond, then, els) = &st.kind else {
            return Ok(None);
        };
        let ExprKind::Binary(BinOp::Eq, x, t) = &cond.kind else {
            return Ok(None);
        };
        if !is_mirror_type(c, x) || !els.is_empty() || then.len() != 1 {
            return Ok(None);
        }
        let StmtKind::Call(e) = &then[0].kind else {
            return Ok(None);
        };
        let Some((obj, "emit", args)) = method_call(e) else {
            return Ok(None);
        };
        let is_mirror = obj.path().is_some_and(
            |o| matches!(c.locals.get(&o), Some(Local::Extern(_, k)) if k == "Mirror"),
        );
        if !is_mirror {
            return Ok(None);
        }
        let (t, _) = self.const_value(t, &c.locals)?;
        let (arg, header) = match args {
            [arg] => (arg, None),
            [arg, h] => {
                let ir = self.header_of(c, h)?;
                if self.instances.values().any(|i| i.ir == ir && i.builtin) {
                    return self.err(
                        h.span,
                        format!("the mirror header `{}` is one of t2sim's built-in headers; a mirror header is a header of the program's own (its mirror type is its place among them)", expr_text(h)),
                    );
                }
                (arg, Some((ir, h.span)))
            }
            _ => {
                return self.err(
                    e.span,
                    "`emit` of a Mirror takes the session, or the session and a header",
                )
            }
        };
        let session =
            match self.const_value(arg, &c.locals) {
                Ok((v, _)) => MirrorSession::Const(v as u64),
                Err(_) => {
                    let p = arg.path().unwrap_or_default();
                    let comps: Vec<&str> = p.split('.').collect();
                    match (c.params.get(comps[0]), comps.len()) {
                        (Some(ParamKind::Meta(sty)), 2) => {
                            MirrorSession::Meta(sty.clone(), comps[1].to_string())
                        }
                        _ => return self.err(
                            arg.span,
                            "the mirror session is a constant or a field of the metadata struct",
                        ),
                    }
                }
            };
        Ok(Some(MirrorIdiom {
            gress: c.gress,
            mirror_type: t,
            session,
            header,
        }))
    }
}

/// A parser graph's states reachable from `start`: in depth-first preorder (a select's
/// cases in order, then its default) and in topological order, with each state's index by
/// name.
pub(super) struct ParseWalk<'g> {
    pub preorder: Vec<usize>,
    pub topological: Vec<usize>,
    pub index: HashMap<&'g str, usize>,
}

/// The states a state goes to next: a select's cases in order, then its default.
fn successors(st: &ir::ParserState) -> Vec<&str> {
    match &st.transition {
        ir::Transition::Goto(n) => vec![n.as_str()],
        ir::Transition::Select { cases, default, .. } => cases
            .iter()
            .map(|c| c.next.as_str())
            .chain(std::iter::once(default.as_str()))
            .collect(),
    }
}

/// Walks `graph` from `start` once per state (names that are no state, `accept` and
/// `reject`, end a path), or gives the names of the states of a loop in the order it runs
/// them. Time and memory are linear in the graph, whatever the number of its paths.
pub(super) fn parse_walk(graph: &ir::ParserGraph) -> Result<ParseWalk<'_>, Vec<String>> {
    let index: HashMap<&str, usize> = graph
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let next: Vec<Vec<usize>> = graph
        .states
        .iter()
        .map(|st| {
            successors(st)
                .into_iter()
                .filter_map(|n| index.get(n).copied())
                .collect()
        })
        .collect();
    // 0: not seen, 1: on the walk's stack, 2: done.
    let mut mark = vec![0u8; graph.states.len()];
    let mut preorder = Vec::new();
    let mut postorder = Vec::new();
    let Some(&start) = index.get(ir::START) else {
        return Ok(ParseWalk {
            preorder,
            topological: postorder,
            index,
        });
    };
    let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
    mark[start] = 1;
    preorder.push(start);
    while let Some(&mut (s, ref mut i)) = stack.last_mut() {
        if let Some(&t) = next[s].get(*i) {
            *i += 1;
            match mark[t] {
                0 => {
                    mark[t] = 1;
                    preorder.push(t);
                    stack.push((t, 0));
                }
                1 => {
                    let from = stack.iter().position(|&(x, _)| x == t).unwrap_or(0);
                    let mut cycle: Vec<String> = stack[from..]
                        .iter()
                        .map(|&(x, _)| graph.states[x].name.clone())
                        .collect();
                    cycle.push(graph.states[t].name.clone());
                    return Err(cycle);
                }
                _ => {}
            }
        } else {
            mark[s] = 2;
            postorder.push(s);
            stack.pop();
        }
    }
    postorder.reverse();
    Ok(ParseWalk {
        preorder,
        topological: postorder,
        index,
    })
}
