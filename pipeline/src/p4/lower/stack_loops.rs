//! A header stack's `.next` and `.last` in the parser, unrolled: the state machine visits a
//! state that extracts `hdr.s.next` once per element, so each such state is copied once per
//! stack pointer it can be reached with (the states after it too, as far as they lead back
//! to one), and in each copy `hdr.s.next` is the fixed index `hdr.s[k]` and `hdr.s.last` is
//! `hdr.s[k - 1]`, which the fixed-index unrolling (`stacks.rs`) then names `s_k`. A parser
//! loop thus becomes a chain of states the model's parser graph can hold:
//!
//! ```p4
//! state parse_vlan {
//!     pkt.extract(hdr.vlan.next);
//!     transition select(hdr.vlan.last.ether_type) { 0x8100: parse_vlan; default: parse_ipv4; }
//! }
//! ```
//!
//! becomes `parse_vlan` (extracting `vlan_0`, going to `parse_vlan_1` on 0x8100) and
//! `parse_vlan_1` (extracting `vlan_1`, going to `reject` on 0x8100). Extracting `.next` of a
//! full stack is P4's `error.StackOutOfBounds`, a parser error: a transition to a copy that
//! would do so goes to `reject` instead (the model's parser drops the packet, as for every
//! parser error); `.last` before any element was extracted is the same error. The copy reached with every stack empty keeps the
//! state's name, the others are `<state>_<k>` (one `k` per stack, stacks by name).

use super::*;

/// Stack pointers: elements extracted so far, per stack (in the order of `stacks`).
type Ptrs = Vec<u32>;

/// Unrolls the parser loops over `stacks` (name, size) in every parser of `decls`.
pub(super) fn unroll_loops(src: &Source, decls: &mut [Decl], stacks: &[(String, u32)]) -> R<()> {
    for d in decls {
        let DeclKind::Parser { states, .. } = &mut d.kind else {
            continue;
        };
        let u = Unroller { src, stacks };
        if let Some(out) = u.parser(states)? {
            *states = out;
        }
    }
    Ok(())
}

struct Unroller<'s> {
    src: &'s Source,
    stacks: &'s [(String, u32)],
}

/// What one copy of a state does to the stack pointers: the pointers after its body, or
/// the place of the statement past which it cannot go (a stack overrun).
struct StateCopy {
    state: State,
    after: Option<Ptrs>,
}

