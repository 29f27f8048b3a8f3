//! Figures over several seeds: the mean of each figure and its 95% confidence interval, as a
//! paper reports a result it ran more than once.
//!
//! The interval is Student's t: mean +- t(0.975, n - 1) x s / sqrt(n), with s the sample
//! standard deviation (n - 1 in the denominator). With the 3-5 seeds a run here can afford,
//! the normal 1.96 would understate the interval by a factor of up to 2.2 (t = 4.303 at
//! n = 3), so the t quantile is used for every n; one seed has no interval.
//!
//! [`mean_table`] turns rows of figures grouped by a key into one row per group, each figure
//! column as its mean and half-width (a sweep's `sweep_seeds.csv`, a comparison over seeds);
//! [`bucket_label`] names a flow-size bucket in the tables and plots.

use std::fmt::Write as _;
use t2_testbench::metrics::BucketStats;

/// t(0.975, df) for df = 1..=30 (two-sided 95%), from the standard table.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom (df >= 1): the
/// table up to 30; between the table's rows 30, 40, 60 and 120 the value of the row below
/// (fewer degrees of freedom, so the interval errs wide); beyond 120 the value at 120.
pub fn t_975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T_975[df - 1],
        31..=40 => 2.042,
        41..=60 => 2.021,
        61..=120 => 2.000,
        _ => 1.980,
    }
}

/// A figure over several runs: how many, their mean, and the half-width of its 95% interval
/// (`None` for one run).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct MeanCi {
    pub n: usize,
    pub mean: f64,
    pub ci95: Option<f64>,
}

impl MeanCi {
    /// Of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<MeanCi> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let ci95 = (n > 1).then(|| {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            t_975(n - 1) * (var / n as f64).sqrt()
        });
        Some(MeanCi { n, mean, ci95 })
    }

    /// `mean +- half` (or the mean alone for one run), to `digits` decimals.
    pub fn show(&self, digits: usize) -> String {
        match self.ci95 {
            Some(h) => format!("{:.*} +- {:.*}", digits, self.mean, digits, h),
            None => format!("{:.*}", digits, self.mean),
        }
    }
}

/// Splits one CSV line into fields (quotes as `sweep` and `compare` write them).
pub fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// The CSV of figures over seeds: the key columns `key_names` and `seeds`, then for each of
/// `figures` its `mean` and `ci95`; one line per group (its key's values, and one row of
/// figure cells per seed). A column that is not a number in every row (the fit's verdict)
/// keeps its value when all rows agree, else is left empty.
pub fn mean_table(
    key_names: &[&str],
    figures: &[String],
    groups: &[(Vec<String>, Vec<Vec<String>>)],
) -> String {
    let mut s = String::new();
    let _ = write!(s, "{}", key_names.join(","));
    if !key_names.is_empty() {
        s.push(',');
    }
    s.push_str("seeds");
    for h in figures {
        let _ = write!(s, ",{h}.mean,{h}.ci95");
    }
    s.push('\n');
    for (key, rows) in groups {
        let quoted: Vec<String> = key
            .iter()
            .map(|v| {
                if v.contains([',', '"']) {
                    format!("\"{}\"", v.replace('"', "\"\""))
                } else {
                    v.clone()
                }
            })
            .collect();
        let _ = write!(s, "{}", quoted.join(","));
        if !key.is_empty() {
            s.push(',');
        }
        let _ = write!(s, "{}", rows.len());
        for c in 0..figures.len() {
            let cells: Vec<&str> = rows.iter().map(|r| r[c].as_str()).collect();
            let numbers: Vec<f64> = cells.iter().filter_map(|v| v.parse().ok()).collect();
            if numbers.len() == cells.iter().filter(|v| !v.is_empty()).count()
                && !numbers.is_empty()
            {
                let m = MeanCi::of(&numbers).expect("values");
                let _ = write!(
                    s,
                    ",{:.6},{}",
                    m.mean,
                    m.ci95.map_or(String::new(), |h| format!("{h:.6}"))
                );
            } else if cells.iter().all(|v| *v == cells[0]) {
                let _ = write!(s, ",{},", cells[0]);
            } else {
                s.push_str(",,");
            }
        }
        s.push('\n');
    }
    s
}

/// A bucket's label: `<10000 B`, `10000..100000 B`, `>=1000000 B`, `all`.
pub fn bucket_label(b: &BucketStats) -> String {
    match (b.lower, b.upper) {
        (0, None) => "all".to_string(),
        (0, Some(hi)) => format!("<{hi} B"),
        (lo, None) => format!(">={lo} B"),
        (lo, Some(hi)) => format!("{lo}..{hi} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_student_t_interval() {
        // 1, 2, 3: mean 2, s = 1, half-width t(0.975, 2) x 1 / sqrt(3) = 4.303 / 1.7320508.
        let m = MeanCi::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(m.n, 3);
        assert_eq!(m.mean, 2.0);
        let h = m.ci95.unwrap();
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-12, "{h}");
        assert_eq!(m.show(2), "2.00 +- 2.48");
        let one = MeanCi::of(&[5.0]).unwrap();
        assert_eq!((one.mean, one.ci95), (5.0, None));
        assert_eq!(one.show(1), "5.0");
        assert_eq!(MeanCi::of(&[]), None);
        // Equal values: a zero interval.
        assert_eq!(MeanCi::of(&[4.0, 4.0]).unwrap().ci95, Some(0.0));
        assert_eq!(t_975(1), 12.706);
        assert_eq!(t_975(4), 2.776);
        assert_eq!(t_975(1000), 1.980);
    }

    #[test]
    fn csv_fields_keep_quoted_commas() {
        assert_eq!(csv_fields("1,\"a,b\",c"), ["1", "a,b", "c"]);
        assert_eq!(csv_fields("\"x\"\"y\","), ["x\"y", ""]);
    }
}
