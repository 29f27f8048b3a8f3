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
    if !path.exists() {
        return Err(whole_file(&shown, "no such file".to_string()));
    }
    let arch = architecture_dir().map_err(|m| whole_file(&shown, m))?;
    check_includes(path, &shown, opts, &arch)?;
    let mut cmd = cpp_command(opts, &shown)?;
    cmd.arg("-I").arg(&arch);
    // A name starting with `-` would reach cpp as an option (`-oout.p4` writes a file).
    if path.to_string_lossy().starts_with('-') {
        cmd.arg(Path::new(".").join(path));
    } else {
        cmd.arg(path);
    }
    let out = run_bounded(cmd, None, &shown)?;
    cpp_output(&shown, out)
}

/// Most bytes `cpp` may write (or one file it may read, see [`check_includes`]): the
/// input cap of the other readers, far beyond any program.
const MAX_CPP_BYTES: u64 = 64 << 20;

/// Address space `cpp` may take. Its own use is tens of MB; the cap is the backstop for an
/// include [`check_includes`] cannot see (a macro naming `/dev/zero`), which `cpp` would
/// read without end.
const CPP_ADDRESS_SPACE: u64 = 1 << 30;

/// The include nesting [`check_includes`] follows: `cpp`'s own limit.
const MAX_CPP_DEPTH: usize = 200;

/// Refuses, before `cpp` runs, a file it would read without end or hang on: the main file
/// or an `#include` (followed as `cpp` resolves it: the includer's folder for `"x"`, then
/// the `-I` folders, then the architecture folder) that is not a regular file (`/dev/zero`,
/// `/dev/urandom`, a pipe, a folder) or is over [`MAX_CPP_BYTES`]; the error is at the
/// `#include`. Every `#include` line counts, even one in a group `cpp` would skip: that
/// is a false alarm only for a file no program has reason to name.
fn check_includes(main: &Path, shown: &str, opts: &Options, arch: &Path) -> Result<(), P4Error> {
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![(main.to_path_buf(), shown.to_string(), 0usize)];
    if let Some(why) = not_readable_text(main) {
        return Err(whole_file(shown, why));
    }
    while let Some((path, name, depth)) = todo.pop() {
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(key) || depth > MAX_CPP_DEPTH {
            // cpp reports a deeper nesting itself.
            continue;
        }
        let mut bytes = Vec::new();
        if std::fs::File::open(&path)
            .and_then(|f| {
                use std::io::Read;
                f.take(MAX_CPP_BYTES).read_to_end(&mut bytes)
            })
            .is_err()
        {
            // cpp names a file it cannot read.
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let folder = path.parent().unwrap_or(Path::new(""));
        for (index, line) in text.lines().enumerate() {
            let Some((target, angled, col)) = include_target(line) else {
                continue;
            };
            let target_path = Path::new(target);
            let mut candidates = Vec::new();
            if target_path.is_absolute() {
                candidates.push(target_path.to_path_buf());
            } else {
                if !angled {
                    candidates.push(folder.join(target));
                }
                candidates.extend(opts.include_dirs.iter().map(|d| d.join(target)));
                candidates.push(arch.join(target));
            }
            let Some(found) = candidates.into_iter().find(|c| c.exists()) else {
                continue;
            };
            if let Some(why) = not_readable_text(&found) {
                return Err(P4Error {
                    file: name.clone(),
                    line: index as u32 + 1,
                    col,
                    message: format!("#include of {}: {why}", found.display()),
                });
            }
            let shown = found.display().to_string();
            todo.push((found, shown, depth + 1));
        }
    }
    Ok(())
}

/// Why `cpp` must not read `path` (it exists): not a regular file, or too large.
fn not_readable_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some(
            "not a regular file (a device, pipe or folder): the preprocessor would read it \
             without end or wait on it"
                .to_string(),
        );
    }
    if meta.len() > MAX_CPP_BYTES {
        return Some(format!(
            "larger than {} MiB, the most an input file may hold",
            MAX_CPP_BYTES >> 20
        ));
    }
    None
}

