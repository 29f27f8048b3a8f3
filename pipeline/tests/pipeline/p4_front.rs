//! The P4 front end's later features: counters, `exit`, resubmit and what they lower to.

use std::path::Path;
use t2_pipeline::ir::{
    ActionCall, Half, Operand, Param, Primitive, RegisterAction, RegisterArray, SaluOp,
    SaluOperand, SaluUpdate,
};
use t2_pipeline::p4;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn compiled(name: &str) -> p4::Compiled {
    let path = root().join(format!("programs/p4/{name}.p4"));
    match p4::compile(&path, &p4::Options::default()) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn counters_lower_to_register_arrays_that_a_stateful_alu_adds_to() {
    let c = compiled("port_counters");
    let p = &c.program;
    assert_eq!(
        p.registers,
        vec![
            RegisterArray {
                name: "port_packets".into(),
                cell_bits: 32,
                size: 512,
                pair: false,
                signed: false,
            },
            // A cell per entry of the 1024-entry table, and one for the misses.
            RegisterArray {
                name: "host_stats".into(),
                cell_bits: 32,
                size: 1025,
                pair: true,
                signed: false,
            },
        ]
    );
    let add = |a, b| SaluUpdate::new(SaluOp::Add, a, b);
    assert_eq!(
        p.register_actions,
        vec![
            RegisterAction {
                updates: vec![add(SaluOperand::Cell, SaluOperand::Const(1))],
                ..RegisterAction::new("port_packets$count", "port_packets")
            },
            RegisterAction {
                updates: vec![
                    add(SaluOperand::Cell, SaluOperand::Const(1)),
                    SaluUpdate {
                        half: Half::Hi,
                        ..add(
                            SaluOperand::CellHi,
                            SaluOperand::Field("ig_intr_md.pkt_length".into())
                        )
                    },
                ],
                ..RegisterAction::new("host_stats$count", "host_stats")
            },
        ]
    );
    let forward = p.actions.iter().find(|a| a.name == "forward").unwrap();
    assert_eq!(
        forward.params,
        vec![
            Param {
                name: "port".into(),
                bits: 9
            },
            // Indexes 0..=1024: 11 bits of action data.
            Param {
                name: p4::lower::ENTRY_INDEX_PARAM.into(),
                bits: 11
            },
        ]
    );
    assert_eq!(
        forward.primitives[1],
        Primitive::Execute {
            register_action: "host_stats$count".into(),
            index: Operand::Param("$entry_index".into()),
        }
    );
    let t = p.tables.iter().find(|t| t.name == "ipv4_host").unwrap();
    assert_eq!(t.default_action, ActionCall::new("miss", &[1024]));
    // The control plane sees the entry index as no argument of the action.
    let info = c.actions.iter().find(|a| a.ir_name == "forward").unwrap();
    assert_eq!(info.params, vec![("port".to_string(), 9)]);
    assert!(c.takes_entry_index("forward") && !c.takes_entry_index("count_port"));
    let dc = c.counter("Ingress.host_stats").unwrap();
    assert_eq!(dc.direct_table.as_deref(), Some("ipv4_host"));
    assert_eq!(dc.split(5 << 32 | 2), (Some(2), Some(5)));
    assert_eq!(c.counter("port_packets").unwrap().split(7), (Some(7), None));
}

/// Compiles a program of the broken corpus's frame (`common.p4`) with control `Ingress`
/// holding `body`.
fn compile_ingress(name: &str, body: &str) -> Result<p4::Compiled, p4::P4Error> {
    let dir = root().join("target/p4-front-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.p4"));
    let common = root().join("programs/p4/bad/common.p4");
    let text = format!(
        "#include \"{}\"\ncontrol Ingress(INGRESS_PARAMS) {{\n{body}\n}}\nMAIN\n",
        common.display()
    );
    std::fs::write(&path, text).unwrap();
    p4::compile(&path, &p4::Options::default())
}

