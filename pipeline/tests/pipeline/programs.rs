//! The example programs end to end: JSON round trip, placement and its latency, and the
//! placed, cycle-stepped pipeline against the sequential interpreter.

use proptest::prelude::*;
use std::net::Ipv4Addr;
use std::sync::Arc;
use t2_pipeline::check::{check, Checked, Thread};
use t2_pipeline::examples;
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::headers::{
    build_tcp_frame, build_udp_frame, ipv4_header_checksum, with_vlan_tag, Endpoints, MacAddr,
};
use t2_pipeline::ir::Program;
use t2_pipeline::params::{PipelineParams, StageLatency};
use t2_pipeline::phv::Phv;
use t2_pipeline::place::{place, verify, Budget, Placed};
use t2_pipeline::stage::Dependency;
use t2_pipeline::Cells;
use t2_pipeline::{fields, layout, DropReason, Gress, PacketPool};

fn placed(p: &Program) -> (Arc<Checked>, Placed) {
    let c = check(p).unwrap_or_else(|e| panic!("{}: {e}", p.name));
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    verify(&c, &pl, &Budget::tofino2()).unwrap();
    (Arc::new(c), pl)
}

#[test]
fn examples_round_trip_through_json_and_match_the_shipped_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../programs");
    for (file, p) in examples::all() {
        check(&p).unwrap();
        let json = p.to_json();
        assert_eq!(Program::from_json(&json).unwrap(), p);
        let path = dir.join(file);
        if std::env::var_os("T2SIM_WRITE_PROGRAMS").is_some() {
            std::fs::write(&path, format!("{json}\n")).unwrap();
        }
        let shipped = std::fs::read_to_string(&path).unwrap();
        assert_eq!(Program::from_json(&shipped).unwrap(), p, "{file} is stale");
    }
}

#[test]
fn l3_forward_fits_in_stage_0_with_tcam_latency() {
    let (c, pl) = placed(&examples::l3_forward());
    assert_eq!(pl.active_stages(Thread::Ingress), vec![0]);
    let lat = StageLatency::default();
    let cycles = pl.ingress_timing.stage_cycles(&lat);
    // Stage 0 holds the ternary `classify`: 23 + 2; 19 action-dependent stages of 2.
    assert_eq!(cycles[0], 25);
    assert!(cycles[1..].iter().all(|&c| c == 2));
    assert_eq!(pl.ingress_timing.mau_cycles(&lat), 25 + 19 * 2);
    assert_eq!(pl.egress_timing.mau_cycles(&lat), 23 + 19 * 2);
    let classify = pl
        .units
        .iter()
        .find(|u| u.allocation.name == "classify")
        .unwrap();
    // 8 + 16 key bits: one 44-bit TCAM wide, 256 entries: one TCAM deep.
    assert_eq!(classify.allocation.tcams, 1);
    let host = pl
        .units
        .iter()
        .find(|u| u.allocation.name == "ipv4_host")
        .unwrap();
    // 32 key + 4 overhead + 1 action bit + 9 immediate bits = 46 bits: 2 per word, 2 RAMs.
    assert_eq!(host.allocation.entry_bits, 46);
    assert_eq!(host.allocation.entries_per_word, 2);
    assert_eq!(host.allocation.match_rams, 2);
    assert_eq!(c.tables.len(), 4);
}

#[test]
fn ecn_marking_is_one_egress_stage() {
    let (_, pl) = placed(&examples::ecn_marking());
    assert_eq!(pl.active_stages(Thread::Egress), vec![0]);
    let lat = StageLatency::default();
    assert_eq!(pl.egress_timing.mau_cycles(&lat), 23 + 19 * 2);
}

