//! The deparser: emits checked against the parser's headers, and TNA's mirror idiom.

use super::*;

impl<'a> Lowerer<'a> {
    /// Reads a deparser: its checksum updates become the program's (the built-in IPv4
    /// header's is the one the model's deparser always recomputes), and its emits the order
    /// the headers leave in. Gives that order when it is not every header `graph` extracts,
    /// in the order it extracts them (`ir::ParserGraph::emit`): it emits them in another
    /// order, leaves one out, or emits one that the program makes valid and neither parser
    /// extracts (`other` is the other gress's graph).
    pub(super) fn check_deparser(
        &mut self,
        d: &'a Decl,
        graph: &ir::ParserGraph,
        other: &ir::ParserGraph,
        gress: Gress,
    ) -> R<Option<Vec<String>>> {
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
                        // Emitting a header is no use of it (see `used_headers`).
                        (Some(ParamKind::Headers(_)), 2) => {
                            emitted.push(self.header_named(&c, arg)?)
                        }
                        _ => {
                            return self.err(
                                arg.span,
                                "`emit` takes the headers struct or one of its headers",
                            )
                        }
                    }
                }
                StmtKind::Assign(..) | StmtKind::If(..) => {
                    let Some(update) = self.deparser_checksum(&c, st)? else {
                        return self.err(
                            st.span,
                            "a deparser computes only checksums (`h.csum = ck.update({...})`, \
                             alone or under `if` on a 1-bit field or `isValid()`)",
                        );
                    };
                    // The built-in IPv4 header's checksum is recomputed by the model's
                    // deparser whenever the header is emitted.
                    let builtin_ipv4 = matches!(&st.kind, StmtKind::Assign(..))
                        && update.dst == "ipv4.hdr_checksum";
                    if !builtin_ipv4 {
                        self.prog.checksum_updates.push(update);
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
        // A header emitted twice goes out where it is first emitted.
        let mut once: Vec<String> = Vec::new();
        for h in emitted {
            if !once.contains(&h) {
                once.push(h);
            }
        }
        let misordered = once.iter().enumerate().any(|(i, a)| {
            once[i + 1..]
                .iter()
                .any(|b| before.contains(&(b.clone(), a.clone())))
        });
        let left_out = order.iter().any(|h| !once.contains(h));
        let made_valid = once.iter().any(|h| {
            !order.contains(h)
                && self.used_headers.contains(h)
                && !other.states.iter().any(|s| s.extract.contains(h))
        });
        Ok((misordered || left_out || made_valid).then_some(once))
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
