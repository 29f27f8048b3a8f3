//! The building blocks the schemes' programs, the example programs and the tests share:
//! forwarding actions and the keyless drop tables, the host-route table, ECN marking on the
//! egress queue depth, the five-tuple.

use crate::program::ir::{
    Action, Cmp, Condition, MatchKind, Operand, Primitive, ProgramBuilder, ProgramDrop, Stmt, Table,
};

/// The forwarding actions and the keyless drop tables shared by the forwarding programs
/// (the examples here and the schemes' programs).
pub fn forwarding(name: &str) -> ProgramBuilder {
    ProgramBuilder::new(name)
        .action(
            Action::new("forward")
                .param("port", 9)
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                })
                .prim(Primitive::alu(
                    crate::program::ir::AluOp::Sub,
                    "ipv4.ttl",
                    Operand::field("ipv4.ttl"),
                    Operand::Const(1),
                )),
        )
        .action(Action::new("drop_no_route").prim(Primitive::Drop {
            reason: ProgramDrop::NoRoute,
        }))
        .action(Action::new("drop_not_ipv4").prim(Primitive::Drop {
            reason: ProgramDrop::NotIpv4,
        }))
        .action(Action::new("drop_ttl_expired").prim(Primitive::Drop {
            reason: ProgramDrop::TtlExpired,
        }))
        .table(Table::new("not_ipv4", MatchKind::Exact, &[], 0).action("drop_not_ipv4"))
        .table(Table::new("ttl_expired", MatchKind::Exact, &[], 0).action("drop_ttl_expired"))
}

/// Ingress: drop non-IPv4 and expiring packets, else run `then`.
pub fn forwarding_ingress(then: Vec<Stmt>) -> Vec<Stmt> {
    vec![Stmt::if_(
        Condition::new("ipv4.$valid", Cmp::Eq, Operand::Const(0)),
        vec![Stmt::apply("not_ipv4")],
        vec![Stmt::if_(
            Condition::new("ipv4.ttl", Cmp::Le, Operand::Const(1)),
            vec![Stmt::apply("ttl_expired")],
            then,
        )],
    )]
}

/// Egress: mark ECN-capable IPv4 packets that found at least `threshold_cells` in their
/// queue, applying table `table`.
pub fn ecn_egress(table: &str, threshold_cells: u64) -> Vec<Stmt> {
    vec![Stmt::if_(
        Condition::new("ipv4.$valid", Cmp::Eq, Operand::Const(1)),
        vec![Stmt::if_(
            Condition::new(
                "eg_intr_md.enq_qdepth",
                Cmp::Ge,
                Operand::Const(threshold_cells),
            ),
            vec![Stmt::apply(table)],
            vec![],
        )],
        vec![],
    )]
}

/// The host-route table the chip fills with its routes (`ipv4_host`: exact on the
/// destination, 4096 entries, `forward` or `drop_no_route`).
pub fn ipv4_host() -> Table {
    Table::new("ipv4_host", MatchKind::Exact, &["ipv4.dst_addr"], 4096)
        .action("forward")
        .action("drop_no_route")
        .default_action("drop_no_route", &[])
}

/// The fields a flow is known by, as selectors and ECMP hash them.
pub const FIVE_TUPLE: [&str; 5] = [
    "ipv4.src_addr",
    "ipv4.dst_addr",
    "ipv4.protocol",
    "l4.src_port",
    "l4.dst_port",
];