impl Unroller<'_> {
    /// The parser's states with its loops unrolled, or `None` when no state uses `.next`
    /// or `.last`.
    fn parser(&self, states: &[State]) -> R<Option<Vec<State>>> {
        let uses: Vec<bool> = states.iter().map(|s| self.uses_pointer(s)).collect();
        if !uses.iter().any(|&u| u) {
            return Ok(None);
        }
        // States that reach one that uses a pointer depend on the pointers too.
        let index = |n: &str| states.iter().position(|s| s.name == n);
        let mut depends = uses.clone();
        loop {
            let mut changed = false;
            for (i, s) in states.iter().enumerate() {
                if !depends[i]
                    && targets(s)
                        .iter()
                        .any(|t| index(t).is_some_and(|j| depends[j]))
                {
                    depends[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let zero: Ptrs = vec![0; self.stacks.len()];
        let mut copies: BTreeMap<(usize, Ptrs), State> = BTreeMap::new();
        let mut todo: Vec<(usize, Ptrs)> = Vec::new();
        if let Some(start) = index(ir::START) {
            todo.push((start, zero.clone()));
        }
        // States not reachable from `start` are kept as written (the IR's check names them).
        for (i, _) in states.iter().enumerate() {
            if !depends[i] {
                todo.push((i, zero.clone()));
            }
        }
        while let Some((i, ptrs)) = todo.pop() {
            let key = (
                i,
                if depends[i] {
                    ptrs.clone()
                } else {
                    zero.clone()
                },
            );
            if copies.contains_key(&key) {
                continue;
            }
            let c = self.copy(&states[i], &ptrs, uses[i])?;
            let mut state = c.state;
            if let Some(after) = &c.after {
                let mut err = None;
                for_each_target(&mut state, |t| {
                    let Some(j) = index(t) else { return };
                    if !depends[j] {
                        todo.push((j, zero.clone()));
                        return;
                    }
                    // A copy that overruns a stack rejects the packet whatever it did
                    // before: go to `reject` at once (one state and TCAM row fewer).
                    match self.copy(&states[j], after, uses[j]) {
                        Ok(c) if c.after.is_none() => *t = ir::REJECT.to_string(),
                        Ok(_) => {
                            *t = self.copy_name(&states[j].name, after);
                            todo.push((j, after.clone()));
                        }
                        Err(e) => err = err.take().or(Some(e)),
                    }
                });
                if let Some(e) = err {
                    return Err(e);
                }
            }
            copies.insert(key, state);
        }
        // Declaration order, each state's copies by pointer.
        let mut out = Vec::new();
        for (i, _) in states.iter().enumerate() {
            out.extend(
                copies
                    .iter()
                    .filter(|((j, _), _)| *j == i)
                    .map(|(_, s)| s.clone()),
            );
        }
        let mut names = BTreeSet::new();
        for s in &out {
            if !names.insert(s.name.clone()) {
                return Err(self.src.error(
                    s.span,
                    format!(
                        "unrolling the parser loop over a header stack makes a second state `{}`; rename the state that has that name",
                        s.name
                    ),
                ));
            }
        }
        Ok(Some(out))
    }

    /// The name of state `name`'s copy reached with `ptrs`.
    fn copy_name(&self, name: &str, ptrs: &[u32]) -> String {
        if ptrs.iter().all(|&p| p == 0) {
            return name.to_string();
        }
        let k: Vec<String> = ptrs.iter().map(u32::to_string).collect();
        format!("{name}_{}", k.join("_"))
    }

    /// State `s` reached with `ptrs`: `.next` and `.last` replaced by fixed indices.
    fn copy(&self, s: &State, ptrs: &[u32], uses: bool) -> R<StateCopy> {
        let mut state = s.clone();
        state.name = if uses || ptrs.iter().any(|&p| p != 0) {
            self.copy_name(&s.name, ptrs)
        } else {
            s.name.clone()
        };
        let mut ptrs = ptrs.to_vec();
        let mut body = Vec::new();
        for st in &s.body {
            let mut st = st.clone();
            match self.stmt(&mut st, &mut ptrs)? {
                true => body.push(st),
                false => {
                    // The stack is full (or `.last` of an empty one): a parser error.
                    state.body = body;
                    state.transition = Some(Transition::Goto(ir::REJECT.to_string(), st.span));
                    return Ok(StateCopy { state, after: None });
                }
            }
        }
        state.body = body;
        if let Some(t) = &mut state.transition {
            let ok = match t {
                Transition::Goto(..) => true,
                Transition::Select { keys, .. } => {
                    let mut ok = true;
                    for k in keys {
                        ok &= self.expr(k, &ptrs, false)?;
                    }
                    ok
                }
            };
            if !ok {
                let span = s.transition.as_ref().map_or(s.span, transition_span);
                state.transition = Some(Transition::Goto(ir::REJECT.to_string(), span));
                return Ok(StateCopy { state, after: None });
            }
        }
        Ok(StateCopy {
            state,
            after: Some(ptrs),
        })
    }

    /// Rewrites one body statement for `ptrs`, moving them past a `.next` extract; `false`
    /// when it overruns a stack.
    fn stmt(&self, st: &mut Stmt, ptrs: &mut [u32]) -> R<bool> {
        let StmtKind::Call(e) = &mut st.kind else {
            return self.no_pointer_in(st);
        };
        if let ExprKind::Call { func, args, .. } = &mut e.kind {
            let is_extract = matches!(&func.kind, ExprKind::Member(_, m) if m == "extract");
            if is_extract && args.len() == 1 {
                if let Some(k) = self.pointer_of(&args[0], "next") {
                    let size = self.stacks[k].1;
                    if ptrs[k] == size {
                        return Ok(false);
                    }
                    args[0] = self.indexed(&args[0], ptrs[k]);
                    ptrs[k] += 1;
                    return Ok(true);
                }
            }
        }
        self.expr(e, ptrs, true)
    }

    /// Refuses `.next` / `.last` in a statement other than an extract or a select key.
    fn no_pointer_in(&self, st: &Stmt) -> R<bool> {
        let mut found = None;
        visit_stmt(st, &mut |e| {
            if found.is_none()
                && self
                    .pointer_of(e, "next")
                    .or(self.pointer_of(e, "last"))
                    .is_some()
            {
                found = Some(e.span);
            }
        });
        match found {
            Some(span) => Err(self.src.error(
                span,
                "a header stack's `.next` is extracted (`pkt.extract(hdr.s.next)`) and `.last` read in select keys or extract arguments here",
            )),
            None => Ok(true),
        }
    }

    /// Replaces `.last` in `e` by the fixed index; `false` when a stack is empty. A
    /// `.next` outside an extract is refused (`in_call`: `e` is a call statement).
    fn expr(&self, e: &mut Expr, ptrs: &[u32], in_call: bool) -> R<bool> {
        if let Some(k) = self.pointer_of(e, "last") {
            if ptrs[k] == 0 {
                return Ok(false);
            }
            *e = self.indexed(e, ptrs[k] - 1);
            return Ok(true);
        }
        if self.pointer_of(e, "next").is_some() {
            return Err(self.src.error(
                e.span,
                format!(
                    "a header stack's `.next` is {} only as the argument of `extract`",
                    if in_call { "used" } else { "read" }
                ),
            ));
        }
        let mut ok = true;
        match &mut e.kind {
            ExprKind::Member(b, _) | ExprKind::Unary(_, b) | ExprKind::Cast(_, b) => {
                ok &= self.expr(b, ptrs, in_call)?
            }
            ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
                ok &= self.expr(a, ptrs, in_call)?;
                ok &= self.expr(b, ptrs, in_call)?;
            }
            ExprKind::Slice(a, b, c) | ExprKind::Ternary(a, b, c) => {
                ok &= self.expr(a, ptrs, in_call)?;
                ok &= self.expr(b, ptrs, in_call)?;
                ok &= self.expr(c, ptrs, in_call)?;
            }
            ExprKind::Call { func, args, .. } => {
                ok &= self.expr(func, ptrs, in_call)?;
                for a in args {
                    ok &= self.expr(a, ptrs, in_call)?;
                }
            }
            ExprKind::List(es) => {
                for a in es {
                    ok &= self.expr(a, ptrs, in_call)?;
                }
            }
            _ => {}
        }
        Ok(ok)
    }

    /// The stack `e` is `.m` of (`hdr.s.next` for `m` = `next`), as its place in `stacks`.
    fn pointer_of(&self, e: &Expr, m: &str) -> Option<usize> {
        let ExprKind::Member(base, member) = &e.kind else {
            return None;
        };
        if member != m {
            return None;
        }
        let ExprKind::Member(_, s) = &base.kind else {
            return None;
        };
        self.stacks.iter().position(|(n, _)| n == s)
    }

    /// `hdr.s.next` (or `.last`) as `hdr.s[k]`.
    fn indexed(&self, e: &Expr, k: u32) -> Expr {
        let ExprKind::Member(base, _) = &e.kind else {
            unreachable!("pointer_of matched a member")
        };
        Expr {
            kind: ExprKind::Index(
                base.clone(),
                Box::new(Expr {
                    kind: ExprKind::Int {
                        value: k as u128,
                        width: None,
                    },
                    span: e.span,
                }),
            ),
            span: e.span,
        }
    }

    /// Whether state `s` uses a stack's `.next` or `.last`.
    fn uses_pointer(&self, s: &State) -> bool {
        let mut found = false;
        let mut look = |e: &Expr| {
            found |= self.pointer_of(e, "next").is_some() || self.pointer_of(e, "last").is_some();
        };
        for st in &s.body {
            visit_stmt(st, &mut look);
        }
        if let Some(Transition::Select { keys, .. }) = &s.transition {
            for k in keys {
                visit_expr(k, &mut look);
            }
        }
        found
    }
}

fn transition_span(t: &Transition) -> Span {
    match t {
        Transition::Goto(_, s) | Transition::Select { span: s, .. } => *s,
    }
}

/// The states `s` may go to.
fn targets(s: &State) -> Vec<String> {
    match &s.transition {
        None => Vec::new(),
        Some(Transition::Goto(n, _)) => vec![n.clone()],
        Some(Transition::Select { cases, .. }) => cases.iter().map(|c| c.next.clone()).collect(),
    }
}

fn for_each_target(s: &mut State, mut f: impl FnMut(&mut String)) {
    match &mut s.transition {
        None => {}
        Some(Transition::Goto(n, _)) => f(n),
        Some(Transition::Select { cases, .. }) => cases.iter_mut().for_each(|c| f(&mut c.next)),
    }
}

fn visit_stmt(st: &Stmt, f: &mut impl FnMut(&Expr)) {
    match &st.kind {
        StmtKind::Assign(a, b) => {
            visit_expr(a, f);
            visit_expr(b, f);
        }
        StmtKind::Call(e) | StmtKind::Return(Some(e)) => visit_expr(e, f),
        StmtKind::If(c, t, e) => {
            visit_expr(c, f);
            t.iter().chain(e.iter()).for_each(|s| visit_stmt(s, f));
        }
        StmtKind::Block(b) => b.iter().for_each(|s| visit_stmt(s, f)),
        _ => {}
    }
}

fn visit_expr(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Member(b, _) | ExprKind::Unary(_, b) | ExprKind::Cast(_, b) => visit_expr(b, f),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            visit_expr(a, f);
            visit_expr(b, f);
        }
        ExprKind::Slice(a, b, c) | ExprKind::Ternary(a, b, c) => {
            visit_expr(a, f);
            visit_expr(b, f);
            visit_expr(c, f);
        }
        ExprKind::Call { func, args, .. } => {
            visit_expr(func, f);
            args.iter().for_each(|a| visit_expr(a, f));
        }
        ExprKind::List(es) => es.iter().for_each(|a| visit_expr(a, f)),
        _ => {}
    }
}
