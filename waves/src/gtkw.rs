//! GTKWave save files: which signals to show, in which groups and formats, so that
//! `gtkwave dump.vcd dump.gtkw` opens ready to read.
//!
//! The caller decides the groups and their order (the chip orders them as the data flows,
//! `src/chip/trace.rs`); this module writes them with GTKWave's names for the dump's variables
//! ([`gtkwave_var_name`], the rule GTKWave's VCD loader applies) and its trace flags: bits in
//! binary, numbers in decimal, occupancies as analog steps.

use crate::{Signal, SignalKind};
use std::io::{self, BufRead, Write};
use std::path::Path;

/// Trace-format flags of the save file (GTKWave's `TR_*` bits, in hex after `@`):
/// `TR_RJUSTIFY` 0x20 with `TR_BIN` 0x8 or `TR_DEC` 0x4; `TR_ANALOG_STEP` 0x8000;
/// `TR_ANALOG_BLANK_STRETCH` 0x20000 (the extra rows of an analog trace); `TR_BLANK` 0x200
/// with `TR_GRP_BEGIN` 0x800000 or `TR_GRP_END` 0x1000000.
const FMT_BINARY: &str = "@28";
const FMT_DECIMAL: &str = "@24";
const FMT_ANALOG_STEP: &str = "@8024";
const FMT_ANALOG_ROW: &str = "@20000";
const GROUP_BEGIN: &str = "@800200";
const GROUP_END: &str = "@1000200";

/// Rows an analog trace takes in the wave window (its own, then blank stretch rows).
pub const ANALOG_ROWS: usize = 4;

/// How a trace is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Display {
    /// One bit, or a vector in binary.
    Binary,
    /// A number in decimal (or a string as text).
    Decimal,
    /// A number as an analog step plot, [`ANALOG_ROWS`] rows tall (occupancies).
    Analog,
}

/// One trace of a save file: GTKWave's name for the variable, how to show it, and the name to
/// show instead of the variable's own last segment, if any (GTKWave shows only the last
/// segment of a name, so traces of different scopes in one group need an alias to be told
/// apart; an alias must not contain `}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub name: String,
    pub display: Display,
    pub alias: Option<String>,
}

/// A named group of traces, shown opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub title: String,
    pub traces: Vec<Trace>,
}

/// The kind of a VCD variable, as far as GTKWave's naming cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarClass {
    /// `wire`, `reg` and the other bit-vector types: `[msb:lsb]` is added when wider than 1.
    Vector,
    /// `integer`, `real`, `string`, `event` and `parameter`: named without a range (GTKWave
    /// 3.3.118; a `time` is ranged like a vector).
    Unranged,
}

/// How GTKWave names a variable of a VCD dump: its dotted path, plus `[width-1:0]` for a
/// vector type wider than one bit declared without an explicit range. An `integer` is named
/// without a range whatever its width (GTKWave 3.3: `$var integer 64 ! cycle $end` in scope
/// `chip` is `chip.cycle`).
pub fn gtkwave_var_name(path: &str, class: VarClass, width: u32) -> String {
    match class {
        VarClass::Vector if width > 1 => format!("{path}[{}:0]", width - 1),
        _ => path.to_string(),
    }
}

/// How GTKWave names a traced signal (declared by the tracer as `wire` or `string`).
pub fn gtkwave_name(s: &Signal) -> String {
    match s.kind {
        SignalKind::Vector(w) => gtkwave_var_name(&s.path, VarClass::Vector, w as u32),
        SignalKind::Bit | SignalKind::Text => s.path.clone(),
    }
}

/// How GTKWave names the tracer's cycle counter (`<root>.cycle`, a 64-bit `integer`).
pub fn cycle_name(root: &str) -> String {
    gtkwave_var_name(&format!("{root}.cycle"), VarClass::Unranged, 64)
}

/// The names GTKWave gives the variables of the VCD dump read from `dump`, in declaration
/// order, by [`gtkwave_var_name`]'s rule (an explicit index in the declaration is kept as
/// written).
pub fn dump_names(dump: impl BufRead) -> io::Result<Vec<String>> {
    let mut parser = vcd::Parser::new(dump);
    let header = parser.parse_header()?;
    let mut names = Vec::new();
    fn walk(items: &[vcd::ScopeItem], prefix: &str, names: &mut Vec<String>) {
        for item in items {
            match item {
                vcd::ScopeItem::Scope(s) => {
                    walk(&s.items, &format!("{prefix}{}.", s.identifier), names)
                }
                vcd::ScopeItem::Var(v) => {
                    let path = format!("{prefix}{}", v.reference);
                    let class = match v.var_type {
                        vcd::VarType::Integer
                        | vcd::VarType::Real
                        | vcd::VarType::String
                        | vcd::VarType::Event
                        | vcd::VarType::Parameter => VarClass::Unranged,
                        _ => VarClass::Vector,
                    };
                    names.push(match v.index {
                        Some(index) => format!("{path}{index}"),
                        None => gtkwave_var_name(&path, class, v.size),
                    });
                }
                _ => {}
            }
        }
    }
    walk(&header.items, "", &mut names);
    Ok(names)
}

/// GTKWave's zoom level that fits `end_ps` picoseconds into a window about 1000 pixels wide.
/// Zoom `z` shows about `2^-z / 250` ps per pixel (measured on GTKWave 3.3); this is display
/// only, so a float is fine here.
pub fn zoom_to_fit(end_ps: u64) -> f64 {
    -((end_ps.max(1) as f64).log2() - 1.9)
}

