//! `exit` in a control's apply block.
//!
//! The IR's controls have no early exit, so an `exit` is lowered by moving or guarding what
//! would run after it. The apply block is first lowered with a marker where each `exit`
//! stands; then, statement by statement:
//! - after an `if` one branch of which always exits and the other never does, the rest of
//!   the block moves into the branch that does not exit (no cost: the gateway that was there
//!   already decides);
//! - after a statement that exits on some paths only, the rest runs under a gateway on a
//!   1-bit metadata field of the control, `p4.<Control>.exited`, which a keyless table
//!   (`tbl_exit_L<line>`, action `exit_<Control>`) sets where such an `exit` stands (a PHV
//!   bit, a gateway and a table per `exit`; bf-p4c gives every table after an exit the
//!   condition instead);
//! - an `exit` with nothing after it costs nothing; a table after an `exit` on every path
//!   would never be applied, which is an error at that `exit` (the IR places every table
//!   it declares).
//!
//! An `exit` in an action (the last statement of its body) makes the action set the same
//! flag; the table that runs it then exits on some paths (every path when every action it
//! can run exits, as for a keyless table), and what follows it is guarded, moved or refused
//! exactly as after an `if` that exits.

use super::*;

/// The marker a lowered `exit` leaves in the IR until [`Lowerer::resolve_exits`] replaces
/// it (`$exit#K`, K its place in [`Lowerer::exits`]).
const EXIT_MARK: &str = "$exit#";

/// Whether a lowered statement list ends the control on no path, every path or some.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exits {
    Never,
    Always,
    Maybe,
}

impl<'a> Lowerer<'a> {
    /// The marker of an `exit` at `span`.
    pub(super) fn exit_mark(&mut self, span: Span) -> ir::Stmt {
        self.exits.push(span);
        ir::Stmt::Apply(format!("{EXIT_MARK}{}", self.exits.len() - 1))
    }

    /// The lowered apply block of control `c` with its `exit` markers resolved.
    pub(super) fn resolve_exits(&mut self, c: &Ctl<'a>, body: Vec<ir::Stmt>) -> R<Vec<ir::Stmt>> {
        let (mut out, _) = self.resolve_seq(c, body)?;
        // Nothing follows the control: the exits left are free.
        strip_marks(&mut out);
        self.drop_unread_flag(c, &out);
        Ok(out)
    }

    /// When no gateway of the control reads its exit flag (every `exit` in an action had
    /// nothing after it), the actions do not set it and it takes no PHV bit.
    fn drop_unread_flag(&mut self, c: &Ctl<'a>, body: &[ir::Stmt]) {
        let field = exited_field(c);
        let set = Primitive::set(&field, Operand::Const(1));
        let flag_table = format!("exit_{}", c.name);
        if reads(body, &field) || self.prog.actions.iter().any(|a| a.name == flag_table) {
            return;
        }
        for a in &mut self.prog.actions {
            a.primitives.retain(|p| *p != set);
        }
        self.meta_used.remove(&field);
        self.meta_order.retain(|m| *m != field);
    }

    /// The primitive an `exit` in action `action` of control `c` becomes: setting the
    /// control's exit flag, which the tables running the action leave for what follows.
    pub(super) fn action_exit(&mut self, c: &Ctl<'a>, action: &str, span: Span) -> Primitive {
        let field = exited_field(c);
        self.declare_exit_flag(&field);
        self.action_exits
            .insert(action.to_string(), (c.name.clone(), span));
        Primitive::set(&field, Operand::Const(1))
    }

    /// Refuses a top-level action that exits in a second control: the IR lowers such an
    /// action once, so it sets the exit flag of the first control only.
    pub(super) fn check_action_exit_control(&self, c: &Ctl<'a>, ir: &str, span: Span) -> R<()> {
        match self.action_exits.get(ir) {
            Some((first, _)) if *first != c.name => self.err(
                span,
                format!(
                    "action `{ir}` runs `exit` and is already used in control `{first}`: an \
                     action that exits ends one control, so declare it in each control that \
                     uses it"
                ),
            ),
            _ => Ok(()),
        }
    }

    fn declare_exit_flag(&mut self, field: &str) {
        if !self.meta_used.contains_key(field) {
            self.meta_used.insert(field.to_string(), 1);
            self.meta_order.push(field.to_string());
        }
    }

