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

    /// Whether the dotted `path` is selected.
    pub fn selects(&self, path: &str) -> bool {
        let segs: Vec<&str> = path.split('.').collect();
        self.patterns
            .iter()
            .any(|p| (1..=segs.len()).any(|n| match_segments(p, &segs[..n])))
    }
}

fn match_segments(pattern: &[String], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=path.len()).any(|skip| match_segments(rest, &path[skip..]))
        }
        Some((first, rest)) => match path.split_first() {
            Some((seg, tail)) => {
                match_glob(first.as_bytes(), seg.as_bytes()) && match_segments(rest, tail)
            }
            None => false,
        },
    }
}

fn match_glob(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|k| match_glob(rest, &s[k..])),
        Some((b'?', rest)) => !s.is_empty() && match_glob(rest, &s[1..]),
        Some((c, rest)) => s.first() == Some(c) && match_glob(rest, &s[1..]),
    }
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
