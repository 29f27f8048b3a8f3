//! The egress parser's look-ahead at a mirrored copy's type (`pipeline/src/p4/lower/
//! mirror_select.rs`): `select(pkt.lookahead<H>().f)` before anything is extracted lowers to
//! a select on the mirror type the modelled chip gives the copy, the egress graph (whose
//! default branch parses as the ingress) becomes the program's, and the program is held to
//! what makes the two mean the same: each case's copies start with a header of type `H`,
//! written by their mirroring action with the type in its first field.

use t2_pipeline::ir::{Primitive, Transition};
use t2_pipeline::p4;

/// A program whose egress mirrors every IPv4 packet with header `mirror_md` (mirror type 1)
/// and whose copies' egress pass drops the header; `edit` rewrites it for the error cases.
const PROGRAM: &str = r#"
#include <t2na.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_h {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> total_len; bit<16> id; bit<3> flags;
    bit<13> frag; bit<8> ttl; bit<8> protocol; bit<16> checksum; bit<32> src; bit<32> dst;
}
header mirror_h { bit<8> kind; bit<8> tag; }
struct headers_t { mirror_h mirror_md; ethernet_h ethernet; ipv4_h ipv4; }
struct metadata_t { MirrorId_t session; }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); transition parse_ethernet; }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action out(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table route { key = { hdr.ipv4.dst : exact; } actions = { out; } size = 16; }
    apply { route.apply(); }
}
control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition select(LOOKAHEAD) { CASE: parse_mirror; default: parse_ethernet; }
    }
    state parse_mirror { pkt.extract(hdr.mirror_md); transition accept; }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}
control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    action sample() {
        eg_dprsr_md.mirror_type = 1;
        meta.session = 5;
        WRITE_TYPE
        hdr.mirror_md.tag = 7;
    }
    action unwrap() { hdr.mirror_md.setInvalid(); }
    table sample_t { actions = { sample; } default_action = sample(); }
    table unwrap_t { actions = { unwrap; } default_action = unwrap(); }
    apply {
        if (hdr.mirror_md.isValid()) { unwrap_t.apply(); }
        else if (hdr.ipv4.isValid()) { sample_t.apply(); }
    }
}
control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    apply {
        if (eg_dprsr_md.mirror_type == 1) { mirror.emit<mirror_h>(meta.session, hdr.mirror_md); }
        pkt.emit(hdr);
    }
}
Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
"#;

const GOOD: [(&str, &str); 3] = [
    ("LOOKAHEAD", "pkt.lookahead<mirror_h>().kind"),
    ("CASE", "1"),
    ("WRITE_TYPE", "hdr.mirror_md.kind = 1;"),
];

fn compile(edits: &[(&str, &str)]) -> Result<t2_pipeline::ir::Program, String> {
    let mut text = PROGRAM.to_string();
    for (from, to) in edits.iter().chain(GOOD.iter()) {
        text = text.replace(from, to);
    }
    p4::compile_held(
        "copies.p4",
        &[("copies.p4", &text)],
        &p4::Options::default(),
        "copies",
    )
    .map(|c| c.program)
    .map_err(|e| e.to_string())
}

#[test]
fn a_look_ahead_at_the_mirror_type_is_a_select_on_the_copys_type() {
    let p = compile(&[]).unwrap();
    let g = p.parser.as_ref().expect("the egress graph");
    let start = &g.states[0];
    assert_eq!(start.name, "start");
    assert!(start.extract.is_empty());
    let Transition::Select {
        keys,
        cases,
        default,
    } = &start.transition
    else {
        panic!("{:?}", start.transition)
    };
    assert_eq!(keys, &["eg_intr_md.mirror_type"]);
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].values[0].value, 1);
    assert_eq!(cases[0].next, "parse_mirror");
    assert_eq!(default, "parse_ethernet");
    let names: Vec<&str> = g.states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["start", "parse_mirror", "parse_ethernet", "parse_ipv4"]
    );
    // The mirroring action writes the type into the copy's first byte.
    let sample = p.actions.iter().find(|a| a.name == "sample").unwrap();
    assert!(sample.primitives.contains(&Primitive::set(
        "mirror_md.kind",
        t2_pipeline::ir::Operand::Const(1)
    )));
}

#[test]
fn a_look_ahead_the_model_cannot_mean_is_refused_at_its_place() {
    let err = |edits: &[(&str, &str)]| compile(edits).unwrap_err();
    // The type must be the header's first field.
    let e = err(&[("LOOKAHEAD", "pkt.lookahead<mirror_h>().tag")]);
    assert!(
        e.contains("a copy's mirror type is the first field of its mirror header (`mirror_h` starts with `kind`)"),
        "{e}"
    );
    // A case no copy has.
    let e = err(&[("CASE", "2")]);
    assert!(
        e.contains("case 2: no deparser mirrors with a header of mirror type 2"),
        "{e}"
    );
    // The action that mirrors must write the type where the parser looks.
    let e = err(&[("WRITE_TYPE", "")]);
    assert!(
        e.contains("action `sample` mirrors with `mirror_md` but does not set `mirror_md.kind` to the mirror type 1"),
        "{e}"
    );
    let e = err(&[("WRITE_TYPE", "hdr.mirror_md.kind = 3;")]);
    assert!(
        e.contains("does not set `mirror_md.kind` to the mirror type 1"),
        "{e}"
    );
    // The default branch must parse as the ingress does.
    let e = err(&[("default: parse_ethernet;", "default: parse_ipv4;")]);
    assert!(e.contains("the egress parser's default branch"), "{e}");
    // Not after a header, not in ingress.
    let e = err(&[(
        "state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }\n}\ncontrol Egress",
        "state parse_ipv4 { pkt.extract(hdr.ipv4); transition select(pkt.lookahead<mirror_h>().kind) { default: accept; } }\n}\ncontrol Egress",
    )]);
    assert!(
        e.contains("`lookahead` lowers only before the egress parser extracts a header"),
        "{e}"
    );
    let e = err(&[(
        "pkt.advance(PORT_METADATA_SIZE); transition parse_ethernet; }",
        "pkt.advance(PORT_METADATA_SIZE); transition select(pkt.lookahead<mirror_h>().kind) { default: parse_ethernet; } }",
    )]);
    assert!(
        e.contains("`lookahead` lowers only in the egress parser"),
        "{e}"
    );
    // Errors name the place: the file and line of the look-ahead.
    let e = err(&[("CASE", "2")]);
    assert!(e.starts_with("copies.p4:38:27: "), "{e}");
}

