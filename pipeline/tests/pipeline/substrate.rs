//! The scheme substrate of issue #11 in the IR: fields wider than 32 bits (L2 tables on
//! `ethernet.dst_addr`, wide copies, slices), signed arithmetic (QCN's
//! `Fb = -(Qoff + w·Qδ)`, a signed stateful ALU), intrinsic metadata kept to its gress, and
//! `@stage` / `after` placement. Exact figures, errors that name where and what, and the
//! placed stages against the interpreter.

use proptest::prelude::*;
use std::sync::Arc;
use t2_pipeline::check::{check, Checked, Thread};
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::ir::{
    Action, AluOp, Cmp, Condition, MatchKind, Operand, Primitive, Program, ProgramBuilder,
    RegisterAction, SaluOp, SaluOperand, SaluOutputValue, SaluUpdate, Stmt, Table,
};
use t2_pipeline::params::PipelineParams;
use t2_pipeline::phv::{Container, Field, Phv};
use t2_pipeline::place::{place, verify, Budget, Placed};
use t2_pipeline::{fields, layout};

/// QCN's equilibrium queue length and weight in the test program.
const QEQ: u64 = 20;

fn alu(op: AluOp, dst: &str, a: Operand, b: Operand) -> Primitive {
    Primitive::alu(op, dst, a, b)
}

fn f(n: &str) -> Operand {
    Operand::field(n)
}

fn keyless(name: &str) -> Table {
    Table::new(name, MatchKind::Exact, &[], 0)
        .action(name)
        .default_action(name, &[])
}

/// An L2 switch with a QCN congestion point. Ingress: `l2` matches `ethernet.dst_addr`
/// exactly (48 bits over two containers), `acl` matches `ethernet.src_addr` by mask and
/// copies the destination MAC over it (containers split 32+16 and 16+32) and stamps
/// `meta.t` with `ig_prsr_md.global_tstamp[31:0]`; then QCN on `meta.q`: `qold` (register,
/// Qoff = Q - Qeq), `delta` (Qδ = Q - Qold), `w` (w·Qδ with w = 2), `sum`, `fb`
/// (Fb = 0 - sum) and `fbmin` (signed array: min of Fb, predicate Fb < 0, Fb >> 1
/// arithmetic).
fn l2_qcn() -> Program {
    let mut b = ProgramBuilder::new("l2_qcn");
    for m in [
        "meta.q",
        "meta.qold",
        "meta.qoff",
        "meta.qdelta",
        "meta.wq",
        "meta.sum",
        "meta.fb",
        "meta.fbmin",
        "meta.half",
        "meta.t",
        "meta.big",
    ] {
        b = b.metadata(m, 32);
    }
    b.metadata("meta.neg", 4)
        .register("qold", 32, 1)
        .register_signed("fbmin", 32, 1)
        .register_action(
            RegisterAction::new("keep_q", "qold")
                .update(SaluUpdate::new(
                    SaluOp::Set,
                    SaluOperand::Field("meta.q".into()),
                    SaluOperand::Const(0),
                ))
                .output("meta.qold", SaluOutputValue::Old),
        )
        .register_action(
            RegisterAction::new("min_fb", "fbmin")
                .condition(
                    SaluOperand::Field("meta.fb".into()),
                    Cmp::Lt,
                    SaluOperand::Const(0),
                )
                .update(SaluUpdate::new(
                    SaluOp::Min,
                    SaluOperand::Cell,
                    SaluOperand::Field("meta.fb".into()),
                ))
                .output("meta.fbmin", SaluOutputValue::New)
                .output("meta.neg", SaluOutputValue::Predicate),
        )
        .action(
            Action::new("fwd")
                .param("port", 9)
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                }),
        )
        .action(
            Action::new("rewrite")
                .prim(Primitive::set("ethernet.src_addr", f("ethernet.dst_addr")))
                .prim(Primitive::set(
                    "meta.t",
                    f("ig_prsr_md.global_tstamp[31:0]"),
                ))
                .prim(Primitive::set(
                    "meta.big",
                    f("ig_intr_md.ingress_mac_tstamp[47:32]"),
                )),
        )
        .action(Action::new("pass"))
        .action(
            Action::new("qold")
                .prim(Primitive::Execute {
                    register_action: "keep_q".into(),
                    index: Operand::Const(0),
                })
                .prim(alu(
                    AluOp::Sub,
                    "meta.qoff",
                    f("meta.q"),
                    Operand::Const(QEQ),
                )),
        )
        .action(Action::new("delta").prim(alu(
            AluOp::Sub,
            "meta.qdelta",
            f("meta.q"),
            f("meta.qold"),
        )))
        .action(Action::new("w").prim(alu(
            AluOp::Shl,
            "meta.wq",
            f("meta.qdelta"),
            Operand::Const(1),
        )))
        .action(Action::new("sum").prim(alu(AluOp::Add, "meta.sum", f("meta.qoff"), f("meta.wq"))))
        .action(Action::new("fb").prim(alu(
            AluOp::Sub,
            "meta.fb",
            Operand::Const(0),
            f("meta.sum"),
        )))
        .action(
            Action::new("fbmin")
                .prim(Primitive::Execute {
                    register_action: "min_fb".into(),
                    index: Operand::Const(0),
                })
                .prim(alu(
                    AluOp::Sar,
                    "meta.half",
                    f("meta.fb"),
                    Operand::Const(1),
                )),
        )
        .table(
            Table::new("l2", MatchKind::Exact, &["ethernet.dst_addr"], 64)
                .action("fwd")
                .default_action("fwd", &[0])
                .entry(&[0x0200_0000_0007], "fwd", &[7])
                .entry(&[0xffff_ffff_fffe], "fwd", &[0x1ff]),
        )
        .table(
            Table::new("acl", MatchKind::Ternary, &["ethernet.src_addr"], 16)
                .action("rewrite")
                .action("pass")
                .default_action("pass", &[])
                .ternary_entry(&[(0x0a00_0000_0000, 0xff00_0000_0000)], "rewrite", &[]),
        )
        .table(keyless("qold"))
        .table(keyless("delta"))
        .table(keyless("w"))
        .table(keyless("sum"))
        .table(keyless("fb"))
        .table(keyless("fbmin"))
        .ingress(
            ["l2", "acl", "qold", "delta", "w", "sum", "fb", "fbmin"]
                .iter()
                .map(|t| Stmt::apply(t))
                .collect(),
        )
        .build()
        .unwrap()
}

