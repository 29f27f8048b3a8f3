//! Pictures of runs and comparisons, as SVG (drawn with `plotters`; text is left to the
//! viewer's sans-serif font, so the files open in any browser):
//! - `slowdown_by_size.svg`: p99 FCT slowdown per flow-size bucket, grouped bars (a bar per
//!   scheme) on a log axis;
//! - `slowdown_by_size_decile.svg`: p99 FCT slowdown per flow-size decile of the flows run
//!   (BFC's paper's x axis), a line per scheme, log y;
//! - `fct_cdf.svg`: the CDF of FCT slowdown over completed flows, a line per scheme, log x;
//! - `queue_hottest_port.svg`: the depth of the switch port whose queue got deepest, over
//!   time (sampled every `output.queue_sample_ns`), a line per scheme;
//! - `pauses_over_time.svg`: pause frames (PFC sent by switches, BFC received by hosts) in
//!   each sampling interval, a line per scheme.
//!
//! Schemes keep apart by colour (12), marker (4) and dash (3); legends sit in a column right
//! of the plot, never over the data. A single run draws the same pictures with one line.
//! The same results give the same bytes.

use crate::scenario::RunResults;
use crate::study::stats::bucket_label;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

const SIZE: (u32, u32) = (900, 500);

/// Width of the legend column right of the plot, pixels: legends never cover data.
const LEGEND_WIDTH: u32 = 170;

/// Twelve colours that stay apart (Tableau 10, then black and olive), in scheme order; with
/// the marker and dash of [`style`], 10 or more schemes remain distinguishable in print.
const COLOURS: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(128, 128, 0),
];

/// Line k's look: its colour, its marker (0 filled circle, 1 filled triangle, 2 cross,
/// 3 hollow circle) and its dash (0 solid, 1 dashed, 2 dotted), each cycling at its own
/// period so neighbours differ in all three.
fn style(k: usize) -> (RGBColor, usize, usize) {
    (COLOURS[k % COLOURS.len()], k % 4, (k / 4) % 3)
}

/// One named line of points.
struct Line {
    name: String,
    points: Vec<(f64, f64)>,
}

fn err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: cannot draw: {e}", path.display())
}

/// The legend, one entry per line (its colour, marker and dash), in the column right of
/// the plot.
fn legend(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    names: &[String],
    path: &Path,
) -> Result<(), String> {
    for (k, name) in names.iter().enumerate() {
        let (colour, marker, dash) = style(k);
        let y = 60 + 22 * k as i32;
        let seg: Vec<(i32, i32)> = vec![(8, y), (40, y)];
        match dash {
            0 => area.draw(&PathElement::new(seg, colour.stroke_width(2))),
            1 => area
                .draw(&PathElement::new(
                    vec![(8, y), (18, y)],
                    colour.stroke_width(2),
                ))
                .and_then(|_| {
                    area.draw(&PathElement::new(
                        vec![(24, y), (34, y)],
                        colour.stroke_width(2),
                    ))
                }),
            _ => (0..4).try_for_each(|i| {
                area.draw(&PathElement::new(
                    vec![(8 + 9 * i, y), (11 + 9 * i, y)],
                    colour.stroke_width(2),
                ))
            }),
        }
        .map_err(|e| err(path, e))?;
        draw_marker(area, (24, y), marker, colour).map_err(|e| err(path, e))?;
        area.draw(&Text::new(
            name.clone(),
            (48, y - 7),
            ("sans-serif", 14).into_font().color(&BLACK),
        ))
        .map_err(|e| err(path, e))?;
    }
    Ok(())
}

/// One marker at a pixel.
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    at: (i32, i32),
    marker: usize,
    colour: RGBColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    match marker {
        0 => area.draw(&Circle::new(at, 4, colour.filled())),
        1 => area.draw(&TriangleMarker::new(at, 5, colour.filled())),
        2 => area.draw(&Cross::new(at, 4, colour.stroke_width(2))),
        _ => area.draw(&Circle::new(at, 4, colour.stroke_width(2))),
    }
}

/// How an axis is drawn.
#[derive(Clone, Copy, PartialEq)]
enum Scale {
    Linear,
    /// Logarithmic, for values that span decades (slowdowns).
    Log,
}

