//! BFC's 1 us pause-bitmap refresh built from the packet generator and the control plane: a
//! periodic pktgen application (1,500 cycles) makes a BFC pause frame template; the ingress
//! program (its parser telling pktgen packets by their ingress port) fills the bitmap's first
//! word from a register, removes the pktgen header and sends the frame upstream. A register
//! write scheduled at cycle 2000 is in every refresh from the one whose lookup follows it.

use t2_clock::Cycle;
use t2_pipeline::ir::{
    Action, MatchKind, Operand, ParserState, Primitive, Program, ProgramBuilder, RegisterAction,
    SaluOutputValue, Stmt, Table,
};
use t2_pipeline::Gress;
use t2_testbench::{Network, Probe, Stepping};
use t2sim::chip::{ControlOp, PktgenApp, PktgenTrigger};
use t2sim::schemes::bfc::wire::BfcPause;
use t2sim::{Chip, ChipConfig, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;
const SOURCE: [u8; 6] = [2, 0, 0, 0, 0, 0xbf];

fn program() -> Program {
    ProgramBuilder::new("bfc_refresh")
        .header(
            "pktgen",
            &[
                ("pad1", 2),
                ("pipe_id", 2),
                ("app_id", 4),
                ("pad2", 8),
                ("batch_id", 16),
                ("packet_id", 16),
            ],
        )
        .header("bfc", &[("subtype", 16), ("w0", 32)])
        .register("pause_bits", 32, 32)
        .register_action(
            RegisterAction::new("read_bits", "pause_bits").output("bfc.w0", SaluOutputValue::Old),
        )
        .parser(vec![
            // Pktgen packets enter on local port 6 of the pipe (device port 6 in pipe 0).
            ParserState::new("start")
                .select(&["ig_intr_md.ingress_port"], "parse_eth")
                .case(&[6], "parse_pktgen"),
            ParserState::new("parse_pktgen")
                .extract("pktgen")
                .goto("parse_eth"),
            ParserState::new("parse_eth")
                .extract("ethernet")
                .select(&["ethernet.ether_type"], "accept")
                .case(&[0x88b5], "parse_bfc"),
            ParserState::new("parse_bfc").extract("bfc"),
        ])
        .action(
            Action::new("refresh")
                .prim(Primitive::Execute {
                    register_action: "read_bits".into(),
                    index: Operand::Const(0),
                })
                .prim(Primitive::SetInvalid {
                    header: "pktgen".into(),
                })
                .prim(Primitive::SetEgressPort {
                    port: Operand::Const(8),
                }),
        )
        .table(
            Table::new("refresh_t", MatchKind::Exact, &[], 0)
                .action("refresh")
                .default_action("refresh", &[]),
        )
        .ingress(vec![Stmt::apply("refresh_t")])
        .build()
        .unwrap()
}

fn template() -> Vec<u8> {
    let mut b = Vec::new();
    BfcPause::none().write(SOURCE, &mut b);
    b
}

fn run(stepping: Stepping) -> Vec<(Cycle, Vec<u8>)> {
    let config = ChipConfig {
        params: Tofino2Params::default(),
        ports: vec![PortSpec {
            pipe: 0,
            mac: 0,
            channel: 0,
            bps: G100,
        }],
        routes: Vec::new(),
        program: Some(program()),
    };
    let mut c = Chip::new("chip", &config).unwrap();
    let app = PktgenApp::new(
        PktgenTrigger::Periodic {
            start: 1000,
            period: 1500,
        },
        template(),
    );
    c.set_pktgen_app(0, 0, 0, Some(app)).unwrap();
    // Queues 3 and 7 paused: bits 31 - 3 and 31 - 7 of the bitmap's first word.
    c.schedule(
        2000,
        ControlOp::WriteRegister {
            pipe: 0,
            gress: Gress::Ingress,
            register: "pause_bits".into(),
            index: 0,
            value: (1 << 28) | (1 << 24),
        },
    )
    .unwrap();
    let mut net = Network::new(stepping);
    let chip = net.add(c);
    let upstream = net.add(Probe::new(G100, Vec::new()));
    net.link(chip, 0, upstream, 0, 1).unwrap();
    net.run_until(5999);
    net.node::<Probe>(upstream).received().to_vec()
}

#[test]
fn a_periodic_pktgen_application_refreshes_the_bfc_bitmap_every_microsecond() {
    let c = Chip::new(
        "c",
        &ChipConfig {
            params: Tofino2Params::default(),
            ports: vec![PortSpec {
                pipe: 0,
                mac: 0,
                channel: 0,
                bps: G100,
            }],
            routes: Vec::new(),
            program: Some(program()),
        },
    )
    .unwrap();
    // 6 + 144 bytes (154 with the FCS) at 384 Gb/s: 174 x 8 / 256 = 5.4375 cycles, so the
    // packet made at m is through the MAC at m + 7 and enters the ingress at m + 8; its
    // lookup is 64 cycles later; out of port 0 as a 144-byte frame (148 with the FCS).
    let latency = c.unloaded_latency(148, 0);
    let enter = |m: Cycle| m + 8;
    let stepped = run(Stepping::EveryCycle);
    let mut none = Vec::new();
    BfcPause::none().write(SOURCE, &mut none);
    let mut some = Vec::new();
    BfcPause::of(&[3, 7]).write(SOURCE, &mut some);
    assert_eq!(none, template());
    assert_eq!(
        stepped,
        [
            // Lookup at 1072, before the write at 2000.
            (enter(1000) + latency + 1, none),
            (enter(2500) + latency + 1, some.clone()),
            (enter(4000) + latency + 1, some),
        ]
    );
    assert_eq!(run(Stepping::Jump), stepped);
}