fn placed(p: &Program) -> (Arc<Checked>, Placed) {
    let c = check(p).unwrap_or_else(|e| panic!("{}: {e}", p.name));
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    verify(&c, &pl, &Budget::tofino2()).unwrap();
    (Arc::new(c), pl)
}

fn meta(c: &Checked, name: &str) -> Field {
    c.metadata.iter().find(|m| m.0 == name).unwrap().1
}

/// Sets a 48-bit field given as (high 16 bits, low 32 bits) pieces.
fn set48(phv: &mut Phv, pieces: [Field; 2], v: u64) {
    phv.set(pieces[0], (v >> 32) as u32);
    phv.set(pieces[1], v as u32);
}

const ETH_DST: [Field; 2] = [
    Field::whole(Container::b32(0)),
    Field::whole(Container::b16(4)),
];
const ETH_SRC: [Field; 2] = [
    Field::whole(Container::b16(5)),
    Field::whole(Container::b32(1)),
];

fn get_dst(phv: &Phv) -> u64 {
    (phv.get(ETH_DST[0]) as u64) << 16 | phv.get(ETH_DST[1]) as u64
}

fn get_src(phv: &Phv) -> u64 {
    (phv.get(ETH_SRC[0]) as u64) << 32 | phv.get(ETH_SRC[1]) as u64
}

/// A PHV with the given MACs, queue length and time stamps.
fn phv_with(c: &Checked, dst: u64, src: u64, q: u32, global: u64, mac: u64) -> Phv {
    let mut phv = Phv::new(&PipelineParams::default().phv);
    phv.set(layout::VALID_ETHERNET, 1);
    phv.set(ETH_DST[0], (dst >> 16) as u32);
    phv.set(ETH_DST[1], (dst & 0xffff) as u32);
    phv.set(ETH_SRC[0], (src >> 32) as u32);
    phv.set(ETH_SRC[1], src as u32);
    if let Some(m) = c.metadata.iter().find(|m| m.0 == "meta.q") {
        phv.set(m.1, q);
    }
    set48(&mut phv, fields::IG_GLOBAL_TSTAMP, global);
    set48(&mut phv, fields::IG_MAC_TSTAMP, mac);
    phv
}

