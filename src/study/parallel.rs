//! Independent runs on several cores. A comparison's schemes and a sweep's points each build
//! and run their own network, so they can run side by side; results come back in the order
//! of the inputs, so what a command prints and writes is the same whatever the number of
//! threads (`tests/scenario/compare.rs` checks it).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Threads to use when the command does not say: every core the machine offers.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How `threads` are shared by `runs` independent runs whose network is worth splitting over
/// at most `worth` threads (`ScenarioFile::threads_worth_using`): (runs side by side,
/// threads each). A network worth several threads runs on them, fewer runs at a time: on the
/// BFC paper's 8x8 leaf-spine one run on two threads took 14.5 s where one thread took 37 s,
/// so two such runs one after the other finish well before two side by side.
pub fn share_threads(threads: usize, runs: usize, worth: usize) -> (usize, usize) {
    let (threads, worth) = (threads.max(1), worth.max(1));
    let at_once = (threads / worth.min(threads)).clamp(1, runs.max(1));
    (at_once, (threads / at_once).min(worth))
}

/// `f(index, item)` for every item, on up to `threads` threads, each taking the next item
/// not yet started; the results in item order. With one thread (or one item) it runs on the
/// calling thread.
pub fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().enumerate().map(|(i, x)| f(i, x)).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(x) = items.get(i) else { break };
                let r = f(i, x);
                *done[i].lock().expect("no worker panicked holding it") = Some(r);
            });
        }
    });
    done.into_iter()
        .map(|m| {
            m.into_inner()
                .expect("no worker panicked holding it")
                .expect("every item ran")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_go_to_splitting_only_networks_worth_it() {
        // Small networks: runs side by side, one thread each, as many as there are runs.
        assert_eq!(share_threads(2, 5, 1), (2, 1));
        assert_eq!(share_threads(8, 3, 1), (3, 1));
        assert_eq!(share_threads(2, 1, 1), (1, 1));
        // Large ones: each run takes the threads it is worth, the rest run beside it.
        assert_eq!(share_threads(2, 5, 8), (1, 2));
        assert_eq!(share_threads(8, 5, 3), (2, 3));
        assert_eq!(share_threads(8, 1, 3), (1, 3));
        assert_eq!(share_threads(16, 5, 4), (4, 4));
        // Nothing asked for zero threads gets zero.
        assert_eq!(share_threads(0, 0, 0), (1, 1));
    }

    #[test]
    fn results_keep_the_input_order_whatever_the_threads() {
        let items: Vec<u64> = (0..50).collect();
        // Uneven work, so that items finish out of order on several threads.
        let work = |i: usize, x: &u64| (0..(50 - i as u64) * 1000).fold(*x, |a, b| a ^ b);
        let one = map_in_order(&items, 1, work);
        for threads in [2, 3, 8, 64] {
            assert_eq!(
                map_in_order(&items, threads, work),
                one,
                "{threads} threads"
            );
        }
        assert!(map_in_order(&[] as &[u64], 4, work).is_empty());
    }
}
