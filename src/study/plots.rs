//! Pictures of runs and comparisons, as SVG (drawn with `plotters`; text is left to the
//! viewer's sans-serif font, so the files open in any browser):
//! - `slowdown_by_size.svg`: p99 FCT slowdown per flow-size bucket, a line per scheme;
//! - `fct_cdf.svg`: the CDF of FCT slowdown over completed flows, a line per scheme;
//! - `queue_hottest_port.svg`: the depth of the switch port whose queue got deepest, over
//!   time (sampled every `output.queue_sample_ns`), a line per scheme;
//! - `pauses_over_time.svg`: pause frames (PFC sent by switches, BFC received by hosts) in
//!   each sampling interval, a line per scheme.
//!
//! A single run draws the same three with one line. The same results give the same bytes.

use crate::scenario::RunResults;
use crate::study::compare::{bucket_label, Comparison};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

const SIZE: (u32, u32) = (800, 500);

/// Line colours, in scheme order (cycled past eight).
const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// One named line of points.
struct Line {
    name: String,
    points: Vec<(f64, f64)>,
}

fn err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: cannot draw: {e}", path.display())
}

/// Draws `lines` into `path` with axis descriptions; `x_labels` names x positions
/// 0, 1, 2... instead of numbers when given.
fn draw(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    x_labels: Option<&[String]>,
) -> Result<(), String> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let points = lines.iter().flat_map(|l| l.points.iter());
    let (mut x_max, mut y_max) = (0f64, 0f64);
    for &(x, y) in points {
        x_max = x_max.max(x);
        y_max = y_max.max(y);
    }
    let (x_min, x_max) = match x_labels {
        // Categories sit at 0, 1, ... with half a step of room on each side.
        Some(l) => (-0.5, l.len() as f64 - 0.5),
        None if x_max > 0.0 => (0.0, x_max * 1.05),
        None => (0.0, 1.0),
    };
    let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(x_min..x_max, 0f64..y_max)
        .map_err(|e| err(path, e))?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc).y_desc(y_desc);
    let names: Vec<String> = x_labels.map(|l| l.to_vec()).unwrap_or_default();
    let label = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < names.len() {
            names[i as usize].clone()
        } else if names.is_empty() {
            format!("{x}")
        } else {
            String::new()
        }
    };
    if let Some(l) = x_labels {
        mesh.x_labels(l.len() * 2 + 1).disable_x_mesh();
    }
    mesh.x_label_formatter(&label)
        .draw()
        .map_err(|e| err(path, e))?;
    for (i, line) in lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(
                line.points.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(|e| err(path, e))?
            .label(line.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        if x_labels.is_some() {
            // Categories may have a single point: mark every one.
            chart
                .draw_series(PointSeries::of_element(
                    line.points.iter().copied(),
                    4,
                    colour.filled(),
                    &|c, s, st| Circle::new(c, s, st),
                ))
                .map_err(|e| err(path, e))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))?;
    Ok(())
}

/// p99 slowdown per bucket (the `all` bucket left out), x = bucket index.
fn slowdown_line(name: &str, r: &RunResults) -> Line {
    Line {
        name: name.to_string(),
        points: r
            .buckets
            .iter()
            .filter(|b| !(b.lower == 0 && b.upper.is_none()))
            .enumerate()
            .filter_map(|(i, b)| b.p99_slowdown.map(|s| (i as f64, s)))
            .collect(),
    }
}

/// The CDF of slowdown over completed flows: (slowdown, share of flows at or below it).
fn cdf_line(name: &str, r: &RunResults) -> Line {
    let mut s: Vec<f64> = r.records.iter().filter_map(|f| f.slowdown()).collect();
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    Line {
        name: name.to_string(),
        points: s
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, (i + 1) as f64 / n))
            .collect(),
    }
}

/// The depth over time (us) of switch `port` of switch `switch`, all queues together.
fn queue_line(name: &str, r: &RunResults, hot: (usize, usize)) -> Line {
    let mut at: BTreeMap<u64, u64> = BTreeMap::new();
    if let Some(period) = r.queue_sample_ns {
        let last = r.queue_samples.last().map_or(0, |q| q.time_ns);
        let mut t = 0;
        while t <= last {
            at.insert(t, 0);
            t += period;
        }
    }
    for q in r.queue_samples.iter().filter(|q| (q.switch, q.port) == hot) {
        *at.entry(q.time_ns).or_insert(0) += q.depth_cells as u64;
    }
    Line {
        name: name.to_string(),
        points: at
            .into_iter()
            .map(|(t, d)| (t as f64 / 1000.0, d as f64))
            .collect(),
    }
}