#[test]
fn l2_table_matches_48_bit_macs_and_copies_across_container_splits() {
    let (c, _) = placed(&l2_qcn());
    // The 48-bit key is two pieces: dst_addr[47:16] in 32-bit #0, [15:0] in 16-bit #4.
    assert_eq!(c.tables[0].keys, ETH_DST.to_vec());
    assert_eq!(c.tables[0].key_bits(), 48);
    let mut interp = Interpreter::new(Arc::clone(&c));
    let port = |phv: &Phv| phv.get(layout::UCAST_EGRESS_PORT);
    for (dst, want) in [
        (0x0200_0000_0007u64, 7),
        (0xffff_ffff_fffe, 0x1ff),
        // Same low 32 bits as the first entry, other high bits: a miss.
        (0x0300_0000_0007, 0),
        // Same high 32 bits, other low 16.
        (0x0200_0000_0008, 0),
    ] {
        let mut phv = phv_with(&c, dst, 0x0b00_0000_0001, 0, 0, 0);
        interp.run(Thread::Ingress, &mut phv);
        assert_eq!(port(&phv), want, "{dst:#x}");
        // acl: 0x0b.. is not 0x0a/8, so the source stays.
        assert_eq!(get_src(&phv), 0x0b00_0000_0001);
    }
    // acl hits 0x0a/8: the source MAC becomes the destination (16+32 <- 32+16), meta.t the
    // low 32 bits of the global time stamp, meta.big bits 47:32 of the MAC stamp.
    let global = 0x1234_5678_9abc;
    let mac = 0xfedc_ba98_7654;
    let mut phv = phv_with(&c, 0x0200_0000_0007, 0x0a11_2233_4455, 0, global, mac);
    interp.run(Thread::Ingress, &mut phv);
    assert_eq!(get_src(&phv), 0x0200_0000_0007);
    assert_eq!(get_dst(&phv), 0x0200_0000_0007);
    assert_eq!(phv.get(meta(&c, "meta.t")), 0x5678_9abc);
    assert_eq!(phv.get(meta(&c, "meta.big")), 0xfedc);
}

#[test]
fn qcn_feedback_is_computed_signed() {
    let (c, pl) = placed(&l2_qcn());
    let mut interp = Interpreter::new(Arc::clone(&c));
    let mut prog = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
    // Q = 10, 30, 25 with Qeq = 20, w = 2:
    //   Qold 0, 10, 30; Qoff -10, 10, 5; Qδ 10, 20, -5; Fb = -(Qoff + 2 Qδ) = -10, -50, 5.
    // The signed array keeps min(0, Fb...) = -10, -50, -50 (unsigned it would stay 0), and
    // its predicate says Fb < 0 for the first two; Fb >> 1 (arithmetic) = -5, -25, 2.
    let want: [(i32, i32, u32, i32); 3] = [(-10, -10, 1, -5), (-50, -50, 1, -25), (5, -50, 0, 2)];
    for (q, want) in [10u32, 30, 25].into_iter().zip(want) {
        let mut phv = phv_with(&c, 0, 0, q, 0, 0);
        let mut other = phv.clone();
        interp.run(Thread::Ingress, &mut phv);
        for s in 0..20 {
            t2_pipeline::StageProgram::apply(&mut prog, s, &mut other);
        }
        assert_eq!(phv, other);
        let got = (
            phv.get(meta(&c, "meta.fb")) as i32,
            phv.get(meta(&c, "meta.fbmin")) as i32,
            phv.get(meta(&c, "meta.neg")),
            phv.get(meta(&c, "meta.half")) as i32,
        );
        assert_eq!(got, want, "Q = {q}");
    }
    assert_eq!(
        interp.state.registers[1].to_vec(),
        vec![(-50i32 as u32) as u64]
    );
    assert_eq!(interp.state, prog.state);
}

