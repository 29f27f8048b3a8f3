//! `@t2sim_overhead(RECIRCULATED, MIRRORED)` on the `main` package instance: the frame bytes
//! (FCS included, 0 for none) the program recirculates and mirrors per data packet it
//! forwards, which the report weighs against the ports' line rate (the IR's `overhead`).
//! Nothing in a P4 program says how many packets its mirrors and recirculations make per
//! data packet (that depends on which packets reach the actions), so the program says it:
//!
//! ```p4
//! @t2sim_overhead(80, 80)
//! Switch(pipe) main;
//! ```

use super::*;

/// The annotation's name.
const OVERHEAD: &str = "t2sim_overhead";

impl<'a> Lowerer<'a> {
    /// The overhead `main` declares, if it does.
    pub(super) fn declared_overhead(&self, main: &Decl) -> R<Option<ir::Overhead>> {
        let Some(a) = main.annotation(OVERHEAD) else {
            return Ok(None);
        };
        let [recirculated, mirrored] = a.args.as_slice() else {
            return self.err(
                a.span,
                "@t2sim_overhead takes two numbers: the bytes recirculated and the bytes \
                 mirrored per data packet",
            );
        };
        let bytes = |e: &Expr| -> R<u32> {
            let (v, _) = self.const_value(e, &HashMap::new())?;
            u32::try_from(v).or_else(|_| {
                self.err(
                    e.span,
                    format!("@t2sim_overhead: {v} bytes is out of range"),
                )
            })
        };
        Ok(Some(ir::Overhead {
            recirculated_bytes: bytes(recirculated)?,
            mirrored_bytes: bytes(mirrored)?,
        }))
    }
}
