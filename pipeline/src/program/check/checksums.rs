//! The `Checksum` extern's IR resolved onto the hardware: the parser's engines
//! (`ir::ParserChecksum` per state) and the deparsers' units (`ir::ChecksumUpdate`), each
//! list item a field's PHV pieces or constant bits, held to Tofino2's 5 parser engines and
//! 8 units per deparser.

use super::{err, IrError, Resolver};
use crate::hw::checksum::{Piece, Step, StepOp, Update, DEPARSER_UNITS, PARSER_ENGINES};
use crate::hw::parser::Graph;
use crate::hw::phv::Field;
use crate::program::ir;

/// A list's items as pieces: a field's pieces (any width, a header field over 64 bits
/// included), constants cut into runs of at most 32 bits, most significant first.
fn pieces(r: &Resolver, path: &str, items: &[ir::ChecksumItem]) -> Result<Vec<Piece>, IrError> {
    let mut out = Vec::new();
    for item in items {
        match item {
            ir::ChecksumItem::Field(n) => match r.carried.get(n) {
                Some(p) => out.extend(p.iter().map(|&f| Piece::Field(f))),
                None => out.extend(r.pieces(path, n)?.into_iter().map(Piece::Field)),
            },
            &ir::ChecksumItem::Const { value, bits } => {
                if !(1..=64).contains(&bits) || (bits < 64 && value >> bits != 0) {
                    return err(
                        path,
                        format!("constant {value} of {bits} bits in a checksum list (1 to 64 bits, the value fitting)"),
                    );
                }
                let mut left = bits;
                while left > 0 {
                    let take = left.min(32);
                    left -= take;
                    out.push(Piece::Const {
                        value: ((value >> left) & ((1u64 << take) - 1)) as u32,
                        bits: take as u8,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// A writable field of exactly `bits` bits, as its pieces.
fn destination(r: &Resolver, path: &str, name: &str, bits: u32) -> Result<Vec<Field>, IrError> {
    let dst = if r.pieces.contains_key(name) {
        r.pieces(path, name)?
    } else {
        vec![r.writable(path, name)?]
    };
    let width: u32 = dst.iter().map(|f| f.bits as u32).sum();
    if width != bits {
        return err(
            path,
            format!("`{name}` is {width} bits; the checksum writes {bits}"),
        );
    }
    Ok(dst)
}

/// Each state's checksum operations (`ir::ParserState::checksum`) resolved onto `graph`'s
/// state of the same name; engines numbered in the order the program first names them.
pub(super) fn resolve_parser(
    program: &str,
    ir_graph: &ir::ParserGraph,
    graph: &mut Graph,
    r: &Resolver,
) -> Result<(), IrError> {
    let mut engines: Vec<&str> = Vec::new();
    for st in &mut graph.states {
        let Some(s) = ir_graph.states.iter().find(|s| s.name == st.name) else {
            continue;
        };
        let mut last = 0;
        for (k, c) in s.checksum.iter().enumerate() {
            let path = format!("{program}: parser.states ({}).checksum[{k}]", s.name);
            let engine = match engines.iter().position(|&e| e == c.engine) {
                Some(e) => e,
                None => {
                    engines.push(&c.engine);
                    engines.len() - 1
                }
            };
            if engine >= PARSER_ENGINES {
                return err(
                    &path,
                    format!(
                        "checksum `{}` would be the parser's {}th checksum engine; Tofino2's parser has {PARSER_ENGINES}",
                        c.engine,
                        engine + 1
                    ),
                );
            }
            if c.after_extracts as usize > s.extract.len() || c.after_extracts < last {
                return err(
                    &path,
                    format!(
                        "runs after {} extracts of a state that has {} (operations in order)",
                        c.after_extracts,
                        s.extract.len()
                    ),
                );
            }
            last = c.after_extracts;
            let op = match &c.op {
                ir::ChecksumOp::Add(items) => StepOp::Add(pieces(r, &path, items)?),
                ir::ChecksumOp::Subtract(items) => StepOp::Subtract(pieces(r, &path, items)?),
                ir::ChecksumOp::Verify(dst) | ir::ChecksumOp::VerifyOr(dst) => {
                    let f = r.writable(&path, dst)?;
                    if f.bits != 1 {
                        return err(
                            &path,
                            format!("`{dst}` is {} bits; `verify` writes 1", f.bits),
                        );
                    }
                    match c.op {
                        ir::ChecksumOp::Verify(_) => StepOp::Verify(f),
                        _ => StepOp::VerifyOr(f),
                    }
                }
                ir::ChecksumOp::Get(dst) => StepOp::Get(destination(r, &path, dst, 16)?),
                ir::ChecksumOp::Deposit(dst) => StepOp::Deposit(destination(r, &path, dst, 16)?),
            };
            st.checksums.push(Step {
                engine: engine as u8,
                after_extracts: c.after_extracts,
                op,
            });
        }
    }
    Ok(())
}

/// The deparsers' checksum units, ingress's and egress's.
pub(super) fn resolve_deparser(p: &ir::Program, r: &Resolver) -> Result<[Vec<Update>; 2], IrError> {
    let mut out: [Vec<Update>; 2] = Default::default();
    for (i, u) in p.checksum_updates.iter().enumerate() {
        let path = format!("checksum_updates[{i}] ({})", u.dst);
        let g = match u.gress.as_str() {
            "ingress" => 0,
            "egress" => 1,
            other => {
                return err(
                    &path,
                    format!("gress `{other}`: a deparser is `ingress` or `egress`"),
                )
            }
        };
        if out[g].len() == DEPARSER_UNITS {
            return err(
                &path,
                format!(
                    "the {} deparser's {}th checksum; Tofino2's deparser has {DEPARSER_UNITS} checksum units",
                    u.gress,
                    DEPARSER_UNITS + 1
                ),
            );
        }
        let when = match &u.when {
            None => None,
            Some(w) => {
                let f = r.field(&path, w)?;
                if f.bits != 1 {
                    return err(&path, format!("condition `{w}` is {} bits, not 1", f.bits));
                }
                Some(f)
            }
        };
        out[g].push(Update {
            dst: destination(r, &path, &u.dst, 16)?,
            pieces: pieces(r, &path, &u.items)?,
            when,
            zeros_as_ones: u.zeros_as_ones,
        });
    }
    Ok(out)
}
