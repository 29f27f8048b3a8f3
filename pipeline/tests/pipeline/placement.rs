//! Placement under Tofino2 budgets: generated programs stay within every budget and honour
//! every dependency (and run the same placed as interpreted); programs built to exceed one
//! budget are refused with that resource named.

use proptest::prelude::*;
use std::sync::Arc;
use t2_pipeline::check::{check, Checked, Thread};
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::fields;
use t2_pipeline::ir::{
    Action, AluOp, Cmp, Condition, Half, MatchKind, Operand, Primitive, Program, ProgramBuilder,
    RegisterAction, SaluOp, SaluOperand, SaluOutput, SaluOutputValue, SaluUpdate, Stmt, Table,
};
use t2_pipeline::params::{PipelineParams, StageLatency};
use t2_pipeline::phv::Phv;
use t2_pipeline::place::{place, verify, Budget};
use t2_pipeline::stage::Dependency;
use t2_pipeline::Cells;

fn no_fit(p: &Program) -> t2_pipeline::place::NoFit {
    let c = check(p).unwrap();
    let pl = place(&c, &Budget::tofino2());
    let f = pl.failure.clone().expect("the program must not fit");
    verify(&c, &pl, &Budget::tofino2()).expect("what was placed is still valid");
    f
}

/// `n` keyless tables, each adding to `meta.m0` what the previous wrote, or chained by
/// match dependencies when `keyed`.
fn chain(n: usize) -> Program {
    let mut b = ProgramBuilder::new("chain");
    let mut body = Vec::new();
    for k in 0..=n {
        b = b.metadata(&format!("meta.m{k}"), 16);
    }
    for k in 0..n {
        let (src, dst) = (format!("meta.m{k}"), format!("meta.m{}", k + 1));
        b = b
            .action(Action::new(&format!("a{k}")).prim(Primitive::set(&dst, Operand::Const(1))))
            .table(
                Table::new(&format!("t{k}"), MatchKind::Exact, &[&src], 16)
                    .action(&format!("a{k}")),
            );
        body.push(Stmt::apply(&format!("t{k}")));
    }
    b.ingress(body).build_unchecked()
}

#[test]
fn a_chain_of_20_match_dependencies_fits_and_21_does_not() {
    let c = check(&chain(20)).unwrap();
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits());
    assert!(pl
        .ingress_timing
        .stages
        .iter()
        .all(|s| s.dependency == Dependency::Match));
    assert_eq!(
        pl.ingress_timing.mau_cycles(&StageLatency::default()),
        20 * 23
    );
    let f = no_fit(&chain(21));
    assert_eq!(f.resource, "stages");
    assert_eq!(f.unit, "t20");
    assert_eq!((f.needed, f.available), (21, 20));
}

#[test]
fn oversized_register_array_is_refused() {
    // 100,000 x 32 b needs 25 RAMs; one array gets at most 23.
    let p = ProgramBuilder::new("big")
        .register("r", 32, 100_000)
        .register_action(RegisterAction {
            name: "ra".into(),
            register: "r".into(),
            conditions: vec![],
            updates: vec![],
            outputs: vec![],
        })
        .action(Action::new("a").prim(Primitive::Execute {
            register_action: "ra".into(),
            index: Operand::Const(0),
        }))
        .table(Table::new("counter", MatchKind::Exact, &[], 0).action("a"))
        .ingress(vec![Stmt::apply("counter")])
        .build_unchecked();
    let f = no_fit(&p);
    assert_eq!(f.resource, "register_array_rams");
    assert_eq!(f.unit, "counter");
    assert_eq!((f.needed, f.available), (25, 23));
}