fn ingress_json(p: &t2_pipeline::ir::Program) -> serde_json::Value {
    serde_json::to_value(&p.ingress).unwrap()
}

#[test]
fn an_exit_moves_the_rest_into_the_other_branch_or_guards_it_with_a_flag() {
    let c = compiled("exit_early");
    let want: serde_json::Value = serde_json::from_str(
        r#"[{"if":{"cond":{"field":"ipv4.$valid","cmp":"eq","value":{"const":0}},
            "then":[{"apply":"tbl_not_ipv4"}],
            "else":[{"apply":"ipv4_host"},
              {"if":{"cond":{"field":"p4.ipv4_host.hit","cmp":"eq","value":{"const":0}},
                "then":[],
                "else":[
                  {"if":{"cond":{"field":"tcp.$valid","cmp":"eq","value":{"const":1}},
                    "then":[{"if":{"cond":{"field":"l4.dst_port","cmp":"eq","value":{"const":22}},
                      "then":[{"apply":"tbl_ssh_queue"},{"apply":"tbl_exit_L57"}],"else":[]}}],
                    "else":[]}},
                  {"if":{"cond":{"field":"p4.Ingress.exited","cmp":"eq","value":{"const":0}},
                    "then":[{"apply":"tbl_decrement_ttl"}],"else":[]}}]}}]}}]"#,
    )
    .unwrap();
    assert_eq!(ingress_json(&c.program), want);
    let names: Vec<&str> = c.program.metadata.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["p4.ipv4_host.hit", "p4.Ingress.exited"]);
    let exit = c
        .program
        .actions
        .iter()
        .find(|a| a.name == "exit_Ingress")
        .unwrap();
    assert_eq!(
        exit.primitives,
        vec![Primitive::set("p4.Ingress.exited", Operand::Const(1))]
    );
}

#[test]
fn an_exit_with_nothing_after_it_costs_nothing_and_a_table_after_one_on_every_path_is_refused() {
    let tables = "action a() { meta.small = 1; } action b() { meta.small = 2; }
        table ta { actions = { a; } default_action = a(); }
        table tb { actions = { b; } default_action = b(); }";
    // The last statement: nothing to skip.
    let c = compile_ingress(
        "exit_last",
        &format!("{tables} apply {{ ta.apply(); if (meta.idx == 1) {{ exit; }} }}"),
    )
    .unwrap();
    assert_eq!(
        ingress_json(&c.program),
        serde_json::json!([{"apply": "ta"}, {"if": {"cond": {"field": "meta.idx", "cmp": "eq",
            "value": {"const": 1}}, "then": [], "else": []}}])
    );
    assert!(c
        .program
        .metadata
        .iter()
        .all(|m| !m.name.ends_with("exited")));
    // Both branches exit: `tb` would never be applied, which is refused at the first exit.
    let e = compile_ingress(
        "exit_both",
        &format!(
            "{tables} apply {{ if (meta.idx == 1) {{ ta.apply(); exit; }} else {{ exit; }} tb.apply(); }}"
        ),
    )
    .unwrap_err();
    assert_eq!((e.line, e.col), (5, 102));
    assert_eq!(
        e.message,
        "`exit` here leaves the control on every path, so table `tb` after it is never \
         applied (the IR places every table it declares)"
    );
    // An `exit` in an action with nothing after its table costs nothing either: the action
    // sets no flag.
    let c = compile_ingress(
        "exit_in_action",
        "action a() { meta.small = 1; exit; } table t { actions = { a; } default_action = a(); } apply { t.apply(); }",
    )
    .unwrap();
    let names: Vec<&str> = c.program.metadata.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["meta.small"]);
    assert_eq!(
        c.program.actions[0].primitives,
        vec![Primitive::set("meta.small", Operand::Const(1))]
    );
}

