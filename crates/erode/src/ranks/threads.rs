//! Ranks as threads of one process: the transport the tests run blocks with.

use std::sync::{Arc, Condvar, Mutex};

use super::Exchange;

/// Ranks as threads of one process, trading through shared memory: the [`Exchange`] the tests
/// run blocks with, and a reference for other transports. Make all ranks with
/// [`Threads::ranks`] and run each on its own thread. A rank whose thread panics (its last
/// handle dropped while unwinding) breaks the trades: every other rank then panics at its next
/// one, as MPI aborts every rank when one dies, instead of waiting for it forever.
pub struct Threads {
    rank: usize,
    shared: Arc<Shared>,
}

struct Shared {
    ranks: usize,
    slots: Mutex<Vec<Vec<u8>>>,
    meeting: Mutex<Meeting>,
    met: Condvar,
}

/// Where the ranks meet between a trade's post and its read: how many are waiting, which
/// meeting this is, and the rank that panicked, if one did.
struct Meeting {
    waiting: usize,
    round: u64,
    broken: Option<usize>,
}

impl Threads {
    /// `n` connected ranks, rank `k` at index `k`.
    pub fn ranks(n: usize) -> Vec<Arc<dyn Exchange>> {
        let shared = Arc::new(Shared {
            ranks: n,
            slots: Mutex::new(vec![Vec::new(); n]),
            meeting: Mutex::new(Meeting { waiting: 0, round: 0, broken: None }),
            met: Condvar::new(),
        });
        (0..n).map(|rank| Arc::new(Self { rank, shared: shared.clone() }) as Arc<dyn Exchange>).collect()
    }

    /// Waits until every rank is here; panics if a rank panicked.
    #[allow(clippy::panic, reason = "a rank's panic ends every rank, as MPI aborts them all when one dies")]
    fn meet(&self) {
        let shared = &*self.shared;
        let mut m = shared.meeting.lock().unwrap_or_else(|e| e.into_inner());
        let round = m.round;
        m.waiting += 1;
        if m.waiting == shared.ranks {
            m.waiting = 0;
            m.round += 1;
            shared.met.notify_all();
        }
        while m.round == round && m.broken.is_none() {
            m = shared.met.wait(m).unwrap_or_else(|e| e.into_inner());
        }
        if let (Some(k), true) = (m.broken, m.round == round) {
            drop(m);
            panic!("rank {}: rank {k} panicked", self.rank);
        }
    }

    /// Posts `mine`, waits for every rank, reads with `read`, waits again (so no rank posts the
    /// next before all have read).
    fn trade<T>(&self, mine: &[u8], read: impl FnOnce(&[Vec<u8>]) -> T) -> T {
        self.shared.slots.lock().unwrap_or_else(|e| e.into_inner())[self.rank] = mine.to_vec();
        self.meet();
        let out = read(&self.shared.slots.lock().unwrap_or_else(|e| e.into_inner()));
        self.meet();
        out
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut m = self.shared.meeting.lock().unwrap_or_else(|e| e.into_inner());
            m.broken.get_or_insert(self.rank);
            self.shared.met.notify_all();
        }
    }
}

impl Exchange for Threads {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.shared.ranks
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

    #[test]
    fn a_rank_that_panics_fails_the_others_instead_of_leaving_them_waiting() {
        let results: Vec<std::thread::Result<Vec<u8>>> = std::thread::scope(|s| {
            let handles: Vec<_> = Threads::ranks(3)
                .into_iter()
                .map(|ex| {
                    s.spawn(move || {
                        let first = ex.all_gather(&[ex.rank() as u8], &[1, 1, 1]);
                        assert!(ex.rank() != 1, "rank 1 fails between two trades");
                        // ranks 0 and 2 wait here for rank 1, which never comes
                        ex.all_gather(&first, &[3, 3, 3])
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join()).collect()
        });
        for (rank, r) in results.into_iter().enumerate() {
            let e = r.expect_err("every rank fails");
            let why = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
            let why = why.unwrap_or_default();
            let expected = if rank == 1 {
                "rank 1 fails between two trades".to_string()
            } else {
                format!("rank {rank}: rank 1 panicked")
            };
            assert_eq!(why, expected);
        }
    }
}
