//! The P4-16 lexer: identifiers, integer literals with widths (`8w5`, `16w0x0800`, `4s3`),
//! strings and punctuation, each with its place in the original source. It follows `cpp`'s
//! line markers (`# 12 "file.p4"`), skips comments (`cpp -C` keeps them so columns stay
//! exact) and `#pragma` lines.
//!
//! `>` is always one token, so that `Register<bit<32>, bit<16>>` closes two type argument
//! lists; the parser reads two adjacent `>` as a shift.

use super::ast::Span;
use super::preprocess::Source;
use super::P4Error;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    /// An integer: its value and, when written with one, its width and signedness.
    Int {
        value: u128,
        width: Option<(u32, bool)>,
    },
    Str(String),
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

const PUNCTS: [&str; 38] = [
    "&&&", "|+|", "|-|", "<<", "++", "&&", "||", "==", "!=", "<=", ">=", "..", "{", "}", "(", ")",
    "[", "]", "<", ">", ";", ":", ",", ".", "=", "!", "~", "&", "|", "^", "+", "-", "*", "/", "%",
    "?", "@", "#",
];

/// The tokens of `src`, ending in `Eof`. The files its line markers name are added to
/// `src.files`, so that every later error at a token's span names its file.
pub fn lex(src: &mut Source) -> Result<Vec<Token>, P4Error> {
    let mut files = Source {
        text: String::new(),
        files: src.files.clone(),
    };
    let text = src.text.as_bytes();
    let mut out = Vec::new();
    let (mut file, mut line, mut col) = (0u32, 1u32, 1u32);
    let mut i = 0usize;
    let mut line_start = true;
    while i < text.len() {
        let c = text[i];
        let here = Span {
            file,
            line,
            col,
            pos: i as u32,
        };
        if c == b'\n' {
            i += 1;
            line = line.saturating_add(1);
            col = 1;
            line_start = true;
            continue;
        }
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
            col = col.saturating_add(1);
            continue;
        }
        if line_start && c == b'#' {
            // A line marker `# N "FILE" flags` or a directive cpp passed through.
            let end = text[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |p| i + p);
            let l = std::str::from_utf8(&text[i + 1..end]).unwrap_or("");
            let mut parts = l.trim().splitn(2, ' ');
            let first = parts.next().unwrap_or("");
            if let Ok(n) = first.parse::<u32>() {
                let rest = parts.next().unwrap_or("").trim();
                if let Some(name) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                    file = files.file_id(name);
                }
                // The marker names the number of the line after it.
                line = n.saturating_sub(1);
            } else if first != "pragma" && !first.is_empty() {
                return Err(files.error(
                    here,
                    format!("unexpected preprocessor directive `#{first}` after preprocessing"),
                ));
            }
            i = end;
            continue;
        }
        line_start = false;
        // Comments.
        if c == b'/' && text.get(i + 1) == Some(&b'/') {
            while i < text.len() && text[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && text.get(i + 1) == Some(&b'*') {
            i += 2;
            col = col.saturating_add(2);
            loop {
                if i >= text.len() {
                    return Err(files.error(here, "unterminated comment"));
                }
                if text[i] == b'*' && text.get(i + 1) == Some(&b'/') {
                    i += 2;
                    col = col.saturating_add(2);
                    break;
                }
                if text[i] == b'\n' {
                    line = line.saturating_add(1);
                    col = 1;
                } else {
                    col = col.saturating_add(1);
                }
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            let word = std::str::from_utf8(&text[start..i])
                .unwrap_or("")
                .to_string();
            col = col.saturating_add((i - start) as u32);
            out.push(Token {
                tok: Tok::Ident(word),
                span: here,
            });
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            let word = std::str::from_utf8(&text[start..i]).unwrap_or("");
            col = col.saturating_add((i - start) as u32);
            let (value, width) =
                int_literal(word).map_err(|why| files.error(here, format!("`{word}`: {why}")))?;
            out.push(Token {
                tok: Tok::Int { value, width },
                span: here,
            });
            continue;
        }
        if c == b'"' {
            let start = i + 1;
            i += 1;
            while i < text.len() && text[i] != b'"' && text[i] != b'\n' {
                i += if text[i] == b'\\' { 2 } else { 1 };
            }
            if i >= text.len() || text[i] != b'"' {
                return Err(files.error(here, "unterminated string"));
            }
            let s = std::str::from_utf8(&text[start..i])
                .unwrap_or("")
                .to_string();
            col = col.saturating_add((i + 1 - start + 1) as u32);
            i += 1;
            out.push(Token {
                tok: Tok::Str(s),
                span: here,
            });
            continue;
        }
        let Some(p) = PUNCTS.iter().find(|p| text[i..].starts_with(p.as_bytes())) else {
            let ch = std::str::from_utf8(&text[i..])
                .ok()
                .and_then(|s| s.chars().next())
                .unwrap_or('?');
            return Err(files.error(here, format!("unexpected character `{ch}`")));
        };
        i += p.len();
        col = col.saturating_add(p.len() as u32);
        out.push(Token {
            tok: Tok::Punct(p),
            span: here,
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span {
            file,
            line,
            col,
            pos: text.len() as u32,
        },
    });
    src.files = files.files;
    Ok(out)
}

/// Parses `123`, `0x7f`, `0b101`, `0o17`, `8w5`, `16w0x0800`, `4s3` (underscores allowed).
fn int_literal(word: &str) -> Result<(u128, Option<(u32, bool)>), String> {
    let digits_end = word
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(word.len());
    let (width, body) = match word[digits_end..].chars().next() {
        Some(k @ ('w' | 's')) if digits_end > 0 => {
            let w: u32 = word[..digits_end]
                .parse()
                .map_err(|_| "width is not a number".to_string())?;
            if w == 0 || w > 128 {
                return Err(format!("width {w} is outside 1..=128"));
            }
            (Some((w, k == 's')), &word[digits_end + 1..])
        }
        _ => (None, word),
    };
    let clean: String = body.chars().filter(|&c| c != '_').collect();
    let (radix, digits) = match clean.get(..2) {
        Some("0x") | Some("0X") => (16, &clean[2..]),
        Some("0b") | Some("0B") => (2, &clean[2..]),
        Some("0o") | Some("0O") => (8, &clean[2..]),
        Some("0d") | Some("0D") => (10, &clean[2..]),
        _ => (10, &clean[..]),
    };
    if digits.is_empty() {
        return Err("no digits".to_string());
    }
    let value = u128::from_str_radix(digits, radix).map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => "does not fit in 128 bits".to_string(),
        _ => "not an integer literal".to_string(),
    })?;
    if let Some((w, _)) = width {
        if w < 128 && value >> w != 0 {
            return Err(format!("value does not fit in {w} bits"));
        }
    }
    Ok((value, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(int_literal("8w5"), Ok((5, Some((8, false)))));
        assert_eq!(int_literal("16w0x0800"), Ok((0x800, Some((16, false)))));
        assert_eq!(int_literal("0x1_F"), Ok((31, None)));
        assert_eq!(int_literal("4s3"), Ok((3, Some((4, true)))));
        assert_eq!(int_literal("0b101"), Ok((5, None)));
        assert!(int_literal("8w256").is_err());
        assert!(int_literal("12ab").is_err());
    }

    #[test]
    fn markers_set_file_and_line() {
        let mut src = Source::plain(
            "main.p4",
            "# 1 \"main.p4\"\nx\n# 7 \"inc/a.p4\" 1\n  y >>= 1 // c\n/* a\n b */ z\n",
        );
        let t = lex(&mut src).unwrap();
        let at = |k: usize| (t[k].span.file, t[k].span.line, t[k].span.col);
        assert_eq!(at(0), (0, 1, 1));
        assert_eq!(at(1), (1, 7, 3));
        assert_eq!(t[2].tok, Tok::Punct(">"));
        assert_eq!(t[3].tok, Tok::Punct(">="));
        assert_eq!(at(5), (1, 9, 7));
    }
}