#[test]
fn a_resubmit_lowers_to_the_primitive_with_its_header_and_a_parser_that_selects_on_the_flag() {
    let c = compiled("resubmit_pick");
    let p = &c.program;
    let pick = p.actions.iter().find(|a| a.name == "pick_port").unwrap();
    assert!(pick.primitives.contains(&Primitive::Resubmit {
        header: Some("resub".into())
    }));
    let g = p.parser.as_ref().expect("a parser graph of its own");
    let names: Vec<&str> = g.states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "start",
            "parse_resubmit",
            "parse_port_metadata",
            "parse_ethernet",
            "parse_ipv4"
        ]
    );
    assert_eq!(
        serde_json::to_value(&g.states[0].transition).unwrap(),
        serde_json::json!({"select": {"keys": ["ig_intr_md.resubmit_flag"],
            "cases": [{"values": [{"value": 1}], "next": "parse_resubmit"}],
            "default": "parse_port_metadata"}})
    );
    assert_eq!(g.states[1].extract, ["resub"]);
    // The port metadata is skipped where the chip puts none: the state extracts nothing.
    assert!(g.states[2].extract.is_empty());
}

#[test]
fn a_header_stack_unrolls_into_one_header_per_index() {
    let c = compiled("qinq_stack");
    let p = &c.program;
    let names: Vec<&str> = p.headers.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["vlan_0", "vlan_1"]);
    assert_eq!(
        p.headers[1]
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.bits))
            .collect::<Vec<_>>(),
        [("pcp", 3), ("dei", 1), ("vid", 12), ("ether_type", 16)]
    );
    let g = p.parser.as_ref().unwrap();
    let extracts: Vec<(&str, &[String])> = g
        .states
        .iter()
        .map(|s| (s.name.as_str(), s.extract.as_slice()))
        .collect();
    assert_eq!(extracts[1], ("parse_outer", &["vlan_0".to_string()][..]));
    assert_eq!(extracts[2], ("parse_inner", &["vlan_1".to_string()][..]));
    let t = p.tables.iter().find(|t| t.name == "vlan_pair").unwrap();
    assert_eq!(t.keys, ["vlan_0.vid", "vlan_1.vid"]);
    let forward = p.actions.iter().find(|a| a.name == "forward").unwrap();
    assert_eq!(
        forward.primitives[1],
        Primitive::set("vlan_1.pcp", Operand::Const(5))
    );
    // An index past the stack, or a variable one, fails at the index.
    let dir = root().join("target/p4-front-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let headers = root().join("programs/p4/include/headers.p4");
    for (name, index, want) in [
        (
            "stack_past",
            "2",
            "index 2 is past header stack `vlan` of 2 headers",
        ),
        (
            "stack_variable",
            "meta_i",
            "header stack `vlan` indexed by a variable: the model's parser and MAU name each \
             header of an unrolled stack by a constant index",
        ),
    ] {
        let path = dir.join(format!("{name}.p4"));
        std::fs::write(
            &path,
            format!(
                "#include <t2na.p4>\n#include \"{}\"\nstruct s_t {{ ethernet_h ethernet; vlan_h[2] vlan; }}\n\
                 parser P(packet_in pkt, out s_t hdr) {{\n    state start {{ pkt.extract(hdr.vlan[{index}]); transition accept; }}\n}}\n",
                headers.display()
            ),
        )
        .unwrap();
        let e = p4::compile(&path, &p4::Options::default()).unwrap_err();
        assert_eq!((e.line, e.col, e.message.as_str()), (5, 40, want), "{name}");
    }
}

