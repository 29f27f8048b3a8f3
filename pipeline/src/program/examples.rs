//! Example programs, built with the builder API from the shared [`super::blocks`].
//! `programs/*.json` at the repository root are these programs and the schemes' serialized
//! (tests keep them in step).

use crate::program::blocks::{ecn_egress, forwarding, forwarding_ingress};
use crate::program::ir::{
    Action, Cmp, Condition, Half, HashAlgorithm, MatchKind, Operand, ParserState, Primitive,
    Program, ProgramBuilder, RegisterAction, SaluOp, SaluOperand, SaluOutput, SaluOutputValue,
    SaluUpdate, Stmt, Table,
};

/// IPv4 host routes with TTL handling and a ternary traffic-class table.
///
/// Non-IPv4 packets and those whose TTL would expire are dropped by keyless tables under
/// gateways; `ipv4_host` forwards by exact destination and lowers the TTL; `classify`
/// picks the queue from DSCP and destination port.
pub fn l3_forward() -> Program {
    forwarding("l3_forward")
        .action(
            Action::new("set_queue")
                .param("qid", 7)
                .prim(Primitive::SetQid {
                    qid: Operand::param("qid"),
                }),
        )
        .table(
            Table::new("ipv4_host", MatchKind::Exact, &["ipv4.dst_addr"], 4096)
                .action("forward")
                .action("drop_no_route")
                .default_action("drop_no_route", &[])
                .entry(&[0x0a00_0001], "forward", &[8])
                .entry(&[0x0a00_0002], "forward", &[16])
                .entry(&[0x0a00_0003], "forward", &[24]),
        )
        .table(
            Table::new(
                "classify",
                MatchKind::Ternary,
                &["ipv4.diffserv", "l4.dst_port"],
                256,
            )
            .action("set_queue")
            .default_action("set_queue", &[0])
            // DSCP EF (46) whatever the port.
            .ternary_entry(&[(46 << 2, 0xfc), (0, 0)], "set_queue", &[1])
            .ternary_entry(&[(0, 0), (443, 0xffff)], "set_queue", &[2]),
        )
        .ingress(forwarding_ingress(vec![
            Stmt::apply("ipv4_host"),
            Stmt::apply("classify"),
        ]))
        .build_unchecked()
}

/// Egress ECN marking: ECN-capable IPv4 packets that found at least `ECN_THRESHOLD_CELLS`
/// cells in their queue at enqueue are marked Congestion Experienced.
pub fn ecn_marking() -> Program {
    ProgramBuilder::new("ecn_marking")
        .action(Action::new("mark").prim(Primitive::MarkEcn))
        .table(Table::new("ecn_mark", MatchKind::Exact, &[], 0).action("mark"))
        .egress(ecn_egress("ecn_mark", ECN_THRESHOLD_CELLS))
        .build_unchecked()
}

/// The marking threshold of [`ecn_marking`], in 176-byte cells.
pub const ECN_THRESHOLD_CELLS: u64 = 1000;

/// A per-flow packet counter: a CRC-32 of the 5-tuple picks one of 65536 32-bit cells, a
/// RegisterAction adds one, and flows past 1000 packets go to queue 1.
pub fn flow_counter() -> Program {
    ProgramBuilder::new("flow_counter")
        .metadata("meta.flow_idx", 16)
        .metadata("meta.flow_count", 32)
        .hash(
            "flow_hash",
            HashAlgorithm::Crc32,
            &[
                "ipv4.src_addr",
                "ipv4.dst_addr",
                "ipv4.protocol",
                "l4.src_port",
                "l4.dst_port",
            ],
        )
        .register("flow_packets", 32, 65536)
        .register_action(RegisterAction {
            name: "count_packet".into(),
            register: "flow_packets".into(),
            conditions: vec![],
            updates: vec![SaluUpdate {
                when: vec![],
                half: Half::Lo,
                op: SaluOp::Add,
                a: SaluOperand::Cell,
                b: SaluOperand::Const(1),
            }],
            outputs: vec![SaluOutput {
                dst: "meta.flow_count".into(),
                value: SaluOutputValue::New,
            }],
        })
        .action(Action::new("compute_flow_index").prim(Primitive::Hash {
            dst: "meta.flow_idx".into(),
            hash: "flow_hash".into(),
        }))
        .action(Action::new("count").prim(Primitive::Execute {
            register_action: "count_packet".into(),
            index: Operand::field("meta.flow_idx"),
        }))
        .action(Action::new("to_slow_queue").prim(Primitive::SetQid {
            qid: Operand::Const(1),
        }))
        .table(Table::new("flow_index", MatchKind::Exact, &[], 0).action("compute_flow_index"))
        .table(Table::new("flow_count", MatchKind::Exact, &[], 0).action("count"))
        .table(Table::new("heavy_flow", MatchKind::Exact, &[], 0).action("to_slow_queue"))
        .ingress(vec![Stmt::if_(
            Condition::new("ipv4.$valid", Cmp::Eq, Operand::Const(1)),
            vec![
                Stmt::apply("flow_index"),
                Stmt::apply("flow_count"),
                Stmt::if_(
                    Condition::new("meta.flow_count", Cmp::Gt, Operand::Const(1000)),
                    vec![Stmt::apply("heavy_flow")],
                    vec![],
                ),
            ],
            vec![],
        )])
        .build_unchecked()
}

