//! The broken P4 corpus (programs/p4/bad/): each program fails with exactly the message
//! of programs/p4/bad/expected.txt, at the file, line and column of the construct; and a
//! program that names a file that does not exist, or passes a bad -D, says so.

use std::path::Path;
use t2_pipeline::p4;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

#[test]
fn every_broken_program_fails_at_its_place_with_its_message() {
    let bad = root().join("programs/p4/bad");
    let expected = std::fs::read_to_string(bad.join("expected.txt")).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&bad)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".p4") && n != "common.p4")
        .collect();
    names.sort();
    let mut got = String::new();
    // Run from the repository root so that file names print as programs/p4/bad/X.p4.
    std::env::set_current_dir(root()).unwrap();
    for n in &names {
        let path = Path::new("programs/p4/bad").join(n);
        match p4::compile(&path, &p4::Options::default()) {
            Ok(_) => panic!("{n} compiled"),
            Err(e) => {
                let text = e.to_string();
                got += text.strip_prefix("programs/p4/bad/").unwrap_or(&text);
                got.push('\n');
            }
        }
    }
    assert_eq!(got, expected);
    assert_eq!(names.len(), expected.lines().count());
}

#[test]
fn defines_reach_the_preprocessor() {
    std::env::set_current_dir(root()).unwrap();
    let path = Path::new("programs/p4/bad/preprocessor_error.p4");
    let opts = p4::Options {
        include_dirs: Vec::new(),
        defines: vec!["NEEDED=1".into()],
    };
    // With NEEDED defined the #error is gone; the program has no Ingress control. (The
    // column is in MAIN's expansion: cpp puts a macro's expansion on the line of its use.)
    let e = p4::compile(path, &opts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "programs/p4/bad/preprocessor_error.p4:8:27: expected a control instantiation such as `Ingress()`"
    );
    let bad = p4::Options {
        include_dirs: Vec::new(),
        defines: vec!["=1".into()],
    };
    assert_eq!(
        p4::compile(path, &bad).unwrap_err().message,
        "-D `=1`: expected NAME or NAME=VALUE"
    );
    assert_eq!(
        p4::compile(Path::new("no/such.p4"), &opts)
            .unwrap_err()
            .to_string(),
        "no/such.p4:0:0: no such file"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!(
        "const bit<8> X = {}1{};",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let src = p4::preprocess::Source::plain("deep.p4", &text);
    let e = p4::compile_source(&src, "deep").unwrap_err();
    assert_eq!(
        e.to_string(),
        "deep.p4:1:218: nesting deeper than 400 levels is not supported"
    );
    // 99 parentheses deep is a program, not an attack.
    let text = format!("const bit<8> X = {}1{};", "(".repeat(99), ")".repeat(99));
    let src = p4::preprocess::Source::plain("ok.p4", &text);
    let e = p4::compile_source(&src, "ok").unwrap_err();
    assert!(e.message.starts_with("no `main` package instance"), "{e}");
}

#[test]
fn long_operator_chains_are_an_error_too() {
    let text = format!("const bit<8> X = 1{};", " + 1".repeat(5000));
    let src = p4::preprocess::Source::plain("long.p4", &text);
    let e = p4::compile_source(&src, "long").unwrap_err();
    assert_eq!(
        e.to_string(),
        "long.p4:1:1620: an expression of more than 400 operators is not supported"
    );
}

/// A program whose metadata struct is `body` (declarations before it, then `struct
/// metadata_t`), compiled from memory.
fn with_metadata(types: &str) -> Result<p4::Compiled, p4::P4Error> {
    let text = format!(
        "#include <t2na.p4>\n{types}\n\
         struct headers_t {{}}\n\
         parser IP(packet_in pkt, out headers_t hdr, out metadata_t meta, \
         out ingress_intrinsic_metadata_t ig_intr_md) {{ state start {{ pkt.extract(ig_intr_md); \
         pkt.advance(PORT_METADATA_SIZE); transition accept; }} }}\n\
         control I(inout headers_t hdr, inout metadata_t meta, \
         in ingress_intrinsic_metadata_t ig_intr_md, \
         in ingress_intrinsic_metadata_from_parser_t ig_prsr_md, \
         inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md, \
         inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{ apply {{}} }}\n\
         control ID(packet_out pkt, inout headers_t hdr, in metadata_t meta, \
         in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {{ apply {{}} }}\n\
         parser EP(packet_in pkt, out headers_t hdr, out metadata_t meta, \
         out egress_intrinsic_metadata_t eg_intr_md) {{ state start {{ transition accept; }} }}\n\
         control E(inout headers_t hdr, inout metadata_t meta, \
         in egress_intrinsic_metadata_t eg_intr_md, \
         in egress_intrinsic_metadata_from_parser_t eg_prsr_md, \
         inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md, \
         inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {{ apply {{}} }}\n\
         control ED(packet_out pkt, inout headers_t hdr, in metadata_t meta, \
         in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {{ apply {{}} }}\n\
         Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;\nSwitch(pipe) main;\n"
    );
    p4::compile_held("m.p4", &[("m.p4", &text)], &p4::Options::default(), "m")
}

#[test]
fn types_that_hold_themselves_or_nest_too_deep_are_errors_not_stack_overflows() {
    let e =
        with_metadata("struct a_t { b_t x; }\nstruct b_t { a_t y; }\nstruct metadata_t { a_t q; }")
            .unwrap_err();
    assert_eq!(
        e.to_string(),
        "m.p4:3:14: `b_t` contains itself through field `y` (of type `a_t`): a struct or \
         header cannot hold itself"
    );
    let e = with_metadata("struct a_t { a_t x; }\nstruct metadata_t { a_t q; }").unwrap_err();
    assert!(
        e.message
            .starts_with("`a_t` contains itself through field `x`"),
        "{e}"
    );
    let mut deep = String::from("struct s0 { bit<8> f; }\n");
    for i in 1..50_000 {
        deep += &format!("struct s{i} {{ s{} f; }}\n", i - 1);
    }
    deep += "struct metadata_t { s49999 m; }";
    let e = with_metadata(&deep).unwrap_err();
    assert_eq!(
        e.message,
        "`s64` nests structs and headers more than 64 deep"
    );
    // 64 deep is fine, and so is a chain of 40 typedefs.
    let mut ok = String::from("struct s0 { bit<8> f; }\n");
    for i in 1..63 {
        ok += &format!("struct s{i} {{ s{} f; }}\n", i - 1);
    }
    ok += "typedef bit<8> t0;\n";
    for i in 1..40 {
        ok += &format!("typedef t{} t{i};\n", i - 1);
    }
    ok += "struct metadata_t { s62 m; t39 x; }";
    with_metadata(&ok).unwrap();
}

/// programs/p4/l3_forward.p4 with `edit` applied, compiled from memory.
fn l3_forward_with(edit: impl Fn(&str) -> String) -> Result<p4::Compiled, p4::P4Error> {
    let text = std::fs::read_to_string(root().join("programs/p4/l3_forward.p4")).unwrap();
    let text = edit(&text);
    p4::compile_held("l3.p4", &[("l3.p4", &text)], &p4::Options::default(), "l3")
}

/// Inputs whose cost grew faster than their size (issue 55): each must now compile in
/// about the time it takes to read. The bounds are loose (a shared 2-core machine); the
/// quadratic or exponential versions took from 30 s to forever.
#[test]
fn large_programs_cost_time_linear_in_their_size() {
    // A chain of 30 two-way selects: 2^30 paths through the parser, 90 states.
    let states: String = (0..30)
        .map(|i| {
            let next = if i == 29 {
                "parse_ipv4".to_string()
            } else {
                format!("d{}", i + 1)
            };
            format!(
                "    state d{i} {{ transition select(hdr.ethernet.ether_type) {{ {}: e{i}; \
                 default: f{i}; }} }}\n    state e{i} {{ transition {next}; }}\n    \
                 state f{i} {{ transition {next}; }}\n",
                i + 1
            )
        })
        .collect();
    let t = std::time::Instant::now();
    l3_forward_with(|s| {
        s.replace("0x0800: parse_ipv4;", "0x0800: d0;").replacen(
            "    state parse_ipv4 {",
            &format!("{states}    state parse_ipv4 {{"),
            1,
        )
    })
    .unwrap();
    assert!(t.elapsed().as_secs() < 10, "many paths: {:?}", t.elapsed());
    // 100,000 unused metadata fields.
    let fields: String = (0..100_000).map(|i| format!("bit<8> f{i};\n")).collect();
    let t = std::time::Instant::now();
    l3_forward_with(|s| {
        s.replace(
            "struct metadata_t {}",
            &format!("struct metadata_t {{\n{fields}}}"),
        )
    })
    .unwrap();
    assert!(t.elapsed().as_secs() < 20, "metadata: {:?}", t.elapsed());
    // 50,000 tables, each applied (more than 20 stages hold: placement says so).
    let n = 50_000;
    let tables: String = (0..n)
        .map(|i| format!("table t{i} {{ actions = {{ drop_no_route; }} default_action = drop_no_route(); }}\n"))
        .collect();
    let applies: String = (0..n).map(|i| format!("t{i}.apply();\n")).collect();
    let t = std::time::Instant::now();
    let c = l3_forward_with(|s| {
        s.replacen(
            "    apply {\n        if (!hdr.ipv4.isValid())",
            &format!("{tables}    apply {{\n{applies}        if (!hdr.ipv4.isValid())"),
            1,
        )
    })
    .unwrap();
    assert_eq!(c.program.tables.len(), n + 4);
    assert!(t.elapsed().as_secs() < 30, "tables: {:?}", t.elapsed());
}

/// A parser loop the stack unrolling cannot take apart is an error at the parser, at
/// once (an IP-in-IP loop allocated until the process died).
#[test]
fn a_parser_loop_is_an_error_at_once() {
    let t = std::time::Instant::now();
    let e = l3_forward_with(|s| s.replace("17: parse_udp;", "4: parse_ipv4;\n17: parse_udp;"))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "l3.p4:55:1: the parser loops (parse_ipv4 -> parse_ipv4): the model's parser graph is \
         loop-free; a loop over a header stack is unrolled, but a loop that extracts the same \
         header again (such as IP in IP) cannot be"
    );
    // A loop through two states, and through the default.
    let e = l3_forward_with(|s| {
        s.replace(
            "default: accept;\n        }\n    }\n    state parse_udp",
            "default: parse_ethernet;\n        }\n    }\n    state parse_udp",
        )
    })
    .unwrap_err();
    assert!(
        e.message
            .starts_with("the parser loops (parse_ethernet -> parse_ipv4 -> parse_ethernet)"),
        "{e}"
    );
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
}

/// Constant folding of P4's unsized integers must not wrap or truncate a shift count:
/// `(1 << 4294967296) + 600` folded to 601.
#[test]
fn constants_that_overflow_are_errors_not_wrapped() {
    for (expr, ok) in [
        ("(1 << 4294967296) + 600", None),
        ("1 << 128", None),
        ("340282366920938463463374607431768211455 + 1", None),
        ("(1 << 64) * (1 << 64)", None),
        ("1 << 127 >> 120", Some(128)),
        // Sized values wrap at their width, as P4 says.
        ("32w1 << 40", Some(3)),
        ("(8w255 + 8w2) + 100", Some(101)),
        ("0 << 4294967296", Some(3)),
    ] {
        let r = l3_forward_with(|s| s.replace("size = 4096;", &format!("size = {expr};")));
        match ok {
            None => assert_eq!(
                r.unwrap_err().message,
                "the constant overflows 128 bits (give it a width, such as 32w1, to compute \
                 modulo that width)",
                "{expr}"
            ),
            // The size is at least the table's 3 const entries.
            Some(size) => {
                let c = r.unwrap();
                let t = c
                    .program
                    .tables
                    .iter()
                    .find(|t| t.name.ends_with("ipv4_host"))
                    .unwrap();
                assert_eq!(t.size, size, "{expr}");
            }
        }
    }
}