#[test]
fn an_exit_in_an_action_guards_what_follows_the_tables_that_run_it() {
    let c = compiled("exit_action");
    // `not_ipv4` always exits: the rest moves into the other branch of its `if`; `acl` and
    // `ipv4_host` exit on some actions: what follows each runs under the exit flag.
    let guard = |then: serde_json::Value| {
        serde_json::json!({"if": {"cond": {"field": "p4.Ingress.exited", "cmp": "eq",
            "value": {"const": 0}}, "then": then, "else": []}})
    };
    let want = serde_json::json!([{"if": {
        "cond": {"field": "ipv4.$valid", "cmp": "eq", "value": {"const": 0}},
        "then": [{"apply": "tbl_not_ipv4"}],
        "else": [{"apply": "acl"}, guard(serde_json::json!([{"apply": "ipv4_host"},
            guard(serde_json::json!([{"apply": "tbl_decrement_ttl"}]))]))]}}]);
    assert_eq!(ingress_json(&c.program), want);
    let names: Vec<&str> = c.program.metadata.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["p4.Ingress.exited"]);
    let action = |n: &str| {
        c.program
            .actions
            .iter()
            .find(|a| a.name == n)
            .unwrap()
            .primitives
            .clone()
    };
    let exit = Primitive::set("p4.Ingress.exited", Operand::Const(1));
    assert_eq!(
        action("quarantine"),
        vec![
            Primitive::SetEgressPort {
                port: Operand::Param("port".into())
            },
            Primitive::SetQid {
                qid: Operand::Const(3)
            },
            exit.clone()
        ]
    );
    assert_eq!(action("no_route").last(), Some(&exit));
    assert!(!action("forward").contains(&exit));
}

#[test]
fn digests_lower_to_ir_digests_and_a_set_of_the_digest_type() {
    let c = compiled("digest_learn");
    let field = |name: &str, field: &str| t2_pipeline::ir::DigestField {
        name: name.into(),
        field: field.into(),
    };
    assert_eq!(
        c.program.digests,
        vec![
            t2_pipeline::ir::Digest {
                name: "IngressDeparser.learn".into(),
                digest_type: 1,
                fields: vec![
                    field("src_addr", "ipv4.src_addr"),
                    field("port", "meta.port")
                ],
            },
            t2_pipeline::ir::Digest {
                name: "IngressDeparser.moved".into(),
                digest_type: 2,
                fields: vec![
                    field("src_addr", "ipv4.src_addr"),
                    field("from_port", "meta.known_port"),
                    field("to_port", "meta.port"),
                ],
            },
        ]
    );
    let action = |n: &str| {
        c.program
            .actions
            .iter()
            .find(|a| a.name == n)
            .unwrap()
            .primitives
            .clone()
    };
    assert_eq!(
        action("unknown_source"),
        vec![
            Primitive::set("ig_intr_dprsr_md.digest_type", Operand::Const(1)),
            Primitive::set("meta.port", Operand::field("ig_intr_md.ingress_port")),
        ]
    );
    assert_eq!(
        action("source_moved"),
        vec![Primitive::set(
            "ig_intr_dprsr_md.digest_type",
            Operand::Const(2)
        )]
    );
    // The control plane's names: the deparser's, with or without `pipe.`, or the last.
    assert_eq!(c.digest("pipe.IngressDeparser.moved"), Some(1));
    assert_eq!(c.digest("learn"), Some(0));
    assert_eq!(c.digest("Ingress.learn"), None);
    // The checked program resolves each value to its PHV pieces (the address in one
    // 32-bit container).
    let checked = t2_pipeline::check::check(&c.program).unwrap();
    assert_eq!(checked.digests[1].fields.len(), 3);
    assert_eq!(checked.digests[0].fields[0].1.len(), 1);
    assert_eq!(checked.digests[0].fields[0].1[0].bits, 32);
}