#[test]
fn a_ternary_table_wider_than_a_stage_is_split_over_two() {
    // 32 key bits, 13,000 entries: 26 TCAMs > 24, so stage 0 takes 24 x 512 = 12,288 entries
    // and stage 1 the other 712 in 2 TCAMs.
    let p = ProgramBuilder::new("acl")
        .action(Action::new("a"))
        .table(Table::new("acl", MatchKind::Ternary, &["ipv4.src_addr"], 13_000).action("a"))
        .ingress(vec![Stmt::apply("acl")])
        .build_unchecked();
    let c = check(&p).unwrap();
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    verify(&c, &pl, &Budget::tofino2()).unwrap();
    let parts: Vec<_> = pl
        .units
        .iter()
        .map(|u| {
            let a = &u.allocation;
            (a.stage, a.entries, a.tcams, a.part, a.parts)
        })
        .collect();
    assert_eq!(parts, vec![(0, 12_288, 24, 1, 2), (1, 712, 2, 2, 2)]);
    assert_eq!(pl.stage_of[0][0], Some(1));
    assert_eq!(pl.first_stage_of(Thread::Ingress, 0), Some(0));
    // The second part is predicated on the first part's miss (a control dependency), so
    // stage 1 is action-dependent and both stages pay the TCAM extra.
    assert_eq!(pl.ingress_timing.stages[1].dependency, Dependency::Action);
    assert!(pl.ingress_timing.stages[0].tcam && pl.ingress_timing.stages[1].tcam);
}

#[test]
fn a_ternary_table_beyond_every_stage_names_tcam() {
    // 250,000 entries need 489 TCAMs; the 20 stages have 480.
    let p = ProgramBuilder::new("acl")
        .action(Action::new("a"))
        .table(Table::new("acl", MatchKind::Ternary, &["ipv4.src_addr"], 250_000).action("a"))
        .ingress(vec![Stmt::apply("acl")])
        .build_unchecked();
    let f = no_fit(&p);
    assert_eq!(
        (f.resource.as_str(), f.stage, f.unit.as_str()),
        ("tcam", None, "acl")
    );
    assert_eq!((f.needed, f.available), (489, 480));
    assert!(
        f.detail.contains("leaves 4240 of its 250000 entries"),
        "{f}"
    );
}

#[test]
fn an_exact_table_too_big_for_a_stage_splits_and_its_dependents_follow_the_last_part() {
    // 32-bit key, 36-bit entries, 3 per word: 3072 entries per RAM. 300,000 entries: stage 0
    // takes 80 RAMs = 245,760 entries, stage 1 the other 54,240 in 18 RAMs. `after` matches
    // on what `big` writes, so it goes after the last part, in stage 2, match-dependent.
    let p = ProgramBuilder::new("split")
        .metadata("meta.x", 8)
        .action(Action::new("a").prim(Primitive::set("meta.x", Operand::Const(1))))
        .action(Action::new("b"))
        .table(Table::new("big", MatchKind::Exact, &["ipv4.dst_addr"], 300_000).action("a"))
        .table(Table::new("after", MatchKind::Exact, &["meta.x"], 16).action("b"))
        .ingress(vec![Stmt::apply("big"), Stmt::apply("after")])
        .build_unchecked();
    let c = check(&p).unwrap();
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    verify(&c, &pl, &Budget::tofino2()).unwrap();
    let rows: Vec<_> = pl
        .units
        .iter()
        .map(|u| {
            let a = &u.allocation;
            (a.name.as_str(), a.stage, a.entries, a.match_rams)
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("big", 0, 245_760, 80),
            ("big", 1, 54_240, 18),
            ("after", 2, 16, 1)
        ]
    );
    assert_eq!(pl.splits.len(), 1);
    assert_eq!(pl.splits[0].parts, vec![(0, 245_760), (1, 54_240)]);
    let deps: Vec<_> = pl.ingress_timing.stages[..3]
        .iter()
        .map(|s| s.dependency)
        .collect();
    assert_eq!(
        deps,
        vec![Dependency::Match, Dependency::Action, Dependency::Match]
    );
    // Stage 0 and stage 2 are full-length (23), the other 18 stages action-dependent (2).
    assert_eq!(
        pl.ingress_timing.mau_cycles(&StageLatency::default()),
        2 * 23 + 18 * 2
    );
}

