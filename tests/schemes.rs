//! The scheme registry: every scheme builds a program that passes its checks and fits on
//! Tofino2 at its defaults, and the programs shipped under `programs/` are the schemes'
//! own, built from their defaults (set T2SIM_WRITE_PROGRAMS=1 to rewrite them).

use t2_pipeline::check::check;
use t2_pipeline::ir::Program;
use t2_pipeline::place::{place, Budget};
use t2sim::schemes::{self, Target, SCHEMES};
use t2sim::Tofino2Params;

#[test]
fn every_scheme_builds_a_program_that_fits_at_its_defaults() {
    let params = Tofino2Params::default();
    for scheme in SCHEMES {
        for gbps in [100u64, 400] {
            let target = Target {
                params: &params,
                link_bps: gbps * 1_000_000_000,
                multipath: gbps == 400,
            };
            let setup = scheme.default_setup(&target);
            let checked =
                check(&setup.program).unwrap_or_else(|e| panic!("{} at {gbps}G: {e}", scheme.name));
            let placed = place(&checked, &Budget::tofino2());
            assert!(
                placed.fits(),
                "{} at {gbps}G: {:?}",
                scheme.name,
                placed.failure
            );
        }
    }
}

#[test]
fn shipped_programs_are_the_schemes_own() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    for scheme in SCHEMES {
        for (file, p) in (scheme.shipped)() {
            check(&p).unwrap_or_else(|e| panic!("{file}: {e}"));
            let json = p.to_json();
            assert_eq!(Program::from_json(&json).unwrap(), p);
            let path = dir.join(file);
            if std::env::var_os("T2SIM_WRITE_PROGRAMS").is_some() {
                std::fs::write(&path, format!("{json}\n")).unwrap();
            }
            let shipped = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                Program::from_json(&shipped).unwrap(),
                p,
                "{file} is stale: rebuild it from scheme {}",
                scheme.name
            );
        }
    }
}

#[test]
fn the_dctcp_threshold_reaches_its_program() {
    let dctcp = schemes::find("dctcp").unwrap();
    let params = Tofino2Params::default();
    let target = Target {
        params: &params,
        link_bps: 100_000_000_000,
        multipath: false,
    };
    let overrides = schemes::parse_settings(&["k_cells=65".to_string()]).unwrap();
    let setup = (dctcp.build)(&dctcp.resolve(&overrides).unwrap(), &target);
    assert_eq!(setup.program, schemes::dctcp::program(65));
    assert_ne!(setup.program, schemes::dctcp::program(66));
    assert_eq!(
        setup.hosts.congestion,
        t2_testbench::transport::Congestion::Dctcp
    );
}
