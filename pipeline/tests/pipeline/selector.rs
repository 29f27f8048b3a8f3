//! Action selectors: a table's entries name groups of members and a hash of the selector's
//! inputs picks one member per packet. What the checker refuses, how placement sizes and
//! times a selector, and that the placed stages pick what the interpreter picks.

use proptest::prelude::*;
use std::sync::Arc;
use t2_pipeline::check::{check, Thread};
use t2_pipeline::exec::{crc, Interpreter, PlacedThread, SELECTOR_HASH_MASK, SELECTOR_POLYNOMIAL};
use t2_pipeline::ir::{
    Action, HashAlgorithm, MatchKind, Operand, Primitive, Program, ProgramBuilder, Stmt, Table,
};
use t2_pipeline::params::{PipelineParams, StageLatency};
use t2_pipeline::phv::Phv;
use t2_pipeline::place::{place, Budget, Resource};
use t2_pipeline::StageProgram;

/// A table on `meta.dst` with a selector over (`meta.a`, `meta.b`): entry `d` (for d in
/// 0..groups.len()) is a group whose members set `meta.out` to 100 x d + member index.
fn program(groups: &[usize], max_members: u32) -> Program {
    let mut t = Table::new("ecmp", MatchKind::Exact, &["meta.dst"], 64)
        .action("pick")
        .action("miss")
        .default_action("miss", &[])
        .selector(&["meta.a", "meta.b"], 64, max_members);
    for (d, &n) in groups.iter().enumerate() {
        let args: Vec<[u64; 1]> = (0..n).map(|m| [(100 * d + m) as u64]).collect();
        let members: Vec<(&str, &[u64])> = args.iter().map(|a| ("pick", &a[..])).collect();
        t = t.group_entry(&[d as u64], &members);
    }
    ProgramBuilder::new("sel")
        .metadata("meta.dst", 8)
        .metadata("meta.a", 32)
        .metadata("meta.b", 16)
        .metadata("meta.out", 16)
        .action(
            Action::new("pick")
                .param("v", 16)
                .prim(Primitive::set("meta.out", Operand::param("v"))),
        )
        .action(Action::new("miss").prim(Primitive::set("meta.out", Operand::Const(0xffff))))
        .table(t)
        .ingress(vec![Stmt::apply("ecmp")])
        .build_unchecked()
}

/// The member a flow (a, b) gets in a group of `n`, worked out by hand: the low 14 bits of
/// the CRC-16 of a's 4 bytes and b's 2 bytes, modulo n.
fn member(a: u32, b: u16, n: usize) -> usize {
    let mut bytes = a.to_be_bytes().to_vec();
    bytes.extend_from_slice(&b.to_be_bytes());
    (crc(HashAlgorithm::Crc16, SELECTOR_POLYNOMIAL, &bytes) & SELECTOR_HASH_MASK) as usize % n
}

/// `meta.out` for each (dst, a, b), interpreted and placed (they must agree).
fn outs(p: &Program, packets: &[(u32, u32, u16)]) -> Vec<u32> {
    let c = Arc::new(check(p).unwrap());
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    let mut interp = Interpreter::new(Arc::clone(&c));
    let mut placed = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
    let f = |i: usize| c.metadata[i].1;
    packets
        .iter()
        .map(|&(dst, a, b)| {
            let mut phv = Phv::new(&PipelineParams::default().phv);
            phv.set(f(0), dst);
            phv.set(f(1), a);
            phv.set(f(2), b as u32);
            let mut staged = phv.clone();
            interp.run(Thread::Ingress, &mut phv);
            for s in 0..20 {
                placed.apply(s, &mut staged);
            }
            assert_eq!(phv, staged);
            phv.get(f(3))
        })
        .collect()
}

#[test]
fn each_flow_gets_the_member_its_hash_picks() {
    let p = program(&[4, 3, 1], 16);
    let flows: Vec<(u32, u16)> = (0..1000u32)
        .map(|k| (0x0a00_0000 + k * 7, k as u16))
        .collect();
    let packets: Vec<(u32, u32, u16)> = flows.iter().map(|&(a, b)| (0, a, b)).collect();
    let got = outs(&p, &packets);
    let mut per_member = [0u32; 4];
    for (&(a, b), &out) in flows.iter().zip(&got) {
        assert_eq!(out as usize, member(a, b, 4));
        per_member[out as usize] += 1;
    }
    // 1000 flows over 4 members.
    assert_eq!(per_member, [255, 236, 264, 245]);
    // The same flow again gets the same member; other groups; a miss runs the default.
    let again = outs(
        &p,
        &[(0, flows[7].0, flows[7].1), (1, 5, 6), (2, 5, 6), (9, 5, 6)],
    );
    assert_eq!(again[0], got[7]);
    assert_eq!(again[1], 100 + member(5, 6, 3) as u32);
    assert_eq!(again[2], 200);
    assert_eq!(again[3], 0xffff);
}