/// Writes a save file of the dump at `dump`, zoomed to show the whole run (which ends at
/// `end_ps`): the traces `top` ungrouped first, then `groups` in the order given.
pub fn write_save_file(
    out: &mut impl Write,
    dump: &Path,
    root: &str,
    top: &[Trace],
    groups: &[Group],
    end_ps: u64,
) -> io::Result<()> {
    writeln!(out, "[*] t2sim {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "[dumpfile] \"{}\"", dump.display())?;
    writeln!(out, "[timestart] 0")?;
    writeln!(out, "[size] 1600 1000")?;
    writeln!(out, "[pos] -1 -1")?;
    // Zoom, primary marker (none), then the 26 named markers (none).
    writeln!(out, "*{:.6} -1{}", zoom_to_fit(end_ps), " -1".repeat(26))?;
    writeln!(out, "[treeopen] {root}.")?;
    writeln!(out, "[sst_width] 300")?;
    writeln!(out, "[signals_width] 360")?;
    for t in top {
        write_trace(out, t)?;
    }
    for g in groups {
        writeln!(out, "{GROUP_BEGIN}")?;
        writeln!(out, "-{}", g.title)?;
        for t in &g.traces {
            write_trace(out, t)?;
        }
        writeln!(out, "{GROUP_END}")?;
        writeln!(out, "-{}", g.title)?;
    }
    Ok(())
}

fn write_trace(out: &mut impl Write, t: &Trace) -> io::Result<()> {
    let name = match &t.alias {
        Some(a) => format!("+{{{a}}} {}", t.name),
        None => t.name.clone(),
    };
    match t.display {
        Display::Binary => writeln!(out, "{FMT_BINARY}\n{name}"),
        Display::Decimal => writeln!(out, "{FMT_DECIMAL}\n{name}"),
        Display::Analog => {
            writeln!(out, "{FMT_ANALOG_STEP}\n{name}")?;
            writeln!(out, "{FMT_ANALOG_ROW}")?;
            for _ in 1..ANALOG_ROWS {
                writeln!(out, "-")?;
            }
            Ok(())
        }
    }
}

/// The traces of a save file in order, as (variable name, flags as written after `@`), aliases
/// left out: what GTKWave will show, for checking a save file against the names of its dump.
pub fn save_file_traces(save: &str) -> Vec<(String, String)> {
    let mut flags = String::new();
    let mut out = Vec::new();
    for line in save.lines() {
        if let Some(f) = line.strip_prefix('@') {
            flags = f.to_string();
        } else if line.starts_with(['[', '*', '-']) || line.is_empty() {
            continue;
        } else {
            let name = match line.strip_prefix("+{").and_then(|l| l.split_once("} ")) {
                Some((_, name)) => name,
                None => line,
            };
            out.push((name.to_string(), flags.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_groups_in_the_order_given_with_formats() {
        let t = |name: &str, display| Trace {
            name: name.into(),
            display,
            alias: None,
        };
        let groups = vec![
            Group {
                title: "port8.rx".into(),
                traces: vec![t("chip.port8.rx_pkt[31:0]", Display::Decimal)],
            },
            Group {
                title: "tm".into(),
                traces: vec![
                    Trace {
                        alias: Some("free_cells".into()),
                        ..t("chip.tm.free_cells[18:0]", Display::Analog)
                    },
                    t("chip.tm.pipe0.port8.q0.paused", Display::Binary),
                ],
            },
        ];
        let mut out = Vec::new();
        write_save_file(
            &mut out,
            Path::new("/tmp/d.vcd"),
            "chip",
            &[t(&cycle_name("chip"), Display::Decimal)],
            &groups,
            3_000_000,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let expected_tail = "\
[signals_width] 360
@24
chip.cycle
@800200
-port8.rx
@24
chip.port8.rx_pkt[31:0]
@1000200
-port8.rx
@800200
-tm
@8024
+{free_cells} chip.tm.free_cells[18:0]
@20000
-
-
-
@28
chip.tm.pipe0.port8.q0.paused
@1000200
-tm
";
        assert!(text.starts_with("[*] t2sim"), "{text}");
        assert!(text.contains("[dumpfile] \"/tmp/d.vcd\"\n"), "{text}");
        assert!(text.contains("\n*-19.616531 -1 -1 "), "{text}");
        assert!(text.ends_with(expected_tail), "{text}");
        assert_eq!(
            save_file_traces(&text),
            vec![
                ("chip.cycle".to_string(), "24".to_string()),
                ("chip.port8.rx_pkt[31:0]".into(), "24".into()),
                ("chip.tm.free_cells[18:0]".into(), "8024".into()),
                ("chip.tm.pipe0.port8.q0.paused".into(), "28".into()),
            ]
        );
    }

    #[test]
    fn names_follow_gtkwaves_rule() {
        let dump = b"$timescale 1 ps $end
$scope module chip $end
$var integer 64 ! cycle $end
$var wire 19 \" depth $end
$var wire 1 # bit $end
$var string 1 $ exit $end
$scope module port0 $end
$var wire 8 % rx $end
$var reg 4 & ranged [3:0] $end
$var time 64 ' t $end
$var parameter 8 ( p $end
$upscope $end
$upscope $end
$enddefinitions $end
";
        assert_eq!(
            dump_names(&dump[..]).unwrap(),
            [
                "chip.cycle",
                "chip.depth[18:0]",
                "chip.bit",
                "chip.exit",
                "chip.port0.rx[7:0]",
                "chip.port0.ranged[3:0]",
                "chip.port0.t[63:0]",
                "chip.port0.p",
            ]
        );
    }
}