/// A mirror header whose first field is wider than a mirror type: a marker. The case is
/// the marker every mirroring action writes there, and lowers to the copies' mirror type.
#[test]
fn a_look_ahead_at_a_marker_is_a_select_on_the_type_of_the_copies_that_carry_it() {
    let marker = [
        (
            "header mirror_h { bit<8> kind; bit<8> tag; }",
            "header mirror_h { bit<16> kind; bit<8> tag; }",
        ),
        ("CASE", "0xBFC0"),
        ("WRITE_TYPE", "hdr.mirror_md.kind = 0xBFC0;"),
    ];
    let p = compile(&marker).unwrap();
    let start = &p.parser.as_ref().unwrap().states[0];
    let Transition::Select { keys, cases, .. } = &start.transition else {
        panic!("{:?}", start.transition)
    };
    assert_eq!(keys, &["eg_intr_md.mirror_type"]);
    assert_eq!(cases[0].values[0].value, 1);
    assert_eq!(cases[0].next, "parse_mirror");
    // A marker no mirroring action writes, or one action among them that does not.
    let mut other = marker;
    other[1] = ("CASE", "0xBFC1");
    let e = compile(&other).unwrap_err();
    assert!(
        e.contains(
            "case 0xbfc1: no action mirroring with a header sets its first field to this marker"
        ),
        "{e}"
    );
    let mut unwritten = marker;
    unwritten[2] = ("WRITE_TYPE", "hdr.mirror_md.kind = 7;");
    let e = compile(&unwritten).unwrap_err();
    assert!(e.contains("no action mirroring with a header sets"), "{e}");
    // Wider than 32 bits is neither.
    let mut wide = marker;
    wide[0].1 = "header mirror_h { bit<40> kind; bit<8> tag; }";
    let e = compile(&wide).unwrap_err();
    assert!(
        e.contains("holds the mirror type (bit<4> to bit<8>) or a marker"),
        "{e}"
    );
}

/// An ingress parser that selects on the ingress port (a pktgen port's packets start with
/// IPv4 here): the egress parser cannot name the field, which reads 0 in egress, so its
/// default branch parses as the ingress does at port 0, and the one graph is the egress
/// start and copy states, then the ingress states after `start`.
#[test]
fn an_ingress_that_selects_on_its_port_joins_the_egress_graph_after_the_copies() {
    let by_port = (
        "pkt.advance(PORT_METADATA_SIZE); transition parse_ethernet; }",
        "pkt.advance(PORT_METADATA_SIZE); transition by_port; }
    state by_port {
        transition select(ig_intr_md.ingress_port) { 6: parse_ipv4; default: parse_ethernet; }
    }",
    );
    let p = compile(&[by_port]).unwrap();
    let g = p.parser.as_ref().unwrap();
    let names: Vec<&str> = g.states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "start",
            "parse_mirror",
            "by_port",
            "parse_ethernet",
            "parse_ipv4"
        ]
    );
    let Transition::Select { default, .. } = &g.states[0].transition else {
        panic!("{:?}", g.states[0].transition)
    };
    assert_eq!(default, "by_port");
    let Transition::Select { keys, .. } = &g.states[2].transition else {
        panic!("{:?}", g.states[2].transition)
    };
    assert_eq!(keys, &["ig_intr_md.ingress_port"]);
    // Port 0 is how egress reads it: an ingress that parses port 0 otherwise is refused.
    let zero = (
        by_port.0,
        "pkt.advance(PORT_METADATA_SIZE); transition by_port; }
    state by_port {
        transition select(ig_intr_md.ingress_port) { 0: parse_ipv4; default: parse_ethernet; }
    }",
    );
    let e = compile(&[zero]).unwrap_err();
    assert!(
        e.contains("also with the ingress port and resubmit flag the ingress selects on read as 0"),
        "{e}"
    );
}

/// `@t2sim_overhead(R, M)` on `main` is the IR's overhead; without it there is none.
#[test]
fn the_main_instance_declares_the_overhead() {
    assert_eq!(compile(&[]).unwrap().overhead, None);
    let declared = (
        "Switch(pipe) main;",
        "@t2sim_overhead(80, 64) Switch(pipe) main;",
    );
    let o = compile(&[declared])
        .unwrap_or_else(|e| panic!("{e}"))
        .overhead
        .unwrap();
    assert_eq!((o.recirculated_bytes, o.mirrored_bytes), (80, 64));
    let one = (
        "Switch(pipe) main;",
        "@t2sim_overhead(80) Switch(pipe) main;",
    );
    let e = compile(&[one]).unwrap_err();
    assert!(e.contains("@t2sim_overhead takes two numbers"), "{e}");
}
