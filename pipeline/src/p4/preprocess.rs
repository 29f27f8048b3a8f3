//! Preprocessing as p4c does it: the system C preprocessor (`cpp`, from GCC) runs over the
//! program with our architecture files on the include path, `__TARGET_TOFINO__` defined as 2
//! and the user's `-I` / `-D`. Its `# LINE "FILE"` markers stay in the text; the lexer
//! follows them so that every later error names the original file, line and column.
//! Comments are kept (`-C`) so that columns after a comment on the same line stay exact.

use super::ast::Span;
use super::{Options, P4Error};
use std::path::Path;
use std::process::Command;

/// Preprocessed text and the files its line markers name.
#[derive(Clone, Debug, Default)]
pub struct Source {
    pub text: String,
    /// File names by index, as the markers give them; 0 is the main file.
    pub files: Vec<String>,
}

impl Source {
    /// Text not run through `cpp` (no `#` directives), as if it were file `name`.
    pub fn plain(name: &str, text: &str) -> Source {
        Source {
            text: text.to_string(),
            files: vec![name.to_string()],
        }
    }

    /// Index of file `name`, added when new.
    pub fn file_id(&mut self, name: &str) -> u32 {
        match self.files.iter().position(|f| f == name) {
            Some(i) => i as u32,
            None => {
                self.files.push(name.to_string());
                self.files.len() as u32 - 1
            }
        }
    }

    /// An error at `span`.
    pub fn error(&self, span: Span, message: impl Into<String>) -> P4Error {
        P4Error {
            file: self
                .files
                .get(span.file as usize)
                .cloned()
                .unwrap_or_default(),
            line: span.line,
            col: span.col,
            message: message.into(),
        }
    }
}

/// Runs `cpp` over `path`. A missing `cpp`, an unreadable file or a `#error` is an error
/// at the place `cpp` names (line 0 when it names none).
pub fn run(path: &Path, opts: &Options) -> Result<Source, P4Error> {
    let shown = path.display().to_string();
    if !path.is_file() {
        return Err(whole_file(&shown, "no such file".to_string()));
    }
    let mut cmd = cpp_command(opts, &shown)?;
    cmd.arg("-I")
        .arg(architecture_dir().map_err(|m| whole_file(&shown, m))?);
    // A name starting with `-` would reach cpp as an option (`-oout.p4` writes a file).
    if path.to_string_lossy().starts_with('-') {
        cmd.arg(Path::new(".").join(path));
    } else {
        cmd.arg(path);
    }
    let out = cmd.output().map_err(|e| cpp_spawn_error(&shown, e))?;
    cpp_output(&shown, out)
}

/// Our architecture files, held in the binary so that a program kept in memory (a
/// scheme's) compiles without the source tree: `<core.p4>`, `<t2na.p4>`, `<tna.p4>` and
/// the `tofino_common.p4` they share.
pub const ARCHITECTURE_FILES: &[(&str, &str)] = &[
    ("core.p4", include_str!("../../p4include/core.p4")),
    ("t2na.p4", include_str!("../../p4include/t2na.p4")),
    ("tna.p4", include_str!("../../p4include/tna.p4")),
    (
        "tofino_common.p4",
        include_str!("../../p4include/tofino_common.p4"),
    ),
];

/// The folder `cpp` finds `<t2na.p4>` in: the source tree's `pipeline/p4include/` when the
/// binary runs where it was built, else a copy of [`ARCHITECTURE_FILES`] written once into
/// the system's temporary folder (so that an installed binary compiles a program on disk
/// too), in a folder named after the files' contents so that two versions never share one.
fn architecture_dir() -> Result<std::path::PathBuf, String> {
    architecture_dir_from(super::p4include_dir())
}

/// [`architecture_dir`] with the source tree's folder given.
fn architecture_dir_from(tree: std::path::PathBuf) -> Result<std::path::PathBuf, String> {
    if tree.join("t2na.p4").is_file() {
        return Ok(tree);
    }
    // FNV-1a over the files: a name that changes whenever a file does.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, text) in ARCHITECTURE_FILES {
        for b in name.bytes().chain(text.bytes()) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    let dir = std::env::temp_dir().join(format!("t2sim-p4include-{h:016x}"));
    if !dir.join("t2na.p4").is_file() {
        let cannot = |e: std::io::Error| {
            format!(
                "cannot write the architecture files to {}: {e}",
                dir.display()
            )
        };
        // Written under a name of this process's and renamed, so that two processes
        // starting at once never read a half-written file.
        let staging = dir.with_extension(format!("tmp{}", std::process::id()));
        std::fs::create_dir_all(&staging).map_err(cannot)?;
        for (name, text) in ARCHITECTURE_FILES {
            std::fs::write(staging.join(name), text).map_err(cannot)?;
        }
        if std::fs::rename(&staging, &dir).is_err() {
            // Another process got there first; its copy is the same.
            let _ = std::fs::remove_dir_all(&staging);
        }
        if !dir.join("t2na.p4").is_file() {
            return Err(format!(
                "cannot write the architecture files to {}",
                dir.display()
            ));
        }
    }
    Ok(dir)
}

