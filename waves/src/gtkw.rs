//! GTKWave save files: which signals to show, in which groups and formats, so that
//! `gtkwave dump.vcd dump.gtkw` opens ready to read.
//!
//! Signals are grouped by their enclosing scope (a stage, a queue, a port), groups appear in
//! path order, the cycle counter comes first. Bits show in binary, vectors in decimal, text as
//! text.

use crate::{Signal, SignalKind};
use std::io::{self, Write};
use std::path::Path;

/// Trace-format flags of the save file (GTKWave's `TR_*` bits).
const FMT_BINARY: &str = "@28";
const FMT_DECIMAL: &str = "@24";
const GROUP_BEGIN: &str = "@800200";
const GROUP_END: &str = "@1000200";

/// How GTKWave names a signal: its path, plus `[msb:0]` for vectors.
pub fn gtkwave_name(s: &Signal) -> String {
    match s.kind {
        SignalKind::Vector(w) if w > 1 => format!("{}[{}:0]", s.path, w - 1),
        _ => s.path.clone(),
    }
}

/// GTKWave's zoom level that fits `end_ps` picoseconds into a window about 1000 pixels wide.
/// Zoom `z` shows about `2^-z / 250` ps per pixel (measured on GTKWave 3.3); this is display
/// only, so a float is fine here.
pub fn zoom_to_fit(end_ps: u64) -> f64 {
    -((end_ps.max(1) as f64).log2() - 1.9)
}

/// Writes a save file for `signals` (as declared on the tracer) of the dump at `dump`, zoomed
/// to show the whole run, which ends at `end_ps`.
pub fn write_save_file(
    out: &mut impl Write,
    dump: &Path,
    root: &str,
    signals: &[Signal],
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
    writeln!(out, "{FMT_DECIMAL}")?;
    writeln!(out, "{root}.cycle[63:0]")?;
    let mut order: Vec<&Signal> = signals.iter().collect();
    order.sort_by(|a, b| a.path.cmp(&b.path));
    let mut i = 0;
    while i < order.len() {
        let scope = order[i].scope();
        let group: Vec<&Signal> = order[i..]
            .iter()
            .take_while(|s| s.scope() == scope)
            .copied()
            .collect();
        let title = scope.strip_prefix(&format!("{root}.")).unwrap_or(scope);
        writeln!(out, "{GROUP_BEGIN}")?;
        writeln!(out, "-{title}")?;
        for s in &group {
            let fmt = match s.kind {
                SignalKind::Bit => FMT_BINARY,
                SignalKind::Vector(_) | SignalKind::Text => FMT_DECIMAL,
            };
            writeln!(out, "{fmt}")?;
            writeln!(out, "{}", gtkwave_name(s))?;
        }
        writeln!(out, "{GROUP_END}")?;
        writeln!(out, "-{title}")?;
        i += group.len();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_scope_with_formats() {
        let sig = |p: &str, kind| Signal {
            path: p.into(),
            kind,
        };
        let signals = vec![
            sig("chip.port0.tx_busy", SignalKind::Bit),
            sig("chip.tm.pipe0.port0.q0.depth_cells", SignalKind::Vector(19)),
            sig("chip.port0.rx_fifo", SignalKind::Vector(8)),
            sig("chip.pipe0.ingress.exit", SignalKind::Text),
        ];
        let mut out = Vec::new();
        write_save_file(
            &mut out,
            Path::new("/tmp/d.vcd"),
            "chip",
            &signals,
            3_000_000,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let expected_tail = "\
@800200
-pipe0.ingress
@24
chip.pipe0.ingress.exit
@1000200
-pipe0.ingress
@800200
-port0
@24
chip.port0.rx_fifo[7:0]
@28
chip.port0.tx_busy
@1000200
-port0
@800200
-tm.pipe0.port0.q0
@24
chip.tm.pipe0.port0.q0.depth_cells[18:0]
@1000200
-tm.pipe0.port0.q0
";
        assert!(text.starts_with("[*] t2sim"), "{text}");
        assert!(text.contains("[dumpfile] \"/tmp/d.vcd\"\n"), "{text}");
        assert!(text.contains("@24\nchip.cycle[63:0]\n"), "{text}");
        assert!(text.contains("\n*-19.616531 -1 -1 "), "{text}");
        assert!(text.ends_with(expected_tail), "{text}");
    }
}