#[test]
fn flow_counter_chains_three_match_dependent_stages() {
    let (_, pl) = placed(&examples::flow_counter());
    assert_eq!(pl.active_stages(Thread::Ingress), vec![0, 1, 2]);
    let t = &pl.ingress_timing.stages;
    assert_eq!(t[1].dependency, Dependency::Match);
    assert!(t[1].stateful);
    assert_eq!(t[2].dependency, Dependency::Match);
    assert_eq!(t[3].dependency, Dependency::Action);
    let lat = StageLatency::default();
    let cycles = pl.ingress_timing.stage_cycles(&lat);
    // Stage 0: 23; stage 1 (match, SALU): 23 + 4; stage 2 (match): 23; then 17 x 2.
    assert_eq!(&cycles[..4], &[23, 27, 23, 2]);
    assert_eq!(pl.ingress_timing.mau_cycles(&lat), 23 + 27 + 23 + 17 * 2);
    let count = pl
        .units
        .iter()
        .find(|u| u.allocation.name == "flow_count")
        .unwrap();
    // 65536 x 32 b = 16 RAMs of 1024 x 128 b, plus a spare.
    assert_eq!(count.allocation.register_rams, 16);
    assert_eq!(pl.stage_usage[1].0[0], 17);
}

fn ep(src: u32, dst: u32, sport: u16, dport: u16) -> Endpoints {
    Endpoints {
        src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
        src_ip: Ipv4Addr::from(src),
        dst_ip: Ipv4Addr::from(dst),
        src_port: sport,
        dst_port: dport,
    }
}

/// A frame described by a few numbers, so proptest can shrink it.
#[derive(Clone, Debug)]
struct FrameSpec {
    kind: u8,
    src: u32,
    dst: u32,
    sport: u16,
    dport: u16,
    ttl: u8,
    tos: u8,
}

fn frame(s: &FrameSpec) -> Vec<u8> {
    let e = ep(s.src, s.dst, s.sport, s.dport);
    let mut out = Vec::new();
    match s.kind % 4 {
        0 | 1 => build_udp_frame(&mut out, &e, s.ttl, 7, &[0; 18], false, 60),
        2 => build_tcp_frame(&mut out, &e, s.ttl, 7, 1, 2, 0x10, 1000, &[0; 6], 60),
        _ => {
            // An ARP-like frame: not IPv4.
            build_udp_frame(&mut out, &e, s.ttl, 7, &[0; 18], false, 60);
            out[12] = 0x08;
            out[13] = 0x06;
        }
    }
    if s.kind % 4 != 3 {
        out[15] = s.tos;
        out[24] = 0;
        out[25] = 0;
        let c = ipv4_header_checksum(&out[14..34]);
        out[24..26].copy_from_slice(&c.to_be_bytes());
    }
    out
}

fn frame_spec() -> impl Strategy<Value = FrameSpec> {
    (
        any::<u8>(),
        prop_oneof![Just(0x0a00_0009u32), any::<u32>()],
        prop_oneof![1u32..=4, any::<u32>()].prop_map(|d| if d <= 4 { 0x0a00_0000 + d } else { d }),
        prop_oneof![Just(1u16), any::<u16>()],
        prop_oneof![Just(443u16), any::<u16>()],
        0u8..=3,
        any::<u8>(),
    )
        .prop_map(|(kind, src, dst, sport, dport, ttl, tos)| FrameSpec {
            kind,
            src,
            dst,
            sport,
            dport,
            ttl: if ttl == 3 { 64 } else { ttl },
            tos,
        })
}

/// What leaves a gress, as the chip sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Out {
    bytes: Vec<u8>,
    drop: Option<DropReason>,
    ucast_egress_port: Option<u16>,
    qid: u8,
}

