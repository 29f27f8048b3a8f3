//! The P4 front end: shipped P4 programs lower to exactly the IR of their JSON versions.

use std::path::Path;
use t2_pipeline::ir::{AluOp, Operand, Primitive, Program};
use t2_pipeline::p4;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn lowered(name: &str) -> Program {
    let path = root().join(format!("programs/p4/{name}.p4"));
    match p4::compile(&path, &p4::Options::default()) {
        Ok(c) => c.program,
        Err(e) => panic!("{e}"),
    }
}

fn json(name: &str) -> Program {
    let text = std::fs::read_to_string(root().join(format!("programs/{name}.json"))).unwrap();
    Program::from_json(&text).unwrap()
}

fn same_ir(name: &str) {
    let (a, b) = (lowered(name), json(name));
    if a != b {
        panic!("{name}: lowered\n{}\nJSON\n{}", a.to_json(), b.to_json());
    }
}

/// Scheme `name`'s own program, `src/schemes/NAME/NAME.p4`, lowers to the shipped
/// `programs/NAME_switch.json` (generated from that same source by the scheme; this reads it
/// from the file system, as `t2sim report --p4` does, not from the copy in the binary).
fn same_scheme_ir(name: &str) {
    let path = root().join(format!("src/schemes/{name}/{name}.p4"));
    let a = match p4::compile(&path, &p4::Options::default()) {
        Ok(c) => c.program,
        Err(e) => panic!("{e}"),
    };
    let b = json(&format!("{name}_switch"));
    if a != b {
        panic!("{name}: lowered\n{}\nJSON\n{}", a.to_json(), b.to_json());
    }
}

#[test]
fn l3_forward_lowers_to_the_json_program() {
    same_ir("l3_forward");
}

#[test]
fn flow_counter_lowers_to_the_json_program() {
    same_ir("flow_counter");
}

#[test]
fn ecn_marking_lowers_to_the_json_program() {
    same_ir("ecn_marking");
}

#[test]
fn vlan_tagging_lowers_to_the_json_program() {
    same_ir("vlan_tagging");
}

#[test]
fn the_droptail_scheme_lowers_to_its_json_program() {
    same_scheme_ir("droptail");
}

#[test]
fn the_dctcp_scheme_lowers_to_its_json_program() {
    same_scheme_ir("dctcp");
}

#[test]
fn the_pabo_scheme_lowers_to_its_json_program_but_for_the_control_planes_entries() {
    let path = root().join("src/schemes/pabo/pabo.p4");
    let a = p4::compile(&path, &p4::Options::default()).unwrap().program;
    let mut b = json("pabo_switch");
    let filled: Vec<&str> = b
        .tables
        .iter()
        .filter(|t| !t.entries.is_empty())
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(filled, ["u_level", "bounce_p"]);
    for t in &mut b.tables {
        t.entries.clear();
    }
    if a != b {
        panic!("pabo: lowered\n{}\nJSON\n{}", a.to_json(), b.to_json());
    }
}

/// BFC's program, from the file alone, is the shipped JSON without the entries its control
/// plane installs (its `const entries`, `queue_paused_t`'s and `pause_bits_t`'s, stay).
#[test]
fn the_bfc_scheme_lowers_to_its_json_program_but_for_the_control_planes_entries() {
    let path = root().join("src/schemes/bfc/bfc.p4");
    let a = p4::compile(&path, &p4::Options::default()).unwrap().program;
    let mut b = json("bfc_switch");
    let installed = [
        "popcount0",
        "popcount1",
        "popcount2",
        "popcount3",
        "threshold",
        "first_free",
        "hashed_queue",
        "changed_queue",
    ];
    let filled: Vec<&str> = b
        .tables
        .iter()
        .filter(|t| !t.entries.is_empty())
        .map(|t| t.name.as_str())
        .collect();
    let mut want = installed.to_vec();
    want.extend(["queue_paused_t", "pause_bits_t"]);
    want.sort();
    let mut filled = filled;
    filled.sort();
    assert_eq!(filled, want);
    for t in &mut b.tables {
        if installed.contains(&t.name.as_str()) {
            t.entries.clear();
        }
    }
    if a != b {
        panic!("bfc: lowered\n{}\nJSON\n{}", a.to_json(), b.to_json());
    }
}

