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
        t2sim::schemes::dctcp::host::CONGESTION
    );
}

mod placed_equals_interpreted {
    //! Every shipped scheme program, with host routes installed, placed on the stages and
    //! run cycle by cycle in a `GressPipeline` (both gresses), does to random packets exactly
    //! what the IR interpreter does: the same bytes out, the same drop, port, queue, class,
    //! AFC message, mirror and recirculation choices, and the same registers after.

    use proptest::prelude::*;
    use std::net::Ipv4Addr;
    use std::sync::Arc;
    use t2_pipeline::check::{check, Checked, Thread};
    use t2_pipeline::exec::{Interpreter, PlacedThread};
    use t2_pipeline::headers::{build_tcp_frame, ipv4_header_checksum, Endpoints, MacAddr};
    use t2_pipeline::place::{place, Budget, Placed};
    use t2_pipeline::{fields, layout, Cells, PacketPool, Phv, PipelineParams};
    use t2sim::schemes::SCHEMES;

    /// What a gress decided about one packet.
    type Outcome = (Vec<u8>, u32, Option<u32>, u32, u32, u32, Option<u32>, bool);

    fn host(i: u8) -> Ipv4Addr {
        Ipv4Addr::new(10, 0, 0, i + 1)
    }

    fn frame(src: u8, dst: u8, tos: u8, ack_only: bool, payload: usize, seq: u32) -> Vec<u8> {
        let ep = Endpoints {
            src_mac: MacAddr([2, 0, 0, 0, 0, src]),
            dst_mac: MacAddr([2, 0, 0, 0, 1, dst]),
            src_ip: host(src),
            dst_ip: host(dst),
            src_port: 1000 + src as u16,
            dst_port: 2000 + dst as u16,
        };
        let payload = if ack_only { 0 } else { payload };
        let mut out = Vec::new();
        build_tcp_frame(
            &mut out,
            &ep,
            64,
            1,
            seq,
            0,
            0x10,
            1000,
            &vec![0; payload],
            60,
        );
        out[15] = tos;
        out[24] = 0;
        out[25] = 0;
        let c = ipv4_header_checksum(&out[14..34]);
        out[24..26].copy_from_slice(&c.to_be_bytes());
        out
    }

    fn outcome_of(phv: &Phv, bytes: Vec<u8>) -> Outcome {
        (
            bytes,
            phv.get(layout::DROP_REASON),
            (phv.get(layout::EGRESS_PORT_VALID) == 1).then(|| phv.get(layout::UCAST_EGRESS_PORT)),
            phv.get(layout::QID),
            phv.get(fields::INGRESS_COS),
            phv.get(fields::DPRSR_ADV_FLOW_CTL),
            (phv.get(fields::MIRROR_VALID) == 1).then(|| phv.get(fields::MIRROR_SESSION)),
            phv.get(fields::RECIRCULATE) == 1,
        )
    }

    fn interpreted(
        c: &Arc<Checked>,
        thread: Thread,
        frames: &[Vec<u8>],
    ) -> (Vec<Outcome>, Vec<Cells>) {
        let mut interp = Interpreter::new(Arc::clone(c));
        let mut out = Vec::new();
        for f in frames {
            let mut phv = Phv::new(&PipelineParams::default().phv);
            let port = match thread {
                Thread::Ingress => layout::INGRESS_PORT,
                _ => layout::EGRESS_PORT,
            };
            phv.set(port, 1);
            phv.set(layout::PKT_LENGTH, f.len() as u32 + 4);
            let extent = interp
                .parse_extent(f, &mut phv)
                .expect("valid frames parse");
            interp.run(thread, &mut phv);
            let mut bytes = f.clone();
            if phv.get(layout::DROP_REASON) == 0 {
                interp.deparse_to(&phv, &mut bytes, &extent);
            }
            let mut o = outcome_of(&phv, bytes);
            if thread != Thread::Ingress {
                // The egress deparser hands on no port, queue, class or recirculation.
                (o.2, o.3, o.4, o.7) = (None, 0, 0, false);
            }
            out.push(o);
        }
        (out, interp.state.registers)
    }

