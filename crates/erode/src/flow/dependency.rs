//! Visiting the cells of a flow graph in dependency order on every thread: a cell is visited
//! once every cell it waits for has been (Kahn's algorithm, run in parallel). Each thread works
//! depth first from a stack of its own, so consecutive cells are neighbours; a thread with
//! nothing to do takes cells another has shared.
//!
//! The order of visits varies from run to run, so a visit must compute its cell from the cells
//! it waited for alone, in an order of its own (as [`super::multiple`]'s do): then the result
//! is the same bits on any thread count.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// Cells a busy thread keeps before it shares half with idle ones.
const KEEP: usize = 64;
/// Most cells an idle thread takes from the shared ones at once.
const TAKE: usize = 256;

/// Calls `visit(c)` once for each of `total` cells, each after every cell it waits for.
/// `waiting[c]` is how many cells `c` waits for (counted down here); `starts` are the cells
/// that wait for none. `visit` returns a bit per direction of `offset` whose neighbour waits
/// for `c`.
pub fn visit_in_order(
    waiting: &[AtomicU8],
    starts: Vec<u32>,
    total: usize,
    offset: &[isize; 8],
    visit: impl Fn(usize) -> u8 + Sync,
) {
    let shared = Mutex::new(starts);
    let idle = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let threads = rayon::current_num_threads().max(1);
    let work = || {
        let mut local: Vec<u32> = Vec::new();
        let mut visited = 0;
        loop {
            if let Some(c) = local.pop() {
                let c = c as usize;
                let mut next = visit(c);
                visited += 1;
                while next != 0 {
                    let k = next.trailing_zeros() as usize;
                    next &= next - 1;
                    let s = (c as isize + offset[k]) as usize;
                    // the last cell `s` waited for: every write before it is seen with it
                    if waiting[s].fetch_sub(1, Ordering::AcqRel) == 1 {
                        local.push(s as u32);
                    }
                }
                if local.len() > KEEP && idle.load(Ordering::Relaxed) > 0 {
                    // the oldest half, whose neighbours this thread has left behind
                    let half = local.len() / 2;
                    if let Ok(mut pool) = shared.lock() {
                        pool.extend(local.drain(..half));
                    }
                }
                continue;
            }
            done.fetch_add(visited, Ordering::AcqRel);
            visited = 0;
            let mut waited = false;
            loop {
                if let Ok(mut pool) = shared.lock() {
                    let from = pool.len().saturating_sub(TAKE);
                    local.extend(pool.drain(from..));
                }
                if !local.is_empty() || done.load(Ordering::Acquire) >= total {
                    break;
                }
                if !waited {
                    idle.fetch_add(1, Ordering::Relaxed);
                    waited = true;
                }
                std::hint::spin_loop();
                std::thread::yield_now();
            }
            if waited {
                idle.fetch_sub(1, Ordering::Relaxed);
            }
            if local.is_empty() {
                return;
            }
        }
    };
    if threads == 1 {
        work();
    } else {
        // every cell starts shared, so a thread that never starts holds none: no thread can
        // wait for one that does not run
        rayon::scope(|s| {
            for _ in 1..threads {
                s.spawn(|_| work());
            }
            work();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::neighbours::{neighbour_on, offsets};

    #[test]
    fn every_cell_is_visited_once_after_all_it_waits_for_on_any_thread_count() {
        // each cell waits for its higher neighbours on a random surface
        let (w, h) = (97usize, 61usize);
        let mut seed = 7u64;
        let z: Vec<u64> = (0..w * h)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                seed >> 11
            })
            .collect();
        let offset = offsets(w);
        let lower = |i: usize| {
            (0..8).fold(0u8, |m, k| match neighbour_on(w, h, i, k) {
                Some(j) if z[j] < z[i] => m | 1 << k,
                _ => m,
            })
        };
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let waiting: Vec<AtomicU8> = (0..w * h)
                .map(|i| {
                    AtomicU8::new(
                        (0..8).filter(|&k| neighbour_on(w, h, i, k).is_some_and(|j| z[j] > z[i])).count() as u8
                    )
                })
                .collect();
            let starts: Vec<u32> =
                (0..w * h).filter(|&i| waiting[i].load(Ordering::Relaxed) == 0).map(|i| i as u32).collect();
            let clock = AtomicUsize::new(0);
            let stamp: Vec<AtomicUsize> = (0..w * h).map(|_| AtomicUsize::new(usize::MAX)).collect();
            pool.install(|| {
                visit_in_order(&waiting, starts, w * h, &offset, |c| {
                    let t = clock.fetch_add(1, Ordering::SeqCst);
                    assert_eq!(stamp[c].swap(t, Ordering::SeqCst), usize::MAX, "cell {c} visited twice");
                    lower(c)
                })
            });
            for i in 0..w * h {
                let t = stamp[i].load(Ordering::SeqCst);
                assert!(t < w * h, "{threads} threads: cell {i} not visited");
                for k in 0..8 {
                    if let Some(j) = neighbour_on(w, h, i, k)
                        && z[j] > z[i]
                    {
                        assert!(stamp[j].load(Ordering::SeqCst) < t, "{threads} threads: {i} before {j}");
                    }
                }
            }
        }
    }
}