#[test]
fn signed_alu_ops_sign_extend_narrow_fields() {
    // 0xf0 in an 8-bit field is -16: smax with 3 gives 3, smin gives -16 (0xfffffff0
    // truncated to the 16-bit destination: 0xfff0); max (unsigned) gives 0xf0.
    let p = ProgramBuilder::new("s")
        .metadata("meta.a", 8)
        .metadata("meta.x", 16)
        .metadata("meta.y", 16)
        .metadata("meta.z", 16)
        .metadata("meta.r", 16)
        .action(
            Action::new("a")
                .prim(alu(AluOp::SMax, "meta.x", f("meta.a"), Operand::Const(3)))
                .prim(alu(AluOp::SMin, "meta.y", f("meta.a"), Operand::Const(3)))
                .prim(alu(AluOp::Max, "meta.z", f("meta.a"), Operand::Const(3)))
                .prim(alu(AluOp::Sar, "meta.r", f("meta.a"), Operand::Const(2))),
        )
        .table(keyless("a"))
        .ingress(vec![Stmt::apply("a")])
        .build()
        .unwrap();
    let c = Arc::new(check(&p).unwrap());
    let mut phv = Phv::new(&PipelineParams::default().phv);
    phv.set(meta(&c, "meta.a"), 0xf0);
    Interpreter::new(Arc::clone(&c)).run(Thread::Ingress, &mut phv);
    let g = |n: &str| phv.get(meta(&c, n));
    assert_eq!(
        (g("meta.x"), g("meta.y"), g("meta.z"), g("meta.r")),
        (3, 0xfff0, 0xf0, 0xfffc)
    );
}

fn refused(p: &Program, path: &str, problem: &str) {
    let e = check(p).expect_err("the program must be refused");
    assert!(e.path.contains(path), "path `{}` lacks `{path}`", e.path);
    assert!(
        e.problem.contains(problem),
        "problem `{}` lacks `{problem}`",
        e.problem
    );
}

fn one(action: Action, table: Table, egress: bool) -> Program {
    let name = table.name.clone();
    let b = ProgramBuilder::new("t")
        .metadata("meta.m", 32)
        .metadata("meta.w", 16);
    let b = b.action(action).table(table);
    if egress {
        b.egress(vec![Stmt::apply(&name)]).build_unchecked()
    } else {
        b.ingress(vec![Stmt::apply(&name)]).build_unchecked()
    }
}

#[test]
fn intrinsic_metadata_is_refused_outside_its_gress() {
    let t = keyless("a");
    let read = |n: &str| Action::new("a").prim(Primitive::set("meta.m", f(n)));
    refused(
        &one(read("eg_intr_md.deq_qdepth"), t.clone(), false),
        "actions[0] (a).primitives[0]",
        "field `eg_intr_md.deq_qdepth` exists only in egress, but the action (of table `a`) runs in ingress",
    );
    refused(
        &one(read("ig_prsr_md.global_tstamp[31:0]"), t.clone(), true),
        "actions[0] (a).primitives[0]",
        "exists only in ingress, but the action (of table `a`) runs in egress",
    );
    refused(
        &one(read("ghost_md.qlength"), t.clone(), false),
        "actions[0] (a).primitives[0]",
        "exists only in ghost",
    );
    // Both gresses have their own time stamp and pkt_length.
    check(&one(
        read("ig_prsr_md.global_tstamp[31:0]"),
        t.clone(),
        false,
    ))
    .unwrap();
    check(&one(
        read("eg_prsr_md.global_tstamp[31:0]"),
        t.clone(),
        true,
    ))
    .unwrap();
    check(&one(read("eg_intr_md.enq_tstamp"), t.clone(), true)).unwrap();
    // Through a RegisterAction, in a gateway, in a table key.
    let p = ProgramBuilder::new("t")
        .metadata("meta.m", 32)
        .register("r", 32, 4)
        .register_action(RegisterAction::new("ra", "r").update(SaluUpdate::new(
            SaluOp::Set,
            SaluOperand::Field("eg_intr_md.enq_tstamp".into()),
            SaluOperand::Const(0),
        )))
        .action(Action::new("a").prim(Primitive::Execute {
            register_action: "ra".into(),
            index: Operand::Const(0),
        }))
        .table(keyless("a"))
        .ingress(vec![Stmt::apply("a")])
        .build_unchecked();
    refused(
        &p,
        "primitives[0] via register_actions[0] (ra).updates[0]",
        "`eg_intr_md.enq_tstamp` exists only in egress",
    );
    let p = ProgramBuilder::new("t")
        .action(Action::new("a"))
        .table(keyless("a"))
        .ingress(vec![Stmt::If {
            name: Some("late".into()),
            cond: Condition::new("eg_intr_md.deq_timedelta", Cmp::Gt, Operand::Const(5)),
            then: vec![Stmt::apply("a")],
            otherwise: vec![],
        }])
        .build_unchecked();
    refused(
        &p,
        "ingress[0] (late)",
        "`eg_intr_md.deq_timedelta` exists only in egress, but the gateway runs in ingress",
    );
    let t = Table::new("a", MatchKind::Exact, &["eg_intr_md.egress_qid"], 8).action("a");
    refused(
        &one(Action::new("a"), t, false),
        "tables[0] (a).keys",
        "`eg_intr_md.egress_qid` exists only in egress",
    );
}