/// Deepest nesting of `#include`s in a program held in memory (cpp's own limit is 200).
const MAX_INCLUDE_DEPTH: usize = 64;

/// Runs `cpp` over a program held in memory: `files` are `(path, text)` pairs (paths with
/// `/`), `main` one of the paths. Each `#include "x"` is resolved against the folder of the
/// file that includes it, then against [`ARCHITECTURE_FILES`]; `#include <x>` against
/// the architecture files, then `files`. The resolved text is spliced in between `#line`
/// directives (so errors name the original file and line) and the whole is fed to `cpp` on
/// its standard input, which sees no file system at all. An include that names no held
/// file becomes an `#error` on its own line, so that it fails only where cpp would read it
/// (not inside an `#if 0`).
pub fn run_held(main: &str, files: &[(&str, &str)], opts: &Options) -> Result<Source, P4Error> {
    let Some(text) = lookup(files, main) else {
        return Err(whole_file(
            main,
            "no such file among the program's files".to_string(),
        ));
    };
    let mut input = String::new();
    splice(main, text, files, 0, &mut input)?;
    let mut cmd = cpp_command(opts, main)?;
    cmd.arg("-");
    cmd.stdin(std::process::Stdio::piped());
    cmd.stdout(std::process::Stdio::piped());
    cmd.stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| cpp_spawn_error(main, e))?;
    // The program is a few kB and cpp reads all of it before it writes much, but write from
    // a thread anyway so that a large one cannot deadlock on full pipes.
    let mut stdin = child.stdin.take().expect("stdin was piped");
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes())
    });
    let out = child
        .wait_with_output()
        .map_err(|e| whole_file(main, format!("cannot run `cpp`: {e}")))?;
    match writer.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) if out.status.success() => {
            return Err(whole_file(main, format!("cannot feed `cpp`: {e}")))
        }
        _ => {}
    }
    cpp_output(main, out)
}

/// The text of held file `name`: one of `files`, else an architecture file.
fn lookup<'a>(files: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    files.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// `text` of file `name` into `out`, its `#include`s of held files replaced by their
/// spliced text.
fn splice(
    name: &str,
    text: &str,
    files: &[(&str, &str)],
    depth: usize,
    out: &mut String,
) -> Result<(), P4Error> {
    use std::fmt::Write as _;
    let _ = writeln!(out, "#line 1 \"{name}\"");
    for (index, line) in text.lines().enumerate() {
        let Some((target, angled, col)) = include_target(line) else {
            out.push_str(line);
            out.push('\n');
            // A spliced include inside a group cpp skips has its closing `#line` skipped
            // too, and cpp would number the lines after the group by the spliced text's
            // length: restate the place after every directive that can end a group.
            if ends_a_group(line) {
                let _ = writeln!(out, "#line {} \"{name}\"", index + 2);
            }
            continue;
        };
        let folder = name.rsplit_once('/').map_or("", |(d, _)| d);
        let relative = normalize(&if folder.is_empty() {
            target.to_string()
        } else {
            format!("{folder}/{target}")
        });
        let arch = ARCHITECTURE_FILES
            .iter()
            .find(|(n, _)| *n == target)
            .map(|(n, t)| (n.to_string(), *t));
        let held = |path: &str| lookup(files, path).map(|t| (path.to_string(), t));
        let found = if angled {
            arch.or_else(|| held(&normalize(target)))
        } else {
            held(&relative).or(arch)
        };
        match found {
            Some((path, included)) => {
                if depth >= MAX_INCLUDE_DEPTH {
                    return Err(P4Error {
                        file: name.to_string(),
                        line: index as u32 + 1,
                        col,
                        message: format!(
                            "#include nested more than {MAX_INCLUDE_DEPTH} deep (does a file \
                             include itself?)"
                        ),
                    });
                }
                splice(&path, included, files, depth + 1, out)?;
                let _ = writeln!(out, "#line {} \"{name}\"", index + 2);
            }
            None => {
                let _ = writeln!(out, "#error cannot find the included file \"{target}\"");
            }
        }
    }
    Ok(())
}

