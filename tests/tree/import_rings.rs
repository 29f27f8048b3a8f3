//! No two files of a crate use each other, directly or in a ring; and the pipeline's files use
//! only their own layer and those below it.
//!
//! For every crate of the workspace (and the `t2sim` binary, `src/main.rs` with `src/cli/`),
//! each source file is a module; a file *uses* another when its code names a path into it:
//! a `use` declaration or a path written in the code, from `crate::`, `super::` or `self::`,
//! or from a module the file declares. The test joins those into a graph of files and
//! fails on every ring in it (a strongly connected set of more than one file), naming the
//! files and, for each, the paths by which it reaches the next.
//!
//! A path is followed module by module as far as it names modules (`crate::run::exec::Foo`
//! reaches `run/exec.rs`), and on through the `pub use` re-exports of a module: it uses the
//! module it names and the one the re-export names (`crate::fields`, re-exported at the
//! crate root from `hw`, reaches `hw/fields.rs`; `crate::hw::params::PhvParams`, re-exported
//! there from `hw::phv`, reaches `hw/params.rs` and `hw/phv.rs`).
//!
//! What it does not see, and why that is enough here:
//! - A module naming its own descendants is not a use: that is how Rust declares modules,
//!   re-exports them and lists them (the scheme registry lists its schemes, whose folders use
//!   the registry's types). Every other edge counts, a child's use of its ancestors too.
//! - Code in test modules (`#[cfg(test)] mod tests` and the `tests.rs` files they load) is
//!   left out: tests may use what they test from anywhere.
//! - Macros are not expanded, `#[path]` attributes are not read (the crates have none; the
//!   test says so if one appears), and glob re-exports (`pub use x::*`) are not followed.
//! - Paths from the crate's other names (`t2_pipeline::` inside `t2-pipeline`) are not
//!   followed: the crates use `crate::`.

use crate::source::{lex, root};
use std::collections::{BTreeMap, BTreeSet};

/// A crate: its name and the root file of each of its targets.
struct Krate {
    name: &'static str,
    roots: &'static [&'static str],
}

const CRATES: &[Krate] = &[
    Krate {
        name: "t2-clock",
        roots: &["clock/src/lib.rs"],
    },
    Krate {
        name: "t2-waves",
        roots: &["waves/src/lib.rs"],
    },
    Krate {
        name: "t2-pipeline",
        roots: &["pipeline/src/lib.rs"],
    },
    Krate {
        name: "t2-tm",
        roots: &["tm/src/lib.rs"],
    },
    Krate {
        name: "t2-testbench",
        roots: &["testbench/src/lib.rs"],
    },
    Krate {
        name: "t2sim",
        roots: &["src/lib.rs"],
    },
    Krate {
        name: "t2sim (binary)",
        roots: &["src/main.rs"],
    },
];

/// Tokens of a file's code (comments and literals out, as [`lex`] leaves it): identifiers,
/// `::`, and single characters of punctuation.
fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let from = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(code[from..i].to_string());
        } else if b[i] == b':' && b.get(i + 1) == Some(&b':') {
            out.push("::".into());
            i += 2;
        } else if b[i].is_ascii_whitespace() {
            i += 1;
        } else {
            let ch = code[i..].chars().next().expect("in bounds");
            out.push(ch.to_string());
            i += ch.len_utf8();
        }
    }
    out
}

/// One file's module: its path in the crate, and where its children are looked for.
#[derive(Clone, Debug)]
struct Module {
    path: Vec<String>,
    file: String,
}

