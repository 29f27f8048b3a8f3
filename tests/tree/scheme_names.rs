//! A scheme lives in its folder (`src/schemes/NAME/`): no crate below the schemes names one.
//!
//! The crates `clock`, `waves`, `pipeline`, `tm` and `testbench`, and the root crate outside
//! `src/schemes/`, reach a scheme's host behaviour, counters, topologies, ideal-FCT rules and
//! report lines only through the interfaces the registry (`src/schemes/mod.rs`) hands out.
//! This test reads their library sources (`*/src/**/*.rs`; tests and benches may name the
//! schemes they exercise) and fails on any identifier, or any string literal that is a
//! single identifier-like word (a dispatch key such as `"pabo_tree"`), that names a scheme.
//! Comments and prose in strings may name schemes: they explain, they do not depend.
//!
//! A name is found by its words (`PaboTree` and `pabo_tree` are `pabo tree`): `bfc`,
//! `pabo`, `slytherin`, `pias`, `dctcp`, `dcqcn`, `hpcc` and `qcn` as words, and
//! `mice elephant` and `pfc only` as word pairs.
//!
//! One exception, for a reason: `pfc` alone. PFC (IEEE 802.1Qbb) is the link-level flow
//! control that Tofino2's traffic manager and MACs implement (docs/tofino2.md) and that
//! every RDMA NIC honours: a mechanism of the chip and the links, as ECN is, which schemes
//! configure (lossless classes, thresholds) but which is not a scheme. The schemes built on
//! it have names of their own (`pfc-only`, `pfc-qcn`, `dctcp-pfc`), and those are checked.

use crate::source::{identifiers, lex, rust_files, words};

/// Scheme names that are one word.
const WORDS: &[&str] = &[
    "bfc",
    "pabo",
    "slytherin",
    "pias",
    "dctcp",
    "dcqcn",
    "hpcc",
    "qcn",
];

/// Scheme names that are two words (`mice_elephant`, `MiceElephant`, `pfc-only`).
const PAIRS: &[(&str, &str)] = &[("mice", "elephant"), ("pfc", "only")];

/// The library sources below the schemes.
const SCANNED: &[&str] = &[
    "clock/src",
    "waves/src",
    "pipeline/src",
    "tm/src",
    "testbench/src",
    "src",
];

/// The folder the schemes live in (with the registry, `src/schemes/mod.rs`).
const SCHEMES: &str = "src/schemes/";

/// The scheme names among `words_of` (an identifier's words).
fn named(words_of: &[String]) -> Option<String> {
    for (k, w) in words_of.iter().enumerate() {
        if WORDS.contains(&w.as_str()) {
            return Some(w.clone());
        }
        if let Some(next) = words_of.get(k + 1) {
            if PAIRS.contains(&(w.as_str(), next.as_str())) {
                return Some(format!("{w}-{next}"));
            }
        }
    }
    None
}

/// Every place in `file` (relative to the root) that names a scheme: `file:line: what
/// (scheme)`.
fn names_in(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(crate::source::root().join(file)).unwrap();
    let lexed = lex(&text);
    let mut out = Vec::new();
    for (line, ident) in identifiers(&lexed.code) {
        if let Some(name) = named(&words(ident)) {
            out.push(format!("{file}:{line}: `{ident}` ({name})"));
        }
    }
    for (line, s) in &lexed.strings {
        let word_like = !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if let Some(name) = word_like.then(|| named(&words(s))).flatten() {
            out.push(format!("{file}:{line}: \"{s}\" ({name})"));
        }
    }
    out
}

/// The scanned files: the library sources below the schemes.
fn scanned() -> Vec<String> {
    SCANNED
        .iter()
        .flat_map(|dir| rust_files(dir))
        .filter(|f| !f.starts_with(SCHEMES))
        .collect()
}

#[test]
fn no_crate_below_the_schemes_names_one() {
    let files = scanned();
    // The scan sees the tree (a wrong path would find nothing and pass).
    assert!(files.len() > 100, "{} files", files.len());
    assert!(files.contains(&"testbench/src/transport/mod.rs".to_string()));
    let found: Vec<String> = files.iter().flat_map(|f| names_in(f)).collect();
    assert!(
        found.is_empty(),
        "scheme names below src/schemes/ (reach the scheme through the registry's \
         interfaces instead, src/schemes/mod.rs):\n{}",
        found
            .iter()
            .map(|s| format!("  {s}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
}

#[test]
fn the_check_finds_names_in_every_spelling_and_only_there() {
    let find = |ident: &str| named(&words(ident));
    assert_eq!(find("PaboTree").as_deref(), Some("pabo"));
    assert_eq!(find("honour_bfc_pause").as_deref(), Some("bfc"));
    assert_eq!(find("MiceElephant").as_deref(), Some("mice-elephant"));
    assert_eq!(find("pfc-only").as_deref(), Some("pfc-only"));
    assert_eq!(find("DcqcnParams").as_deref(), Some("dcqcn"));
    assert_eq!(find("pfc_xoff_cells"), None, "PFC is the chip's own");
    assert_eq!(find("qcnt"), None, "a word, not a prefix");
    assert_eq!(find("mice_bytes"), None);
    // On a file of the schemes' own, where names belong, it finds them.
    let own = names_in("src/schemes/pabo/host.rs");
    assert!(own.iter().any(|w| w.contains("(pabo)")), "{own:?}");
}