fn interpret(
    c: &Arc<Checked>,
    gress: Gress,
    frames: &[(Vec<u8>, u16)],
) -> (Vec<Out>, Vec<Vec<u64>>) {
    let params = PipelineParams::default();
    let mut interp = Interpreter::new(Arc::clone(c));
    let thread = match gress {
        Gress::Ingress => Thread::Ingress,
        Gress::Egress => Thread::Egress,
    };
    let mut outs = Vec::new();
    for (bytes, port) in frames {
        let mut phv = Phv::new(&params.phv);
        let port_field = match gress {
            Gress::Ingress => layout::INGRESS_PORT,
            Gress::Egress => layout::EGRESS_PORT,
        };
        phv.set(port_field, *port as u32);
        phv.set(layout::PKT_LENGTH, bytes.len() as u32 + 4);
        let extent = match interp.parse_extent(bytes, &mut phv) {
            Ok(x) => x,
            Err(r) => {
                phv.set(layout::DROP_REASON, r as u32);
                Default::default()
            }
        };
        interp.run(thread, &mut phv);
        let drop = DropReason::from_code(phv.get(layout::DROP_REASON) as u8);
        let mut out = bytes.clone();
        if drop.is_none() {
            interp.deparse_to(&phv, &mut out, &extent);
        }
        outs.push(Out {
            bytes: out,
            drop,
            ucast_egress_port: (phv.get(layout::EGRESS_PORT_VALID) == 1)
                .then(|| phv.get(layout::UCAST_EGRESS_PORT) as u16),
            qid: phv.get(layout::QID) as u8,
        });
    }
    (
        outs,
        interp.state.registers.iter().map(Cells::to_vec).collect(),
    )
}

/// Drives the placed program through a `GressPipeline`, one cycle at a time, entering
/// frame `i` after `gaps[i]` idle cycles; the program compiled at placement, checked
/// against the same run through the reference interpreter and against a run in which each
/// packet passes all its stages at once (packets and registers).
fn pipelined(
    c: &Arc<Checked>,
    pl: &Placed,
    gress: Gress,
    frames: &[(Vec<u8>, u16)],
    gaps: &[u8],
) -> (Vec<Out>, Vec<Vec<u64>>) {
    let compiled = pipelined_as(c, pl, gress, frames, gaps, false, false);
    let reference = pipelined_as(c, pl, gress, frames, gaps, true, false);
    assert_eq!(compiled, reference, "compiled and reference runs differ");
    let batched = pipelined_as(c, pl, gress, frames, gaps, false, true);
    assert_eq!(compiled, batched, "stage by stage and whole passes differ");
    compiled
}

fn pipelined_as(
    c: &Arc<Checked>,
    pl: &Placed,
    gress: Gress,
    frames: &[(Vec<u8>, u16)],
    gaps: &[u8],
    reference: bool,
    batch: bool,
) -> (Vec<Out>, Vec<Vec<u64>>) {
    let params = PipelineParams::default();
    let thread = match gress {
        Gress::Ingress => Thread::Ingress,
        Gress::Egress => Thread::Egress,
    };
    let mut program = PlacedThread::new(Arc::clone(c), pl, thread);
    program.run_reference(reference);
    let mut g = program.pipeline(pl, &params);
    let mut pool = PacketPool::new();
    let handles: Vec<_> = frames.iter().map(|(b, _)| pool.alloc_from(b)).collect();
    let mut outs = vec![None; frames.len()];
    let mut next = 0;
    let mut wait = gaps.first().copied().unwrap_or(0);
    let mut now = 0;
    let mut done = 0;
    while done < frames.len() {
        if next < frames.len() {
            if wait == 0 {
                g.enter(now, handles[next], frames[next].1, &pool);
                next += 1;
                wait = gaps.get(next).copied().unwrap_or(0);
            } else {
                wait -= 1;
            }
        }
        if let Some(e) = g.tick_batching(now, &mut program, &mut pool, batch) {
            let i = handles.iter().position(|&h| h == e.pkt).unwrap();
            outs[i] = Some(Out {
                bytes: pool.bytes(e.pkt).to_vec(),
                drop: e.drop,
                ucast_egress_port: e.ucast_egress_port,
                qid: e.qid,
            });
            done += 1;
        }
        now += 1;
        assert!(now < 1_000_000, "the pipeline never drained");
    }
    (
        outs.into_iter().map(Option::unwrap).collect(),
        program.state.registers.iter().map(Cells::to_vec).collect(),
    )
}

