//! Register arrays beyond plain cells: paired cells (two halves updated by one
//! RegisterAction) and 1-bit cells (set, clear or read a bit). What the checker refuses, how
//! many RAMs they take, and what they compute, interpreted and placed alike.

use std::sync::Arc;
use t2_pipeline::check::{check, Thread};
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::ir::{
    Action, Cmp, Guard, Half, MatchKind, Operand, Primitive, Program, ProgramBuilder,
    RegisterAction, SaluCondition, SaluOp, SaluOperand, SaluOutput, SaluOutputValue, SaluUpdate,
    Stmt, Table,
};
use t2_pipeline::params::PipelineParams;
use t2_pipeline::phv::Phv;
use t2_pipeline::place::{place, Budget};
use t2_pipeline::StageProgram;

fn update(half: Half, when: Vec<Guard>, op: SaluOp, a: SaluOperand, b: SaluOperand) -> SaluUpdate {
    let u = SaluUpdate::new(op, a, b).when(&when);
    if half == Half::Hi {
        u.hi()
    } else {
        u
    }
}

fn output(dst: &str, value: SaluOutputValue) -> SaluOutput {
    SaluOutput {
        dst: dst.into(),
        value,
    }
}

/// One array `r` (`cell_bits`, `pair`) and one RegisterAction on it, run at index
/// `meta.index` by an ingress table; `meta.a` / `meta.b` receive outputs, `meta.in` is an
/// input.
fn program(cell_bits: u8, pair: bool, size: u32, ra: RegisterAction) -> Program {
    let b = ProgramBuilder::new("regs")
        .metadata("meta.index", 16)
        .metadata("meta.in", 16)
        .metadata("meta.a", 32)
        .metadata("meta.b", 32);
    let b = if pair {
        b.register_pair("r", cell_bits, size)
    } else {
        b.register("r", cell_bits, size)
    };
    b.register_action(ra)
        .action(Action::new("run").prim(Primitive::Execute {
            register_action: "ra".into(),
            index: Operand::field("meta.index"),
        }))
        .table(Table::new("t", MatchKind::Exact, &[], 0).action("run"))
        .ingress(vec![Stmt::apply("t")])
        .build_unchecked()
}

fn action(
    conditions: Vec<SaluCondition>,
    updates: Vec<SaluUpdate>,
    outputs: Vec<SaluOutput>,
) -> RegisterAction {
    RegisterAction {
        name: "ra".into(),
        register: "r".into(),
        conditions,
        updates,
        outputs,
    }
}

/// A flowlet-style pair: `lo` keeps the last timestamp seen (`meta.in`); `hi` counts packets
/// and restarts at 1 when the timestamp reaches 100 (a new flowlet, in this toy clock).
/// Outputs the old `lo` and the new `hi`.
fn flowlet() -> RegisterAction {
    action(
        vec![SaluCondition {
            a: SaluOperand::Field("meta.in".into()),
            cmp: Cmp::Ge,
            b: SaluOperand::Const(100),
        }],
        vec![
            update(
                Half::Lo,
                vec![],
                SaluOp::Set,
                SaluOperand::Field("meta.in".into()),
                SaluOperand::Const(0),
            ),
            update(
                Half::Hi,
                vec![Guard {
                    condition: 0,
                    holds: true,
                }],
                SaluOp::Set,
                SaluOperand::Const(1),
                SaluOperand::Const(0),
            ),
            update(
                Half::Hi,
                vec![],
                SaluOp::Add,
                SaluOperand::CellHi,
                SaluOperand::Const(1),
            ),
        ],
        vec![
            output("meta.a", SaluOutputValue::Old),
            output("meta.b", SaluOutputValue::NewHi),
        ],
    )
}

/// Runs (index, input) packets through interpreter and placed stages; returns the outputs
/// (`meta.a`, `meta.b`) per packet and checks both agree, registers included.
fn run(p: &Program, packets: &[(u32, u32)]) -> (Vec<(u32, u32)>, Vec<u64>) {
    let c = Arc::new(check(p).unwrap());
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    let mut interp = Interpreter::new(Arc::clone(&c));
    let mut placed = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
    let field = |name: &str| c.metadata.iter().find(|(n, _)| n == name).unwrap().1;
    let mut out = Vec::new();
    for &(index, input) in packets {
        let mut phv = Phv::new(&PipelineParams::default().phv);
        phv.set(field("meta.index"), index);
        phv.set(field("meta.in"), input);
        let mut staged = phv.clone();
        interp.run(Thread::Ingress, &mut phv);
        for s in 0..20 {
            placed.apply(s, &mut staged);
        }
        assert_eq!(phv, staged);
        out.push((phv.get(field("meta.a")), phv.get(field("meta.b"))));
    }
    assert_eq!(interp.state, placed.state);
    (out, interp.state.registers[0].to_vec())
}

#[test]
fn a_pair_updates_both_halves_in_one_access() {
    let p = program(16, true, 8, flowlet());
    let (out, cells) = run(&p, &[(3, 10), (3, 20), (3, 150), (3, 50), (5, 7)]);
    // Old lo, new hi: hi counts 1, 2, restarts at 1 (150 >= 100), then counts 2.
    assert_eq!(out, vec![(0, 1), (10, 2), (20, 1), (150, 2), (0, 1)]);
    // Cell 3 keeps hi = 2 above lo = 50 in one word (16-bit halves).
    assert_eq!(cells[3], (2 << 16) | 50);
    assert_eq!(cells[5], (1 << 16) | 7);
}

