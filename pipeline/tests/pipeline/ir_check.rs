//! Programs the checker must refuse, with an error naming where and what.

use t2_pipeline::check::check;
use t2_pipeline::examples;
use t2_pipeline::ir::{
    Action, Cmp, Condition, MatchKind, Operand, Primitive, Program, ProgramBuilder, RegisterAction,
    SaluCondition, SaluOperand, Stmt, Table,
};

fn refused(p: &Program, path: &str, problem: &str) {
    let e = check(p).expect_err("the program must be refused");
    assert!(e.path.contains(path), "path `{}` lacks `{path}`", e.path);
    assert!(
        e.problem.contains(problem),
        "problem `{}` lacks `{problem}`",
        e.problem
    );
}

fn one_table(action: Action, table: Table) -> Program {
    ProgramBuilder::new("t")
        .action(action)
        .table(table)
        .ingress(vec![Stmt::apply("t")])
        .build_unchecked()
}

#[test]
fn unknown_and_read_only_fields() {
    let a = Action::new("a").prim(Primitive::set("meta.x", Operand::Const(1)));
    let t = Table::new("t", MatchKind::Exact, &[], 0).action("a");
    refused(
        &one_table(a, t.clone()),
        "actions[0] (a).primitives[0]",
        "unknown field `meta.x`",
    );
    let a = Action::new("a").prim(Primitive::set("eg_intr_md.enq_qdepth", Operand::Const(1)));
    refused(&one_table(a, t), "actions[0] (a)", "read-only");
}

#[test]
fn vliw_actions_write_once_and_do_not_read_their_own_writes() {
    let t = Table::new("t", MatchKind::Exact, &[], 0).action("a");
    let a = Action::new("a")
        .prim(Primitive::set("ipv4.ttl", Operand::Const(1)))
        .prim(Primitive::set("ipv4.ttl", Operand::Const(2)));
    refused(&one_table(a, t.clone()), "primitives[1]", "writes a field");
    let a = Action::new("a")
        .prim(Primitive::set("ipv4.ttl", Operand::Const(1)))
        .prim(Primitive::set("ipv4.protocol", Operand::field("ipv4.ttl")));
    refused(&one_table(a, t), "primitives[1]", "in parallel");
}

#[test]
fn table_entries_are_checked() {
    let a = Action::new("a").param("p", 4);
    let t = Table::new("t", MatchKind::Exact, &["ipv4.ttl"], 4)
        .action("a")
        .default_action("a", &[0])
        .entry(&[300], "a", &[1]);
    refused(
        &one_table(a.clone(), t),
        "tables[0] (t).entries[0]",
        "does not fit in 8 bits",
    );
    let t = Table::new("t", MatchKind::Exact, &["ipv4.ttl"], 4)
        .action("a")
        .default_action("a", &[0])
        .entry(&[3], "a", &[16]);
    refused(&one_table(a.clone(), t), "entries[0]", "argument 0 (16)");
    let t = Table::new("t", MatchKind::Exact, &["ipv4.ttl"], 4)
        .action("a")
        .default_action("a", &[])
        .ternary_entry(&[(1, 1)], "a", &[1]);
    refused(
        &one_table(a.clone(), t),
        "default_action",
        "takes 1 arguments, 0 given",
    );
    let t = Table::new("t", MatchKind::Exact, &["ipv4.ttl"], 1)
        .action("a")
        .default_action("a", &[0])
        .entry(&[1], "a", &[1])
        .entry(&[2], "a", &[1]);
    refused(
        &one_table(a, t),
        "tables[0] (t)",
        "2 entries do not fit in size 1",
    );
}

#[test]
fn tables_are_applied_exactly_once() {
    let a = Action::new("a");
    let t = Table::new("t", MatchKind::Exact, &[], 0).action("a");
    let mut p = one_table(a, t);
    p.egress = vec![Stmt::apply("t")];
    refused(&p, "egress[0]", "already applied in ingress");
    p.egress.clear();
    p.ingress.clear();
    refused(&p, "tables[0] (t)", "never applied");
    p.ingress = vec![Stmt::if_(
        Condition::new("ipv4.ttl", Cmp::Eq, Operand::Const(256)),
        vec![Stmt::apply("t")],
        vec![],
    )];
    refused(
        &p,
        "ingress[0] (ingress_if0)",
        "does not fit in the field's 8 bits",
    );
}

