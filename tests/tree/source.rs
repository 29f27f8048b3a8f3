//! Reading Rust source the way the tree tests need it: the code with its comments and
//! literals taken out, the identifiers in it, the string literals apart, and the files of a
//! folder.
//!
//! This is a lexer, not a parser: it knows comments (line, block, nested block, doc),
//! string literals (plain with escapes, raw with any number of `#`, byte and C strings),
//! character and byte literals, lifetimes and number literals, which is all it takes to say
//! what is code and what is text. It knows nothing of macros: an identifier made by
//! `concat_idents!` or `paste!` is not seen.

use std::path::{Path, PathBuf};

/// The repository's root (the root crate's manifest folder).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `.rs` files under `dir` (relative to the repository root), recursively, sorted, as
/// paths relative to the root with `/` separators.
pub fn rust_files(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(&root().join(dir), &mut out);
    let root = root();
    let mut rel: Vec<String> = out
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            p.strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    rel.sort();
    rel
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// A source file split into what the compiler reads and what it does not.
pub struct Lexed {
    /// The code, with every comment and literal replaced by a space (lines kept, so a
    /// position in it is the line of the file).
    pub code: String,
    /// The string literals' contents (escapes left as written), with the line each starts on.
    pub strings: Vec<(usize, String)>,
}

/// Splits `src` into code and string literals.
pub fn lex(src: &str) -> Lexed {
    let b = src.as_bytes();
    let n = b.len();
    let mut code = String::with_capacity(n);
    let mut strings = Vec::new();
    let mut i = 0;
    let line_at = |i: usize| 1 + b[..i].iter().filter(|&&c| c == b'\n').count();
    // Keeps the newlines of a skipped span, so lines still count right.
    let blank = |code: &mut String, span: &str| {
        code.push(' ');
        code.extend(span.chars().filter(|&c| c == '\n'));
    };
    let ident_before = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    while i < n {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let end = src[i..].find('\n').map_or(n, |k| i + k);
            code.push(' ');
            i = end;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            let mut j = i;
            while j < n {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut code, &src[i..j.min(n)]);
            i = j.min(n);
            continue;
        }
        // Raw strings: r"..", r#".."#, br"..", cr"..".
        if !ident_before(i)
            && (c == b'r' || ((c == b'b' || c == b'c') && b.get(i + 1) == Some(&b'r')))
        {
            let mut j = if c == b'r' { i + 1 } else { i + 2 };
            let hashes_from = j;
            while j < n && b[j] == b'#' {
                j += 1;
            }
            if j < n && b[j] == b'"' {
                let hashes = j - hashes_from;
                let close = format!("\"{}", "#".repeat(hashes));
                let body_from = j + 1;
                let end = src[body_from..].find(&close).map_or(n, |k| body_from + k);
                strings.push((line_at(i), src[body_from..end].to_string()));
                let after = (end + close.len()).min(n);
                blank(&mut code, &src[i..after]);
                i = after;
                continue;
            }
        }
        // Plain, byte and C strings.
        if c == b'"'
            || (!ident_before(i) && (c == b'b' || c == b'c') && b.get(i + 1) == Some(&b'"'))
        {
            let from = if c == b'"' { i + 1 } else { i + 2 };
            let mut j = from;
            while j < n && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = j.min(n);
            strings.push((line_at(i), src[from..end].to_string()));
            blank(&mut code, &src[i..(end + 1).min(n)]);
            i = (end + 1).min(n);
            continue;
        }
        // Character and byte literals; a quote that opens neither is a lifetime's.
        if c == b'\'' || (c == b'b' && !ident_before(i) && b.get(i + 1) == Some(&b'\'')) {
            let q = if c == b'\'' { i } else { i + 1 };
            if b.get(q + 1) == Some(&b'\\') {
                let mut j = q + 2;
                while j < n && b[j] != b'\'' {
                    j += 1;
                }
                blank(&mut code, &src[i..(j + 1).min(n)]);
                i = (j + 1).min(n);
                continue;
            }
            if let Some(ch) = src[q + 1..].chars().next() {
                let after = q + 1 + ch.len_utf8();
                if b.get(after) == Some(&b'\'') {
                    code.push(' ');
                    i = after + 1;
                    continue;
                }
            }
            if c == b'\'' {
                code.push(' ');
                i += 1;
                continue;
            }
        }
        // Numbers (with their suffixes, `1u64`, `0x1f`), so their letters are no identifier.
        if c.is_ascii_digit() && !ident_before(i) {
            let mut j = i;
            while j < n && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            code.push(' ');
            i = j;
            continue;
        }
        let ch = src[i..].chars().next().expect("in bounds");
        code.push(ch);
        i += ch.len_utf8();
    }
    Lexed { code, strings }
}

/// The identifiers of `code` (as [`lex`] leaves it) with their lines.
pub fn identifiers(code: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut line = 1;
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\n' {
            line += 1;
            i += 1;
        } else if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let from = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((line, &code[from..i]));
        } else {
            i += 1;
        }
    }
    out
}

/// The words of an identifier, lower case: split at `_`, `-` and where the case turns
/// (`PaboTree` and `pabo_tree` are both `pabo tree`; `HTTPServer` is `http server`).
pub fn words(ident: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in ident.split(['_', '-']).filter(|p| !p.is_empty()) {
        let cs: Vec<char> = part.chars().collect();
        let mut word = String::new();
        for (k, &c) in cs.iter().enumerate() {
            let upper = c.is_ascii_uppercase();
            let prev_lower =
                k > 0 && (cs[k - 1].is_ascii_lowercase() || cs[k - 1].is_ascii_digit());
            let next_lower = cs.get(k + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = k > 0 && cs[k - 1].is_ascii_uppercase();
            if upper && !word.is_empty() && (prev_lower || (prev_upper && next_lower)) {
                out.push(std::mem::take(&mut word));
            }
            word.push(c.to_ascii_lowercase());
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

#[test]
fn the_lexer_keeps_code_and_drops_text() {
    let src = "let a = \"bfc\"; // pabo\n/* hpcc /* nested */ dcqcn */ let b = r#\"qcn\"#;\n\
               let c = 'x'; let d = '\\n'; fn f<'pias>() {} let e = b'y'; let n = 0x1fu64;";
    let l = lex(src);
    let ids: Vec<&str> = identifiers(&l.code).into_iter().map(|(_, i)| i).collect();
    assert_eq!(
        ids,
        [
            "let", "a", "let", "b", "let", "c", "let", "d", "fn", "f", "pias", "let", "e", "let",
            "n"
        ]
    );
    let strings: Vec<(usize, &str)> = l.strings.iter().map(|(k, s)| (*k, s.as_str())).collect();
    assert_eq!(strings, [(1, "bfc"), (2, "qcn")]);
    assert_eq!(l.code.lines().count(), src.lines().count());
}

#[test]
fn identifiers_split_into_words_at_underscores_and_case() {
    assert_eq!(words("PaboTree"), ["pabo", "tree"]);
    assert_eq!(words("bfc_artifact_ideal"), ["bfc", "artifact", "ideal"]);
    assert_eq!(words("MICE_PFC_CLASS"), ["mice", "pfc", "class"]);
    assert_eq!(words("HTTPServer"), ["http", "server"]);
    assert_eq!(words("DcqcnParams"), ["dcqcn", "params"]);
    assert_eq!(words("pfc-only"), ["pfc", "only"]);
}
