//! PABO's evaluation tree (`docs/schemes/pabo.md`), a shape scenario files name as
//! `kind = "pabo_tree"` ([`TREE`], registered in `crate::schemes::SHAPES`): a root switch
//! serving the receiver, three middle switches under it, and three edge switches, one under
//! each middle switch, with `hosts_per_edge` senders each: three two-switch chains merging at
//! the root. It has no core (its load is on host links).

use crate::scenario::topology::{
    CustomShape, Plan, Shape, ShapeKind, ShapeSize, SpecError, MAX_SHAPE_KEYS,
};

/// The tree as a registered shape.
pub static TREE: ShapeKind = ShapeKind {
    kind: "pabo_tree",
    keys: &["hosts_per_edge"],
    size,
    plan,
    core_links: |_| None,
};

/// The tree with `hosts_per_edge` senders on each edge switch.
pub fn tree(hosts_per_edge: usize) -> Shape {
    let mut values = [0; MAX_SHAPE_KEYS];
    values[0] = hosts_per_edge;
    Shape::Custom(CustomShape {
        kind: &TREE,
        values,
    })
}

/// 7 switches, 3 x `hosts_per_edge` senders and the receiver; an edge switch has its hosts
/// and its uplink, the root its receiver and three downlinks.
fn size(values: &[usize]) -> Result<ShapeSize, SpecError> {
    let hosts_per_edge = values[0];
    let too_big = |keys: &'static str| SpecError {
        keys,
        problem: "is too large".into(),
    };
    if hosts_per_edge < 1 {
        return Err(SpecError {
            keys: "hosts_per_edge",
            problem: "pabo_tree needs hosts on each edge switch".into(),
        });
    }
    Ok(ShapeSize {
        switches: 7,
        hosts: hosts_per_edge
            .checked_mul(3)
            .and_then(|h| h.checked_add(1))
            .ok_or(too_big("hosts_per_edge"))?,
        max_ports: hosts_per_edge
            .checked_add(1)
            .ok_or(too_big("hosts_per_edge"))?
            .max(4),
        ports_keys: "hosts_per_edge",
    })
}

fn plan(values: &[usize]) -> Result<Plan, String> {
    let hosts_per_edge = values[0];
    if hosts_per_edge < 1 {
        return Err("pabo_tree needs hosts on each edge switch".to_string());
    }
    // 0 root (PABO's switch7, with the receiver); 1..=3 middle (switch4-6);
    // 4..=6 edge (switch1-3), edge 3 + i hanging off middle i.
    Ok(Plan {
        switches: 7,
        fabric: vec![(0, 1), (0, 2), (0, 3), (1, 4), (2, 5), (3, 6)],
        host_switch: std::iter::once(0)
            .chain((0..3 * hosts_per_edge).map(|h| 4 + h / hosts_per_edge))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_has_no_core() {
        assert_eq!(tree(1).core_links(), None);
    }
}
