//! Packet captures: pcapng files of ports and links with exact time stamps that Wireshark's
//! tools read, and replays of captures into a port.

use pcap_file::pcapng::{Block, PcapNgReader};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;
use t2_clock::{Clock, Cycle};
use t2_pipeline::headers::MacAddr;
use t2_testbench::{Host, Network, Stepping, UdpFlow};
use t2sim::capture::{
    cycle_to_ns_round, read_capture, CaptureSpec, PcapRequest, PortRef, ReplayRequest, ReplayTiming,
};
use t2sim::scenario::IncastScenario;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t2sim-pcap-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A packet of a pcapng file: (interface, time stamp in ns, epb_flags, bytes).
type Packet = (u32, u64, Option<u32>, Vec<u8>);

/// Each packet of a pcapng file.
fn packets(path: &Path) -> Vec<Packet> {
    let file = std::fs::File::open(path).unwrap();
    let mut r = PcapNgReader::new(file).unwrap();
    let mut out = Vec::new();
    while let Some(b) = r.next_block() {
        if let Block::EnhancedPacket(p) = b.unwrap() {
            let flags = p.options.iter().find_map(|o| match o {
                pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption::Flags(f) => {
                    Some(*f)
                }
                _ => None,
            });
            out.push((
                p.interface_id,
                p.timestamp.as_nanos() as u64,
                flags,
                p.data.to_vec(),
            ));
        }
    }
    out
}

fn one_packet(dir: &Path, specs: &str) -> IncastScenario {
    IncastScenario {
        senders: 1,
        frame_bytes: 1480,
        load_percent: 1,
        duration_cycles: 3_000,
        pcap: Some(PcapRequest {
            specs: CaptureSpec::parse_list(specs).unwrap(),
            dir: dir.to_path_buf(),
        }),
        ..IncastScenario::default()
    }
}

#[test]
fn captures_have_exact_times_directions_and_bytes() {
    let dir = temp_dir("exact");
    let s = one_packet(
        dir.as_path(),
        "sender0,chip:1,chip:0,receiver,link:chip:1,chip:d8",
    );
    let summary = s.run().unwrap();
    let mut b = s.build().unwrap();
    b.net.run_until(s.duration_cycles);
    let rx = b.net.node::<Host>(b.receiver).received().to_vec();
    assert_eq!(rx.len(), 1);
    let (sent, received) = (rx[0].sent_at, rx[0].received_at);
    let hz = s.params.clock_hz;
    let ns = |c: Cycle| cycle_to_ns_round(c, hz);
    // The sender's NIC sends it, the chip's port 1 receives it 100 ns (150 cycles) later; the
    // chip's port 0 sends it 150 cycles before the receiver gets it.
    let file = |name: &str| dir.join(name);
    let sender = packets(&file("sender0-0.pcapng"));
    let chip_in = packets(&file("chip-1.pcapng"));
    let chip_out = packets(&file("chip-0.pcapng"));
    let receiver = packets(&file("receiver-0.pcapng"));
    let link = packets(&file("link-chip-1.pcapng"));
    assert_eq!(sender.len(), 1);
    assert_eq!(
        (sender[0].0, sender[0].1, sender[0].2),
        (0, ns(sent), Some(2))
    );
    assert_eq!(
        (chip_in[0].0, chip_in[0].1, chip_in[0].2),
        (0, ns(sent + 150), Some(1))
    );
    assert_eq!(chip_out.len(), 1);
    assert_eq!(chip_out[0].1, ns(received - 150));
    assert_eq!(chip_out[0].2, Some(2));
    assert_eq!((receiver[0].1, receiver[0].2), (ns(received), Some(1)));
    // The link at chip port 1: what the chip sends on it is interface 0 (nothing here), what
    // the sender sends is interface 1, stamped when its last bit left the sender.
    assert_eq!(link.len(), 1);
    assert_eq!((link[0].0, link[0].1, link[0].2), (1, ns(sent), None));
    // The same bytes at both ends of the link (1480 B frame, FCS not captured); the chip
    // rewrites MACs and TTL on the way out.
    assert_eq!(sender[0].3, chip_in[0].3);
    assert_eq!(sender[0].3.len(), 1476);
    assert_eq!(chip_out[0].3, receiver[0].3);
    assert_ne!(chip_in[0].3, chip_out[0].3);
    // The run lists the files with their frame counts.
    let listed: Vec<(String, u64)> = summary
        .pcap_files
        .iter()
        .map(|f| {
            (
                f.path.file_name().unwrap().to_str().unwrap().to_string(),
                f.frames,
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("sender0-0.pcapng".to_string(), 1),
            ("chip-1.pcapng".into(), 1),
            ("chip-0.pcapng".into(), 1),
            ("receiver-0.pcapng".into(), 1),
            ("link-chip-1.pcapng".into(), 1),
            ("chip-d8.pcapng".into(), 1),
        ]
    );
    // Device port 8 is the chip's port 0 (the receiver's), as the waveforms name it.
    assert_eq!(
        std::fs::read(file("chip-d8.pcapng")).unwrap(),
        std::fs::read(file("chip-0.pcapng")).unwrap()
    );
    assert!(summary.to_string().contains(&format!(
        "pcap             1 frames in {}",
        file("chip-0.pcapng").display()
    )));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn captures_are_byte_identical_across_runs() {
    let (a, b) = (temp_dir("det-a"), temp_dir("det-b"));
    let run = |d: &Path| {
        IncastScenario {
            senders: 3,
            load_percent: 100,
            duration_cycles: 20_000,
            ..one_packet(d, "chip:0,link:sender1")
        }
        .run()
        .unwrap()
    };
    let (ra, _) = (run(&a), run(&b));
    // Stepping through every cycle captures the same frames at the same times.
    let c = temp_dir("det-c");
    IncastScenario {
        senders: 3,
        load_percent: 100,
        duration_cycles: 20_000,
        stepping: t2_testbench::Stepping::EveryCycle,
        ..one_packet(&c, "chip:0,link:sender1")
    }
    .run()
    .unwrap();
    for f in ["chip-0.pcapng", "link-sender1-0.pcapng"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(c.join(f)).unwrap(),
            "stepped {f}"
        );
    }
    std::fs::remove_dir_all(&c).unwrap();
    assert!(ra.pcap_files[0].frames > 10, "{:?}", ra.pcap_files);
    for f in ["chip-0.pcapng", "link-sender1-0.pcapng"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
    std::fs::remove_dir_all(&a).unwrap();
    std::fs::remove_dir_all(&b).unwrap();
}

/// Runs a Wireshark tool; `None` (with a message) outside CI when it is not installed.
fn wireshark_tool(tool: &str, args: &[&str]) -> Option<String> {
    match Command::new(tool).args(args).env("TZ", "UTC").output() {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{tool} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Some(String::from_utf8(out.stdout).unwrap())
        }
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!(
                "SKIPPED: {tool} (Wireshark) is not installed here ({e}); .ci/run installs it"
            );
            None
        }
        Err(e) => panic!("{tool} must be installed in CI: {e}"),
    }
}