#[test]
fn wide_fields_and_slices_are_refused_where_hardware_cannot_use_them() {
    let t = keyless("a");
    let act = |p: Primitive| Action::new("a").prim(p);
    // An ALU sees one container.
    refused(
        &one(act(alu(AluOp::Add, "meta.m", f("ig_prsr_md.global_tstamp"), Operand::Const(1))), t.clone(), false),
        "actions[0] (a).primitives[0]",
        "`ig_prsr_md.global_tstamp` is 48 bits over 2 containers; an ALU, a gateway and a stateful ALU see at most 32 bits",
    );
    refused(
        &one(
            act(Primitive::set("meta.m", f("ethernet.dst_addr[31:0]"))),
            t.clone(),
            false,
        ),
        "primitives[0]",
        "slice `ethernet.dst_addr[31:0]`: the bits span two PHV containers",
    );
    refused(
        &one(
            act(Primitive::set("meta.m", f("ethernet.dst_addr[48:0]"))),
            t.clone(),
            false,
        ),
        "primitives[0]",
        "`ethernet.dst_addr` is 48 bits; a slice needs hi >= lo and hi < 48",
    );
    refused(
        &one(
            act(Primitive::set("meta.m", f("ethernet.dst_addr[a:0]"))),
            t.clone(),
            false,
        ),
        "primitives[0]",
        "bounds are not numbers",
    );
    refused(
        &one(
            act(Primitive::set("ethernet.dst_addr", f("meta.m"))),
            t.clone(),
            false,
        ),
        "primitives[0]",
        "`ethernet.dst_addr` is 48 bits but `meta.m` is 32; `set` copies equal widths",
    );
    refused(
        &one(
            act(Primitive::set("ethernet.dst_addr", Operand::Const(1 << 48))),
            t.clone(),
            false,
        ),
        "primitives[0]",
        "does not fit `ethernet.dst_addr`'s 48 bits",
    );
    refused(
        &one(
            act(Primitive::set(
                "ig_prsr_md.global_tstamp",
                Operand::Const(1),
            )),
            t.clone(),
            false,
        ),
        "primitives[0]",
        "field `ig_prsr_md.global_tstamp` is read-only",
    );
    refused(
        &one(
            act(Primitive::set(
                "ig_prsr_md.global_tstamp[15:0]",
                Operand::Const(1),
            )),
            t.clone(),
            false,
        ),
        "primitives[0]",
        "read-only",
    );
    let a = Action::new("a")
        .param("mac", 32)
        .prim(Primitive::set("ethernet.dst_addr", Operand::param("mac")));
    refused(
        &one(a, t.clone(), false),
        "primitives[0]",
        "`ethernet.dst_addr` is 48 bits but parameter `mac` is 32",
    );
    let a = Action::new("a").param("mac", 48).prim(alu(
        AluOp::Add,
        "meta.m",
        Operand::param("mac"),
        Operand::Const(1),
    ));
    refused(
        &one(a, t.clone(), false),
        "primitives[0]",
        "parameter `mac` is 48 bits; an ALU sees 32",
    );
    // One parameter into fields cut differently (32+16 and 16+32).
    let a = Action::new("a")
        .param("mac", 48)
        .prim(Primitive::set("ethernet.dst_addr", Operand::param("mac")))
        .prim(Primitive::set("ethernet.src_addr", Operand::param("mac")));
    refused(
        &one(a, t.clone(), false),
        "primitives[1]",
        "parameter `mac` is already cut as [16, 32] bits",
    );
    let a = Action::new("a").param("mac", 65);
    refused(
        &one(a, t.clone(), false),
        "actions[0] (a).params[0] (mac)",
        "width 65 is outside 1..=64",
    );
    // A wide copy writes both pieces: a second write of one piece is a double write.
    let a = Action::new("a")
        .prim(Primitive::set("ethernet.dst_addr", Operand::Const(5)))
        .prim(Primitive::set("ethernet.dst_addr[15:0]", Operand::Const(1)));
    refused(
        &one(a, t.clone(), false),
        "primitives[1]",
        "writes a field an earlier primitive",
    );
    // Key values fit the whole 48-bit key; lpm prefixes are over all 48 bits.
    let k = Table::new("a", MatchKind::Exact, &["ethernet.dst_addr"], 8)
        .action("a")
        .entry(&[1 << 48], "a", &[]);
    refused(
        &one(Action::new("a"), k, false),
        "tables[0] (a).entries[0]",
        "does not fit in 48 bits",
    );
    let k = Table::new("a", MatchKind::Lpm, &["ethernet.dst_addr"], 8)
        .action("a")
        .ternary_entry(&[(0, 0xffff_0000_ffff)], "a", &[]);
    refused(
        &one(Action::new("a"), k, false),
        "tables[0] (a).entries[0]",
        "is not a prefix of the 48-bit key",
    );
    // A signed array needs whole-byte cells.
    let p = ProgramBuilder::new("t")
        .register_signed("r", 1, 4)
        .build_unchecked();
    refused(
        &p,
        "registers[0] (r)",
        "a signed array needs cells of 8, 16, 32 or 64 bits",
    );
}