/// Whether `line` is `#else`, `#elif` or `#endif`.
fn ends_a_group(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix('#') else {
        return false;
    };
    let word = rest.trim_start();
    ["else", "elif", "endif"].iter().any(|d| {
        word.strip_prefix(d)
            .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    })
}

/// The file an `#include` line names, whether it is `<angled>`, and the line's column of
/// the `#`; `None` for any other line.
fn include_target(line: &str) -> Option<(&str, bool, u32)> {
    let trimmed = line.trim_start();
    let col = (line.len() - trimmed.len()) as u32 + 1;
    let rest = trimmed.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("include")?.trim_start();
    if let Some(r) = rest.strip_prefix('"') {
        return Some((r.split('"').next()?, false, col));
    }
    let r = rest.strip_prefix('<')?;
    Some((r.split('>').next()?, true, col))
}

/// `a/b/../c` as `a/c`, `./x` as `x`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// An error about file `file` as a whole (line 0).
fn whole_file(file: &str, message: String) -> P4Error {
    P4Error {
        file: file.to_string(),
        line: 0,
        col: 0,
        message,
    }
}

/// `cpp` with p4c's arguments, `__TARGET_TOFINO__`, and the user's `-D`s and `-I`s.
fn cpp_command(opts: &Options, shown: &str) -> Result<Command, P4Error> {
    let mut cmd = Command::new("cpp");
    // As p4c: no predefined macros or system includes, assembler mode (so `'` and `$` in
    // P4 text are not C tokens), comments kept.
    cmd.args([
        "-E",
        "-C",
        "-undef",
        "-nostdinc",
        "-x",
        "assembler-with-cpp",
    ]);
    cmd.arg("-D__TARGET_TOFINO__=2");
    cmd.arg("-D__p4c__=1");
    for d in &opts.defines {
        if d.is_empty() || d.starts_with('=') {
            return Err(whole_file(
                shown,
                format!("-D `{d}`: expected NAME or NAME=VALUE"),
            ));
        }
        cmd.arg(format!("-D{d}"));
    }
    for dir in &opts.include_dirs {
        cmd.arg("-I").arg(dir);
    }
    Ok(cmd)
}

/// Whether the C preprocessor can be started: `Err` with the reason (and how to install it)
/// when it cannot. The schemes' programs are P4 compiled through it, so a command that builds
/// one asks first and fails cleanly rather than in the middle of building.
pub fn cpp_available() -> Result<(), String> {
    match Command::new("cpp")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
    {
        Ok(_) => Ok(()),
        Err(e) => Err(cpp_spawn_error("the schemes' P4 programs", e).message),
    }
}

/// The error for a `cpp` that would not start.
fn cpp_spawn_error(shown: &str, e: std::io::Error) -> P4Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        whole_file(
            shown,
            "the C preprocessor `cpp` is not installed (Debian: apt-get install cpp); \
             P4 programs are preprocessed with it as p4c does"
                .to_string(),
        )
    } else {
        whole_file(shown, format!("cannot run `cpp`: {e}"))
    }
}

/// `cpp`'s output as a [`Source`] whose main file is `shown`, or its first error.
fn cpp_output(shown: &str, out: std::process::Output) -> Result<Source, P4Error> {
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(cpp_error(&stderr).unwrap_or_else(|| {
            whole_file(
                shown,
                format!(
                    "the C preprocessor failed: {}",
                    stderr.lines().next().unwrap_or("no message")
                ),
            )
        }));
    }
    let text = String::from_utf8(out.stdout)
        .map_err(|_| whole_file(shown, "the preprocessed program is not UTF-8".to_string()))?;
    Ok(Source {
        text,
        files: vec![shown.to_string()],
    })
}

