//! A program's register state: the cells of each register array and each table's random
//! generator, which the interpreter ([`super::exec`]) and the compiled stages
//! ([`super::compiled`]) both read and write.

use crate::hw::cells::Cells;
use crate::hw::gress::CellWrite;
use crate::program::check::Checked;

/// Register contents of a program: the cells of each register array, at its width.
#[derive(Clone, Debug)]
pub struct State {
    pub registers: Vec<Cells>,
    /// Per table: the state of its random-number generator (`random` primitive).
    pub random: Vec<u64>,
    /// While `logging`, every cell a register action stores, in order (see
    /// [`StageProgram::log_register_writes`]); not part of the state.
    pub(crate) writes: Vec<CellWrite>,
    pub(crate) logging: bool,
}

impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        self.registers == other.registers && self.random == other.random
    }
}

impl Eq for State {}

/// The splitmix64 step: advances `state` and returns the next 64-bit output.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The state table `table`'s generator starts from once its program is seeded with `seed`.
fn random_start(seed: u64, table: usize) -> u64 {
    let mut s = seed ^ (table as u64).wrapping_mul(0xd1b5_4a32_d192_ed03);
    splitmix64(&mut s)
}

/// The numbers table `table` (its index in the program) draws, in order, one per `random`
/// primitive it runs, after [`State::seed`] with `seed`; a field keeps their low bits. Tests
/// use it to know what a program drew without looking inside the chip.
pub fn random_draws(seed: u64, table: usize) -> impl Iterator<Item = u32> {
    let mut state = random_start(seed, table);
    std::iter::from_fn(move || Some((splitmix64(&mut state) >> 32) as u32))
}

impl State {
    /// All registers zero, random generators seeded with 0.
    pub fn new(p: &Checked) -> State {
        let mut s = State {
            registers: p
                .registers
                .iter()
                .map(|r| Cells::zeroed(r.stored_bits(), r.size as usize))
                .collect(),
            random: vec![0; p.tables.len()],
            writes: Vec::new(),
            logging: false,
        };
        s.seed(0);
        s
    }

    /// Stores `word` in cell `slot` of array `register`, logging it while a log is kept.
    #[inline]
    pub(crate) fn store(&mut self, register: usize, slot: usize, word: u64) {
        self.registers[register].set(slot, word);
        if self.logging {
            self.writes.push((register as u32, slot as u32, word));
        }
    }

    /// Restarts every table's random generator from `seed` (the chip gives each pipe its
    /// own). Each table draws from its own generator, one number per `random` primitive, in
    /// the order packets reach it, so the numbers do not depend on how tables are placed.
    pub fn seed(&mut self, seed: u64) {
        for (t, r) in self.random.iter_mut().enumerate() {
            *r = random_start(seed, t);
        }
    }

    /// The next number of table `t`'s generator (the `random` primitive keeps its low bits).
    #[inline]
    pub(crate) fn draw(&mut self, t: usize) -> u32 {
        (splitmix64(&mut self.random[t]) >> 32) as u32
    }
}