fn salu_program(ra: RegisterAction, extra: usize) -> Program {
    let mut b = ProgramBuilder::new("s")
        .register("r", 32, 1024)
        .register_action(ra)
        .action(Action::new("a").prim(Primitive::Execute {
            register_action: "ra".into(),
            index: Operand::Const(0),
        }))
        .table(Table::new("t", MatchKind::Exact, &[], 0).action("a"))
        .ingress(vec![Stmt::apply("t")]);
    for k in 0..extra {
        b = b.register_action(RegisterAction {
            name: format!("more{k}"),
            register: "r".into(),
            conditions: vec![],
            updates: vec![],
            outputs: vec![],
        });
    }
    b.build_unchecked()
}

#[test]
fn stateful_alu_limits() {
    let ra = |conds: usize| RegisterAction {
        name: "ra".into(),
        register: "r".into(),
        conditions: (0..conds)
            .map(|_| SaluCondition {
                a: SaluOperand::Cell,
                cmp: Cmp::Gt,
                b: SaluOperand::Const(3),
            })
            .collect(),
        updates: vec![],
        outputs: vec![],
    };
    assert!(check(&salu_program(ra(4), 3)).is_ok());
    refused(
        &salu_program(ra(5), 0),
        "register_actions[0] (ra)",
        "5 conditions",
    );
    refused(
        &salu_program(ra(1), 4),
        "register_actions[4] (more3)",
        "more than 4",
    );
    let mut wide = ra(0);
    wide.conditions = ["ipv4.src_addr", "ipv4.dst_addr", "ipv4.ttl"]
        .iter()
        .map(|f| SaluCondition {
            a: SaluOperand::Field(f.to_string()),
            cmp: Cmp::Eq,
            b: SaluOperand::Cell,
        })
        .collect();
    refused(
        &salu_program(wide, 0),
        "register_actions[0]",
        "reads 72 PHV bits",
    );
}

#[test]
fn one_access_per_packet_per_register_array() {
    let mut p = salu_program(
        RegisterAction {
            name: "ra".into(),
            register: "r".into(),
            conditions: vec![],
            updates: vec![],
            outputs: vec![],
        },
        0,
    );
    p.tables
        .push(Table::new("t2", MatchKind::Exact, &[], 0).action("a"));
    p.ingress.push(Stmt::apply("t2"));
    refused(&p, "tables[1] (t2)", "already used by table `t`");
}

#[test]
fn malformed_json_names_the_problem() {
    let e = Program::from_json("{\"name\": \"x\", \"tables\": [{\"name\": 3}]}").unwrap_err();
    assert!(e.to_string().contains("invalid type"), "{e}");
    let mut p = examples::flow_counter();
    p.registers[0].cell_bits = 12;
    refused(&p, "registers[0] (flow_packets)", "cell width 12");
}

#[test]
fn mirror_is_an_ingress_and_egress_control_recirculate_ingress_only() {
    let mirror = Action::new("m").prim(Primitive::Mirror {
        session: Operand::Const(300),
    });
    refused(
        &one_table(
            mirror,
            Table::new("t", MatchKind::Exact, &[], 0).action("m"),
        ),
        "primitives[0]",
        "mirror session 300 is outside 0..=255",
    );
    let program = |prim: &Primitive, egress: bool| {
        let body = vec![Stmt::apply("t")];
        let b = ProgramBuilder::new("t")
            .action(Action::new("a").prim(prim.clone()))
            .table(Table::new("t", MatchKind::Exact, &[], 0).action("a"));
        if egress {
            b.egress(body)
        } else {
            b.ghost(body)
        }
        .build_unchecked()
    };
    let mirror = Primitive::Mirror {
        session: Operand::Const(3),
    };
    // Egress-to-egress mirroring: the egress deparser honours `mirror`; ghost has none.
    assert!(check(&program(&mirror, true)).is_ok());
    let p = program(&mirror, false);
    refused(
        &p,
        "tables[0] (t)",
        "only the ingress and egress deparsers honour",
    );
    refused(&p, "tables[0] (t)", "applied in ghost");
    let p = program(&Primitive::Recirculate, true);
    refused(&p, "tables[0] (t)", "only the ingress deparser honours");
    refused(&p, "tables[0] (t)", "applied in egress");
}