/// Draws `lines` into `path`: a line per entry in its [`style`], every point marked when
/// there are few (`mark_every` otherwise), the legend outside the plot. `x_labels` names x
/// positions 0, 1, 2... when given.
#[allow(clippy::too_many_arguments)]
fn draw(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    x_labels: Option<&[String]>,
    x_scale: Scale,
    y_scale: Scale,
) -> Result<(), String> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let (plot, side) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let (mut lo, mut hi) = ((f64::MAX, f64::MAX), (0f64, 0f64));
    for &(x, y) in lines.iter().flat_map(|l| l.points.iter()) {
        lo = (lo.0.min(x), lo.1.min(y));
        hi = (hi.0.max(x), hi.1.max(y));
    }
    let range = |scale: Scale, lo: f64, hi: f64| -> (f64, f64) {
        match scale {
            // A decade-aligned range around the data, at least one decade.
            Scale::Log => {
                let lo = if lo.is_finite() && lo > 0.0 && lo != f64::MAX {
                    lo
                } else {
                    1.0
                };
                let hi = hi.max(lo * 10.0);
                (
                    10f64.powf(lo.log10().floor()),
                    10f64.powf(hi.log10().ceil()),
                )
            }
            Scale::Linear => (0.0, if hi > 0.0 { hi * 1.1 } else { 1.0 }),
        }
    };
    let (x_min, x_max) = match x_labels {
        // Categories sit at 0, 1, ... with half a step of room on each side.
        Some(l) => (-0.5, l.len() as f64 - 0.5),
        None => range(x_scale, lo.0, hi.0),
    };
    let (y_min, y_max) = range(y_scale, lo.1, hi.1);
    let names: Vec<String> = x_labels.map(|l| l.to_vec()).unwrap_or_default();
    let category = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < names.len() {
            names[i as usize].clone()
        } else {
            String::new()
        }
    };
    let number = |v: &f64| {
        if v.abs() >= 1000.0 {
            format!("{v:.0}")
        } else if v.abs() < 0.01 && *v != 0.0 {
            format!("{v:.0e}")
        } else {
            format!("{}", (v * 1000.0).round() / 1000.0)
        }
    };
    macro_rules! body {
        ($chart:expr) => {{
            let mut chart = $chart;
            let mut mesh = chart.configure_mesh();
            mesh.x_desc(x_desc)
                .y_desc(y_desc)
                .y_label_formatter(&number);
            if let Some(l) = x_labels {
                mesh.x_labels(l.len() * 2 + 1)
                    .disable_x_mesh()
                    .x_label_formatter(&category);
            } else {
                mesh.x_label_formatter(&number);
            }
            mesh.draw().map_err(|e| err(path, e))?;
            for (k, line) in lines.iter().enumerate() {
                let (colour, marker, dash) = style(k);
                let pts = line.points.iter().copied();
                match dash {
                    0 => chart
                        .draw_series(LineSeries::new(pts, colour.stroke_width(2)))
                        .map(|_| ()),
                    1 => chart
                        .draw_series(DashedLineSeries::new(pts, 8, 5, colour.stroke_width(2)))
                        .map(|_| ()),
                    _ => chart
                        .draw_series(DashedLineSeries::new(pts, 2, 4, colour.stroke_width(2)))
                        .map(|_| ()),
                }
                .map_err(|e| err(path, e))?;
                // Few points: mark each; many (a CDF): about 8 marks along the line.
                let step = (line.points.len() / 8).max(1);
                let marks = line.points.iter().copied().step_by(step);
                match marker {
                    0 => {
                        chart
                            .draw_series(marks.map(|p| {
                                EmptyElement::at(p) + Circle::new((0, 0), 4, colour.filled())
                            }))
                            .map(|_| ())
                    }
                    1 => chart
                        .draw_series(marks.map(|p| {
                            EmptyElement::at(p) + TriangleMarker::new((0, 0), 5, colour.filled())
                        }))
                        .map(|_| ()),
                    2 => chart
                        .draw_series(marks.map(|p| {
                            EmptyElement::at(p) + Cross::new((0, 0), 4, colour.stroke_width(2))
                        }))
                        .map(|_| ()),
                    _ => chart
                        .draw_series(marks.map(|p| {
                            EmptyElement::at(p) + Circle::new((0, 0), 4, colour.stroke_width(2))
                        }))
                        .map(|_| ()),
                }
                .map_err(|e| err(path, e))?;
            }
        }};
    }
    let mut builder = ChartBuilder::on(&plot);
    builder
        .caption(title, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65);
    match (x_scale, y_scale) {
        (Scale::Linear, Scale::Linear) => body!(builder
            .build_cartesian_2d(x_min..x_max, y_min..y_max)
            .map_err(|e| err(path, e))?),
        (Scale::Linear, Scale::Log) => body!(builder
            .build_cartesian_2d(x_min..x_max, (y_min..y_max).log_scale())
            .map_err(|e| err(path, e))?),
        (Scale::Log, Scale::Linear) => body!(builder
            .build_cartesian_2d((x_min..x_max).log_scale(), y_min..y_max)
            .map_err(|e| err(path, e))?),
        (Scale::Log, Scale::Log) => body!(builder
            .build_cartesian_2d((x_min..x_max).log_scale(), (y_min..y_max).log_scale())
            .map_err(|e| err(path, e))?),
    }
    let names: Vec<String> = lines.iter().map(|l| l.name.clone()).collect();
    legend(&side, &names, path)?;
    root.present().map_err(|e| err(path, e))?;
    Ok(())
}

