//! A waveform request: where a run's VCD goes, which signals it holds, and the story groups
//! its GTKWave save file shows first.

use crate::chip::Chip;
use std::io::BufWriter;
use std::path::PathBuf;
use t2_clock::Cycle;
use t2_waves::TraceFilter;

/// Where to write a waveform of the chip, and which signals to put in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveRequest {
    /// The VCD file; the GTKWave save file goes beside it with the extension `.gtkw`.
    pub vcd: PathBuf,
    pub filter: TraceFilter,
    /// Groups the save file shows first, in order (a scheme's story); may be empty.
    pub groups: Vec<crate::chip::trace::WaveGroup>,
}

impl WaveRequest {
    /// The save file's path.
    pub fn gtkw(&self) -> PathBuf {
        self.vcd.with_extension("gtkw")
    }

    /// Starts tracing `chip` into the VCD file.
    pub fn start(&self, chip: &mut Chip) -> Result<(), String> {
        let file = std::fs::File::create(&self.vcd)
            .map_err(|e| format!("{}: cannot create the dump: {e}", self.vcd.display()))?;
        chip.enable_trace(self.filter.clone(), Box::new(BufWriter::new(file)))
            .map_err(|e| format!("{}: {e}", self.vcd.display()))?;
        // Every story group must show something: a pattern naming no signal is a mistake, and
        // better said now than after the run.
        let signals = chip.trace().map_or(&[][..], |t| t.tracer().signals());
        crate::chip::trace::save_file_groups(signals, &self.groups)
            .map(|_| ())
            .inspect_err(|_| {
                // No run follows: leave no half-written dump behind.
                let _ = std::fs::remove_file(&self.vcd);
            })
    }

    /// Ends `chip`'s trace at cycle `end` and writes the GTKWave save file beside the dump;
    /// returns the number of signals traced.
    pub fn finish(&self, chip: &mut Chip, end: Cycle, clock_hz: u64) -> Result<usize, String> {
        let signals = chip
            .finish_trace(end)
            .map_err(|e| format!("{}: {e}", self.vcd.display()))?;
        let gtkw = self.gtkw();
        let write = || -> std::io::Result<()> {
            let mut f = BufWriter::new(std::fs::File::create(&gtkw)?);
            let end_ps = t2_waves::cycle_to_ps(end, clock_hz);
            crate::chip::trace::write_save_file(&mut f, &self.vcd, &signals, &self.groups, end_ps)?;
            std::io::Write::flush(&mut f)
        };
        write().map_err(|e| format!("{}: {e}", gtkw.display()))?;
        Ok(signals.len())
    }
}
