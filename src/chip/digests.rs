//! The digests the ingress deparsers send the control plane (TNA's `Digest<T>`), kept in
//! one record list per chip for the control plane to read.
//!
//! When a packet leaves a pipe's ingress deparser with `ig_intr_dprsr_md.digest_type`
//! naming one of the program's digests, the deparser packs the digest's fields as the
//! packet leaves and the chip appends a record (cycle, pipe, digest, values) in that same
//! cycle, pipes in order, so the list is the same on every run. The record belongs to the
//! deparser's cycle: a reader between two ticks sees every digest of the cycles run so far.
//!
//! What a real Tofino2 does beyond this is not modelled: its learn filter drops a digest
//! equal to one it already holds and hands the CPU batches over DMA, and the driver
//! delivers each batch to a BfRt callback. Here every digest is recorded once, in order,
//! with no filtering, batching or delay (docs/p4.md, Digests).

use super::Chip;
use t2_clock::Cycle;
use t2_pipeline::Digested;

/// One digest as the control plane receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestRecord {
    /// The cycle the packet left the ingress deparser.
    pub cycle: Cycle,
    pub pipe: u8,
    /// The digest's place in the program's `digests` ([`Chip::digest_names`]).
    pub digest: u16,
    /// The digest's fields as packed, in its order.
    pub values: Vec<u64>,
}

impl Chip {
    /// Pipe `p`'s ingress deparser sends `d` in cycle `now`.
    pub(super) fn record_digest(&mut self, now: Cycle, p: usize, d: Digested) {
        self.counters.digests += 1;
        self.digests.push(DigestRecord {
            cycle: now,
            pipe: p as u8,
            digest: d.digest,
            values: d.values,
        });
    }

    /// The digests sent so far and not yet taken, oldest first.
    pub fn digests(&self) -> &[DigestRecord] {
        &self.digests
    }

    /// Takes the digests sent so far (the control plane has read them); the count in the
    /// chip's counters stays.
    pub fn take_digests(&mut self) -> Vec<DigestRecord> {
        std::mem::take(&mut self.digests)
    }

    /// The program's digests: (name, the names of its fields), by [`DigestRecord::digest`].
    pub fn digest_names(&self) -> Vec<(String, Vec<String>)> {
        self.digest_decls
            .iter()
            .map(|d| {
                (
                    d.name.clone(),
                    d.fields.iter().map(|f| f.name.clone()).collect(),
                )
            })
            .collect()
    }
}

/// `records` of chip `chip` as CSV: one row per digest, `cycle,chip,pipe,digest,values`,
/// the values `FIELD=VALUE` (decimal) joined by `;` in the digest's order; `names` are
/// [`Chip::digest_names`].
pub fn digests_csv(
    chip: &str,
    names: &[(String, Vec<String>)],
    records: &[DigestRecord],
) -> String {
    let mut out = String::from("cycle,chip,pipe,digest,values\n");
    for r in records {
        let (name, fields) = &names[r.digest as usize];
        let values: Vec<String> = fields
            .iter()
            .zip(&r.values)
            .map(|(f, v)| format!("{f}={v}"))
            .collect();
        out += &format!(
            "{},{chip},{},{name},{}\n",
            r.cycle,
            r.pipe,
            values.join(";")
        );
    }
    out
}
