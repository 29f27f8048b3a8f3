//! A stage none of whose units reads a bit an earlier unit of it may write runs on the
//! packet's PHV itself, in program order; the others run on a scratch copy. Both compute
//! what the interpreter computes.

use std::sync::Arc;
use t2_pipeline::check::{check, Thread};
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::ir::{Action, AluOp, MatchKind, Operand, Primitive, ProgramBuilder, Stmt, Table};
use t2_pipeline::params::PipelineParams;
use t2_pipeline::phv::Phv;
use t2_pipeline::place::{place, Budget};
use t2_pipeline::StageProgram;

#[test]
fn a_stage_that_reads_none_of_its_writes_runs_in_place() {
    let p = ProgramBuilder::new("in_place")
        .metadata("meta.a", 32)
        .metadata("meta.b", 32)
        .action(Action::new("bump").prim(Primitive::alu(
            AluOp::Add,
            "meta.a",
            Operand::field("meta.a"),
            Operand::Const(1),
        )))
        .action(Action::new("copy").prim(Primitive::set("meta.b", Operand::field("meta.a"))))
        .table(
            Table::new("t_bump", MatchKind::Exact, &[], 1)
                .action("bump")
                .default_action("bump", &[]),
        )
        .table(
            Table::new("t_copy", MatchKind::Exact, &[], 1)
                .action("copy")
                .default_action("copy", &[]),
        )
        .ingress(vec![Stmt::apply("t_bump"), Stmt::apply("t_copy")])
        .build_unchecked();
    let c = Arc::new(check(&p).unwrap());
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    let mut placed = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
    // t_bump reads meta.a before it writes it; t_copy, a stage later (it reads what t_bump
    // writes), reads meta.a and writes meta.b: both stages run in place.
    assert_eq!(placed.in_place_stages(), vec![0, 1]);
    let mut interp = Interpreter::new(Arc::clone(&c));
    let (a, b) = (c.metadata[0].1, c.metadata[1].1);
    for start in [0, 5, u32::MAX] {
        let mut phv = Phv::new(&PipelineParams::default().phv);
        phv.set(a, start);
        let mut staged = phv.clone();
        interp.run(Thread::Ingress, &mut phv);
        for s in 0..20 {
            placed.apply(s, &mut staged);
        }
        assert_eq!(phv, staged);
        assert_eq!(
            (staged.get(a), staged.get(b)),
            (start.wrapping_add(1), start.wrapping_add(1))
        );
    }
}

#[test]
fn a_table_that_writes_what_an_earlier_one_reads_runs_after_it_in_place() {
    // t_read reads meta.a and t_write then writes it: no dependency keeps them apart, so
    // they share stage 0, where t_read, run first, sees meta.a as it entered.
    let p = ProgramBuilder::new("anti")
        .metadata("meta.a", 32)
        .metadata("meta.b", 32)
        .action(Action::new("read").prim(Primitive::set("meta.b", Operand::field("meta.a"))))
        .action(Action::new("write").prim(Primitive::set("meta.a", Operand::Const(7))))
        .table(
            Table::new("t_read", MatchKind::Exact, &[], 1)
                .action("read")
                .default_action("read", &[]),
        )
        .table(
            Table::new("t_write", MatchKind::Exact, &[], 1)
                .action("write")
                .default_action("write", &[]),
        )
        .ingress(vec![Stmt::apply("t_read"), Stmt::apply("t_write")])
        .build_unchecked();
    let c = Arc::new(check(&p).unwrap());
    let pl = place(&c, &Budget::tofino2());
    let mut placed = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
    assert_eq!(pl.active_stages(Thread::Ingress), vec![0]);
    assert_eq!(placed.in_place_stages(), vec![0]);
    let (a, b) = (c.metadata[0].1, c.metadata[1].1);
    let mut phv = Phv::new(&PipelineParams::default().phv);
    phv.set(a, 1);
    for s in 0..20 {
        placed.apply(s, &mut phv);
    }
    assert_eq!((phv.get(a), phv.get(b)), (7, 1));
}
