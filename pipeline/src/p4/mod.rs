//! A P4-16 front end for Tofino2 (T2NA) and Tofino (TNA) programs: preprocess with the
//! system C preprocessor as p4c does, lex, parse into an AST with source positions, then
//! type-check and lower onto the program IR (`crate::program::ir`), so that placement, the
//! report and the chip run a P4 program exactly as they run a JSON one.
//!
//! The language accepted is the subset Tofino programs use that the IR can express; whatever
//! the IR or the modelled chip cannot do is refused with an error at `file:line:col` naming
//! the construct, never dropped. `docs/p4.md` lists what is supported and refused, and how
//! the lowering maps P4 onto tables, gateways, stateful ALUs and PHV fields.

pub mod ast;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod passes;
pub mod preprocess;
pub mod visit;

use crate::program::ir::Program;
use std::fmt;
use std::path::{Path, PathBuf};

/// An error in a P4 program (or in preprocessing it), at a place in the original source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct P4Error {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for P4Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

impl std::error::Error for P4Error {}

/// Preprocessor options: `-I DIR` and `-D NAME[=VALUE]`, as p4c passes them to `cpp`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub include_dirs: Vec<PathBuf>,
    pub defines: Vec<String>,
}

/// The directory of our own architecture files (`core.p4`, `t2na.p4`, `tna.p4`).
pub fn p4include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("p4include")
}

/// A compiled P4 program: the IR and the control-plane names that reach into it.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub program: Program,
    pub tables: Vec<lower::TableInfo>,
    pub actions: Vec<lower::ActionInfo>,
    pub registers: Vec<(String, String)>,
    /// `Counter`s and `DirectCounter`s, each held in a register array.
    pub counters: Vec<lower::CounterInfo>,
    /// The ingress parser's value sets: (name, bits of a value), as in the IR graph's
    /// `value_sets`.
    pub value_sets: Vec<(String, u32)>,
}

impl Compiled {
    /// The value set a control plane names `name` (`IngressParser.vs`,
    /// `pipe.IngressParser.vs` or, when unambiguous, `vs`): its name and bits.
    pub fn value_set(&self, name: &str) -> Option<&(String, u32)> {
        let name = name.strip_prefix("pipe.").unwrap_or(name);
        let all = &self.value_sets;
        all.iter().find(|v| v.0 == name).or_else(|| {
            let mut m = all.iter().filter(|v| v.0.rsplit('.').next() == Some(name));
            match (m.next(), m.next()) {
                (Some(v), None) => Some(v),
                _ => None,
            }
        })
    }

    /// The place in the program's `digests` of the digest a control plane names `name`
    /// (`IngressDeparser.learn`, `pipe.IngressDeparser.learn` or, when unambiguous, `learn`).
    pub fn digest(&self, name: &str) -> Option<usize> {
        let name = name.strip_prefix("pipe.").unwrap_or(name);
        let all = &self.program.digests;
        all.iter().position(|d| d.name == name).or_else(|| {
            let mut m = (0..all.len()).filter(|&i| all[i].name.rsplit('.').next() == Some(name));
            match (m.next(), m.next()) {
                (Some(i), None) => Some(i),
                _ => None,
            }
        })
    }

    /// The table a control plane names `name` (`Ingress.t`, `pipe.Ingress.t` or, when
    /// unambiguous, `t`).
    pub fn table(&self, name: &str) -> Option<&lower::TableInfo> {
        let name = name.strip_prefix("pipe.").unwrap_or(name);
        self.tables.iter().find(|t| t.p4_name == name).or_else(|| {
            let mut m = self.tables.iter().filter(|t| t.local_name == name);
            match (m.next(), m.next()) {
                (Some(t), None) => Some(t),
                _ => None,
            }
        })
    }

    /// The counter a control plane names `name` (`Ingress.c`, `pipe.Ingress.c` or, when
    /// unambiguous, `c`).
    pub fn counter(&self, name: &str) -> Option<&lower::CounterInfo> {
        let name = name.strip_prefix("pipe.").unwrap_or(name);
        self.counters
            .iter()
            .find(|t| t.p4_name == name)
            .or_else(|| {
                let mut m = self.counters.iter().filter(|t| t.local_name == name);
                match (m.next(), m.next()) {
                    (Some(t), None) => Some(t),
                    _ => None,
                }
            })
    }

