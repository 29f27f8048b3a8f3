//! The nodes' next events, earliest first: an indexed binary min-heap that holds each node
//! at most once.
//!
//! A node's next event changes on almost every visit (a frame arrives, it sends, a timer
//! moves). A plain heap that takes a new entry at each change and skips stale ones when they
//! surface holds about a hundred entries per node on a busy network (16,700 on average for
//! the 144 nodes of BFC's 128-host leaf-spine), and each visit pays for that depth. Here a
//! change moves the node's one entry up or down instead, so the heap never holds more
//! entries than there are nodes.

use t2_clock::Cycle;

/// Not in the heap.
const ABSENT: usize = usize::MAX;

/// Bits of a heap key that hold the node; the cycle takes the bits above.
const NODE_BITS: u32 = 20;
const NODE_MASK: u64 = (1 << NODE_BITS) - 1;
/// The largest cycle a key holds as it is (about 3 hours of simulated time at 1.5 GHz);
/// later ones are held as this, and the few places that must tell them apart read the
/// node's own next event.
const KEY_CYCLE_MAX: Cycle = (1 << (64 - NODE_BITS)) - 1;

/// A heap key: (cycle, node) in one word, ordered as the pair is (up to `KEY_CYCLE_MAX`).
/// One comparison a step and half the memory of the pair, on the kernel's busiest path.
fn key(t: Cycle, n: usize) -> u64 {
    t.min(KEY_CYCLE_MAX) << NODE_BITS | n as u64
}

fn node_of(key: u64) -> usize {
    (key & NODE_MASK) as usize
}

fn cycle_of(key: u64) -> Cycle {
    key >> NODE_BITS
}

/// Each node's next event (`None`: nothing to do until something reaches it), with the nodes
/// that have one in a heap ordered by (cycle, node).
#[derive(Debug, Default)]
pub(crate) struct Agenda {
    next: Vec<Option<Cycle>>,
    /// The entries' keys in heap order: every entry is no later than its two children.
    heap: Vec<u64>,
    /// Per node: its index in `heap`, or `ABSENT`.
    at: Vec<usize>,
    /// Scratch for `find_due`'s walk.
    stack: Vec<usize>,
}

impl Agenda {
    /// Adds a node (numbered in the order added) with its next event.
    pub(crate) fn push_node(&mut self, next: Option<Cycle>) {
        assert!(
            (self.next.len() as u64) < NODE_MASK,
            "the kernel's agenda holds at most {NODE_MASK} nodes"
        );
        self.next.push(None);
        self.at.push(ABSENT);
        self.set(self.next.len() - 1, next);
    }

    /// The nodes' next events, by node.
    pub(crate) fn next(&self) -> &[Option<Cycle>] {
        &self.next
    }

    /// The earliest next event of any node.
    pub(crate) fn earliest(&self) -> Option<Cycle> {
        let &top = self.heap.first()?;
        if cycle_of(top) < KEY_CYCLE_MAX {
            return Some(cycle_of(top));
        }
        // Every entry is past what a key holds: their own events say which is first.
        self.heap
            .iter()
            .filter_map(|&k| self.next[node_of(k)])
            .min()
    }

    /// Sets node `n`'s next event.
    pub(crate) fn set(&mut self, n: usize, next: Option<Cycle>) {
        if self.next[n] == next {
            return;
        }
        self.next[n] = next;
        let i = self.at[n];
        match (next, i == ABSENT) {
            (Some(t), true) => {
                self.heap.push(key(t, n));
                self.at[n] = self.heap.len() - 1;
                self.sift_up(self.heap.len() - 1);
            }
            (Some(t), false) => {
                let k = key(t, n);
                let earlier = k < self.heap[i];
                self.heap[i] = k;
                if earlier {
                    self.sift_up(i);
                } else {
                    self.sift_down(i);
                }
            }
            (None, false) => self.remove(i),
            (None, true) => {}
        }
    }