#[test]
fn l3_forward_forwards_drops_and_classifies() {
    let (c, _) = placed(&examples::l3_forward());
    let spec = |dst, ttl, tos, dport, kind| FrameSpec {
        kind,
        src: 1,
        dst,
        sport: 1,
        dport,
        ttl,
        tos,
    };
    let frames: Vec<(Vec<u8>, u16)> = [
        spec(0x0a00_0002, 64, 46 << 2, 80, 0),
        spec(0x0a00_0003, 64, 0, 443, 2),
        spec(0x0a00_0009, 64, 0, 80, 0),
        spec(0x0a00_0001, 1, 0, 80, 0),
        spec(0x0a00_0001, 64, 0, 80, 3),
    ]
    .iter()
    .map(|s| (frame(s), 5))
    .collect();
    let (outs, _) = interpret(&c, Gress::Ingress, &frames);
    assert_eq!(outs[0].ucast_egress_port, Some(16));
    assert_eq!(outs[0].qid, 1);
    assert_eq!(outs[0].bytes[22], 63, "TTL lowered");
    assert_eq!(outs[1].ucast_egress_port, Some(24));
    assert_eq!(outs[1].qid, 2);
    assert_eq!(outs[2].drop, Some(DropReason::NoRoute));
    assert_eq!(outs[3].drop, Some(DropReason::TtlExpired));
    assert_eq!(outs[4].drop, Some(DropReason::NotIpv4));
}

#[test]
fn flow_counter_counts_per_flow() {
    let (c, pl) = placed(&examples::flow_counter());
    let a = frame(&FrameSpec {
        kind: 0,
        src: 1,
        dst: 2,
        sport: 3,
        dport: 4,
        ttl: 64,
        tos: 0,
    });
    let b = frame(&FrameSpec {
        kind: 0,
        src: 1,
        dst: 2,
        sport: 3,
        dport: 5,
        ttl: 64,
        tos: 0,
    });
    let frames = vec![(a.clone(), 1), (b, 1), (a, 1)];
    let (_, regs) = interpret(&c, Gress::Ingress, &frames);
    let mut counts: Vec<u64> = regs[0].iter().copied().filter(|&v| v > 0).collect();
    counts.sort_unstable();
    assert_eq!(counts, vec![1, 2]);
    // Back to back in the pipeline gives the same registers.
    let (_, regs2) = pipelined(&c, &pl, Gress::Ingress, &frames, &[0, 0, 0]);
    assert_eq!(regs, regs2);
}