/// The modules of a crate target, from its root file: each declared `mod x;` found as
/// `x.rs` or `x/mod.rs` beside (or, for a non-root, below) the declaring file. Inline
/// modules (`mod x { ... }`) are part of their file.
fn modules(root_file: &str) -> Vec<Module> {
    let mut out = vec![Module {
        path: Vec::new(),
        file: root_file.to_string(),
    }];
    let mut k = 0;
    while k < out.len() {
        let m = out[k].clone();
        k += 1;
        let text = std::fs::read_to_string(root().join(&m.file)).unwrap();
        assert!(!text.contains("#[path"), "{}: #[path] is not read", m.file);
        let toks = tokens(&lex(&text).code);
        // Where this file's child modules live.
        let dir = {
            let f = &m.file;
            let stem = f.strip_suffix(".rs").expect("a .rs file");
            let name = stem.rsplit('/').next().unwrap();
            if m.path.is_empty() || name == "mod" {
                stem.rsplit_once('/').unwrap().0.to_string()
            } else {
                stem.to_string()
            }
        };
        for w in toks.windows(3) {
            if w[0] == "mod" && w[2] == ";" {
                let name = &w[1];
                let file = [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")]
                    .into_iter()
                    .find(|f| root().join(f).exists())
                    .unwrap_or_else(|| panic!("{}: module {name} has no file", m.file));
                let mut path = m.path.clone();
                path.push(name.clone());
                out.push(Module { path, file });
            }
        }
    }
    out
}

/// A `use` tree flattened into its paths (`a::{b, c::d as e}` is `a::b`, `a::c::d`), with
/// whether the declaration is `pub` and the name each path binds.
fn use_paths(toks: &[String], out: &mut Vec<Vec<String>>) {
    fn walk(toks: &[String], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut path = prefix;
        loop {
            match toks.get(*i).map(String::as_str) {
                Some("{") => {
                    *i += 1;
                    loop {
                        walk(toks, i, path.clone(), out);
                        match toks.get(*i).map(String::as_str) {
                            Some(",") => {
                                *i += 1;
                                if toks.get(*i).map(String::as_str) == Some("}") {
                                    *i += 1;
                                    return;
                                }
                            }
                            Some("}") => {
                                *i += 1;
                                return;
                            }
                            _ => return,
                        }
                    }
                }
                Some("::") => *i += 1,
                Some("*") => {
                    *i += 1;
                    out.push(path);
                    return;
                }
                Some("as") => {
                    *i += 2;
                    out.push(path);
                    return;
                }
                Some(t) if t.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                    path.push(t.to_string());
                    *i += 1;
                }
                _ => {
                    if !path.is_empty() {
                        out.push(path);
                    }
                    return;
                }
            }
        }
    }
    let mut i = 0;
    walk(toks, &mut i, Vec::new(), out);
}

/// A file's code split into what its tests use and the rest, with the inline module each
/// token sits in: `(module path below the file, token)`.
struct FileCode {
    /// Tokens outside test modules, each with the inline modules around it.
    toks: Vec<(Vec<String>, String)>,
}

fn file_code(text: &str) -> FileCode {
    let toks = tokens(&lex(text).code);
    let mut out = Vec::new();
    // Open braces, and for each the inline module it opened (if any) and whether that
    // module is a test module.
    let mut stack: Vec<Option<(String, bool)>> = Vec::new();
    let mut pending: Option<(String, bool)> = None;
    let mut cfg_test = false;
    for (k, t) in toks.iter().enumerate() {
        let in_test = stack.iter().flatten().any(|(_, test)| *test);
        if t == "#" && toks.get(k + 2).map(String::as_str) == Some("cfg") {
            let end = toks[k..].iter().position(|x| x == "]").map_or(k, |e| k + e);
            if toks[k..end].iter().any(|x| x == "test") {
                cfg_test = true;
            }
        }
        match t.as_str() {
            "mod" => {
                if let Some(name) = toks.get(k + 1) {
                    if toks.get(k + 2).map(String::as_str) == Some("{") {
                        pending = Some((name.clone(), cfg_test));
                    }
                }
                cfg_test = false;
            }
            "{" => stack.push(pending.take()),
            "}" => {
                stack.pop();
            }
            ";" => cfg_test = false,
            "fn" | "struct" | "enum" | "impl" | "use" | "const" | "static" | "trait" => {
                cfg_test = false
            }
            _ => {}
        }
        if !in_test {
            let at: Vec<String> = stack.iter().flatten().map(|(n, _)| n.clone()).collect();
            out.push((at, t.clone()));
        }
    }
    FileCode { toks: out }
}