#[test]
fn full_stages_spill_and_then_name_the_stage() {
    // Each table needs 1,000,000 / (1024 x 2) = 489 groups... too big; use 40-RAM tables:
    // 32-bit keys + 4 + 0 = 36 bits, 3 per word: 40 RAMs hold 122,880 entries.
    let mut b = ProgramBuilder::new("big").action(Action::new("a"));
    let mut body = Vec::new();
    for k in 0..41 {
        b = b.table(
            Table::new(
                &format!("t{k}"),
                MatchKind::Exact,
                &["ipv4.dst_addr"],
                122_880,
            )
            .action("a"),
        );
        body.push(Stmt::apply(&format!("t{k}")));
    }
    let p = b.ingress(body).build_unchecked();
    let c = check(&p).unwrap();
    let pl = place(&c, &Budget::tofino2());
    // Two 40-RAM tables per stage: 40 tables fill the 20 stages.
    assert_eq!(pl.units.len(), 40);
    let f = pl.failure.unwrap();
    assert_eq!(
        (f.resource.as_str(), f.stage, f.unit.as_str()),
        ("sram", Some(0), "t40")
    );
    assert_eq!((f.needed, f.available), (120, 80));
}

#[test]
fn too_many_ternary_tables_in_one_stage_spill() {
    let mut b = ProgramBuilder::new("tern").action(Action::new("a"));
    let mut body = Vec::new();
    for k in 0..9 {
        b = b
            .table(Table::new(&format!("t{k}"), MatchKind::Ternary, &["ipv4.ttl"], 16).action("a"));
        body.push(Stmt::apply(&format!("t{k}")));
    }
    let c = check(&b.ingress(body).build_unchecked()).unwrap();
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits());
    // The 9th ternary table goes to stage 1, which is action-dependent: the TCAM extra
    // lengthens stage 0.
    assert_eq!(pl.active_stages(Thread::Ingress), vec![0, 1]);
    let cycles = pl.ingress_timing.stage_cycles(&StageLatency::default());
    assert_eq!(&cycles[..3], &[25, 2, 2]);
}

// ---- generated programs ----

/// A generated unit: a table reading and writing some of a small pool of fields, maybe
/// with a register array, maybe under a gateway.
#[derive(Clone, Debug)]
struct GenTable {
    ternary: bool,
    key: usize,
    size: u32,
    src: usize,
    dst: usize,
    op: u8,
    register: Option<u32>,
    guard: Option<(usize, u32, bool)>,
    egress: bool,
}

const POOL: usize = 6;

fn gen_table() -> impl Strategy<Value = GenTable> {
    (
        any::<bool>(),
        0..POOL,
        prop_oneof![3 => 1u32..64, 1 => 1000u32..12_000],
        0..POOL,
        0..POOL,
        0u8..4,
        prop::option::weighted(0.3, prop_oneof![1u32..2000, 40_000u32..90_000]),
        prop::option::weighted(0.3, (0..POOL, 0u32..16, any::<bool>())),
        prop::bool::weighted(0.25),
    )
        .prop_map(
            |(ternary, key, size, src, dst, op, register, guard, egress)| GenTable {
                ternary,
                key,
                size,
                src,
                dst,
                op,
                register,
                guard,
                egress,
            },
        )
}

fn field(k: usize) -> String {
    format!("meta.f{k}")
}

fn build(tables: &[GenTable]) -> Program {
    let names: Vec<String> = (0..POOL).map(field).collect();
    let mut b = ProgramBuilder::new("gen");
    for n in &names {
        b = b.metadata(n, 16);
    }
    build_on(b, tables, &names)
}