#[test]
fn a_define_changes_the_lowered_program() {
    let path = root().join("src/schemes/dctcp/dctcp.p4");
    let opts = p4::Options {
        include_dirs: Vec::new(),
        defines: vec!["K_CELLS=65".into()],
    };
    let p = p4::compile(&path, &opts).unwrap().program;
    let text = p.to_json();
    assert!(text.contains("\"const\": 65"), "{text}");
    assert!(!text.contains("\"const\": 400"));
}

#[test]
fn table_results_become_hidden_fields_the_gateways_test() {
    use t2_pipeline::ir::{Cmp, Condition, Operand, Primitive, Stmt};
    let p = lowered("hit_switch");
    let t = |n: &str| p.tables.iter().find(|t| t.name == n).unwrap();
    // `.hit`: entries run copies that set the hit bit; a miss runs the default as written.
    assert_eq!(
        t("host").actions,
        ["forward@host", "NoAction@host", "NoAction"]
    );
    assert_eq!(t("host").default_action.action, "NoAction");
    // `.action_run`: every action (the default too) records its place, from 1.
    assert_eq!(
        t("classify").actions,
        ["bulk@classify", "interactive@classify", "NoAction@classify"]
    );
    assert_eq!(t("classify").default_action.action, "NoAction@classify");
    let a = |n: &str| p.actions.iter().find(|a| a.name == n).unwrap();
    assert_eq!(
        a("interactive@classify").primitives,
        [Primitive::set("p4.classify.action_run", Operand::Const(2))]
    );
    assert_eq!(a("forward@host").primitives.len(), 2);
    let meta: Vec<(&str, u8)> = p
        .metadata
        .iter()
        .map(|m| (m.name.as_str(), m.bits))
        .collect();
    assert_eq!(meta, [("p4.host.hit", 1), ("p4.classify.action_run", 2)]);
    let Stmt::If { then, .. } = &p.ingress[0] else {
        panic!("{:?}", p.ingress)
    };
    assert_eq!(then[0], Stmt::apply("host"));
    assert_eq!(
        then[1],
        Stmt::if_(
            Condition::new("p4.host.hit", Cmp::Eq, Operand::Const(0)),
            vec![Stmt::apply("prefix")],
            vec![]
        )
    );
    assert_eq!(then[2], Stmt::apply("classify"));
    assert_eq!(
        then[3],
        Stmt::if_(
            Condition::new("p4.classify.action_run", Cmp::Eq, Operand::Const(1)),
            vec![Stmt::apply("bulk_queue")],
            vec![Stmt::if_(
                Condition::new("p4.classify.action_run", Cmp::Eq, Operand::Const(2)),
                vec![Stmt::apply("interactive_queue")],
                vec![]
            )]
        )
    );
}

#[test]
fn a_concatenation_is_a_move_into_each_slice() {
    use t2_pipeline::ir::{Operand, Primitive};
    let p = lowered("tna_reflect");
    let stamp = p.actions.iter().find(|a| a.name == "stamp").unwrap();
    assert_eq!(
        stamp.primitives,
        [
            Primitive::set("l4.src_port[15:8]", Operand::field("ipv4.ttl")),
            Primitive::set("l4.src_port[7:0]", Operand::field("ipv4.protocol")),
        ]
    );
    let reflect = p.actions.iter().find(|a| a.name == "reflect").unwrap();
    assert_eq!(
        reflect.primitives,
        [
            Primitive::SetEgressPort {
                port: Operand::field("ig_intr_md.ingress_port")
            },
            Primitive::set("ethernet.dst_addr", Operand::field("ethernet.src_addr")),
        ]
    );
}

#[test]
fn vlan_switch_lowers_to_the_json_program() {
    same_ir("vlan_switch");
}

#[test]
fn the_pias_scheme_lowers_to_its_json_program() {
    same_scheme_ir("pias");
}

#[test]
fn the_slytherin_scheme_lowers_to_its_json_program() {
    same_scheme_ir("slytherin");
}

#[test]
fn a_mirror_reads_its_session_as_the_action_leaves_it() {
    use t2_pipeline::ir::{Operand, Primitive};
    let p = lowered("mirror_watch");
    let a = p.actions.iter().find(|a| a.name == "copy_to").unwrap();
    // The deparser's `mirror.emit(meta.session)` names the ingress's `ig_md.session` (the
    // same struct), which the action sets from its data: the mirror takes the data itself.
    assert_eq!(
        a.primitives,
        [
            Primitive::set("ig_md.session", Operand::param("session")),
            Primitive::Mirror {
                session: Operand::param("session")
            },
        ]
    );
}

