//! QCN's congestion point as program blocks (IEEE 802.1Qau): the headers, parser states and
//! actions that make a CNM ([`super::cnm`]) from a sampled frame by mirroring. The shipped
//! programs write this in P4 (`pfc_qcn.p4`, `qcn_only.p4`); these blocks build the same in
//! the IR for the chip's own tests of mirroring (`tests/chip/cnm.rs`).

use super::cnm::CNM_ETHERTYPE;
use t2_pipeline::ir::{Action, AluOp, Operand, ParserState, Primitive, ProgramBuilder};

/// The source MAC address a CNM built by [`cnm_actions`] carries (the congestion point's).
pub const CNM_SOURCE_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0xcc, 0x01];

/// The headers of a QCN CNM built by mirroring (IEEE 802.1Qau, frame format as the
/// [`super::cnm`] codec has it): `mirror_md`, the mirror header an egress sample puts
/// before its copy (the quantised feedback `fb` and the sampled frame's MSDU length), then
/// `orig_eth`, the copied frame's Ethernet header, which becomes the CNM's. Add them first:
/// a copy's mirror type is its mirror header's place plus 1, and [`cnm_copy_parser`] selects
/// on type 1.
pub fn cnm_copy_headers(b: ProgramBuilder) -> ProgramBuilder {
    b.header("mirror_md", &[("fb", 8), ("msdu_len", 16), ("pad", 8)])
        .header(
            "orig_eth",
            &[
                ("dst_hi", 16),
                ("dst_lo", 32),
                ("src_hi", 16),
                ("src_lo", 32),
                ("ether_type", 16),
            ],
        )
}

/// The CNM's own header (`cnm`): version and QntzFb, CPID, cnmQOffset, cnmQDelta, the
/// encapsulated priority, destination MAC and MSDU length.
pub fn cnm_header(b: ProgramBuilder) -> ProgramBuilder {
    b.header(
        "cnm",
        &[
            ("fb", 16),
            ("cpid_hi", 32),
            ("cpid_lo", 32),
            ("q_offset", 16),
            ("q_delta", 16),
            ("prio", 16),
            ("edst_hi", 16),
            ("edst_lo", 32),
            ("msdu_len", 16),
        ],
    )
}

/// The parser's first two states for a program whose egress makes CNMs: a copy (mirror
/// type 1) starts with `mirror_md` and the copied Ethernet header, then a CNM header if the
/// copy is one already; anything else goes to state `parse_eth`, and a CNM to `parse_cnm`,
/// which the program defines.
pub fn cnm_copy_parser() -> [ParserState; 2] {
    [
        ParserState::new("start")
            .select(&["eg_intr_md.mirror_type"], "parse_eth")
            .case(&[1], "parse_mirror"),
        ParserState::new("parse_mirror")
            .extract("mirror_md")
            .extract("orig_eth")
            .select(&["orig_eth.ether_type"], "accept")
            .case(&[CNM_ETHERTYPE as u64], "parse_cnm"),
    ]
}

/// The actions that build a CNM from a sampled frame by mirroring, in this order:
/// - `sample_action` (session, fb): mirror the frame to `session` with `mirror_md`, holding
///   the quantised feedback `fb` and the frame's MSDU length (its `pkt_length` less the
///   Ethernet header and FCS);
/// - `cnm_body`: in the copy's egress pass, make the `cnm` header valid and fill it: the
///   feedback, the CPID (the sampled frame's egress port), the sampled frame's destination
///   MAC and MSDU length; cnmQOffset, cnmQDelta and the priority are 0;
/// - `cnm_eth`: drop the mirror header and turn the copied Ethernet header into the CNM's:
///   to the sampled frame's source MAC, from [`CNM_SOURCE_MAC`], with the CNM ethertype.
///
/// The copy's bytes after the Ethernet header (cut by the session) become the CNM's
/// encapsulated MSDU.
pub fn cnm_actions(b: ProgramBuilder, sample_action: &str) -> ProgramBuilder {
    let set = |dst: &str, v: u64| Primitive::set(dst, Operand::Const(v));
    let copy = |dst: &str, src: &str| Primitive::set(dst, Operand::field(src));
    let mac = CNM_SOURCE_MAC;
    let mac_hi = u16::from_be_bytes([mac[0], mac[1]]) as u64;
    let mac_lo = u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]) as u64;
    b.action(
        Action::new(sample_action)
            .param("session", 8)
            .param("fb", 6)
            .prim(Primitive::MirrorWithHeader {
                session: Operand::param("session"),
                header: "mirror_md".into(),
            })
            .prim(Primitive::set("mirror_md.fb", Operand::param("fb")))
            .prim(Primitive::alu(
                AluOp::Sub,
                "mirror_md.msdu_len",
                Operand::field("eg_intr_md.pkt_length"),
                Operand::Const(18),
            )),
    )
    .action(
        Action::new("cnm_body")
            .prim(Primitive::SetValid {
                header: "cnm".into(),
            })
            .prim(copy("cnm.fb", "mirror_md.fb"))
            .prim(set("cnm.cpid_hi", 0))
            .prim(copy("cnm.cpid_lo", "eg_intr_md.egress_port"))
            .prim(set("cnm.q_offset", 0))
            .prim(set("cnm.q_delta", 0))
            .prim(set("cnm.prio", 0))
            .prim(copy("cnm.edst_hi", "orig_eth.dst_hi"))
            .prim(copy("cnm.edst_lo", "orig_eth.dst_lo"))
            .prim(copy("cnm.msdu_len", "mirror_md.msdu_len")),
    )
    .action(
        Action::new("cnm_eth")
            .prim(Primitive::SetInvalid {
                header: "mirror_md".into(),
            })
            .prim(copy("orig_eth.dst_hi", "orig_eth.src_hi"))
            .prim(copy("orig_eth.dst_lo", "orig_eth.src_lo"))
            .prim(set("orig_eth.src_hi", mac_hi))
            .prim(set("orig_eth.src_lo", mac_lo))
            .prim(set("orig_eth.ether_type", CNM_ETHERTYPE as u64)),
    )
}
