//! A placed program's stages on one packet: BFC's shipped switch program (ingress, with
//! host routes installed) compiled at placement against the same stages run through the
//! reference interpreter, per packet through every active stage.
//!
//! Run with `cargo bench --bench programs`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::net::Ipv4Addr;
use std::sync::Arc;
use t2_pipeline::check::{check, Thread};
use t2_pipeline::exec::{Interpreter, PlacedThread};
use t2_pipeline::headers::{build_tcp_frame, Endpoints, MacAddr};
use t2_pipeline::place::{place, Budget};
use t2_pipeline::{layout, Phv, PipelineParams, StageProgram};
use t2sim::schemes::SCHEMES;

fn host(i: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, i + 1)
}

fn frames() -> Vec<Vec<u8>> {
    (0..64u32)
        .map(|k| {
            let (src, dst) = ((k % 4) as u8, ((k / 4 + 1) % 4) as u8);
            let ep = Endpoints {
                src_mac: MacAddr([2, 0, 0, 0, 0, src]),
                dst_mac: MacAddr([2, 0, 0, 0, 1, dst]),
                src_ip: host(src),
                dst_ip: host(dst),
                src_port: 1000 + k as u16,
                dst_port: 2000,
            };
            let mut out = Vec::new();
            build_tcp_frame(
                &mut out,
                &ep,
                64,
                1,
                k * 1000,
                0,
                0x10,
                1000,
                &[0; 1000],
                60,
            );
            out
        })
        .collect()
}

fn bfc_ingress(c: &mut Criterion) {
    let routes: Vec<(Ipv4Addr, u16)> = (0..4).map(|i| (host(i), i as u16 * 8)).collect();
    let scheme = SCHEMES
        .iter()
        .find(|s| s.name == "bfc")
        .expect("BFC is a shipped scheme");
    let (_, program) = (scheme.shipped)()
        .into_iter()
        .next()
        .expect("BFC ships a program");
    let program = t2sim::chip::pipes::with_routes(&program, &routes).expect("routes install");
    let checked = Arc::new(check(&program).expect("the shipped program checks"));
    let placed = place(&checked, &Budget::tofino2());
    assert!(placed.fits());
    let interp = Interpreter::new(Arc::clone(&checked));
    let phvs: Vec<Phv> = frames()
        .iter()
        .map(|f| {
            let mut phv = Phv::new(&PipelineParams::default().phv);
            phv.set(layout::INGRESS_PORT, 1);
            phv.set(layout::PKT_LENGTH, f.len() as u32 + 4);
            interp.parse(f, &mut phv).expect("valid frames parse");
            phv
        })
        .collect();
    let mut group = c.benchmark_group("program_bfc_ingress");
    group.throughput(Throughput::Elements(phvs.len() as u64));
    for (name, reference) in [("compiled", false), ("reference", true)] {
        let mut thread = PlacedThread::new(Arc::clone(&checked), &placed, Thread::Ingress);
        thread.run_reference(reference);
        let stages = thread.active_stages();
        let mut work = phvs.clone();
        group.bench_function(name, |b| {
            b.iter(|| {
                for (phv, fresh) in work.iter_mut().zip(&phvs) {
                    phv.copy_from(fresh);
                    for &s in &stages {
                        thread.apply(s, phv);
                    }
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bfc_ingress);
criterion_main!(benches);