/// The generated tables over the fields `names` (POOL of them).
fn build_on(mut b: ProgramBuilder, tables: &[GenTable], names: &[String]) -> Program {
    let field = |k: usize| names[k].clone();
    let mut ingress = Vec::new();
    let mut egress = Vec::new();
    for (i, g) in tables.iter().enumerate() {
        let name = format!("t{i}");
        let act = format!("a{i}");
        let mut action = Action::new(&act).param("v", 16);
        let kind = if g.ternary {
            MatchKind::Ternary
        } else {
            MatchKind::Exact
        };
        let mut t = Table::new(&name, kind, &[&field(g.key)], g.size).action(&act);
        t = t.default_action(&act, &[i as u64 % 7]);
        if g.ternary {
            t = t.ternary_entry(&[(1, 1)], &act, &[3]);
        } else {
            t = t.entry(&[1], &act, &[5]);
        }
        match g.register {
            Some(cells) => {
                let reg = format!("r{i}");
                b = b.register(&reg, 32, cells).register_action(RegisterAction {
                    name: format!("ra{i}"),
                    register: reg,
                    conditions: vec![],
                    updates: vec![SaluUpdate {
                        when: vec![],
                        half: Half::Lo,
                        op: SaluOp::Add,
                        a: SaluOperand::Cell,
                        b: SaluOperand::Field(field(g.src)),
                    }],
                    outputs: vec![SaluOutput {
                        dst: field(g.dst),
                        value: SaluOutputValue::Old,
                    }],
                });
                action = action.prim(Primitive::Execute {
                    register_action: format!("ra{i}"),
                    index: Operand::field(&field(g.key)),
                });
            }
            None => {
                let op = [AluOp::Add, AluOp::Xor, AluOp::Max, AluOp::Sub][g.op as usize];
                action = action.prim(Primitive::alu(
                    op,
                    &field(g.dst),
                    Operand::field(&field(g.src)),
                    Operand::param("v"),
                ));
            }
        }
        b = b.action(action).table(t);
        let stmt = match g.guard {
            Some((f, v, then)) => {
                let cond = Condition::new(&field(f), Cmp::Gt, Operand::Const(v as u64));
                if then {
                    Stmt::if_(cond, vec![Stmt::apply(&name)], vec![])
                } else {
                    Stmt::if_(cond, vec![], vec![Stmt::apply(&name)])
                }
            }
            None => Stmt::apply(&name),
        };
        if g.egress {
            egress.push(stmt);
        } else {
            ingress.push(stmt);
        }
    }
    b.ingress(ingress).egress(egress).build_unchecked()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever placement decides, every stage is within budget, every dependency is
    /// honoured, and the placed stages compute what the interpreter computes.
    #[test]
    fn generated_programs_place_within_budget_and_run_the_same(
        tables in prop::collection::vec(gen_table(), 1..90),
        inputs in prop::collection::vec(prop::collection::vec(0u32..20, POOL), 1..5),
    ) {
        let p = build(&tables);
        let c = Arc::new(check(&p).map_err(|e| TestCaseError::fail(e.to_string()))?);
        let pl = place(&c, &Budget::tofino2());
        prop_assert!(verify(&c, &pl, &Budget::tofino2()).is_ok(), "{:?}", verify(&c, &pl, &Budget::tofino2()));
        if let Some(f) = &pl.failure {
            // A refusal names a real resource and the unit.
            prop_assert!(!f.unit.is_empty());
            prop_assert!(f.needed > f.available, "{f}");
            return Ok(());
        }
        for thread in [Thread::Ingress, Thread::Egress] {
            let mut interp = Interpreter::new(Arc::clone(&c));
            let mut placed = PlacedThread::new(Arc::clone(&c), &pl, thread);
            let mut reference = PlacedThread::new(Arc::clone(&c), &pl, thread);
            reference.run_reference(true);
            for values in &inputs {
                let mut phv = Phv::new(&PipelineParams::default().phv);
                for (k, v) in values.iter().enumerate() {
                    let f = c.metadata[k].1;
                    phv.set(f, *v);
                }
                let mut other = phv.clone();
                let mut by_reference = phv.clone();
                interp.run(thread, &mut phv);
                for s in 0..20 {
                    t2_pipeline::StageProgram::apply(&mut placed, s, &mut other);
                    t2_pipeline::StageProgram::apply(&mut reference, s, &mut by_reference);
                }
                prop_assert_eq!(&phv, &other);
                prop_assert_eq!(&phv, &by_reference);
            }
            prop_assert_eq!(&interp.state, &placed.state);
            prop_assert_eq!(&interp.state, &reference.state);
        }
    }

    /// n exact tables of `rams` RAMs each, all independent: they pack into stages and the
    /// program fits exactly when the total fits 20 stages; otherwise SRAM is named.
    #[test]
    fn independent_tables_fit_iff_sram_allows(rams in 1u32..=80, n in 1usize..60) {
        // 32-bit key: 36-bit entries, 3 per word: one RAM per 3072 entries.
        let mut b = ProgramBuilder::new("sram").action(Action::new("a"));
        let mut body = Vec::new();
        for k in 0..n {
            b = b.table(
                Table::new(&format!("t{k}"), MatchKind::Exact, &["ipv4.dst_addr"], rams * 3072)
                    .action("a"),
            );
            body.push(Stmt::apply(&format!("t{k}")));
        }
        let c = check(&b.ingress(body).build_unchecked()).unwrap();
        let pl = place(&c, &Budget::tofino2());
        prop_assert!(verify(&c, &pl, &Budget::tofino2()).is_ok());
        // Logical IDs (16 per stage) can bind before SRAM does.
        let per_stage = (80 / rams).min(16) as usize;
        let hash_ok = {
            let groups = rams;
            let ways = groups.min(4);
            let bits = ways * (10 + (32 - (groups.div_ceil(ways) - 1).leading_zeros()));
            (416 / bits.max(1)) as usize
        };
        let per_stage = per_stage.min(hash_ok);
        let fits = n <= per_stage * 20;
        prop_assert_eq!(pl.fits(), fits, "{:?}", pl.failure);
        if let Some(f) = pl.failure {
            prop_assert!(["sram", "logical_ids", "hash_bits"].contains(&f.resource.as_str()), "{f}");
            prop_assert_eq!(f.stage, Some(0));
        }
    }
}

