//! The P4 front end's later features: counters, `exit`, resubmit and what they lower to.

use std::path::Path;
use t2_pipeline::ir::{
    ActionCall, Half, Operand, Param, Primitive, RegisterAction, RegisterArray, SaluOp,
    SaluOperand, SaluUpdate,
};
use t2_pipeline::p4;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn compiled(name: &str) -> p4::Compiled {
    let path = root().join(format!("programs/p4/{name}.p4"));
    match p4::compile(&path, &p4::Options::default()) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn counters_lower_to_register_arrays_that_a_stateful_alu_adds_to() {
    let c = compiled("port_counters");
    let p = &c.program;
    assert_eq!(
        p.registers,
        vec![
            RegisterArray {
                name: "port_packets".into(),
                cell_bits: 32,
                size: 512,
                pair: false,
                signed: false,
            },
            // A cell per entry of the 1024-entry table, and one for the misses.
            RegisterArray {
                name: "host_stats".into(),
                cell_bits: 32,
                size: 1025,
                pair: true,
                signed: false,
            },
        ]
    );
    let add = |a, b| SaluUpdate::new(SaluOp::Add, a, b);
    assert_eq!(
        p.register_actions,
        vec![
            RegisterAction {
                updates: vec![add(SaluOperand::Cell, SaluOperand::Const(1))],
                ..RegisterAction::new("port_packets$count", "port_packets")
            },
            RegisterAction {
                updates: vec![
                    add(SaluOperand::Cell, SaluOperand::Const(1)),
                    SaluUpdate {
                        half: Half::Hi,
                        ..add(
                            SaluOperand::CellHi,
                            SaluOperand::Field("ig_intr_md.pkt_length".into())
                        )
                    },
                ],
                ..RegisterAction::new("host_stats$count", "host_stats")
            },
        ]
    );
    let forward = p.actions.iter().find(|a| a.name == "forward").unwrap();
    assert_eq!(
        forward.params,
        vec![
            Param {
                name: "port".into(),
                bits: 9
            },
            // Indexes 0..=1024: 11 bits of action data.
            Param {
                name: p4::lower::ENTRY_INDEX_PARAM.into(),
                bits: 11
            },
        ]
    );
    assert_eq!(
        forward.primitives[1],
        Primitive::Execute {
            register_action: "host_stats$count".into(),
            index: Operand::Param("$entry_index".into()),
        }
    );
    let t = p.tables.iter().find(|t| t.name == "ipv4_host").unwrap();
    assert_eq!(t.default_action, ActionCall::new("miss", &[1024]));
    // The control plane sees the entry index as no argument of the action.
    let info = c.actions.iter().find(|a| a.ir_name == "forward").unwrap();
    assert_eq!(info.params, vec![("port".to_string(), 9)]);
    assert!(c.takes_entry_index("forward") && !c.takes_entry_index("count_port"));
    let dc = c.counter("Ingress.host_stats").unwrap();
    assert_eq!(dc.direct_table.as_deref(), Some("ipv4_host"));
    assert_eq!(dc.split(5 << 32 | 2), (Some(2), Some(5)));
    assert_eq!(c.counter("port_packets").unwrap().split(7), (Some(7), None));
}
