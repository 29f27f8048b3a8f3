//! Figures over several seeds: the mean of each figure and its 95% confidence interval, as a
//! paper reports a result it ran more than once.
//!
//! The interval is Student's t: mean +- t(0.975, n - 1) x s / sqrt(n), with s the sample
//! standard deviation (n - 1 in the denominator). With the 3-5 seeds a run here can afford,
//! the normal 1.96 would understate the interval by a factor of up to 2.2 (t = 4.303 at
//! n = 3), so the t quantile is used for every n; one seed has no interval.
//!
//! [`over_seeds`] turns a sweep whose grid has a `seed` axis into one row per point of the
//! other axes, each figure column as its mean and half-width (`sweep_seeds.csv`).

use crate::study::sweep::Sweep;
use std::collections::BTreeMap;
use std::fmt::Write as _;

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

/// A sweep's rows grouped over its `seed` axis: for each point of the other axes (in the
/// order of its first row), every figure column as `mean` and `ci95` over the seeds (two
/// columns each), `n` the seeds with a value. A column that is not a number in every row
/// (the fit's verdict) keeps its value when all rows agree, else is left empty. Fails
/// when the grid has no `seed` axis.
pub fn over_seeds(sweep: &Sweep) -> Result<String, String> {
    let axes = &sweep.info.grid;
    let Some(seed_axis) = axes.iter().position(|a| a.key == "seed") else {
        return Err("statistics over seeds need a --grid seed=... axis".into());
    };
    let header = csv_fields(&sweep.header);
    // Columns: point, the axes, then the figures.
    let first_figure = 1 + axes.len();
    let mut groups: Vec<(Vec<String>, Vec<Vec<String>>)> = Vec::new();
    let mut at: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for (_, line) in &sweep.rows {
        let f = csv_fields(line);
        if f.len() != header.len() {
            return Err(format!(
                "sweep row `{line}` has {} fields, the header {}",
                f.len(),
                header.len()
            ));
        }
        let key: Vec<String> = (0..axes.len())
            .filter(|&i| i != seed_axis)
            .map(|i| f[1 + i].clone())
            .collect();
        let i = *at.entry(key.clone()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(f);
    }
    let names: Vec<&str> = axes
        .iter()
        .filter(|a| a.key != "seed")
        .map(|a| a.key.as_str())
        .collect();
    let groups: Vec<(Vec<String>, Vec<Vec<String>>)> = groups
        .into_iter()
        .map(|(key, rows)| {
            (
                key,
                rows.into_iter()
                    .map(|r| r[first_figure..].to_vec())
                    .collect(),
            )
        })
        .collect();
    Ok(mean_table(&names, &header[first_figure..], &groups))
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
