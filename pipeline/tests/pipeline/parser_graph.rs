//! Program-declared headers and parser graphs: how headers map to PHV containers, what the
//! engine does with real bytes, every check with the error it gives, and the parser limits
//! as placement verdicts in the report.

use std::sync::Arc;
use t2_pipeline::check::{check, check_with};
use t2_pipeline::exec::Interpreter;
use t2_pipeline::headers::{build_udp_frame, Endpoints, MacAddr};
use t2_pipeline::ir::{MatchKind, ParserState, Program, ProgramBuilder, Stmt, Table};
use t2_pipeline::params::{PhvParams, PipelineParams};
use t2_pipeline::phv::{Container, Field, Phv};
use t2_pipeline::place::{place, Budget};
use t2_pipeline::report::Report;
use t2_pipeline::{examples, fields, DropReason};

type Fields<'a> = &'a [(&'a str, u16)];

/// A program of `headers` and a parser graph of `states`, with no tables.
fn program(headers: &[(&str, Fields)], states: Vec<ParserState>) -> Program {
    let mut b = ProgramBuilder::new("p");
    for (name, f) in headers {
        b = b.header(name, f);
    }
    b.parser(states).build_unchecked()
}

fn refused(p: &Program, path: &str, problem: &str) {
    let e = check(p).expect_err("the program must be refused");
    assert!(e.path.contains(path), "path `{}` lacks `{path}`", e.path);
    assert!(
        e.problem.contains(problem),
        "problem `{}` lacks `{problem}`",
        e.problem
    );
}

/// Ethernet, then `tag` if the ethertype is 0x88b5 (local experimental), else accept.
fn eth_then(tag_state: ParserState) -> Vec<ParserState> {
    vec![
        ParserState::new("start")
            .extract("ethernet")
            .select(&["ethernet.ether_type"], "accept")
            .case(&[0x88b5], &tag_state.name.clone()),
        tag_state,
    ]
}

const TAG: (&str, Fields) = (
    "tag",
    &[("flags", 8), ("vni", 24), ("rsvd", 8), ("next", 8)],
);

fn udp_bytes(dst_port: u16, payload: &[u8]) -> Vec<u8> {
    let ep = Endpoints {
        src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
        src_ip: [10, 0, 0, 1].into(),
        dst_ip: [10, 0, 0, 2].into(),
        src_port: 1,
        dst_port,
    };
    let mut b = Vec::new();
    build_udp_frame(&mut b, &ep, 64, 0, payload, false, 60);
    b
}

/// The built-in graph plus a 6-byte tag after UDP port 4789, selected on `udp.dst_port`.
fn tag_after_udp() -> Program {
    program(
        &[TAG],
        vec![
            ParserState::new("start")
                .extract("ethernet")
                .select(&["ethernet.ether_type"], "accept")
                .case(&[0x0800], "parse_ipv4"),
            ParserState::new("parse_ipv4")
                .extract("ipv4")
                .select(&["ipv4.protocol"], "accept")
                .case(&[17], "parse_udp"),
            ParserState::new("parse_udp")
                .extract("udp")
                .select(&["udp.dst_port"], "accept")
                .masked_case(&[(4789, 0xffff)], "parse_tag"),
            ParserState::new("parse_tag")
                .extract("tag")
                .select(&["tag.flags"], "accept")
                .masked_case(&[(0x80, 0x80)], "reject"),
        ],
    )
}

#[test]
fn header_bytes_map_to_containers_by_byte_aligned_groups() {
    let c = check(&tag_after_udp()).unwrap();
    let tag = &c.parser.headers[0];
    assert_eq!(tag.name, "tag");
    assert_eq!(tag.bytes, 6);
    let x: Vec<_> = tag
        .extracts
        .iter()
        .map(|e| (e.offset, e.container, e.len))
        .collect();
    // flags: 8-bit; vni: 3 bytes, right-aligned in a 32-bit container; rsvd, next: 8-bit.
    // The first free normal containers are 8-bit #8, 16-bit #17, 32-bit #12; the valid bit
    // takes the next 8-bit one.
    assert_eq!(
        x,
        [
            (0, Container::b8(8), 1),
            (1, Container::b32(12), 3),
            (4, Container::b8(9), 1),
            (5, Container::b8(10), 1),
        ]
    );
    assert_eq!(tag.valid, Field::at(Container::b8(11), 0, 1));
    // 1 + 2 + 1 + 1 extractors + 1 for the valid bit.
    assert_eq!(c.parser.state_extractors(3), 6);
    assert_eq!(c.phv_normal_used, [12, 17, 13]);
    // Wide fields go into 32-bit containers then 16 and 8 bits; a field group that ends on
    // a byte boundary shares one container.
    let p = program(
        &[("wide", &[("addr", 56), ("pcp", 3), ("vid", 13)])],
        eth_then(ParserState::new("w").extract("wide")),
    );
    let c = check(&p).unwrap();
    let x: Vec<_> = c.parser.headers[0]
        .extracts
        .iter()
        .map(|e| (e.offset, e.container, e.len))
        .collect();
    assert_eq!(
        x,
        [
            (0, Container::b32(12), 4),
            (4, Container::b16(17), 2),
            (6, Container::b8(8), 1),
            (7, Container::b16(18), 2),
        ]
    );
    // Tables name the 16-bit group's fields; the 56-bit address is matched as its pieces,
    // one per container, most significant first; ALUs see one piece (a slice).
    let t = |key: &str| {
        let mut p = p.clone();
        p.actions.push(t2_pipeline::ir::Action::new("a"));
        p.tables
            .push(Table::new("t", MatchKind::Exact, &[key], 16).action("a"));
        p.ingress.push(Stmt::apply("t"));
        check(&p).map(|c| c.tables[0].keys.clone())
    };
    assert_eq!(
        t("wide.vid").unwrap(),
        [Field::at(Container::b16(18), 0, 13)]
    );
    assert_eq!(
        t("wide.pcp").unwrap(),
        [Field::at(Container::b16(18), 13, 3)]
    );
    assert_eq!(
        t("wide.addr").unwrap(),
        [
            Field::whole(Container::b32(12)),
            Field::whole(Container::b16(17)),
            Field::whole(Container::b8(8)),
        ]
    );
    assert_eq!(
        t("wide.addr[23:8]").unwrap(),
        [Field::whole(Container::b16(17))]
    );
    // A key on a slice across containers takes the pieces it covers.
    assert_eq!(
        t("wide.addr[31:0]").unwrap(),
        [
            Field::at(Container::b32(12), 0, 8),
            Field::whole(Container::b16(17)),
            Field::whole(Container::b8(8)),
        ]
    );
}

#[test]
fn a_custom_tag_after_udp_parses_and_deparses_exact_bytes() {
    let c = Arc::new(check(&tag_after_udp()).unwrap());
    let interp = Interpreter::new(Arc::clone(&c));
    let tag = [0x08, 0x12, 0x34, 0x56, 0x00, 0x2a];
    let mut bytes = udp_bytes(4789, &[&tag[..], &[9; 20]].concat());
    let mut phv = Phv::new(&PipelineParams::default().phv);
    interp.parse(&bytes, &mut phv).unwrap();
    let vni = Field::low(Container::b32(12), 24);
    assert_eq!(phv.get(vni), 0x12_3456);
    assert_eq!(phv.get(Field::at(Container::b8(11), 0, 1)), 1, "tag.$valid");
    phv.set(vni, 0xab_cdef);
    phv.set(t2_pipeline::layout::IPV4_TTL, 9);
    interp.deparse(&phv, &mut bytes);
    // The tag starts at 14 + 20 + 8 = 42; only the VNI, TTL and IPv4 checksum change.
    let mut expected = udp_bytes(4789, &[&tag[..], &[9; 20]].concat());
    expected[43..46].copy_from_slice(&[0xab, 0xcd, 0xef]);
    expected[22] = 9;
    let sum = t2_pipeline::headers::ipv4_header_checksum(&{
        let mut h = expected[14..34].to_vec();
        h[10] = 0;
        h[11] = 0;
        h
    });
    expected[24..26].copy_from_slice(&sum.to_be_bytes());
    assert_eq!(bytes, expected);

    // Another port: no tag. The tag's flag bit 7 set: rejected. Cut inside it: too short.
    let other = udp_bytes(4790, &[&tag[..], &[9; 20]].concat());
    phv.clear();
    assert_eq!(interp.parse(&other, &mut phv), Ok(()));
    assert_eq!(phv.get(Field::at(Container::b8(11), 0, 1)), 0);
    let bad = udp_bytes(4789, &[0x80, 0, 0, 0, 0, 0]);
    phv.clear();
    assert_eq!(interp.parse(&bad, &mut phv), Err(DropReason::ParserReject));
    let short = udp_bytes(4789, &[0x08, 0, 0])[..45].to_vec();
    phv.clear();
    assert_eq!(interp.parse(&short, &mut phv), Err(DropReason::ParserError));
}

#[test]
fn header_declarations_are_checked() {
    let st = || eth_then(ParserState::new("t").extract("tag"));
    refused(
        &program(&[TAG, TAG], st()),
        "p: headers[1] (tag)",
        "declared twice",
    );
    refused(
        &program(&[("tag", &[("a", 0), ("b", 8)])], st()),
        "p: headers[0] (tag).fields[0] (a)",
        "width 0 is outside 1..=128",
    );
    refused(
        &program(&[("tag", &[("a", 136)])], st()),
        "fields[0] (a)",
        "width 136 is outside 1..=128",
    );
    refused(
        &program(&[("tag", &[("a", 8), ("a", 8)])], st()),
        "fields[1] (a)",
        "declared twice",
    );
    refused(
        &program(&[("tag", &[("a", 3), ("b", 4)])], st()),
        "p: headers[0] (tag)",
        "the header is 7 bits, not a whole number of bytes",
    );
    refused(
        &program(&[("tag", &[("a", 4), ("b", 36), ("c", 8)])], st()),
        "headers[0] (tag)",
        "fields `a` to `b` make a 40-bit group with no byte boundary inside",
    );
    refused(
        &program(&[("tag", &[])], st()),
        "headers[0] (tag)",
        "at least one field",
    );
    refused(
        &program(&[("ipv4", &[("ttl", 8)])], st()),
        "headers[0] (ipv4)",
        "`ipv4` is a built-in header with fixed PHV containers",
    );
    // Redeclared exactly, a built-in is fine.
    let mut p = program(&[TAG], st());
    p.headers
        .push(t2_pipeline::program::builtin::headers()[0].clone());
    check(&p).unwrap();
    refused(
        &program(
            &[("l4", &[("src_port", 16)])],
            eth_then(ParserState::new("t").extract("l4")),
        ),
        "headers (l4)",
        "`l4.src_port` is already a built-in field",
    );
    refused(
        &program(&[TAG, ("unused", &[("a", 8)])], st()),
        "p: headers (unused)",
        "declared but no parser state extracts it",
    );
    // Headers without a parser: the built-in graph does not extract them.
    let mut p = program(&[TAG], st());
    p.parser = None;
    refused(&p, "headers (tag)", "no parser state extracts it");
    let mut p = program(&[TAG], st());
    p.metadata.push(t2_pipeline::ir::MetadataField {
        name: "tag.vni".into(),
        bits: 8,
    });
    refused(&p, "metadata[0] (tag.vni)", "the name is a header field");
    // A header's valid bit is the parser's to set.
    let mut p = examples::vlan_switch();
    p.actions[4]
        .primitives
        .push(t2_pipeline::ir::Primitive::set(
            "vlan.$valid",
            t2_pipeline::ir::Operand::Const(0),
        ));
    refused(
        &p,
        "actions[4] (bridge)",
        "field `vlan.$valid` is read-only",
    );
}

#[test]
fn graphs_are_checked() {
    let eth = || ParserState::new("start").extract("ethernet");
    refused(
        &program(&[], vec![ParserState::new("first")]),
        "p: parser",
        "no `start` state",
    );
    refused(
        &program(&[], vec![eth(), ParserState::new("start")]),
        "p: parser.states[1] (start)",
        "declared twice",
    );
    refused(
        &program(&[], vec![eth(), ParserState::new("accept")]),
        "parser.states[1] (accept)",
        "not `accept` or `reject`",
    );
    refused(
        &program(&[], vec![eth().extract("nope")]),
        "p: parser.states[0] (start)",
        "extracts unknown header `nope`",
    );
    refused(
        &program(&[], vec![eth().goto("nowhere")]),
        "parser.states[0] (start)",
        "goes to unknown state `nowhere`",
    );
    refused(
        &program(&[], vec![eth(), ParserState::new("orphan")]),
        "parser.states[1] (orphan)",
        "the state is unreachable from `start`",
    );
    refused(
        &program(
            &[],
            vec![
                eth().goto("a"),
                ParserState::new("a")
                    .select(&["ethernet.ether_type"], "accept")
                    .case(&[1], "start"),
            ],
        ),
        "parser.states[1] (a)",
        "goes back to state `start`, making a loop",
    );
    refused(
        &program(
            &[],
            vec![eth().goto("a"), ParserState::new("a").extract("ethernet")],
        ),
        "parser.states[1] (a)",
        "extracts header `ethernet`, which a path to here has already extracted",
    );
    refused(
        &program(
            &[],
            vec![
                eth().goto("a"),
                ParserState::new("a").extract("udp").extract("tcp"),
            ],
        ),
        "parser.states[1] (a)",
        "extracts header `tcp`, which shares PHV containers with `udp`",
    );
    // `tag` is extracted on one path into `after` only.
    refused(
        &program(
            &[TAG],
            vec![
                eth()
                    .select(&["ethernet.ether_type"], "after")
                    .case(&[0x88b5], "t"),
                ParserState::new("t").extract("tag").goto("after"),
                ParserState::new("after")
                    .select(&["tag.next"], "accept")
                    .case(&[1], "reject"),
            ],
        ),
        "parser.states[2] (after)",
        "selects on `tag.next`, but header `tag` is not extracted on every path",
    );
    // Two headers in both orders.
    let x: (&str, Fields) = ("x", &[("a", 8)]);
    let y: (&str, Fields) = ("y", &[("b", 8)]);
    refused(
        &program(
            &[x, y],
            vec![
                eth()
                    .select(&["ethernet.ether_type"], "b1")
                    .case(&[1], "a1"),
                ParserState::new("a1").extract("x").extract("y"),
                ParserState::new("b1").extract("y").extract("x"),
            ],
        ),
        "p: parser",
        "headers `y` and `x` are extracted in both orders on different paths",
    );
    let sel = |keys: &[&str], case: &[u64]| {
        program(
            &[TAG],
            eth_then(
                ParserState::new("t")
                    .extract("tag")
                    .select(keys, "accept")
                    .case(case, "reject"),
            ),
        )
    };
    refused(
        &sel(&["tag.vni", "tag.flags", "tag.next"], &[1, 2, 3]),
        "parser.states[1] (t)",
        "selects on 40 bits; the parser matches at most 32",
    );
    refused(
        &sel(&["tag.vni"], &[1, 2]),
        "parser.states[1] (t).cases[0]",
        "2 values for 1 keys",
    );
    refused(
        &sel(&["tag.flags"], &[256]),
        "parser.states[1] (t).cases[0]",
        "value 0x100 or its mask does not fit in 8 bits",
    );
    refused(
        &sel(&["tag.nope"], &[1]),
        "parser.states[1] (t)",
        "selects on `tag.nope`, which is not a field of a header the parser extracts",
    );
    refused(
        &sel(&["ethernet.dst_addr"], &[1]),
        "parser.states[1] (t)",
        "selects on `ethernet.dst_addr`, which is 48 bits",
    );
    refused(
        &sel(&[], &[]),
        "parser.states[1] (t)",
        "a select needs at least one key",
    );
}

#[test]
fn headers_need_normal_containers() {
    let p = examples::vlan_switch();
    // No normal container left past the built-ins.
    let phv = PhvParams {
        normal: fields::FIRST_FREE,
        ..PhvParams::default()
    };
    let e = check_with(&p, &phv).unwrap_err();
    assert_eq!(e.path, "vlan_switch: headers[0] (vlan)");
    assert_eq!(
        e.problem,
        "no normal PHV container is left for its bytes 0..2"
    );
}

/// A state extracting `n32` 32-bit fields and `n8` 8-bit ones.
fn wide_state(n32: usize, n8: usize) -> Program {
    let names: Vec<String> = (0..n32 + n8).map(|i| format!("f{i}")).collect();
    let f: Vec<(&str, u16)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), if i < n32 { 32 } else { 8 }))
        .collect();
    program(
        &[("big", &f)],
        eth_then(ParserState::new("parse_big").extract("big")),
    )
}

