//! The corpus of broken inputs kept in `tests/bad_inputs/`: every file is refused quickly
//! with exit status 2 and an error that names the file, the key and the problem (the first
//! line of each file, `# error: ...`, is the text the error must contain); never a panic.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn corpus(kind: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bad_inputs")
        .join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

fn expected(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap_or_default();
    first
        .strip_prefix("# error: ")
        .or_else(|| first.strip_prefix("// error: "))
        .unwrap_or_else(|| panic!("{}: no `# error:` line", path.display()))
        .to_string()
}

#[test]
fn every_broken_scenario_is_refused_with_file_key_and_problem() {
    let files = corpus("scenarios", "toml");
    assert!(files.len() >= 50, "{}", files.len());
    for f in files {
        let want = expected(&f);
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_t2sim"))
            .args(["run", "--scenario", f.to_str().unwrap()])
            .output()
            .unwrap();
        let took = started.elapsed();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{}: {err}", f.display());
        assert!(out.stdout.is_empty(), "{}", f.display());
        assert!(
            err.starts_with(&format!("t2sim: error: {}: ", f.display())),
            "the error does not start with the file: {err}"
        );
        assert!(err.contains(&want), "`{want}` not in: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            took < Duration::from_secs(5),
            "{}: refused after {took:?}",
            f.display()
        );
    }
}

#[test]
fn every_broken_parameter_file_is_refused_with_file_key_and_problem() {
    let files = corpus("params", "json");
    assert!(files.len() >= 10, "{}", files.len());
    for f in files {
        let want = std::fs::read_to_string(f.with_extension("expect")).unwrap();
        let want = want.trim_end();
        for args in [
            vec!["run", "--params", f.to_str().unwrap(), "--duration-us", "1"],
            vec![
                "report",
                "--program",
                "programs/flow_counter.json",
                "--params",
                f.to_str().unwrap(),
            ],
        ] {
            let out = Command::new(env!("CARGO_BIN_EXE_t2sim"))
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .args(&args)
                .output()
                .unwrap();
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.starts_with(&format!("t2sim: error: {}", f.display())),
                "the error does not start with the file: {err}"
            );
            assert!(err.contains(want), "`{want}` not in: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}
