//! Casts that keep a field's value as it is: a gateway comparing a field widened by a cast
//! (`(bit<32>) meta.draw < meta.threshold`: zero extension, so the gateway compares the
//! field), and an operation's result cut to its destination (`h.f = (bit<7>)(x >> 20)`: the
//! VLIW ALU computes at the operands' width and the destination keeps the low bits, which is
//! what the cast says, for every operation, shifts and `min`/`max` included). A cast of an
//! operand inside an operation stays where `operand` judges it.

use super::*;

impl<'a> Lowerer<'a> {
    /// A gateway's operand: a field, or a field widened by a cast.
    pub(super) fn compared_field(&mut self, c: &Ctl<'a>, e: &Expr) -> R<FieldRef> {
        if let ExprKind::Cast(t, inner) = &e.kind {
            if let Ty::Bits(w, false) = self.resolve(t, e.span)? {
                let f = self.field(c, inner)?;
                if f.bits <= w {
                    return Ok(FieldRef { ir: f.ir, bits: w });
                }
                return self.err(
                    e.span,
                    format!(
                        "a gateway compares fields as they are: bit<{}> cannot narrow to bit<{w}>",
                        f.bits
                    ),
                );
            }
        }
        self.field(c, e)
    }

    /// For `dst = (bit<D>)(a op b)` with `D` the destination's width and the operation at
    /// least that wide: the operation and the destination taken at the operation's width
    /// (the primitive writes the same field, keeping its low `D` bits).
    pub(super) fn narrowed_operation<'e>(
        &mut self,
        c: &Ctl<'a>,
        params: &HashMap<String, u32>,
        dst: &FieldRef,
        rhs: &'e Expr,
    ) -> R<Option<(FieldRef, &'e Expr)>> {
        let ExprKind::Cast(t, inner) = &rhs.kind else {
            return Ok(None);
        };
        let operands = match &inner.kind {
            ExprKind::Binary(_, a, b) => [a.as_ref(), b.as_ref()],
            ExprKind::Call { func, args, .. }
                if matches!(func.path().as_deref(), Some("min" | "max")) && args.len() == 2 =>
            {
                [&args[0], &args[1]]
            }
            _ => return Ok(None),
        };
        if self.resolve(t, rhs.span)?.width() != Some(dst.bits) {
            return Ok(None);
        }
        let width = operands.iter().find_map(|e| self.width_of(c, params, e));
        Ok(width.filter(|&w| w >= dst.bits).map(|w| {
            (
                FieldRef {
                    ir: dst.ir.clone(),
                    bits: w,
                },
                inner.as_ref(),
            )
        }))
    }
}