/// Runs `cmd` (`cpp`) with `input` on its standard input, its output read up to
/// [`MAX_CPP_BYTES`] (beyond that the child is killed and the run is an error naming
/// `shown`) and its address space capped at [`CPP_ADDRESS_SPACE`].
fn run_bounded(
    mut cmd: Command,
    input: Option<String>,
    shown: &str,
) -> Result<std::process::Output, P4Error> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    cmd.stdin(if input.is_some() {
        std::process::Stdio::piped()
    } else {
        std::process::Stdio::null()
    });
    cmd.stdout(std::process::Stdio::piped());
    cmd.stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches nothing of the parent's; the
    // closure allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: CPP_ADDRESS_SPACE as libc::rlim_t,
                rlim_max: CPP_ADDRESS_SPACE as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| cpp_spawn_error(shown, e))?;
    // The input is written, and the error stream read, from threads, so that no pipe fills
    // while another is waited on.
    let writer = child.stdin.take().map(|mut stdin| {
        let input = input.unwrap_or_default();
        std::thread::spawn(move || {
            use std::io::Write;
            stdin.write_all(input.as_bytes())
        })
    });
    let mut stderr = child.stderr.take().expect("stderr was piped");
    let errors = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = (&mut stderr).take(1 << 20).read_to_end(&mut bytes);
        // Drain the rest so that cpp never blocks on a full pipe.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        bytes
    });
    let mut stdout = Vec::new();
    let read = child
        .stdout
        .take()
        .expect("stdout was piped")
        .take(MAX_CPP_BYTES + 1)
        .read_to_end(&mut stdout);
    if stdout.len() as u64 > MAX_CPP_BYTES {
        let _ = child.kill();
        let _ = child.wait();
        return Err(whole_file(
            shown,
            format!(
                "the preprocessed program is larger than {} MiB (an include or a macro \
                 without end?)",
                MAX_CPP_BYTES >> 20
            ),
        ));
    }
    let status = child
        .wait()
        .map_err(|e| whole_file(shown, format!("cannot run `cpp`: {e}")))?;
    read.map_err(|e| whole_file(shown, format!("cannot read `cpp`'s output: {e}")))?;
    let stderr = errors.join().unwrap_or_default();
    if let Some(writer) = writer {
        if let Ok(Err(e)) = writer.join() {
            if status.success() {
                return Err(whole_file(shown, format!("cannot feed `cpp`: {e}")));
            }
        }
    }
    Ok(std::process::Output {
        status,
        stdout,
        stderr,
    })
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
    let out = run_bounded(cmd, Some(input), main)?;
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
/// `what` is what needs it, as the error names it.
pub fn cpp_available(what: &str) -> Result<(), String> {
    match Command::new("cpp")
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
    {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{what}: {}", cpp_spawn_error(what, e).message)),
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
                    stderr
                        .lines()
                        .map(str::trim)
                        .find(|l| !l.is_empty())
                        .unwrap_or("no message")
                ) + if stderr.contains("out of memory") {
                    " (the preprocessor may take 1 GiB: does an include name a device such \
                     as /dev/zero?)"
                } else {
                    ""
                },
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

    /// Issue 55: `#include "/dev/zero"` made cpp read without end (24 GB before the
    /// process was stopped). A device is refused at the `#include`; one named through a
    /// macro, which no scan sees, meets cpp's address-space cap; output without end meets
    /// the output cap and the child is killed.
    #[test]
    fn includes_and_output_without_end_are_errors() {
        let dir = std::env::temp_dir().join(format!("t2sim-cpp-bounds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let run_text = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            run(&p, &Options::default())
        };
        let e = run_text("z.p4", "#include <t2na.p4>\n  #include \"/dev/urandom\"\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}:2:3: #include of /dev/urandom: not a regular file (a device, pipe or \
                 folder): the preprocessor would read it without end or wait on it",
                dir.join("z.p4").display()
            )
        );
        // Found in an included file too, through the includer's folder.
        std::fs::write(dir.join("inner.p4"), "#include \"sub\"\n").unwrap();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let e = run_text("outer.p4", "#include \"inner.p4\"\n").unwrap_err();
        assert_eq!(
            (e.file.clone(), e.line, e.col),
            (dir.join("inner.p4").display().to_string(), 1, 1),
            "{e}"
        );
        let e = run(Path::new("/dev/zero"), &Options::default()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/dev/zero:0:0: not a regular file"),
            "{e}"
        );
        let started = std::time::Instant::now();
        let e = run_text("m.p4", "#define F \"/dev/zero\"\n#include F\n").unwrap_err();
        assert!(
            e.message.starts_with("the C preprocessor failed: ")
                && e.message.contains("out of memory")
                && e.message
                    .ends_with("does an include name a device such as /dev/zero?)"),
            "{e}"
        );
        assert_eq!(e.file, dir.join("m.p4").display().to_string());
        // 70 MB from a file of 1 MB included 70 times.
        std::fs::write(dir.join("mb.p4"), "abcdefghij ".repeat(100_000) + "\n").unwrap();
        let text = "#include \"mb.p4\"\n".repeat(70);
        let e = run_text("big.p4", &text).unwrap_err();
        assert_eq!(
            e.message,
            "the preprocessed program is larger than 64 MiB (an include or a macro without end?)"
        );
        assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
        std::fs::remove_dir_all(&dir).ok();
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
