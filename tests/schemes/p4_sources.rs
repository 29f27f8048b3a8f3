//! Every scheme's switch program as its P4 source compiles it equals the Rust builder's,
//! for every parameter value the comparisons and the scheme tests use.

use t2_pipeline::ir::Program;
use t2sim::schemes::{dctcp, droptail, pias, slytherin, with_ecmp};

/// `builder` named as the P4 program is (after its file, `dctcp`, where the builder said
/// `dctcp_switch`).
fn named(mut builder: Program, p4: &Program) -> Program {
    builder.name = p4.name.clone();
    builder
}

fn same(p4: Program, builder: Program, what: &str) {
    let builder = named(builder, &p4);
    if p4 != builder {
        panic!("{what}: P4\n{}\nbuilder\n{}", p4.to_json(), builder.to_json());
    }
    let (p4, builder) = (with_ecmp(p4), with_ecmp(builder));
    assert_eq!(p4, builder, "{what} with ECMP");
}

const THRESHOLDS: &[u64] = &[
    1, 2, 3, 5, 6, 8, 9, 40, 65, 66, 80, 100, 200, 384, 385, 400, 768, 1152, 3072, 10_000, 12_288,
    (1 << 19) - 1,
];

#[test]
fn p4_sources_equal_the_builders() {
    same(droptail::p4_program(), droptail::program(), "droptail");
    for &k in THRESHOLDS {
        same(dctcp::p4_program(k), dctcp::program(k), &format!("dctcp {k}"));
        same(pias::p4_program(k), pias::program(k), &format!("pias {k}"));
        same(slytherin::p4_program(k), slytherin::program(k), &format!("slytherin {k}"));
    }
}