#[test]
fn a_48_bit_action_parameter_rewrites_macs_from_table_entries() {
    // set_macs(dmac, smac): each parameter is cut where its destination's containers are.
    let p = ProgramBuilder::new("rw")
        .metadata("meta.k", 8)
        .action(
            Action::new("set_macs")
                .param("dmac", 48)
                .param("port", 9)
                .param("smac", 48)
                .prim(Primitive::set("ethernet.dst_addr", Operand::param("dmac")))
                .prim(Primitive::set("ethernet.src_addr", Operand::param("smac")))
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                }),
        )
        .table(
            Table::new("rw", MatchKind::Exact, &["meta.k"], 4)
                .action("set_macs")
                .default_action("set_macs", &[0, 0, 0])
                .entry(&[1], "set_macs", &[0x0200_0000_00aa, 5, 0xfeed_0000_beef]),
        )
        .ingress(vec![Stmt::apply("rw")])
        .build()
        .unwrap();
    let (c, pl) = placed(&p);
    let a = &c.actions[0];
    // dmac: 16 low bits in its own slot 0, 32 high in slot 3; smac: 32 low in slot 2, 16
    // high in slot 4.
    assert_eq!(
        a.arg_chunks,
        vec![vec![(0, 16), (3, 32)], vec![(1, 9)], vec![(2, 32), (4, 16)]]
    );
    assert_eq!(a.param_bits, vec![16, 9, 32, 32, 16]);
    let mut interp = Interpreter::new(Arc::clone(&c));
    let mut prog = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
    let mut phv = phv_with(&c, 0x1111_2222_3333, 0x4444_5555_6666, 0, 0, 0);
    phv.set(meta(&c, "meta.k"), 1);
    let mut other = phv.clone();
    interp.run(Thread::Ingress, &mut phv);
    for s in 0..20 {
        t2_pipeline::StageProgram::apply(&mut prog, s, &mut other);
    }
    assert_eq!(phv, other);
    assert_eq!(get_dst(&phv), 0x0200_0000_00aa);
    assert_eq!(get_src(&phv), 0xfeed_0000_beef);
    assert_eq!(phv.get(layout::UCAST_EGRESS_PORT), 5);
    // An argument must fit the parameter's 48 bits.
    let mut bad = p.clone();
    bad.tables[0].entries[0].action.args[0] = 1 << 48;
    refused(
        &bad,
        "tables[0] (rw).entries[0]",
        "argument 0 (281474976710656) does not fit in 48 bits",
    );
}

#[test]
fn lpm_on_a_48_bit_key_picks_the_longest_prefix_across_pieces() {
    // /40 reaches into the low piece (16-bit #4); /8 stays in the high one.
    let p = ProgramBuilder::new("l")
        .action(
            Action::new("fwd")
                .param("port", 9)
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                }),
        )
        .table(
            Table::new("l", MatchKind::Lpm, &["ethernet.dst_addr"], 8)
                .action("fwd")
                .default_action("fwd", &[0])
                .lpm_entry(&[], (0x0200_0000_0000, 8, 48), "fwd", &[1])
                .lpm_entry(&[], (0x0200_0000_ab00, 40, 48), "fwd", &[2]),
        )
        .ingress(vec![Stmt::apply("l")])
        .build()
        .unwrap();
    let (c, _) = placed(&p);
    let mut interp = Interpreter::new(Arc::clone(&c));
    for (dst, want) in [
        (0x0200_0000_ab17u64, 2),
        (0x0200_0000_ac17, 1),
        (0x0300_0000_ab17, 0),
    ] {
        let mut phv = phv_with(&c, dst, 0, 0, 0, 0);
        interp.run(Thread::Ingress, &mut phv);
        assert_eq!(phv.get(layout::UCAST_EGRESS_PORT), want, "{dst:#x}");
    }
}