    /// Appends to `due` every node whose next event is at or before `t`, in no particular
    /// order, leaving their entries in place: the visit that ticks them then sets each one's
    /// next event, which moves its entry once, where taking it out and putting it back
    /// would move the heap twice.
    pub(crate) fn find_due(&mut self, t: Cycle, due: &mut Vec<usize>) {
        // The entries at or before `t` are a subtree hanging from the root (no entry is
        // earlier than its parent), walked here depth first. An entry past what a key holds
        // is due only if its own event is.
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        let limit = t.min(KEY_CYCLE_MAX);
        if self.heap.first().is_some_and(|&k| cycle_of(k) <= limit) {
            stack.push(0);
        }
        while let Some(i) = stack.pop() {
            let n = node_of(self.heap[i]);
            if self.next[n].is_some_and(|e| e <= t) {
                due.push(n);
            }
            for child in [2 * i + 1, 2 * i + 2] {
                if self.heap.get(child).is_some_and(|&k| cycle_of(k) <= limit) {
                    stack.push(child);
                }
            }
        }
        self.stack = stack;
    }

    /// Removes the entry at heap index `i`.
    fn remove(&mut self, i: usize) {
        let n = node_of(self.heap[i]);
        self.at[n] = ABSENT;
        let last = self.heap.pop().expect("the entry is in the heap");
        if i < self.heap.len() {
            let moved_up = last < self.heap[i];
            self.heap[i] = last;
            self.at[node_of(last)] = i;
            if moved_up {
                self.sift_up(i);
            } else {
                self.sift_down(i);
            }
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        let entry = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent] <= entry {
                break;
            }
            self.heap[i] = self.heap[parent];
            self.at[node_of(self.heap[i])] = i;
            i = parent;
        }
        self.heap[i] = entry;
        self.at[node_of(entry)] = i;
    }

    fn sift_down(&mut self, mut i: usize) {
        let entry = self.heap[i];
        let len = self.heap.len();
        loop {
            let left = 2 * i + 1;
            if left >= len {
                break;
            }
            let right = left + 1;
            let child = if right < len && self.heap[right] < self.heap[left] {
                right
            } else {
                left
            };
            if entry <= self.heap[child] {
                break;
            }
            self.heap[i] = self.heap[child];
            self.at[node_of(self.heap[i])] = i;
            i = child;
        }
        self.heap[i] = entry;
        self.at[node_of(entry)] = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any sequence of changes and visits finds the nodes due that a plain list of next
        /// events gives, and keeps the same earliest event.
        #[test]
        fn the_agenda_takes_what_a_list_of_next_events_gives(
            nodes in 1usize..12,
            ops in prop::collection::vec((0usize..12, prop::option::of(0u64..40), any::<bool>()), 0..200),
            far in any::<bool>(),
        ) {
            // Far: cycles on both sides of the largest a heap key holds as it is.
            let base = if far { KEY_CYCLE_MAX - 20 } else { 0 };
            let mut agenda = Agenda::default();
            let mut list: Vec<Option<Cycle>> = Vec::new();
            for n in 0..nodes {
                let first = (n % 3 != 0).then_some(base + n as u64 * 5);
                agenda.push_node(first);
                list.push(first);
            }
            for (n, next, take) in ops {
                let n = n % nodes;
                let next = next.map(|t| base + t);
                if take {
                    let t = next.unwrap_or(base + 20);
                    let mut due = Vec::new();
                    agenda.find_due(t, &mut due);
                    due.sort_unstable();
                    let want: Vec<usize> = (0..nodes)
                        .filter(|&i| list[i].is_some_and(|e| e <= t))
                        .collect();
                    prop_assert_eq!(&due, &want);
                    // A visit then sets each due node's next event; here, a later one or
                    // none.
                    for &i in &due {
                        let later = (i % 2 == 0).then_some(t + 1 + i as u64);
                        agenda.set(i, later);
                        list[i] = later;
                    }
                } else {
                    agenda.set(n, next);
                    list[n] = next;
                }
                prop_assert_eq!(agenda.next(), &list[..]);
                prop_assert_eq!(agenda.earliest(), list.iter().flatten().copied().min());
                prop_assert!(agenda.heap.len() <= nodes);
            }
        }
    }
}