/// The first `FILE:LINE:COL: error: MESSAGE` (or `fatal error:`) line of `cpp`'s output.
fn cpp_error(stderr: &str) -> Option<P4Error> {
    stderr.lines().find_map(|l| {
        let (head, msg) = l
            .split_once(": fatal error: ")
            .or_else(|| l.split_once(": error: "))?;
        let mut parts = head.rsplitn(3, ':');
        let col = parts.next()?.parse().ok()?;
        let line = parts.next()?.parse().ok()?;
        let file = parts.next()?.to_string();
        Some(P4Error {
            file,
            line,
            col,
            message: msg.to_string(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpp_errors_are_parsed() {
        let e = cpp_error("a.p4:3:2: error: #error no\n    3 | #error no\n").unwrap();
        assert_eq!(e.to_string(), "a.p4:3:2: #error no");
        let e = cpp_error("x/a.p4:1:10: fatal error: nope.p4: No such file or directory").unwrap();
        assert_eq!((e.file.as_str(), e.line, e.col), ("x/a.p4", 1, 10));
    }

    #[test]
    fn held_includes_resolve_against_their_folder_and_errors_name_the_held_file() {
        let files = [
            (
                "a/b/main.p4",
                "#include <t2na.p4>\n#include \"../c.p4\"\nX\n#error at four\n",
            ),
            ("a/c.p4", "#ifndef C\n#define X PortId_t\n#endif\n"),
        ];
        let e = run_held("a/b/main.p4", &files, &Options::default()).unwrap_err();
        assert_eq!(e.to_string(), "a/b/main.p4:4:2: #error at four");
        let files = [("a/b/main.p4", "#include \"../c.p4\"\nX\n"), files[1]];
        let pre = run_held("a/b/main.p4", &files, &Options::default()).unwrap();
        assert!(pre.text.contains("PortId_t"), "{}", pre.text);
        // A define from the options reaches the held text.
        let files = [("m.p4", "#ifdef C\n#error C is set\n#endif\n")];
        let opts = Options {
            include_dirs: Vec::new(),
            defines: vec!["C".into()],
        };
        let e = run_held("m.p4", &files, &opts).unwrap_err();
        assert_eq!(e.to_string(), "m.p4:2:2: #error C is set");
    }

    #[test]
    fn a_held_include_of_no_held_file_fails_only_where_cpp_reads_it() {
        let files = [("m.p4", "#if 0\n#include \"gone.p4\"\n#endif\nok\n")];
        assert!(run_held("m.p4", &files, &Options::default()).is_ok());
        let files = [("m.p4", "ok\n#include \"gone.p4\"\n")];
        let e = run_held("m.p4", &files, &Options::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.p4:2:2: #error cannot find the included file \"gone.p4\""
        );
        let files = [("m.p4", "#include \"m.p4\"\n")];
        let e = run_held("m.p4", &files, &Options::default()).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("m.p4:1:1: #include nested more than 64 deep"));
        assert_eq!(normalize("a/./b/../../c/d"), "c/d");
    }

    #[test]
    fn lines_after_a_skipped_include_keep_their_numbers() {
        let files = [
            ("m.p4", "#if 0\n#include \"b.p4\"\n#endif\n#error at four\n"),
            ("b.p4", "one\ntwo\nthree\n"),
        ];
        let e = run_held("m.p4", &files, &Options::default()).unwrap_err();
        assert_eq!(e.to_string(), "m.p4:4:2: #error at four");
        let files = [
            (
                "m.p4",
                "#ifdef X\n#else\n#include \"b.p4\"\n#endif\nok\n#error at six\n",
            ),
            files[1],
        ];
        let e = run_held("m.p4", &files, &Options::default()).unwrap_err();
        assert_eq!(e.to_string(), "m.p4:6:2: #error at six");
        assert!(ends_a_group("  #  endif // guard"));
        assert!(!ends_a_group("#endiff") && !ends_a_group("#elsewhere"));
    }

    #[test]
    fn without_the_source_tree_the_architecture_files_come_from_the_binary() {
        let tree = super::super::p4include_dir();
        assert_eq!(architecture_dir_from(tree.clone()).unwrap(), tree);
        let dir = architecture_dir_from(Path::new("/nonexistent/p4include").to_path_buf()).unwrap();
        assert!(dir.starts_with(std::env::temp_dir()));
        for (name, text) in ARCHITECTURE_FILES {
            assert_eq!(
                std::fs::read_to_string(dir.join(name)).unwrap(),
                *text,
                "{name}"
            );
            // And the held copies are the tree's files.
            assert_eq!(
                std::fs::read_to_string(tree.join(name)).unwrap(),
                *text,
                "{name}"
            );
        }
        // A second call finds the copy.
        assert_eq!(
            architecture_dir_from(Path::new("/nonexistent/p4include").to_path_buf()).unwrap(),
            dir
        );
    }
}
