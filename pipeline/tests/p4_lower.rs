//! The P4 front end: shipped P4 programs lower to exactly the IR of their JSON versions.

use std::path::Path;
use t2_pipeline::ir::Program;
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
fn droptail_switch_lowers_to_the_json_program() {
    same_ir("droptail_switch");
}

#[test]
fn dctcp_switch_lowers_to_the_json_program() {
    same_ir("dctcp_switch");
}

#[test]
fn a_define_changes_the_lowered_program() {
    let path = root().join("programs/p4/dctcp_switch.p4");
    let opts = p4::Options {
        include_dirs: Vec::new(),
        defines: vec!["K_CELLS=65".into()],
    };
    let p = p4::compile(&path, &opts).unwrap().program;
    let text = p.to_json();
    assert!(text.contains("\"const\": 65"), "{text}");
    assert!(!text.contains("\"const\": 400"));
}