fn report_of(p: &Program) -> Report {
    let c = check(p).unwrap();
    let budget = Budget::tofino2();
    let placed = place(&c, &budget);
    Report::new(
        &c,
        &placed,
        &budget,
        &PipelineParams::default(),
        1_500_000_000,
    )
}

#[test]
fn parser_limits_are_placement_verdicts() {
    // 9 x 32-bit + 1 x 8-bit: 18 + 1 extractors + 1 for the valid bit = 20 of 20: fits.
    let r = report_of(&wide_state(9, 1));
    assert!(r.fits, "{:?}", r.failure);
    assert_eq!(r.parser.worst_state, "parse_big");
    assert_eq!(r.parser.worst_state_extractors.used, 20);
    // 10 x 32-bit: 21.
    let r = report_of(&wide_state(10, 0));
    let f = r.failure.clone().unwrap();
    assert_eq!(
        (f.resource.as_str(), f.unit.as_str(), f.needed, f.available),
        ("parser_extractors", "parse_big", 21, 20)
    );
    let text = r.to_string();
    assert!(
        text.contains(
            "verdict          DOES NOT FIT: `parse_big` does not fit: parser_extractors needs 21 of 20"
        ),
        "{text}"
    );
    // TCAM rows: 200 cases + default in `start`, 60 + default in `t`: 262 of 256, passed
    // in `t`.
    let mut start = ParserState::new("start")
        .extract("ethernet")
        .select(&["ethernet.ether_type"], "accept");
    for v in 0..199 {
        start = start.case(&[v], "accept");
    }
    start = start.case(&[0x88b5], "t");
    let mut t = ParserState::new("t")
        .extract("tag")
        .select(&["tag.flags"], "accept");
    for v in 0..60 {
        t = t.case(&[v], "reject");
    }
    let r = report_of(&program(&[TAG], vec![start, t]));
    let f = r.failure.unwrap();
    assert_eq!(
        (f.resource.as_str(), f.unit.as_str(), f.needed, f.available),
        ("parser_tcam_rows", "t", 262, 256)
    );
    assert_eq!(r.parser.tcam_rows.used, 262);
}