#[test]
fn a_value_set_reserves_its_parser_tcam_rows_and_its_values_fill_them() {
    let c = compiled("value_set_tags");
    assert_eq!(c.value_sets, [("IngressParser.tag_types".to_string(), 16)]);
    assert_eq!(
        c.value_set("pipe.IngressParser.tag_types").map(|v| v.1),
        Some(16)
    );
    let g = c.program.parser.as_ref().unwrap();
    assert_eq!(
        g.value_sets,
        [t2_pipeline::ir::ValueSet {
            name: "IngressParser.tag_types".into(),
            size: 4,
            entries: Vec::new(),
        }]
    );
    // `start` took `parse_ethernet` in; its first case is the value set's.
    let t2_pipeline::ir::Transition::Select { cases, .. } = &g.states[0].transition else {
        panic!("a select");
    };
    assert_eq!(
        cases[0].value_set.as_deref(),
        Some("IngressParser.tag_types")
    );
    assert_eq!(
        (cases[0].next.as_str(), cases[0].values.len()),
        ("parse_tag", 0)
    );
    let rows = |p: &t2_pipeline::ir::Program| {
        let checked = t2_pipeline::check::check(p).unwrap();
        let g = &checked.parser;
        let per: Vec<u32> = (0..g.states.len()).map(|s| g.state_tcam_rows(s)).collect();
        (per, g.states[0].cases.len())
    };
    // start: the value set's 4 rows, 0x0800, the default; parse_tag 2, parse_ipv4 2,
    // parse_udp 1: 11 rows, filled or not.
    assert_eq!(rows(&c.program), (vec![6, 2, 2, 1], 1));
    let mut filled = c.program.clone();
    let set = &mut filled.parser.as_mut().unwrap().value_sets[0];
    for v in [0x8100, 0x88a8] {
        set.entries.push(vec![t2_pipeline::ir::KeyValue {
            value: v,
            mask: None,
        }]);
    }
    assert_eq!(rows(&filled), (vec![6, 2, 2, 1], 3));
    let set = &mut filled.parser.as_mut().unwrap().value_sets[0];
    set.entries = vec![set.entries[0].clone(); 5];
    assert_eq!(
        t2_pipeline::check::check(&filled).unwrap_err().to_string(),
        "value_set_tags: parser.value_sets[0] (IngressParser.tag_types): 5 values added to a \
         value set of 4 rows; its rows are reserved when the program loads, so it holds at most 4"
    );
}

#[test]
fn a_parser_loop_over_a_stack_unrolls_into_a_state_per_element() {
    let c = compiled("qinq_loop");
    let g = c.program.parser.as_ref().unwrap();
    let names: Vec<&str> = g.states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["start", "parse_vlan", "parse_vlan_1", "parse_ipv4"]);
    let select = |s: &t2_pipeline::ir::ParserState| match &s.transition {
        t2_pipeline::ir::Transition::Select { keys, cases, .. } => (
            keys.clone(),
            cases.iter().map(|c| c.next.clone()).collect::<Vec<_>>(),
        ),
        other => panic!("{other:?}"),
    };
    // Each copy extracts its element and selects on it (`.last`); a third tag is P4's
    // stack overrun, a parser error.
    assert_eq!(g.states[1].extract, ["vlan_0"]);
    assert_eq!(
        select(&g.states[1]),
        (
            vec!["vlan_0.ether_type".to_string()],
            vec!["parse_vlan_1".to_string(), "parse_ipv4".to_string()]
        )
    );
    assert_eq!(g.states[2].extract, ["vlan_1"]);
    assert_eq!(
        select(&g.states[2]),
        (
            vec!["vlan_1.ether_type".to_string()],
            vec!["reject".to_string(), "parse_ipv4".to_string()]
        )
    );
    let checked = t2_pipeline::check::check(&c.program).unwrap();
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let mut phv = t2_pipeline::phv::Phv::new(&checked.phv);
    let three_tags = hex("02000000000102000000000981000064810000658100\
                          00c808004500002e0001000040115dac0a0909090a000001");
    assert_eq!(
        checked.parser.parse(&three_tags, &mut phv),
        Err(t2_pipeline::DropReason::ParserReject)
    );
    // The program's meaning is qinq_stack.p4's, whose parser names the indices.
    let fixed = compiled("qinq_stack");
    assert_eq!(c.program.tables, fixed.program.tables);
    assert_eq!(c.program.ingress, fixed.program.ingress);
}