#[test]
fn ecn_marks_only_above_the_threshold_and_only_ect_packets() {
    let (c, pl) = placed(&examples::ecn_marking());
    let enq = fields::builtin("eg_intr_md.enq_qdepth").unwrap().field;
    let mut interp = Interpreter::new(Arc::clone(&c));
    let mut run = |depth: u32, ecn: u32| {
        let mut phv = Phv::new(&PipelineParams::default().phv);
        phv.set(layout::VALID_IPV4, 1);
        phv.set(layout::IPV4_ECN, ecn);
        phv.set(enq, depth);
        let mut placed_phv = phv.clone();
        interp.run(Thread::Egress, &mut phv);
        let mut prog = PlacedThread::new(Arc::clone(&c), &pl, Thread::Egress);
        for s in 0..20 {
            t2_pipeline::StageProgram::apply(&mut prog, s, &mut placed_phv);
        }
        assert_eq!(phv, placed_phv);
        phv.get(layout::IPV4_ECN)
    };
    let k = examples::ECN_THRESHOLD_CELLS as u32;
    assert_eq!(run(k - 1, 1), 1);
    assert_eq!(run(k, 1), 3);
    assert_eq!(run(k + 500, 2), 3);
    assert_eq!(run(k + 500, 0), 0, "not ECN-capable");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn placed_pipeline_equals_interpreter(
        which in 0usize..3,
        frames in prop::collection::vec((frame_spec(), 0u16..512), 1..24),
        gaps in prop::collection::vec(0u8..4, 24),
    ) {
        let (_, program) = examples::all().swap_remove(which);
        let (c, pl) = placed(&program);
        let gress = if which == 1 { Gress::Egress } else { Gress::Ingress };
        let frames: Vec<(Vec<u8>, u16)> =
            frames.iter().map(|(s, port)| (frame(s), *port)).collect();
        let a = interpret(&c, gress, &frames);
        let b = pipelined(&c, &pl, gress, &frames, &gaps);
        prop_assert_eq!(a, b);
    }

    #[test]
    fn placed_stages_equal_interpreter_on_phvs(
        which in 0usize..3,
        values in prop::collection::vec(any::<u32>(), 16),
        runs in 1usize..6,
    ) {
        let (_, program) = examples::all().swap_remove(which);
        let (c, pl) = placed(&program);
        let thread = if which == 1 { Thread::Egress } else { Thread::Ingress };
        let mut interp = Interpreter::new(Arc::clone(&c));
        let mut prog = PlacedThread::new(Arc::clone(&c), &pl, thread);
        let names = [
            "ipv4.$valid", "ipv4.ttl", "ipv4.dst_addr", "ipv4.diffserv", "l4.dst_port",
            "eg_intr_md.enq_qdepth", "ipv4.src_addr", "l4.src_port",
        ];
        for r in 0..runs {
            let mut phv = Phv::new(&PipelineParams::default().phv);
            for (k, n) in names.iter().enumerate() {
                let f = fields::builtin(n).unwrap().field;
                let v = values[(k + r) % values.len()];
                // Bias towards interesting values: valid bits, known routes, low TTLs.
                let v = match *n {
                    "ipv4.dst_addr" if v % 2 == 0 => 0x0a00_0001 + v % 3,
                    "ipv4.$valid" => (v % 4 != 0) as u32,
                    "eg_intr_md.enq_qdepth" => v % 2000,
                    _ => v,
                };
                phv.set(f, v);
            }
            let mut other = phv.clone();
            interp.run(thread, &mut phv);
            for s in 0..20 {
                t2_pipeline::StageProgram::apply(&mut prog, s, &mut other);
            }
            prop_assert_eq!(&phv, &other);
        }
        prop_assert_eq!(&interp.state, &prog.state);
    }
}

/// `frame` with an 802.1Q tag (priority `pcp`, VLAN `vid`); `qinq` adds a second tag (VLAN
/// 7) inside it.
fn tagged(frame: &[u8], pcp: u8, vid: u16, qinq: bool) -> Vec<u8> {
    let inner = if qinq {
        with_vlan_tag(frame, 0, 7)
    } else {
        frame.to_vec()
    };
    with_vlan_tag(&inner, pcp, vid)
}