#[test]
fn ecmp_switch_lowers_to_the_json_program() {
    same_ir("ecmp_switch");
}

/// Compiles `body` (an Ingress control's locals and apply block) in the broken corpus's
/// skeleton (programs/p4/bad/common.p4: corpus headers, metadata idx:16, small:8,
/// count:32), from a file written under target/.
fn compile_ingress(name: &str, prelude: &str, body: &str) -> Result<Program, p4::P4Error> {
    let dir = root().join("target/p4-lower-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.p4"));
    let common = root().join("programs/p4/bad/common.p4");
    let text = format!(
        "#include \"{}\"\n{prelude}\ncontrol Ingress(INGRESS_PARAMS) {{\n{body}\n}}\nMAIN\n",
        common.display()
    );
    std::fs::write(&path, text).unwrap();
    p4::compile(&path, &p4::Options::default()).map(|c| c.program)
}

#[test]
fn typedefs_enums_constants_casts_and_operators_lower_to_primitives() {
    use t2_pipeline::ir::{AluOp, Operand, Primitive};
    let p = compile_ingress(
        "language",
        "typedef bit<8> small_t;\n\
         enum bit<8> Class_t { LOW = 8w1, HIGH = 8w7 }\n\
         const small_t LIMIT = 8w200;",
        "action a(small_t x) {\n\
             meta.small = min(x, LIMIT);\n\
             meta.idx = (bit<16>) hdr.ipv4.ttl;\n\
             meta.count = ~meta.count;\n\
             hdr.ipv4.ttl = hdr.ipv4.ttl >> 1;\n\
         }\n\
         action b() { meta.small = Class_t.HIGH; hdr.ipv4.ecn = hdr.ipv4.diffserv[1:0]; }\n\
         @stage(3) table t {\n\
             key = { hdr.ipv4.protocol : exact; }\n\
             actions = { a; b; }\n\
             default_action = b();\n\
             const entries = { 17 : a(Class_t.LOW); }\n\
         }\n\
         apply { t.apply(); }",
    )
    .unwrap();
    let a = p.actions.iter().find(|a| a.name == "a").unwrap();
    assert_eq!(a.params[0].bits, 8);
    assert_eq!(
        a.primitives,
        [
            Primitive::alu(
                AluOp::Min,
                "meta.small",
                Operand::param("x"),
                Operand::Const(200)
            ),
            Primitive::set("meta.idx", Operand::field("ipv4.ttl")),
            Primitive::alu(
                AluOp::Xor,
                "meta.count",
                Operand::field("meta.count"),
                Operand::Const(0xffff_ffff)
            ),
            Primitive::alu(
                AluOp::Shr,
                "ipv4.ttl",
                Operand::field("ipv4.ttl"),
                Operand::Const(1)
            ),
        ]
    );
    let b = p.actions.iter().find(|a| a.name == "b").unwrap();
    assert_eq!(
        b.primitives,
        [
            Primitive::set("meta.small", Operand::Const(7)),
            // A slice of the 6-bit DSCP (`ipv4.diffserv[7:2]`) is a slice of the TOS byte.
            Primitive::set("ipv4.ecn", Operand::field("ipv4.diffserv[3:2]")),
        ]
    );
    let t = &p.tables[0];
    assert_eq!(t.stage, Some(3));
    assert_eq!(t.size, 512, "the default size of a keyed table");
    assert_eq!(t.entries[0].action.args, [1]);
}

#[test]
fn widths_of_constants_and_casts_are_checked() {
    let e = compile_ingress(
        "const_too_wide",
        "",
        "action a() { meta.small = 300; }\n\
         table t { actions = { a; } default_action = a(); }\n\
         apply { t.apply(); }",
    )
    .unwrap_err();
    assert_eq!((e.line, e.col), (4, 27));
    assert_eq!(e.message, "constant 300 does not fit in bit<8>");
    let e = compile_ingress(
        "sized_mismatch",
        "",
        "action a() { meta.small = 16w3; }\n\
         table t { actions = { a; } default_action = a(); }\n\
         apply { t.apply(); }",
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "width mismatch: `16w3` is bit<16> but bit<8> is needed (P4 needs an explicit cast)"
    );
}