#[test]
fn gateway_outcomes_do_not_collide_with_metadata() {
    let c = check(&build(&[GenTable {
        ternary: false,
        key: 0,
        size: 4,
        src: 1,
        dst: 2,
        op: 0,
        register: None,
        guard: Some((3, 2, true)),
        egress: false,
    }]))
    .unwrap();
    let bit = c.gateways[0].bit;
    assert!(c.metadata.iter().all(|(_, f)| !fields::overlaps(*f, bit)));
}

/// A one-table program whose table alone needs more of `resource` than a stage has, by
/// `extra` units of the table's own sizing.
fn exceeding(resource: &str, extra: u32) -> Program {
    let mut b = ProgramBuilder::new("over");
    let mut table = Table::new("big", MatchKind::Exact, &[], 0);
    match resource {
        "sram" => {
            // 32-bit key, 3 entries per word: 3072 entries per RAM.
            table = Table::new(
                "big",
                MatchKind::Exact,
                &["ipv4.dst_addr"],
                // More than all 20 stages hold: a table is split over stages.
                (20 * 80 + extra) * 3072,
            );
            b = b.action(Action::new("a"));
            table = table.action("a");
        }
        "tcam" => {
            table = Table::new(
                "big",
                MatchKind::Ternary,
                &["ipv4.dst_addr"],
                (20 * 24 + extra) * 512,
            );
            b = b.action(Action::new("a"));
            table = table.action("a");
        }
        "ternary_xbar_bytes" | "exact_xbar_bytes" => {
            let (kind, bytes) = if resource == "ternary_xbar_bytes" {
                (MatchKind::Ternary, 66)
            } else {
                (MatchKind::Exact, 128)
            };
            let n = (bytes + extra).div_ceil(4);
            let names: Vec<String> = (0..n).map(|k| format!("meta.k{k}")).collect();
            for nm in &names {
                b = b.metadata(nm, 32);
            }
            let keys: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            table = Table::new("big", kind, &keys, 16);
            b = b.action(Action::new("a"));
            table = table.action("a");
        }
        "action_data_bytes" => {
            let mut a = Action::new("a");
            for k in 0..(128 + extra).div_ceil(4) {
                a = a.param(&format!("p{k}"), 32);
            }
            b = b.action(a);
            table = Table::new("big", MatchKind::Exact, &["ipv4.dst_addr"], 16).action("a");
            let n = (128 + extra).div_ceil(4) as usize;
            table = table.default_action("a", &vec![0; n]);
        }
        "instruction_rows_ingress" => {
            for k in 0..32 + extra {
                b = b.action(Action::new(&format!("a{k}")));
                table = table.action(&format!("a{k}"));
            }
        }
        "hash_bits" => {
            let n = (416 + extra).div_ceil(32);
            let mut a = Action::new("a");
            for k in 0..n {
                b = b.metadata(&format!("meta.h{k}"), 32).hash(
                    &format!("h{k}"),
                    t2_pipeline::ir::HashAlgorithm::Crc32,
                    &["ipv4.src_addr"],
                );
                a = a.prim(Primitive::Hash {
                    dst: format!("meta.h{k}"),
                    hash: format!("h{k}"),
                });
            }
            b = b.action(a);
            table = table.action("a");
        }
        "salu" | "map_ram" => {
            // `salu`: 4 + extra small arrays; `map_ram`: arrays of 20 RAMs (21 map RAMs each).
            let (n, cells) = if resource == "salu" {
                (4 + extra, 1024)
            } else {
                (3, 20 * 4096)
            };
            for k in 0..n {
                b = b
                    .register(&format!("r{k}"), 32, cells)
                    .register_action(RegisterAction {
                        name: format!("ra{k}"),
                        register: format!("r{k}"),
                        conditions: vec![],
                        updates: vec![],
                        outputs: vec![],
                    });
                b = b.action(Action::new(&format!("a{k}")).prim(Primitive::Execute {
                    register_action: format!("ra{k}"),
                    index: Operand::Const(0),
                }));
                table = table.action(&format!("a{k}"));
            }
        }
        other => panic!("no recipe for {other}"),
    }
    b.table(table)
        .ingress(vec![Stmt::apply("big")])
        .build_unchecked()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A table built to exceed one budget is refused, naming that resource and the table.
    #[test]
    fn a_table_over_one_budget_is_refused_naming_it(
        which in 0usize..9,
        extra in 1u32..40,
    ) {
        let resource = [
            "sram", "tcam", "ternary_xbar_bytes", "exact_xbar_bytes", "action_data_bytes",
            "instruction_rows_ingress", "hash_bits", "salu", "map_ram",
        ][which];
        // Few enough small arrays that SALUs, not map RAMs (2 per array), run out first;
        // the 36 free 32-bit containers bound the exact key.
        let extra = match resource {
            "salu" => extra.min(4),
            "exact_xbar_bytes" => extra.min(16),
            _ => extra,
        };
        let p = exceeding(resource, extra);
        let c = check(&p).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let pl = place(&c, &Budget::tofino2());
        let f = pl.failure.expect("must not fit");
        prop_assert_eq!(f.resource.as_str(), resource, "{}", f);
        prop_assert_eq!(f.unit.as_str(), "big");
        prop_assert_eq!(f.stage, None);
        prop_assert!(f.needed > f.available);
    }
}

