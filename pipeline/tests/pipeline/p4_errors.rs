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
        "deep.p4:1:118: nesting deeper than 200 levels is not supported"
    );
}

#[test]
fn long_operator_chains_are_an_error_too() {
    let text = format!("const bit<8> X = 1{};", " + 1".repeat(5000));
    let src = p4::preprocess::Source::plain("long.p4", &text);
    let e = p4::compile_source(&src, "long").unwrap_err();
    assert_eq!(
        e.to_string(),
        "long.p4:1:820: an expression of more than 200 operators is not supported"
    );
}