    /// Whether table `t` ends the control: `Never` when none of the actions it can run
    /// exits, `Always` when all do, `Maybe` otherwise.
    fn table_exits(&self, t: &str) -> Exits {
        // Most programs have no exiting action: no need to look the table up (a search
        // per applied table would make 100,000 tables quadratic).
        if self.action_exits.is_empty() {
            return Exits::Never;
        }
        let Some(table) = self.prog.tables.iter().find(|x| x.name == t) else {
            return Exits::Never;
        };
        // Entries and the default (which the control plane may set to any of them) run
        // the table's actions; a keyless table of an apply block's call has one.
        let mut runs: Vec<&str> = table.actions.iter().map(String::as_str).collect();
        runs.push(&table.default_action.action);
        let exiting = runs
            .iter()
            .filter(|a| self.action_exit_span(a).is_some())
            .count();
        match exiting {
            0 => Exits::Never,
            n if n == runs.len() => Exits::Always,
            _ => Exits::Maybe,
        }
    }

    /// Where the `exit` of IR action `a` stands, if it has one (a copy recording a table's
    /// hit or action, `a@t`, exits as `a` does).
    fn action_exit_span(&self, a: &str) -> Option<Span> {
        let base = a.split('@').next().unwrap_or(a);
        self.action_exits.get(base).map(|x| x.1)
    }

    /// The first `exit` in `body`: a marker, or an action a table of it runs.
    fn first_exit(&self, body: &[ir::Stmt]) -> Option<Span> {
        body.iter().find_map(|s| match s {
            ir::Stmt::Apply(t) => match t.strip_prefix(EXIT_MARK) {
                Some(k) => k.parse::<usize>().ok().map(|k| self.exits[k]),
                None => {
                    let table = self.prog.tables.iter().find(|x| &x.name == t)?;
                    table
                        .actions
                        .iter()
                        .chain(std::iter::once(&table.default_action.action))
                        .find_map(|a| self.action_exit_span(a))
                }
            },
            ir::Stmt::If {
                then, otherwise, ..
            } => self.first_exit(then).or_else(|| self.first_exit(otherwise)),
        })
    }

    /// Refuses what follows an `exit` on every path (`exited`: the statements that did).
    fn dead_after(&self, exited: &[ir::Stmt], rest: &[ir::Stmt]) -> R<()> {
        let Some(table) = first_table(rest) else {
            return Ok(());
        };
        let span = self.first_exit(exited).unwrap_or(self.main_span);
        self.err(
            span,
            format!(
                "`exit` here leaves the control on every path, so table `{table}` after it is \
                 never applied (the IR places every table it declares)"
            ),
        )
    }

    fn resolve_seq(&mut self, c: &Ctl<'a>, body: Vec<ir::Stmt>) -> R<(Vec<ir::Stmt>, Exits)> {
        let mut out = Vec::new();
        let mut rest = body.into_iter();
        while let Some(s) = rest.next() {
            match s {
                ir::Stmt::Apply(t) if t.starts_with(EXIT_MARK) => {
                    // What follows on this path never runs.
                    out.push(ir::Stmt::Apply(t));
                    self.dead_after(&out, &rest.collect::<Vec<_>>())?;
                    return Ok((out, Exits::Always));
                }
                ir::Stmt::Apply(t) => {
                    let status = self.table_exits(&t);
                    out.push(ir::Stmt::Apply(t));
                    match status {
                        Exits::Never => {}
                        Exits::Always => {
                            self.dead_after(&out, &rest.collect::<Vec<_>>())?;
                            return Ok((out, Exits::Always));
                        }
                        Exits::Maybe => {
                            // The table's exiting actions set the flag: the rest runs
                            // unless it is set.
                            let (guarded, _) = self.resolve_seq(c, rest.collect())?;
                            if !guarded.is_empty() {
                                out.push(unless_exited(c, guarded));
                            }
                            return Ok((out, Exits::Maybe));
                        }
                    }
                }
                ir::Stmt::If {
                    name,
                    cond,
                    then,
                    otherwise,
                } => {
                    let (mut then, te) = self.resolve_seq(c, then)?;
                    let (mut otherwise, oe) = self.resolve_seq(c, otherwise)?;
                    let after: Vec<ir::Stmt> = rest.by_ref().collect();
                    let status = match (te, oe) {
                        (Exits::Never, Exits::Never) => Exits::Never,
                        (Exits::Always, Exits::Always) => Exits::Always,
                        _ if after.is_empty() => Exits::Maybe,
                        (Exits::Always, Exits::Never) | (Exits::Never, Exits::Always) => {
                            let (moved, me) = self.resolve_seq(c, after)?;
                            let stays = if te == Exits::Never {
                                &mut then
                            } else {
                                &mut otherwise
                            };
                            stays.extend(moved);
                            out.push(ir::Stmt::If {
                                name,
                                cond,
                                then,
                                otherwise,
                            });
                            let status = if me == Exits::Always {
                                Exits::Always
                            } else {
                                Exits::Maybe
                            };
                            return Ok((out, status));
                        }
                        _ => {
                            // Some paths exit: they set the flag, and the rest runs unless
                            // it is set.
                            self.flag_marks(c, &mut then);
                            self.flag_marks(c, &mut otherwise);
                            out.push(ir::Stmt::If {
                                name,
                                cond,
                                then,
                                otherwise,
                            });
                            let (guarded, _) = self.resolve_seq(c, after)?;
                            if !guarded.is_empty() {
                                out.push(unless_exited(c, guarded));
                            }
                            return Ok((out, Exits::Maybe));
                        }
                    };
                    out.push(ir::Stmt::If {
                        name,
                        cond,
                        then,
                        otherwise,
                    });
                    if status == Exits::Always {
                        self.dead_after(&out, &after)?;
                        return Ok((out, Exits::Always));
                    }
                    if status == Exits::Maybe {
                        return Ok((out, Exits::Maybe));
                    }
                    rest = after.into_iter();
                }
            }
        }
        Ok((out, Exits::Never))
    }

