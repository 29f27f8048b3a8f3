//! Headers made valid or invalid by a program (`set_valid` / `set_invalid`): the deparser
//! inserts or removes them, in deparse order, in front of the payload. Checked on exact bytes
//! through the interpreter and the cycle-stepped pipeline alike.

use std::net::Ipv4Addr;
use std::sync::Arc;
use t2_pipeline::check::{check, Thread};
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::headers::{build_udp_frame, with_vlan_tag, Endpoints, MacAddr};
use t2_pipeline::ir::{Action, Primitive, Program};
use t2_pipeline::params::PipelineParams;
use t2_pipeline::phv::Phv;
use t2_pipeline::place::{place, Budget};
use t2_pipeline::{examples, Gress, PacketPool, StageProgram};

/// The shipped `vlan_tagging`: egress pops tags off tagged packets and pushes VLAN 100
/// (priority 3) onto untagged ones.
fn push_pop() -> Program {
    examples::vlan_tagging()
}

fn udp(payload: usize) -> Vec<u8> {
    let ep = Endpoints {
        src_mac: MacAddr([2, 0, 0, 0, 0, 9]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        src_ip: Ipv4Addr::new(10, 9, 9, 9),
        dst_ip: Ipv4Addr::new(10, 0, 0, 2),
        src_port: 1,
        dst_port: 2,
    };
    let mut b = Vec::new();
    build_udp_frame(&mut b, &ep, 64, 7, &vec![0xab; payload], false, 60);
    b
}

/// Each frame through the egress, interpreted and through the cycle-stepped pipeline; both
/// must give the same bytes, which are returned.
fn egress(p: &Program, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let c = Arc::new(check(p).unwrap());
    let pl = place(&c, &Budget::tofino2());
    assert!(pl.fits(), "{:?}", pl.failure);
    let params = PipelineParams::default();
    let interp = Interpreter::new(Arc::clone(&c));
    let mut interp_state = Interpreter::new(Arc::clone(&c));
    let interpreted: Vec<Vec<u8>> = frames
        .iter()
        .map(|f| {
            let mut phv = Phv::new(&params.phv);
            let extent = interp.parse_extent(f, &mut phv).unwrap();
            interp_state.run(Thread::Egress, &mut phv);
            let mut out = f.clone();
            interp.deparse_to(&phv, &mut out, &extent);
            out
        })
        .collect();
    let mut run = PlacedThread::new(Arc::clone(&c), &pl, Thread::Egress);
    let mut gress = run.pipeline(&pl, &params);
    assert_eq!(gress.gress(), Gress::Egress);
    let mut pool = PacketPool::new();
    let mut staged = Vec::new();
    let mut now = 0;
    let mut next = 0;
    while staged.len() < frames.len() {
        if next < frames.len() && gress.can_enter(now) {
            let pkt = pool.alloc_from(&frames[next]);
            gress.enter(now, pkt, 8, &pool);
            next += 1;
        }
        if let Some(exit) = gress.tick(now, &mut run as &mut dyn StageProgram, &mut pool) {
            assert_eq!(exit.drop, None);
            staged.push(pool.bytes(exit.pkt).to_vec());
        }
        now += 1;
    }
    assert_eq!(interpreted, staged);
    staged
}

#[test]
fn a_tag_is_pushed_onto_untagged_frames_and_popped_off_tagged_ones() {
    let plain = udp(100);
    let tagged = with_vlan_tag(&plain, 5, 10);
    let out = egress(&push_pop(), &[plain.clone(), tagged.clone()]);
    // Pushed: 4 bytes longer, the tag between the MAC addresses and the IPv4 ethertype.
    assert_eq!(out[0], with_vlan_tag(&plain, 3, 100));
    assert_eq!(out[0].len(), plain.len() + 4);
    // Popped: the frame as it was before it was tagged.
    assert_eq!(out[1], plain);
}

#[test]
fn a_frame_cut_below_the_minimum_is_padded_and_ipv4_options_survive() {
    // A minimum tagged frame (60 bytes without FCS: 56 of headers and UDP payload, then the
    // tag) loses its tag: 56 bytes, padded with zeros to 60.
    let small = udp(14);
    assert_eq!((small.len(), &small[56..]), (60, &[0u8; 4][..]));
    let tagged = with_vlan_tag(&small[..56], 0, 10);
    assert_eq!(tagged.len(), 60);
    let out = egress(&push_pop(), &[tagged]);
    assert_eq!(out[0], small);

    // IPv4 with 8 bytes of options gets a tag pushed; the options move with it.
    let mut with_options = udp(100);
    let header: Vec<u8> = with_options[14..34].to_vec();
    let options = [0x94, 0x04, 0, 0, 0x01, 0x01, 0x01, 0x00];
    with_options.splice(34..34, options);
    with_options[14] = 0x47; // IHL 7
    let mut h = [&header[..], &options[..]].concat();
    h[0] = 0x47;
    let total = u16::from_be_bytes([h[2], h[3]]) + 8;
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[10] = 0;
    h[11] = 0;
    let sum = t2_pipeline::headers::internet_checksum(&h);
    h[10..12].copy_from_slice(&sum.to_be_bytes());
    with_options[14..42].copy_from_slice(&h);
    let out = egress(&push_pop(), &[with_options.clone()]);
    assert_eq!(out[0], with_vlan_tag(&with_options, 3, 100));
    assert_eq!(out[0][18 + 20..18 + 28], options);
}

#[test]
fn set_valid_names_a_header_the_program_has() {
    let mut p = push_pop();
    p.actions.push(Action::new("bad").prim(Primitive::SetValid {
        header: "mpls".into(),
    }));
    let e = check(&p).unwrap_err();
    assert!(e.problem.contains("unknown header `mpls`"), "{e}");
}
