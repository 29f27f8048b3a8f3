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
        Ok(out)
    }

    /// Refuses what follows an `exit` on every path (`exited`: the statements that did).
    fn dead_after(&self, exited: &[ir::Stmt], rest: &[ir::Stmt]) -> R<()> {
        let Some(table) = first_table(rest) else {
            return Ok(());
        };
        let span = first_mark(exited).map_or(self.main_span, |k| self.exits[k]);
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
                ir::Stmt::Apply(t) => out.push(ir::Stmt::Apply(t)),
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
                                out.push(ir::Stmt::if_(
                                    ir::Condition::new(
                                        &exited_field(c),
                                        Cmp::Eq,
                                        Operand::Const(0),
                                    ),
                                    guarded,
                                    Vec::new(),
                                ));
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
            self.meta_used.insert(field.clone(), 1);
            self.meta_order.push(field.clone());
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

/// The place in [`Lowerer::exits`] of the first exit marker in `body`.
fn first_mark(body: &[ir::Stmt]) -> Option<usize> {
    body.iter().find_map(|s| match s {
        ir::Stmt::Apply(t) => t.strip_prefix(EXIT_MARK).and_then(|k| k.parse().ok()),
        ir::Stmt::If {
            then, otherwise, ..
        } => first_mark(then).or_else(|| first_mark(otherwise)),
    })
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