#[test]
fn halves_wrap_at_their_own_width() {
    // 8-bit halves: lo + 1 wraps to 0 without carrying into hi.
    let ra = action(
        vec![],
        vec![update(
            Half::Lo,
            vec![],
            SaluOp::Add,
            SaluOperand::Cell,
            SaluOperand::Const(1),
        )],
        vec![output("meta.a", SaluOutputValue::New)],
    );
    let p = program(8, true, 4, ra);
    let packets = vec![(0, 0); 257];
    let (out, cells) = run(&p, &packets);
    assert_eq!(out[254].0, 255);
    assert_eq!(out[255].0, 0);
    assert_eq!(cells[0], 1);
}

#[test]
fn one_bit_cells_set_clear_and_read() {
    let set = |v: u64| {
        action(
            vec![],
            vec![update(
                Half::Lo,
                vec![],
                SaluOp::Set,
                SaluOperand::Const(v),
                SaluOperand::Const(0),
            )],
            vec![output("meta.a", SaluOutputValue::Old)],
        )
    };
    let (out, cells) = run(&program(1, false, 1024, set(1)), &[(9, 0), (9, 0), (10, 0)]);
    assert_eq!(out, vec![(0, 0), (1, 0), (0, 0)]);
    assert_eq!((cells[9], cells[10], cells[11]), (1, 1, 0));
    let (_, cells) = run(&program(1, false, 1024, set(0)), &[(9, 0)]);
    assert_eq!(cells[9], 0);
}

#[test]
fn pairs_and_bits_take_ram_by_their_total_bits() {
    // 40,000 pairs of 32-bit halves: 2,560,000 bits = 19.5 -> 20 data RAMs of 128 Kib.
    let p = program(32, true, 40_000, flowlet());
    let pl = place(&check(&p).unwrap(), &Budget::tofino2());
    assert_eq!(pl.units[0].allocation.register_rams, 20);
    // 1,000,000 bits: 7.6 -> 8 RAMs.
    let read = action(vec![], vec![], vec![output("meta.a", SaluOutputValue::Old)]);
    let p = program(1, false, 1_000_000, read);
    let pl = place(&check(&p).unwrap(), &Budget::tofino2());
    assert_eq!(pl.units[0].allocation.register_rams, 8);
    // 50,000 pairs of 32 bits need 25 RAMs; an array gets 23.
    let p = program(32, true, 50_000, flowlet());
    let f = place(&check(&p).unwrap(), &Budget::tofino2())
        .failure
        .unwrap();
    assert_eq!(
        (f.resource.as_str(), f.needed, f.available),
        ("register_array_rams", 25, 23)
    );
    assert!(f.detail.contains("50000 x 32 b pairs"), "{f}");
}

fn refused(p: &Program, problem: &str) {
    let e = check(p).expect_err("the program must be refused");
    assert!(e.path.contains("register"), "{}", e.path);
    assert!(
        e.problem.contains(problem),
        "`{}` lacks `{problem}`",
        e.problem
    );
}

#[test]
fn the_checker_refuses_what_the_cells_cannot_do() {
    let read_hi = action(
        vec![],
        vec![],
        vec![output("meta.a", SaluOutputValue::OldHi)],
    );
    refused(&program(32, false, 8, read_hi), "is not a pair");
    let hi_update = action(
        vec![],
        vec![update(
            Half::Hi,
            vec![],
            SaluOp::Set,
            SaluOperand::Const(1),
            SaluOperand::Const(0),
        )],
        vec![],
    );
    refused(&program(32, false, 8, hi_update), "is not a pair");
    refused(
        &program(64, true, 8, flowlet()),
        "a pair holds two halves of 8, 16 or 32 bits",
    );
    refused(
        &program(4, false, 8, flowlet()),
        "cell width 4 is not 1, 8, 16, 32 or 64",
    );
    // Three updates of one half: a half has two update ALUs.
    let mut three = flowlet();
    three.updates.push(update(
        Half::Hi,
        vec![],
        SaluOp::Set,
        SaluOperand::Const(0),
        SaluOperand::Const(0),
    ));
    refused(&program(16, true, 8, three), "3 updates of the hi half");
    // 1-bit cells: no comparators, and only setting a constant 0 or 1.
    let mut compare = flowlet();
    compare.updates.retain(|u| u.half == Half::Lo);
    compare.outputs.truncate(1);
    refused(&program(1, false, 8, compare), "it has no comparators");
    let add = action(
        vec![],
        vec![update(
            Half::Lo,
            vec![],
            SaluOp::Add,
            SaluOperand::Cell,
            SaluOperand::Const(1),
        )],
        vec![],
    );
    refused(&program(1, false, 8, add), "must `set` the constant 0 or 1");
}

#[test]
fn pairs_round_trip_through_json_and_plain_arrays_keep_their_shape() {
    let p = program(16, true, 8, flowlet());
    let json = p.to_json();
    assert!(json.contains("\"pair\": true"), "{json}");
    assert!(json.contains("\"half\": \"hi\""), "{json}");
    assert_eq!(Program::from_json(&json).unwrap(), p);
    // Unpaired arrays and lo updates print as before: no `pair` or `half` keys.
    let plain = t2_pipeline::examples::flow_counter();
    let json = plain.to_json();
    assert!(
        !json.contains("\"pair\"") && !json.contains("\"half\""),
        "{json}"
    );
}
