//! Assignments in parser states: `meta.f = 1;`, `meta.f = hdr.h.x;` (with casts and
//! slices), `meta.f = pkt.lookahead<bit<N>>();`, as Tofino's parser writes constants and
//! packet bytes into PHV containers. Each becomes an `ir::ParserSet` of its state, run after
//! the state's extracts; so a write to, or a read of, a header the state extracts later is
//! refused (it would see the header the other way round).

use super::*;

impl<'a> Lowerer<'a> {
    /// The write `lhs = rhs` in a parser state that has extracted `offset_bits` so far
    /// (fields of up to 64 bits: the IR's check cuts a wide one where its containers are).
    pub(super) fn parser_set(
        &mut self,
        c: &Ctl<'a>,
        lhs: &Expr,
        rhs: &Expr,
        offset_bits: u32,
    ) -> R<ir::ParserSet> {
        let dst = self.field(c, lhs)?;
        let max = crate::program::check::WIDE_MAX_BITS;
        if dst.bits > max {
            return self.err(
                lhs.span,
                format!(
                    "a parser assignment writes a field of at most {max} bits; `{}` is {}",
                    expr_text(lhs),
                    dst.bits
                ),
            );
        }
        let mut value = rhs;
        while let ExprKind::Cast(_, inner) = &value.kind {
            value = inner;
        }
        let src = if let Ok((v, _)) = self.const_value(value, &c.locals) {
            if v >> dst.bits.min(127) != 0 {
                return self.err(
                    rhs.span,
                    format!("constant {v} does not fit in {} bits", dst.bits),
                );
            }
            ir::ParserValue::Const(v as u64)
        } else if let Some(bits) = self.lookahead_bits(c, value)? {
            ir::ParserValue::Packet {
                offset: offset_bits,
                bits,
            }
        } else if value.path().is_some() || matches!(value.kind, ExprKind::Slice(..)) {
            let f = self.field(c, value)?;
            if f.bits > max {
                return self.err(
                    value.span,
                    format!(
                        "a parser assignment reads at most {max} bits; this field is {}",
                        f.bits
                    ),
                );
            }
            ir::ParserValue::Field(f.ir)
        } else {
            return self.err(
                rhs.span,
                "a parser assignment writes a constant, a field or `lookahead<bit<N>>()`: the \
                 parser has no ALU",
            );
        };
        Ok(ir::ParserSet { dst: dst.ir, src })
    }

    /// Bits of `e` when it is `pkt.lookahead<bit<N>>()` (1 to 32).
    fn lookahead_bits(&mut self, c: &Ctl<'a>, e: &Expr) -> R<Option<u32>> {
        let ExprKind::Call { func, targs, args } = &e.kind else {
            return Ok(None);
        };
        let ExprKind::Member(obj, m) = &func.kind else {
            return Ok(None);
        };
        let is_pkt = obj
            .path()
            .is_some_and(|p| matches!(c.params.get(&p), Some(ParamKind::Packet)));
        if m != "lookahead" || !is_pkt || !args.is_empty() {
            return Ok(None);
        }
        let [t] = targs.as_slice() else {
            return self.err(e.span, "`lookahead` takes one type argument");
        };
        match self.resolve(t, e.span)?.width() {
            Some(b) if (1..=64).contains(&b) => Ok(Some(b)),
            _ => self.err(
                e.span,
                "a parser assignment looks ahead at a bit<N> of 1 to 64 bits",
            ),
        }
    }

    /// Refuses extracting header `h` after a write of this state names one of its fields.
    pub(super) fn extract_after_sets(&self, sets: &[ir::ParserSet], h: &str, at: Span) -> R<()> {
        let of_h = |f: &str| f.split('.').next() == Some(h);
        for w in sets {
            let reads = matches!(&w.src, ir::ParserValue::Field(f) if of_h(f));
            if of_h(&w.dst) || reads {
                return self.err(
                    at,
                    format!(
                        "`{h}` is extracted after an assignment of this state names its fields; \
                         the parser writes after its extracts (extract it first, or assign in \
                         the next state)"
                    ),
                );
            }
        }
        Ok(())
    }
}
