//! Seeding a chip's random streams from a run's seed and the switch's place in the network.
//!
//! A program's `random` primitive draws from one generator per table, per pipe and gress
//! (`t2_pipeline::exec::State::seed`). A chip built alone seeds pipe `p`, gress `g` with
//! `2p + g`, so every chip draws the same sequence. In a network that correlates decisions
//! that should be independent (PABO's bounce draws, BFC's random start queue), so a network
//! built from a scenario reseeds each chip with [`Chip::seed_random_streams`]: pipe `p`,
//! gress `g` of switch `s` in a run with seed `seed` starts from
//! `stream_seed(seed, s, p, g)`, a SplitMix64-style mix of the four. Different switches,
//! pipes, gresses or run seeds get unrelated streams; the same four give the same stream on
//! every run (reruns stay byte-identical).

use super::Chip;
use t2_pipeline::Gress;

/// The SplitMix64 finalizer (Steele, Lea, Flood 2014): a bijection on 64-bit words whose
/// every output bit depends on every input bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of gress `gress` of pipe `pipe` of switch `switch` in a run seeded with `seed`.
/// Each component is folded in through the mix in turn (an odd-constant step before each, as
/// SplitMix64 advances its state), so that no two tuples that differ in one component can
/// collide by cancellation, as a plain XOR of the parts could.
pub fn stream_seed(seed: u64, switch: usize, pipe: usize, gress: Gress) -> u64 {
    const STEP: u64 = 0x9e37_79b9_7f4a_7c15;
    let g = match gress {
        Gress::Ingress => 0u64,
        Gress::Egress => 1,
    };
    let mut h = mix(seed.wrapping_add(STEP));
    for part in [switch as u64, pipe as u64, g] {
        h = mix(h ^ part.wrapping_add(STEP));
    }
    h
}

impl Chip {
    /// Restarts the random generators of every pipe's program from
    /// [`stream_seed`]`(seed, switch, pipe, gress)`. Call it before the chip runs: it sets
    /// where the streams start, it does not resume them. A chip on the built-in forwarding
    /// has no random streams and is unchanged.
    pub fn seed_random_streams(&mut self, seed: u64, switch: usize) {
        for (p, pipe) in self.pipes.iter_mut().enumerate() {
            for (gress, program) in [
                (Gress::Ingress, &mut pipe.ingress_program),
                (Gress::Egress, &mut pipe.egress_program),
            ] {
                if let Some(run) = program.placed_mut() {
                    run.state.seed(stream_seed(seed, switch, p, gress));
                }
            }
        }
    }

    /// The first state word of each table's generator, pipe by pipe, ingress then egress:
    /// what a test compares to see that two chips draw different sequences.
    pub fn random_stream_states(&mut self) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        for pipe in self.pipes.iter_mut() {
            for program in [&mut pipe.ingress_program, &mut pipe.egress_program] {
                if let Some(run) = program.placed_mut() {
                    out.push(run.state.random.clone());
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_component_changes_the_seed() {
        let base = stream_seed(1, 0, 0, Gress::Ingress);
        let others = [
            stream_seed(2, 0, 0, Gress::Ingress),
            stream_seed(1, 1, 0, Gress::Ingress),
            stream_seed(1, 0, 1, Gress::Ingress),
            stream_seed(1, 0, 0, Gress::Egress),
        ];
        for o in others {
            assert_ne!(o, base);
        }
        // Swapping switch and pipe is a different stream too (the parts are not summed).
        assert_ne!(
            stream_seed(1, 2, 3, Gress::Ingress),
            stream_seed(1, 3, 2, Gress::Ingress)
        );
        // Fixed forever: the streams of a run depend on this function only.
        assert_eq!(
            stream_seed(1, 0, 0, Gress::Ingress),
            stream_seed(1, 0, 0, Gress::Ingress)
        );
    }

    #[test]
    fn no_collisions_over_a_grid() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..8u64 {
            for switch in 0..64 {
                for pipe in 0..4 {
                    for g in [Gress::Ingress, Gress::Egress] {
                        assert!(seen.insert(stream_seed(seed, switch, pipe, g)));
                    }
                }
            }
        }
    }
}