#[test]
fn tshark_and_capinfos_read_the_captures_with_the_simulated_times() {
    let dir = temp_dir("tshark");
    let s = IncastScenario {
        senders: 2,
        load_percent: 100,
        duration_cycles: 6_000,
        ..one_packet(&dir, "chip:0,link:sender0")
    };
    s.run().unwrap();
    for name in ["chip-0.pcapng", "link-sender0-0.pcapng"] {
        let path = dir.join(name);
        let path_s = path.to_str().unwrap();
        let ours = packets(&path);
        assert!(ours.len() > 5, "{name}: {}", ours.len());
        let Some(fields) = wireshark_tool(
            "tshark",
            &[
                "-r",
                path_s,
                "-T",
                "fields",
                "-e",
                "frame.time_epoch",
                "-e",
                "frame.interface_id",
                "-e",
                "frame.len",
                "-e",
                "frame.packet_flags_direction",
            ],
        ) else {
            return;
        };
        // tshark's epoch times are the simulated nanoseconds exactly.
        let expected: String = ours
            .iter()
            .map(|(i, ns, flags, bytes)| {
                // Inbound and outbound, as Wireshark shows epb_flags; none on a link.
                let dir = flags.map_or(String::new(), |f| format!("{f:#010x}"));
                format!(
                    "{}.{:09}\t{i}\t{}\t{dir}\n",
                    ns / 1_000_000_000,
                    ns % 1_000_000_000,
                    bytes.len()
                )
            })
            .collect();
        assert_eq!(fields, expected, "{name}");
        let info = wireshark_tool("capinfos", &["-c", "-a", "-e", path_s]).unwrap();
        assert!(
            info.contains(&format!("Number of packets:   {}", ours.len())),
            "{info}"
        );
        let first = ours[0].1;
        assert!(
            info.contains(&format!(
                "First packet time:   1970-01-01 00:00:00.{first:09}\n"
            )),
            "{info}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

const G100: u64 = 100_000_000_000;

fn host(name: &str, i: u8, clock: Clock) -> Host {
    Host::new(
        name,
        MacAddr([2, 0, 0, 0, 0, i]),
        Ipv4Addr::new(10, 0, 0, i),
        clock,
        G100,
    )
}

/// Two hosts on one link; `a` sends `packets` frames to `b` at `rate_bps` if asked.
fn pair(packets: Option<(u64, u64)>) -> Network {
    let clock = Clock::tofino2();
    let mut net = Network::new(Stepping::Jump);
    let mut a = host("a", 1, clock);
    if let Some((n, rate_bps)) = packets {
        a.send(
            clock,
            UdpFlow {
                flow_id: 7,
                dst_ip: Ipv4Addr::new(10, 0, 0, 2),
                dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
                src_port: 1,
                dst_port: 2,
                frame_bytes: 700,
                rate_bps,
                start: 0,
                end: None,
                packets: Some(n),
            },
        )
        .unwrap();
    }
    let a = net.add(a);
    let b = net.add(host("b", 2, clock));
    net.link(a, 0, b, 0, 150).unwrap();
    net
}

#[test]
fn a_capture_replays_into_a_port_at_its_recorded_times_or_paced() {
    let dir = temp_dir("replay");
    let clock = Clock::tofino2();
    // Record what host a sends: 20 frames at 37 Gb/s.
    let mut net = pair(Some((20, 37_000_000_000)));
    let req = PcapRequest {
        specs: CaptureSpec::parse_list("a").unwrap(),
        dir: dir.clone(),
    };
    let cap = req.start(&mut net, clock).unwrap();
    net.run_until(100_000);
    let files = cap.finish(&mut net).unwrap();
    assert_eq!(files[0].frames, 20);
    let recorded = packets(&files[0].path);
    // Replay it into b's NIC on a network where a sends nothing, first frame at cycle 1000.
    let replay = |timing| {
        let mut net = pair(None);
        let r = ReplayRequest {
            file: files[0].path.clone(),
            node: "b".into(),
            port: PortRef::Index(0),
            timing,
            start: 1000,
        };
        assert_eq!(r.inject(&mut net, clock).unwrap(), 20);
        net.run_until(200_000);
        net.node::<Host>(t2_testbench::NodeId(1))
            .received()
            .iter()
            .map(|r| r.received_at)
            .collect::<Vec<Cycle>>()
    };
    // Recorded: 1000 + ceil((t_k - t_0) x 1.5 GHz), t in ns from the file.
    let expected: Vec<Cycle> = recorded
        .iter()
        .map(|p| 1000 + ((p.1 - recorded[0].1) * 3).div_ceil(2))
        .collect();
    assert_eq!(replay(ReplayTiming::Recorded), expected);
    // Paced at 50 Gb/s: 720 B on the wire each (700 + preamble and gap) = 172.8 cycles.
    let paced: Vec<Cycle> = (0..20u64).map(|k| 1000 + (k * 1728).div_ceil(10)).collect();
    assert_eq!(replay(ReplayTiming::Paced(50_000_000_000)), paced);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_captures_and_capture_points_get_clear_errors() {
    let dir = temp_dir("bad");
    let err_of = |bytes: &[u8]| {
        let p = dir.join("bad.pcap");
        std::fs::write(&p, bytes).unwrap();
        read_capture(&p).unwrap_err()
    };
    let shown = dir.join("bad.pcap").display().to_string();
    assert_eq!(
        err_of(b"hello world"),
        format!("{shown}: not a pcap or pcapng file (starts with 0x6c6c6568)")
    );
    assert_eq!(
        err_of(b"ab"),
        format!("{shown}: not a pcap or pcapng file (shorter than 4 bytes)")
    );
    // A real capture, then cut inside its second packet, and with no packets.
    let s = IncastScenario {
        senders: 2,
        load_percent: 100,
        ..one_packet(&dir, "chip:0")
    };
    s.run().unwrap();
    let good = std::fs::read(dir.join("chip-0.pcapng")).unwrap();
    assert!(read_capture(&dir.join("chip-0.pcapng")).unwrap().len() > 1);
    let first = packets(&dir.join("chip-0.pcapng"))[0].3.len();
    // Section header and interface description come first; cut 100 bytes into packet 2.
    let header = good.len() - packets(&dir.join("chip-0.pcapng")).len() * (first + 32 + 12);
    let cut = header + (first + 32 + 12) + 100;
    assert_eq!(
        err_of(&good[..cut]),
        format!("{shown}: the file ends inside packet 2 (truncated capture)")
    );
    assert_eq!(
        err_of(&good[..header]),
        format!("{shown}: holds no packets")
    );
    // A classic pcap of another link type (raw IP, 101).
    let mut raw = Vec::new();
    raw.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    raw.extend_from_slice(&2u16.to_le_bytes());
    raw.extend_from_slice(&4u16.to_le_bytes());
    raw.extend_from_slice(&[0; 8]);
    raw.extend_from_slice(&65535u32.to_le_bytes());
    raw.extend_from_slice(&101u32.to_le_bytes());
    let e = err_of(&raw);
    assert!(
        e.starts_with(&format!("{shown}: link type ")) && e.ends_with("Ethernet captures only"),
        "{e}"
    );
    // Through the command line: exit status 2 and the message.
    let t2sim = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_t2sim"))
            .args(args)
            .output()
            .unwrap()
    };
    let d = dir.to_str().unwrap();
    for (args, msg) in [
        (
            vec!["run", "--duration-us", "1", "--pcap", "nosuch:0", d],
            "t2sim: error: capture point `nosuch:0`: no node `nosuch` (the network has chip, receiver, sender0, sender1, sender2, sender3)".to_string(),
        ),
        (
            vec!["run", "--duration-us", "1", "--pcap", "receiver:3", d],
            "t2sim: error: capture point `receiver:3`: receiver has ports 0..0".into(),
        ),
        (
            vec!["run", "--duration-us", "1", "--pcap", "chip:d9", d],
            "t2sim: error: capture point `chip:d9`: chip has no device port 9 (it has d8, d10, d136, d264, d392)".into(),
        ),
        (
            vec!["run", "--duration-us", "1", "--pcap", "receiver:d8", d],
            "t2sim: error: capture point `receiver:d8`: receiver is not a chip: it has no device ports".into(),
        ),
        (
            vec!["run", "--duration-us", "1", "--pcap", "chip:x", d],
            "t2sim: error: --pcap: capture point `chip:x`: port `x` is not a port number (3) or device port (d8)".into(),
        ),
        (
            vec!["run", "--duration-us", "1", "--replay", &shown, "--replay-into", "chip:1"],
            format!("t2sim: error: {shown}: link type "),
        ),
    ] {
        let out = t2sim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with(&msg), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_scenario_file_captures_with_output_pcap() {
    let dir = temp_dir("scenario");
    let scenario = "seed = 1\nduration_us = 10\n[topology]\nkind = \"single_chip\"\nhosts = 2\n\
        [workload]\n[[workload.flows]]\nsrc = 0\ndst = 1\nsize_bytes = 3000\n[output]\n";
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        format!("{scenario}pcap = \"host0,link:switch0:1\"\npcap_dir = \"caps\"\n"),
    )
    .unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_t2sim"))
            .args(["run", "--scenario", file.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let out = run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let caps = dir.join("caps");
    // host0 sends the data (3 segments) and receives the acknowledgements; the link to
    // host1 carries the data one way and the acknowledgements the other.
    let host0 = packets(&caps.join("host0-0.pcapng"));
    let link = packets(&caps.join("link-switch0-1.pcapng"));
    let count = |p: &[Packet], pick: &dyn Fn(&Packet) -> bool| p.iter().filter(|x| pick(x)).count();
    assert!(count(&host0, &|p| p.2 == Some(2)) >= 3, "{host0:?}");
    assert!(count(&host0, &|p| p.2 == Some(1)) >= 1);
    assert!(count(&link, &|p| p.0 == 0) >= 3 && count(&link, &|p| p.0 == 1) >= 1);
    for (name, n) in [
        ("host0-0.pcapng", host0.len()),
        ("link-switch0-1.pcapng", link.len()),
    ] {
        let line = format!(
            "pcap             {n} frames in {}\n",
            caps.join(name).display()
        );
        assert!(stdout.contains(&line), "{stdout}");
    }
    // The same file writes the same captures.
    let first = std::fs::read(caps.join("host0-0.pcapng")).unwrap();
    assert!(run().status.success());
    assert_eq!(std::fs::read(caps.join("host0-0.pcapng")).unwrap(), first);
    // Errors name the key.
    let err_of = |output: &str| {
        std::fs::write(&file, format!("{scenario}{output}")).unwrap();
        let out = run();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8(out.stderr).unwrap()
    };
    let shown = file.display();
    assert_eq!(
        err_of("pcap = \"host0\"\n"),
        format!(
            "t2sim: error: {shown}: output.pcap: needs output.pcap_dir, output.dir or --out \
             (where the captures go)\n"
        )
    );
    assert!(err_of("pcap_dir = \"x\"\n").contains("output.pcap_dir: needs output.pcap"));
    assert_eq!(
        err_of("pcap = \"host9\"\ndir = \"r\"\n"),
        format!("t2sim: error: {shown}: capture point `host9:0`: no node `host9` (the network has switch0, host0, host1)\n")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
