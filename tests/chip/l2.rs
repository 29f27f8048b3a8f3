//! An L2 switch on the chip (#11): an exact table on the 48-bit `ethernet.dst_addr` picks the
//! egress port and rewrites the source MAC from a 48-bit action parameter; a miss drops.
//! Frames are not IPv4, so nothing but the MAC addresses decides.

use t2_pipeline::ir::{
    Action, MatchKind, Operand, Primitive, ProgramBuilder, ProgramDrop, Stmt, Table,
};
use t2_testbench::{Network, Probe, Stepping};
use t2sim::{Chip, ChipConfig, PortSpec, Tofino2Params};

const G100: u64 = 100_000_000_000;

fn frame(dst: u64, src: u64) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&dst.to_be_bytes()[2..]);
    b.extend_from_slice(&src.to_be_bytes()[2..]);
    // A local experimental ethertype: the built-in parser stops after Ethernet.
    b.extend_from_slice(&[0x88, 0xb5]);
    b.extend_from_slice(&[7; 100]);
    b
}

#[test]
fn an_l2_table_on_the_destination_mac_forwards_and_rewrites() {
    let params = Tofino2Params::default();
    let port = |mac| PortSpec {
        pipe: 0,
        mac,
        channel: 0,
        bps: G100,
    };
    let dev = |mac| port(mac).dev_port(params.channels_per_mac) as u64;
    let program = ProgramBuilder::new("l2")
        .action(
            Action::new("forward")
                .param("port", 9)
                .param("smac", 48)
                .prim(Primitive::SetEgressPort {
                    port: Operand::param("port"),
                })
                .prim(Primitive::set("ethernet.src_addr", Operand::param("smac"))),
        )
        .action(Action::new("miss").prim(Primitive::Drop {
            reason: ProgramDrop::NoRoute,
        }))
        .table(
            Table::new("dmac", MatchKind::Exact, &["ethernet.dst_addr"], 1024)
                .action("forward")
                .action("miss")
                .default_action("miss", &[])
                .entry(&[0x0200_0000_0001], "forward", &[dev(0), 0x0a0a_0000_0001])
                .entry(&[0x0200_0000_0002], "forward", &[dev(1), 0x0a0a_0000_0002]),
        )
        .ingress(vec![Stmt::apply("dmac")])
        .build()
        .unwrap();
    let config = ChipConfig {
        params,
        ports: vec![port(0), port(1), port(2)],
        routes: vec![],
        program: Some(program),
    };
    let mut net = Network::new(Stepping::Jump);
    let chip = net.add(Chip::new("chip", &config).unwrap());
    // To host 2, to host 1, to an unknown MAC that differs from host 1's only in the high
    // 32 bits (a miss), to host 1 again.
    let sent = [
        (1_000, frame(0x0200_0000_0002, 0x0600_0000_0009)),
        (1_300, frame(0x0200_0000_0001, 0x0600_0000_0009)),
        (1_600, frame(0x0300_0000_0001, 0x0600_0000_0009)),
        (1_900, frame(0x0200_0000_0001, 0x0600_0000_0009)),
    ];
    let tx = net.add(Probe::new(G100, sent.to_vec()));
    let rx: Vec<_> = (0..2)
        .map(|_| net.add(Probe::new(G100, Vec::new())))
        .collect();
    net.link(tx, 0, chip, 2, 1).unwrap();
    for (k, &r) in rx.iter().enumerate() {
        net.link(chip, k, r, 0, 1).unwrap();
    }
    net.run_until(20_000);
    let got = |k: usize| -> Vec<Vec<u8>> {
        net.node::<Probe>(rx[k])
            .received()
            .iter()
            .map(|(_, b)| b.clone())
            .collect()
    };
    // Host 1 gets two frames, host 2 one, each with the source MAC its entry names.
    assert_eq!(
        got(0),
        vec![
            frame(0x0200_0000_0001, 0x0a0a_0000_0001),
            frame(0x0200_0000_0001, 0x0a0a_0000_0001)
        ]
    );
    assert_eq!(got(1), vec![frame(0x0200_0000_0002, 0x0a0a_0000_0002)]);
    let c = net.node::<Chip>(chip);
    assert_eq!(c.counters().dropped(), 1);
}