/// The custom parser graph of `vlan_switch`: tagged frames are bridged by VLAN id with the
/// tag rewritten in place, untagged ones routed, double tags rejected by the parser, a
/// truncated header a parser error.
#[test]
fn vlan_switch_parses_a_custom_header_and_writes_it_back_in_place() {
    let (c, _) = placed(&examples::vlan_switch());
    let udp = frame(&FrameSpec {
        kind: 0,
        src: 1,
        dst: 0x0a00_0002,
        sport: 1,
        dport: 2,
        ttl: 64,
        tos: 0,
    });
    let frames: Vec<(Vec<u8>, u16)> = vec![
        (tagged(&udp, 1, 10, false), 8),
        (tagged(&udp, 3, 30, false), 8),
        (tagged(&udp, 0, 99, false), 8),
        (tagged(&udp, 0, 10, true), 8),
        // Cut inside the IPv4 header (the bridge does not drop it, so the reason stays).
        (tagged(&udp, 0, 10, false)[..28].to_vec(), 8),
        (udp.clone(), 8),
    ];
    let (outs, _) = interpret(&c, Gress::Ingress, &frames);
    // VLAN 10: out of port 16 as VLAN 20, priority 5 (0xa014); nothing else changes.
    assert_eq!(outs[0].ucast_egress_port, Some(16));
    assert_eq!(outs[0].bytes, tagged(&udp, 5, 20, false));
    assert_eq!(outs[1].ucast_egress_port, Some(24));
    assert_eq!(outs[1].bytes, tagged(&udp, 0, 30, false));
    assert_eq!(outs[2].drop, Some(DropReason::NoRoute));
    assert_eq!(outs[3].drop, Some(DropReason::ParserReject));
    assert_eq!(outs[4].drop, Some(DropReason::ParserError));
    // Untagged: the route table is empty here, so no route.
    assert_eq!(outs[5].drop, Some(DropReason::NoRoute));
    // The tag's fields sit in the first free normal 16-bit containers, its valid bit in the
    // first free 8-bit one.
    // Declared headers come first, then built-ins as the graph first extracts them.
    let names: Vec<&str> = c.parser.headers.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["vlan", "ethernet", "ipv4", "udp"]);
    let order: Vec<usize> = c.parser.deparse_order.clone();
    assert_eq!(order, [1, 0, 2, 3], "ethernet, vlan, ipv4, udp");
    let vid = &c.parser.headers[0];
    let containers: Vec<_> = vid
        .extracts
        .iter()
        .map(|e| (e.offset, e.container, e.len))
        .collect();
    use t2_pipeline::phv::Container;
    assert_eq!(
        containers,
        [(0, Container::b16(17), 2), (2, Container::b16(18), 2)]
    );
    assert_eq!(
        vid.valid,
        t2_pipeline::phv::Field::at(Container::b8(8), 0, 1)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A program with its own header and parser graph: the placed, cycle-stepped pipeline
    /// (whose gress parser runs the program's graph) emits what the interpreter emits, in
    /// ingress and egress, for tagged, untagged and double-tagged frames.
    #[test]
    fn vlan_switch_placed_pipeline_equals_interpreter(
        frames in prop::collection::vec(
            (frame_spec(), 0u8..5, any::<u16>(), any::<u8>()), 1..16),
        egress in any::<bool>(),
        gaps in prop::collection::vec(0u8..4, 16),
    ) {
        let (c, pl) = placed(&examples::vlan_switch());
        let gress = if egress { Gress::Egress } else { Gress::Ingress };
        let frames: Vec<(Vec<u8>, u16)> = frames
            .iter()
            .map(|(s, tag, vid, pcp)| {
                let f = frame(s);
                let f = match tag {
                    0 => f,
                    1 => tagged(&f, pcp % 8, 10, false),
                    2 => tagged(&f, pcp % 8, 30, false),
                    3 => tagged(&f, pcp % 8, vid % 4096, false),
                    _ => tagged(&f, pcp % 8, 10, true),
                };
                (f, 8)
            })
            .collect();
        let a = interpret(&c, gress, &frames);
        let b = pipelined(&c, &pl, gress, &frames, &gaps);
        prop_assert_eq!(a, b);
    }
}

/// `mirror` and `recirculate` set the ingress deparser's controls; the placed pipeline does
/// exactly what the interpreter does.
#[test]
fn mirror_and_recirculate_set_the_deparser_controls_placed_as_interpreted() {
    use t2_pipeline::ir::{Action, MatchKind, Operand, Primitive, ProgramBuilder, Stmt, Table};
    let program = ProgramBuilder::new("controls")
        .action(
            Action::new("mirror_to")
                .param("session", 8)
                .prim(Primitive::Mirror {
                    session: Operand::param("session"),
                })
                .prim(Primitive::set("ipv4.ttl", Operand::Const(9))),
        )
        .action(Action::new("recirc").prim(Primitive::Recirculate))
        .action(Action::new("none"))
        .table(
            Table::new("controls", MatchKind::Exact, &["ipv4.src_addr"], 16)
                .action("mirror_to")
                .action("recirc")
                .action("none")
                .default_action("none", &[])
                .entry(&[1], "mirror_to", &[7])
                .entry(&[2], "recirc", &[])
                .entry(&[3], "mirror_to", &[255]),
        )
        .ingress(vec![Stmt::apply("controls")])
        .build()
        .unwrap();
    let (c, pl) = placed(&program);
    let mut interp = Interpreter::new(Arc::clone(&c));
    let mut run = |src: u32| {
        let mut phv = Phv::new(&PipelineParams::default().phv);
        phv.set(layout::VALID_IPV4, 1);
        phv.set(layout::IPV4_SRC, src);
        let mut placed_phv = phv.clone();
        interp.run(Thread::Ingress, &mut phv);
        let mut prog = PlacedThread::new(Arc::clone(&c), &pl, Thread::Ingress);
        for s in 0..20 {
            t2_pipeline::StageProgram::apply(&mut prog, s, &mut placed_phv);
        }
        assert_eq!(phv, placed_phv);
        (
            (phv.get(fields::MIRROR_VALID) == 1).then(|| phv.get(fields::MIRROR_SESSION)),
            phv.get(fields::RECIRCULATE) == 1,
            phv.get(layout::IPV4_TTL),
        )
    };
    assert_eq!(run(1), (Some(7), false, 9));
    assert_eq!(run(2), (None, true, 0));
    assert_eq!(run(3), (Some(255), false, 9));
    assert_eq!(run(4), (None, false, 0));
}