#[test]
fn a_controls_variables_are_metadata_fields_of_their_own() {
    use t2_pipeline::ir::{AluOp, Operand, Primitive, Stmt};
    let p = lowered("ghost_index");
    let meta: Vec<(&str, u8)> = p
        .metadata
        .iter()
        .map(|m| (m.name.as_str(), m.bits))
        .collect();
    assert_eq!(
        meta,
        [
            ("meta.queue_base", 13),
            ("meta.queue_index", 13),
            ("meta.depth", 32),
            ("p4.Ghost.pipe_base", 13),
            ("p4.Ghost.index", 13),
        ]
    );
    let a = |n: &str| &p.actions.iter().find(|a| a.name == n).unwrap().primitives;
    assert_eq!(
        a("shift_pipe"),
        &[Primitive::alu(
            AluOp::Shl,
            "p4.Ghost.pipe_base",
            Operand::field("ghost_md.pipe_id"),
            Operand::Const(11)
        )]
    );
    assert_eq!(
        a("add_qid"),
        &[Primitive::alu(
            AluOp::Or,
            "p4.Ghost.index",
            Operand::field("p4.Ghost.pipe_base"),
            Operand::field("ghost_md.qid")
        )]
    );
    assert_eq!(
        a("record"),
        &[Primitive::Execute {
            register_action: "write_depth".into(),
            index: Operand::field("p4.Ghost.index"),
        }]
    );
    assert_eq!(
        p.ghost,
        [
            Stmt::apply("tbl_shift_pipe"),
            Stmt::apply("tbl_add_qid"),
            Stmt::apply("tbl_record")
        ]
    );
}

#[test]
fn a_pair_register_and_a_predicate_output_lower_to_the_stateful_alus_halves_and_comparators() {
    use t2_pipeline::ir::{
        Cmp, Guard, Half, RegisterAction, RegisterArray, SaluOp, SaluOperand, SaluOutputValue,
        SaluUpdate,
    };
    // The QCN congestion point's sampler with a random interval (as mice-elephant's builder
    // writes it): `lo` counts bytes, `hi` holds the interval; at a sample `lo` restarts and
    // `hi` takes the next draw; the result is whether the sample fired.
    let p = compile_ingress(
        "pair_predicate",
        "struct pair_t { bit<32> bytes; bit<32> interval; }",
        "Register<pair_t, bit<16>>(512) cp_bytes;
         RegisterAction<pair_t, bit<16>, bit<8>>(cp_bytes) cp_count = {
             void apply(inout pair_t value, out bit<8> rv) {
                 rv = this.predicate(value.bytes >= value.interval);
                 if (value.bytes >= value.interval) {
                     value.bytes = 0;
                     value.interval = meta.count;
                 } else {
                     value.bytes = value.bytes + (bit<32>)hdr.ipv4.total_len;
                 }
             }
         };
         action sample() { meta.small = cp_count.execute(meta.idx); }
         table t { actions = { sample; } default_action = sample(); }
         apply { t.apply(); }",
    )
    .unwrap();
    assert_eq!(
        p.registers,
        [RegisterArray {
            name: "cp_bytes".into(),
            cell_bits: 32,
            size: 512,
            pair: true,
            signed: false,
        }]
    );
    let on = |holds| {
        vec![Guard {
            condition: 0,
            holds,
        }]
    };
    let want = RegisterAction::new("cp_count", "cp_bytes")
        .condition(SaluOperand::Cell, Cmp::Ge, SaluOperand::CellHi)
        .update(SaluUpdate {
            when: on(true),
            half: Half::Lo,
            op: SaluOp::Set,
            a: SaluOperand::Const(0),
            b: SaluOperand::Const(0),
        })
        .update(SaluUpdate {
            when: on(true),
            half: Half::Hi,
            op: SaluOp::Set,
            a: SaluOperand::Field("meta.count".into()),
            b: SaluOperand::Const(0),
        })
        .update(SaluUpdate {
            when: on(false),
            half: Half::Lo,
            op: SaluOp::Add,
            a: SaluOperand::Cell,
            b: SaluOperand::Field("ipv4.total_len".into()),
        })
        .output("meta.small", SaluOutputValue::Predicate);
    assert_eq!(p.register_actions, [want]);

    // A half read after its write is the new value; the other half, not written, the old.
    let p = compile_ingress(
        "pair_outputs",
        "struct pair_t { bit<16> lo; bit<16> hi; }",
        "Register<pair_t, bit<16>>(64) r;
         RegisterAction<pair_t, bit<16>, bit<16>>(r) bump = {
             void apply(inout pair_t value, out bit<16> rv) { value.lo = value.lo + 1; rv = value.hi; }
         };
         RegisterAction<pair_t, bit<16>, bit<16>>(r) grow = {
             void apply(inout pair_t value, out bit<16> rv) { value.hi = value.hi + 1; rv = value.hi; }
         };
         action a() { meta.idx = bump.execute(meta.idx); }
         action b() { meta.idx = grow.execute(meta.idx); }
         table t { key = { meta.small : exact; } actions = { a; b; } default_action = a(); }
         apply { t.apply(); }",
    )
    .unwrap();
    let outputs: Vec<_> = p
        .register_actions
        .iter()
        .map(|r| (r.name.as_str(), r.outputs[0].value))
        .collect();
    assert_eq!(
        outputs,
        [
            ("bump", SaluOutputValue::OldHi),
            ("grow", SaluOutputValue::NewHi)
        ]
    );
    assert_eq!(p.register_actions[1].updates[0].half, Half::Hi);
}