#[test]
fn metadata_beyond_the_normal_phv_is_a_verdict_not_an_error() {
    // 36 normal 32-bit containers are free; the 37th 32-bit field spills.
    let mut b = ProgramBuilder::new("wide");
    for k in 0..60 {
        b = b.metadata(&format!("meta.w{k}"), 32);
    }
    let c = check(&b.build_unchecked()).unwrap();
    let pl = place(&c, &Budget::tofino2());
    let f = pl.failure.unwrap();
    assert_eq!(f.resource, "phv_normal_32");
    assert_eq!(f.unit, "meta.w36");
    assert_eq!((f.needed, f.available), (12 + 60, 48));
}

/// Header fields the generated tables use when driven by real packets.
const HEADER_POOL: [&str; POOL] = [
    "ipv4.ttl",
    "ipv4.diffserv",
    "l4.src_port",
    "l4.dst_port",
    "ipv4.src_addr",
    "ipv4.protocol",
];

fn udp_frame(src: u32, sport: u16, dport: u16, ttl: u8, tos: u8) -> Vec<u8> {
    use t2_pipeline::headers::{build_udp_frame, ipv4_header_checksum, Endpoints, MacAddr};
    let ep = Endpoints {
        src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
        src_ip: std::net::Ipv4Addr::from(src),
        dst_ip: std::net::Ipv4Addr::new(10, 0, 0, 1),
        src_port: sport,
        dst_port: dport,
    };
    let mut out = Vec::new();
    build_udp_frame(&mut out, &ep, ttl, 1, &[0; 18], false, 60);
    out[15] = tos;
    out[24] = 0;
    out[25] = 0;
    let c = ipv4_header_checksum(&out[14..34]);
    out[24..26].copy_from_slice(&c.to_be_bytes());
    out
}

