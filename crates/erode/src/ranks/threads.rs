//! Ranks as threads of one process: the transport the tests run blocks with.

use std::sync::{Arc, Barrier, Mutex};

use super::Exchange;

/// Ranks as threads of one process, trading through shared memory: the [`Exchange`] the tests
/// run blocks with, and a reference for other transports. Make all ranks with
/// [`Threads::ranks`] and run each on its own thread.
pub struct Threads {
    rank: usize,
    shared: Arc<Shared>,
}

struct Shared {
    barrier: Barrier,
    slots: Mutex<Vec<Vec<u8>>>,
}

impl Threads {
    /// `n` connected ranks, rank `k` at index `k`.
    pub fn ranks(n: usize) -> Vec<Arc<dyn Exchange>> {
        let shared = Arc::new(Shared { barrier: Barrier::new(n), slots: Mutex::new(vec![Vec::new(); n]) });
        (0..n).map(|rank| Arc::new(Self { rank, shared: shared.clone() }) as Arc<dyn Exchange>).collect()
    }

    /// Posts `mine`, waits for every rank, reads with `read`, waits again (so no rank posts the
    /// next before all have read).
    fn trade<T>(&self, mine: &[u8], read: impl FnOnce(&[Vec<u8>]) -> T) -> T {
        self.shared.slots.lock().unwrap_or_else(|e| e.into_inner())[self.rank] = mine.to_vec();
        self.shared.barrier.wait();
        let out = read(&self.shared.slots.lock().unwrap_or_else(|e| e.into_inner()));
        self.shared.barrier.wait();
        out
    }
}

impl Exchange for Threads {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.shared.slots.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Panics where MPI aborts the run: when a rank's length is not the `counts` this rank
    /// gives for it (every rank must know every length before the call).
    fn all_gather(&self, mine: &[u8], counts: &[usize]) -> Vec<u8> {
        self.trade(mine, |slots| {
            let lengths: Vec<usize> = slots.iter().map(Vec::len).collect();
            assert_eq!(lengths, counts, "rank {}: the ranks' lengths are not the counts it expects", self.rank);
            slots.concat()
        })
    }

    fn gather(&self, mine: &[u8], counts: &[usize]) -> Option<Vec<u8>> {
        let all = self.all_gather(mine, counts);
        (self.rank == 0).then_some(all)
    }

    /// One trade per other rank, in rank order: rank 0 posts rank `k`'s part, rank `k` takes it.
    fn scatter(&self, mut part: Option<&mut dyn FnMut(usize) -> Vec<u8>>) -> Vec<u8> {
        let mut mine = Vec::new();
        for k in 1..self.ranks() {
            let posted = match (&mut part, self.rank) {
                (Some(make), 0) => make(k),
                _ => Vec::new(),
            };
            if let Some(got) = self.trade(&posted, |slots| (self.rank == k).then(|| slots[0].clone())) {
                mine = got;
            }
        }
        mine
    }

    fn shift(&self, send: &[u8], _to: Option<usize>, recv: &mut [u8], from: Option<usize>) {
        self.trade(send, |slots| {
            if let Some(k) = from {
                recv.copy_from_slice(&slots[k]);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scatter_gives_each_rank_its_part_made_once_in_rank_order() {
        let made = Arc::new(Mutex::new(Vec::new()));
        let got: Vec<Vec<u8>> = std::thread::scope(|s| {
            let handles: Vec<_> = Threads::ranks(4)
                .into_iter()
                .map(|ex| {
                    let made = made.clone();
                    s.spawn(move || {
                        let mut make = |k: usize| {
                            made.lock().unwrap().push(k);
                            vec![k as u8; k * 3]
                        };
                        ex.scatter((ex.rank() == 0).then_some(&mut make as &mut dyn FnMut(usize) -> Vec<u8>))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(got, vec![vec![], vec![1; 3], vec![2; 6], vec![3; 9]]);
        assert_eq!(*made.lock().unwrap(), vec![1, 2, 3]);
    }
}
