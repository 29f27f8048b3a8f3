//! `t2sim report` as a user runs it: the shipped programs, a program that does not fit,
//! malformed files, and a parameter file.

use std::process::Command;

fn t2sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_t2sim"))
        .args(args)
        .output()
        .expect("t2sim runs")
}

fn programs_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs")
}

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("t2sim-cli-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, contents).unwrap();
    file
}

#[test]
fn report_on_each_shipped_program_fits_with_the_expected_latency() {
    // (file, ingress MAU cycles, egress MAU cycles)
    for (file, ingress, egress) in [
        ("l3_forward.json", 25 + 19 * 2, 23 + 19 * 2),
        ("ecn_marking.json", 23 + 19 * 2, 23 + 19 * 2),
        ("flow_counter.json", 23 + 27 + 23 + 17 * 2, 23 + 19 * 2),
        ("vlan_switch.json", 23 + 19 * 2, 23 + 19 * 2),
        // The gateway on `vlan.$valid` and the push / pop tables it guards share stage 0.
        ("vlan_tagging.json", 23 + 19 * 2, 23 + 19 * 2),
        // The selector on `ipv4_host` adds 8 to stage 0.
        ("ecmp_switch.json", 23 + 8 + 19 * 2, 23 + 19 * 2),
        // Route, queue index, shared array (stateful), gateway; ghost shares ingress's.
        (
            "ghost_occupancy.json",
            23 + 23 + 27 + 23 + 16 * 2,
            23 + 19 * 2,
        ),
    ] {
        let path = programs_dir().join(file);
        let path = path.to_str().unwrap();
        let text = t2sim(&["report", "--program", path, "--require-fit"]);
        assert!(text.status.success(), "{file}: {:?}", text);
        let out = String::from_utf8(text.stdout).unwrap();
        assert!(out.contains("verdict          fits"), "{out}");
        assert!(
            out.contains(&format!("latency ingress  MAU {ingress} cycles")),
            "{out}"
        );
        let json = t2sim(&["report", "--program", path, "--json"]);
        assert!(json.status.success());
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(v["fits"], true);
        assert_eq!(v["latency"][0]["mau_cycles"], ingress);
        assert_eq!(v["latency"][1]["mau_cycles"], egress);
        // Parser 64 + MAU + deparser 64 at 1.5 GHz.
        assert_eq!(v["latency"][0]["total_cycles"], 128 + ingress);
        assert_eq!(v["stages"].as_array().unwrap().len(), 20);
    }
    let json = t2sim(&[
        "report",
        "--program",
        programs_dir().join("flow_counter.json").to_str().unwrap(),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let cycles: Vec<u64> = v["latency"][0]["stage_cycles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(&cycles[..4], &[23, 27, 23, 2]);
    assert_eq!(
        v["latency"][0]["critical_path"],
        serde_json::json!(["flow_index@0", "flow_count@1", "ingress_if1@2"])
    );
    assert_eq!(
        v["stages"][1]["resources"][0]["used"], 17,
        "16 data RAMs + 1 spare"
    );
    assert_eq!(v["stages"][1]["ingress_dependency"], "match");
}

#[test]
fn report_require_fit_fails_with_the_resource_named() {
    let mut p = t2_pipeline::examples::flow_counter();
    p.registers[0].size = 100_000;
    let file = temp_file("too_big.json", &p.to_json());
    let plain = t2sim(&["report", "--program", file.to_str().unwrap()]);
    assert_eq!(plain.status.code(), Some(0), "a report is still a report");
    let out = String::from_utf8(plain.stdout).unwrap();
    assert!(
        out.contains("DOES NOT FIT: `flow_count` does not fit: register_array_rams needs 25 of 23"),
        "{out}"
    );
    let strict = t2sim(&[
        "report",
        "--program",
        file.to_str().unwrap(),
        "--require-fit",
    ]);
    assert_eq!(strict.status.code(), Some(1));
    let json = t2sim(&["report", "--program", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["fits"], false);
    assert_eq!(v["failure"]["resource"], "register_array_rams");
    assert_eq!(v["failure"]["unit"], "flow_count");
}

#[test]
fn report_names_the_parser_state_over_a_parser_limit() {
    use t2_pipeline::ir::{HeaderType, ParserState};
    // A 44-byte header of 32-bit fields in one state: 22 extractors + 1 for its valid bit.
    let mut p = t2_pipeline::examples::vlan_switch();
    let names: Vec<String> = (0..11).map(|i| format!("w{i}")).collect();
    let fields: Vec<(&str, u16)> = names.iter().map(|n| (n.as_str(), 32)).collect();
    p.headers.push(HeaderType::new("big", &fields));
    let states = &mut p.parser.as_mut().unwrap().states;
    states[3] = ParserState::new("parse_udp")
        .extract("udp")
        .goto("parse_big");
    states.push(ParserState::new("parse_big").extract("big"));
    let file = temp_file("big_header.json", &p.to_json());
    let file = file.to_str().unwrap();
    let out = t2sim(&["report", "--program", file, "--require-fit"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("DOES NOT FIT: `parse_big` does not fit: parser_extractors needs 23 of 20"),
        "{text}"
    );
    assert!(
        text.contains("  parse_big                   1          23  big\n"),
        "{text}"
    );
    let json = t2sim(&["report", "--program", file, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["failure"]["resource"], "parser_extractors");
    assert_eq!(v["parser"]["worst_state"], "parse_big");
    assert_eq!(v["parser"]["tcam_rows"]["used"], 10);
    // A parser error is a malformed program: exit 2 naming the program and the state.
    p.parser.as_mut().unwrap().states[4] =
        ParserState::new("parse_big").extract("big").goto("start");
    let file = temp_file("loop.json", &p.to_json());
    let out = t2sim(&["report", "--program", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("vlan_switch: parser.states[4] (parse_big): goes back to state `start`"),
        "{err}"
    );
}

#[test]
fn report_on_a_malformed_or_missing_file_exits_2_naming_it() {
    let bad_json = temp_file("bad.json", "{\"name\": \"x\", \"tables\": 7}");
    let mut p = t2_pipeline::examples::l3_forward();
    p.tables[2].keys[0] = "ipv4.nope".into();
    let bad_field = temp_file("bad_field.json", &p.to_json());
    let missing = std::env::temp_dir().join("t2sim-no-such-program.json");
    for (file, problem) in [
        (bad_json, "invalid type"),
        (
            bad_field,
            "tables[2] (ipv4_host).keys: unknown field `ipv4.nope`",
        ),
        (missing, "No such file"),
    ] {
        let out = t2sim(&["report", "--program", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(file.to_str().unwrap()), "{err}");
        assert!(err.contains(problem), "{err}");
    }
}

#[test]
fn report_follows_a_parameter_file() {
    let p = t2sim(&["params"]);
    let mut v: serde_json::Value = serde_json::from_slice(&p.stdout).unwrap();
    // Tofino2M: 12 stages; and a slower SALU for the sake of the test.
    v["pipeline"]["stages"] = 12.into();
    v["pipeline"]["stage_latency"]["stateful"] = 5.into();
    let file = temp_file("p12.json", &v.to_string());
    let out = t2sim(&[
        "report",
        "--program",
        programs_dir().join("flow_counter.json").to_str().unwrap(),
        "--params",
        file.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{out:?}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["stages"].as_array().unwrap().len(), 12);
    assert_eq!(r["latency"][0]["mau_cycles"], 23 + 28 + 23 + 9 * 2);
}

#[test]
fn help_lists_the_report_command() {
    let h = t2sim(&["--help"]);
    let text = String::from_utf8(h.stdout).unwrap();
    assert!(text.contains("report"), "{text}");
    let r = t2sim(&["report", "--help"]);
    let text = String::from_utf8(r.stdout).unwrap();
    for flag in ["--program", "--json", "--require-fit", "--params"] {
        assert!(text.contains(flag), "{text}");
    }
}

#[test]
fn report_gives_packet_rate_recirculation_and_queue_headroom() {
    // A pipe takes 1.5 G packets/s; its ports offer 3.2 Tb/s; 12% of that recirculates.
    // Line rate needs 3.2e12 / (8 x 1.5e9) = 266.7 -> 267 wire bytes, a 247 B frame.
    let path = programs_dir().join("l3_forward.json");
    let path = path.to_str().unwrap();
    let out = String::from_utf8(t2sim(&["report", "--program", path]).stdout).unwrap();
    assert!(
        out.contains("line rate on every port needs frames of 247 B or more"),
        "{out}"
    );
    // 64 B: 3.2e12 / 672 = 4761.9 Mpkt/s offered, 317.5% of the slots, 31.5% forwarded.
    assert!(
        out.contains(
            "       64          4761.9         317.5         31.5                     0.0"
        ),
        "{out}"
    );
    // 256 B: 96.6% of the slots; the 3.4% left lets 3.5% of packets recirculate once.
    assert!(
        out.contains(
            "      256          1449.3          96.6        100.0                     3.5"
        ),
        "{out}"
    );
    // l3_forward's `classify` entries use queues up to 2.
    assert!(
        out.contains("highest queue id 2 (from the entries of table `classify`): needs 3 queues"),
        "{out}"
    );
    let json = t2sim(&["report", "--program", path, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let h = &v["headroom"];
    assert_eq!(h["pipe_packets_per_second"], 1_500_000_000u64);
    assert_eq!(h["front_panel_bps_per_pipe"], 3_200_000_000_000u64);
    assert_eq!(h["recirculation_bps_per_pipe"], 384_000_000_000u64);
    assert_eq!(h["line_rate_min_frame_bytes"], 247);
    // From 512 B up the recirculation bandwidth (12%) binds, not the slots.
    assert_eq!(h["rates"][3]["frame_bytes"], 512);
    assert_eq!(h["rates"][3]["recirculate_once_percent"], 12.0);
    assert_eq!(h["recirculating_tables"], serde_json::json!([]));
    assert_eq!(h["qid"]["highest"], 2);
    // 50G, 100G, 200G, 400G ports: 16, 32, 64, 128 queues.
    let queues: Vec<u64> = h["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["max_queues"].as_u64().unwrap())
        .collect();
    assert_eq!(queues, vec![16, 32, 64, 128]);
}

#[test]
fn headroom_names_recirculating_tables_and_follows_the_clock() {
    // A program whose ingress recirculates and sets a queue id from a field, on a chip
    // clocked at 1 GHz: line rate then needs 3.2e12 / 8e9 = 400 wire bytes (a 380 B frame).
    let mut p: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(programs_dir().join("dctcp_switch.json")).unwrap(),
    )
    .unwrap();
    p["metadata"] = serde_json::json!([{"name": "meta.q", "bits": 5}]);
    p["actions"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "name": "loop_back",
            "params": [],
            "primitives": [
                {"op": "recirculate"},
                {"op": "set_qid", "qid": {"field": "meta.q"}}
            ]
        }));
    p["tables"].as_array_mut().unwrap().push(serde_json::json!({
        "name": "again",
        "kind": "exact",
        "keys": [],
        "size": 0,
        "actions": ["loop_back"],
        "default_action": {"action": "loop_back", "args": []}
    }));
    p["ingress"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"apply": "again"}));
    let program = temp_file("recirc.json", &p.to_string());
    let mut params: serde_json::Value = serde_json::from_slice(&t2sim(&["params"]).stdout).unwrap();
    params["clock_hz"] = 1_000_000_000u64.into();
    let params = temp_file("1ghz.json", &params.to_string());
    let out = t2sim(&[
        "report",
        "--program",
        program.to_str().unwrap(),
        "--params",
        params.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.contains("1000 Mpkt/s of ingress slots (one per cycle) against 3200 Gb/s of ports; line rate on every port needs frames of 380 B or more"),
        "{out}"
    );
    assert!(
        out.contains("tables that recirculate: again (ingress)"),
        "{out}"
    );
    // A 5-bit field can name queue 31: 32 queues, too many for a 50G port's 16.
    assert!(
        out.contains("highest queue id 31 (from the width of a field, in action `loop_back`): needs 32 queues per port; a port's most by speed: 50G 16 (too few), 100G 32, 200G 64, 400G 128"),
        "{out}"
    );
}
