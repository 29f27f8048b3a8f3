//! P4 programs on the chip through the commands: `t2sim report --p4` prints exactly the
//! report of the JSON program each P4 version rewrites, and `t2sim stf` runs the corpus's
//! STF tests (exact lines, cycles included), failing with status 1 on a failed expectation
//! and 2 on bad input.

use std::process::{Command, Output};

fn t2sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn same_report(name: &str) {
    for extra in [&[][..], &["--json"][..]] {
        let json = t2sim(
            &[
                &["report", "--program", &format!("programs/{name}.json")],
                extra,
            ]
            .concat(),
        );
        let p4 = t2sim(
            &[
                &["report", "--p4", &format!("programs/p4/{name}.p4")],
                extra,
            ]
            .concat(),
        );
        assert!(
            json.status.success() && p4.status.success(),
            "{name}: {p4:?}"
        );
        assert_eq!(stdout(&p4), stdout(&json), "{name} {extra:?}");
    }
}

/// `report --scheme NAME` (the program the scheme compiles from the copy of its P4 source in
/// the binary), `report --p4 src/schemes/NAME/NAME.p4` (the file, through cpp on disk) and
/// `report --program programs/NAME_switch.json` print the same report, text and JSON.
fn same_scheme_report(name: &str) {
    for extra in [&[][..], &["--json"][..]] {
        let scheme = t2sim(&[&["report", "--scheme", name], extra].concat());
        let p4 = t2sim(
            &[
                &["report", "--p4", &format!("src/schemes/{name}/{name}.p4")],
                extra,
            ]
            .concat(),
        );
        let json = t2sim(
            &[
                &[
                    "report",
                    "--program",
                    &format!("programs/{name}_switch.json"),
                ],
                extra,
            ]
            .concat(),
        );
        for o in [&scheme, &p4, &json] {
            assert!(o.status.success(), "{name}: {o:?}");
        }
        assert_eq!(stdout(&p4), stdout(&scheme), "{name} {extra:?}");
        assert_eq!(stdout(&json), stdout(&scheme), "{name} {extra:?}");
        if extra.is_empty() {
            assert!(
                stdout(&scheme)
                    .starts_with(&format!("program          {name}\nverdict          fits\n")),
                "{}",
                stdout(&scheme)
            );
        }
    }
}