/// Grouped bars: for each category (a flow-size bucket) one bar per line (scheme), on a log
/// axis from 1 (a slowdown is at least 1), the legend outside.
fn bars(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    x_labels: &[String],
) -> Result<(), String> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let (plot, side) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let hi = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(1f64, f64::max);
    let y_max = 10f64.powf(hi.log10().ceil().max(1.0));
    let names: Vec<String> = x_labels.to_vec();
    let category = move |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < names.len() {
            names[i as usize].clone()
        } else {
            String::new()
        }
    };
    let number = |v: &f64| format!("{}", (v * 1000.0).round() / 1000.0);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(-0.5..x_labels.len() as f64 - 0.5, (1f64..y_max).log_scale())
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(x_labels.len() * 2 + 1)
        .disable_x_mesh()
        .x_label_formatter(&category)
        .y_label_formatter(&number)
        .draw()
        .map_err(|e| err(path, e))?;
    let n = lines.len().max(1) as f64;
    let width = 0.8 / n;
    for (k, line) in lines.iter().enumerate() {
        let (colour, _, _) = style(k);
        let x0 = -0.4 + k as f64 * width;
        chart
            .draw_series(line.points.iter().map(|&(x, y)| {
                Rectangle::new(
                    [(x + x0, 1.0), (x + x0 + width * 0.9, y.max(1.0))],
                    colour.filled(),
                )
            }))
            .map_err(|e| err(path, e))?;
    }
    let names: Vec<String> = lines.iter().map(|l| l.name.clone()).collect();
    legend(&side, &names, path)?;
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

/// p99 slowdown per flow-size decile, at the share of flows (%) up to the decile's end
/// (deciles that fall on one size are merged, so their point sits where their flows end).
fn decile_line(name: &str, r: &RunResults) -> Line {
    let total = r.size_deciles.iter().map(|b| b.flows).sum::<usize>().max(1) as f64;
    let mut upto = 0;
    Line {
        name: name.to_string(),
        points: r
            .size_deciles
            .iter()
            .filter_map(|b| {
                upto += b.flows;
                b.p99_slowdown.map(|s| (100.0 * upto as f64 / total, s))
            })
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

/// The pause plot's y axis: PFC frames sent and the schemes' pause frames received
/// (`crate::schemes::PAUSES`), as the pause counts sum them.
fn pause_axis() -> String {
    let mut parts = vec!["PFC sent"];
    parts.extend(crate::schemes::PAUSES.iter().map(|k| k.label));
    format!("pause frames per interval ({})", parts.join(" + "))
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

/// The pictures of named runs into `dir` (a comparison's, a line per scheme; `what` names
/// the scenario in their titles); returns the files written.
pub fn pictures(
    named: &[(&str, &RunResults)],
    dir: &Path,
    what: &str,
) -> Result<Vec<String>, String> {
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
    bars(
        &p,
        &format!("p99 FCT slowdown by flow size: {what}"),
        "flow size (bytes)",
        "p99 FCT slowdown (FCT / ideal FCT, log)",
        &lines,
        &labels,
    )?;
    written.push(p.display().to_string());
    let p = dir.join("slowdown_by_size_decile.svg");
    let lines: Vec<Line> = named.iter().map(|(n, r)| decile_line(n, r)).collect();
    draw(
        &p,
        &format!("p99 FCT slowdown by flow-size decile: {what}"),
        "flows up to this size (% of the flows run; a point per size decile)",
        "p99 FCT slowdown (log)",
        &lines,
        None,
        Scale::Linear,
        Scale::Log,
    )?;
    written.push(p.display().to_string());
    let p = dir.join("fct_cdf.svg");
    let lines: Vec<Line> = named.iter().map(|(n, r)| cdf_line(n, r)).collect();
    draw(
        &p,
        &format!("CDF of FCT slowdown: {what}"),
        "FCT slowdown (FCT / ideal FCT, log)",
        "share of completed flows",
        &lines,
        None,
        Scale::Log,
        Scale::Linear,
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
            "depth (176-byte cells, all queues of the port)",
            &lines,
            None,
            Scale::Linear,
            Scale::Linear,
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
            &pause_axis(),
            &lines,
            None,
            Scale::Linear,
            Scale::Linear,
        )?;
        written.push(p.display().to_string());
    }
    Ok(written)
}

/// The pictures of one run.
pub fn run(r: &RunResults, dir: &Path) -> Result<Vec<String>, String> {
    pictures(&[(r.name.as_str(), r)], dir, &r.name)
}