/// A program-declared header and parser graph: Ethernet, an optional 802.1Q tag (`vlan`),
/// IPv4, UDP. A frame with two tags (QinQ) is rejected by the parser (`parser_reject`).
///
/// Ingress bridges tagged frames by VLAN id: `vlan_forward` (exact on `vlan.vid`) sends VLAN
/// 10 out of device port 16 translated to VLAN 20 with priority 5, and VLAN 30 out of port
/// 24 as VLAN 30 with priority 0; other VLANs are dropped (`no_route`). Untagged frames are routed like
/// [`dctcp_switch`]'s: non-IPv4 and expiring packets dropped, `ipv4_host` host routes (filled
/// by the chip's routes) lowering the TTL.
pub fn vlan_switch() -> Program {
    forwarding("vlan_switch")
        .header(
            "vlan",
            &[("pcp", 3), ("dei", 1), ("vid", 12), ("ether_type", 16)],
        )
        .parser(vec![
            ParserState::new("start")
                .extract("ethernet")
                .select(&["ethernet.ether_type"], "accept")
                .case(&[crate::wire::headers::ETHERTYPE_VLAN as u64], "parse_vlan")
                .case(&[crate::wire::headers::ETHERTYPE_IPV4 as u64], "parse_ipv4"),
            ParserState::new("parse_vlan")
                .extract("vlan")
                .select(&["vlan.ether_type"], "accept")
                .case(&[crate::wire::headers::ETHERTYPE_IPV4 as u64], "parse_ipv4")
                .case(&[crate::wire::headers::ETHERTYPE_VLAN as u64], "reject"),
            ParserState::new("parse_ipv4")
                .extract("ipv4")
                .select(&["ipv4.protocol"], "accept")
                .case(&[crate::wire::headers::IPPROTO_UDP as u64], "parse_udp"),
            ParserState::new("parse_udp").extract("udp"),
        ])
        .action(
            Action::new("bridge")
                .param("port", 9)
                .param("vid", 12)
                .param("pcp", 3)
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                })
                .prim(Primitive::set("vlan.vid", Operand::param("vid")))
                .prim(Primitive::set("vlan.pcp", Operand::param("pcp"))),
        )
        .table(
            Table::new("vlan_forward", MatchKind::Exact, &["vlan.vid"], 4096)
                .action("bridge")
                .action("drop_no_route")
                .default_action("drop_no_route", &[])
                .entry(&[10], "bridge", &[16, 20, 5])
                .entry(&[30], "bridge", &[24, 30, 0]),
        )
        .table(
            Table::new("ipv4_host", MatchKind::Exact, &["ipv4.dst_addr"], 4096)
                .action("forward")
                .action("drop_no_route")
                .default_action("drop_no_route", &[]),
        )
        .ingress(vec![Stmt::if_(
            Condition::new("vlan.$valid", Cmp::Eq, Operand::Const(1)),
            vec![Stmt::apply("vlan_forward")],
            forwarding_ingress(vec![Stmt::apply("ipv4_host")]),
        )])
        .build_unchecked()
}

/// [`vlan_switch`] whose egress changes the headers, not just their fields: it pops the
/// 802.1Q tag off tagged packets (`set_invalid`) and pushes VLAN 100 with priority 3 onto
/// untagged ones (`set_valid`), as an access port and a trunk port would.
pub fn vlan_tagging() -> Program {
    let mut p = vlan_switch();
    p.name = "vlan_tagging".into();
    p.actions.push(
        Action::new("push_vlan")
            .prim(Primitive::SetValid {
                header: "vlan".into(),
            })
            .prim(Primitive::set("vlan.vid", Operand::Const(100)))
            .prim(Primitive::set("vlan.pcp", Operand::Const(3)))
            .prim(Primitive::set(
                "vlan.ether_type",
                Operand::field("ethernet.ether_type"),
            ))
            .prim(Primitive::set(
                "ethernet.ether_type",
                Operand::Const(crate::wire::headers::ETHERTYPE_VLAN as u64),
            )),
    );
    p.actions.push(
        Action::new("pop_vlan")
            .prim(Primitive::SetInvalid {
                header: "vlan".into(),
            })
            .prim(Primitive::set(
                "ethernet.ether_type",
                Operand::field("vlan.ether_type"),
            )),
    );
    p.tables
        .push(Table::new("push_tag", MatchKind::Exact, &[], 0).action("push_vlan"));
    p.tables
        .push(Table::new("pop_tag", MatchKind::Exact, &[], 0).action("pop_vlan"));
    p.egress = vec![Stmt::if_(
        Condition::new("vlan.$valid", Cmp::Eq, Operand::Const(1)),
        vec![Stmt::apply("pop_tag")],
        vec![Stmt::apply("push_tag")],
    )];
    p
}

/// The marking threshold of the shipped `programs/ghost_occupancy.json`, in 176-byte cells.
pub const GHOST_OCCUPANCY_THRESHOLD_CELLS: u64 = 100;