#[test]
fn misused_pairs_and_predicates_fail_at_their_place() {
    let err = |name: &str, prelude: &str, body: &str| {
        let e = compile_ingress(name, prelude, body).unwrap_err();
        let text = e.to_string();
        text[text.find(&format!("{name}.p4:")).unwrap()..].to_string()
    };
    let ra = |decl: &str, apply: &str| {
        format!(
            "Register<{decl}, bit<16>>(64) r;
         RegisterAction<{decl}, bit<16>, bit<8>>(r) ra = {{
             void apply(inout {decl} value, out bit<8> rv) {{ {apply} }}
         }};
         action a() {{ meta.small = ra.execute(meta.idx); }}
         table t {{ actions = {{ a; }} default_action = a(); }}
         apply {{ t.apply(); }}"
        )
    };
    let pair = "struct pair_t { bit<32> lo; bit<32> hi; }";
    assert_eq!(
        err(
            "pair_three",
            "struct three_t { bit<8> a; bit<8> b; bit<8> c; }",
            &ra("three_t", "rv = 0;")
        ),
        "pair_three.p4:4:1: struct `three_t` as a Register cell: a pair register's cell is a \
         struct of two bit<N> (or int<N>) fields of the same width (the stateful ALU's lo and \
         hi halves)"
    );
    assert_eq!(
        err("pair_whole", pair, &ra("pair_t", "value = 0;")),
        "pair_whole.p4:6:62: the cell of a pair register is written half by half (`value.lo`, \
         `value.hi`)"
    );
    assert_eq!(
        err(
            "pair_twice",
            pair,
            &ra("pair_t", "value.hi = 1; value.hi = 2;")
        ),
        "pair_twice.p4:6:76: RegisterAction `ra` writes `value.hi` twice on one path; a \
         stateful ALU writes the cell once"
    );
    assert_eq!(
        err(
            "predicate_late",
            pair,
            &ra("pair_t", "value.lo = 1; rv = this.predicate(value.lo > 3);")
        ),
        "predicate_late.p4:6:81: RegisterAction `ra` takes `this.predicate(...)` after writing \
         the cell; the comparators see the cell as read, so set `rv` before the writes"
    );
    assert_eq!(
        err(
            "predicate_order",
            pair,
            &ra(
                "pair_t",
                "if (value.hi > 5) { } rv = this.predicate(value.lo > 3);"
            )
        ),
        "predicate_order.p4:6:104: argument 1 of `this.predicate` is comparator 1; the model's \
         predicate output is bit i for comparator i, so its arguments are the comparators in \
         order (first use)"
    );
    assert_eq!(
        err(
            "predicate_second",
            pair,
            &ra("pair_t", "rv = this.predicate(value.hi > 5, value.hi > 5);")
        ),
        "predicate_second.p4:6:96: argument 2 of `this.predicate` is comparator 0; the model's \
         predicate output is bit i for comparator i, so its arguments are the comparators in \
         order (first use)"
    );
}