    /// The IR register array a control plane names `name` (as [`Compiled::counter`] names).
    pub fn register(&self, name: &str) -> Option<&str> {
        let name = name.strip_prefix("pipe.").unwrap_or(name);
        self.registers
            .iter()
            .find(|r| r.0 == name)
            .or_else(|| {
                let mut m = self
                    .registers
                    .iter()
                    .filter(|r| r.0.rsplit('.').next() == Some(name));
                match (m.next(), m.next()) {
                    (Some(r), None) => Some(r),
                    _ => None,
                }
            })
            .map(|r| r.1.as_str())
    }

    /// Whether IR action `action` takes a DirectCounter's entry index (the control plane
    /// appends the entry's place to its arguments).
    pub fn takes_entry_index(&self, action: &str) -> bool {
        self.program
            .actions
            .iter()
            .find(|a| a.name == action)
            .is_some_and(|a| {
                a.params
                    .last()
                    .is_some_and(|p| p.name == lower::ENTRY_INDEX_PARAM)
            })
    }

    /// The thread whose register arrays hold IR array `register`: egress when the egress
    /// control executes it, else ingress (whose arrays the ghost thread shares).
    pub fn register_gress(&self, register: &str) -> crate::Gress {
        let p = &self.program;
        let ras: Vec<&str> = p
            .register_actions
            .iter()
            .filter(|r| r.register == register)
            .map(|r| r.name.as_str())
            .collect();
        let mut tables = Vec::new();
        fn walk<'s>(body: &'s [crate::program::ir::Stmt], out: &mut Vec<&'s str>) {
            for s in body {
                match s {
                    crate::program::ir::Stmt::Apply(t) => out.push(t),
                    crate::program::ir::Stmt::If {
                        then, otherwise, ..
                    } => {
                        walk(then, out);
                        walk(otherwise, out);
                    }
                }
            }
        }
        walk(&p.egress, &mut tables);
        let in_egress = tables.iter().any(|t| {
            p.tables.iter().filter(|x| x.name == *t).any(|x| {
                x.actions.iter().any(|a| {
                    p.actions.iter().filter(|y| &y.name == a).any(|y| {
                        y.primitives.iter().any(|pr| {
                            matches!(pr, crate::program::ir::Primitive::Execute { register_action, .. }
                                if ras.contains(&register_action.as_str()))
                        })
                    })
                })
            })
        });
        if in_egress {
            crate::Gress::Egress
        } else {
            crate::Gress::Ingress
        }
    }
}

/// Preprocesses, parses and lowers the P4 program at `path`; the IR program is named after
/// the file's stem.
pub fn compile(path: &Path, opts: &Options) -> Result<Compiled, P4Error> {
    let pre = preprocess::run(path, opts)?;
    compile_source(&pre, &program_name(path))
}

/// The IR name of the program in `path`: its file stem.
pub fn program_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "p4".to_string())
}

/// Parses and lowers already preprocessed text.
pub fn compile_source(pre: &preprocess::Source, name: &str) -> Result<Compiled, P4Error> {
    let mut pre = pre.clone();
    let tokens = lexer::lex(&mut pre)?;
    let prog = parser::parse(&pre, &tokens)?;
    lower::lower(&pre, &prog, name)
}

/// Preprocesses, parses and lowers a program held in memory (`preprocess::run_held`):
/// `files` are `(path, text)` pairs, `main` the path of the program among them; the IR
/// program is named `name`. This is how a scheme's program, built into the binary, compiles
/// wherever the binary runs.
pub fn compile_held(
    main: &str,
    files: &[(&str, &str)],
    opts: &Options,
    name: &str,
) -> Result<Compiled, P4Error> {
    let pre = preprocess::run_held(main, files, opts)?;
    compile_source(&pre, name)
}