/// `random` draws from each table's own generator in the order packets reach the table, so
/// packets entering back to back (several in the stages at once) get the numbers the
/// interpreter gives them; another seed gives other numbers.
#[test]
fn random_is_deterministic_and_placed_as_interpreted() {
    use t2_pipeline::ir::{Action, MatchKind, Primitive, ProgramBuilder, Stmt, Table};
    let program = ProgramBuilder::new("randomize")
        .action(Action::new("rand_tos").prim(Primitive::Random {
            dst: "ipv4.diffserv".into(),
        }))
        .action(
            Action::new("rand_ports")
                .prim(Primitive::Random {
                    dst: "l4.src_port".into(),
                })
                .prim(Primitive::Random {
                    dst: "l4.dst_port".into(),
                }),
        )
        .table(Table::new("first", MatchKind::Exact, &[], 0).action("rand_tos"))
        // Keyed on what `first` writes: a later stage.
        .table(Table::new("second", MatchKind::Exact, &["ipv4.diffserv"], 16).action("rand_ports"))
        .ingress(vec![Stmt::apply("first"), Stmt::apply("second")])
        .build()
        .unwrap();
    let (c, pl) = placed(&program);
    assert!(pl.stage_of[0][0].unwrap() < pl.stage_of[0][1].unwrap());
    let ep = Endpoints {
        src_mac: MacAddr([2, 0, 0, 0, 0, 9]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        src_ip: Ipv4Addr::new(10, 9, 9, 9),
        dst_ip: Ipv4Addr::new(10, 0, 0, 1),
        src_port: 1,
        dst_port: 2,
    };
    let mut f = Vec::new();
    build_udp_frame(&mut f, &ep, 64, 0, &[0; 18], false, 60);
    let frames = vec![(f, 8u16); 40];
    let (a, _) = interpret(&c, Gress::Ingress, &frames);
    let (b, _) = pipelined(&c, &pl, Gress::Ingress, &frames, &[0; 40]);
    assert_eq!(a, b);
    let tos: std::collections::BTreeSet<u8> = a.iter().map(|o| o.bytes[15]).collect();
    let ports: std::collections::BTreeSet<[u8; 4]> = a
        .iter()
        .map(|o| [o.bytes[34], o.bytes[35], o.bytes[36], o.bytes[37]])
        .collect();
    assert!(tos.len() > 30 && ports.len() == 40, "{tos:?}");
    // Another seed, other numbers; the same seed, the same ones.
    let mut interp = Interpreter::new(Arc::clone(&c));
    let draw = |interp: &mut Interpreter| {
        let mut phv = Phv::new(&PipelineParams::default().phv);
        phv.set(layout::VALID_IPV4, 1);
        interp.run(Thread::Ingress, &mut phv);
        phv.get(layout::L4_SRC_PORT)
    };
    let seeded = |interp: &mut Interpreter, seed| {
        interp.state.seed(seed);
        (0..8).map(|_| draw(interp)).collect::<Vec<_>>()
    };
    let one = seeded(&mut interp, 1);
    assert_eq!(seeded(&mut interp, 1), one);
    assert_ne!(seeded(&mut interp, 2), one);
}