/// BFC-style queue occupancy fed by the ghost thread: host routes, and ECN marking in
/// *ingress* of packets whose egress queue, as the TM last reported it, holds at least
/// `threshold_cells` cells.
///
/// The ghost control keeps every queue's depth (`ghost_md.qlength`) in register array
/// `queue_depth`, at index `pipe_id:2 | qid:11` (stages 0-1 build the index, stage 2 writes
/// it). Ingress finds the packet's egress queue index from its egress port (table
/// `egress_queue`, control-plane entries: here queue 0 of device ports 8-15, pipe 0's MAC 0,
/// whose `qid` is MAC 1 | queue `(port % 8) x 16`; other ports get index 8191, a MAC that
/// does not exist, so their depth reads 0), reads the depth in the same stage as the ghost
/// thread writes it (the two tables share the array), and marks ECN-capable packets.
pub fn ghost_occupancy(threshold_cells: u64) -> Program {
    let mut egress_queue = Table::new(
        "egress_queue",
        MatchKind::Exact,
        &["ig_intr_tm_md.ucast_egress_port"],
        512,
    )
    .action("set_queue_index")
    .default_action("set_queue_index", &[8191]);
    for port in 8..16u64 {
        egress_queue =
            egress_queue.entry(&[port], "set_queue_index", &[(1 << 7) | ((port % 8) * 16)]);
    }
    forwarding("ghost_occupancy")
        .metadata("meta.ghost_pipe", 13)
        .metadata("meta.ghost_index", 13)
        .metadata("meta.queue_index", 13)
        .metadata("meta.occupancy", 32)
        .register("queue_depth", 32, 8192)
        .register_action(
            RegisterAction::new("write_depth", "queue_depth").update(SaluUpdate::new(
                SaluOp::Set,
                SaluOperand::Field("ghost_md.qlength".into()),
                SaluOperand::Const(0),
            )),
        )
        .register_action(RegisterAction {
            name: "read_depth".into(),
            register: "queue_depth".into(),
            conditions: vec![],
            updates: vec![],
            outputs: vec![SaluOutput {
                dst: "meta.occupancy".into(),
                value: SaluOutputValue::Old,
            }],
        })
        .action(Action::new("ghost_pipe").prim(Primitive::alu(
            crate::program::ir::AluOp::Shl,
            "meta.ghost_pipe",
            Operand::field("ghost_md.pipe_id"),
            Operand::Const(11),
        )))
        .action(Action::new("ghost_index").prim(Primitive::alu(
            crate::program::ir::AluOp::Or,
            "meta.ghost_index",
            Operand::field("meta.ghost_pipe"),
            Operand::field("ghost_md.qid"),
        )))
        .action(Action::new("record_depth").prim(Primitive::Execute {
            register_action: "write_depth".into(),
            index: Operand::field("meta.ghost_index"),
        }))
        .action(
            Action::new("set_queue_index")
                .param("index", 13)
                .prim(Primitive::set("meta.queue_index", Operand::param("index"))),
        )
        .action(Action::new("read_occupancy").prim(Primitive::Execute {
            register_action: "read_depth".into(),
            index: Operand::field("meta.queue_index"),
        }))
        .action(Action::new("mark").prim(Primitive::MarkEcn))
        .table(
            Table::new("ipv4_host", MatchKind::Exact, &["ipv4.dst_addr"], 4096)
                .action("forward")
                .action("drop_no_route")
                .default_action("drop_no_route", &[]),
        )
        .table(egress_queue)
        .table(Table::new("occupancy", MatchKind::Exact, &[], 0).action("read_occupancy"))
        .table(Table::new("congested", MatchKind::Exact, &[], 0).action("mark"))
        .table(Table::new("ghost_pipe", MatchKind::Exact, &[], 0).action("ghost_pipe"))
        .table(Table::new("ghost_index", MatchKind::Exact, &[], 0).action("ghost_index"))
        .table(Table::new("ghost_record", MatchKind::Exact, &[], 0).action("record_depth"))
        .ingress(forwarding_ingress(vec![
            Stmt::apply("ipv4_host"),
            Stmt::apply("egress_queue"),
            Stmt::apply("occupancy"),
            Stmt::if_(
                Condition::new("meta.occupancy", Cmp::Ge, Operand::Const(threshold_cells)),
                vec![Stmt::apply("congested")],
                vec![],
            ),
        ]))
        .ghost(vec![
            Stmt::apply("ghost_pipe"),
            Stmt::apply("ghost_index"),
            Stmt::apply("ghost_record"),
        ])
        .build_unchecked()
}

/// Every example with its file name under `programs/`.
pub fn all() -> Vec<(&'static str, Program)> {
    vec![
        ("l3_forward.json", l3_forward()),
        ("ecn_marking.json", ecn_marking()),
        ("flow_counter.json", flow_counter()),
        ("vlan_switch.json", vlan_switch()),
        ("vlan_tagging.json", vlan_tagging()),
        (
            "ghost_occupancy.json",
            ghost_occupancy(GHOST_OCCUPANCY_THRESHOLD_CELLS),
        ),
    ]
}
