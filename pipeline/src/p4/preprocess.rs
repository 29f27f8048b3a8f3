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
    let whole = |message: String| P4Error {
        file: shown.clone(),
        line: 0,
        col: 0,
        message,
    };
    if !path.is_file() {
        return Err(whole("no such file".to_string()));
    }
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
            return Err(whole(format!("-D `{d}`: expected NAME or NAME=VALUE")));
        }
        cmd.arg(format!("-D{d}"));
    }
    for dir in &opts.include_dirs {
        cmd.arg("-I").arg(dir);
    }
    cmd.arg("-I").arg(super::p4include_dir());
    cmd.arg(path);
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(whole(
                "the C preprocessor `cpp` is not installed (Debian: apt-get install cpp); \
                 P4 programs are preprocessed with it as p4c does"
                    .to_string(),
            ))
        }
        Err(e) => return Err(whole(format!("cannot run `cpp`: {e}"))),
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(cpp_error(&stderr).unwrap_or_else(|| {
            whole(format!(
                "the C preprocessor failed: {}",
                stderr.lines().next().unwrap_or("no message")
            ))
        }));
    }
    let text = String::from_utf8(out.stdout)
        .map_err(|_| whole("the preprocessed program is not UTF-8".to_string()))?;
    Ok(Source {
        text,
        files: vec![shown],
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
}