/// Ten keyless ingress tables `t0`..`t9`, each adding 1 to its own field.
fn chain(pins: &[(usize, u32)], after: &[(usize, usize)]) -> Program {
    let mut b = ProgramBuilder::new("pins");
    let mut body = Vec::new();
    for k in 0..10 {
        let name = format!("t{k}");
        b = b
            .metadata(&format!("meta.m{k}"), 8)
            .action(Action::new(&name).prim(alu(
                AluOp::Add,
                &format!("meta.m{k}"),
                f(&format!("meta.m{k}")),
                Operand::Const(1),
            )));
        let mut t = keyless(&name);
        if let Some(&(_, s)) = pins.iter().find(|p| p.0 == k) {
            t = t.stage(s);
        }
        if let Some(&(_, o)) = after.iter().find(|p| p.0 == k) {
            t = t.after(&format!("t{o}"));
        }
        b = b.table(t);
        body.push(Stmt::apply(&name));
    }
    b.ingress(body).build_unchecked()
}

#[test]
fn stage_pins_and_after_place_tables_or_say_why_not() {
    // Independent tables all go to stage 0; a pin moves one to its stage, `after` puts one
    // past another.
    let c = check(&chain(&[(3, 5)], &[(4, 3)])).unwrap();
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    verify(&c, &pl, &Budget::tofino2()).unwrap();
    let stages: Vec<usize> = (0..10).map(|i| pl.stage_of[0][i].unwrap()).collect();
    assert_eq!(stages, [0, 0, 0, 5, 6, 0, 0, 0, 0, 0]);
    // verify() holds placement to the pins: t3 moved to stage 4 breaks its pin, t4 moved to
    // stage 5 its `after`.
    let moved = |name: &str, to: usize| {
        let mut bad = pl.clone();
        for u in &mut bad.units {
            if u.allocation.name == name {
                u.allocation.stage = to;
            }
        }
        verify(&c, &bad, &Budget::tofino2()).unwrap_err()
    };
    assert_eq!(moved("t3", 4), "`t3` is pinned to stage 5 but placed in 4");
    assert_eq!(
        moved("t4", 5),
        "`t4` must follow `t3` (Some(5)) but is in stage 5"
    );
    // A pin a dependency cannot meet: t4 after t3 (stage 5) pinned to stage 2.
    let c = check(&chain(&[(3, 5), (4, 2)], &[(4, 3)])).unwrap();
    let f = place(&c, &Budget::tofino2()).failure.unwrap();
    assert_eq!(
        (f.resource.as_str(), f.unit.as_str(), f.stage),
        ("stages", "t4", Some(2))
    );
    assert_eq!((f.needed, f.available), (7, 3));
    assert!(
        f.detail
            .contains("@stage(2) pins it, but its dependencies need stage 6"),
        "{f}"
    );
    // Past the pipe's stages: the checker knows Tofino2 has 20.
    refused(
        &chain(&[(1, 20)], &[]),
        "tables[1] (t1).stage",
        "stage 20 is outside 0..20",
    );
    let small = Budget {
        stages: 4,
        ..Budget::tofino2()
    };
    let c = check(&chain(&[(1, 7)], &[])).unwrap();
    let f = place(&c, &small).failure.unwrap();
    assert!(
        f.detail
            .contains("@stage(7) names a stage past the pipe's 4"),
        "{f}"
    );
    // `after` names an earlier table of the same control.
    refused(
        &chain(&[], &[(2, 5)]),
        "tables[2] (t2).after",
        "table `t5` is applied in ingress later",
    );
    refused(
        &chain(&[], &[(2, 2)]),
        "tables[2] (t2).after",
        "a table cannot follow itself",
    );
    let mut p = chain(&[], &[]);
    p.tables[2].after = Some("nope".into());
    refused(&p, "tables[2] (t2).after", "unknown table `nope`");
}