/// Pause frames in each sampling interval, at the interval's end (us).
fn pause_line(name: &str, r: &RunResults) -> Line {
    let mut last = 0;
    Line {
        name: name.to_string(),
        points: r
            .pause_samples
            .iter()
            .map(|&(t, so_far)| {
                let n = so_far - last;
                last = so_far;
                (t as f64 / 1000.0, n as f64)
            })
            .collect(),
    }
}

/// The switch port whose summed queue depth got highest over `runs` (ties: the first).
fn hottest(runs: &[&RunResults]) -> Option<(usize, usize)> {
    let mut depth: BTreeMap<(u64, usize, usize), u64> = BTreeMap::new();
    let mut best: Option<((usize, usize), u64)> = None;
    for r in runs {
        depth.clear();
        for q in &r.queue_samples {
            *depth.entry((q.time_ns, q.switch, q.port)).or_insert(0) += q.depth_cells as u64;
        }
        for (&(_, s, p), &d) in &depth {
            if best.is_none_or(|(_, b)| d > b) {
                best = Some(((s, p), d));
            }
        }
    }
    best.map(|b| b.0)
}

/// The three pictures of named runs into `dir`; returns the files written.
fn pictures(named: &[(&str, &RunResults)], dir: &Path, what: &str) -> Result<Vec<String>, String> {
    let mut written = Vec::new();
    let Some((_, first)) = named.first() else {
        return Ok(written);
    };
    let labels: Vec<String> = first
        .buckets
        .iter()
        .filter(|b| !(b.lower == 0 && b.upper.is_none()))
        .map(bucket_label)
        .collect();
    let p = dir.join("slowdown_by_size.svg");
    let lines: Vec<Line> = named.iter().map(|(n, r)| slowdown_line(n, r)).collect();
    draw(
        &p,
        &format!("p99 FCT slowdown by flow size: {what}"),
        "flow size",
        "p99 FCT slowdown",
        &lines,
        Some(&labels),
    )?;
    written.push(p.display().to_string());
    let p = dir.join("fct_cdf.svg");
    let lines: Vec<Line> = named.iter().map(|(n, r)| cdf_line(n, r)).collect();
    draw(
        &p,
        &format!("CDF of FCT slowdown: {what}"),
        "FCT slowdown",
        "share of completed flows",
        &lines,
        None,
    )?;
    written.push(p.display().to_string());
    let runs: Vec<&RunResults> = named.iter().map(|(_, r)| *r).collect();
    if let Some(hot) = hottest(&runs) {
        let p = dir.join("queue_hottest_port.svg");
        let lines: Vec<Line> = named.iter().map(|(n, r)| queue_line(n, r, hot)).collect();
        draw(
            &p,
            &format!("queue depth at switch{}.port{}: {what}", hot.0, hot.1),
            "time (us)",
            "cells (all queues of the port)",
            &lines,
            None,
        )?;
        written.push(p.display().to_string());
    }
    if named.iter().any(|(_, r)| !r.pause_samples.is_empty()) {
        let p = dir.join("pauses_over_time.svg");
        let lines: Vec<Line> = named.iter().map(|(n, r)| pause_line(n, r)).collect();
        draw(
            &p,
            &format!("pause frames per sampling interval: {what}"),
            "time (us)",
            "pause frames (PFC sent + BFC received)",
            &lines,
            None,
        )?;
        written.push(p.display().to_string());
    }
    Ok(written)
}

/// The pictures of a comparison, a line per scheme.
pub fn comparison(c: &Comparison, dir: &Path) -> Result<Vec<String>, String> {
    let named: Vec<(&str, &RunResults)> = c
        .runs
        .iter()
        .map(|r| (r.scheme.as_str(), &r.results))
        .collect();
    pictures(&named, dir, &c.scenario)
}

/// The pictures of one run.
pub fn run(r: &RunResults, dir: &Path) -> Result<Vec<String>, String> {
    pictures(&[(r.name.as_str(), r)], dir, &r.name)
}