/// The paths a file names into its crate: each with the module it is named from (the
/// file's, or an inline module's in it).
fn named_paths(
    m: &Module,
    code: &FileCode,
    children: &BTreeSet<String>,
) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let toks = &code.toks;
    let mut k = 0;
    while k < toks.len() {
        let (at, t) = &toks[k];
        let mut from = m.path.clone();
        from.extend(at.iter().cloned());
        if t == "use" {
            // The declaration runs to its `;`.
            let end = toks[k..]
                .iter()
                .position(|(_, x)| x == ";")
                .map_or(toks.len(), |e| k + e);
            let body: Vec<String> = toks[k + 1..end].iter().map(|(_, x)| x.clone()).collect();
            let mut paths = Vec::new();
            use_paths(&body, &mut paths);
            for p in paths {
                out.push((from.clone(), p));
            }
            k = end;
            continue;
        }
        let starts_path = matches!(t.as_str(), "crate" | "super" | "self")
            || (at.is_empty() && children.contains(t));
        let after_colons = k > 0 && toks[k - 1].1 == "::";
        if starts_path && !after_colons && toks.get(k + 1).is_some_and(|(_, x)| x == "::") {
            let mut p = vec![t.clone()];
            let mut j = k + 1;
            while toks.get(j).is_some_and(|(_, x)| x == "::")
                && toks
                    .get(j + 1)
                    .is_some_and(|(_, x)| x.chars().all(|c| c.is_alphanumeric() || c == '_'))
            {
                p.push(toks[j + 1].1.clone());
                j += 2;
            }
            out.push((from, p));
            k = j;
            continue;
        }
        k += 1;
    }
    out
}

/// A crate's graph: for each file, the files it uses and by which paths.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn graph(root_file: &str) -> Graph {
    let mods = modules(root_file);
    let by_path: BTreeMap<Vec<String>, String> = mods
        .iter()
        .map(|m| (m.path.clone(), m.file.clone()))
        .collect();
    let codes: BTreeMap<String, FileCode> = mods
        .iter()
        .map(|m| {
            let text = std::fs::read_to_string(root().join(&m.file)).unwrap();
            (m.file.clone(), file_code(&text))
        })
        .collect();
    // `pub use` re-exports, per module: the name bound, and the absolute path it stands for.
    let mut aliases: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for m in &mods {
        let toks = &codes[&m.file].toks;
        for (k, (at, t)) in toks.iter().enumerate() {
            if t != "use" || !at.is_empty() || k == 0 || toks[k - 1].1 != "pub" {
                continue;
            }
            let end = toks[k..]
                .iter()
                .position(|(_, x)| x == ";")
                .map_or(toks.len(), |e| k + e);
            let body: Vec<String> = toks[k + 1..end].iter().map(|(_, x)| x.clone()).collect();
            let mut paths = Vec::new();
            use_paths(&body, &mut paths);
            for p in paths {
                if let (Some(last), Some(abs)) = (p.last(), absolute(&m.path, &p, &by_path)) {
                    if last != "*" && last != "self" {
                        aliases
                            .entry(m.path.clone())
                            .or_default()
                            .insert(last.clone(), abs);
                    }
                }
            }
        }
    }
    let mut g: Graph = BTreeMap::new();
    for m in &mods {
        if m.path.last().is_some_and(|n| n == "tests") {
            continue;
        }
        let children: BTreeSet<String> = mods
            .iter()
            .filter(|c| c.path.len() == m.path.len() + 1 && c.path.starts_with(&m.path))
            .map(|c| c.path.last().unwrap().clone())
            .collect();
        for (from, p) in named_paths(m, &codes[&m.file], &children) {
            let Some(abs) = absolute(&from, &p, &by_path) else {
                continue;
            };
            for target in resolve(&abs, &by_path, &aliases, 0) {
                // A module naming itself or its own descendants is not a use.
                if target.starts_with(&m.path) {
                    continue;
                }
                let to = &by_path[&target];
                g.entry(m.file.clone())
                    .or_default()
                    .entry(to.clone())
                    .or_default()
                    .insert(p.join("::"));
            }
        }
    }
    g
}

/// `p` (as written in module `from`) from the crate root, if it is a path into the crate.
fn absolute(
    from: &[String],
    p: &[String],
    by_path: &BTreeMap<Vec<String>, String>,
) -> Option<Vec<String>> {
    let mut at: Vec<String> = from.to_vec();
    let mut rest = p;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) => {
            // A child module of the naming module (2018 paths); anything else is an
            // external crate or a name in scope.
            let mut child = at.clone();
            child.push(first.to_string());
            if !by_path.contains_key(&child) {
                return None;
            }
        }
        None => return None,
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