#[test]
fn a_selector_takes_rams_a_meter_alu_and_eight_cycles() {
    // 64 groups of up to 16 members: one selector word per group, 1 selector RAM (and its
    // map RAM); 1024 members x 16-bit slots = 1 action-data RAM; entries of 8 + 4 + 1 + 6
    // (group pointer) = 19 bits, 6 per word: 1 match RAM. One meter ALU, 14 hash bits.
    let c = check(&program(&[4], 16)).unwrap();
    let pl = place(&c, &Budget::tofino2());
    let a = &pl.units[0].allocation;
    assert_eq!(
        (
            a.entry_bits,
            a.entries_per_word,
            a.match_rams,
            a.action_data_rams,
            a.selector_rams
        ),
        (19, 6, 1, 1, 1)
    );
    let u = pl.stage_usage[0];
    assert_eq!(
        (
            u.get(Resource::Sram),
            u.get(Resource::MapRam),
            u.get(Resource::Salu)
        ),
        (3, 1, 1)
    );
    // One way of 10 bits for the match, 14 for the selection.
    assert_eq!(u.get(Resource::HashBits), 10 + 14);
    let lat = StageLatency::default();
    assert!(pl.ingress_timing.stages[0].selector);
    assert_eq!(pl.ingress_timing.stage_cycles(&lat)[0], 23 + 8);
    // Groups over 120 members take two words per group: a wide selector, +2 like a TCAM.
    let c = check(&program(&[4], 200)).unwrap();
    let pl = place(&c, &Budget::tofino2());
    assert_eq!(pl.units[0].allocation.selector_rams, 1);
    assert_eq!(pl.ingress_timing.stage_cycles(&lat)[0], 23 + 2 + 8);
}

#[test]
fn the_checker_refuses_malformed_selectors_and_groups() {
    let refused = |p: Program, problem: &str| {
        let e = check(&p).expect_err("must be refused");
        assert!(e.path.contains("tables[0] (ecmp)"), "{}", e.path);
        assert!(
            e.problem.contains(problem),
            "`{}` lacks `{problem}`",
            e.problem
        );
    };
    let mut p = program(&[2], 16);
    p.tables[0].selector.as_mut().unwrap().max_members = 0;
    refused(p, "max_members 0 is outside 1..=3840");
    let mut p = program(&[2], 16);
    p.tables[0].selector.as_mut().unwrap().groups = 0;
    refused(p, "at least one group");
    let mut p = program(&[2], 16);
    p.tables[0].selector.as_mut().unwrap().inputs.clear();
    refused(p, "needs inputs to hash");
    let mut p = program(&[2], 16);
    p.tables[0].selector.as_mut().unwrap().inputs = vec!["meta.nope".into()];
    refused(p, "unknown field `meta.nope`");
    refused(
        program(&[17], 16),
        "17 members; the selector's groups have at most 16",
    );
    let mut p = program(&[2, 2], 16);
    p.tables[0].selector.as_mut().unwrap().groups = 1;
    refused(p, "more groups than the selector's 1");
    let mut p = program(&[2], 16);
    p.tables[0].entries[0].action = t2_pipeline::ir::ActionCall::new("miss", &[]);
    refused(p, "either an action or a group of members, not both");
    let mut p = program(&[2], 16);
    p.tables[0].selector = None;
    refused(p, "only a table with a selector has groups of members");
    let mut p = program(&[2], 16);
    p.tables[0].entries[0].members[1].action = "nope".into();
    let e = check(&p).unwrap_err();
    assert!(e.path.contains("entries[0].members[1]"), "{}", e.path);
    assert!(e.problem.contains("`nope`"), "{}", e.problem);
}

#[test]
fn selector_tables_round_trip_through_json() {
    let p = program(&[3, 1], 16);
    let json = p.to_json();
    assert!(json.contains("\"members\""), "{json}");
    assert!(json.contains("\"max_members\": 16"), "{json}");
    assert_eq!(Program::from_json(&json).unwrap(), p);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Whatever the groups and flows, the placed stages pick what the interpreter picks,
    /// and that is the hash's member.
    #[test]
    fn placed_selection_equals_the_interpreter_and_the_hash(
        groups in prop::collection::vec(1usize..=16, 1..6),
        flows in prop::collection::vec((0u32..8, any::<u32>(), any::<u16>()), 1..40),
    ) {
        let p = program(&groups, 16);
        let got = outs(&p, &flows);
        for (&(dst, a, b), &out) in flows.iter().zip(&got) {
            let want = match groups.get(dst as usize) {
                Some(&n) => 100 * dst + member(a, b, n) as u32,
                None => 0xffff,
            };
            prop_assert_eq!(out, want);
        }
    }
}