/// A program whose ingress mirrors VLAN-tagged packets with the VLAN tag as the mirror
/// header (`emit<vlan_h>(session, hdr.vlan)`), the copy's mirror type `mirror_type`, and the
/// deparser's header argument `mirror_header`.
fn compile_header_mirror(
    name: &str,
    mirror_type: u32,
    mirror_header: &str,
) -> Result<Program, p4::P4Error> {
    compile_vlan_program(
        name,
        mirror_type,
        mirror_header,
        "0x8100: vlan; 0x0800: ip;",
        "pkt.emit(hdr);",
    )
}

/// The program of [`compile_header_mirror`] with the Ethernet `select`'s cases `cases` and
/// the ingress deparser's emits `emits`.
fn compile_vlan_program(
    name: &str,
    mirror_type: u32,
    mirror_header: &str,
    cases: &str,
    emits: &str,
) -> Result<Program, p4::P4Error> {
    let dir = root().join("target/p4-lower-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.p4"));
    let include = root().join("programs/p4/include");
    let text = format!(
        r#"#include <t2na.p4>
#include "{inc}/headers.p4"
#include "{inc}/no_egress.p4"
struct headers_t {{ ethernet_h ethernet; vlan_h vlan; ipv4_h ipv4; }}
struct metadata_t {{ MirrorId_t session; }}
parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {{
    state start {{ pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); transition eth; }}
    state eth {{ pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {{ {cases} default: accept; }} }}
    state vlan {{ pkt.extract(hdr.vlan);
        transition select(hdr.vlan.ether_type) {{ 0x0800: ip; default: accept; }} }}
    state ip {{ pkt.extract(hdr.ipv4); transition accept; }}
}}
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{
    action copy_tagged(MirrorId_t session) {{
        ig_dprsr_md.mirror_type = {mirror_type};
        meta.session = session;
        hdr.vlan.vid = 7;
    }}
    table watch {{ key = {{ hdr.vlan.vid : exact; }} actions = {{ copy_tagged; }} size = 16; }}
    apply {{ if (hdr.vlan.isValid()) {{ watch.apply(); }} }}
}}
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {{
    Mirror() mirror;
    apply {{
        if (ig_dprsr_md.mirror_type == {mirror_type}) {{ mirror.emit<vlan_h>(meta.session, {mirror_header}); }}
        {emits}
    }}
}}
Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
"#,
        inc = include.display()
    );
    std::fs::write(&path, text).unwrap();
    p4::compile(&path, &p4::Options::default()).map(|c| c.program)
}

#[test]
fn a_mirror_with_a_header_lowers_to_mirror_with_header() {
    use t2_pipeline::ir::{Operand, Primitive};
    let p = compile_header_mirror("header_mirror", 1, "hdr.vlan").unwrap();
    let a = p.actions.iter().find(|a| a.name == "copy_tagged").unwrap();
    // The copy starts with the VLAN tag as the action leaves it (vid 7), then the packet;
    // `vlan` is the program's first header, so the copy's mirror type is 1.
    assert_eq!(
        a.primitives,
        [
            Primitive::set("meta.session", Operand::param("session")),
            Primitive::set("vlan.vid", Operand::Const(7)),
            Primitive::MirrorWithHeader {
                session: Operand::param("session"),
                header: "vlan".into(),
            },
        ]
    );
    assert_eq!(p.headers[0].name, "vlan");
}

#[test]
fn a_mirror_header_of_another_place_or_a_built_in_one_fails_at_the_deparsers_argument() {
    let at = |e: p4::P4Error| {
        let t = e.to_string();
        t[t.rfind('/').unwrap() + 1..].to_string()
    };
    assert_eq!(
        at(compile_header_mirror("header_mirror_type", 2, "hdr.vlan").unwrap_err()),
        "header_mirror_type.p4:32:79: mirror type 2: the modelled chip gives a copy that starts \
         with header `vlan` mirror type 1, the header's place among the program's headers \
         (declare the headers so, or use mirror type 1)"
    );
    assert_eq!(
        at(compile_header_mirror("header_mirror_builtin", 1, "hdr.ethernet").unwrap_err()),
        "header_mirror_builtin.p4:32:79: the mirror header `hdr.ethernet` is one of t2sim's \
         built-in headers; a mirror header is a header of the program's own (its mirror type \
         is its place among them)"
    );
}

