//! `value_set<bit<W>>(N) vs;` in the ingress parser, and `select` cases on it:
//!
//! ```p4
//! value_set<bit<16>>(4) tunnel_types;
//! state parse_ethernet {
//!     pkt.extract(hdr.ethernet);
//!     transition select(hdr.ethernet.ether_type) { tunnel_types: parse_tunnel; 0x0800: parse_ipv4; default: accept; }
//! }
//! ```
//!
//! Lowered to an IR value set `IngressParser.tunnel_types` of N rows and a select case that
//! names it, where it stands among the cases: the N parser TCAM rows are reserved when the
//! program loads (they count in the parser's 256 whether filled or not), and the control
//! plane fills them by the value set's name (STF's and `--entries`'s `value_set_add`,
//! before the first packet). The value set's type is the one select key's (one key:
//! bf-p4c's value sets over several keys take a struct, not lowered here). A value set in
//! the egress parser is refused (the model runs the ingress parser's graph in both gresses).

use super::*;

/// The local kind a value set is kept under among a parser's locals.
pub(super) const VALUE_SET: &str = "value_set";

/// Whether `ty` is `value_set<...>`.
pub(super) fn is_value_set(ty: &Type) -> bool {
    matches!(ty, Type::Named(n, _) if n == VALUE_SET)
}

impl<'a> Lowerer<'a> {
    /// The select case of keyset `ks` if it names a value set of parser `c`, checked
    /// against the select's keys `keys`, with the value set added to `sets` when first used.
    pub(super) fn value_set_case(
        &mut self,
        c: &Ctl<'a>,
        ks: &[Expr],
        keys: &[FieldRef],
        next: &str,
        sets: &mut Vec<ir::ValueSet>,
    ) -> R<Option<ir::SelectCase>> {
        let [Expr {
            kind: ExprKind::Name(n),
            span,
        }] = ks
        else {
            return Ok(None);
        };
        let Some(Local::Extern(decl, k)) = c.locals.get(n) else {
            return Ok(None);
        };
        if k != VALUE_SET {
            return Ok(None);
        }
        if c.gress != Gress::Ingress {
            return self.err(
                decl.span,
                "a value_set in the egress parser: the model runs the ingress parser's graph in \
                 both gresses, so value sets live in the ingress parser",
            );
        }
        let DeclKind::Instance { ty, args, .. } = &decl.kind else {
            unreachable!("a value set is an instance")
        };
        let Type::Named(_, targs) = ty else {
            unreachable!("checked by is_value_set")
        };
        let width = match targs.as_slice() {
            [t] => self.resolve(t, decl.span)?.width(),
            _ => None,
        };
        let Some(width) = width else {
            return self.err(
                decl.span,
                "a value_set's type is a bit<W> here (bf-p4c's struct of several keys is not lowered)",
            );
        };
        let [key] = keys else {
            return self.err(
                *span,
                format!(
                    "value set `{n}` in a select on {} keys: a value set matches one key here",
                    keys.len()
                ),
            );
        };
        if key.bits != width {
            return self.err(
                *span,
                format!(
                    "width mismatch: value set `{n}` holds bit<{width}> but the select key `{}` is bit<{}>",
                    key.ir, key.bits
                ),
            );
        }
        let size = match args.as_slice() {
            [e] => self.const_value(e, &c.locals)?.0,
            _ => {
                return self.err(
                    decl.span,
                    "a value_set takes its size: `value_set<bit<W>>(N)`",
                )
            }
        };
        if !(1..=256).contains(&size) {
            return self.err(
                decl.span,
                format!("value set `{n}` of {size} rows: a parser has 256 TCAM rows, and a value set at least 1"),
            );
        }
        let name = format!("{}.{n}", c.name);
        if sets.iter().any(|s| s.name == name) {
            return self.err(
                *span,
                format!("value set `{n}` is selected on a second time; its rows sit in one place of the parser TCAM"),
            );
        }
        sets.push(ir::ValueSet {
            name: name.clone(),
            size: size as u32,
            entries: Vec::new(),
        });
        self.spans.push((name.clone(), decl.span));
        self.value_sets.push((name.clone(), width));
        Ok(Some(ir::SelectCase {
            values: Vec::new(),
            next: next.to_string(),
            value_set: Some(name),
        }))
    }
}