    /// Replaces the exit markers in `body` by tables that set the control's exit flag.
    fn flag_marks(&mut self, c: &Ctl<'a>, body: &mut [ir::Stmt]) {
        for s in body {
            match s {
                ir::Stmt::Apply(t) if t.starts_with(EXIT_MARK) => {
                    let k: usize = t[EXIT_MARK.len()..].parse().expect("our marker");
                    *t = self.exit_table(c, self.exits[k]);
                }
                ir::Stmt::Apply(_) => {}
                ir::Stmt::If {
                    then, otherwise, ..
                } => {
                    self.flag_marks(c, then);
                    self.flag_marks(c, otherwise);
                }
            }
        }
    }

    /// A keyless table, for the `exit` at `span`, running the action that sets the exit flag.
    fn exit_table(&mut self, c: &Ctl<'a>, span: Span) -> String {
        let field = exited_field(c);
        let action = format!("exit_{}", c.name);
        if !self.prog.actions.iter().any(|a| a.name == action) {
            self.declare_exit_flag(&field);
            self.prog.actions.push(ir::Action {
                name: action.clone(),
                params: Vec::new(),
                primitives: vec![Primitive::set(&field, Operand::Const(1))],
            });
            self.spans.push((action.clone(), span));
        }
        let mut tname = format!("tbl_exit_L{}", span.line);
        let mut k = 1;
        while self.prog.tables.iter().any(|t| t.name == tname) {
            k += 1;
            tname = format!("tbl_exit_L{}_{k}", span.line);
        }
        self.push_keyless(&tname, &action, &[], span);
        tname
    }
}

/// The 1-bit field that says control `c` has run an `exit`.
fn exited_field(c: &Ctl<'_>) -> String {
    format!("p4.{}.exited", c.name)
}

/// Whether a gateway of `body` tests `field`.
fn reads(body: &[ir::Stmt], field: &str) -> bool {
    body.iter().any(|s| match s {
        ir::Stmt::Apply(_) => false,
        ir::Stmt::If {
            cond,
            then,
            otherwise,
            ..
        } => cond.field == field || reads(then, field) || reads(otherwise, field),
    })
}

/// `body` under a gateway that runs it unless control `c` has exited.
fn unless_exited(c: &Ctl<'_>, body: Vec<ir::Stmt>) -> ir::Stmt {
    ir::Stmt::if_(
        ir::Condition::new(&exited_field(c), Cmp::Eq, Operand::Const(0)),
        body,
        Vec::new(),
    )
}

/// The first table `body` applies.
fn first_table(body: &[ir::Stmt]) -> Option<&str> {
    body.iter().find_map(|s| match s {
        ir::Stmt::Apply(t) if t.starts_with(EXIT_MARK) => None,
        ir::Stmt::Apply(t) => Some(t.as_str()),
        ir::Stmt::If {
            then, otherwise, ..
        } => first_table(then).or_else(|| first_table(otherwise)),
    })
}

/// Drops the exit markers left (exits with nothing after them).
fn strip_marks(body: &mut Vec<ir::Stmt>) {
    body.retain(|s| !matches!(s, ir::Stmt::Apply(t) if t.starts_with(EXIT_MARK)));
    for s in body {
        if let ir::Stmt::If {
            then, otherwise, ..
        } = s
        {
            strip_marks(then);
            strip_marks(otherwise);
        }
    }
}
