//! Longest-prefix-match tables: held in TCAM as ternary tables with entries ordered longest
//! prefix first. Lookups agree with a plain longest-prefix search, interpreted and placed.

use proptest::prelude::*;
use std::sync::Arc;
use t2_pipeline::check::{check, Thread};
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::ir::{
    prefix_mask, Action, MatchKind, Operand, Primitive, Program, ProgramBuilder, Stmt, Table,
};
use t2_pipeline::params::PipelineParams;
use t2_pipeline::phv::Phv;
use t2_pipeline::place::{place, Budget};
use t2_pipeline::StageProgram;

/// An lpm table on `meta.addr` (32 bits) whose entries write their index + 1 into
/// `meta.hit` (0 on a miss).
fn routes(prefixes: &[(u32, u8)]) -> Program {
    let mut t = Table::new(
        "routes",
        MatchKind::Lpm,
        &["meta.addr"],
        prefixes.len() as u32 + 1,
    )
    .action("hit")
    .action("miss")
    .default_action("miss", &[]);
    for (k, &(value, len)) in prefixes.iter().enumerate() {
        let value = value as u64 & prefix_mask(32, len);
        t = t.lpm_entry(&[], (value, len, 32), "hit", &[k as u64 + 1]);
    }
    ProgramBuilder::new("lpm")
        .metadata("meta.addr", 32)
        .metadata("meta.hit", 16)
        .action(
            Action::new("hit")
                .param("n", 16)
                .prim(Primitive::set("meta.hit", Operand::param("n"))),
        )
        .action(Action::new("miss"))
        .table(t)
        .ingress(vec![Stmt::apply("routes")])
        .build_unchecked()
}

/// What the program returns for each address, interpreted and placed (they must agree).
fn lookups(p: &Program, addrs: &[u32]) -> Vec<u32> {
    let c = Arc::new(check(p).unwrap());
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    let mut interp = Interpreter::new(Arc::clone(&c));
    let mut placed = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
    let (addr, hit) = (c.metadata[0].1, c.metadata[1].1);
    addrs
        .iter()
        .map(|&a| {
            let mut phv = Phv::new(&PipelineParams::default().phv);
            phv.set(addr, a);
            let mut staged = phv.clone();
            interp.run(Thread::Ingress, &mut phv);
            for s in 0..20 {
                placed.apply(s, &mut staged);
            }
            assert_eq!(phv, staged);
            phv.get(hit)
        })
        .collect()
}

/// The reference: the longest prefix containing `addr`, the first listed among equals.
fn longest(prefixes: &[(u32, u8)], addr: u32) -> u32 {
    let mut best: Option<(u8, usize)> = None;
    for (k, &(value, len)) in prefixes.iter().enumerate() {
        let m = prefix_mask(32, len) as u32;
        if addr & m == value & m && best.is_none_or(|(l, _)| len > l) {
            best = Some((len, k));
        }
    }
    best.map_or(0, |(_, k)| k as u32 + 1)
}

#[test]
fn the_longest_prefix_wins_whatever_the_entry_order() {
    let ip = |a: u8, b: u8, c: u8, d: u8| u32::from_be_bytes([a, b, c, d]);
    // Listed shortest first on purpose.
    let prefixes = [
        (0, 0),
        (ip(10, 0, 0, 0), 8),
        (ip(10, 1, 0, 0), 16),
        (ip(10, 1, 2, 0), 24),
        (ip(10, 1, 2, 7), 32),
    ];
    let p = routes(&prefixes);
    let got = lookups(
        &p,
        &[
            ip(10, 1, 2, 7),
            ip(10, 1, 2, 3),
            ip(10, 1, 9, 9),
            ip(10, 9, 9, 9),
            ip(192, 168, 0, 1),
        ],
    );
    assert_eq!(got, vec![5, 4, 3, 2, 1]);
}

#[test]
fn prefix_masks_cover_the_top_bits_of_the_field() {
    assert_eq!(prefix_mask(32, 8), 0xff00_0000);
    assert_eq!(prefix_mask(32, 0), 0);
    assert_eq!(prefix_mask(32, 32), 0xffff_ffff);
    assert_eq!(prefix_mask(32, 40), 0xffff_ffff);
    assert_eq!(prefix_mask(16, 4), 0xf000);
}

#[test]
fn an_lpm_table_is_placed_in_tcam_and_reported_as_lpm() {
    // 32-bit key, 2,000 prefixes: 1 chunk x ceil(2001 / 512) = 4 TCAMs.
    let prefixes: Vec<(u32, u8)> = (0..2000u32).map(|k| (k << 12, 20)).collect();
    let c = check(&routes(&prefixes)).unwrap();
    let pl = place(&c, &Budget::tofino2());
    let a = &pl.units[0].allocation;
    assert_eq!((a.kind, a.tcams, a.stage), ("lpm", 4, 0));
    assert!(pl.ingress_timing.stages[0].tcam);
}

#[test]
fn masks_that_are_not_prefixes_are_refused() {
    let bad = |t: Table| {
        let p = ProgramBuilder::new("bad")
            .metadata("meta.a", 32)
            .metadata("meta.b", 16)
            .action(Action::new("x"))
            .table(t)
            .ingress(vec![Stmt::apply("t")])
            .build_unchecked();
        check(&p).unwrap_err()
    };
    let t = Table::new("t", MatchKind::Lpm, &["meta.a"], 4)
        .action("x")
        .ternary_entry(&[(0x0a00_0000, 0x00ff_0000)], "x", &[]);
    let e = bad(t);
    assert!(e.path.contains("entries[0]"), "{}", e.path);
    assert!(
        e.problem
            .contains("mask 0xff0000 is not a prefix of the 32-bit key"),
        "{}",
        e.problem
    );
    let t = Table::new("t", MatchKind::Lpm, &["meta.b", "meta.a"], 4)
        .action("x")
        .ternary_entry(&[(1, 0xff00), (0, 0)], "x", &[]);
    let e = bad(t);
    assert!(
        e.problem
            .contains("only the last key of an lpm table has a prefix"),
        "{}",
        e.problem
    );
    let t = Table::new("t", MatchKind::Lpm, &[], 0).action("x");
    assert!(bad(t).problem.contains("needs a key to match by prefix"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn lookups_match_a_plain_longest_prefix_search(
        prefixes in prop::collection::vec((any::<u32>(), 0u8..=32), 1..40),
        probes in prop::collection::vec(any::<u32>(), 1..30),
    ) {
        // Probe addresses inside the prefixes too, not only random ones.
        let mut addrs = probes.clone();
        for (&(v, _), &r) in prefixes.iter().zip(&probes) {
            addrs.push(v ^ (r & 0xff));
        }
        let p = routes(&prefixes);
        let got = lookups(&p, &addrs);
        let want: Vec<u32> = addrs.iter().map(|&a| longest(&prefixes, a)).collect();
        prop_assert_eq!(got, want);
    }
}