#[test]
fn the_report_has_a_parser_section() {
    let r = report_of(&examples::vlan_switch());
    assert!(r.fits);
    let p = &r.parser;
    let rows: Vec<(&str, u32, u32)> = p
        .states
        .iter()
        .map(|s| (s.name.as_str(), s.tcam_rows, s.extractors))
        .collect();
    // start: 2 cases + default, ethernet 7 + 1; parse_vlan: 2 + 1, two 16-bit groups + 1.
    assert_eq!(
        rows,
        [
            ("start", 3, 8),
            ("parse_vlan", 3, 3),
            ("parse_ipv4", 2, 13),
            ("parse_udp", 1, 5)
        ]
    );
    assert_eq!((p.tcam_rows.used, p.tcam_rows.available), (9, 256));
    assert_eq!(p.worst_state, "parse_ipv4");
    assert_eq!(p.header_bytes, 4 + 14 + 20 + 8);
    // vlan: two 16-bit containers and an 8-bit one for its valid bit.
    assert_eq!(p.header_containers, [1, 2, 0]);
    let order: Vec<&str> = p.headers.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(order, ["ethernet", "vlan", "ipv4", "udp"]);
    assert_eq!(
        p.headers[1].containers,
        ["16-bit #17 bytes 0..2", "16-bit #18 bytes 2..4"]
    );
    let text = r.to_string();
    assert!(
        text.contains(
            "parser           4 states; TCAM rows 9/256; most extractors 13/20 in parse_ipv4; \
             46 header bytes; program headers in 1/2/0 containers of 8/16/32 bits"
        ),
        "{text}"
    );
    assert!(
        text.contains("  parse_vlan                  3           3  vlan\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "  header vlan                4 B  16-bit #17 bytes 0..2, 16-bit #18 bytes 2..4; valid 8-bit #8 bit 0\n"
        ),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["parser"]["tcam_rows"]["used"], 9);
    assert_eq!(json["parser"]["worst_state_extractors"]["used"], 13);
    // Without a parser the report shows the built-in graph: 7 rows.
    let r = report_of(&examples::l3_forward());
    assert_eq!(r.parser.tcam_rows.used, 7);
    assert_eq!(r.parser.header_containers, [0, 0, 0]);
}

#[test]
fn headers_and_parsers_round_trip_through_json_and_refuse_unknown_keys() {
    let p = tag_after_udp();
    assert_eq!(Program::from_json(&p.to_json()).unwrap(), p);
    let e = Program::from_json(
        r#"{"name": "x", "parser": {"states": [{"name": "start", "transition": {"goto": "accept"}, "extra": 1}]}}"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown field `extra`"), "{e}");
    let e = Program::from_json(
        r#"{"name": "x", "headers": [{"name": "h", "fields": [{"name": "a", "bits": 8, "signed": true}]}]}"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown field `signed`"), "{e}");
    let p = Program::from_json(
        r#"{"name": "x", "parser": {"states": [{"name": "start", "extract": ["ethernet"],
            "transition": {"select": {"keys": ["ethernet.ether_type"],
            "cases": [{"values": [{"value": 2048, "mask": 65535}], "next": "reject"}],
            "default": "accept"}}}]}}"#,
    )
    .unwrap();
    let c = check(&p).unwrap();
    assert_eq!(c.parser.states[0].cases[0].values, [(2048, 0xffff)]);
}
