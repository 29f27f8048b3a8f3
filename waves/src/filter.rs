//! Glob filters that choose which signals are traced.
//!
//! A filter is a comma-separated list of dotted patterns. In a segment, `*` matches any run of
//! characters and `?` one character; a whole segment `**` matches any number of segments
//! (including none). A pattern selects a signal if it matches the signal's path or the path of
//! one of its enclosing scopes, so `chip.pipe0.ingress.stage0*` selects every signal of stages
//! 00 to 09 and `chip.tm.**` everything under `chip.tm`.

use std::fmt;

/// A filter pattern that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterError {
    pub pattern: String,
    pub problem: &'static str,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace pattern `{}`: {}", self.pattern, self.problem)
    }
}

impl std::error::Error for FilterError {}

/// A set of patterns; a signal is traced if any pattern selects it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFilter {
    patterns: Vec<Vec<String>>,
}

impl TraceFilter {
    /// Parses `a.b.*,c.**`. Whitespace around patterns is ignored.
    pub fn parse(spec: &str) -> Result<TraceFilter, FilterError> {
        let mut patterns = Vec::new();
        for raw in spec.split(',') {
            let p = raw.trim();
            let err = |problem| {
                Err(FilterError {
                    pattern: p.to_string(),
                    problem,
                })
            };
            if p.is_empty() {
                return err("is empty");
            }
            let segments: Vec<String> = p.split('.').map(str::to_string).collect();
            for s in &segments {
                if s.is_empty() {
                    return err("has an empty segment");
                }
                if !s
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '*' | '?'))
                {
                    return err("segments may use only letters, digits, _, * and ?");
                }
                if s.contains("**") && s != "**" {
                    return err("`**` must be a whole segment");
                }
            }
            patterns.push(segments);
        }
        Ok(TraceFilter { patterns })
    }

    /// A filter that selects everything.
    pub fn all() -> TraceFilter {
        TraceFilter {
            patterns: vec![vec!["**".to_string()]],
        }
    }

    /// Whether the dotted `path` is selected: some pattern matches it or a scope above it.
    /// Time is linear in the path for a given pattern (no backtracking), so a hostile
    /// pattern such as `**.**.**...` cannot take exponential time.
    pub fn selects(&self, path: &str) -> bool {
        let segs: Vec<&str> = path.split('.').collect();
        self.patterns.iter().any(|p| match_some_prefix(p, &segs))
    }
}

/// Whether `pattern` matches a non-empty prefix of `path` (`path[..n]`, n >= 1): the pattern
/// run as a set of positions over the segments, one step a segment.
fn match_some_prefix(pattern: &[String], path: &[&str]) -> bool {
    let n = pattern.len();
    // `**` matches zero segments too: a position on one also stands on the next.
    let close = |at: &mut Vec<bool>| {
        for i in 0..n {
            if at[i] && pattern[i] == "**" {
                at[i + 1] = true;
            }
        }
    };
    let mut at = vec![false; n + 1];
    at[0] = true;
    close(&mut at);
    for seg in path {
        let mut next = vec![false; n + 1];
        for i in 0..n {
            if !at[i] {
                continue;
            }
            if pattern[i] == "**" {
                next[i] = true;
            } else if match_glob(pattern[i].as_bytes(), seg.as_bytes()) {
                next[i + 1] = true;
            }
        }
        close(&mut next);
        if next[n] {
            return true;
        }
        if !next.iter().any(|&b| b) {
            return false;
        }
        at = next;
    }
    false
}

/// `*` (any run) and `?` (one byte) against `s`: greedy, going back only to the last `*`,
/// so at most `p.len() x s.len()` steps.
fn match_glob(p: &[u8], s: &[u8]) -> bool {
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < s.len() {
        if i < p.len() && (p[i] == b'?' || (p[i] != b'*' && p[i] == s[j])) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == b'*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_select_signals_and_scopes() {
        let f = TraceFilter::parse("chip.tm.**, chip.pipe0.ingress.stage0*").unwrap();
        assert!(f.selects("chip.tm.pipe1.port3.q0.depth_cells"));
        assert!(f.selects("chip.pipe0.ingress.stage07.valid"));
        assert!(!f.selects("chip.pipe0.ingress.stage10.valid"));
        assert!(!f.selects("chip.pipe1.ingress.stage07.valid"));
        assert!(!f.selects("chip.port3.tx_busy"));
        let g = TraceFilter::parse("chip.port?.tx_busy,**.occupancy").unwrap();
        assert!(g.selects("chip.port3.tx_busy"));
        assert!(!g.selects("chip.port12.tx_busy"));
        assert!(g.selects("chip.pipe2.egress.occupancy"));
        assert!(TraceFilter::all().selects("anything.at.all"));
        let h = TraceFilter::parse("**.q*0.*depth*,a*b?c").unwrap();
        assert!(h.selects("chip.tm.q10.max_depth_cells"));
        assert!(h.selects("chip.tm.q0.depth"));
        assert!(!h.selects("chip.tm.q01.depth"));
        assert!(h.selects("axxbyc.sub"));
        assert!(!h.selects("axxbc"));
        assert!(!h.selects("q0"));
    }

    /// Issue 30 case 6: `**.` x 60 before a segment that never matches took exponential
    /// time; it is now one pass over the name.
    #[test]
    fn hostile_globs_take_linear_time() {
        let p = format!("{}*a*a*a*a*a*a*a*a*b", "**.".repeat(60));
        let f = TraceFilter::parse(&p).unwrap();
        let name = format!("{}.{}", vec!["x"; 60].join("."), "a".repeat(200));
        let t = std::time::Instant::now();
        assert!(!f.selects(&name));
        assert!(f.selects(&format!("{name}b")));
        // Exponential matching took more than a minute; one pass is microseconds even in a
        // debug build on a loaded machine.
        assert!(
            t.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn bad_patterns_are_errors() {
        assert_eq!(TraceFilter::parse("a,,b").unwrap_err().problem, "is empty");
        assert_eq!(
            TraceFilter::parse("chip..tm").unwrap_err().problem,
            "has an empty segment"
        );
        assert_eq!(
            TraceFilter::parse("chip.t m").unwrap_err().pattern,
            "chip.t m"
        );
        assert!(TraceFilter::parse("chip.a**").is_err());
    }
}
