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

/// Each node's next event (`None`: nothing to do until something reaches it), with the nodes
/// that have one in a heap ordered by (cycle, node).
#[derive(Debug, Default)]
pub(crate) struct Agenda {
    next: Vec<Option<Cycle>>,
    /// (cycle, node) in heap order: every entry is no later than its two children.
    heap: Vec<(Cycle, usize)>,
    /// Per node: its index in `heap`, or `ABSENT`.
    at: Vec<usize>,
    /// Scratch for `find_due`'s walk.
    stack: Vec<usize>,
}

impl Agenda {
    /// Adds a node (numbered in the order added) with its next event.
    pub(crate) fn push_node(&mut self, next: Option<Cycle>) {
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
        self.heap.first().map(|&(t, _)| t)
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
                self.heap.push((t, n));
                self.at[n] = self.heap.len() - 1;
                self.sift_up(self.heap.len() - 1);
            }
            (Some(t), false) => {
                let earlier = (t, n) < self.heap[i];
                self.heap[i] = (t, n);
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
        // earlier than its parent), walked here depth first.
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        if self.heap.first().is_some_and(|&(e, _)| e <= t) {
            stack.push(0);
        }
        while let Some(i) = stack.pop() {
            due.push(self.heap[i].1);
            for child in [2 * i + 1, 2 * i + 2] {
                if self.heap.get(child).is_some_and(|&(e, _)| e <= t) {
                    stack.push(child);
                }
            }
        }
        self.stack = stack;
    }

    /// Removes the entry at heap index `i`.
    fn remove(&mut self, i: usize) {
        let (_, n) = self.heap[i];
        self.at[n] = ABSENT;
        let last = self.heap.pop().expect("the entry is in the heap");
        if i < self.heap.len() {
            let moved_up = last < self.heap[i];
            self.heap[i] = last;
            self.at[last.1] = i;
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
            self.at[self.heap[i].1] = i;
            i = parent;
        }
        self.heap[i] = entry;
        self.at[entry.1] = i;
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
            self.at[self.heap[i].1] = i;
            i = child;
        }
        self.heap[i] = entry;
        self.at[entry.1] = i;
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
        ) {
            let mut agenda = Agenda::default();
            let mut list: Vec<Option<Cycle>> = Vec::new();
            for n in 0..nodes {
                let first = (n % 3 != 0).then_some(n as u64 * 5);
                agenda.push_node(first);
                list.push(first);
            }
            for (n, next, take) in ops {
                let n = n % nodes;
                if take {
                    let t = next.unwrap_or(20);
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