/// The modules an absolute path reaches: the one its module segments name as written, and,
/// where the next segment is a `pub use` re-export of that module, the modules the
/// re-export reaches in turn (`crate::hw::params::PhvParams`, re-exported from `hw::phv`,
/// reaches both `hw/params.rs` and `hw/phv.rs`).
fn resolve(
    abs: &[String],
    by_path: &BTreeMap<Vec<String>, String>,
    aliases: &BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    depth: usize,
) -> Vec<Vec<String>> {
    let mut at: Vec<String> = Vec::new();
    for (k, seg) in abs.iter().enumerate() {
        let mut next = at.clone();
        next.push(seg.clone());
        if by_path.contains_key(&next) {
            at = next;
            continue;
        }
        if depth < 8 {
            if let Some(target) = aliases.get(&at).and_then(|a| a.get(seg)) {
                let mut via = target.clone();
                via.extend(abs[k + 1..].iter().cloned());
                let mut out = vec![at];
                out.extend(resolve(&via, by_path, aliases, depth + 1));
                return out;
            }
        }
        break;
    }
    vec![at]
}

/// The rings of `g`: its strongly connected sets of more than one file (Tarjan).
fn rings(g: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        if let Some(edges) = s.g.get(v) {
            for w in edges.keys() {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let l = s.low[w].min(s.low[v]);
                    s.low.insert(v, l);
                } else if s.on.contains(w) {
                    let l = s.index[w].min(s.low[v]);
                    s.low.insert(v, l);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                set.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                s.out.push(set);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_two_files_of_a_crate_use_each_other_directly_or_in_a_ring() {
    let mut report = Vec::new();
    let mut files = 0;
    for k in CRATES {
        for r in k.roots {
            let g = graph(r);
            files += g.len();
            for ring in rings(&g) {
                let mut lines = vec![format!("{}: a ring of {} files", k.name, ring.len())];
                for a in &ring {
                    for (b, how) in g.get(a).into_iter().flatten() {
                        if ring.contains(b) {
                            let how: Vec<&str> = how.iter().map(String::as_str).collect();
                            lines.push(format!("  {a} -> {b} ({})", how.join(", ")));
                        }
                    }
                }
                report.push(lines.join("\n"));
            }
        }
    }
    // The graph sees the tree (a wrong root would find no files and pass).
    assert!(files > 100, "{files} files with uses");
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn paths_are_followed_through_use_trees_and_re_exports() {
    let toks = tokens("crate::a::{b, c::{d as e, f}, self}");
    let mut paths = Vec::new();
    use_paths(&toks, &mut paths);
    let joined: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        joined,
        [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c::f",
            "crate::a::self"
        ]
    );
    // The pipeline's flat public paths reach the layer files.
    let g = graph("pipeline/src/lib.rs");
    let uses_of = |f: &str| g.get(f).map(|e| e.keys().cloned().collect::<Vec<_>>());
    let exec = uses_of("pipeline/src/run/exec.rs").unwrap_or_default();
    assert!(
        exec.contains(&"pipeline/src/hw/gress.rs".to_string()),
        "{exec:?}"
    );
    // A ring is found where there is one.
    let mut ring: Graph = BTreeMap::new();
    for (a, b) in [("x", "y"), ("y", "z"), ("z", "x"), ("z", "w")] {
        ring.entry(a.into())
            .or_default()
            .entry(b.into())
            .or_default();
    }
    assert_eq!(
        rings(&ring),
        [vec!["x".to_string(), "y".into(), "z".into()]]
    );
}

/// The pipeline's layers, bottom first (`pipeline/src/lib.rs`): a file of one uses files of
/// its own layer or below, never above.
const PIPELINE_LAYERS: &[&str] = &["wire", "hw", "program", "compile", "run", "p4"];

#[test]
fn the_pipeline_layers_use_only_their_own_and_those_below() {
    let layer = |file: &str| {
        let rest = file.strip_prefix("pipeline/src/")?;
        let top = rest.split('/').next()?;
        PIPELINE_LAYERS.iter().position(|l| *l == top)
    };
    let g = graph("pipeline/src/lib.rs");
    let mut upward = Vec::new();
    for (a, uses) in &g {
        for (b, how) in uses {
            if let (Some(la), Some(lb)) = (layer(a), layer(b)) {
                if lb > la {
                    let how: Vec<&str> = how.iter().map(String::as_str).collect();
                    upward.push(format!("{a} -> {b} ({})", how.join(", ")));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "pipeline files that use a layer above their own:\n{}",
        upward.join("\n")
    );
}
