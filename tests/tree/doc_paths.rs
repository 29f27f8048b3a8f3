//! Every path the docs name in this repository exists.
//!
//! The test reads `README.md`, `docs/*.md` and `docs/schemes/*.md` and takes every
//! path-looking word in them: `dir/file.ext`, any number of folders, in prose or code. Such a
//! word is a path in this repository, and must exist, when its first folder is one of the
//! repository's top-level folders (`src/...`, `scenarios/...`) or when it names a Rust file
//! (a `.rs` file named from a crate's `src/`, such as `run/exec.rs`, does not count as
//! found: write it from the repository's root). Any other word is a file of another
//! project (`bf-p4c/specs/device.h` in p4c, `simulation/run.py` in the HPCC artifact), or a
//! file a command writes (`story/pabo_story.vcd`), and is not checked; a file of another
//! project whose first folder has a name of ours is written with its project in front
//! (`PIAS-NS2/scripts/run_pias_dctcp.py`).
//!
//! A fenced block of a diff (```` ```diff ````) is not read: a diff names files as they were
//! at the commit it was made on.
//!
//! A placeholder stands for any name, and then at least one file must match: `*`, `<name>`,
//! `{...}` and words in capitals (`NAME`, `N`) in a path (`src/schemes/NAME/*.p4`).
//!
//! It also checks that the docs cite no file of the team's shared folder (`shared/...`, the
//! Tofino2 fact sheet), which is not in the repository: they cite the public source it names
//! instead; and that the README lists every scheme of the registry.

use crate::source::root;
use std::path::Path;

/// The documents read.
fn docs() -> Vec<String> {
    let mut out = vec!["README.md".to_string()];
    for dir in ["docs", "docs/schemes"] {
        let mut here: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".md"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        here.sort();
        out.extend(here);
    }
    out
}

/// The path-looking words of a line: runs of path characters with at least one `/` that end
/// in `.ext`, not part of a URL.
fn paths_in(line: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_.-/*<>{}".contains(c);
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        if !is_path_char(chars[k].1) {
            k += 1;
            continue;
        }
        let from = chars[k].0;
        while k < chars.len() && is_path_char(chars[k].1) {
            k += 1;
        }
        let to = chars.get(k).map_or(line.len(), |c| c.0);
        let word = line[from..to].trim_end_matches(['.', '/']);
        let url = line[..from].ends_with("://") || line[..from].ends_with(':');
        let ext = word
            .rsplit_once('.')
            .is_some_and(|(_, e)| !e.is_empty() && e.chars().all(|c| c.is_ascii_alphanumeric()));
        let name = word.rsplit('/').next().unwrap_or("");
        if word.contains('/') && ext && !url && !name.starts_with('.') {
            out.push(word.to_string());
        }
    }
    out
}

/// `path` with its placeholders turned into `*`: `<...>`, `{...}` and words in capitals.
fn as_pattern(path: &str) -> String {
    let mut s = String::new();
    let mut skip = None;
    for c in path.chars() {
        match (skip, c) {
            (Some(close), c) if c == close => skip = None,
            (Some(_), _) => {}
            (None, '<') => {
                skip = Some('>');
                s.push('*');
            }
            (None, '{') => {
                skip = Some('}');
                s.push('*');
            }
            (None, c) => s.push(c),
        }
    }
    // Words in capitals (NAME, DIR, N) between separators.
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let caps =
            !word.is_empty() && word.chars().all(|c| c.is_ascii_uppercase()) && word != "README";
        out.push_str(if caps { "*" } else { word });
        word.clear();
    };
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Whether the glob `pattern` (`*` within one path segment) matches a file under the root.
fn matches(pattern: &str) -> bool {
    fn glob(p: &str, name: &str) -> bool {
        match p.split_once('*') {
            None => p == name,
            Some((head, tail)) => {
                name.starts_with(head)
                    && (head.len()..=name.len())
                        .any(|i| name.is_char_boundary(i) && glob(tail, &name[i..]))
            }
        }
    }
    fn walk(dir: &Path, segs: &[&str]) -> bool {
        let Some((first, rest)) = segs.split_first() else {
            return true;
        };
        if !first.contains('*') {
            let next = dir.join(first);
            return next.exists() && walk(&next, rest);
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return false;
        };
        entries.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            glob(first, &name) && walk(&e.path(), rest)
        })
    }
    let segs: Vec<&str> = pattern.split('/').collect();
    walk(&root(), &segs)
}

/// The repository's top-level folders (but `target`).
fn top_folders() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root())
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.') && n != "target")
        .collect();
    v.sort();
    v
}

#[test]
fn every_path_the_docs_name_exists() {
    let tops = top_folders();
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in docs() {
        let text = std::fs::read_to_string(root().join(&doc)).unwrap();
        let mut in_diff = false;
        for (n, line) in text.lines().enumerate() {
            // A diff names files as they were at the commit it was made on.
            if line.trim_start().starts_with("```") {
                in_diff = line.trim_start() == "```diff";
            }
            if in_diff {
                continue;
            }
            for p in paths_in(line) {
                let first = p.split('/').next().unwrap_or("");
                let ours = tops.iter().any(|t| t == first) || p.ends_with(".rs");
                if !ours {
                    continue;
                }
                checked += 1;
                if !matches(&as_pattern(&p)) {
                    missing.push(format!("{doc}:{}: {p}", n + 1));
                }
            }
        }
    }
    // The scan sees the docs (a wrong folder would find nothing and pass).
    assert!(checked > 300, "{checked} paths checked");
    assert!(
        missing.is_empty(),
        "paths in the docs that do not exist (a moved file, or one named from inside a \
         crate):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_docs_cite_nothing_outside_the_repository() {
    let mut found = Vec::new();
    for doc in docs() {
        let text = std::fs::read_to_string(root().join(&doc)).unwrap();
        for (n, line) in text.lines().enumerate() {
            if ["shared/", "tofino2-facts", "fact sheet"]
                .iter()
                .any(|s| line.contains(s))
            {
                found.push(format!("{doc}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "citations of the shared folder (cite the public source it names):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_readme_lists_every_scheme() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let missing: Vec<&str> = t2sim::schemes::names()
        .into_iter()
        .filter(|n| !readme.contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "schemes the README does not list: {missing:?}"
    );
}

#[test]
fn paths_are_found_and_placeholders_match() {
    assert_eq!(
        paths_in("see `pipeline/src/run/exec.rs`, docs/p4.md and https://x.org/a/b.html."),
        ["pipeline/src/run/exec.rs", "docs/p4.md"]
    );
    assert_eq!(
        paths_in("a/b without an extension, v1.2"),
        Vec::<String>::new()
    );
    assert_eq!(
        as_pattern("src/schemes/NAME/<name>.p4"),
        "src/schemes/*/*.p4"
    );
    assert_eq!(
        as_pattern("scenarios/pabo_fattree_N.toml"),
        "scenarios/pabo_fattree_*.toml"
    );
    assert!(matches("src/schemes/*/*.p4"));
    assert!(!matches("src/schemes/nope/*.p4"));
}