    fn through_pipeline(
        c: &Arc<Checked>,
        pl: &Placed,
        thread: Thread,
        frames: &[Vec<u8>],
    ) -> (Vec<Outcome>, Vec<Cells>) {
        let params = PipelineParams::default();
        let mut program = PlacedThread::new(Arc::clone(c), pl, thread);
        let mut g = program.pipeline(pl, &params);
        let mut pool = PacketPool::new();
        let handles: Vec<_> = frames.iter().map(|f| pool.alloc_from(f)).collect();
        let mut out: Vec<Option<Outcome>> = vec![None; frames.len()];
        let (mut now, mut done) = (0u64, 0);
        while done < frames.len() {
            if (now as usize) < frames.len() {
                g.enter(now, handles[now as usize], 1, &pool);
            }
            if let Some(e) = g.tick(now, &mut program, &mut pool) {
                let i = handles.iter().position(|&h| h == e.pkt).unwrap();
                let ingress = thread == Thread::Ingress;
                out[i] = Some((
                    pool.bytes(e.pkt).to_vec(),
                    e.drop.map_or(0, |d| d as u32),
                    e.ucast_egress_port.map(u32::from).filter(|_| ingress),
                    if ingress { e.qid as u32 } else { 0 },
                    if ingress { e.ingress_cos as u32 } else { 0 },
                    e.adv_flow_ctl,
                    e.mirror_session.map(u32::from),
                    e.recirculate,
                ));
                if let Some(m) = e.mirror_incoming {
                    pool.free(m);
                }
                done += 1;
            }
            now += 1;
        }
        (
            out.into_iter().map(Option::unwrap).collect(),
            program.state.registers,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn every_shipped_scheme_program_runs_placed_as_interpreted(
            packets in prop::collection::vec(
                (0u8..4, 0u8..4, prop::sample::select(vec![0u8, 1, 2, 3, 0xb8, 0xbb, 0x1c, 0x08]),
                 any::<bool>(), 0usize..1400, any::<u32>()),
                1..24,
            ),
        ) {
            let frames: Vec<Vec<u8>> = packets
                .iter()
                .map(|&(s, d, tos, ack, len, seq)| frame(s, d, tos, ack, len, seq))
                .collect();
            let routes: Vec<(Ipv4Addr, u16)> = (0..4).map(|i| (host(i), i as u16 * 8)).collect();
            for scheme in SCHEMES {
                for (file, program) in (scheme.shipped)() {
                    let program = t2sim::chip::pipes::with_routes(&program, &routes)
                        .map_err(|e| TestCaseError::fail(format!("{file}: {e}")))?;
                    let c = Arc::new(check(&program).map_err(|e| TestCaseError::fail(format!("{file}: {e}")))?);
                    let pl = place(&c, &Budget::tofino2());
                    prop_assert!(pl.fits(), "{}", file);
                    for thread in [Thread::Ingress, Thread::Egress] {
                        prop_assert_eq!(
                            interpreted(&c, thread, &frames),
                            through_pipeline(&c, &pl, thread, &frames),
                            "{} {:?}", file, thread
                        );
                    }
                }
            }
        }
    }
}

/// Every stage of every shipped program runs on the packet's PHV itself
/// (`PlacedThread::in_place_stages`) but four, each with a unit that reads a bit an earlier
/// unit of its stage may write, which must see the value the packet entered with; those run
/// on a scratch copy. `every_shipped_scheme_program_runs_placed_as_interpreted`
/// holds both kinds of stage to the interpreter.
#[test]
fn shipped_program_stages_run_in_place_unless_a_unit_reads_an_earlier_ones_write() {
    use std::sync::Arc;
    use t2_pipeline::check::{check, Thread};
    use t2_pipeline::exec::PlacedThread;
    use t2_pipeline::place::{place, Budget};
    let mut copied = Vec::new();
    let mut in_place = 0;
    for scheme in t2sim::schemes::SCHEMES {
        for (file, program) in (scheme.shipped)() {
            let c = Arc::new(check(&program).unwrap());
            let pl = place(&c, &Budget::tofino2());
            for thread in [Thread::Ingress, Thread::Egress, Thread::Ghost] {
                let here = PlacedThread::new(Arc::clone(&c), &pl, thread).in_place_stages();
                in_place += here.len();
                for s in pl.active_stages(thread) {
                    if !here.contains(&s) {
                        copied.push((file.to_string(), thread, s));
                    }
                }
            }
        }
    }
    let at = |f: &str, t, s| (f.to_string(), t, s);
    assert_eq!(
        copied,
        vec![
            at("pabo_switch.json", Thread::Ingress, 8),
            at("mice_elephant_switch.json", Thread::Egress, 0),
            at("pfc_qcn_switch.json", Thread::Egress, 0),
            at("qcn_switch.json", Thread::Egress, 0),
        ]
    );
    assert_eq!(in_place, 84, "stages in place");
}