#[test]
fn the_deparse_order_is_the_parse_order_unless_the_emits_say_otherwise() {
    // IPv4 is the first case and VLAN-then-IPv4 the second: the order is ethernet, vlan,
    // ipv4 on every path, whichever branch a walk takes first.
    let emits = "pkt.emit(hdr.ethernet); pkt.emit(hdr.vlan); pkt.emit(hdr.ipv4);";
    let cases = "0x0800: ip; 0x8100: vlan;";
    assert!(compile_vlan_program("order_ok", 1, "hdr.vlan", cases, emits).is_ok());
    let ok = compile_vlan_program("order_ok", 1, "hdr.vlan", cases, emits).unwrap();
    assert!(ok.parser.unwrap().emit.is_empty());
    // Emitted in another order, the headers leave in the order of the emits.
    let other = "pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); pkt.emit(hdr.vlan);";
    let p = compile_vlan_program("order_other", 1, "hdr.vlan", cases, other).unwrap();
    assert_eq!(p.parser.unwrap().emit, ["ethernet", "ipv4", "vlan"]);
}

/// A parser that calls its metadata `md` and a control that calls it `meta` name the same
/// fields (one IR name, the control's); a header in the metadata made valid in the parser
/// has a 1-bit metadata field for its validity; `~x ^ k` is one xor; a table key may be a
/// slice across a wide field's containers.
#[test]
fn metadata_is_one_whatever_the_blocks_call_it() {
    let dir = root().join("target/p4-lower-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("metadata_names.p4");
    let include = root().join("programs/p4/include");
    let text = format!(
        r#"#include <t2na.p4>
#include "{inc}/headers.p4"
#include "{inc}/no_egress.p4"
header seen_h {{ bit<8> kind; }}
struct headers_t {{ ethernet_h ethernet; }}
struct metadata_t {{ bit<16> kind; seen_h seen; }}
parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                     out ingress_intrinsic_metadata_t ig_intr_md) {{
    state start {{
        pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        md.kind = hdr.ethernet.ether_type;
        md.seen.setValid();
        transition accept;
    }}
}}
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{
    action to(PortId_t port) {{ ig_tm_md.ucast_egress_port = port; }}
    action flip() {{ meta.seen.kind = ~meta.seen.kind ^ 8w0x0f; }}
    Counter<_, bit<4>>(16, CounterType_t.PACKETS) hits;
    action seen() {{ hits.count(1); }}
    table by_kind {{ key = {{ meta.kind : exact; }} actions = {{ to; flip; seen; }} size = 16; }}
    table by_mac {{ key = {{ hdr.ethernet.dst_addr[31:0] : exact; }} actions = {{ to; }} size = 16; }}
    apply {{ by_kind.apply(); by_mac.apply(); }}
}}
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {{
    apply {{ pkt.emit(hdr); }}
}}
Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
"#,
        inc = include.display()
    );
    std::fs::write(&path, text).unwrap();
    let p = p4::compile(&path, &p4::Options::default()).unwrap().program;
    // `~x ^ k` is one xor of `x` with `~k` cut to the destination (here 8 bits: ~0x0f).
    let flip = p.actions.iter().find(|a| a.name.ends_with("flip")).unwrap();
    assert_eq!(
        flip.primitives,
        [Primitive::alu(
            AluOp::Xor,
            "meta.seen.kind",
            Operand::field("meta.seen.kind"),
            Operand::Const(0xf0)
        )]
    );
    let names: Vec<&str> = p.metadata.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["meta.kind", "meta.seen.kind", "meta.seen.$valid"]);
    let start = &p.parser.as_ref().unwrap().states[0];
    let dsts: Vec<&str> = start.set.iter().map(|s| s.dst.as_str()).collect();
    assert_eq!(dsts, ["meta.kind", "meta.seen.$valid"]);
    assert_eq!(p.tables[0].keys, ["meta.kind"]);
    // `Counter<_, I>`: 32-bit cells.
    let hits = p
        .registers
        .iter()
        .find(|r| r.name.ends_with("hits"))
        .unwrap();
    assert_eq!((hits.cell_bits, hits.size), (32, 16));
    // A key on a slice that spans the MAC address's two containers checks (in pieces).
    assert_eq!(p.tables[1].keys, ["ethernet.dst_addr[31:0]"]);
}
