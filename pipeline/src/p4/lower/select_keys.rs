//! A parser `select` key names its field as the parser graph does: the ports of the
//! built-in `udp` and `tcp` headers are one field each to the controls (`l4.src_port`,
//! `l4.dst_port`, whichever header was parsed), but a graph selects on the header it just
//! extracted (`udp.dst_port`, as RoCEv2's port 4791 is told), so a key gets the header's
//! own name.

use super::*;

impl<'a> Lowerer<'a> {
    /// The field select key `e` names, for the parser graph.
    pub(super) fn select_key_field(&mut self, c: &Ctl<'a>, e: &Expr) -> R<FieldRef> {
        let f = self.field(c, e)?;
        let Some(port) = f.ir.strip_prefix("l4.") else {
            return Ok(f);
        };
        let path = e.path().unwrap_or_default();
        let header = path.split('.').nth(1).unwrap_or_default();
        let Some(inst) = self.instances.get(header).filter(|i| i.builtin) else {
            return Ok(f);
        };
        Ok(FieldRef {
            ir: format!("{}.{port}", inst.ir),
            bits: f.bits,
        })
    }
}
