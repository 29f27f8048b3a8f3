//! Tables split over stages run as the whole table does: under a budget of one RAM or one
//! TCAM per stage, large exact and ternary tables are dealt out over several stages, and the
//! placed stages compute exactly what the sequential interpreter computes, including when an
//! entry's action rewrites the table's own key (a later part must not look it up again).

use proptest::prelude::*;
use std::sync::Arc;
use t2_pipeline::check::{check, Thread};
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::ir::{
    Action, AluOp, MatchKind, Operand, Primitive, Program, ProgramBuilder, Stmt, Table,
};
use t2_pipeline::params::PipelineParams;
use t2_pipeline::phv::Phv;
use t2_pipeline::place::{place, verify, Budget, Resource};
use t2_pipeline::StageProgram;

/// Tofino2's budget with only `n` of `resource` per stage.
fn tight(resource: Resource, n: u32) -> Budget {
    let mut b = Budget::tofino2();
    b.per_stage.0[resource as usize] = n;
    b
}

/// One table on `meta.k` whose action `set` writes its argument into `meta.out` and, for
/// entries flagged so, also into `meta.k` (the key); a miss adds one to `meta.out`; `after`
/// then reads `meta.out`.
fn program(kind: MatchKind, entries: &[(u16, u16, u16, bool)]) -> Program {
    let mut t = Table::new("big", kind, &["meta.k"], entries.len() as u32)
        .action("set")
        .action("set_and_rekey")
        .action("count_miss")
        .default_action("count_miss", &[]);
    for &(value, mask, out, rekey) in entries {
        let action = if rekey { "set_and_rekey" } else { "set" };
        t = match kind {
            MatchKind::Exact => t.entry(&[value as u64], action, &[out as u64]),
            MatchKind::Ternary | MatchKind::Lpm => {
                t.ternary_entry(&[(value as u64, mask as u64)], action, &[out as u64])
            }
        };
    }
    ProgramBuilder::new("split")
        .metadata("meta.k", 16)
        .metadata("meta.out", 16)
        .metadata("meta.seen", 16)
        .action(
            Action::new("set")
                .param("v", 16)
                .prim(Primitive::set("meta.out", Operand::param("v"))),
        )
        .action(
            Action::new("set_and_rekey")
                .param("v", 16)
                .prim(Primitive::set("meta.out", Operand::param("v")))
                .prim(Primitive::set("meta.k", Operand::param("v"))),
        )
        // Counts, so a default action run by more than one part would show.
        .action(Action::new("count_miss").prim(Primitive::alu(
            AluOp::Add,
            "meta.out",
            Operand::field("meta.out"),
            Operand::Const(1),
        )))
        .action(Action::new("copy").prim(Primitive::set("meta.seen", Operand::field("meta.out"))))
        .table(t)
        .table(
            Table::new("after", MatchKind::Exact, &[], 0)
                .action("copy")
                .default_action("copy", &[]),
        )
        .ingress(vec![Stmt::apply("big"), Stmt::apply("after")])
        .build_unchecked()
}

/// Runs `keys` through the interpreter and the placed stages; both must agree on every PHV.
fn same_results(p: &Program, budget: &Budget, keys: &[u16], min_parts: usize) {
    let c = Arc::new(check(p).unwrap());
    let pl = place(&c, budget);
    assert!(pl.fits(), "{:?}", pl.failure);
    verify(&c, &pl, budget).unwrap();
    assert_eq!(pl.splits.len(), 1);
    assert!(pl.splits[0].parts.len() >= min_parts, "{:?}", pl.splits);
    let mut interp = Interpreter::new(Arc::clone(&c));
    let mut placed = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
    let k = c.metadata[0].1;
    for &key in keys {
        let mut phv = Phv::new(&PipelineParams::default().phv);
        phv.set(k, key as u32);
        let mut staged = phv.clone();
        interp.run(Thread::Ingress, &mut phv);
        for s in 0..budget.stages {
            placed.apply(s, &mut staged);
        }
        // The hit bit is the placed program's own; compare everything the program names.
        for (name, f) in &c.metadata {
            assert_eq!(phv.get(*f), staged.get(*f), "{name} for key {key}");
        }
    }
}

#[test]
fn an_exact_table_split_in_three_hits_in_every_part() {
    // 16-bit keys, 3 entries per word: 3072 per RAM. 7000 entries over one RAM per stage:
    // parts of 3072, 3072 and 856 in stages 0, 1, 2.
    let entries: Vec<_> = (0..7000u16)
        .map(|k| (k, 0, k ^ 0x5555, k % 7 == 0))
        .collect();
    let p = program(MatchKind::Exact, &entries);
    let budget = tight(Resource::Sram, 1);
    let c = check(&p).unwrap();
    let pl = place(&c, &budget);
    assert_eq!(pl.splits[0].parts, vec![(0, 3072), (1, 3072), (2, 856)]);
    let keys: Vec<u16> = vec![0, 1, 3071, 3072, 6143, 6144, 6999, 7000, 9999, 65535];
    same_results(&p, &budget, &keys, 3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Ternary entries in priority order over one TCAM (512 entries) per stage: the first
    /// matching entry wins whichever part holds it, and a miss runs the default once.
    #[test]
    fn split_ternary_tables_match_the_interpreter(
        entries in prop::collection::vec((0u16..64, 0u16..64, any::<u16>(), any::<bool>()), 513..1600),
        keys in prop::collection::vec(0u16..80, 1..60),
    ) {
        // Every mask covers the upper bits, so keys from 64 up miss every entry.
        let entries: Vec<_> = entries.iter().map(|&(v, m, o, r)| (v, m | 0xffc0, o, r)).collect();
        let p = program(MatchKind::Ternary, &entries);
        same_results(&p, &tight(Resource::Tcam, 1), &keys, 2);
    }

    /// Exact entries with random keys over one RAM per stage, including actions that rewrite
    /// the key the later parts would look up.
    #[test]
    fn split_exact_tables_match_the_interpreter(
        keys_in in prop::collection::btree_set(any::<u16>(), 3073..5000),
        outs in prop::collection::vec((any::<u16>(), any::<bool>()), 5000),
        probes in prop::collection::vec(any::<u16>(), 1..40),
    ) {
        let entries: Vec<_> = keys_in
            .iter()
            .zip(&outs)
            .map(|(&k, &(o, r))| (k, 0, o, r))
            .collect();
        let p = program(MatchKind::Exact, &entries);
        // Probe stored keys (spread over the parts) as well as random ones.
        let mut keys: Vec<u16> = keys_in.iter().copied().step_by(97).collect();
        keys.extend(probes);
        same_results(&p, &tight(Resource::Sram, 1), &keys, 2);
    }
}