#[test]
fn a_pinned_ingress_table_lets_a_ghost_table_share_its_array_without_dependencies() {
    // The ghost control computes an index in two dependent tables, then writes the array
    // ingress reads; the ghost writer needs stage 2. Unpinned, the ingress reader sits in
    // stage 0 and the ghost table cannot join it; @stage(2) puts the reader there.
    let build = |pin: Option<u32>| {
        let mut reader = keyless("read");
        if let Some(s) = pin {
            reader = reader.stage(s);
        }
        ProgramBuilder::new("g")
            .metadata("meta.v", 32)
            .metadata("meta.i", 16)
            .metadata("meta.j", 16)
            .register("depth", 32, 16)
            .register_action(
                RegisterAction::new("rd", "depth").output("meta.v", SaluOutputValue::Old),
            )
            .register_action(RegisterAction::new("wr", "depth").update(SaluUpdate::new(
                SaluOp::Set,
                SaluOperand::Field("ghost_md.qlength".into()),
                SaluOperand::Const(0),
            )))
            .action(Action::new("read").prim(Primitive::Execute {
                register_action: "rd".into(),
                index: Operand::Const(0),
            }))
            .action(Action::new("i").prim(Primitive::set("meta.i", f("ghost_md.qid"))))
            .action(Action::new("j").prim(alu(
                AluOp::Add,
                "meta.j",
                f("meta.i"),
                Operand::Const(1),
            )))
            .action(Action::new("write").prim(Primitive::Execute {
                register_action: "wr".into(),
                index: f("meta.j"),
            }))
            .table(reader)
            .table(keyless("i"))
            .table(keyless("j"))
            .table(keyless("write"))
            .ingress(vec![Stmt::apply("read")])
            .ghost(vec![
                Stmt::apply("i"),
                Stmt::apply("j"),
                Stmt::apply("write"),
            ])
            .build()
            .unwrap()
    };
    let c = check(&build(None)).unwrap();
    let f = place(&c, &Budget::tofino2()).failure.unwrap();
    assert_eq!((f.unit.as_str(), f.stage), ("write", Some(0)));
    let (c, pl) = placed(&build(Some(2)));
    assert_eq!(pl.stage_of[0][0], Some(2));
    assert_eq!(pl.stage_of[2][2], Some(2));
    let _ = c;
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Placed stages equal the interpreter on the L2/QCN program: random MACs (biased to
    /// the entries), queue lengths and time stamps, over several packets (the registers
    /// carry over).
    #[test]
    fn l2_qcn_placed_equals_interpreted(
        packets in prop::collection::vec(
            (0u64..6, any::<u64>(), any::<u64>(), any::<u32>(), any::<u64>(), any::<u64>()),
            1..8,
        ),
    ) {
        let (c, pl) = placed(&l2_qcn());
        let mut interp = Interpreter::new(Arc::clone(&c));
        let mut prog = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
        for (pick, dst, src, q, global, mac) in packets {
            let m48 = (1u64 << 48) - 1;
            let dst = match pick {
                0 => 0x0200_0000_0007,
                1 => 0xffff_ffff_fffe,
                _ => dst & m48,
            };
            let src = if pick % 2 == 0 { 0x0a00_0000_0000 | src & 0xff_ffff_ffff } else { src & m48 };
            let q = if pick < 4 { q % 64 } else { q };
            let mut phv = phv_with(&c, dst, src, q, global & m48, mac & m48);
            let mut other = phv.clone();
            interp.run(Thread::Ingress, &mut phv);
            for s in 0..20 {
                t2_pipeline::StageProgram::apply(&mut prog, s, &mut other);
            }
            prop_assert_eq!(&phv, &other);
        }
        prop_assert_eq!(&interp.state, &prog.state);
    }
}

#[test]
fn the_new_ir_elements_round_trip_through_json() {
    let mut p = l2_qcn();
    p.tables[2] = p.tables[2].clone().stage(4);
    p.tables[3] = p.tables[3].clone().after("qold");
    p.overhead = Some(t2_pipeline::ir::Overhead {
        recirculated_bytes: 64,
        mirrored_bytes: 0,
    });
    let text = p.to_json();
    for key in [
        "\"signed\": true",
        "\"stage\": 4",
        "\"after\": \"qold\"",
        "\"op\": \"sar\"",
        "\"recirculated_bytes\": 64",
    ] {
        assert!(text.contains(key), "`{key}` missing from\n{text}");
    }
    assert_eq!(Program::from_json(&text).unwrap(), p);
    let (_, pl) = placed(&p);
    assert_eq!((pl.stage_of[0][2], pl.stage_of[0][3]), (Some(4), Some(5)));
}