/// `t2sim stf` of corpus program `name` (`programs/p4/NAME.p4` with `NAME.stf`), which must
/// pass; its standard output.
fn passing_stf(name: &str) -> String {
    let o = t2sim(&[
        "stf",
        "--p4",
        &format!("programs/p4/{name}.p4"),
        &format!("programs/p4/{name}.stf"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    stdout(&o)
}

#[test]
fn p4_l3_forward_reports_as_its_json() {
    same_report("l3_forward");
}

#[test]
fn p4_flow_counter_reports_as_its_json() {
    same_report("flow_counter");
}

#[test]
fn p4_ecn_marking_reports_as_its_json() {
    same_report("ecn_marking");
}

#[test]
fn p4_vlan_tagging_reports_as_its_json() {
    same_report("vlan_tagging");
}

#[test]
fn the_droptail_scheme_reports_as_its_p4_and_json() {
    same_scheme_report("droptail");
}

#[test]
fn the_dctcp_scheme_reports_as_its_p4_and_json() {
    same_scheme_report("dctcp");
}

#[test]
fn p4_vlan_switch_reports_as_its_json() {
    same_report("vlan_switch");
}

#[test]
fn the_pias_scheme_reports_as_its_p4_and_json() {
    same_scheme_report("pias");
}

#[test]
fn the_pabo_scheme_reports_as_its_p4_and_json() {
    // The file alone has no entries in `u_level` and `bounce_p` (the scheme installs them
    // from its LUT), but the tables' sizes are its defaults' entry counts, so the reports
    // agree.
    same_scheme_report("pabo");
}

#[test]
fn the_slytherin_scheme_reports_as_its_p4_and_json() {
    same_scheme_report("slytherin");
}

#[test]
fn the_dcqcn_scheme_reports_as_its_p4_and_json() {
    // The file alone has no ramp entries (the scheme installs them), but the table's size
    // is fixed (1024), so the reports agree.
    same_scheme_report("dcqcn");
}

#[test]
fn the_hpcc_scheme_reports_as_its_p4_and_json() {
    same_scheme_report("hpcc");
}

#[test]
fn the_bfc_scheme_reports_as_its_p4_and_json() {
    // The file alone has no entries in the tables the scheme fills (`threshold`,
    // `first_free`, the popcounts, `hashed_queue`, `changed_queue`), but their sizes are
    // fixed, so the reports agree.
    same_scheme_report("bfc");
    // A parameter is a define: a smaller flow table by either road.
    let scheme = t2sim(&["report", "--scheme", "bfc", "--set", "flow_entries_log2=10"]);
    let p4 = t2sim(&[
        "report",
        "--p4",
        "src/schemes/bfc/bfc.p4",
        "-D",
        "FLOW_ENTRIES=1024",
    ]);
    assert!(
        scheme.status.success() && p4.status.success(),
        "{scheme:?} {p4:?}"
    );
    assert_eq!(stdout(&p4), stdout(&scheme));
    assert!(
        stdout(&scheme).starts_with("program          bfc\nverdict          fits\n"),
        "{}",
        stdout(&scheme)
    );
    assert_ne!(
        stdout(&scheme),
        stdout(&t2sim(&["report", "--scheme", "bfc"]))
    );
}

/// The mice/elephant family's programs are in its folder, `src/schemes/mice_elephant/`
/// (`pfc_only.p4`; `mice_elephant.p4`, which `pfc_qcn.p4` and `qcn_only.p4` include), and
/// ship as `programs/*_switch.json`: for each scheme the three print the same report, text
/// and JSON (the files alone have no entries in the congestion point's `cp_feedback`, which
/// the scheme installs, but its size is the defaults' 5 Qeq, so the reports agree).
#[test]
fn the_mice_elephant_family_reports_as_its_p4_and_json() {
    for (scheme, file, json) in [
        ("pfc-only", "pfc_only", "pfc_switch"),
        ("mice-elephant", "mice_elephant", "mice_elephant_switch"),
        ("pfc-qcn", "pfc_qcn", "pfc_qcn_switch"),
        ("qcn-only", "qcn_only", "qcn_switch"),
    ] {
        let p4 = format!("src/schemes/mice_elephant/{file}.p4");
        let program = format!("programs/{json}.json");
        for extra in [&[][..], &["--json"][..]] {
            let outs: Vec<_> = [
                &["report", "--scheme", scheme][..],
                &["report", "--p4", &p4][..],
                &["report", "--program", &program][..],
            ]
            .iter()
            .map(|a| t2sim(&[*a, extra].concat()))
            .collect();
            for o in &outs {
                assert!(o.status.success(), "{o:?}");
            }
            assert_eq!(stdout(&outs[1]), stdout(&outs[0]), "{scheme} {extra:?}");
            assert_eq!(stdout(&outs[2]), stdout(&outs[0]), "{scheme} {extra:?}");
            if extra.is_empty() {
                assert!(
                    stdout(&outs[0])
                        .starts_with(&format!("program          {file}\nverdict          fits\n")),
                    "{}",
                    stdout(&outs[0])
                );
            }
        }
    }
}

#[test]
fn p4_ecmp_switch_reports_as_its_json() {
    same_report("ecmp_switch");
}

#[test]
fn acl_lpm_places_in_two_stages_with_its_tcam_and_stateful_alu() {
    let o = t2sim(&["report", "--p4", "programs/p4/acl_lpm.p4", "--require-fit"]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "program          acl_lpm");
    assert_eq!(lines[1], "verdict          fits");
    assert_eq!(
        lines[4],
        "    0     M/M       3     4     2     1     3     1     1     3     6     0     0     3     0  ingress_if0 police acl"
    );
    assert_eq!(
        lines[5],
        "    1     M/a       1     4     0     0     3     1     1     4     4     0     2     3     0  ingress_if1 limit routes"
    );
    assert!(text.contains(
        "latency ingress  MAU 90 cycles (full-length stages [0, 1]); parser 64 + MAU 90 + deparser 64 = 218 cycles = 145.333 ns"
    ));
    assert!(text.contains("  meta.seen                32-bit #12 bits 0..32\n"));
    assert!(text.contains("stateful         1 register arrays, 16384 bits in 1 data RAMs"));
}

#[test]
fn ghost_depth_shares_its_register_between_the_ghost_thread_and_ingress() {
    let o = t2sim(&[
        "report",
        "--p4",
        "programs/p4/ghost_depth.p4",
        "--require-fit",
    ]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[5],
        "    1     M/a       2     0     2     1     2     0     0     7     0     0     0     2     0  occupancy tbl_record"
    );
    assert!(text.contains(
        "tbl_record       ghost    keyless      1        0    0      0/0        0      0      0     0     0       0       0\n"
    ));
    assert!(text.contains("  critical path ipv4_host@0 -> occupancy@1 -> ingress_if1@2\n"));
}

#[test]
fn l3_forward_stf_passes_with_its_cycles() {
    assert_eq!(
        passing_stf("l3_forward"),
        "programs/p4/l3_forward.stf:4: expect port 16: pass (arrived in cycle 805)\n\
         programs/p4/l3_forward.stf:7: expect port 24: pass (arrived in cycle 830)\n\
         programs/p4/l3_forward.stf: 2 expectations, 2 passed, 0 failed; 0 unexpected packets\n"
    );
}

/// The programs of constructs written elsewhere (sub-parsers and sub-controls, `||` and
/// `&&`/else as gateway chains, parser writes, wide action data) pass with their exact
/// cycles: edge_guard's gateway chains put its tables in three stages, 42 cycles more than
/// the one-stage parser_writes and mac_rewrite.
#[test]
fn the_constructs_of_other_peoples_programs_pass_with_their_cycles() {
    assert_eq!(
        passing_stf("edge_guard"),
        "programs/p4/edge_guard.stf:7: expect port 16: pass (arrived in cycle 845)\n\
         programs/p4/edge_guard.stf:11: expect port 0: pass (arrived in cycle 870)\n\
         programs/p4/edge_guard.stf:17: expect port 0: pass (arrived in cycle 920)\n\
         programs/p4/edge_guard.stf: 3 expectations, 3 passed, 0 failed; 0 unexpected packets\n"
    );
    assert_eq!(
        passing_stf("parser_writes"),
        "programs/p4/parser_writes.stf:7: expect port 24: pass (arrived in cycle 803)\n\
         programs/p4/parser_writes.stf:11: expect port 16: pass (arrived in cycle 828)\n\
         programs/p4/parser_writes.stf:15: expect port 16: pass (arrived in cycle 853)\n\
         programs/p4/parser_writes.stf: 3 expectations, 3 passed, 0 failed; 0 unexpected packets\n"
    );
    assert_eq!(
        passing_stf("mac_rewrite"),
        "programs/p4/mac_rewrite.stf:6: expect port 24: pass (arrived in cycle 803)\n\
         programs/p4/mac_rewrite.stf:9: expect port 32: pass (arrived in cycle 828)\n\
         programs/p4/mac_rewrite.stf: 2 expectations, 2 passed, 0 failed; 0 unexpected packets\n"
    );
}

/// The Checksum extern: the parser's engines verify the IPv4 header (a bad one is dropped)
/// and deposit the UDP residual, and the deparser's units write both checksums anew over
/// the translated addresses, the UDP one as ffff where the sum is zero.
#[test]
fn nat_checksums_stf_passes_with_its_cycles() {
    assert_eq!(
        passing_stf("nat_checksums"),
        "programs/p4/nat_checksums.stf:9: expect port 24: pass (arrived in cycle 805)\n\
         programs/p4/nat_checksums.stf:14: expect port 32: pass (arrived in cycle 859)\n\
         programs/p4/nat_checksums.stf:17: expect port 24: pass (arrived in cycle 886)\n\
         programs/p4/nat_checksums.stf: 3 expectations, 3 passed, 0 failed; 0 unexpected packets\n"
    );
}

/// An egress parser of its own: egress parses Ethernet alone (the packet as the ingress
/// deparser left it) and writes each port's source MAC; a packet that bypasses the egress
/// keeps its MAC and arrives the egress's 189 cycles earlier (855 - 189 = 666).
#[test]
fn egress_smac_stf_passes_with_its_cycles() {
    assert_eq!(
        passing_stf("egress_smac"),
        "programs/p4/egress_smac.stf:10: expect port 24: pass (arrived in cycle 805)\n\
         programs/p4/egress_smac.stf:13: expect port 32: pass (arrived in cycle 830)\n\
         programs/p4/egress_smac.stf:17: expect port 40: pass (arrived in cycle 666)\n\
         programs/p4/egress_smac.stf: 3 expectations, 3 passed, 0 failed; 0 unexpected packets\n"
    );
}

/// `advance` over a shim the deparser leaves out, and a header bridged from ingress to an
/// egress parser of its own, emitted by one deparser and dropped by the other.
#[test]
fn bridge_strip_stf_passes_with_its_cycles() {
    assert_eq!(
        passing_stf("bridge_strip"),
        "programs/p4/bridge_strip.stf:5: expect port 24: pass (arrived in cycle 803)\n\
         programs/p4/bridge_strip.stf:9: expect port 24: pass (arrived in cycle 828)\n\
         programs/p4/bridge_strip.stf: 2 expectations, 2 passed, 0 failed; 0 unexpected packets\n"
    );
}

/// A parser's own variable (a metadata field of its own) copied into the user metadata,
/// a select on a slice of a header field, and a header the parser makes valid, inserted
/// once (an egress that parses nothing does not run the ingress graph's writes again).
#[test]
fn parser_local_stf_passes_with_its_cycles() {
    assert_eq!(
        passing_stf("parser_local"),
        "programs/p4/parser_local.stf:5: expect port 24: pass (arrived in cycle 803)\n\
         programs/p4/parser_local.stf:8: expect port 16: pass (arrived in cycle 828)\n\
         programs/p4/parser_local.stf:12: expect port 24: pass (arrived in cycle 854)\n\
         programs/p4/parser_local.stf: 3 expectations, 3 passed, 0 failed; 0 unexpected packets\n"
    );
}

#[test]
fn acl_lpm_stf_passes_with_its_cycles() {
    assert_eq!(
        passing_stf("acl_lpm"),
        "programs/p4/acl_lpm.stf:8: expect port 16: pass (arrived in cycle 832)\n\
         programs/p4/acl_lpm.stf:10: expect port 24: pass (arrived in cycle 857)\n\
         programs/p4/acl_lpm.stf:13: expect port 24: pass (arrived in cycle 882)\n\
         programs/p4/acl_lpm.stf:18: expect port 16: pass (arrived in cycle 932)\n\
         programs/p4/acl_lpm.stf:24: expect port 12: pass (arrived in cycle 1885)\n\
         programs/p4/acl_lpm.stf:29: expect port 20: pass (arrived in cycle 2619)\n\
         programs/p4/acl_lpm.stf: 6 expectations, 6 passed, 0 failed; 0 unexpected packets\n"
    );
}

#[test]
fn every_stf_test_of_the_corpus_passes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/p4");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "stf") {
            let prog = p.with_extension("p4");
            let o = t2sim(&["stf", "--p4", prog.to_str().unwrap(), p.to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(0), "{}: {}", p.display(), stdout(&o));
            n += 1;
        }
    }
    assert!(n >= 4, "{n} STF tests");
}

#[test]
fn a_failed_expectation_exits_1_and_says_what_arrived() {
    let dir = std::env::temp_dir().join(format!("t2sim-p4-stf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/p4/l3_forward.stf"),
    )
    .unwrap();
    // Expect TTL 62 where 63 arrives; and nothing where the dropped packet would go.
    let bad = text.replacen("000000003f115eac", "000000003e115eac", 1) + "expect 16 0200\n";
    let f = dir.join("bad.stf");
    std::fs::write(&f, bad).unwrap();
    let o = t2sim(&[
        "stf",
        "--p4",
        "programs/p4/l3_forward.p4",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let shown = f.display();
    assert!(out.contains(&format!(
        "{shown}:4: expect port 16: FAIL: got 02000000000102000000000908004500002e000000003f115eac"
    )));
    assert!(out.contains(&format!(
        "{shown}:11: expect port 16: FAIL: no packet arrived\n"
    )));
    assert!(out.ends_with("3 expectations, 1 passed, 2 failed; 0 unexpected packets\n"));
    // Bad input: exit 2 with the line.
    std::fs::write(&f, "packet 8 0\n").unwrap();
    let o = t2sim(&[
        "stf",
        "--p4",
        "programs/p4/l3_forward.p4",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!("t2sim: error: {shown}:1: a packet has an odd number of hex digits\n")
    );
    std::fs::write(&f, "add Ingress.nope hdr.x:1 a()\n").unwrap();
    let o = t2sim(&[
        "stf",
        "--p4",
        "programs/p4/l3_forward.p4",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!("t2sim: error: {shown}:1: no table `Ingress.nope` in the program\n")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_broken_p4_program_exits_2_at_its_place() {
    let o = t2sim(&["report", "--p4", "programs/p4/bad/wrong_gress.p4"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "t2sim: error: programs/p4/bad/wrong_gress.p4:8:13: `eg_intr_md.deq_qdepth` is egress \
         intrinsic metadata, but `Ingress` runs in ingress\n"
    );
    // -D reaches the preprocessor.
    let o = t2sim(&[
        "report",
        "--p4",
        "programs/p4/bad/preprocessor_error.p4",
        "-D",
        "NEEDED",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("preprocessor_error.p4:8:27: expected a control"));
}

#[test]
fn run_p4_gives_the_run_of_the_json_program() {
    let json = t2sim(&[
        "run",
        "--program",
        "programs/dctcp_switch.json",
        "--duration-us",
        "20",
    ]);
    let p4 = t2sim(&[
        "run",
        "--p4",
        "src/schemes/dctcp/dctcp.p4",
        "--duration-us",
        "20",
    ]);
    assert!(json.status.success() && p4.status.success(), "{p4:?}");
    assert_eq!(stdout(&p4), stdout(&json));
    assert!(stdout(&p4).contains("delivered        158 packets"));
}

#[test]
fn a_scenario_runs_a_p4_program_as_its_json() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = std::env::temp_dir().join(format!("t2sim-p4-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut outs = Vec::new();
    for program in ["programs/dctcp_switch.json", "src/schemes/dctcp/dctcp.p4"] {
        let text = format!(
            "name = \"p4-check\"\nseed = 1\nduration_us = 10\ndrain_us = 50\nprogram = \"{root}/{program}\"\n\
             [topology]\nkind = \"single_chip\"\nhosts = 9\nlink_gbps = 100\nlink_delay_ns = 500\n\
             queue_limit_cells = 400\n[transport]\ncongestion = \"fixed\"\nmss = 1000\n\
             window_bytes = 32000\nrto_us = 20\n[workload.incast]\ndegree = 8\nsize_bytes = 64000\n\
             period_us = 20\nfirst_us = 1\n"
        );
        let f = dir.join("s.toml");
        std::fs::write(&f, text).unwrap();
        let o = t2sim(&["run", "--scenario", f.to_str().unwrap()]);
        assert!(o.status.success(), "{program}: {o:?}");
        outs.push(stdout(&o));
    }
    assert_eq!(outs[0], outs[1]);
    assert!(outs[1].contains("flows            2 completed of 8"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_entries_file_fills_tables_by_p4_names() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let c = t2sim::stf::load(&root.join("programs/p4/acl_lpm.p4"), &[], &[]).unwrap();
    let text =
        "# routes\nadd Ingress.routes hdr.ipv4.dst_addr:0x0a000000/8 Ingress.forward(port:16)\n\
                add pipe.Ingress.acl 2 src_addr:0x0a0909** dst_port:0x0016 deny()\n\
                setdefault routes forward(port:9)\n";
    let p = t2sim::stf::with_entries(&c, "e.txt", text).unwrap();
    let t = |n: &str| p.tables.iter().find(|t| t.name == n).unwrap();
    assert_eq!(t("routes").entries.len(), 1);
    assert_eq!(
        t("routes").entries[0].key[0],
        t2_pipeline::ir::KeyValue {
            value: 0x0a00_0000,
            mask: Some(0xff00_0000)
        }
    );
    assert_eq!(t("routes").default_action.args, [9]);
    assert_eq!(t("acl").entries[0].action.action, "deny");
    assert_eq!(
        t2sim::stf::with_entries(&c, "e.txt", "wait\n").unwrap_err(),
        "e.txt:1: an entries file holds `add`, `setdefault` and `value_set_add` lines only"
    );
    // `run --p4 --entries`: the incast runs with them (the host routes go in as well).
    let dir = std::env::temp_dir().join(format!("t2sim-p4-entries-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("e.txt");
    std::fs::write(
        &f,
        "add Ingress.ipv4_host hdr.ipv4.dst_addr:0x0a090001 Ingress.forward(port:8)\n",
    )
    .unwrap();
    let with = t2sim(&[
        "run",
        "--p4",
        "src/schemes/dctcp/dctcp.p4",
        "--entries",
        f.to_str().unwrap(),
        "--duration-us",
        "5",
    ]);
    let without = t2sim(&[
        "run",
        "--p4",
        "src/schemes/dctcp/dctcp.p4",
        "--duration-us",
        "5",
    ]);
    assert!(with.status.success(), "{with:?}");
    assert_eq!(
        stdout(&with),
        stdout(&without),
        "an entry no packet hits changes nothing"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_dctcp_scheme_marks_on_the_chip_at_its_threshold() {
    let args = |k: Option<&str>| {
        let mut a = vec![
            "stf",
            "--p4",
            "src/schemes/dctcp/dctcp.p4",
            "src/schemes/dctcp/dctcp.stf",
        ];
        if let Some(k) = k {
            a.extend(["-D", k]);
        }
        t2sim(&a)
    };
    let marked = args(Some("K_CELLS=0"));
    assert_eq!(marked.status.code(), Some(0), "{marked:?}");
    assert_eq!(
        stdout(&marked),
        "src/schemes/dctcp/dctcp.stf:9: expect port 16: pass (arrived in cycle 803)\n\
         src/schemes/dctcp/dctcp.stf:11: expect port 16: pass (arrived in cycle 828)\n\
         src/schemes/dctcp/dctcp.stf: 2 expectations, 2 passed, 0 failed; 0 unexpected packets\n"
    );
    // At K = 400 the ECN-capable packet leaves as it came but for the TTL and checksum.
    let unmarked = args(None);
    assert_eq!(unmarked.status.code(), Some(1), "{unmarked:?}");
    assert!(stdout(&unmarked).starts_with(
        "src/schemes/dctcp/dctcp.stf:9: expect port 16: FAIL: got \
         02000000000102000000000908004502002e000000003f115eaa0a0909090a000002"
    ));
}

#[test]
fn run_p4_passes_its_defines_and_includes_to_the_preprocessor() {
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--p4",
            "src/schemes/dctcp/dctcp.p4",
            "--duration-us",
            "20",
        ];
        a.extend_from_slice(extra);
        t2sim(&a)
    };
    let plain = run(&[]);
    // The file's own default, given again, and an include folder it does not need.
    let same = run(&["-D", "K_CELLS=400", "-I", "programs/p4/include"]);
    assert!(plain.status.success() && same.status.success(), "{same:?}");
    assert_eq!(stdout(&same), stdout(&plain));
    // A define the program cannot take is the program's error at its place.
    let bad = run(&["-D", "K_CELLS=nope"]);
    assert_eq!(bad.status.code(), Some(2));
    let e = String::from_utf8_lossy(&bad.stderr).to_string();
    assert!(
        e.starts_with("t2sim: error: src/schemes/dctcp/dctcp.p4:"),
        "{e}"
    );
    assert!(e.contains("nope"), "{e}");
    // -D and -I need --p4.
    let o = t2sim(&["run", "-D", "K=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--p4"));
}

#[test]
fn port_counters_place_their_counters_on_two_stateful_alus_of_stage_0() {
    let o = t2sim(&[
        "report",
        "--p4",
        "programs/p4/port_counters.p4",
        "--require-fit",
    ]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[4],
        "    0     M/M       5     0     4     2     3     0     1     9     0    10     3     3     0  tbl_count_port ingress_if0 ipv4_host"
    );
    assert!(text.contains(
        "ipv4_host        ingress  exact        0     1024   32     57/2        1      1      0     0     0       1       0\n"
    ));
    // The stateful stage costs 4 cycles more than a plain one (23 + 4).
    assert!(text.contains("  stage cycles [27, 2, 2,"));
    assert!(text.contains("stateful         2 register arrays, 81984 bits in 2 data RAMs"));
}

#[test]
fn port_counters_stf_checks_its_counters() {
    let o = t2sim(&[
        "stf",
        "--p4",
        "programs/p4/port_counters.p4",
        "programs/p4/port_counters.stf",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let f = "programs/p4/port_counters.stf";
    let want = [
        "5: check_counter Ingress.port_packets(8) == 0: pass (packets 0)",
        "7: expect port 16: pass (arrived in cycle 807)",
        "9: expect port 24: pass (arrived in cycle 832)",
        "11: expect port 16: pass (arrived in cycle 857)",
        "15: check_counter Ingress.host_stats($h1) packets == 2: pass (packets 2)",
        "16: check_counter host_stats($h1) bytes == 128: pass (bytes 128)",
        "17: check_counter host_stats(h2) packets == 1: pass (packets 1)",
        "18: check_counter host_stats(1024) packets == 1: pass (packets 1)",
        "19: check_counter port_packets(8) == 3: pass (packets 3)",
        "20: check_counter port_packets(9) packets == 1: pass (packets 1)",
        "24: expect port 20: pass (arrived in cycle 1566)",
        "25: check_counter host_stats($h3) packets == 1: pass (packets 1)",
        "26: check_counter host_stats(1024) packets == 1: pass (packets 1)",
        "27: check_counter port_packets(8) >= 4: pass (packets 4)",
    ];
    let mut expected: String = want.iter().map(|l| format!("{f}:{l}\n")).collect();
    expected += &format!(
        "{f}: 4 expectations, 4 passed, 0 failed; 0 unexpected packets; 10 checks, 10 passed, 0 failed\n"
    );
    assert_eq!(stdout(&o), expected);
}

#[test]
fn a_failed_check_exits_1_and_says_what_the_cell_holds() {
    let dir = std::env::temp_dir().join(format!("t2sim-p4-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string("programs/p4/port_counters.stf")
        .unwrap()
        .replace(
            "port_packets(9) packets == 1",
            "port_packets(9) packets == 2",
        );
    let stf = dir.join("bad.stf");
    std::fs::write(&stf, text).unwrap();
    let o = t2sim(&[
        "stf",
        "--p4",
        "programs/p4/port_counters.p4",
        stf.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains(":20: check_counter port_packets(9) packets == 2: FAIL: packets is 1\n"));
    assert!(out.ends_with("; 10 checks, 9 passed, 1 failed\n"), "{out}");
    // An unknown counter, or a handle no entry was given, is bad input at its line.
    for (check, why) in [
        (
            "check_counter nope(1) == 1",
            "no counter `nope` in the program",
        ),
        (
            "check_counter host_stats(1) == 1",
            "counter `host_stats` counts packets and bytes: say which",
        ),
        (
            "check_counter host_stats($x) packets == 1",
            "no entry was added with handle `x` (`add ... = x`)",
        ),
    ] {
        std::fs::write(&stf, format!("packet 8 00\n{check}\n")).unwrap();
        let o = t2sim(&[
            "stf",
            "--p4",
            "programs/p4/port_counters.p4",
            stf.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(err, format!("t2sim: error: {}:2: {why}\n", stf.display()));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn exit_early_places_its_exit_flag_gateway_a_stage_after_the_table_that_sets_it() {
    let o = t2sim(&[
        "report",
        "--p4",
        "programs/p4/exit_early.p4",
        "--require-fit",
    ]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[4..7],
        [
            "    0     M/M       1     0     0     0     3     0     1     5     0    10     2     4     0  ingress_if0 tbl_not_ipv4 ipv4_host",
            "    1     M/a       0     0     0     0     5     0     3     4     0     0     0     2     0  ingress_if1 ingress_if2 ingress_if3 tbl_ssh_queue tbl_exit_L57",
            "    2     M/a       0     0     0     0     2     0     1     1     0     0     0     1     0  ingress_if4 tbl_decrement_ttl",
        ]
    );
    assert!(text.contains(
        "latency ingress  MAU 103 cycles (full-length stages [0, 1, 2]); parser 64 + MAU 103 + deparser 64 = 231 cycles = 154.000 ns"
    ));
    assert_eq!(
        passing_stf("exit_early"),
        "programs/p4/exit_early.stf:4: expect port 16: pass (arrived in cycle 845)\n\
         programs/p4/exit_early.stf:7: expect port 24: pass (arrived in cycle 870)\n\
         programs/p4/exit_early.stf:10: expect port 24: pass (arrived in cycle 895)\n\
         programs/p4/exit_early.stf: 3 expectations, 3 passed, 0 failed; 0 unexpected packets\n"
    );
}

#[test]
fn exit_action_skips_routing_and_the_ttl_decrement_after_an_action_that_exits() {
    let o = t2sim(&[
        "report",
        "--p4",
        "programs/p4/exit_action.p4",
        "--require-fit",
    ]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    // The exit flag's gateways: each a stage after the table whose action sets the flag.
    assert_eq!(
        lines[4..7],
        [
            "    0     M/M       1     1     0     0     3     1     1     1     4     0     2     3     0  ingress_if0 tbl_not_ipv4 acl",
            "    1     M/a       1     0     0     0     2     0     1     5     0    10     2     3     0  ingress_if1 ipv4_host",
            "    2     M/a       0     0     0     0     2     0     1     1     0     0     0     1     0  ingress_if2 tbl_decrement_ttl",
        ]
    );
    assert!(text.contains(
        "latency ingress  MAU 105 cycles (full-length stages [0, 1, 2]); parser 64 + MAU 105 + deparser 64 = 233 cycles = 155.333 ns"
    ));
    assert_eq!(
        passing_stf("exit_action"),
        "programs/p4/exit_action.stf:6: expect port 16: pass (arrived in cycle 847)\n\
         programs/p4/exit_action.stf:9: expect port 24: pass (arrived in cycle 872)\n\
         programs/p4/exit_action.stf:12: expect port 32: pass (arrived in cycle 897)\n\
         programs/p4/exit_action.stf:15: expect port 32: pass (arrived in cycle 922)\n\
         programs/p4/exit_action.stf: 4 expectations, 4 passed, 0 failed; 0 unexpected packets\n"
    );
}

#[test]
fn digest_learn_sends_its_digests_and_check_digest_compares_them_in_order() {
    assert_eq!(
        passing_stf("digest_learn"),
        "programs/p4/digest_learn.stf:7: expect port 16: pass (arrived in cycle 824)\n\
         programs/p4/digest_learn.stf:10: expect port 16: pass (arrived in cycle 849)\n\
         programs/p4/digest_learn.stf:11: check_digest IngressDeparser.moved src_addr:0x0a090909 from_port:8 to_port:9: pass (sent in cycle 335)\n\
         programs/p4/digest_learn.stf:14: expect port 24: pass (arrived in cycle 1574)\n\
         programs/p4/digest_learn.stf:15: check_digest learn src_addr:0x0a080808 port:8: pass (sent in cycle 1060)\n\
         programs/p4/digest_learn.stf: 3 expectations, 3 passed, 0 failed; 0 unexpected packets; 2 checks, 2 passed, 0 failed\n"
    );
    let dir = std::env::temp_dir().join(format!("t2sim-p4-digest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/p4/digest_learn.stf"),
    )
    .unwrap();
    let f = dir.join("digest.stf");
    let shown = f.display().to_string();
    let stf = |text: &str| {
        std::fs::write(&f, text).unwrap();
        t2sim(&[
            "stf",
            "--p4",
            "programs/p4/digest_learn.p4",
            f.to_str().unwrap(),
        ])
    };
    // A wrong value fails with what was sent; a digest no check compares is a failure too.
    let o = stf(&text
        .replace("to_port:9", "to_port:10")
        .replace("check_digest learn src_addr:0x0a080808 port:8\n", ""));
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains(&format!(
        "{shown}:11: check_digest IngressDeparser.moved src_addr:0x0a090909 from_port:8 to_port:10: FAIL: got src_addr:0xa090909 from_port:0x8 to_port:0x9\n"
    )));
    assert!(out.contains(&format!(
        "{shown}: FAIL: unexpected digest in cycle 1060: IngressDeparser.learn src_addr:0xa080808 port:0x8\n"
    )));
    assert!(out.ends_with(
        "3 expectations, 3 passed, 0 failed; 0 unexpected packets; 1 checks, 0 passed, 1 failed; 1 unexpected digests\n"
    ));
    // A check of a digest that was not sent fails; an unknown digest or field is bad input.
    let o = stf(&format!("{text}check_digest learn src_addr:1 port:8\n"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains(&format!(
        "{shown}:16: check_digest learn src_addr:1 port:8: FAIL: no digest `IngressDeparser.learn` was sent\n"
    )));
    for (line, why) in [
        (
            "check_digest learnt src_addr:1 port:8",
            "no digest `learnt` in the P4 program (its digests: IngressDeparser.learn, IngressDeparser.moved)",
        ),
        (
            "check_digest learn src_addr:1",
            "`check_digest learn src_addr:1` does not give field `port` of digest `IngressDeparser.learn`",
        ),
        (
            "check_digest learn src_addr:1 port:8 vlan:3",
            "digest `IngressDeparser.learn` has no field `vlan`",
        ),
    ] {
        let o = stf(&format!("{text}{line}\n"));
        assert_eq!(o.status.code(), Some(2), "{line}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!("t2sim: error: {shown}:16: {why}\n")
        );
    }
    // `run --p4 --digests`: one row per digest, pipes in order within a cycle (every
    // sender's source is new to `sources`, so each of its packets sends `learn`).
    let csv = dir.join("digests.csv");
    let o = t2sim(&[
        "run",
        "--p4",
        "programs/p4/digest_learn.p4",
        "--duration-us",
        "1",
        "--digests",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).ends_with(&format!("wrote            {}\n", csv.display())));
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "cycle,chip,pipe,digest,values",
            "543,chip,0,IngressDeparser.learn,src_addr=167772161;port=10",
            "543,chip,1,IngressDeparser.learn,src_addr=167772162;port=136",
        ]
    );
    assert_eq!(lines.len(), 25);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn value_set_tags_parses_the_tags_its_value_set_names() {
    assert_eq!(
        passing_stf("value_set_tags"),
        "programs/p4/value_set_tags.stf:7: expect port 24: pass (arrived in cycle 804)\n\
         programs/p4/value_set_tags.stf:9: expect port 24: pass (arrived in cycle 830)\n\
         programs/p4/value_set_tags.stf:14: expect port 16: pass (arrived in cycle 881)\n\
         programs/p4/value_set_tags.stf: 3 expectations, 3 passed, 0 failed; 0 unexpected packets\n"
    );
    let o = t2sim(&["report", "--p4", "programs/p4/value_set_tags.p4"]);
    assert!(stdout(&o).contains("parser           4 states; TCAM rows 11/256;"));
    let dir = std::env::temp_dir().join(format!("t2sim-p4-vs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("vs.stf");
    let shown = f.display().to_string();
    for (text, why) in [
        (
            "value_set_add tag_types 1\nvalue_set_add tag_types 2\nvalue_set_add tag_types 3\nvalue_set_add tag_types 4\nvalue_set_add tag_types 5\n",
            "5: value set `IngressParser.tag_types` is full: its 4 parser TCAM rows are reserved when the program loads, and each holds one value",
        ),
        (
            "value_set_add tags 1\n",
            "1: no value set `tags` in the P4 program (its value sets: IngressParser.tag_types)",
        ),
        (
            "value_set_add tag_types 0x10000\n",
            "1: `0x10000` does not fit in 16 bits",
        ),
        (
            "packet 8 00\nvalue_set_add tag_types 1\n",
            "2: `value_set_add` after the first packet is not supported: the model's parser graph is fixed once the chip runs (add a value set's values before the first packet)",
        ),
    ] {
        std::fs::write(&f, text).unwrap();
        let o = t2sim(&["stf", "--p4", "programs/p4/value_set_tags.p4", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!("t2sim: error: {shown}:{why}\n")
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn qinq_loop_unrolls_its_parser_loop_and_runs_as_qinq_stack() {
    let o = t2sim(&["report", "--p4", "programs/p4/qinq_loop.p4"]);
    assert!(stdout(&o).contains("parser           4 states; TCAM rows 10/256;"));
    assert_eq!(
        passing_stf("qinq_loop"),
        "programs/p4/qinq_loop.stf:4: expect port 16: pass (arrived in cycle 805)\n\
         programs/p4/qinq_loop.stf: 1 expectations, 1 passed, 0 failed; 0 unexpected packets\n"
    );
}

#[test]
fn resubmit_pick_runs_its_packets_through_a_second_ingress_pass() {
    let o = t2sim(&[
        "report",
        "--p4",
        "programs/p4/resubmit_pick.p4",
        "--require-fit",
    ]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[4],
        "    0     M/M       1     0     0     0     3     0     1     5     0    10     2     3     0  ingress_if0 pick tbl_send"
    );
    assert_eq!(lines[5], "    1     a/a       0     0     0     0     0     0     0     0     0     0     0     0     0");
    let o = t2sim(&[
        "stf",
        "--p4",
        "programs/p4/resubmit_pick.p4",
        "programs/p4/resubmit_pick.stf",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    // Two ingress passes of 189 cycles each (the report's ingress latency): the same frame
    // through exit_early's one pass of 231 cycles leaves in cycle 845, 148 cycles sooner.
    assert_eq!(
        stdout(&o),
        "programs/p4/resubmit_pick.stf:5: expect port 16: pass (arrived in cycle 993)\n\
         programs/p4/resubmit_pick.stf:7: expect port 24: pass (arrived in cycle 1018)\n\
         programs/p4/resubmit_pick.stf: 2 expectations, 2 passed, 0 failed; 0 unexpected packets\n"
    );
}

#[test]
fn a_scenarios_control_names_a_p4_programs_tables_as_bfrt_does() {
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = std::env::temp_dir().join(format!("t2sim-p4-control-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |program: &str, table: &str, action: &str| {
        let text = format!(
            "name = \"p4-control\"\nseed = 1\nduration_us = 10\ndrain_us = 50\nprogram = \"{root}/{program}\"\n\
             [topology]\nkind = \"single_chip\"\nhosts = 9\nlink_gbps = 100\nlink_delay_ns = 500\n\
             queue_limit_cells = 400\n[transport]\ncongestion = \"fixed\"\nmss = 1000\n\
             window_bytes = 32000\nrto_us = 20\n[workload.incast]\ndegree = 8\nsize_bytes = 64000\n\
             period_us = 20\nfirst_us = 1\n\
             [[control]]\nat_ns = 3000\nop = \"modify_entry\"\ntable = \"{table}\"\nkey = [167772161]\n\
             action = \"{action}\"\n"
        );
        let f = dir.join("s.toml");
        std::fs::write(&f, text).unwrap();
        t2sim(&["run", "--scenario", f.to_str().unwrap()])
    };
    // The route to host 0, the incast's receiver, is changed to drop at 3 us.
    let json = run("programs/dctcp_switch.json", "ipv4_host", "drop_no_route");
    let p4 = run(
        "src/schemes/dctcp/dctcp.p4",
        "pipe.Ingress.ipv4_host",
        "Ingress.drop_no_route",
    );
    assert!(json.status.success() && p4.status.success(), "{p4:?}");
    assert_eq!(stdout(&json), stdout(&p4));
    assert!(!stdout(&p4).contains("flows            2 completed of 8"));
    // An unknown name is an error naming the key, the name and what the program has.
    let o = run(
        "src/schemes/dctcp/dctcp.p4",
        "Ingress.ipv4_hosts",
        "drop_no_route",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.ends_with(
            "control[0].table: no table `Ingress.ipv4_hosts` in the P4 program (its tables: \
             Ingress.not_ipv4, Ingress.ttl_expired, Ingress.ipv4_host, Egress.ecn_mark)\n"
        ),
        "{err}"
    );
    let o = run("src/schemes/dctcp/dctcp.p4", "ipv4_host", "Ingress.drop");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.ends_with(
            "control[0].action: table `Ingress.ipv4_host` has no action `Ingress.drop` (its \
             actions: forward, drop_no_route)\n"
        ),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn qinq_stack_matches_both_unrolled_tags_in_one_exact_table() {
    let o = t2sim(&[
        "report",
        "--p4",
        "programs/p4/qinq_stack.p4",
        "--require-fit",
    ]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[4],
        "    0     M/M       2     0     0     0     3     0     1     5     0    20     2     3     0  ingress_if0 vlan_pair tbl_no_route"
    );
    assert!(text.contains(
        "vlan_pair        ingress  exact        0     4096   24     38/3        2      2      0     0     0       0       0\n"
    ));
    assert!(text.contains(
        "  header vlan_1              4 B  16-bit #19 bytes 0..2, 16-bit #20 bytes 2..4; valid 8-bit #8 bit 1\n"
    ));
    assert_eq!(
        passing_stf("qinq_stack"),
        "programs/p4/qinq_stack.stf:4: expect port 16: pass (arrived in cycle 805)\n\
         programs/p4/qinq_stack.stf: 1 expectations, 1 passed, 0 failed; 0 unexpected packets\n"
    );
}

/// A scratch folder of this test process, removed by the caller.
fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("t2sim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn an_error_in_an_included_file_names_that_file() {
    let dir = scratch("p4-include-error");
    std::fs::write(dir.join("inc.p4"), "header h_t { bit<8> a }\n").unwrap();
    std::fs::write(
        dir.join("c.p4"),
        "#include <t2na.p4>\n#include \"inc.p4\"\n",
    )
    .unwrap();
    let o = t2sim(&["report", "--p4", dir.join("c.p4").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let inc = dir.join("inc.p4");
    assert!(
        err.starts_with(&format!(
            "t2sim: error: {}:1:23: syntax error",
            inc.display()
        )),
        "{err}"
    );
    // A name declared again after an architecture file declared it: an error at the second
    // declaration naming the first's file (it used to panic on a missing file id).
    std::fs::write(
        dir.join("twice.p4"),
        "#include <t2na.p4>\ntypedef bit<9> PortId_t;\n",
    )
    .unwrap();
    let o = t2sim(&["report", "--p4", dir.join("twice.p4").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains(&format!(
            "{}:2:1: `PortId_t` is declared twice (first at ",
            dir.join("twice.p4").display()
        )) && err.contains("t2na.p4:"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_stf_test_that_names_no_port_is_bad_input_not_a_pass() {
    let dir = scratch("stf-no-port");
    let f = dir.join("t.stf");
    for text in ["", "wait\n", "setdefault ipv4_host forward(port:16)\n"] {
        std::fs::write(&f, text).unwrap();
        let o = t2sim(&[
            "stf",
            "--p4",
            "programs/p4/l3_forward.p4",
            f.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{text:?}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "t2sim: error: {}: the test names no port (no `packet`, `expect` or \
                 `mirroring_add`): there is nothing to run\n",
                f.display()
            ),
            "{text:?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_p4_file_named_like_an_option_is_a_file_to_the_preprocessor() {
    let dir = scratch("p4-dash-name");
    std::fs::write(dir.join("-oout.p4"), "#include <t2na.p4>\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(["report", "--p4=-oout.p4"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "t2sim: error: -oout.p4:1:1: no `main` package instance (a T2NA program ends with \
         `Switch(pipe) main;`)\n"
    );
    assert!(!dir.join("out.p4").exists(), "cpp took the name for -o");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn stf_lines_the_chip_cannot_mean_are_bad_input_at_their_line() {
    let dir = scratch("stf-hostile");
    let f = dir.join("t.stf");
    let big = format!("packet 8 {}\n", "00".repeat(9213));
    for (program, text, why) in [
        (
            "mac_rewrite",
            big.as_str(),
            "1: a packet of 9213 bytes: a port takes frames of at most 9212 bytes (jumbo \
             frames, FCS excluded)",
        ),
        (
            "mac_rewrite",
            "packet 8 0a$\n",
            "1: `$` ends an `expect` (an exact length), not a packet",
        ),
        (
            "acl_lpm",
            "add acl 18446744073709551616 hdr.ipv4.src_addr:0x0a0909** \
             hdr.udp.dst_port:0x0016 Ingress.NoAction()\npacket 8 00\n",
            "1: priority 18446744073709551616 is over 2^32 - 1",
        ),
        (
            "acl_lpm",
            "add Ingress.routes hdr.ipv4.dst_addr:0x0a000000/33 Ingress.forward(port:16)\n",
            "1: key `hdr.ipv4.dst_addr`: prefix length `33` of a 32-bit key (0 to 32)",
        ),
        // A table of `const entries` takes no add (an add into this full one was lost
        // silently; hostile_entries.rs has a full table that takes adds).
        (
            "mac_rewrite",
            "packet 8 020000000002020000000009\n\
             add hops hdr.ethernet.dst_addr:0x020000000009 next_hop(smac:1, dmac:2, port:16)\n\
             packet 8 020000000009020000000009\n",
            "2: table `Ingress.hops` has `const entries`: the program fixes its entries, so \
             the control plane adds none (P4 makes such a table immutable)",
        ),
    ] {
        std::fs::write(&f, text).unwrap();
        let p4 = format!("programs/p4/{program}.p4");
        let o = t2sim(&["stf", "--p4", &p4, f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{why}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!("t2sim: error: {}:{why}\n", f.display())
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_stage_number_past_32_bits_is_an_error_not_a_wrapped_stage() {
    let dir = scratch("p4-stage");
    let text = std::fs::read_to_string("programs/p4/mac_rewrite.p4")
        .unwrap()
        .replace("#include \"include/", "#include \"")
        .replacen(
            "    table guard {",
            "    @stage(4294967298) table guard {",
            1,
        );
    for inc in ["headers.p4", "no_egress.p4"] {
        std::fs::copy(format!("programs/p4/include/{inc}"), dir.join(inc)).unwrap();
    }
    let f = dir.join("stage.p4");
    std::fs::write(&f, text).unwrap();
    let o = t2sim(&["report", "--p4", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "t2sim: error: {}:56:5: @stage(4294967298): not a stage number\n",
            f.display()
        )
    );
    std::fs::remove_dir_all(&dir).ok();
}