/// Runs frames through a `GressPipeline` with the placed program, one cycle at a time;
/// returns the output bytes and the registers.
fn through_pipeline(
    c: &Arc<Checked>,
    pl: &t2_pipeline::place::Placed,
    frames: &[Vec<u8>],
) -> (Vec<Vec<u8>>, Vec<Vec<u64>>) {
    use t2_pipeline::PacketPool;
    let params = PipelineParams::default();
    let mut program = PlacedThread::new(Arc::clone(c), pl, Thread::Ingress);
    let mut g = program.pipeline(pl, &params);
    let mut pool = PacketPool::new();
    let handles: Vec<_> = frames.iter().map(|f| pool.alloc_from(f)).collect();
    let mut out = vec![Vec::new(); frames.len()];
    let (mut now, mut done) = (0u64, 0);
    while done < frames.len() {
        if (now as usize) < frames.len() {
            g.enter(now, handles[now as usize], 1, &pool);
        }
        if let Some(e) = g.tick(now, &mut program, &mut pool) {
            let i = handles.iter().position(|&h| h == e.pkt).unwrap();
            out[i] = pool.bytes(e.pkt).to_vec();
            done += 1;
        }
        now += 1;
    }
    (
        out,
        program.state.registers.iter().map(Cells::to_vec).collect(),
    )
}

fn interpreted(c: &Arc<Checked>, frames: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<Vec<u64>>) {
    use t2_pipeline::layout;
    let mut interp = Interpreter::new(Arc::clone(c));
    let mut out = Vec::new();
    for f in frames {
        let mut phv = Phv::new(&PipelineParams::default().phv);
        phv.set(layout::INGRESS_PORT, 1);
        phv.set(layout::PKT_LENGTH, f.len() as u32 + 4);
        interp.parse(f, &mut phv).unwrap();
        interp.run(Thread::Ingress, &mut phv);
        let mut bytes = f.clone();
        if phv.get(layout::DROP_REASON) == 0 {
            interp.deparse(&phv, &mut bytes);
        }
        out.push(bytes);
    }
    (
        out,
        interp.state.registers.iter().map(Cells::to_vec).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Generated programs over header fields, fed back-to-back packets: the placed program
    /// in a cycle-stepped `GressPipeline` emits the same bytes and leaves the same registers
    /// as the interpreter.
    #[test]
    fn generated_programs_on_packets_match_the_interpreter(
        tables in prop::collection::vec(gen_table(), 1..30),
        packets in prop::collection::vec((0u32..8, 0u16..8, 0u16..8, 1u8..20, 0u8..8), 1..16),
    ) {
        let names: Vec<String> = HEADER_POOL.iter().map(|s| s.to_string()).collect();
        let tables: Vec<GenTable> = tables
            .into_iter()
            .map(|t| GenTable { egress: false, ..t })
            .collect();
        let p = build_on(ProgramBuilder::new("gen_headers"), &tables, &names);
        let c = Arc::new(check(&p).map_err(|e| TestCaseError::fail(e.to_string()))?);
        let pl = place(&c, &Budget::tofino2());
        prop_assume!(pl.fits());
        let frames: Vec<Vec<u8>> = packets
            .iter()
            .map(|&(src, sp, dp, ttl, tos)| udp_frame(src, sp, dp, ttl, tos))
            .collect();
        prop_assert_eq!(interpreted(&c, &frames), through_pipeline(&c, &pl, &frames));
    }
}

#[test]
fn absurd_sizes_are_verdicts_not_overflows() {
    // (kind, action data bits, resource named first)
    for (kind, wide, resource) in [
        (MatchKind::Exact, false, "sram"),
        (MatchKind::Exact, true, "sram"),
        (MatchKind::Ternary, false, "tcam"),
    ] {
        let keys = [
            "ipv4.src_addr",
            "ipv4.dst_addr",
            "l4.src_port",
            "l4.dst_port",
        ];
        let (action, args) = if wide {
            (Action::new("a").param("x", 32).param("y", 32), vec![0, 0])
        } else {
            (Action::new("a"), vec![])
        };
        let p = ProgramBuilder::new("huge")
            .action(action)
            .table(
                Table::new("huge", kind, &keys, u32::MAX)
                    .action("a")
                    .default_action("a", &args),
            )
            .ingress(vec![Stmt::apply("huge")])
            .build_unchecked();
        let f = no_fit(&p);
        assert_eq!((f.resource.as_str(), f.unit.as_str()), (resource, "huge"));
    }
}
